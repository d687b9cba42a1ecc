//! The agent's saved session: the log it records as it emits events, and
//! the save after every step. A save hands the session writer (a thread
//! of its own, ADR 0040) what changed since the last: a journal record of
//! the step, or the whole session as a snapshot where the files start (a
//! new session, or after a failed save). The agent waits for no disk; a
//! listing or an opening waits for the saves queued before it. A saved
//! conversation is always valid: the calls of a round still in flight
//! are saved as cancelled. A failed save is one notice, and the session
//! goes on. On quit, a llama.cpp server is asked to save its slot beside
//! it. ADR 0022, 0034, 0040.

use crate::llm::slots::{self, SlotAction};
use crate::llm::wire::Message;
use crate::log::Log;
use crate::protocol::{AgentEvent, LogItem, Severity, Usage};
use crate::session::{
    self, SavedSession, SessionLog, SessionRecord, SessionSetup, SessionWriter, StepRecord, Tail,
    WriterStatus, check_conversation, check_conversation_from,
};

use super::{Agent, slot_logged};

/// The session the agent has open.
pub(super) struct Saving {
    /// Where sessions live and how the first one opens; `None` when there
    /// is nowhere to keep them.
    pub(super) setup: Option<SessionSetup>,
    /// The thread that writes the files, while saving is on; why it could
    /// not be started otherwise.
    writer: Option<Result<SessionWriter, String>>,
    pub(super) id: String,
    created: u64,
    /// The first prompt, cut; empty until there is one (nothing is saved
    /// before).
    pub(super) title: String,
    pub(super) log: SessionLog,
    /// The reply streaming now: its text and reasoning.
    reply: Option<(String, String)>,
    pub(super) usage: Usage,
    last_usage: Option<Usage>,
    /// A save failed and was reported; later failures stay quiet until one
    /// succeeds.
    failed: bool,
    /// The files hold nothing of this session yet, or fell behind a failed
    /// save: the next save writes it whole.
    resync: bool,
    /// The number of the last journal record written (or of the one the
    /// snapshot read holds).
    seq: u64,
    /// The conversation's messages the files hold as they are: the next
    /// record replaces the files' conversation from here at the latest.
    held: usize,
    /// The files hold a round's provisional answers after those.
    pending_held: bool,
    /// Failures the writer reported, counted: a higher count is news.
    failures_seen: u64,
}

impl Saving {
    /// A new session, to be kept as `setup` says; the writer, noting what
    /// it does in `log`, starts when saving is on.
    pub(super) fn new(setup: Option<SessionSetup>, log: &Log) -> Self {
        let writer = setup
            .as_ref()
            .filter(|s| s.save)
            .map(|s| SessionWriter::start(s.store.clone(), log.clone()).map_err(|e| e.to_string()));
        let now = session::now_secs();
        Self {
            setup,
            writer,
            id: session::new_id(now),
            created: now,
            title: String::new(),
            log: SessionLog::default(),
            reply: None,
            usage: Usage::default(),
            last_usage: None,
            failed: false,
            resync: true,
            seq: 0,
            held: 0,
            pending_held: false,
            failures_seen: 0,
        }
    }

    /// Whether sessions are saved.
    pub(super) fn on(&self) -> bool {
        self.writer.is_some()
    }

    /// The writer, when it runs.
    pub(super) fn writer(&self) -> Option<&SessionWriter> {
        self.writer.as_ref().and_then(|w| w.as_ref().ok())
    }

    /// Starts a new session: the old one's lock goes once its saves are
    /// written.
    pub(super) async fn start_new(&mut self) {
        if let Some(writer) = self.writer() {
            let _ = writer.release().await;
        }
        let now = session::now_secs();
        self.id = session::new_id(now);
        self.created = now;
        self.title.clear();
        self.log = SessionLog::default();
        self.reply = None;
        self.usage = Usage::default();
        self.last_usage = None;
        self.failed = false;
        self.resync = true;
        self.seq = 0;
        self.held = 0;
        self.pending_held = false;
    }

    /// Waits until every save queued is written, so the files can be read.
    pub(super) async fn flush(&self) {
        if let Some(writer) = self.writer() {
            writer.flush().await;
        }
    }

    /// Stops the writer once every save is written and the journal folded
    /// into the snapshot.
    pub(super) async fn finish(&mut self) {
        if let Some(Ok(writer)) = self.writer.take() {
            writer.finish().await;
        }
    }

    /// Records the person's prompt; the first one is the title.
    pub(super) fn record_prompt(&mut self, text: &str) {
        if self.title.is_empty() {
            self.title = session::title_of(text);
        }
        self.log.push(LogItem::User(text.to_string()));
    }

    /// Adds one request's token counts to the totals.
    pub(super) fn add_usage(&mut self, usage: Usage) {
        // Counts come from the server and the session file: a nonsense
        // figure stops at the top instead of overflowing.
        let total = &mut self.usage;
        total.prompt_tokens = total.prompt_tokens.saturating_add(usage.prompt_tokens);
        total.completion_tokens = total
            .completion_tokens
            .saturating_add(usage.completion_tokens);
        total.total_tokens = total.total_tokens.saturating_add(usage.total_tokens);
        total.cached_tokens = total.cached_tokens.saturating_add(usage.cached_tokens);
    }

    /// Records what an event shows in the log.
    pub(super) fn record(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AssistantDelta(text) => {
                self.reply.get_or_insert_default().0.push_str(text);
            }
            AgentEvent::ReasoningDelta(text) => {
                self.reply.get_or_insert_default().1.push_str(text);
            }
            // As on screen: a reply that streamed nothing has no entry.
            AgentEvent::AssistantEnd(end) => {
                if let Some((text, reasoning)) = self.reply.take() {
                    self.log.push(LogItem::Assistant {
                        text,
                        reasoning,
                        end: *end,
                    });
                }
            }
            AgentEvent::ToolCall { id, name, summary } => self.log.push(LogItem::Tool {
                id: id.clone(),
                name: name.clone(),
                summary: summary.clone(),
                outcome: None,
            }),
            AgentEvent::ToolResult {
                id,
                status,
                excerpt,
            } => self.log.set_outcome(id, status.clone(), excerpt.clone()),
            AgentEvent::ToolAllowed { id, summary } => self.log.set_summary(id, summary),
            AgentEvent::System { severity, text } => self.log.push(LogItem::System {
                severity: *severity,
                text: text.clone(),
            }),
            AgentEvent::Usage(usage) => self.last_usage = Some(*usage),
            AgentEvent::Phase(_)
            // The totals are kept as they are summed.
            | AgentEvent::Totals(_)
            // Seen while a command runs; its result holds what is kept.
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::ToolCallWriting { .. }
            | AgentEvent::ReadingPrompt(_)
            | AgentEvent::Compacted { .. }
            | AgentEvent::SessionFacts { .. }
            | AgentEvent::ProjectFiles(_)
            | AgentEvent::CustomCommands { .. }
            | AgentEvent::Confirm(_)
            | AgentEvent::SessionOpened { .. }
            | AgentEvent::Prompts { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::SessionId(_)
            | AgentEvent::Sessions { .. }
            | AgentEvent::McpServers(_)
            | AgentEvent::ApprovalChanged(_)
            | AgentEvent::TurnDone => {}
        }
    }

    /// Takes over a session loaded from its files, whose `messages` the
    /// conversation took: the files hold all of it.
    pub(super) fn adopt(&mut self, saved: SavedSession, messages: usize) {
        self.id = saved.id;
        self.created = saved.created;
        self.title = saved.title;
        self.log = SessionLog::saved(saved.log, saved.log_first);
        self.reply = None;
        self.usage = saved.usage;
        self.last_usage = saved.last_usage;
        self.failed = false;
        self.resync = false;
        self.seq = saved.seq;
        self.held = messages;
        self.pending_held = false;
    }
}

impl Agent {
    /// Saves the session as it stands (hands it to the writer); a no-op
    /// with saving off or before the first prompt.
    pub(super) async fn save(&mut self) {
        if !self.saving.on() || self.saving.title.is_empty() {
            return;
        }
        if let Some(Err(why)) = &self.saving.writer {
            let why = format!("cannot save the session: {why}");
            return self.save_failed(why).await;
        }
        let Some(setup) = &self.saving.setup else {
            return;
        };
        let changed_from = self.conversation.take_changed_from();
        let messages = self.conversation.messages();
        let pending: &[Message] = self.turn.round().map_or(&[], |r| r.saved_answers());
        let at = changed_from.min(self.saving.held);
        let checked = if self.saving.resync {
            check_conversation(messages.iter().chain(pending))
        } else {
            check_conversation_from(messages, pending, at)
        };
        if let Err(e) = checked {
            // A bug, never a file that cannot be resumed.
            self.setup
                .log
                .line(|| format!("session not saved: the conversation is invalid: {e}"));
            self.saving.resync = true;
            return;
        }
        let updated = session::now_secs();
        let snapshot = self.saving.resync;
        let encoded = if snapshot {
            let mut checkpoints = self.setup.tools.checkpoints.lock();
            // The snapshot holds what they did.
            checkpoints.take_ops(true);
            let log_first = self.saving.log.first();
            SessionRecord {
                id: &self.saving.id,
                seq: self.saving.seq,
                created: self.saving.created,
                updated,
                directory: &setup.directory,
                model: &self.setup.model,
                base_url: &setup.base_url,
                wire: self.wire(),
                title: &self.saving.title,
                usage: self.saving.usage,
                last_usage: self.saving.last_usage,
                messages,
                pending,
                log: self.saving.log.as_slice(),
                log_first,
                checkpoints: &checkpoints,
            }
            .encode()
        } else {
            let ops = self.setup.tools.checkpoints.lock().take_ops(true);
            let pending_changed = !pending.is_empty() || self.saving.pending_held;
            StepRecord {
                seq: self.saving.seq + 1,
                updated,
                model: &self.setup.model,
                base_url: &setup.base_url,
                wire: self.wire(),
                directory: &setup.directory,
                usage: self.saving.usage,
                last_usage: self.saving.last_usage,
                tail: (at < messages.len() || pending_changed).then(|| Tail {
                    at,
                    messages: &messages[at..],
                    pending,
                }),
                log: &self.saving.log,
                checkpoints: &ops,
            }
            .encode()
        };
        let (held, pending_held) = (messages.len(), !pending.is_empty());
        let bytes = match encoded {
            Ok(bytes) => bytes,
            Err(e) => {
                self.saving.resync = true;
                return self.save_failed(e.to_string()).await;
            }
        };
        let sent = match self.saving.writer() {
            Some(writer) if snapshot => writer.begin(&self.saving.id, bytes).await,
            Some(writer) => writer.append(&self.saving.id, bytes).await,
            None => return,
        };
        if let Err(e) = sent {
            self.saving.resync = true;
            return self.save_failed(e.to_string()).await;
        }
        if !snapshot {
            self.saving.seq += 1;
        }
        self.saving.resync = false;
        self.saving.held = held;
        self.saving.pending_held = pending_held;
        self.saving.log.saved_all();
    }

    /// The writer says how saves went: a failure is told once (until a
    /// save works again), and the next save writes the session whole, as
    /// the files fell behind.
    pub(super) async fn writer_said(&mut self, status: WriterStatus) {
        if status.failures > self.saving.failures_seen {
            self.saving.failures_seen = status.failures;
            self.saving.resync = true;
            if let Some(why) = &status.failing {
                self.save_failed(why.clone()).await;
            }
        }
        if status.failing.is_none() {
            self.saving.failed = false;
        }
    }

    /// The file the open session's slot is saved under on the server, when
    /// slots are on and the session is saved. ADR 0034.
    pub(super) fn slot_file(&self) -> Option<String> {
        let saved = self.saving.setup.as_ref().is_some_and(|s| s.save);
        (saved && self.slots_on()).then(|| slots::file_name(&self.saving.id, &self.setup.model))
    }

    /// On quit: asks the server to save what its slot holds, which begins
    /// with the fixed prefix: as this session's slot, so `--continue`
    /// restores it instead of reading it again, and as the prefix's, so the
    /// next new session does not read the prefix either (a warm-up cut
    /// short by the first prompt never saved it). Each bounded by
    /// [`slots::SLOT_ACTION_TIMEOUT`]; a refusal only reaches the log.
    pub(super) async fn save_slot(&mut self) {
        let Some(endpoint) = self.endpoint() else {
            return;
        };
        if !self.sent_since_open {
            return;
        }
        let session = self.slot_file().filter(|_| !self.saving.title.is_empty());
        for file in session.into_iter().chain(self.prefix_slot_file()) {
            let _ = slot_logged(&endpoint, SlotAction::Save, &file, &self.setup.log).await;
        }
    }

    /// Reports a failed save, once until a save succeeds again.
    pub(super) async fn save_failed(&mut self, why: String) {
        if self.saving.failed {
            return;
        }
        self.saving.failed = true;
        self.system(
            Severity::Error,
            format!("{why}; the session goes on, but is not being saved (dashfloat tries again after every step)"),
        )
        .await;
    }
}

/// The writer's next news, while there is a writer.
pub(super) async fn next_writer_status(saving: &mut Saving) -> WriterStatus {
    match saving.writer.as_mut() {
        Some(Ok(writer)) => match writer.changed().await {
            Some(status) => status,
            None => std::future::pending().await,
        },
        _ => std::future::pending().await,
    }
}
