//! The one wrapping engine: every text the UI lays out in rows — prompts,
//! notices, tool excerpts, previews, replies, code blocks and the input
//! box — is cut here, measured by [`super::width`] (ADR 0018).
//!
//! Two layers. [`fill_columns`] cuts text between grapheme clusters
//! wherever a row is full; it serves text with no better place to break (a
//! word longer than a row, a line of code, the input box). [`Wrapper`] is a
//! greedy word wrapper on top: a row may break at whitespace and before a
//! wide (CJK, emoji) cluster, and a word longer than a row is cut by
//! columns. Nothing wider than the width is ever produced; a cluster wider
//! than the width on its own cannot be shown at all and is left out.

use std::ops::Range;

use super::width::{clusters, str_width};

/// What a tab becomes in plain text: four spaces (ADR 0018).
const PLAIN_TAB: &str = "    ";

/// One step of [`fill_columns`]'s output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fill {
    /// A stretch of the text (a byte range) and its width, for the current
    /// row.
    Text(Range<usize>, usize),
    /// The current row is full: the next stretch starts a new one.
    RowEnd,
}

/// Cuts `text` into rows of at most `width` columns (at least 1), between
/// grapheme clusters, reporting each stretch and each row end to `out`.
/// Returns the columns used in the last row, which stays open for the
/// caller to end. Never reports an empty row: a cluster wider than `width`
/// is left out without ending one.
pub fn fill_columns(text: &str, width: usize, mut out: impl FnMut(Fill)) -> usize {
    let width = width.max(1);
    let (mut start, mut piece, mut used) = (0, 0, 0);
    for cluster in clusters(text) {
        if cluster.width > width {
            if start < cluster.start {
                out(Fill::Text(start..cluster.start, piece));
            }
            start = cluster.end();
            piece = 0;
            continue;
        }
        if used + cluster.width > width {
            if start < cluster.start {
                out(Fill::Text(start..cluster.start, piece));
            }
            out(Fill::RowEnd);
            (start, piece, used) = (cluster.start, 0, 0);
        }
        piece += cluster.width;
        used += cluster.width;
    }
    if start < text.len() {
        out(Fill::Text(start..text.len(), piece));
    }
    used
}

/// How [`Wrapper`] shows the whitespace between words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// Prose (markdown): a run of whitespace is one space, and none starts
    /// or ends a row.
    Collapse,
    /// Verbatim text (prompts, tool output, previews): whitespace is kept
    /// as written inside a row, indentation included, and dropped only
    /// where a row breaks.
    Keep,
}

/// Where [`Wrapper`] puts the rows it makes: stretches of the text being
/// wrapped, in order, with row ends between them.
pub trait Rows {
    /// Appends `range` of the text to the current row.
    fn text(&mut self, range: Range<usize>);
    /// Appends one space standing for the whitespace that starts at byte
    /// `at` of the text ([`Spacing::Collapse`]).
    fn space(&mut self, at: usize);
    /// Ends the current row.
    fn end(&mut self);
}

/// Whitespace seen before a word: where it starts and how wide it is.
#[derive(Debug, Clone, Copy)]
struct Gap {
    start: usize,
    width: usize,
}

/// A word being scanned: `start..end` of the text with no break
/// opportunity inside, its width, and the whitespace before it.
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    width: usize,
    gap: Option<Gap>,
}

/// The greedy word wrapper. Feed it consecutive stretches of one text with
/// [`Wrapper::text`], [`Wrapper::glued`] and [`Wrapper::hard_break`], then
/// [`Wrapper::finish`]; a word may run across stretches.
#[derive(Debug)]
pub struct Wrapper<'t, R> {
    text: &'t str,
    width: usize,
    spacing: Spacing,
    rows: R,
    /// Columns used in the current row.
    used: usize,
    /// Whether the current row has content (or indentation).
    started: bool,
    /// Text placed in the current row but not yet given to `rows`, so that
    /// adjacent stretches go as one.
    pending: Option<Range<usize>>,
    word: Option<Word>,
    gap: Option<Gap>,
}

impl<'t, R: Rows> Wrapper<'t, R> {
    /// A wrapper of `text` into rows of at most `width` columns (at least
    /// 1), handing them to `rows`.
    pub fn new(text: &'t str, width: usize, spacing: Spacing, rows: R) -> Self {
        Self {
            text,
            width: width.max(1),
            spacing,
            rows,
            used: 0,
            started: false,
            pending: None,
            word: None,
            gap: None,
        }
    }

    /// Adds `range` of the text, which may break at whitespace and before a
    /// wide cluster.
    pub fn text(&mut self, range: Range<usize>) {
        let text = self.text;
        let base = range.start;
        for cluster in clusters(&text[range]) {
            let start = base + cluster.start;
            if cluster.is_whitespace() {
                self.place();
                self.gap.get_or_insert(Gap { start, width: 0 }).width += cluster.width;
                continue;
            }
            if cluster.width >= 2 {
                self.place();
            }
            self.extend(start, start + cluster.text.len(), cluster.width);
        }
    }

    /// Adds `range` of the text as one unit (inline code), glued to the
    /// text around it unless whitespace separates them; when it is wider
    /// than a row it wraps like [`Wrapper::text`].
    pub fn glued(&mut self, range: Range<usize>) {
        let width = str_width(&self.text[range.clone()]);
        if width <= self.width {
            self.extend(range.start, range.end, width);
        } else {
            self.text(range);
        }
    }

    /// Ends the current row where the text says so; whitespace before and
    /// after the break is dropped (kept after it as indentation with
    /// [`Spacing::Keep`]).
    pub fn hard_break(&mut self) {
        self.place();
        self.gap = None;
        self.end_row();
        self.started = false;
    }

    /// Places what is left and returns the rows. A last row without
    /// content (the text ended in whitespace or a hard break) is not made.
    pub fn finish(mut self) -> R {
        self.place();
        if self.started {
            self.end_row();
        }
        self.rows
    }

    fn extend(&mut self, start: usize, end: usize, width: usize) {
        match &mut self.word {
            Some(word) => {
                word.end = end;
                word.width += width;
            }
            None => {
                self.word = Some(Word {
                    start,
                    end,
                    width,
                    gap: self.gap.take(),
                });
            }
        }
    }

    /// Appends `range` (`width` columns) to the current row.
    fn push(&mut self, range: Range<usize>, width: usize) {
        self.used += width;
        match &mut self.pending {
            Some(pending) if pending.end == range.start => pending.end = range.end,
            _ => {
                self.flush();
                self.pending = Some(range);
            }
        }
    }

    fn flush(&mut self) {
        if let Some(range) = self.pending.take() {
            self.rows.text(range);
        }
    }

    fn end_row(&mut self) {
        self.flush();
        self.rows.end();
        self.used = 0;
    }

    /// The whitespace before a word placed on the same row.
    fn separate(&mut self, gap: Gap, word_start: usize) {
        match self.spacing {
            Spacing::Keep => self.push(gap.start..word_start, gap.width),
            // One space already: it joins the text around it.
            Spacing::Collapse
                if gap.start + 1 == word_start && self.text.as_bytes()[gap.start] == b' ' =>
            {
                self.push(gap.start..word_start, 1);
            }
            Spacing::Collapse => {
                self.flush();
                self.rows.space(gap.start);
                self.used += 1;
            }
        }
    }

    /// Places the finished word (if any) on the current row or a new one.
    fn place(&mut self) {
        let Some(word) = self.word.take() else {
            return;
        };
        let sep = match (word.gap, self.spacing) {
            (None, _) => 0,
            (Some(_), Spacing::Collapse) => usize::from(self.started),
            (Some(gap), Spacing::Keep) => gap.width,
        };
        if self.used + sep + word.width <= self.width {
            if sep > 0
                && let Some(gap) = word.gap
            {
                self.separate(gap, word.start);
            }
            self.push(word.start..word.end, word.width);
            self.started = true;
            return;
        }
        if self.started {
            self.end_row();
        }
        self.started = true;
        if word.width <= self.width {
            self.push(word.start..word.end, word.width);
            return;
        }
        // Longer than a row: cut by columns.
        let text = self.text;
        let base = word.start;
        fill_columns(&text[word.start..word.end], self.width, |fill| match fill {
            Fill::Text(range, width) => self.push(base + range.start..base + range.end, width),
            Fill::RowEnd => self.end_row(),
        });
    }
}

/// Rows of plain text as strings.
#[derive(Debug, Default)]
struct PlainRows<'t> {
    text: &'t str,
    rows: Vec<String>,
    row: String,
}

impl Rows for PlainRows<'_> {
    fn text(&mut self, range: Range<usize>) {
        self.row.push_str(&self.text[range]);
    }

    fn space(&mut self, _at: usize) {
        self.row.push(' ');
    }

    fn end(&mut self) {
        self.rows.push(std::mem::take(&mut self.row));
    }
}

/// Wraps plain `text` to rows of at most `width` columns: every line break
/// starts a row, words wrap, whitespace is kept inside a row
/// ([`Spacing::Keep`]), over-long words are cut, tabs become
/// [`PLAIN_TAB`].
pub fn wrap_plain(text: &str, width: u16) -> Vec<String> {
    let expanded;
    let text = if text.contains('\t') {
        expanded = text.replace('\t', PLAIN_TAB);
        expanded.as_str()
    } else {
        text
    };
    let rows = PlainRows {
        text,
        ..PlainRows::default()
    };
    let mut wrapper = Wrapper::new(text, usize::from(width), Spacing::Keep, rows);
    let mut start = 0;
    for line in text.split('\n') {
        wrapper.text(start..start + line.len());
        wrapper.hard_break();
        start += line.len() + 1;
    }
    wrapper.finish().rows
}
