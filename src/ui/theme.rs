//! The palette: a warm, dim set of roles, and a monochrome variant for
//! `NO_COLOR`. Every style the screen uses comes from here.

use ratatui::style::{Color, Modifier, Style};

/// The styles of every role on the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Status bar background and text.
    pub header: Style,
    /// The prefix and text of the person's own messages.
    pub user: Style,
    /// Plain assistant prose.
    pub text: Style,
    /// Secondary text: reasoning, system notices, tool output, hints.
    pub dim: Style,
    /// The accent: glyphs, the spinner, the active phase.
    pub accent: Style,
    /// Markdown headings.
    pub heading: Style,
    /// Inline code and the `+` side of diffs.
    pub inline_code: Style,
    /// Fenced code blocks.
    pub code_block: Style,
    /// Link text.
    pub link: Style,
    /// Emphasis (`*x*`).
    pub emphasis: Style,
    /// Strong emphasis (`**x**`).
    pub strong: Style,
    /// Error entries.
    pub error: Style,
    /// The input box border.
    pub border: Style,
}

impl Theme {
    /// The palette for a terminal with colours, or the monochrome one when
    /// `no_color` is set (the `NO_COLOR` convention): only bold, italic,
    /// underline and dim remain.
    pub fn new(no_color: bool) -> Self {
        if no_color {
            return Self::monochrome();
        }
        let warm = Color::Rgb(230, 170, 90);
        Self {
            header: Style::new()
                .fg(Color::Rgb(220, 215, 205))
                .bg(Color::Rgb(45, 42, 40)),
            user: Style::new()
                .fg(Color::Rgb(140, 190, 230))
                .add_modifier(Modifier::BOLD),
            text: Style::new(),
            dim: Style::new().fg(Color::Rgb(135, 130, 122)),
            accent: Style::new().fg(warm),
            heading: Style::new().fg(warm).add_modifier(Modifier::BOLD),
            inline_code: Style::new().fg(Color::Rgb(170, 200, 140)),
            code_block: Style::new().fg(Color::Rgb(200, 195, 185)),
            link: Style::new()
                .fg(Color::Rgb(140, 190, 230))
                .add_modifier(Modifier::UNDERLINED),
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: Style::new().add_modifier(Modifier::BOLD),
            error: Style::new().fg(Color::Rgb(225, 110, 95)),
            border: Style::new().fg(Color::Rgb(95, 90, 85)),
        }
    }

    fn monochrome() -> Self {
        let dim = Style::new().add_modifier(Modifier::DIM);
        Self {
            header: Style::new().add_modifier(Modifier::REVERSED),
            user: Style::new().add_modifier(Modifier::BOLD),
            text: Style::new(),
            dim,
            accent: Style::new().add_modifier(Modifier::BOLD),
            heading: Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            inline_code: Style::new().add_modifier(Modifier::BOLD),
            code_block: Style::new(),
            link: Style::new().add_modifier(Modifier::UNDERLINED),
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: Style::new().add_modifier(Modifier::BOLD),
            error: Style::new().add_modifier(Modifier::BOLD),
            border: dim,
        }
    }
}
