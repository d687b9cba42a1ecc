//! How a value found in a project's file becomes one line of the
//! overview, and the bounded line scan that finds a Python string
//! assignment (`version="1.2"`, `__version__ = '1.2'`) without running
//! anything.

use crate::safe_text::strip_controls;

/// The most characters of a name, version or command shown (80): past
/// that it is not a name but a paste.
pub(super) const FACT_MAX_CHARS: usize = 80;

/// The most characters of a description shown (200): a line, not the
/// README.
pub(super) const DESCRIPTION_MAX_CHARS: usize = 200;

/// `text` as one line of at most `max` characters: controls removed,
/// white space runs made one space, cut at a word with `…` when longer;
/// `None` when nothing is left.
pub(super) fn one_line(text: &str, max: usize) -> Option<String> {
    let clean = strip_controls(text);
    let words: Vec<&str> = clean.split_whitespace().collect();
    let line = words.join(" ");
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= max {
        return Some(line);
    }
    let keep = max.saturating_sub(1);
    let cut: String = line.chars().take(keep).collect();
    let ends_a_word = line.chars().nth(keep) == Some(' ');
    let at_word = match cut.rfind(' ') {
        Some(space) if !ends_a_word && space > cut.len() / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    Some(format!(
        "{}…",
        at_word.trim_end_matches([',', ';', ':', ' '])
    ))
}

/// A version as the overview states it: one short token that starts
/// with a digit (`v1.2` is taken as `1.2`); `None` for anything else (an
/// expression, a placeholder that is no version).
pub(super) fn version(text: &str) -> Option<String> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let plausible = text.starts_with(|c: char| c.is_ascii_digit())
        && !text.contains(char::is_whitespace)
        && text.chars().count() <= FACT_MAX_CHARS;
    plausible.then(|| strip_controls(text).into_owned())
}

/// The string literal first assigned to `name` in `source`, as a keyword
/// argument (`name="x"`) or a statement (`name = 'x'`, `name: str = "x"`,
/// `name = other = "x"`), at the start of a line or after `(`, `,` or
/// white space; `None` when `name` is only ever given something else.
pub(super) fn assigned_literal(source: &str, name: &str) -> Option<String> {
    source.lines().find_map(|line| assigned_in_line(line, name))
}

fn assigned_in_line(line: &str, name: &str) -> Option<String> {
    let mut from = 0;
    while let Some(found) = line[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before = line[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        if let Some(value) = value_after(&line[from..]) {
            return Some(value);
        }
    }
    None
}

/// The literal after `= `, an annotation (`: str`) or further names of a
/// chained assignment skipped.
fn value_after(rest: &str) -> Option<String> {
    let mut rest = rest.trim_start();
    if let Some(annotated) = rest.strip_prefix(':') {
        rest = annotated.split_once('=').map(|(_, r)| r)?;
        return literal(rest.trim_start());
    }
    rest = rest.strip_prefix('=')?;
    if rest.starts_with('=') {
        return None;
    }
    let mut rest = rest.trim_start();
    // `__version__ = version = "1.2"`: skip the further names.
    loop {
        let ident = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if ident == 0 {
            break;
        }
        let after = rest[ident..].trim_start();
        match after.strip_prefix('=') {
            Some(next) if !next.starts_with('=') => rest = next.trim_start(),
            _ => return None,
        }
    }
    literal(rest)
}

/// The text of the quoted literal `text` starts with: `'…'` or `"…"`
/// closed on the same line, without escapes.
fn literal(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = &text[1..];
    let end = body.find(quote)?;
    let value = &body[..end];
    (!value.contains('\\')).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_is_found_as_argument_statement_annotation_or_chain() {
        let found = |source: &str| assigned_literal(source, "version");
        assert_eq!(found("    version='1.2.3',").as_deref(), Some("1.2.3"));
        assert_eq!(
            found("setup(name=\"x\", version = \"2.0\")").as_deref(),
            Some("2.0")
        );
        assert_eq!(found("version: str = '3.1'").as_deref(), Some("3.1"));
        assert_eq!(
            assigned_literal("__version__ = version = '8.0.4'", "__version__").as_deref(),
            Some("8.0.4")
        );
        assert_eq!(found("python_version='3'\nversion=get()"), None);
        assert_eq!(found("if version == '1': pass"), None);
        assert_eq!(found("version=about['__version__']"), None);
        assert_eq!(
            found("x.version = '9'"),
            None,
            "an attribute is not the name"
        );
        assert_eq!(found("version = 'a\\'b'"), None, "escapes are not read");
    }

    #[test]
    fn one_line_collapses_and_cuts_at_a_word() {
        assert_eq!(one_line(" a\n b\tc ", 10).as_deref(), Some("a b c"));
        assert_eq!(one_line("\u{1b}]2;t\u{7}", 10).as_deref(), Some("]2;t"));
        assert_eq!(one_line("  \n", 10), None);
        assert_eq!(
            one_line("the quick brown fox jumps", 16).as_deref(),
            Some("the quick brown…")
        );
    }

    #[test]
    fn a_version_is_a_short_token_starting_with_a_digit() {
        assert_eq!(version(" v1.2.0 ").as_deref(), Some("1.2.0"));
        assert_eq!(version("attr: pkg.__version__"), None);
        assert_eq!(version("1.0 beta"), None);
        assert_eq!(version("2024.1.post3").as_deref(), Some("2024.1.post3"));
    }
}
