//! Greedy word wrap of a block's inline content into styled lines.

use ratatui::style::Style;
use ratatui::text::Span;

use super::inline::{Inline, RunKind};
use super::spans::push_str_span;
use crate::ui::wrap::{WidthCounter, str_width};

/// Greedy word wrap of inline content into lines of at most `avail`
/// columns. Break opportunities are whitespace (collapsed to one space) and
/// the gap before a wide (CJK) character; inline code stays whole when it
/// fits; a word longer than a line is broken by columns.
pub(super) fn wrap_inline(inline: &Inline, avail: usize) -> Vec<Vec<Span<'static>>> {
    let mut w = Wrapper {
        inline,
        avail,
        run: 0,
        lines: Vec::new(),
        cur: Vec::new(),
        cur_w: 0,
        started: false,
    };
    // The word being scanned: `start..end` of the text, `width` columns,
    // and the run holding the whitespace before it (`space`), if any.
    let mut word = Word::default();
    let mut space: Option<usize> = None;
    for (index, run) in inline.runs.iter().enumerate() {
        let text = &inline.text[run.start..run.end];
        match run.kind {
            RunKind::Break => {
                w.place(&mut word);
                space = None;
                w.new_line();
                w.started = false;
            }
            RunKind::Atomic if str_width(text) <= avail => {
                // Glued to neighbouring text unless whitespace separates them.
                word.extend(run.start, run.end, str_width(text), &mut space);
            }
            RunKind::Text | RunKind::Atomic => {
                let mut counter = WidthCounter::new();
                let bytes = text.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    let b = bytes[i];
                    let at = run.start + i;
                    if b.is_ascii() {
                        i += 1;
                        if b.is_ascii_whitespace() || b == 0x0b {
                            w.place(&mut word);
                            space.get_or_insert(index);
                            counter = WidthCounter::new();
                        } else {
                            let cw = counter.next(char::from(b));
                            word.extend(at, at + 1, cw, &mut space);
                        }
                        continue;
                    }
                    let Some(c) = text[i..].chars().next() else {
                        break;
                    };
                    i += c.len_utf8();
                    if c.is_whitespace() {
                        w.place(&mut word);
                        space.get_or_insert(index);
                        counter = WidthCounter::new();
                        continue;
                    }
                    let cw = counter.next(c);
                    if cw >= 2 {
                        w.place(&mut word);
                    }
                    word.extend(at, at + c.len_utf8(), cw, &mut space);
                }
            }
        }
    }
    w.place(&mut word);
    if w.started || !w.cur.is_empty() {
        w.new_line();
    }
    w.lines
}

/// A unit of wrapping: `start..end` of the inline text, with no break
/// opportunity inside.
#[derive(Default)]
struct Word {
    start: usize,
    end: usize,
    width: usize,
    /// The run holding the whitespace before the word, if any.
    space: Option<usize>,
    active: bool,
}

impl Word {
    /// Adds `start..end` (adjacent to the word) of `width` columns; a new
    /// word takes the pending whitespace.
    #[inline]
    fn extend(&mut self, start: usize, end: usize, width: usize, space: &mut Option<usize>) {
        if self.active {
            self.end = end;
            self.width += width;
        } else {
            *self = Word {
                start,
                end,
                width,
                space: space.take(),
                active: true,
            };
        }
    }
}

/// Line-filling state of [`wrap_inline`].
struct Wrapper<'a> {
    inline: &'a Inline,
    avail: usize,
    /// Index of the run the next slice starts in (slices only move forward).
    run: usize,
    lines: Vec<Vec<Span<'static>>>,
    /// The current line as stretches of the text, turned into spans only
    /// when the line is complete (one allocation per span, not per word).
    cur: Vec<Seg>,
    cur_w: usize,
    /// Whether the current line has content (a space may precede a word).
    started: bool,
}

/// A stretch of a line being filled.
enum Seg {
    /// `start..end` of the inline text.
    Slice(usize, usize, Style),
    /// One space standing for collapsed whitespace.
    Space(Style),
}

impl Wrapper<'_> {
    fn new_line(&mut self) {
        let mut spans: Vec<Span<'static>> = Vec::with_capacity(self.cur.len());
        for seg in self.cur.drain(..) {
            let (text, style) = match seg {
                Seg::Slice(a, b, style) => (&self.inline.text[a..b], style),
                Seg::Space(style) => (" ", style),
            };
            push_str_span(&mut spans, text, style);
        }
        self.lines.push(spans);
        self.cur_w = 0;
    }

    /// Adds one space before the next word; when the text already has a
    /// single space there in the same style, the slices simply join.
    fn space(&mut self, style: Style, next: usize) {
        if let Some(Seg::Slice(_, end, s)) = self.cur.last_mut()
            && *s == style
            && *end + 1 == next
            && self.inline.text.as_bytes().get(*end) == Some(&b' ')
        {
            *end = next;
            return;
        }
        self.cur.push(Seg::Space(style));
    }

    fn push_seg(&mut self, a: usize, b: usize, style: Style) {
        if let Some(Seg::Slice(_, end, s)) = self.cur.last_mut()
            && *end == a
            && *s == style
        {
            *end = b;
            return;
        }
        self.cur.push(Seg::Slice(a, b, style));
    }

    /// Appends `text[a..b]` in the styles of the runs covering it.
    fn slice(&mut self, mut a: usize, b: usize) {
        let runs = &self.inline.runs;
        while a < b {
            while self.run + 1 < runs.len() && runs[self.run].end <= a {
                self.run += 1;
            }
            let Some(run) = runs.get(self.run) else {
                return;
            };
            // Past the last run (never expected) the rest takes its style.
            let e = if run.end > a { b.min(run.end) } else { b };
            let style = run.style;
            self.push_seg(a, e, style);
            a = e;
        }
    }

    /// Places a finished word (if any) on the current or a new line.
    fn place(&mut self, word: &mut Word) {
        if !word.active {
            return;
        }
        word.active = false;
        let (a, b, width) = (word.start, word.end, word.width);
        let space_before = word
            .space
            .and_then(|i| self.inline.runs.get(i))
            .map(|r| r.style);
        let avail = self.avail;
        let sep = usize::from(self.started && space_before.is_some());
        if self.cur_w + sep + width <= avail {
            if sep == 1
                && let Some(s) = space_before
            {
                self.space(s, a);
            }
            self.cur_w += sep + width;
            self.started = true;
            self.slice(a, b);
            return;
        }
        if self.started {
            self.new_line();
        }
        self.started = true;
        if width <= avail {
            self.cur_w = width;
            self.slice(a, b);
            return;
        }
        // Longer than a whole line: break it by columns.
        let mut counter = WidthCounter::new();
        let mut piece = a;
        let text = &self.inline.text[a..b];
        for (i, c) in text.char_indices() {
            let cw = counter.next(c);
            if cw > avail {
                // Can never fit (a wide character in one column): dropped.
                self.slice(piece, a + i);
                piece = a + i + c.len_utf8();
                continue;
            }
            if self.cur_w + cw > avail {
                self.slice(piece, a + i);
                self.new_line();
                piece = a + i;
            }
            self.cur_w += cw;
        }
        self.slice(piece, b);
    }
}
