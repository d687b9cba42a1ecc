//! Files the person names in a prompt (`fix @lib/slug.js`, `change the
//! port in config.toml`): read for the model before its first step, as if
//! it had called `read_file` (`list_directory` for a folder named with
//! `@`), so it starts from the file's text instead of guessing it, and
//! one step sooner. ADR 0038.

use std::collections::HashSet;
use std::path::{Component, Path};

use serde_json::json;

use crate::llm::tool_calls::MadeUpIds;
use crate::protocol::{CallArguments, ToolCallRequest};
use crate::tools::{Workspace, shows_as_text};

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

/// The calls that attach what `text` names: `read_file` for a file it
/// shows as text, `list_directory` for a folder named with `@`, with
/// `ids`, each file or folder once however it is spelt, at
/// most [`MENTION_MAX`]; bare names only when `bare`, and never hidden
/// ones. A name that is none of these, or that the path policy refuses,
/// stays plain text: `@` is also how people write decorators and
/// handles, most dotted words are not files, and a binary file would only
/// be refused.
pub fn attach(ws: &dyn Workspace, text: &str, bare: bool, ids: MadeUpIds) -> Vec<ToolCallRequest> {
    let mut seen = HashSet::new();
    named(text)
        .into_iter()
        .filter(|named| named.marked || (bare && !hidden(named.path)))
        .filter_map(|named| {
            let real = ws.resolve(named.path).ok()?;
            let stat = ws.stat(&real).ok()?;
            let tool = if stat.is_file() && shows_as_text(ws, &real) {
                "read_file"
            } else if stat.is_dir() && named.marked {
                "list_directory"
            } else {
                return None;
            };
            seen.insert(real).then_some((tool, named.path))
        })
        .take(MENTION_MAX)
        .enumerate()
        .map(|(n, (tool, path))| ToolCallRequest {
            id: ids.nth(n),
            name: tool.to_owned(),
            arguments: CallArguments::Json(json!({ "path": path })),
            error: None,
        })
        .collect()
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
            attach(&*ctx.workspace, text, true, MadeUpIds::attached(1))
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
        let attached = attach(&*ctx.workspace, &all, true, MadeUpIds::attached(1));
        assert_eq!(attached.len(), MENTION_MAX);
        assert!(attach(&*ctx.workspace, &all, false, MadeUpIds::attached(1)).is_empty());
        assert_eq!(
            attach(
                &*ctx.workspace,
                "@f1.txt f2.txt",
                false,
                MadeUpIds::attached(1)
            )
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
            MadeUpIds::attached(1),
        );
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
            attach(&*ctx.workspace, text, true, MadeUpIds::attached(1))
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
