//! Files the person names in a prompt (`fix @lib/slug.js`, `change the
//! port in config.toml`): read for the model before its first step, as if
//! it had called `read_file` (`list_directory` for a folder named with
//! `@`), so it starts from the file's text instead of guessing it, and
//! one step sooner. ADR 0038. An image goes with the prompt as image
//! content instead, also when its path is pasted from outside the
//! project. ADR 0055.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::llm::tool_calls::MadeUpIds;
use crate::llm::wire::Image;
use crate::protocol::{CallArguments, ToolCallRequest};
use crate::tools::{PathError, Workspace, shows_as_text};

use super::images::{self, IMAGES_PER_PROMPT_MAX, LeftOut, Opened};

/// Paths one prompt attaches at most; later ones stay plain text.
const MENTION_MAX: usize = 8;

/// Words of one prompt looked up as paths at most: a long paste of dotted
/// words costs a bounded number of lookups.
const MENTION_CANDIDATES_MAX: usize = 64;

/// What may close a sentence around a name (`see @a.py, then …`):
/// dropped from its end.
const CLOSING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '`'];

/// What may open a name's word (`(@a.py)`, `` `config.toml` ``).
const OPENING: &[char] = &['(', '[', '{', '"', '\'', '`'];

/// One path a prompt names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<'a> {
    /// The path as written, without the punctuation around it.
    pub path: &'a str,
    /// Written with `@`: a folder is attached too. A bare word is
    /// attached only when it is a file outside hidden folders, not itself
    /// hidden (`.env` is read only when named `@.env`).
    pub marked: bool,
}

/// The paths `text` may name: each word that starts with `@` once its
/// opening bracket or quote is set aside, and each other word with a `/`
/// or a `.` in it (`config.toml`, `src/main.rs`), without the punctuation
/// around it or a line number after it (`src/main.rs:42:5`), in order,
/// each once (marked if it is marked anywhere), at most
/// [`MENTION_CANDIDATES_MAX`]. A path with spaces is named in quotes
/// after the `@` (`@"my notes.md"`), as the `@` popup writes it. An `@`
/// inside a word (`me@example.com`) marks nothing.
pub fn named(text: &str) -> Vec<Named<'_>> {
    let mut paths: Vec<Named<'_>> = Vec::new();
    for word in words(text) {
        let word = word.trim_start_matches(OPENING);
        let (path, marked) = match word.strip_prefix('@') {
            Some(path) => (path, true),
            None => (word, false),
        };
        let path = match quoted(path).filter(|_| marked) {
            Some(inside) => inside,
            None => without_line_number(path.trim_end_matches(CLOSING)),
        };
        if path.is_empty() || !(marked || path.contains(['/', '.'])) {
            continue;
        }
        if let Some(seen) = paths.iter_mut().find(|n| n.path == path) {
            seen.marked |= marked;
        } else if paths.len() < MENTION_CANDIDATES_MAX {
            paths.push(Named { path, marked });
        }
    }
    paths
}

/// The words of `text`, split at white space, except that a word whose
/// `@` opens a quote (`@"my notes.md"`) runs to the quote's end.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        let opened = rest.trim_start_matches(OPENING);
        let after_quote = opened
            .strip_prefix('@')
            .and_then(quoted)
            .map(|inside| rest.len() - opened.len() + inside.len() + 3)
            .unwrap_or(0);
        let end = rest[after_quote..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |at| after_quote + at);
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}

/// What `text` holds in the quotes it opens with, when they close on the
/// same line around something.
fn quoted(text: &str) -> Option<&str> {
    let inside = text.strip_prefix('"')?;
    let inside = &inside[..inside.find('"')?];
    (!inside.is_empty() && !inside.contains('\n')).then_some(inside)
}

/// `path` without the `:line` or `:line:column` that compilers and
/// test runners put after it (`src/main.rs:42:5`).
fn without_line_number(path: &str) -> &str {
    let mut path = path;
    for _ in 0..2 {
        match path.rsplit_once(':') {
            Some((head, number))
                if !head.is_empty()
                    && !number.is_empty()
                    && number.bytes().all(|b| b.is_ascii_digit()) =>
            {
                path = head;
            }
            _ => break,
        }
    }
    path
}

/// Whether a part of `path` is hidden (`.env`, `.ssh/id_rsa`): such a
/// file is attached only when named with `@`.
fn hidden(path: &str) -> bool {
    Path::new(path).components().any(
        |part| matches!(part, Component::Normal(name) if name.as_encoded_bytes().starts_with(b".")),
    )
}

/// Absolute paths pasted the way terminals paste a file dropped on them,
/// when white space in them keeps [`named`] from reading them whole: in
/// single or double quotes (`'/tmp/my shot.png'`) or with each space
/// escaped (`/tmp/my\ shot.png`), after an optional `@` (marked then).
/// At most [`MENTION_CANDIDATES_MAX`], in order.
pub fn pasted(text: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() && found.len() < MENTION_CANDIDATES_MAX {
        let (word, marked) = match rest.strip_prefix('@') {
            Some(word) => (word, true),
            None => (rest, false),
        };
        let taken = match word.chars().next() {
            Some(quote @ ('\'' | '"')) if word[1..].starts_with('/') => word[1..]
                .find(quote)
                .map(|end| &word[1..1 + end])
                .filter(|inside| !inside.contains('\n'))
                .map(|inside| {
                    found.push((inside.to_owned(), marked));
                    inside.len() + 2
                }),
            Some('/') => {
                let (path, len) = unescaped(word);
                if len > path.len() {
                    found.push((path.trim_end_matches(CLOSING).to_owned(), marked));
                }
                Some(len)
            }
            _ => None,
        };
        let skip = taken.unwrap_or_else(|| word.find(char::is_whitespace).unwrap_or(word.len()));
        rest = word[skip..].trim_start();
    }
    found
}

/// The start of `word` up to its first white space that no `\` escapes,
/// each escape taken away, and the bytes of `word` that took.
fn unescaped(word: &str) -> (String, usize) {
    let mut path = String::new();
    let mut chars = word.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, escaped)) => path.push(escaped),
                None => return (path, word.len()),
            },
            c if c.is_whitespace() => return (path, at),
            c => path.push(c),
        }
    }
    (path, word.len())
}

/// What the names of a prompt attach.
#[derive(Debug, Default)]
pub struct Attached {
    /// The reads and listings, as calls of the model's own tools.
    pub calls: Vec<ToolCallRequest>,
    /// The images named, in order: each read, or why it is left out.
    pub images: Vec<Result<Image, LeftOut>>,
}

/// What one named path turned out to be.
enum Looked {
    /// Nothing the prompt attaches.
    Nothing,
    /// A file shown as text, or a folder: its tool, and its real path.
    Call(&'static str, PathBuf),
    /// An image, and its real path.
    Image(Opened, PathBuf),
}

/// What `text` names: `read_file` calls for files it shows as text and
/// `list_directory` for folders named with `@`, with `ids`, at most
/// [`MENTION_MAX`]; images, at most [`IMAGES_PER_PROMPT_MAX`] (later
/// ones left out, unread); each file or folder once however it is spelt;
/// bare names only when `bare`, and never hidden ones. A name that is
/// none of these, or that the path policy refuses, stays plain text: `@`
/// is also how people write decorators and handles, most dotted words
/// are not files, and a binary file would only be refused. The one thing
/// read from outside the project is an image named by its absolute path
/// (pasted, usually), and only when `outside`, the words being the
/// person's own: see [`look`].
pub fn attach(
    ws: &dyn Workspace,
    text: &str,
    bare: bool,
    outside: bool,
    ids: MadeUpIds,
) -> Attached {
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    let mut images: Vec<Result<Image, LeftOut>> = Vec::new();
    let named = named(text)
        .into_iter()
        .map(|named| (Cow::Borrowed(named.path), named.marked));
    let pasted = pasted(text)
        .into_iter()
        .map(|(path, marked)| (Cow::Owned(path), marked));
    for (path, marked) in named.chain(pasted) {
        if !(marked || (bare && !hidden(&path))) {
            continue;
        }
        match look(ws, &path, marked, outside) {
            Looked::Nothing => {}
            Looked::Call(tool, real) => {
                if calls.len() < MENTION_MAX && seen.insert(real) {
                    calls.push(ToolCallRequest {
                        id: ids.nth(calls.len()),
                        name: tool.to_owned(),
                        arguments: CallArguments::Json(json!({ "path": path })),
                        error: None,
                    });
                }
            }
            Looked::Image(opened, real) => {
                if !seen.insert(real) {
                    continue;
                }
                let taken = images.iter().filter(|image| image.is_ok()).count();
                images.push(if taken < IMAGES_PER_PROMPT_MAX {
                    opened.read()
                } else {
                    Err(LeftOut::TooMany {
                        name: opened.name().to_owned(),
                    })
                });
            }
        }
    }
    Attached { calls, images }
}

/// What `path` names. Inside the project, through the path policy: an
/// image (by its first bytes, whatever its name), a file shown as text,
/// or a folder when `marked`. An absolute path the policy refuses as
/// outside the project is, when `outside` allows it, opened only as an
/// image: a regular file whose
/// first bytes are an image's, read no further otherwise. The person
/// named it (a screenshot dragged into the terminal pastes its path),
/// and only an image's bytes are ever sent that way. Its name is then
/// the file's own, not the whole path.
fn look(ws: &dyn Workspace, path: &str, marked: bool, outside: bool) -> Looked {
    match ws.resolve(path) {
        Ok(real) => {
            let Ok(stat) = ws.stat(&real) else {
                return Looked::Nothing;
            };
            if stat.is_file() {
                let image = ws
                    .open_regular(&real)
                    .and_then(|file| Opened::new(file, stat.len, path));
                match image {
                    Ok(Some(opened)) => Looked::Image(opened, real),
                    _ if shows_as_text(ws, &real) => Looked::Call("read_file", real),
                    _ => Looked::Nothing,
                }
            } else if stat.is_dir() && marked {
                Looked::Call("list_directory", real)
            } else {
                Looked::Nothing
            }
        }
        Err(PathError::Escapes(_)) if outside && Path::new(path).is_absolute() => {
            let outside = Path::new(path);
            let name = outside
                .file_name()
                .map_or(Cow::Borrowed(path), |name| name.to_string_lossy());
            let opened =
                images::open_outside(outside).and_then(|(file, len)| Opened::new(file, len, &name));
            match opened {
                Ok(Some(opened)) => {
                    let real = std::fs::canonicalize(outside).unwrap_or_else(|_| outside.into());
                    Looked::Image(opened, real)
                }
                _ => Looked::Nothing,
            }
        }
        Err(_) => Looked::Nothing,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::tools::ToolContext;

    fn paths(text: &str) -> Vec<(&str, bool)> {
        named(text).iter().map(|n| (n.path, n.marked)).collect()
    }

    #[test]
    fn a_name_is_an_at_word_or_a_word_with_a_slash_or_a_dot() {
        assert_eq!(
            paths("fix @lib/slug.js, then run (@test/a.js) and \"@b\" in `config.toml`."),
            [
                ("lib/slug.js", true),
                ("test/a.js", true),
                ("b", true),
                ("config.toml", false)
            ]
        );
        assert_eq!(
            paths("@src/ is where main.rs is"),
            [("src/", true), ("main.rs", false)]
        );
        assert_eq!(
            paths("error at src/main.rs:42:5: and @lib.rs:7, not 10:30"),
            [("src/main.rs", false), ("lib.rs", true)]
        );
    }

    #[test]
    fn a_path_with_spaces_is_named_in_quotes_after_the_at() {
        assert_eq!(
            paths("fix @\"my notes.md\", (@\"a b/\") and @\"c d\".txt"),
            [("my notes.md", true), ("a b/", true), ("c d", true)]
        );
        assert_eq!(
            paths("not \"my notes.md\" nor @\"\" nor @\"open"),
            [("notes.md", false), ("\"open", true)]
        );
        assert_eq!(
            paths("@\"two\nlines\" x.y"),
            [("\"two", true), ("x.y", false)]
        );
    }

    #[test]
    fn an_at_inside_a_word_or_alone_marks_nothing() {
        assert_eq!(
            paths("mail me@example.com or @ or @. now"),
            [("me@example.com", false)]
        );
    }

    #[test]
    fn each_path_is_named_once_and_the_lookups_are_bounded() {
        assert_eq!(paths("@a @a. a @b"), [("a", true), ("b", true)]);
        assert_eq!(paths("src/ then @src/"), [("src/", true)]);
        let many: String = (0..MENTION_CANDIDATES_MAX + 3)
            .map(|n| format!("f{n}.x "))
            .collect();
        let named = named(&many);
        assert_eq!(named.len(), MENTION_CANDIDATES_MAX);
        let last = format!("f{}.x", MENTION_CANDIDATES_MAX - 1);
        assert_eq!(named.last().map(|n| n.path), Some(last.as_str()));
    }

    /// Arguments as the assistant message carries them.
    fn sent(arguments: &CallArguments) -> String {
        serde_json::to_string(arguments.object().unwrap()).unwrap()
    }

    #[test]
    fn files_are_read_folders_only_when_marked_and_at_most_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        for n in 0..MENTION_MAX + 2 {
            std::fs::write(dir.path().join(format!("f{n}.txt")), "x").unwrap();
        }
        let ctx = ToolContext::new(dir.path()).unwrap();
        let calls = |text: &str| -> Vec<(String, String)> {
            attach(&*ctx.workspace, text, true, true, MadeUpIds::attached(1))
                .calls
                .into_iter()
                .map(|c| (c.name, sent(&c.arguments)))
                .collect()
        };
        assert_eq!(
            calls("see src/ and @src, f0.txt, e.g. v1.2 or ../f0.txt"),
            [
                ("list_directory".to_owned(), r#"{"path":"src"}"#.to_owned()),
                ("read_file".to_owned(), r#"{"path":"f0.txt"}"#.to_owned()),
            ]
        );
        let all: String = (0..MENTION_MAX + 2).map(|n| format!("f{n}.txt ")).collect();
        let attached = attach(&*ctx.workspace, &all, true, true, MadeUpIds::attached(1)).calls;
        assert_eq!(attached.len(), MENTION_MAX);
        assert!(
            attach(&*ctx.workspace, &all, false, true, MadeUpIds::attached(1))
                .calls
                .is_empty()
        );
        assert_eq!(
            attach(
                &*ctx.workspace,
                "@f1.txt f2.txt",
                false,
                true,
                MadeUpIds::attached(1)
            )
            .calls
            .len(),
            1
        );
        let ids: Vec<&str> = attached.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[..2], ["a00000100", "a00000101"]);
    }

    #[test]
    fn a_quoted_path_with_spaces_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("my notes.md"), "x").unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        let calls = attach(
            &*ctx.workspace,
            "see @\"my notes.md\" and my notes.md",
            true,
            true,
            MadeUpIds::attached(1),
        )
        .calls;
        let arguments: Vec<String> = calls.iter().map(|c| sent(&c.arguments)).collect();
        assert_eq!(arguments, [r#"{"path":"my notes.md"}"#]);
    }

    #[test]
    fn hidden_binary_and_repeated_files_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".config")).unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=1").unwrap();
        std::fs::write(dir.path().join(".config/app.toml"), "a = 1").unwrap();
        std::fs::write(dir.path().join("logo.png"), b"\x89PNG\0\0").unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        let paths = |text: &str| -> Vec<String> {
            attach(&*ctx.workspace, text, true, true, MadeUpIds::attached(1))
                .calls
                .into_iter()
                .map(|c| sent(&c.arguments))
                .collect()
        };
        assert!(paths("never print .env or .config/app.toml; see logo.png").is_empty());
        assert_eq!(
            paths("@.env and @.config/app.toml"),
            [r#"{"path":".env"}"#, r#"{"path":".config/app.toml"}"#]
        );
        assert_eq!(paths("a.txt ./a.txt @a.txt"), [r#"{"path":"a.txt"}"#]);
        assert!(paths("@logo.png").is_empty());
    }
}

#[cfg(test)]
mod image_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::tools::ToolContext;

    /// A real 1×1 PNG.
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xff\xff?\0\x05\xfe\x02\xfe\xa7\x35\x81\x84\0\0\0\0IEND\xaeB`\x82";
    /// The first bytes of a JPEG (JFIF).
    const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xff\xd9";

    /// The names and media types of the images `text` attaches in `root`,
    /// or why each was left out.
    fn images(root: &Path, text: &str, bare: bool) -> Vec<String> {
        let ctx = ToolContext::new(root).unwrap();
        attach(&*ctx.workspace, text, bare, true, MadeUpIds::attached(1))
            .images
            .into_iter()
            .map(|image| match image {
                Ok(image) => format!("{} {}", image.name, image.media_type),
                Err(why) => why.to_string(),
            })
            .collect()
    }

    #[test]
    fn a_pasted_path_is_read_in_quotes_or_with_escaped_spaces() {
        assert_eq!(
            pasted("what is '/tmp/my shot.png' and @\"/a b/c.jpg\" or /x/y\\ z.png? /plain.png"),
            [
                ("/tmp/my shot.png".to_owned(), false),
                ("/a b/c.jpg".to_owned(), true),
                ("/x/y z.png".to_owned(), false),
            ]
        );
        assert!(pasted("'not/absolute.png' and '/open quote").is_empty());
        assert!(pasted("'/two\nlines.png'").is_empty());
    }

    #[test]
    fn an_image_is_attached_by_its_bytes_not_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
        std::fs::write(dir.path().join("photo.dat"), JPEG).unwrap();
        std::fs::write(dir.path().join("fake.png"), "just text").unwrap();
        assert_eq!(
            images(dir.path(), "@shot.png photo.dat ./shot.png", true),
            ["shot.png image/png", "photo.dat image/jpeg"]
        );
        let ctx = ToolContext::new(dir.path()).unwrap();
        let attached = attach(
            &*ctx.workspace,
            "see fake.png",
            true,
            true,
            MadeUpIds::attached(1),
        );
        assert!(attached.images.is_empty());
        assert_eq!(attached.calls[0].name, "read_file", "text by its bytes");
        assert!(
            images(dir.path(), "shot.png", false).is_empty(),
            "bare, not allowed"
        );
    }

    #[test]
    fn an_image_outside_the_project_is_attached_only_by_its_absolute_path() {
        let project = tempfile::tempdir().unwrap();
        // Not hidden, as a temporary folder's name is: a bare name in a
        // hidden folder is never attached.
        let outside = tempfile::Builder::new().prefix("shots").tempdir().unwrap();
        let shot = outside.path().join("my shot.png");
        std::fs::write(&shot, PNG).unwrap();
        std::fs::write(outside.path().join("notes.txt"), "secret").unwrap();
        let shot = shot.display().to_string();
        let escaped = shot.replace(' ', "\\ ");
        assert_eq!(
            images(project.path(), &format!("look at '{shot}'"), true),
            ["my shot.png image/png"]
        );
        assert_eq!(
            images(project.path(), &format!("look at {escaped}"), true),
            ["my shot.png image/png"]
        );
        let notes = outside.path().join("notes.txt").display().to_string();
        let ctx = ToolContext::new(project.path()).unwrap();
        let attached = attach(
            &*ctx.workspace,
            &format!("@{notes}"),
            true,
            true,
            MadeUpIds::attached(1),
        );
        assert!(attached.calls.is_empty() && attached.images.is_empty());
    }

    #[test]
    fn a_prompt_takes_a_bounded_number_of_images_each_bounded_in_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for n in 0..IMAGES_PER_PROMPT_MAX + 1 {
            std::fs::write(dir.path().join(format!("i{n}.png")), PNG).unwrap();
            text.push_str(&format!("@i{n}.png "));
        }
        let mut large = PNG.to_vec();
        large.resize(images::IMAGE_MAX_BYTES as usize + 1, 0);
        std::fs::write(dir.path().join("large.png"), large).unwrap();
        let said = images(dir.path(), &text, true);
        assert_eq!(said.len(), IMAGES_PER_PROMPT_MAX + 1);
        assert_eq!(
            said[IMAGES_PER_PROMPT_MAX],
            format!(
                "image i{IMAGES_PER_PROMPT_MAX}.png left out: one prompt takes at most {IMAGES_PER_PROMPT_MAX} images"
            )
        );
        assert_eq!(
            images(dir.path(), "@large.png", true),
            ["image large.png (3.75 MiB) left out: an image goes to the model only up to 3.75 MiB"]
        );
    }
}
