//! The data half of the check: JSON through serde_json and TOML through
//! the toml crate, the parsers dashfloat already holds. Each stops at its
//! first error, so a file has at most one place.

use serde::de::IgnoredAny;

use super::Place;

/// The most of a parser's message a problem quotes (80 bytes, its first
/// line).
const MESSAGE_MAX_BYTES: usize = 80;

/// Where `text` fails to parse as JSON. Nesting past serde_json's depth
/// limit is valid JSON the parser declines, not an error.
pub(super) fn json(text: &[u8]) -> Vec<Place> {
    let Err(error) = serde_json::from_slice::<IgnoredAny>(text) else {
        return Vec::new();
    };
    let message = error.to_string();
    // The message ends with where it is, which the place says already.
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = message.strip_suffix(&suffix).unwrap_or(&message);
    if message == "recursion limit exceeded" {
        return Vec::new();
    }
    // Text that ends too soon is placed at its last line that has any,
    // not past its final line break.
    let line = if error.is_eof() {
        last_line_with_text(text)
    } else {
        error.line().max(1)
    };
    vec![Place {
        line,
        last_line: line,
        problem: super::short(message, MESSAGE_MAX_BYTES).to_owned(),
    }]
}

/// The 1-based number of the last line of `text` that is not blank; 1
/// when none is.
fn last_line_with_text(text: &[u8]) -> usize {
    text.split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.trim_ascii().is_empty())
        .last()
        .map_or(1, |(index, _)| index + 1)
}

/// Where `text` fails to parse as TOML (text that is not UTF-8 fails on
/// its first line).
pub(super) fn toml(text: &[u8]) -> Vec<Place> {
    let Err(error) = toml::from_slice::<IgnoredAny>(text) else {
        return Vec::new();
    };
    let at = error.span().map_or(0, |span| span.start.min(text.len()));
    let line = text[..at].iter().filter(|b| **b == b'\n').count() + 1;
    vec![Place {
        line,
        last_line: line,
        problem: super::short(error.message().trim(), MESSAGE_MAX_BYTES).to_owned(),
    }]
}
