//! The agent's saved session: the log it records as it emits events, the
//! save after every step (by this task; the write itself on a blocking
//! thread, awaited), and opening sessions — at start-up (`--continue`,
//! `--resume`), on `/clear` and on `/resume`. A saved conversation is
//! always valid: the calls of a round still in flight are saved as
//! cancelled. A failed save is one notice, and the session goes on.
//! On quit, a llama.cpp server is asked to save its slot beside it.
//! ADR 0022, 0034.

use std::collections::VecDeque;

use crate::llm::slots::{self, SlotAction};
use crate::llm::wire::Message;
use crate::protocol::{AgentEvent, LogItem, Severity, Usage};
use crate::session::{
    self, LOG_BYTES_MAX, LOG_ITEMS_MAX, OpenSession, SavedSession, SessionError, SessionLock,
    SessionRecord, SessionSetup, check_conversation,
};

use crate::tools::CheckpointLog;

use super::conversation::{Conversation, tool_message};
use super::{Agent, slot_logged, task_failure};

/// The session the agent has open.
pub(super) struct Saving {
    /// Where sessions live and how the first one opens; `None` when there
    /// is nowhere to keep them.
    setup: Option<SessionSetup>,
    id: String,
    created: u64,
    /// The first prompt, cut; empty until there is one (nothing is saved
    /// before).
    title: String,
    /// Held while the session is open, from its first save (or resume).
    lock: Option<SessionLock>,
    log: VecDeque<LogItem>,
    /// The reply streaming now: its text and reasoning.
    reply: Option<(String, String)>,
    usage: Usage,
    last_usage: Option<Usage>,
    /// A save failed and was reported; later failures stay quiet until one
    /// succeeds.
    failed: bool,
}

impl Saving {
    /// A new session, to be kept as `setup` says.
    pub(super) fn new(setup: Option<SessionSetup>) -> Self {
        let now = session::now_secs();
        Self {
            setup,
            id: session::new_id(now),
            created: now,
            title: String::new(),
            lock: None,
            log: VecDeque::new(),
            reply: None,
            usage: Usage::default(),
            last_usage: None,
            failed: false,
        }
    }

    /// Starts a new session; the old one's lock is released.
    fn start_new(&mut self) {
        let setup = self.setup.take();
        *self = Self::new(setup);
    }

    fn push(&mut self, item: LogItem) {
        self.log.push_back(item);
        self.trim_log();
    }

    /// Drops the oldest log items past [`LOG_ITEMS_MAX`] items or
    /// [`LOG_BYTES_MAX`] bytes of text (the newest item always stays), so
    /// the log, and the session file that holds it, stay bounded however
    /// long the replies.
    fn trim_log(&mut self) {
        let mut bytes: usize = self.log.iter().map(text_bytes).sum();
        while self.log.len() > LOG_ITEMS_MAX || (bytes > LOG_BYTES_MAX && self.log.len() > 1) {
            if let Some(old) = self.log.pop_front() {
                bytes -= text_bytes(&old);
            }
        }
    }

    /// Records the person's prompt; the first one is the title.
    pub(super) fn record_prompt(&mut self, text: &str) {
        if self.title.is_empty() {
            self.title = session::title_of(text);
        }
        self.push(LogItem::User(text.to_string()));
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
    }

    /// The newest tool row of a call.
    fn tool_row(&mut self, call: &str) -> Option<&mut LogItem> {
        self.log
            .iter_mut()
            .rev()
            .find(|item| matches!(item, LogItem::Tool { id, .. } if id == call))
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
                    self.push(LogItem::Assistant {
                        text,
                        reasoning,
                        end: *end,
                    });
                }
            }
            AgentEvent::ToolCall { id, name, summary } => self.push(LogItem::Tool {
                id: id.clone(),
                name: name.clone(),
                summary: summary.clone(),
                outcome: None,
            }),
            AgentEvent::ToolResult {
                id,
                status,
                excerpt,
            } => {
                if let Some(LogItem::Tool { outcome, .. }) = self.tool_row(id) {
                    *outcome = Some((status.clone(), excerpt.clone()));
                }
            }
            AgentEvent::ToolAllowed { id, summary } => {
                if let Some(LogItem::Tool { summary: row, .. }) = self.tool_row(id) {
                    row.clone_from(summary);
                }
            }
            AgentEvent::System { severity, text } => self.push(LogItem::System {
                severity: *severity,
                text: text.clone(),
            }),
            AgentEvent::Usage(usage) => self.last_usage = Some(*usage),
            AgentEvent::Phase(_)
            // Seen while a command runs; its result holds what is kept.
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::ToolCallWriting { .. }
            | AgentEvent::ReadingPrompt(_)
            | AgentEvent::Compacted { .. }
            | AgentEvent::SessionFacts { .. }
            | AgentEvent::ProjectFiles(_)
            | AgentEvent::Confirm(_)
            | AgentEvent::SessionOpened { .. }
            | AgentEvent::Prompts { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::SessionId(_)
            | AgentEvent::Sessions { .. }
            | AgentEvent::ApprovalChanged(_)
            | AgentEvent::TurnDone => {}
        }
    }

    /// Takes over a session loaded from its file.
    fn adopt(&mut self, saved: SavedSession, lock: Option<SessionLock>) {
        self.id = saved.id;
        self.created = saved.created;
        self.title = saved.title;
        self.lock = lock;
        self.log = saved.log.into();
        self.trim_log();
        self.reply = None;
        self.usage = saved.usage;
        self.last_usage = saved.last_usage;
        self.failed = false;
    }
}

impl Agent {
    /// Saves the session as it stands; a no-op with saving off or before
    /// the first prompt.
    pub(super) async fn save(&mut self) {
        let Some(setup) = self.saving.setup.as_ref().filter(|s| s.save) else {
            return;
        };
        if self.saving.title.is_empty() {
            return;
        }
        let store = setup.store.clone();
        let pending: Vec<Message> = self.round.as_ref().map_or_else(Vec::new, |round| {
            round
                .provisional_answers()
                .into_iter()
                .map(|(id, mut result)| {
                    // Saved as it will be sent, should a crash make this
                    // the answer a resumed session sends.
                    self.fit_result(&mut result);
                    tool_message(id, &result)
                })
                .collect()
        });
        let messages = self.conversation.messages();
        if let Err(e) = check_conversation(messages.iter().chain(&pending)) {
            // A bug, never a file that cannot be resumed.
            self.setup
                .log
                .line(|| format!("session not saved: the conversation is invalid: {e}"));
            return;
        }
        self.saving.log.make_contiguous();
        let encoded = {
            let checkpoints = self.setup.tools.checkpoints.lock();
            SessionRecord {
                id: &self.saving.id,
                created: self.saving.created,
                updated: session::now_secs(),
                directory: &setup.directory,
                model: &self.setup.model,
                base_url: &setup.base_url,
                title: &self.saving.title,
                usage: self.saving.usage,
                last_usage: self.saving.last_usage,
                messages,
                pending: &pending,
                log: self.saving.log.as_slices().0,
                checkpoints: &checkpoints,
            }
            .encode()
        };
        let bytes = match encoded {
            Ok(bytes) => bytes,
            Err(e) => return self.save_failed(e.to_string()).await,
        };
        let id = self.saving.id.clone();
        let locked = self.saving.lock.is_some();
        let written = tokio::task::spawn_blocking(move || {
            let lock = if locked { None } else { Some(store.lock(&id)?) };
            store.write(&id, &bytes)?;
            Ok::<_, SessionError>(lock)
        })
        .await;
        match written {
            Ok(Ok(lock)) => {
                if lock.is_some() {
                    self.saving.lock = lock;
                }
                self.saving.failed = false;
            }
            Ok(Err(e)) => self.save_failed(e.to_string()).await,
            Err(e) => self.save_failed(task_failure("save", &e)).await,
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
        let Ok(endpoint) = &self.setup.endpoint else {
            return;
        };
        if !self.sent_since_open {
            return;
        }
        let session = self.slot_file().filter(|_| !self.saving.title.is_empty());
        for file in session.into_iter().chain(self.prefix_slot_file()) {
            slot_logged(endpoint, SlotAction::Save, &file, &self.setup.log).await;
        }
    }

    /// Reports a failed save, once until a save succeeds again.
    async fn save_failed(&mut self, why: String) {
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

    /// Opens the session the command line asked for (before anything else
    /// runs).
    pub(super) async fn open_at_start(&mut self) {
        let Some(setup) = &self.saving.setup else {
            return;
        };
        match setup.open.clone() {
            OpenSession::New => {}
            OpenSession::Continue => {
                let directory = setup.directory.clone();
                let Some(listing) = self.listing(Some(directory)).await else {
                    return;
                };
                // The newest that opens: a damaged file is skipped, as
                // the listing skips one it cannot read.
                for summary in &listing {
                    match self.open(summary.id.clone()).await {
                        Opened::Yes | Opened::Not => return,
                        Opened::Damaged(why) => {
                            self.system(Severity::Notice, why.to_string()).await
                        }
                    }
                }
                let notice = if listing.is_empty() {
                    "no saved session in this directory yet; this is a new one"
                } else {
                    "no saved session in this directory could be opened; this is a new one"
                };
                self.system(Severity::Notice, notice).await;
            }
            OpenSession::Resume(id) => self.resume_saved(id).await,
            OpenSession::Pick { all } => self.list_sessions(all).await,
        }
    }

    /// `/clear`: a new session; the old one stays saved.
    pub(super) async fn clear(&mut self) {
        if self.busy() {
            self.system(
                Severity::Notice,
                "the agent is busy; interrupt it (Esc) before starting a new session",
            )
            .await;
            return;
        }
        self.conversation = Conversation::new(&self.setup.system_prompt);
        self.setup.tools.known.clear();
        self.setup
            .tools
            .checkpoints
            .replace(CheckpointLog::default());
        self.budget.forget_report();
        self.saving.start_new();
        self.sent_since_open = false;
        self.warm_cache();
        self.emit(AgentEvent::SessionOpened { log: Vec::new() })
            .await;
        self.announce_session().await;
        self.emit(AgentEvent::TurnDone).await;
    }

    /// `/resume ID` and the picker: the saved session replaces this one.
    pub(super) async fn resume(&mut self, id: String) {
        if self.busy() {
            self.system(
                Severity::Notice,
                "the agent is busy; interrupt it (Esc) before resuming a session",
            )
            .await;
            return;
        }
        self.resume_saved(id).await;
        self.warm_cache();
        self.announce_session().await;
        self.emit(AgentEvent::TurnDone).await;
    }

    /// Tells the UI which id the open session is saved under (`None`
    /// when saving is off). Without a sessions directory nothing is ever
    /// saved, and nothing is said.
    pub(super) async fn announce_session(&mut self) {
        let Some(setup) = &self.saving.setup else {
            return;
        };
        let id = setup.save.then(|| self.saving.id.clone());
        self.emit(AgentEvent::SessionId(id)).await;
    }

    /// `/sessions` and the picker's list: this directory's saved sessions
    /// (or every directory's), newest first.
    pub(super) async fn list_sessions(&mut self, all: bool) {
        let directory = match &self.saving.setup {
            Some(setup) if !all => Some(setup.directory.clone()),
            _ => None,
        };
        if let Some(sessions) = self.listing(directory).await {
            let now = session::now_secs();
            self.emit(AgentEvent::Sessions {
                list: sessions,
                now,
            })
            .await;
        }
        if !self.busy() {
            self.emit(AgentEvent::TurnDone).await;
        }
    }

    /// The saved sessions, newest first, the files skipped reported in
    /// one notice; `None` (and an error entry) when there is no store.
    async fn listing(
        &mut self,
        directory: Option<String>,
    ) -> Option<Vec<crate::protocol::SessionSummary>> {
        let Some(setup) = &self.saving.setup else {
            self.system(Severity::Error, NO_STORE).await;
            return None;
        };
        let store = setup.store.clone();
        let listed = tokio::task::spawn_blocking(move || store.list(directory.as_deref())).await;
        match listed {
            Ok(listing) => {
                let notes = listing.notes();
                if !notes.is_empty() {
                    self.system(Severity::Notice, notes.join("\n")).await;
                }
                Some(listing.sessions)
            }
            Err(e) => {
                self.system(Severity::Error, task_failure("session list", &e))
                    .await;
                None
            }
        }
    }

    /// Opens the saved session the person named; on failure an error entry
    /// says why and this one goes on.
    async fn resume_saved(&mut self, id: String) {
        if let Opened::Damaged(why) = self.open(id).await {
            self.system(Severity::Error, why.to_string()).await;
        }
    }

    /// Opens saved session `id` in place of this one (locked, when saving
    /// is on); on a failure but a damaged file an error entry says why, and
    /// this one goes on.
    async fn open(&mut self, id: String) -> Opened {
        let Some(setup) = &self.saving.setup else {
            self.system(Severity::Error, NO_STORE).await;
            return Opened::Not;
        };
        let current = id == self.saving.id;
        let here = setup.directory.clone();
        let store = setup.store.clone();
        let lock = setup.save && !current;
        let opened = tokio::task::spawn_blocking(move || store.open(&id, lock)).await;
        match opened {
            Ok(Ok((mut saved, lock))) => {
                self.setup.log.line(|| {
                    format!(
                        "resumed session {}: {} messages",
                        saved.id,
                        saved.messages.len()
                    )
                });
                let last_usage = saved.last_usage;
                self.conversation = Conversation::resumed(
                    &self.setup.system_prompt,
                    std::mem::take(&mut saved.messages),
                );
                self.setup.tools.known.clear();
                self.episodes_started = self
                    .episodes_started
                    .max(self.conversation.made_up_ids_past());
                let mut checkpoints = std::mem::take(&mut saved.checkpoints);
                // What its turns changed is named by paths in the project
                // it was saved in: here they would be other files.
                let elsewhere = (saved.directory != here
                    && !(checkpoints.done.is_empty() && checkpoints.undone.is_empty()))
                .then(|| saved.directory.clone());
                if elsewhere.is_some() {
                    checkpoints.done.clear();
                    checkpoints.undone.clear();
                }
                checkpoints.align(self.conversation.prompts().count());
                self.setup.tools.checkpoints.replace(checkpoints);
                self.budget.forget_report();
                let lock = if current {
                    self.saving.lock.take()
                } else {
                    lock
                };
                self.saving.adopt(saved, lock);
                self.restore_slot = true;
                self.sent_since_open = false;
                let log = self.saving.log.iter().cloned().collect();
                self.emit(AgentEvent::SessionOpened { log }).await;
                if let Some(usage) = last_usage {
                    self.emit(AgentEvent::Usage(usage)).await;
                }
                if let Some(directory) = elsewhere {
                    let notice = format!(
                        "this session was saved in {directory}: what its turns changed there cannot be undone here, and is no longer kept with it"
                    );
                    self.system(Severity::Notice, notice).await;
                }
                Opened::Yes
            }
            Ok(Err(
                e @ (SessionError::Read { .. }
                | SessionError::Corrupt { .. }
                | SessionError::Newer { .. }
                | SessionError::TooLarge { .. }),
            )) => Opened::Damaged(e),
            Ok(Err(e)) => {
                self.system(Severity::Error, e.to_string()).await;
                Opened::Not
            }
            Err(e) => {
                self.system(Severity::Error, task_failure("session open", &e))
                    .await;
                Opened::Not
            }
        }
    }
}

/// How opening a saved session went.
#[derive(Debug)]
enum Opened {
    /// It is the session now.
    Yes,
    /// Its file cannot be read as a session (why, not yet said); this one
    /// goes on.
    Damaged(SessionError),
    /// It could not be opened (in use, gone, …); this one goes on.
    Not,
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

/// Why no session can be listed or resumed.
const NO_STORE: &str = "saved sessions are unavailable: neither XDG_CONFIG_HOME nor HOME is set";
