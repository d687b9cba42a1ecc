//! The log: the transcript's entries, each with its wrapped lines cached for
//! the current width, and the scroll position. A frame costs the visible
//! lines plus the entry that changed, never the whole transcript. Like the
//! session's log, it keeps the newest [`LOG_ITEMS_MAX`] entries and
//! [`LOG_BYTES_MAX`] bytes of text, and at most [`ROWS_MAX`] wrapped rows,
//! so a session of any length holds a bounded screen.

use std::ops::Range;

use ratatui::text::Line;

use crate::protocol::{CallId, LogItem, PreviewKind, ReplyEnd, Severity, ToolStatus};
use crate::protocol::{LOG_BYTES_MAX, LOG_ITEMS_MAX};
use crate::safe_text::strip_controls;

pub use super::entry::{Entry, EntryKind};
use super::entry::{clean, clean_outcome, status_label};
use super::theme::Theme;

/// The log entry that redraws one item of a saved session.
fn entry_of(item: LogItem) -> Entry {
    match item {
        LogItem::User(text) => Entry::new(EntryKind::User, text),
        LogItem::Assistant {
            text,
            reasoning,
            end,
        } => Entry::new(
            EntryKind::Assistant {
                reasoning,
                end: Some(end),
            },
            text,
        ),
        LogItem::Tool {
            id,
            name,
            summary,
            outcome,
        } => Entry::new(EntryKind::Tool { id, name, outcome }, summary),
        LogItem::System { severity, text } => Entry::new(EntryKind::System(severity), text),
    }
}

/// The most wrapped rows the log keeps (each entry's at most
/// [`super::entry::ENTRY_ROWS_MAX`]); older entries go first.
pub const ROWS_MAX: usize = 100_000;

/// What the top of the log says once older entries have been dropped.
pub fn dropped_notice() -> String {
    format!(
        "earlier entries are no longer shown: the log keeps the newest {LOG_ITEMS_MAX} entries, {} MiB of text and {ROWS_MAX} rows",
        LOG_BYTES_MAX / (1024 * 1024)
    )
}

/// The transcript and its viewport. An entry is known by its index: its
/// place among every entry pushed since the log was last replaced, which
/// dropping older entries does not change.
#[derive(Debug, Default)]
pub struct Transcript {
    /// The entries kept, oldest first; once any was dropped, the first is
    /// the [`dropped_notice`].
    entries: Vec<Entry>,
    /// How many entries were dropped from the front.
    dropped: usize,
    /// The bytes of text the entries held when last wrapped.
    text_bytes: usize,
    width: u16,
    total_lines: usize,
    /// Lines hidden below the viewport; 0 means following the bottom.
    scroll: usize,
    /// Height of the viewport at the last frame.
    height: usize,
    /// The first entry that may need re-wrapping; entries before it are
    /// clean, so a frame re-wraps only what changed.
    dirty_from: usize,
}

impl Transcript {
    /// The entries kept, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How many of `entries` are the [`dropped_notice`]: one once any
    /// entry was dropped, on top.
    fn notices(&self) -> usize {
        usize::from(self.dropped > 0)
    }

    /// Where the entry of `index` is in `entries`, if it is kept.
    fn position(&self, index: usize) -> Option<usize> {
        let at = index.checked_sub(self.dropped)? + self.notices();
        (at < self.entries.len()).then_some(at)
    }

    /// Adds an entry at the bottom and returns its index. Like every text
    /// the log receives, it is stored without control characters.
    pub fn push(&mut self, kind: EntryKind, text: String) -> usize {
        let index = self.dropped + self.entries.len() - self.notices();
        self.dirty_from = self.dirty_from.min(self.entries.len());
        self.entries.push(Entry::new(kind, text));
        index
    }

    /// Replaces every entry with a saved session's log, following its
    /// bottom.
    pub fn replace_with(&mut self, log: Vec<LogItem>) {
        *self = Self::default();
        self.entries = log.into_iter().map(entry_of).collect();
    }

    fn touch(&mut self, index: usize) -> &mut Entry {
        self.dirty_from = self.dirty_from.min(index);
        let entry = &mut self.entries[index];
        entry.dirty = true;
        entry
    }

    /// Puts a call's outcome under the newest of its entries: the preview
    /// the person decided on, or else its tool row (calls may finish in
    /// any order, so the entry is found by id). It replaces the lines
    /// shown while the call ran.
    pub fn set_tool_outcome(&mut self, call: &CallId, status: ToolStatus, excerpt: String) {
        let Some(found) = self.call_entry(call) else {
            return;
        };
        let entry = self.touch(found);
        entry.live.clear();
        if let Some(outcome) = entry.outcome_of(call) {
            *outcome = Some(clean_outcome((status, excerpt)));
        }
    }

    /// Shows a running call's latest output under the entry its outcome
    /// will go to, while it has none.
    pub fn set_tool_live(&mut self, call: &CallId, tail: String) {
        let Some(found) = self.call_entry(call) else {
            return;
        };
        if self.entries[found]
            .outcome_of(call)
            .is_some_and(|outcome| outcome.is_none())
        {
            self.touch(found).live = clean(tail);
        }
    }

    /// Where the newest entry a call's outcome goes to is.
    fn call_entry(&mut self, call: &CallId) -> Option<usize> {
        self.entries
            .iter_mut()
            .rposition(|e| e.outcome_of(call).is_some())
    }

    /// Replaces the summary on a call's tool row.
    pub fn set_tool_summary(&mut self, call: &CallId, summary: String) {
        if let Some(entry) = self.tool_row(call) {
            entry.text = clean(summary);
        }
    }

    /// The newest row of a call, marked for redrawing.
    fn tool_row(&mut self, call: &CallId) -> Option<&mut Entry> {
        let found = self
            .entries
            .iter()
            .rposition(|e| matches!(&e.kind, EntryKind::Tool { id, .. } if id == call))?;
        Some(self.touch(found))
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
        self.touch(last)
    }

    /// Appends reply text to the open reply.
    pub fn append_reply(&mut self, text: &str) {
        self.open_reply().text.push_str(&strip_controls(text));
    }

    /// Appends reasoning text to the open reply.
    pub fn append_reasoning(&mut self, text: &str) {
        if let EntryKind::Assistant { reasoning, .. } = &mut self.open_reply().kind {
            reasoning.push_str(&strip_controls(text));
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

    /// Re-wraps what changed for `width` and drops the oldest entries past
    /// the bounds, but never entry `keep` or a later one, nor the newest;
    /// call before drawing. Keeps the view still when the person has
    /// scrolled up and lines arrive below.
    pub fn prepare(&mut self, width: u16, height: u16, theme: &Theme, keep: Option<usize>) {
        self.height = height as usize;
        let resized = width != self.width;
        if resized {
            self.width = width;
            self.dirty_from = 0;
            for entry in &mut self.entries {
                entry.dirty = true;
            }
        }
        let before = self.total_lines;
        let start = self.dirty_from.min(self.entries.len());
        for entry in &mut self.entries[start..] {
            if !entry.dirty {
                continue;
            }
            let (rows, bytes) = entry.wrap(width, theme);
            self.total_lines = self.total_lines - rows + entry.lines.len();
            self.text_bytes = self.text_bytes - bytes + entry.counted;
        }
        self.dirty_from = self.entries.len();
        let after = self.total_lines;
        self.drop_oldest(keep, width, theme);
        // What changed is below the view (a reply streaming, a running
        // command's tail growing or shrinking): the view moves with it.
        if !resized && self.scroll > 0 {
            self.scroll = (self.scroll + after).saturating_sub(before);
        }
        self.scroll = self.scroll.min(self.max_scroll());
    }

    /// Drops the oldest entries while the log holds more than
    /// [`LOG_ITEMS_MAX`] entries, [`LOG_BYTES_MAX`] bytes of text or
    /// [`ROWS_MAX`] rows,
    /// stopping at entry `keep` and at the newest; the first drop puts the
    /// [`dropped_notice`] on top, whose text and rows count in the bounds
    /// but which is not one of the entries it says are kept.
    /// Entries are wrapped when this runs.
    fn drop_oldest(&mut self, keep: Option<usize>, width: u16, theme: &Theme) {
        let over = |t: &Self| {
            t.entries.len() - t.notices() > LOG_ITEMS_MAX
                || t.text_bytes > LOG_BYTES_MAX
                || t.total_lines > ROWS_MAX
        };
        if !over(self) {
            return;
        }
        let first = self.notices();
        let stop = keep
            .and_then(|k| self.position(k))
            .unwrap_or(usize::MAX)
            .min(self.entries.len() - 1);
        let notice = (first == 0).then(|| {
            let mut notice = Entry::new(EntryKind::System(Severity::Notice), dropped_notice());
            notice.wrap(width, theme);
            notice
        });
        let (notice_rows, notice_bytes) = notice
            .as_ref()
            .map_or((0, 0), |n| (n.lines.len(), n.counted));
        let mut end = first;
        let (mut lines, mut bytes) = (0, 0);
        while end < stop
            && (self.entries.len() - end > LOG_ITEMS_MAX
                || self.text_bytes + notice_bytes - bytes > LOG_BYTES_MAX
                || self.total_lines + notice_rows - lines > ROWS_MAX)
        {
            lines += self.entries[end].lines.len();
            bytes += self.entries[end].counted;
            end += 1;
        }
        if end == first {
            return;
        }
        self.entries.drain(first..end);
        self.dropped += end - first;
        self.total_lines -= lines;
        self.text_bytes -= bytes;
        if let Some(notice) = notice {
            self.total_lines += notice.lines.len();
            self.text_bytes += notice.counted;
            self.entries.insert(0, notice);
        }
        self.dirty_from = self.entries.len();
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

    /// Scrolls so that `line` is the viewport's first, as far as the end
    /// of the transcript allows (a short tail just follows the bottom).
    pub fn show_from(&mut self, line: usize) {
        self.scroll = self
            .total_lines
            .saturating_sub(line + self.height)
            .min(self.max_scroll());
    }

    /// The lines in the viewport, as positions in the whole transcript at
    /// the current width (as of the last `prepare`).
    fn viewport(&self) -> Range<usize> {
        let end = self.total_lines.saturating_sub(self.scroll);
        end.saturating_sub(self.height)..end
    }

    /// Which of entry `index`'s rows ([`Transcript::entry_rows`]) are in
    /// the viewport, counted from its first row; empty when none is.
    pub fn entry_on_screen(&self, index: usize) -> Range<usize> {
        let rows = self.entry_rows(index);
        let view = self.viewport();
        let first = view.start.max(rows.start) - rows.start;
        let last = view.end.min(rows.end).saturating_sub(rows.start);
        first..last.max(first)
    }

    /// Where entry `index` lies in the whole transcript at the current
    /// width, without its blank separator line; empty at the top for an
    /// entry no longer kept.
    pub fn entry_rows(&self, index: usize) -> Range<usize> {
        let Some(at) = self.position(index) else {
            return 0..0;
        };
        let start = self.entries[..at].iter().map(|e| e.lines.len()).sum();
        start..start + self.entries[at].lines.len().saturating_sub(1)
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
                EntryKind::Preview { preview, .. } => {
                    let headers: Vec<&str> = preview
                        .iter()
                        .filter(|l| l.kind == PreviewKind::Header)
                        .map(|l| l.text.as_str())
                        .collect();
                    out.push_str("  ");
                    out.push_str(&headers.join("\n  "));
                    ""
                }
                EntryKind::System(Severity::Notice) => "· ",
                EntryKind::System(Severity::Error) => "! ",
                EntryKind::Tool { name, .. } => {
                    out.push_str("⚙ ");
                    out.push_str(name);
                    " "
                }
            };
            out.push_str(lead);
            out.push_str(entry.text.trim_end());
            if let EntryKind::Tool {
                outcome: Some((status, _)),
                ..
            }
            | EntryKind::Preview {
                outcome: Some((status, _)),
                ..
            } = &entry.kind
            {
                out.push_str(&format!("\n  → {}", status_label(status)));
            }
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
