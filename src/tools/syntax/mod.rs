//! The syntax check a write gets once it has landed: the file is parsed in
//! process (tree-sitter for Python, Rust, JavaScript, TypeScript, TSX and
//! Go; serde_json and toml for JSON and TOML), and the errors the write
//! brought in go back in the same result, so a small model fixes a broken
//! edit in its very next step. Errors the file had before are not blamed
//! on the write. Bounded in size and in time; a file it does not know, or
//! cannot check within its bounds, is passed over in silence. ADR 0047.

mod data;
mod grammar;

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::protocol::ToolStatus;

use super::preview::first_changed_line;

/// Largest content checked (512 KiB, some 12,000 lines of code): past
/// nearly every hand-written source file, and parsed in about a fifth of
/// [`SYNTAX_PARSE_TIMEOUT`] in a release build (the tools bench). A larger file is not
/// checked, and nothing is said: like a file of a language not checked,
/// its result reads as it did before the check, since a note the model
/// cannot act on is not worth its tokens.
pub const SYNTAX_MAX_FILE_BYTES: usize = 512 * 1024;

/// Longest one parse may run (500 ms) before it is given up, so a
/// pathological file cannot hold the tool: a check parses at most twice
/// (the new content, and the old when the new has errors). A given-up
/// check says nothing.
pub const SYNTAX_PARSE_TIMEOUT: Duration = Duration::from_millis(500);

/// Errors a result lists (3): the first one is what to fix; a few more
/// show whether the damage is one place or many, and the rest are
/// counted. More would only be the parser's recovery echoing the first.
pub const SYNTAX_ERRORS_SHOWN: usize = 3;

/// The most of an error's line a result quotes (120 bytes, a character
/// the cut would split kept whole): the whole of most lines, copyable as
/// a `search_block`, and little to read for a long one.
pub const SYNTAX_EXCERPT_MAX_BYTES: usize = 120;

/// The most error places one parse gathers (256), in the new content and
/// in the old it is compared with: a file of nothing but errors costs a
/// bounded walk and bounded memory.
const SYNTAX_PLACES_MAX: usize = 256;

/// What the check found wrong with the content a write left: the errors
/// it brought in, first ones first, and what to do. Absent from a result
/// when there are none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyntaxErrors {
    /// The first errors, at most [`SYNTAX_ERRORS_SHOWN`], by line.
    pub errors: Vec<SyntaxError>,
    /// How many more the write brought in, not listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub more: usize,
    /// How many the file already had before the write: not the write's
    /// doing, and not listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub there_before: usize,
    /// What to do about them.
    pub hint: String,
}

/// One place the parser could not make sense of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyntaxError {
    /// Its 1-based line.
    pub line: usize,
    /// What is wrong there, as the parser sees it: `missing ")"`,
    /// `unexpected "def"`, or the JSON or TOML parser's message.
    pub problem: String,
    /// The line's text (at most [`SYNTAX_EXCERPT_MAX_BYTES`], `…` where
    /// cut).
    pub text: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A language the check parses, chosen by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Json,
    Toml,
}

impl Language {
    /// The language of the file `path` names, by its extension (case
    /// aside); `None` for a file not checked.
    fn of(path: &str) -> Option<Self> {
        let extension = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "json" => Language::Json,
            "toml" => Language::Toml,
            _ => return None,
        })
    }

    /// Its name in a hint.
    fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Rust => "Rust",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::Json => "JSON",
            Language::Toml => "TOML",
        }
    }
}

/// A place a parse failed: where, and what went wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    /// The 1-based line it is reported at.
    line: usize,
    /// The last line of the text in error (`line` for a point).
    last_line: usize,
    problem: String,
}

impl Place {
    /// An error spanning lines from before the `changed` ones into them is
    /// placed at the first changed line: a parser that met a broken
    /// bracket gives up on all of the enclosing text, from the start of
    /// the function or statement the write did not touch, and that start
    /// is not what to fix.
    fn move_into(&mut self, changed: &RangeInclusive<usize>) {
        if self.line < *changed.start() && *changed.start() <= self.last_line {
            self.problem = format!(
                "cannot be parsed: one error spans lines {}-{}",
                self.line, self.last_line
            );
            self.line = *changed.start();
        }
    }
}

/// Where `text` fails to parse as `language`, by line, one place a line,
/// at most [`SYNTAX_PLACES_MAX`]; `None` when the parse ran out of time.
fn places(language: Language, text: &[u8]) -> Option<Vec<Place>> {
    let mut places = match language {
        Language::Json => data::json(text),
        Language::Toml => data::toml(text),
        Language::Python => grammar::places(tree_sitter_python::LANGUAGE.into(), text)?,
        Language::Rust => grammar::places(tree_sitter_rust::LANGUAGE.into(), text)?,
        Language::JavaScript => grammar::places(tree_sitter_javascript::LANGUAGE.into(), text)?,
        Language::TypeScript => {
            grammar::places(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), text)?
        }
        Language::Tsx => grammar::places(tree_sitter_typescript::LANGUAGE_TSX.into(), text)?,
        Language::Go => grammar::places(tree_sitter_go::LANGUAGE.into(), text)?,
    };
    by_line(&mut places);
    Some(places)
}

/// `places` in line order, one a line: of those on one line, the one
/// whose text in error ends first (a missing token before an error
/// spanning lines).
fn by_line(places: &mut Vec<Place>) {
    places.sort_by_key(|place| (place.line, place.last_line));
    places.dedup_by_key(|place| place.line);
}

/// The lines of `after` (1-based, inclusive) a write over `before`
/// changed: from the first that differs to the last before the text they
/// end alike with (the first alone when lines were only taken out).
fn changed_lines(before: &[u8], after: &[u8]) -> RangeInclusive<usize> {
    let first = first_changed_line(before, after);
    let same_start = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let same_end = before[same_start..]
        .iter()
        .rev()
        .zip(after[same_start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let end = after.len() - same_end;
    let last = match end.checked_sub(1).filter(|last| *last >= same_start) {
        Some(last) => after[..last].iter().filter(|b| **b == b'\n').count() + 1,
        None => first,
    };
    first..=last.max(first)
}

/// The syntax errors the write of `after` over `before` (`None`: a new
/// file, or one whose old content is not known) left in the file `path`
/// names: `None` when it parses, when it is not a file the check knows,
/// or when it is past the check's bounds. An error whose line reads as a
/// line the old content had an error on was there before; only when the
/// new content has errors is the old one parsed. An error region the
/// change lies in is reported at the change ([`Place::move_into`]).
pub(crate) fn check(path: &str, before: Option<&[u8]>, after: &[u8]) -> Option<SyntaxErrors> {
    let language = Language::of(path)?;
    if after.len() > SYNTAX_MAX_FILE_BYTES {
        return None;
    }
    let found = places(language, after)?;
    if found.is_empty() {
        return None;
    }
    let mut old_lines: HashMap<&[u8], usize> = HashMap::new();
    if let Some(before) = before.filter(|b| b.len() <= SYNTAX_MAX_FILE_BYTES) {
        let lines = Lines::new(before);
        for place in places(language, before).unwrap_or_default() {
            *old_lines
                .entry(lines.get(place.line).trim_ascii())
                .or_default() += 1;
        }
    }
    let lines = Lines::new(after);
    let mut new = Vec::new();
    let mut there_before = 0;
    for place in found {
        match old_lines.get_mut(lines.get(place.line).trim_ascii()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                there_before += 1;
            }
            _ => new.push(place),
        }
    }
    if new.is_empty() {
        return None;
    }
    if let Some(before) = before {
        let changed = changed_lines(before, after);
        for place in &mut new {
            place.move_into(&changed);
        }
        by_line(&mut new);
    }
    let more = new.len().saturating_sub(SYNTAX_ERRORS_SHOWN);
    let errors = new
        .into_iter()
        .take(SYNTAX_ERRORS_SHOWN)
        .map(|place| SyntaxError {
            text: excerpt(lines.get(place.line)),
            line: place.line,
            problem: place.problem,
        })
        .collect();
    Some(SyntaxErrors {
        errors,
        more,
        there_before,
        hint: format!(
            "the file was written, but it does not parse as {} at these lines: fix them with \
             edit_file",
            language.name()
        ),
    })
}

/// How the row of a write that landed reads: ok, or, when it left syntax
/// errors, ok with where they are, marked so the person sees it at a
/// glance.
pub(crate) fn status(found: Option<&SyntaxErrors>) -> ToolStatus {
    let Some(found) = found else {
        return ToolStatus::Ok;
    };
    let lines: Vec<String> = found.errors.iter().map(|e| e.line.to_string()).collect();
    let more = match found.more {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    match lines.as_slice() {
        [one] if found.more == 0 => ToolStatus::Warning(format!("syntax error at line {one}")),
        _ => ToolStatus::Warning(format!("syntax errors at lines {}{more}", lines.join(", "))),
    }
}

/// The lines of a text, found once: what the places are quoted and
/// compared by, each in constant time.
struct Lines<'a> {
    text: &'a [u8],
    /// Where each line starts.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a [u8]) -> Self {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text).map(|at| at + 1))
            .collect();
        Lines { text, starts }
    }

    /// Line `line` (1-based), without its line ending; empty past the
    /// end.
    fn get(&self, line: usize) -> &'a [u8] {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else {
            return &[];
        };
        let end = self
            .starts
            .get(line)
            .map_or(self.text.len(), |next| next - 1);
        let found = &self.text[start..end];
        found.strip_suffix(b"\r").unwrap_or(found)
    }
}

/// `line` as a result quotes it: trailing white space off, at most
/// [`SYNTAX_EXCERPT_MAX_BYTES`].
fn excerpt(line: &[u8]) -> String {
    let line = String::from_utf8_lossy(line.trim_ascii_end());
    if line.len() <= SYNTAX_EXCERPT_MAX_BYTES {
        return line.into_owned();
    }
    let mut end = SYNTAX_EXCERPT_MAX_BYTES;
    while !line.is_char_boundary(end) {
        end += 1;
    }
    format!("{}…", &line[..end])
}

/// `text` cut to at most `max` bytes (a character the cut would split
/// kept whole) on its first line: a token or a message quoted in a
/// problem.
fn short(text: &str, max: usize) -> &str {
    let first = text.lines().next().unwrap_or_default();
    let mut end = first.len().min(max);
    while !first.is_char_boundary(end) {
        end += 1;
    }
    &first[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_found_without_its_ending_and_past_the_end_is_empty() {
        let lines = Lines::new(b"one\r\ntwo\n\nfour");
        let found: Vec<&[u8]> = (0..=6).map(|n| lines.get(n)).collect();
        let want: Vec<&[u8]> = vec![b"", b"one", b"two", b"", b"four", b"", b""];
        assert_eq!(found, want);
    }

    #[test]
    fn the_changed_lines_run_from_the_first_that_differs_to_the_last() {
        let before = b"a\nb\nc\nd\n";
        // One line replaced, two put in, one taken out, one added at the end.
        assert_eq!(changed_lines(before, b"a\nB\nc\nd\n"), 2..=2);
        assert_eq!(changed_lines(before, b"a\nb\nx\ny\nc\nd\n"), 3..=4);
        assert_eq!(changed_lines(before, b"a\nc\nd\n"), 2..=2);
        assert_eq!(changed_lines(before, b"a\nb\nc\nd\ne\n"), 5..=5);
        // Everything new: from the first line to the last.
        assert_eq!(changed_lines(b"", b"x\ny\nz"), 1..=3);
    }

    #[test]
    fn an_error_from_before_the_change_into_it_is_placed_at_the_change() {
        let mut spanning = Place {
            line: 1,
            last_line: 9,
            problem: "unexpected \"export\"".to_owned(),
        };
        spanning.move_into(&(4..=5));
        assert_eq!(spanning.line, 4);
        assert_eq!(
            spanning.problem,
            "cannot be parsed: one error spans lines 1-9"
        );
        // One that starts in the change, or ends before it, stays.
        for (line, last_line) in [(4, 9), (1, 3)] {
            let mut place = Place {
                line,
                last_line,
                problem: String::new(),
            };
            place.move_into(&(4..=5));
            assert_eq!(place.line, line);
        }
    }
}
