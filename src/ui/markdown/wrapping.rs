//! A block's inline content, word-wrapped by the UI's one wrapper
//! (`ui::wrap`) into styled lines.

use std::ops::Range;

use ratatui::text::Span;

use super::inline::{Inline, Run, RunKind};
use super::spans::push_str_span;
use crate::ui::wrap::{Rows, Spacing, Wrapper};

/// Wraps inline content into lines of at most `avail` columns: whitespace
/// collapses to one space, inline code stays whole when it fits, a hard
/// break ends a line.
pub(super) fn wrap_inline(inline: &Inline, avail: usize) -> Vec<Vec<Span<'static>>> {
    let rows = StyledRows {
        inline,
        run: 0,
        lines: Vec::new(),
        line: Vec::new(),
    };
    let mut wrapper = Wrapper::new(&inline.text, avail, Spacing::Collapse, rows);
    for run in &inline.runs {
        match run.kind {
            RunKind::Text => wrapper.text(run.start..run.end),
            RunKind::Atomic => wrapper.glued(run.start..run.end),
            RunKind::Break => wrapper.hard_break(),
        }
    }
    wrapper.finish().lines
}

/// The wrapper's rows as spans in the styles of the runs they come from.
struct StyledRows<'a> {
    inline: &'a Inline,
    /// Index of the run the next stretch starts in (stretches only move
    /// forward).
    run: usize,
    lines: Vec<Vec<Span<'static>>>,
    line: Vec<Span<'static>>,
}

impl StyledRows<'_> {
    /// The run holding byte `at`, moving forward from the last one found;
    /// past the last run (never expected) the last run.
    fn run_at(&mut self, at: usize) -> Option<&Run> {
        let runs = &self.inline.runs;
        while self.run + 1 < runs.len() && runs[self.run].end <= at {
            self.run += 1;
        }
        runs.get(self.run)
    }
}

impl Rows for StyledRows<'_> {
    fn text(&mut self, range: Range<usize>) {
        let Range { mut start, end } = range;
        while start < end {
            let Some(run) = self.run_at(start) else {
                return;
            };
            let stop = if run.end > start {
                end.min(run.end)
            } else {
                end
            };
            let style = run.style;
            push_str_span(&mut self.line, &self.inline.text[start..stop], style);
            start = stop;
        }
    }

    fn space(&mut self, at: usize) {
        if let Some(run) = self.run_at(at) {
            let style = run.style;
            push_str_span(&mut self.line, " ", style);
        }
    }

    fn end(&mut self) {
        self.lines.push(std::mem::take(&mut self.line));
    }
}
