//! The log a session keeps for the screen to redraw: prompts, replies,
//! tool rows and notices, bounded by [`LOG_ITEMS_MAX`] items and
//! [`LOG_BYTES_MAX`] bytes of text, the oldest dropped first (ADR 0022,
//! 0036). Each item is known by its place since the session began, which
//! dropping older items does not change, so a journal record can name the
//! row whose outcome came after it was saved (ADR 0040). The log knows
//! what of it the session's files hold already: a save writes only what
//! is new or changed since the last.

use std::collections::VecDeque;

use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::protocol::{LogItem, ToolStatus};

use crate::protocol::{LOG_BYTES_MAX, LOG_ITEMS_MAX};

/// A session's log, with what of it is not saved yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionLog {
    items: VecDeque<LogItem>,
    /// The place of the oldest item held.
    first: u64,
    /// The bytes of text the items hold.
    bytes: usize,
    /// The items from this place on are not in the session's files yet.
    unsaved_from: u64,
    /// The places before `unsaved_from` whose item changed since it was
    /// saved, each once.
    changed: Vec<u64>,
}

impl SessionLog {
    /// A log read from a session file, its oldest item at place `first`,
    /// held within the bounds as they are now; all of it saved already.
    pub fn saved(items: Vec<LogItem>, first: u64) -> Self {
        let mut log = Self::read(items, first);
        log.trim();
        log.unsaved_from = log.end();
        log
    }

    /// A log as a session file holds it, untrimmed, for a journal to be
    /// replayed onto.
    pub(super) fn read(items: Vec<LogItem>, first: u64) -> Self {
        let mut log = Self {
            bytes: items.iter().map(text_bytes).sum(),
            items: items.into(),
            first,
            unsaved_from: 0,
            changed: Vec::new(),
        };
        log.unsaved_from = log.end();
        log
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &LogItem> {
        self.items.iter()
    }

    /// The place of the oldest item held (items older than it were
    /// dropped).
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The items as one slice, for a snapshot of the whole session.
    pub fn as_slice(&mut self) -> &[LogItem] {
        self.items.make_contiguous()
    }

    /// Adds `item`, dropping the oldest past the bounds (the newest item
    /// always stays).
    pub fn push(&mut self, item: LogItem) {
        self.bytes += text_bytes(&item);
        self.items.push_back(item);
        self.trim();
    }

    /// The newest row of call `call` gets its outcome.
    pub fn set_outcome(&mut self, call: &str, status: ToolStatus, excerpt: String) {
        self.change_tool_row(call, |item| {
            if let LogItem::Tool { outcome, .. } = item {
                *outcome = Some((status, excerpt));
            }
        });
    }

    /// The newest row of call `call` shows `summary` instead (the
    /// read-only analyser's rendering of a command).
    pub fn set_summary(&mut self, call: &str, summary: &str) {
        self.change_tool_row(call, |item| {
            if let LogItem::Tool { summary: row, .. } = item {
                summary.clone_into(row);
            }
        });
    }

    fn change_tool_row(&mut self, call: &str, change: impl FnOnce(&mut LogItem)) {
        let Some(index) = self
            .items
            .iter()
            .rposition(|item| matches!(item, LogItem::Tool { id, .. } if id == call))
        else {
            return;
        };
        let item = &mut self.items[index];
        self.bytes -= text_bytes(item);
        change(item);
        self.bytes += text_bytes(item);
        let place = self.first + index as u64;
        if place < self.unsaved_from && !self.changed.contains(&place) {
            self.changed.push(place);
        }
    }

    /// Drops the oldest items past [`LOG_ITEMS_MAX`] items or
    /// [`LOG_BYTES_MAX`] bytes of text, so the log, and the session files
    /// that hold it, stay bounded however long the replies.
    fn trim(&mut self) {
        let before = self.first;
        while self.items.len() > LOG_ITEMS_MAX
            || (self.bytes > LOG_BYTES_MAX && self.items.len() > 1)
        {
            if let Some(old) = self.items.pop_front() {
                self.bytes -= text_bytes(&old);
                self.first += 1;
            }
        }
        if self.first != before {
            let first = self.first;
            self.changed.retain(|&place| place >= first);
        }
    }

    /// The place after the newest item.
    fn end(&self) -> u64 {
        self.first + self.items.len() as u64
    }

    /// What changed since the last save, as a journal record writes it.
    pub fn delta(&self) -> LogDelta<'_> {
        let unsaved = self.unsaved_from.max(self.first);
        let changed = self
            .changed
            .iter()
            .filter(|&&place| place >= self.first)
            .map(|&place| (place, Settled(&self.items[(place - self.first) as usize])))
            .collect();
        LogDelta {
            first: self.first,
            set: changed,
            push: Pushed(self, (unsaved - self.first) as usize),
        }
    }

    /// The last delta, or a snapshot of the whole log, is written.
    pub fn saved_all(&mut self) {
        self.changed.clear();
        self.unsaved_from = self.end();
    }

    /// Applies a record's delta read from a journal: the items before its
    /// `first` dropped, the items it names replaced, its new ones added.
    pub(super) fn apply(&mut self, delta: LogDeltaIn) -> Result<(), String> {
        if delta.first < self.first {
            return Err(format!(
                "the log starts at item {} after item {}",
                delta.first, self.first
            ));
        }
        for (place, item) in delta.set {
            let index = place
                .checked_sub(self.first)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < self.items.len())
                .ok_or_else(|| format!("log item {place} is not held"))?;
            self.bytes -= text_bytes(&self.items[index]);
            self.bytes += text_bytes(&item);
            self.items[index] = item;
        }
        while self.first < delta.first {
            match self.items.pop_front() {
                Some(old) => self.bytes -= text_bytes(&old),
                None => {
                    self.first = delta.first;
                    break;
                }
            }
            self.first += 1;
        }
        for item in delta.push {
            self.bytes += text_bytes(&item);
            self.items.push_back(item);
        }
        self.unsaved_from = self.end();
        Ok(())
    }

    /// The items, given up.
    pub(super) fn into_items(self) -> Vec<LogItem> {
        self.items.into()
    }
}

/// What a journal record says of the log: every item before place
/// `first` is gone, the items at the places of `set` are replaced, and
/// `push` follows the newest (from place `first` at the earliest).
#[derive(Serialize)]
pub struct LogDelta<'a> {
    first: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    set: Vec<(u64, Settled<'a>)>,
    push: Pushed<'a>,
}

/// The same, as read.
#[derive(Deserialize)]
pub(super) struct LogDeltaIn {
    first: u64,
    #[serde(default)]
    set: Vec<(u64, LogItem)>,
    #[serde(default)]
    push: Vec<LogItem>,
}

/// The log's items from an index on, written as saved.
struct Pushed<'a>(&'a SessionLog, usize);

impl Serialize for Pushed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.items.range(self.1..).map(Settled))
    }
}

/// A log item as saved: a call still without an outcome is saved as
/// cancelled, as its answer in the conversation is.
pub(super) struct Settled<'a>(pub(super) &'a LogItem);

impl Serialize for Settled<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            LogItem::Tool {
                id,
                name,
                summary,
                outcome: None,
            } => LogItem::Tool {
                id: id.clone(),
                name: name.clone(),
                summary: summary.clone(),
                outcome: Some((ToolStatus::Cancelled, String::new())),
            }
            .serialize(serializer),
            other => other.serialize(serializer),
        }
    }
}

/// The text a log item holds, in bytes.
fn text_bytes(item: &LogItem) -> usize {
    match item {
        LogItem::User(text) => text.len(),
        LogItem::Assistant {
            text, reasoning, ..
        } => text.len() + reasoning.len(),
        LogItem::Tool {
            id,
            name,
            summary,
            outcome,
        } => id.len() + name.len() + summary.len() + outcome.as_ref().map_or(0, |(_, e)| e.len()),
        LogItem::System { text, .. } => text.len(),
    }
}
