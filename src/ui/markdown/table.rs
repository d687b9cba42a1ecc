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

/// Narrows `widths` until the table, with `sep` columns between cells,
/// fits `avail` (or every column is 1 wide): the widest columns are cut to
/// a common width, the largest that fits, and the last of them one column
/// further until the table fits exactly. In O(columns × log width): a
/// streamed header of thousands of columns is laid out on every frame.
fn fit_widths(widths: &mut [usize], avail: usize, sep: usize) {
    let total = |widths: &[usize], cap: usize| {
        widths.iter().map(|w| (*w).min(cap)).sum::<usize>() + sep * (widths.len() - 1)
    };
    let widest = widths.iter().copied().max().unwrap_or(1);
    if total(widths, widest) <= avail {
        return;
    }
    if total(widths, 1) > avail {
        widths.fill(1);
        return;
    }
    // `fits` fits and `over` does not.
    let (mut fits, mut over) = (1, widest);
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        if total(widths, mid) <= avail {
            fits = mid;
        } else {
            over = mid;
        }
    }
    let mut excess = total(widths, over) - avail;
    for w in widths.iter_mut() {
        *w = (*w).min(over);
    }
    for w in widths.iter_mut().rev() {
        if excess == 0 {
            break;
        }
        if *w == over {
            *w -= 1;
            excess -= 1;
        }
    }
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
        fit_widths(&mut widths, avail, 3);
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
            let cut = part.len() < t.len();
            budget -= pw;
            used += pw;
            last_style = *s;
            push_span(&mut content, part, *s);
            // A part cut short (a wide character that did not fit) ends
            // the cell: what follows it must not seem to come next.
            if budget == 0 || cut {
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

#[cfg(test)]
mod tests {
    use super::fit_widths;

    fn fitted(mut widths: Vec<usize>, avail: usize) -> Vec<usize> {
        fit_widths(&mut widths, avail, 3);
        widths
    }

    #[test]
    fn a_table_that_fits_keeps_its_widths() {
        assert_eq!(fitted(vec![4, 9, 2], 21), [4, 9, 2]);
    }

    #[test]
    fn the_widest_columns_are_cut_to_a_common_width_the_last_one_further() {
        assert_eq!(fitted(vec![10, 5], 15), [7, 5]);
        assert_eq!(fitted(vec![10, 10, 3], 20), [6, 5, 3]);
        assert_eq!(fitted(vec![3, 30, 12, 30], 40), [3, 10, 9, 9]);
    }

    #[test]
    fn columns_that_cannot_fit_are_one_wide() {
        assert_eq!(fitted(vec![5; 30], 80), [1; 30]);
        let many = fitted(vec![2; 100_000], 80);
        assert!(many.iter().all(|w| *w == 1));
    }
}
