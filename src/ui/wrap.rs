//! Display-width helpers shared by the markdown renderer, the input editor
//! and plain-text entries, so all measure text exactly the same way.
//!
//! Widths come from `unicode-width`, with two adjustments that keep our
//! count at or above what ratatui (which measures whole strings) will draw:
//! control characters count zero (callers drop or expand them), and a
//! variation selector after a one-column character counts one more column,
//! because `"❤\u{FE0F}"` is drawn two columns wide.

use unicode_width::UnicodeWidthChar;

/// The display width of `c` on its own: 0 for control characters and
/// combining marks, 2 for wide (CJK, most emoji) characters, 1 otherwise.
#[inline]
pub fn char_width(c: char) -> usize {
    if c.is_ascii() {
        usize::from(!c.is_ascii_control())
    } else if c.is_control() {
        0
    } else {
        c.width().unwrap_or(0)
    }
}

/// Whether `c` is a variation selector (U+FE00..=U+FE0F).
fn is_variation_selector(c: char) -> bool {
    ('\u{FE00}'..='\u{FE0F}').contains(&c)
}

/// Tracks the previous character so a variation selector can widen a
/// one-column base character (emoji presentation sequences).
#[derive(Debug, Default, Clone, Copy)]
pub struct WidthCounter {
    prev: usize,
}

impl WidthCounter {
    /// A counter at the start of a string.
    pub fn new() -> Self {
        Self::default()
    }

    /// The columns `c` adds after the characters already seen.
    #[inline]
    pub fn next(&mut self, c: char) -> usize {
        if c.is_ascii() {
            let w = usize::from(!c.is_ascii_control());
            self.prev = w;
            return w;
        }
        let w = if is_variation_selector(c) && self.prev == 1 {
            1
        } else {
            char_width(c)
        };
        // A selector completes the sequence: a second one adds nothing.
        self.prev = if is_variation_selector(c) { 2 } else { w };
        w
    }
}

/// The display width of `s`, measured the same way as [`WidthCounter`].
pub fn str_width(s: &str) -> usize {
    let mut counter = WidthCounter::new();
    s.chars().map(|c| counter.next(c)).sum()
}

/// Wraps `text` to lines of at most `width` display columns: explicit line
/// breaks are kept, words wrap, over-long words break, tabs become spaces.
pub fn wrap_plain(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let options = textwrap::Options::new(width)
        .break_words(true)
        .word_separator(textwrap::WordSeparator::UnicodeBreakProperties);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r').replace('\t', "    ");
        if line.is_empty() {
            out.push(String::new());
            continue;
        }
        out.extend(
            textwrap::wrap(&line, &options)
                .into_iter()
                .map(|l| l.into_owned()),
        );
    }
    out
}
