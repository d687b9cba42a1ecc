//! One entry of the log and how it is drawn: prompts, replies (markdown),
//! notices, tool rows with their outcome, and confirmation previews.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::protocol::{CallId, PreviewKind, PreviewLine, ReplyEnd, Severity, ToolStatus};
use crate::safe_text::strip_controls;

use super::markdown;
use super::theme::Theme;
use super::width::str_width;
use super::wrap::wrap_plain;

/// The most rows an entry other than a preview takes on screen: its first
/// and last halves, with a line saying how many between are not shown.
/// A row costs far more memory than the text it shows (a 4 MiB reply of
/// short lines is two million rows).
pub const ENTRY_ROWS_MAX: usize = 10_000;

/// How a call ended and an excerpt of its output.
pub type CallOutcome = (ToolStatus, String);

/// What kind of entry it is, with what only that kind has.
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
    /// A tool call (the text is its argument summary) and, once it ended,
    /// its outcome.
    Tool {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The tool's name.
        name: String,
        /// How it ended and an excerpt of its output.
        outcome: Option<CallOutcome>,
    },
    /// What a call waiting for confirmation will do and, once it ended,
    /// its outcome: the result is read under what the person decided on,
    /// not on the call's row above it.
    Preview {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// What it will do.
        preview: Vec<PreviewLine>,
        /// How it ended and an excerpt of its output.
        outcome: Option<CallOutcome>,
    },
}

impl EntryKind {
    /// The kind with every string it carries [`clean`]ed.
    fn cleaned(self) -> Self {
        match self {
            EntryKind::Assistant { reasoning, end } => EntryKind::Assistant {
                reasoning: clean(reasoning),
                end,
            },
            EntryKind::Tool { id, name, outcome } => EntryKind::Tool {
                id,
                name: clean(name),
                outcome: outcome.map(clean_outcome),
            },
            EntryKind::Preview {
                id,
                preview,
                outcome,
            } => EntryKind::Preview {
                id,
                preview: preview
                    .into_iter()
                    .map(|line| PreviewLine {
                        kind: line.kind,
                        text: clean(line.text),
                    })
                    .collect(),
                outcome: outcome.map(clean_outcome),
            },
            EntryKind::User | EntryKind::System(_) => self,
        }
    }
}

/// `text` as the log keeps it: without control characters, which would
/// reach the terminal through the transcript printed on exit and the
/// clipboard (ratatui drops them from frames, ADR 0002). Reuses `text` when
/// it is already clean.
pub(super) fn clean(text: String) -> String {
    match strip_controls(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(stripped) => stripped,
    }
}

/// A call's status and excerpt with their words [`clean`]ed.
pub(super) fn clean_outcome((status, excerpt): CallOutcome) -> CallOutcome {
    (clean_status(status), clean(excerpt))
}

/// A call's status with its words [`clean`]ed.
pub(super) fn clean_status(status: ToolStatus) -> ToolStatus {
    match status {
        ToolStatus::Error(e) => ToolStatus::Error(clean(e)),
        ToolStatus::TimedOut(e) => ToolStatus::TimedOut(clean(e)),
        ToolStatus::Empty(note) => ToolStatus::Empty(clean(note)),
        ToolStatus::Warning(note) => ToolStatus::Warning(clean(note)),
        ToolStatus::Ok | ToolStatus::Rejected | ToolStatus::Cancelled => status,
    }
}

/// One entry of the log with its lines wrapped for the current width.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Who or what it came from, which decides how it is styled and
    /// whether its text is rendered as markdown.
    pub kind: EntryKind,
    /// Its text: markdown for replies, plain otherwise.
    pub text: String,
    pub(super) lines: Vec<Line<'static>>,
    pub(super) dirty: bool,
    /// A running command's latest lines, shown under its row or preview
    /// until the outcome replaces them (bounded by the runner).
    pub(super) live: String,
    /// Its text's bytes when it was last wrapped, as the log's byte total
    /// counts it.
    pub(super) counted: usize,
}

impl Entry {
    /// A new entry, not yet wrapped. Every string it holds is stored
    /// without control characters ([`clean`]).
    pub fn new(kind: EntryKind, text: String) -> Self {
        Self {
            kind: kind.cleaned(),
            text: clean(text),
            lines: Vec::new(),
            dirty: true,
            live: String::new(),
            counted: 0,
        }
    }

    /// The bytes of text it holds, all kinds' strings together: what the
    /// log's byte bound counts.
    fn text_bytes(&self) -> usize {
        let own = match &self.kind {
            EntryKind::Assistant { reasoning, .. } => reasoning.len(),
            EntryKind::Tool { name, outcome, .. } => name.len() + excerpt_bytes(outcome),
            EntryKind::Preview {
                preview, outcome, ..
            } => preview.iter().map(|l| l.text.len()).sum::<usize>() + excerpt_bytes(outcome),
            EntryKind::User | EntryKind::System(_) => 0,
        };
        self.text.len() + own
    }

    /// The outcome of call `call`, when this is its row or its preview.
    pub(super) fn outcome_of(&mut self, call: &CallId) -> Option<&mut Option<CallOutcome>> {
        match &mut self.kind {
            EntryKind::Tool { id, outcome, .. } | EntryKind::Preview { id, outcome, .. }
                if id == call =>
            {
                Some(outcome)
            }
            _ => None,
        }
    }

    /// Whether this is a reply that is still streaming.
    pub fn is_open_reply(&self) -> bool {
        matches!(self.kind, EntryKind::Assistant { end: None, .. })
    }

    /// Wraps it at `width`, and counts its bytes anew; the rows and bytes
    /// it was counted at before, for the log's totals.
    pub(super) fn wrap(&mut self, width: u16, theme: &Theme) -> (usize, usize) {
        let before = (self.lines.len(), self.counted);
        self.lines = self.render(width, theme);
        self.dirty = false;
        self.counted = self.text_bytes();
        before
    }

    /// The entry's lines at `width`, ending with a blank separator line.
    fn render(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (mut lines, outcome) = match &self.kind {
            EntryKind::User => (
                prefixed(&self.text, width, "› ", theme.user, theme.text),
                None,
            ),
            EntryKind::System(Severity::Notice) => (
                prefixed(&self.text, width, "· ", theme.dim, theme.dim),
                None,
            ),
            EntryKind::System(Severity::Error) => (
                prefixed(&self.text, width, "! ", theme.error, theme.error),
                None,
            ),
            EntryKind::Assistant { reasoning, end } => {
                (reply(&self.text, reasoning, *end, width, theme), None)
            }
            EntryKind::Tool { name, outcome, .. } => (
                prefixed(
                    &format!("{name} {}", self.text),
                    width,
                    "⚙ ",
                    theme.accent,
                    theme.dim,
                ),
                outcome.as_ref(),
            ),
            EntryKind::Preview {
                preview, outcome, ..
            } => (preview_lines(preview, width, theme), outcome.as_ref()),
        };
        match outcome {
            Some((status, excerpt)) => lines.extend(outcome_lines(status, excerpt, width, theme)),
            None if !self.live.is_empty() => {
                lines.extend(prefixed(&self.live, width, "    ", theme.dim, theme.dim));
            }
            None => {}
        }
        // A preview is shown whole: `y` waits until every row was seen.
        if !matches!(self.kind, EntryKind::Preview { .. }) && lines.len() > ENTRY_ROWS_MAX {
            let hidden = lines.len() - ENTRY_ROWS_MAX + 1;
            let tail = lines.split_off(lines.len() - ENTRY_ROWS_MAX / 2);
            lines.truncate(ENTRY_ROWS_MAX / 2 - 1);
            lines.push(Line::styled(
                format!("… {hidden} more lines, not shown here"),
                theme.dim,
            ));
            lines.extend(tail);
        }
        lines.push(Line::default());
        lines
    }
}

/// The bytes of an outcome's excerpt, none before it ended.
fn excerpt_bytes(outcome: &Option<CallOutcome>) -> usize {
    outcome.as_ref().map_or(0, |(_, excerpt)| excerpt.len())
}

fn reply(
    text: &str,
    reasoning: &str,
    end: Option<ReplyEnd>,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = wrap_plain(reasoning.trim_end(), width)
        .into_iter()
        .filter(|_| !reasoning.is_empty())
        .map(|l| Line::styled(l, theme.dim))
        .collect();
    let body = if end.is_none() {
        markdown::render_streaming(text, width, theme)
    } else {
        markdown::render(text, width, theme)
    };
    lines.extend(body.lines);
    match end {
        Some(ReplyEnd::Interrupted) => lines.push(Line::styled("[interrupted]", theme.dim)),
        Some(ReplyEnd::Failed) if !text.is_empty() => {
            lines.push(Line::styled("[cut off]", theme.dim));
        }
        _ => {}
    }
    lines
}

/// Wraps `text` under a prefix, continuation lines indented to match.
fn prefixed(
    text: &str,
    width: u16,
    prefix: &'static str,
    prefix_style: Style,
    style: Style,
) -> Vec<Line<'static>> {
    let lead_width = str_width(prefix);
    let inner = width.saturating_sub(lead_width as u16).max(1);
    let indent = " ".repeat(lead_width);
    wrap_plain(text, inner)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                Span::styled(prefix, prefix_style)
            } else {
                Span::styled(indent.clone(), prefix_style)
            };
            Line::from(vec![lead, Span::styled(l, style)])
        })
        .collect()
}

/// How a call ended, in the words of its outcome row.
pub(super) fn status_label(status: &ToolStatus) -> String {
    match status {
        ToolStatus::Ok => ToolStatus::ok_words(None),
        ToolStatus::Empty(note) | ToolStatus::Warning(note) => ToolStatus::ok_words(Some(note)),
        ToolStatus::Error(e) => format!("error: {e}"),
        ToolStatus::Rejected => "rejected".to_string(),
        ToolStatus::Cancelled => "cancelled".to_string(),
        ToolStatus::TimedOut(e) => e.clone(),
    }
}

fn outcome_lines(
    status: &ToolStatus,
    excerpt: &str,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let style = match status {
        ToolStatus::Error(_) | ToolStatus::TimedOut(_) => theme.error,
        ToolStatus::Warning(_) => theme.accent,
        ToolStatus::Ok | ToolStatus::Empty(_) | ToolStatus::Rejected | ToolStatus::Cancelled => {
            theme.dim
        }
    };
    let label = format!("→ {}", status_label(status));
    let mut lines = prefixed(&label, width, "  ", style, style);
    if !excerpt.is_empty() {
        // Tool output is verbatim file or process content: plain and dim,
        // never markdown, which would misrepresent it.
        lines.extend(prefixed(excerpt, width, "    ", theme.dim, theme.dim));
    }
    lines
}

fn preview_lines(preview: &[PreviewLine], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for line in preview {
        let (lead, style) = match line.kind {
            PreviewKind::Header => ("  ", theme.accent),
            PreviewKind::Context => ("   ", theme.dim),
            PreviewKind::Added => (" + ", theme.inline_code),
            PreviewKind::Removed => (" - ", theme.dim),
            PreviewKind::Marker => ("   ", theme.dim),
        };
        let inner = width.saturating_sub(3).max(1);
        for (i, part) in wrap_plain(&line.text, inner).into_iter().enumerate() {
            let lead = if i == 0 { lead } else { "   " };
            lines.push(Line::from(vec![
                Span::styled(lead, style),
                Span::styled(part, style),
            ]));
        }
    }
    lines
}
