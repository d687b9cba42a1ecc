//! Where an `edit_file` block lies when its bytes are not in the file but
//! its lines are, white space aside: the block lost or gained indentation,
//! kept trailing spaces the file lacks, or has `\n` where the file has
//! `\r\n`. The replacement is then indented and ended as the file is.
//! ADR 0039.

use std::ops::Range;

/// The most line comparisons one search makes: a block of many alike
/// lines against a file of many alike lines stops here, found nothing,
/// instead of costing their product.
pub const LOOSE_COMPARISONS_MAX: usize = 1_000_000;

/// A block found loosely: the bytes of the file it covers and the
/// replacement as the file's lines need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LooseMatch {
    /// The whole lines the block matched (their line ending included
    /// when the block ends with one).
    pub range: Range<usize>,
    /// The replacement, re-indented by what the file's lines have more
    /// or less than the block's, with the line ending the file's lines have.
    pub replace: Vec<u8>,
}

/// The line ending the matched lines share: `\r\n` or `\n` when every
/// one of them that ends (a file's last line may not) ends that way;
/// `None` when they mix or none ends.
pub(super) fn ending<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<&'static [u8]> {
    let mut found = None;
    for line in lines.filter(|line| line.ends_with(b"\n")) {
        let this: &'static [u8] = if line.ends_with(b"\r\n") {
            b"\r\n"
        } else {
            b"\n"
        };
        if found.is_some_and(|seen| seen != this) {
            return None;
        }
        found = Some(this);
    }
    found
}

/// How the file's indentation differs from the block's, the same on every
/// line that is not blank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shift<'a> {
    /// The file's lines begin with this too.
    More(&'a [u8]),
    /// The block's lines begin with this, the file's do not.
    Less(&'a [u8]),
}

/// The one place where `search`'s lines equal the file's lines with white
/// space at both ends aside, when there is exactly one and the
/// indentation differs the same way on each line; `None` otherwise
/// (no such place, several, a block of blank lines only, an uneven
/// indentation, or more than [`LOOSE_COMPARISONS_MAX`] comparisons).
pub fn locate_loose(haystack: &[u8], search: &[u8], replace: &[u8]) -> Option<LooseMatch> {
    let block: Vec<&[u8]> = lines(search).collect();
    if block.iter().all(|line| line.trim_ascii().is_empty()) {
        return None;
    }
    let file: Vec<(usize, &[u8])> = line_starts(haystack).collect();
    let mut found = None;
    let mut comparisons = 0usize;
    for start in 0..file.len().saturating_sub(block.len() - 1) {
        let window = &file[start..start + block.len()];
        let mut alike = true;
        for ((_, have), want) in window.iter().zip(&block) {
            comparisons += 1;
            if comparisons > LOOSE_COMPARISONS_MAX {
                return None;
            }
            if have.trim_ascii() != want.trim_ascii() {
                alike = false;
                break;
            }
        }
        if alike {
            if found.is_some() {
                return None;
            }
            found = Some(start);
        }
    }
    let start = found?;
    let window = &file[start..start + block.len()];
    let shift = shift(window.iter().map(|(_, line)| *line), &block)?;
    let (last_at, last) = window[block.len() - 1];
    let end = if search.ends_with(b"\n") {
        last_at + last.len()
    } else {
        last_at + without_ending(last).len()
    };
    Some(LooseMatch {
        range: window[0].0..end,
        replace: shifted(replace, shift, ending(window.iter().map(|(_, line)| *line))),
    })
}

/// `text`'s lines, each with its line ending.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split_inclusive(|b| *b == b'\n')
}

/// `text`'s lines with the byte offset each starts at.
fn line_starts(text: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    lines(text).scan(0, |at, line| {
        let start = *at;
        *at += line.len();
        Some((start, line))
    })
}

/// A line without its `\n` or `\r\n`, trailing spaces kept.
fn without_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The leading spaces and tabs of a line.
fn indent(line: &[u8]) -> &[u8] {
    let width = line
        .iter()
        .position(|b| *b != b' ' && *b != b'\t')
        .unwrap_or(line.len());
    &line[..width]
}

/// The one way every non-blank line of the file's `window` is indented
/// more or less than the block's line beside it; `None` when the lines
/// disagree.
fn shift<'a>(window: impl Iterator<Item = &'a [u8]>, block: &[&'a [u8]]) -> Option<Shift<'a>> {
    let mut found: Option<Shift<'a>> = None;
    for (have, want) in window.zip(block) {
        if want.trim_ascii().is_empty() {
            continue;
        }
        let (have, want) = (indent(have), indent(want));
        let this = if let Some(more) = have.strip_suffix(want) {
            Shift::More(more)
        } else if let Some(less) = want.strip_suffix(have) {
            Shift::Less(less)
        } else {
            return None;
        };
        match found {
            None => found = Some(this),
            Some(seen) if seen == this => {}
            Some(_) => return None,
        }
    }
    found
}

/// `text` with every line ending made `ending` (a last line without one
/// stays so): a file's line ends, for a replacement the model wrote with
/// others.
pub(super) fn with_line_ends(text: &[u8], ending: &[u8]) -> Vec<u8> {
    shifted(text, Shift::More(b""), Some(ending))
}

/// `replace` with each non-blank line indented by `shift`, and its line
/// endings made `ending` when the matched lines share one.
fn shifted(replace: &[u8], shift: Shift<'_>, ending: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(replace.len() + replace.len() / 8);
    for line in lines(replace) {
        let blank = line.trim_ascii().is_empty();
        let body = match shift {
            Shift::More(more) if !blank => {
                out.extend_from_slice(more);
                line
            }
            Shift::Less(less) if !blank => line.strip_prefix(less).unwrap_or(line),
            Shift::More(_) | Shift::Less(_) => line,
        };
        match (body.strip_suffix(b"\n"), ending) {
            (Some(text), Some(ending)) => {
                out.extend_from_slice(text.strip_suffix(b"\r").unwrap_or(text));
                out.extend_from_slice(ending);
            }
            _ => out.extend_from_slice(body),
        }
    }
    out
}
