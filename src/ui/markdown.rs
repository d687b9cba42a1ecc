//! STUB until the widgets branch lands.
use ratatui::text::Line;

use super::theme::Theme;

/// Rendered message.
pub struct Rendered {
    /// Lines.
    pub lines: Vec<Line<'static>>,
}
/// Render.
pub fn render(text: &str, width: u16, _theme: &Theme) -> Rendered {
    Rendered {
        lines: textwrap::wrap(text, width.max(1) as usize)
            .into_iter()
            .map(|l| Line::raw(l.into_owned()))
            .collect(),
    }
}
/// Render streaming.
pub fn render_streaming(text: &str, width: u16, theme: &Theme) -> Rendered {
    render(text, width, theme)
}
/// Code blocks.
pub fn code_blocks(_text: &str) -> Vec<String> {
    Vec::new()
}
