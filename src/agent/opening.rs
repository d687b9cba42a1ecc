//! Opening sessions: at start-up (`--continue`, `--resume`), on
//! `/clear` and on `/resume`, and listing them for `/sessions` and the
//! picker. A listing or an opening first waits for the saves queued
//! before it, so it reads what this process saved. A session whose
//! journal was cut short opens with what was saved before the cut, and a
//! notice says what was left out. ADR 0022, 0040.

use crate::hooks::SessionSource;
use crate::llm::wire::Message;
use crate::llm::wires::Wire;
use crate::protocol::{AgentEvent, Severity};
use crate::session::{self, OpenSession, SessionError};
use crate::tools::CheckpointLog;

use super::conversation::Conversation;
use super::turn::Wanted;
use super::{Agent, task_failure};

impl Agent {
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
        if !self.admit(Wanted::NewSession).await {
            return;
        }
        self.conversation = Conversation::new(&self.setup.system_prompt);
        self.setup.tools.known.clear();
        self.setup
            .tools
            .checkpoints
            .replace(CheckpointLog::default());
        self.budget.forget_report();
        self.saving.start_new().await;
        self.sent_since_open = false;
        self.build_overview();
        self.warm_opening().await;
        self.emit(AgentEvent::SessionOpened { log: Vec::new() })
            .await;
        self.announce_session().await;
        self.start_session_hooks(SessionSource::Clear);
        self.emit(AgentEvent::TurnDone).await;
    }

    /// `/resume ID` and the picker: the saved session replaces this one.
    pub(super) async fn resume(&mut self, id: String) {
        if !self.admit(Wanted::Resume).await {
            return;
        }
        self.resume_saved(id).await;
        self.warm_cache();
        self.announce_session().await;
        self.start_session_hooks(SessionSource::Resume);
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
        if self.turn.is_idle() {
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
        // The listing reads the files: the saves queued first are in them.
        self.saving.flush().await;
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

    /// A conversation saved on `saved_wire`, to go on on this agent's
    /// wire: what only another wire reads (its carried reasoning) is taken
    /// out when this one is chat, which would send it as an unknown field;
    /// the other wires each read only their own kind. What to tell the
    /// person, when anything was taken out.
    fn convert(&self, saved_wire: Wire, messages: &mut [Message]) -> Option<String> {
        let wire = self.wire();
        if wire == saved_wire || wire != Wire::Chat {
            return None;
        }
        let dropped: usize = messages
            .iter_mut()
            .map(|m| std::mem::take(&mut m.carried).len())
            .sum();
        (dropped > 0).then(|| {
            format!(
                "this session spoke the {} wire: {dropped} reasoning items only that wire reads are left out on {}",
                saved_wire.name(),
                wire.name()
            )
        })
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
        self.saving.flush().await;
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
                let mut messages = std::mem::take(&mut saved.messages);
                let converted = self.convert(saved.wire, &mut messages);
                // Converted, the files hold none of it as it now is.
                let held = if converted.is_some() {
                    0
                } else {
                    messages.len()
                };
                self.conversation = Conversation::resumed(&self.setup.system_prompt, messages);
                self.setup.tools.known.clear();
                self.tickets
                    .episodes_past(self.conversation.made_up_ids_past());
                // What its turns changed is named by paths in the project
                // it was saved in: here they would be other files.
                let checkpoints = std::mem::take(&mut saved.checkpoints);
                let elsewhere = (saved.directory != here
                    && !(checkpoints.done.is_empty() && checkpoints.undone.is_empty()))
                .then(|| saved.directory.clone());
                self.setup.tools.checkpoints.replace(checkpoints);
                {
                    let mut checkpoints = self.setup.tools.checkpoints.lock();
                    if elsewhere.is_some() {
                        checkpoints.forget_changes();
                    }
                    checkpoints.align(self.conversation.prompts().count());
                }
                self.budget.forget_report();
                let damage = saved
                    .damage
                    .take()
                    .map(|d| format!("session {}: {d}", saved.id));
                if let Some(writer) = self.saving.writer() {
                    let _ = writer.adopt(&saved.id, lock).await;
                }
                self.saving.adopt(saved, held);
                self.restore_slot = true;
                self.sent_since_open = false;
                let log = self.saving.log.iter().cloned().collect();
                self.emit(AgentEvent::SessionOpened { log }).await;
                if let Some(usage) = last_usage {
                    self.emit(AgentEvent::Usage(usage)).await;
                }
                self.emit(AgentEvent::Totals(self.saving.usage)).await;
                if let Some(damage) = damage {
                    self.system(Severity::Notice, damage).await;
                }
                if let Some(notice) = converted {
                    self.system(Severity::Notice, notice).await;
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

/// Why no session can be listed or resumed.
const NO_STORE: &str = "saved sessions are unavailable: neither XDG_CONFIG_HOME nor HOME is set";
