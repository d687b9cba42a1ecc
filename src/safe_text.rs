//! Text made safe for a terminal: the one sanitiser for every string that
//! came from the model, a tool or a server and may reach the screen.
//!
//! A terminal obeys control characters wherever they appear: `ESC ]2;…`
//! retitles it, `ESC ]52;…` writes the clipboard, `ESC [6n` makes it type
//! an answer into our input, a bare `CR` lets the rest of a line overwrite
//! its start. So everything printed outside ratatui passes through
//! [`strip_controls`], and the UI strips what it stores too, because the
//! transcript printed on exit and the clipboard copy are made from it.
//! A command's output loses its escape sequences whole first
//! ([`strip_escapes`]), so no remnant of a colour stands in it. This
//! module imports nothing of the crate: every other module may
//! use it without crossing a wall (ADR 0001).

use std::borrow::Cow;
use std::ops::RangeInclusive;

/// Whether `c` is removed: every C0 control but `\n` and `\t`, DEL, and the
/// C1 controls U+0080..=U+009F (`char::is_control` is exactly these).
fn is_stripped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` without control characters other than `\n` and `\t`; borrowed
/// when there is nothing to strip. `CR LF` becomes `LF` and a bare `CR` is
/// dropped, so what was on both sides of it stays visible. Everything else
/// is kept, so the text around a removed sequence still shows that one was
/// there (`ESC ]2;title BEL` shows as `]2;title`).
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_stripped) {
        Cow::Owned(text.chars().filter(|&c| !is_stripped(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` without its escape sequences: the colours, cursor moves, line
/// erases and titles a program writes for a terminal, which carry nothing
/// for a reader. Borrowed when there is none. Removed whole, as ECMA-48
/// frames them:
/// - a control sequence, `ESC [` then parameter bytes (`0`–`?`), then
///   intermediate bytes (space–`/`), ending at its final byte (`@`–`~`);
/// - a string (`ESC ]` a title or a link, `ESC P`, `ESC X`, `ESC ^`,
///   `ESC _`), ending at `BEL` or `ESC \`, or else at the end of its line,
///   so an unended one cannot hide the rest of the text;
/// - any other `ESC`, its intermediate bytes and its final byte
///   (`ESC ( B`, `ESC 7`).
///
/// A sequence cut short by the end of `text` is removed as far as it goes;
/// a byte that cannot continue a control sequence ends it and is kept.
/// Lone control characters stay: [`strip_controls`] is for those.
pub fn strip_escapes(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find('\x1b') else {
        return Cow::Borrowed(text);
    };
    let mut kept = String::with_capacity(text.len());
    let mut from = 0;
    let mut next = Some(first);
    while let Some(start) = next {
        kept.push_str(&text[from..start]);
        from = sequence_end(text.as_bytes(), start);
        next = text[from..].find('\x1b').map(|offset| from + offset);
    }
    kept.push_str(&text[from..]);
    Cow::Owned(kept)
}

/// Where the escape sequence that starts with the `ESC` at `start` ends:
/// every byte it takes is ASCII, so the end is a character boundary.
fn sequence_end(bytes: &[u8], start: usize) -> usize {
    let within =
        |at: usize, range: RangeInclusive<u8>| bytes.get(at).is_some_and(|b| range.contains(b));
    let mut at = start + 1;
    match bytes.get(at) {
        Some(b'[') => {
            at += 1;
            while within(at, b'0'..=b'?') {
                at += 1;
            }
            while within(at, b' '..=b'/') {
                at += 1;
            }
            if within(at, b'@'..=b'~') {
                at += 1;
            }
        }
        Some(b']' | b'P' | b'X' | b'^' | b'_') => loop {
            at += 1;
            match bytes.get(at) {
                None | Some(b'\n') => break,
                Some(b'\x07') => {
                    at += 1;
                    break;
                }
                // `ESC \` ends the string; any other `ESC` starts the next
                // sequence.
                Some(b'\x1b') => {
                    if bytes.get(at + 1) == Some(&b'\\') {
                        at += 2;
                    }
                    break;
                }
                Some(_) => {}
            }
        },
        Some(b' '..=b'/') => {
            while within(at, b' '..=b'/') {
                at += 1;
            }
            if within(at, b'0'..=b'~') {
                at += 1;
            }
        }
        Some(b'0'..=b'~') => at += 1,
        _ => {}
    }
    at
}
