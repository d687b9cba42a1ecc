//! The picker drawn over the log: the saved sessions to resume
//! (`--resume` without an id, `/resume` without one), newest first, with
//! title, directory, age and size; or the conversation's prompts to rewind
//! to (`/rewind`, Esc Esc), newest first. ↑/↓ choose, Enter takes the
//! choice, Esc closes it and the session goes on. It holds what the agent
//! sent; it reads no file.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::protocol::SessionSummary;

use super::entry::clean;
use super::keys;
use super::theme::Theme;
use super::width::{prefix_fitting, str_width};

/// The most columns a title takes in the picker; the directory follows.
pub const PICKER_TITLE_COLUMNS: usize = 48;

/// What a row of the picker stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// A saved session, by id.
    Session(String),
    /// A prompt of the conversation, by its index (0-based, oldest first).
    Prompt(usize),
}

/// The picker's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// Its title.
    title: &'static str,
    /// The keys it takes, for its bottom border and the help line.
    keys: &'static [&'static str],
    /// Each row's text (without control characters) and what it stands
    /// for, in the order shown.
    rows: Vec<(String, Choice)>,
    /// The row chosen.
    selected: usize,
}

impl Picker {
    /// A picker over `sessions` (not empty), newest first, the newest
    /// chosen, ages told relative to `now` (seconds since the Unix epoch).
    pub fn sessions(sessions: Vec<SessionSummary>, now: u64) -> Self {
        let rows = sessions
            .into_iter()
            .map(|s| {
                let text = format!(
                    "{:>9}  {:>8}  {}  {}",
                    age(now, s.updated),
                    size(s.bytes),
                    pad(&clean(s.title), PICKER_TITLE_COLUMNS),
                    clean(s.directory)
                );
                (text, Choice::Session(s.id))
            })
            .collect();
        Self {
            title: " Resume a session ",
            keys: keys::PICKER,
            rows,
            selected: 0,
        }
    }

    /// A picker over the conversation's `prompts` (not empty; oldest
    /// first, as the agent lists them), shown newest first, the newest
    /// chosen; each row is its number and first line.
    pub fn prompts(prompts: Vec<String>) -> Self {
        let rows = prompts
            .into_iter()
            .enumerate()
            .rev()
            .map(|(i, text)| {
                let first = text.lines().next().unwrap_or_default().to_owned();
                let more = if text.trim_end().contains('\n') {
                    " …"
                } else {
                    ""
                };
                (
                    format!("{:>3}  {}{more}", i + 1, clean(first)),
                    Choice::Prompt(i),
                )
            })
            .collect();
        Self {
            title: " Rewind to a prompt ",
            keys: keys::REWIND,
            rows,
            selected: 0,
        }
    }

    /// The keys it takes.
    pub fn keys(&self) -> &'static [&'static str] {
        self.keys
    }

    /// Moves the choice up one row.
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// Moves the choice down one row.
    pub fn down(&mut self) {
        if self.selected + 1 < self.rows.len() {
            self.selected += 1;
        }
    }

    /// What the chosen row stands for.
    pub fn chosen(&self) -> Option<&Choice> {
        self.rows.get(self.selected).map(|(_, choice)| choice)
    }

    /// Draws the picker over `area` (the log).
    pub fn draw(&self, theme: &Theme, frame: &mut Frame, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(self.title, theme.accent))
            .title_bottom(Span::styled(
                format!(" {} ", self.keys.join(" · ")),
                theme.dim,
            ));
        let inner = block.inner(area);
        let rows = usize::from(inner.height).max(1);
        // The chosen row stays in view: the list scrolls by pages of rows.
        let first = self.selected / rows * rows;
        let lines: Vec<Line> = self
            .rows
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, (text, _))| {
                let chosen = i == self.selected;
                let text = format!("{} {text}", if chosen { "›" } else { " " });
                if chosen {
                    Line::styled(text, theme.accent)
                } else {
                    Line::raw(text)
                }
            })
            .collect();
        frame.render_widget(Clear, area);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}

/// `text` cut (with `…`, between characters as shown) or padded to
/// exactly `columns` columns.
fn pad(text: &str, columns: usize) -> String {
    let whole = str_width(text);
    let (mut out, width) = if whole <= columns {
        (text.to_owned(), whole)
    } else {
        let kept = prefix_fitting(text, columns.saturating_sub(1));
        (format!("{kept}…"), str_width(kept) + 1)
    };
    out.push_str(&" ".repeat(columns.saturating_sub(width)));
    out
}

/// How long ago `then` was, at `now` (both seconds since the epoch):
/// "just now", "5 min ago", "3 h ago", "12 d ago".
pub fn age(now: u64, then: u64) -> String {
    let secs = now.saturating_sub(then);
    match secs {
        0..60 => "just now".to_string(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..86_400 => format!("{} h ago", secs / 3_600),
        _ => format!("{} d ago", secs / 86_400),
    }
}

/// A file size for people: "812 B", "12 KB", "1.4 MB".
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1_024 => format!("{bytes} B"),
        1_024..1_048_576 => format!("{} KB", bytes / 1_024),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_cut_between_characters_as_shown_and_padded_to_its_column() {
        let family = "👨\u{200D}👩\u{200D}👧";
        let title = format!("ab{family}{family}cd");
        let cut = pad(&title, 5);
        assert_eq!(cut, format!("ab{family}…"));
        assert_eq!(str_width(&cut), 5);
        assert_eq!(pad("ab", 4), "ab  ");
    }
}
