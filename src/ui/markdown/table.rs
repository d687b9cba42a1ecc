//! Tables: collecting cells, choosing column widths that fit, and fitting
//! or truncating each cell to its column.

use pulldown_cmark::Alignment;
use ratatui::style::Style;
use ratatui::text::Span;

use super::inline::{Inline, RunKind};
use super::renderer::Renderer;
use super::spans::{push_span, truncate_to};
use crate::ui::width::str_width;

/// A table being collected.
pub(super) struct Table {
    pub(super) alignments: Vec<Alignment>,
    pub(super) rows: Vec<Vec<Vec<(String, Style)>>>,
    /// Number of header rows (0 or 1) at the top of `rows`.
    pub(super) header_rows: usize,
}

impl Renderer<'_> {
    pub(super) fn emit_table(&mut self, table: &Table) {
        let avail = self.avail();
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let cell_width =
            |cell: &Vec<(String, Style)>| -> usize { cell.iter().map(|(t, _)| str_width(t)).sum() };
        let mut widths = vec![1usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_width(cell).min(avail));
            }
        }
        let sep = 3;
        let total = |w: &[usize]| w.iter().sum::<usize>() + sep * (w.len() - 1);
        // Shrink the widest column until the table fits (or all are 1 wide).
        let mut excess = total(&widths).saturating_sub(avail);
        while excess > 0 {
            let (i, &max) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .unwrap_or((0, &1));
            if max <= 1 {
                break;
            }
            let second = widths
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| *w)
                .max()
                .unwrap_or(1)
                .max(1);
            let cut = excess.min(max - second.min(max - 1)).max(1);
            widths[i] = max - cut;
            excess -= cut;
        }
        let dim = self.theme.dim;
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, &w) in widths.iter().enumerate() {
                if i > 0 {
                    push_span(&mut spans, " │ ".to_owned(), dim);
                }
                let empty = Vec::new();
                let cell = row.get(i).unwrap_or(&empty);
                let align = table.alignments.get(i).copied().unwrap_or(Alignment::None);
                fit_cell(&mut spans, cell, w, align, self.theme.text);
            }
            let spans = truncate_spans(spans, avail);
            self.emit(spans);
            if r + 1 == table.header_rows {
                let rule = widths
                    .iter()
                    .map(|w| "─".repeat(*w))
                    .collect::<Vec<_>>()
                    .join("─┼─");
                let rule = truncate_to(&rule, avail);
                self.emit(vec![Span::styled(rule, dim)]);
            }
        }
    }
}

/// Inline content flattened to styled text (table cells don't wrap).
pub(super) fn inline_pieces(inline: &Inline) -> Vec<(String, Style)> {
    inline
        .runs
        .iter()
        .map(|run| {
            let text = &inline.text[run.start..run.end];
            let clean: String = if run.kind == RunKind::Break {
                " ".to_owned()
            } else {
                text.chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c })
                    .collect()
            };
            (clean, run.style)
        })
        .collect()
}

/// Writes one table cell exactly `w` columns wide: truncated with `…` when
/// longer, padded by its alignment when shorter.
fn fit_cell(
    spans: &mut Vec<Span<'static>>,
    cell: &[(String, Style)],
    w: usize,
    align: Alignment,
    pad_style: Style,
) {
    let full: usize = cell.iter().map(|(t, _)| str_width(t)).sum();
    let mut content: Vec<Span<'static>> = Vec::new();
    let used = if full <= w {
        for (t, s) in cell {
            push_span(&mut content, t.clone(), *s);
        }
        full
    } else {
        let mut budget = w.saturating_sub(1);
        let mut used = 0;
        let mut last_style = pad_style;
        for (t, s) in cell {
            let part = truncate_to(t, budget);
            let pw = str_width(&part);
            budget -= pw;
            used += pw;
            last_style = *s;
            push_span(&mut content, part, *s);
            if budget == 0 {
                break;
            }
        }
        push_span(&mut content, "…".to_owned(), last_style);
        used + 1
    };
    let pad = w.saturating_sub(used);
    let (left, right) = match align {
        Alignment::Right => (pad, 0),
        Alignment::Center => (pad / 2, pad - pad / 2),
        Alignment::Left | Alignment::None => (0, pad),
    };
    push_span(spans, " ".repeat(left), pad_style);
    for s in content {
        let style = s.style;
        push_span(spans, s.content.into_owned(), style);
    }
    push_span(spans, " ".repeat(right), pad_style);
}

/// Cuts a line of spans to at most `w` columns.
fn truncate_spans(spans: Vec<Span<'static>>, w: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut budget = w;
    for s in spans {
        let sw = str_width(&s.content);
        if sw <= budget {
            budget -= sw;
            out.push(s);
        } else {
            let part = truncate_to(&s.content, budget);
            if !part.is_empty() {
                out.push(Span::styled(part, s.style));
            }
            break;
        }
    }
    out
}
