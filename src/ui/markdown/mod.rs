//! Assistant prose → styled lines that fit a width.
//!
//! One pass over pulldown-cmark events. Inline content of a block is
//! gathered into styled fragments, then word-wrapped greedily into the
//! columns left after the block's prefix (quote bars, list markers, heading
//! marker). Code blocks are kept verbatim and only hard-broken by columns.
//! Everything is linear in the input, so the streaming message can be
//! re-rendered every frame.
//!
//! Here: the public entry points. The pieces live in `renderer` (the event
//! walker), `inline` and `wrapping` (inline content and its word wrap),
//! `code` and `table` (those blocks' layout), `spans` (span and column
//! helpers) and `streaming` (a reply still arriving).

mod code;
mod inline;
mod renderer;
mod spans;
mod streaming;
mod table;
mod wrapping;

use pulldown_cmark::Options;
use ratatui::text::Line;

use super::theme::Theme;
use renderer::Renderer;

pub use code::code_blocks;
pub use streaming::render_streaming;

/// The rendered form of one assistant message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// The lines, each at most the requested width in display columns.
    pub lines: Vec<Line<'static>>,
}

/// The markdown extensions assistants commonly use.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Renders complete markdown into lines at most `width` display columns wide.
pub fn render(text: &str, width: u16, theme: &Theme) -> Rendered {
    let mut r = Renderer::new(theme, usize::from(width));
    if width > 0 {
        r.run(text);
    }
    Rendered { lines: r.out }
}
