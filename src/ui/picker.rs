//! The session picker drawn over the log (`--resume` without an id,
//! `/resume` without one): the saved sessions the agent listed, newest
//! first, with title, directory, age and size; ↑/↓ choose, Enter resumes,
//! Esc closes it and the session open goes on. It holds what the agent
//! sent; it reads no file.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::protocol::SessionSummary;

use super::entry::clean;
use super::keys;
use super::theme::Theme;
use super::width::str_width;

/// The most columns a title takes in the picker; the directory follows.
pub const PICKER_TITLE_COLUMNS: usize = 48;

/// The picker's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// The sessions, newest first, their texts without control characters.
    sessions: Vec<SessionSummary>,
    /// The row chosen.
    selected: usize,
    /// When the list arrived, in seconds since the Unix epoch: ages are
    /// told from it.
    now: u64,
}

impl Picker {
    /// A picker over `sessions` (not empty), the newest chosen, ages told
    /// relative to `now`.
    pub fn new(sessions: Vec<SessionSummary>, now: u64) -> Self {
        let sessions = sessions
            .into_iter()
            .map(|s| SessionSummary {
                title: clean(s.title),
                directory: clean(s.directory),
                ..s
            })
            .collect();
        Self {
            sessions,
            selected: 0,
            now,
        }
    }

    /// Moves the choice up one row.
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// Moves the choice down one row.
    pub fn down(&mut self) {
        if self.selected + 1 < self.sessions.len() {
            self.selected += 1;
        }
    }

    /// The id of the session chosen.
    pub fn chosen(&self) -> Option<&str> {
        self.sessions.get(self.selected).map(|s| s.id.as_str())
    }

    /// Draws the picker over `area` (the log).
    pub fn draw(&self, theme: &Theme, frame: &mut Frame, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(" Resume a session ", theme.accent))
            .title_bottom(Span::styled(
                format!(" {} ", keys::PICKER.join(" · ")),
                theme.dim,
            ));
        let inner = block.inner(area);
        let rows = usize::from(inner.height).max(1);
        // The chosen row stays in view: the list scrolls by pages of rows.
        let first = self.selected / rows * rows;
        let lines: Vec<Line> = self
            .sessions
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, s)| {
                let text = format!(
                    "{} {:>9}  {:>8}  {}  {}",
                    if i == self.selected { "›" } else { " " },
                    age(self.now, s.updated),
                    size(s.bytes),
                    pad(&s.title, PICKER_TITLE_COLUMNS),
                    s.directory
                );
                if i == self.selected {
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

/// `text` cut (with `…`) or padded to exactly `columns` columns.
fn pad(text: &str, columns: usize) -> String {
    let mut out = String::new();
    let mut width = 0;
    if str_width(text) <= columns {
        out.push_str(text);
        width = str_width(text);
    } else {
        for c in text.chars() {
            let w = str_width(c.encode_utf8(&mut [0; 4]));
            if width + w + 1 > columns {
                break;
            }
            out.push(c);
            width += w;
        }
        out.push('…');
        width += 1;
    }
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
