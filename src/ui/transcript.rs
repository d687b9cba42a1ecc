//! The log: the transcript's entries, each with its wrapped lines cached for
//! the current width, and the scroll position. A frame costs the visible
//! lines plus the entry that changed, never the whole transcript.

use ratatui::text::{Line, Span};

use crate::protocol::{ReplyEnd, Severity};

use super::markdown;
use super::theme::Theme;
use super::wrap::wrap_plain;

/// What kind of entry a transcript line belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// The person's prompt.
    User,
    /// A model reply, with its reasoning and how it ended.
    Assistant {
        /// Reasoning text, shown dimmed above the reply.
        reasoning: String,
        /// `None` while it streams.
        end: Option<ReplyEnd>,
    },
    /// A notice or an error.
    System(Severity),
}

/// One entry of the log.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its kind.
    pub kind: EntryKind,
    /// Its text (markdown for replies, plain otherwise).
    pub text: String,
    lines: Vec<Line<'static>>,
    dirty: bool,
}

impl Entry {
    fn new(kind: EntryKind, text: String) -> Self {
        Self {
            kind,
            text,
            lines: Vec::new(),
            dirty: true,
        }
    }

    /// Whether this is a reply that is still streaming.
    pub fn is_open_reply(&self) -> bool {
        matches!(self.kind, EntryKind::Assistant { end: None, .. })
    }

    fn render(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = match &self.kind {
            EntryKind::User => prefixed(&self.text, width, "› ", theme.user, theme.text),
            EntryKind::System(Severity::Notice) => {
                prefixed(&self.text, width, "· ", theme.dim, theme.dim)
            }
            EntryKind::System(Severity::Error) => {
                prefixed(&self.text, width, "! ", theme.error, theme.error)
            }
            EntryKind::Assistant { reasoning, end } => {
                let mut lines = Vec::new();
                if !reasoning.is_empty() {
                    lines.extend(
                        wrap_plain(reasoning.trim_end(), width)
                            .into_iter()
                            .map(|l| Line::styled(l, theme.dim)),
                    );
                }
                let body = if end.is_none() {
                    markdown::render_streaming(&self.text, width, theme)
                } else {
                    markdown::render(&self.text, width, theme)
                };
                lines.extend(body.lines);
                match end {
                    Some(ReplyEnd::Interrupted) => {
                        lines.push(Line::styled("[interrupted]", theme.dim));
                    }
                    Some(ReplyEnd::Failed) if self.text.is_empty() => {}
                    Some(ReplyEnd::Failed) => lines.push(Line::styled("[cut off]", theme.dim)),
                    _ => {}
                }
                lines
            }
        };
        lines.push(Line::default());
        lines
    }
}

/// Wraps `text` under a two-column prefix, continuation lines indented.
fn prefixed(
    text: &str,
    width: u16,
    prefix: &'static str,
    prefix_style: ratatui::style::Style,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(2).max(1);
    wrap_plain(text, inner)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 { prefix } else { "  " };
            Line::from(vec![
                Span::styled(lead, prefix_style),
                Span::styled(l, style),
            ])
        })
        .collect()
}

/// The transcript and its viewport.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    width: u16,
    total_lines: usize,
    /// Lines hidden below the viewport; 0 means following the bottom.
    scroll: usize,
    /// Height of the viewport at the last frame.
    height: usize,
}

impl Transcript {
    /// The entries, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Adds an entry at the bottom.
    pub fn push(&mut self, kind: EntryKind, text: String) {
        self.entries.push(Entry::new(kind, text));
    }

    /// The reply that is streaming, opening one if there is none.
    fn open_reply(&mut self) -> &mut Entry {
        if !self.entries.last().is_some_and(Entry::is_open_reply) {
            self.push(
                EntryKind::Assistant {
                    reasoning: String::new(),
                    end: None,
                },
                String::new(),
            );
        }
        let last = self.entries.len() - 1;
        let entry = &mut self.entries[last];
        entry.dirty = true;
        entry
    }

    /// Appends reply text to the open reply.
    pub fn append_reply(&mut self, text: &str) {
        self.open_reply().text.push_str(text);
    }

    /// Appends reasoning text to the open reply.
    pub fn append_reasoning(&mut self, text: &str) {
        if let EntryKind::Assistant { reasoning, .. } = &mut self.open_reply().kind {
            reasoning.push_str(text);
        }
    }

    /// Closes the open reply, if any.
    pub fn end_reply(&mut self, how: ReplyEnd) {
        if self.entries.last().is_some_and(Entry::is_open_reply)
            && let EntryKind::Assistant { end, .. } = &mut self.open_reply().kind
        {
            *end = Some(how);
        }
    }

    /// Re-wraps what changed for `width`; call before drawing. Keeps the
    /// view still when the person has scrolled up and lines arrive below.
    pub fn prepare(&mut self, width: u16, height: u16, theme: &Theme) {
        self.height = height as usize;
        let resized = width != self.width;
        if resized {
            self.width = width;
            for entry in &mut self.entries {
                entry.dirty = true;
            }
        }
        let before = self.total_lines;
        for entry in self.entries.iter_mut().rev() {
            // Only the bottom entries change between frames (a width change
            // marks them all), so the first clean one ends the walk.
            if !entry.dirty {
                break;
            }
            let lines = entry.render(width, theme);
            self.total_lines = self.total_lines - entry.lines.len() + lines.len();
            entry.lines = lines;
            entry.dirty = false;
        }
        if !resized && self.scroll > 0 {
            self.scroll += self.total_lines.saturating_sub(before);
        }
        self.scroll = self.scroll.min(self.max_scroll());
    }

    fn max_scroll(&self) -> usize {
        self.total_lines.saturating_sub(self.height)
    }

    /// Lines in the transcript at the current width.
    pub fn total_lines(&self) -> usize {
        self.total_lines
    }

    /// Whether the view follows the bottom.
    pub fn is_following(&self) -> bool {
        self.scroll == 0
    }

    /// Scrolls up by `n` lines (towards older entries).
    pub fn scroll_up(&mut self, n: usize) {
        self.scroll = (self.scroll + n).min(self.max_scroll());
    }

    /// Scrolls down by `n` lines; reaching the bottom resumes following.
    pub fn scroll_down(&mut self, n: usize) {
        self.scroll = self.scroll.saturating_sub(n);
    }

    /// Jumps to the first line.
    pub fn scroll_to_top(&mut self) {
        self.scroll = self.max_scroll();
    }

    /// Jumps to the bottom and follows it again.
    pub fn follow(&mut self) {
        self.scroll = 0;
    }

    /// The lines in the viewport, top to bottom: walks the entries from the
    /// bottom, so the cost is the visible lines plus the skipped ones'
    /// entry count.
    pub fn visible(&self, height: usize) -> Vec<&Line<'static>> {
        let mut skip = self.scroll;
        let mut out: Vec<&Line<'static>> = Vec::with_capacity(height);
        for entry in self.entries.iter().rev() {
            let lines = &entry.lines;
            if skip >= lines.len() {
                skip -= lines.len();
                continue;
            }
            let end = lines.len() - skip;
            skip = 0;
            let want = height - out.len();
            let start = end.saturating_sub(want);
            out.extend(lines[start..end].iter().rev());
            if out.len() >= height {
                break;
            }
        }
        out.reverse();
        out
    }

    /// The last finished or streaming reply's text.
    pub fn last_reply(&self) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EntryKind::Assistant { .. }) && !e.text.is_empty())
            .map(|e| e.text.as_str())
    }

    /// The transcript as plain text, for the terminal's scrollback on exit.
    pub fn plain_text(&self) -> String {
        let mut out = String::new();
        for entry in &self.entries {
            let lead = match &entry.kind {
                EntryKind::User => "› ",
                EntryKind::Assistant { .. } => "",
                EntryKind::System(Severity::Notice) => "· ",
                EntryKind::System(Severity::Error) => "! ",
            };
            out.push_str(lead);
            out.push_str(entry.text.trim_end());
            if let EntryKind::Assistant {
                end: Some(ReplyEnd::Interrupted),
                ..
            } = entry.kind
            {
                out.push_str("\n[interrupted]");
            }
            out.push_str("\n\n");
        }
        out
    }
}
