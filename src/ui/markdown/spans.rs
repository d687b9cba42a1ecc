//! Small helpers for building styled spans and cutting text to a number of
//! display columns.

use ratatui::style::Style;
use ratatui::text::Span;

use crate::ui::width::prefix_fitting;

/// Appends `text` to `spans`, merging with the last span when styles match.
pub(super) fn push_span(spans: &mut Vec<Span<'static>>, text: String, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(&text);
        return;
    }
    spans.push(Span::styled(text, style));
}

/// Appends `text` to `spans`, merging with the last span when styles match.
pub(super) fn push_str_span(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    spans.push(Span::styled(text.to_owned(), style));
}

/// The longest start of `s` that fits in `w` columns, cut between
/// clusters.
pub(super) fn truncate_to(s: &str, w: usize) -> String {
    prefix_fitting(s, w).to_owned()
}
