//! Saved sessions under `$XDG_CONFIG_HOME/dashfloat/sessions/`: per
//! session a JSON snapshot, written whole and atomically, and a journal
//! beside it, one fsync'd record appended per step by a writer thread of
//! its own and folded into a new snapshot now and then; locked while a
//! dashfloat process has it open, listed and loaded (snapshot and journal
//! replayed) for `--continue`, `--resume` and `dashfloat sessions`. A file
//! that cannot be used is reported, left as it is and skipped; a journal
//! cut short by a crash is read up to its last whole record. ADR 0022,
//! 0040.

pub(crate) mod file;
pub(crate) mod id;
mod journal;
mod lock;
mod log;
mod valid;
pub(crate) mod writer;

use std::path::{Path, PathBuf};

use crate::llm::wire::Message;
use crate::llm::wires::Wire;
use crate::protocol::{LogItem, SessionSummary, Usage};

pub use file::SessionRecord;

pub(crate) use file::SCHEMA_VERSION;
pub use id::{new_id, valid_id};
pub use journal::{JournalDamage, StepRecord, Tail};
pub use lock::SessionLock;
pub use log::{LogDelta, SessionLog};
pub use valid::{InvalidConversation, check_conversation, check_conversation_from};
pub use writer::{JournalFile, SessionWriter, WriterStatus};

/// The most characters of the first prompt kept as a session's title.
/// ADR 0022.
pub const TITLE_MAX_CHARS: usize = 80;
/// The largest session file read or written, snapshot or journal; a
/// bigger one is refused (reported, left as it is). ADR 0022, 0040.
pub const SESSION_FILE_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most sessions a listing holds (the newest); ADR 0022.
pub const SESSIONS_LISTED_MAX: usize = 1_000;
/// The most unusable files a listing names one by one; ADR 0022.
pub const PROBLEMS_LISTED_MAX: usize = 20;

/// Why a session could not be saved, listed, locked or loaded. Each is a
/// chat entry (or a line on stderr for `dashfloat sessions`); the session
/// goes on, and a file that could not be used is left as it is.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The sessions directory could not be made or read.
    #[error("cannot use the sessions directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The OS's words.
        source: std::io::Error,
    },
    /// The session file could not be written.
    #[error("cannot save the session to {path}: {source}")]
    Write {
        /// The session file, as the message names it.
        path: PathBuf,
        /// The OS's words.
        source: std::io::Error,
    },
    /// The session could not be encoded (nothing in it should fail to).
    #[error("cannot encode the session: {0}")]
    Encode(serde_json::Error),
    /// The writer thread could not be started, or has stopped.
    #[error("the session writer is not running: {0}")]
    Writer(String),
    /// A session file could not be read.
    #[error("cannot read the session file {path}: {source}; it was left as it is and skipped")]
    Read {
        /// The session file, as the message names it.
        path: PathBuf,
        /// The OS's words.
        source: std::io::Error,
    },
    /// A session file is not a session this dashfloat can use.
    #[error("the session file {path} is damaged ({detail}); it was left as it is and skipped")]
    Corrupt {
        /// The session file, as the message names it.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A session file was written by a newer dashfloat.
    #[error(
        "the session file {path} was written by a newer dashfloat (schema {version}; this one reads up to {SCHEMA_VERSION}); it was left as it is and skipped"
    )]
    Newer {
        /// The session file, as the message names it.
        path: PathBuf,
        /// The schema version it holds.
        version: u32,
    },
    /// A session file is over [`SESSION_FILE_MAX_BYTES`].
    #[error(
        "the session file {path} is {bytes} bytes, over the {} MiB a session may have; it was left as it is and skipped",
        SESSION_FILE_MAX_BYTES >> 20
    )]
    TooLarge {
        /// The session file, as the message names it.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// The session grew past [`SESSION_FILE_MAX_BYTES`] and is not saved.
    #[error(
        "cannot save the session: it is {bytes} bytes, over the {} MiB a session may have; /compact or /clear to go on saving",
        SESSION_FILE_MAX_BYTES >> 20
    )]
    TooLargeToSave {
        /// Its encoded size.
        bytes: u64,
    },
    /// No session has that id.
    #[error("there is no saved session {id}; `dashfloat sessions --all` lists them")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The id is not one dashfloat makes (it could name another file).
    #[error("{id:?} is not a session id (they look like 20261201-081500-3fa2)")]
    BadId {
        /// The id given.
        id: String,
    },
    /// Another dashfloat process has the session open.
    #[error("session {id} is open in another dashfloat{}; close it there first", holder_hint(.holder))]
    Locked {
        /// The session.
        id: String,
        /// The pid the lock file names, if it names one.
        holder: Option<u32>,
    },
    /// The lock file could not be made or locked.
    #[error("cannot lock the session file {path}: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The OS's words.
        source: std::io::Error,
    },
}

fn holder_hint(holder: &Option<u32>) -> String {
    holder.map_or_else(String::new, |pid| format!(" (pid {pid})"))
}

/// How the agent opens its session at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OpenSession {
    /// A new session (the default).
    #[default]
    New,
    /// The latest session of this directory (`--continue`); a new one if
    /// there is none.
    Continue,
    /// The session with this id (`--resume ID`).
    Resume(String),
    /// A new session, and the saved ones listed for the picker
    /// (`--resume` without an id).
    Pick {
        /// Every directory's sessions, not only this one's (`--all`).
        all: bool,
    },
}

/// What the agent needs to save and open sessions.
#[derive(Debug, Clone)]
pub struct SessionSetup {
    /// Where the session files live.
    pub store: SessionStore,
    /// How to open the first session.
    pub open: OpenSession,
    /// Whether to write (`--no-save` and `save_sessions = false` turn it
    /// off; saved sessions can still be listed and resumed).
    pub save: bool,
    /// The project directory, as sessions record it and are matched by.
    pub directory: String,
    /// The provider's base URL (its credentials are stripped on saving).
    pub base_url: String,
}

/// A session as loaded from its files: the snapshot, the journal
/// replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedSession {
    /// Its id.
    pub id: String,
    /// The last journal record it holds (0: none).
    pub seq: u64,
    /// When it was created, in seconds since the Unix epoch.
    pub created: u64,
    /// When it was last saved.
    pub updated: u64,
    /// The project directory it ran in.
    pub directory: String,
    /// The model in use when it was saved.
    pub model: String,
    /// The provider's base URL, without credentials.
    pub base_url: String,
    /// The API its requests spoke: a conversation resumed on another has
    /// what only that wire reads taken out (ADR 0052).
    pub wire: Wire,
    /// The first prompt, cut short.
    pub title: String,
    /// Token counts summed over every request.
    pub usage: Usage,
    /// The last request's token counts, for the status bar.
    pub last_usage: Option<Usage>,
    /// The conversation (valid: every call answered).
    pub messages: Vec<Message>,
    /// What the log shows, oldest first.
    pub log: Vec<LogItem>,
    /// The place of the log's oldest item since the session began.
    pub log_first: u64,
    /// What the file tools changed, turn by turn (empty in a session saved
    /// before checkpoints).
    pub checkpoints: crate::tools::CheckpointLog,
    /// What of the journal could not be read and was left out (a crash
    /// while its last record was written), to be told when it is opened.
    pub damage: Option<JournalDamage>,
}

/// The saved sessions, and the files that could not be listed.
#[derive(Debug, Default)]
pub struct Listing {
    /// Newest first.
    pub sessions: Vec<SessionSummary>,
    /// A problem per file that was skipped, the first
    /// [`PROBLEMS_LISTED_MAX`].
    pub problems: Vec<SessionError>,
    /// Problems past those, only counted.
    pub more_problems: usize,
    /// Older sessions past [`SESSIONS_LISTED_MAX`], only counted.
    pub more_sessions: usize,
}

impl Listing {
    fn problem(&mut self, problem: SessionError) {
        if self.problems.len() < PROBLEMS_LISTED_MAX {
            self.problems.push(problem);
        } else {
            self.more_problems += 1;
        }
    }

    /// What was skipped or left out, one line each; empty when nothing.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        if self.more_problems > 0 {
            notes.push(format!(
                "{} more session files could not be used",
                self.more_problems
            ));
        }
        if self.more_sessions > 0 {
            notes.push(format!(
                "{} older sessions are not listed (the newest {SESSIONS_LISTED_MAX} are)",
                self.more_sessions
            ));
        }
        notes
    }
}

/// The directory of session files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    /// The store in `dir` (made, 0700, on the first save).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The default location: `$XDG_CONFIG_HOME/dashfloat/sessions`, else
    /// `~/.config/dashfloat/sessions`; `None` when neither variable is set.
    pub fn default_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        let base = env("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))?;
        Some(base.join("dashfloat").join("sessions"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The snapshot file of session `id`.
    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// The journal file of session `id`.
    pub fn journal_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.journal"))
    }

    /// The saved sessions, newest first: of `directory` only, or of every
    /// directory. A file that cannot be used is reported and skipped.
    pub fn list(&self, directory: Option<&str>) -> Listing {
        let mut listing = Listing::default();
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return listing,
            Err(source) => {
                listing.problem(SessionError::Dir {
                    path: self.dir.clone(),
                    source,
                });
                return listing;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            if !valid_id(id) {
                continue;
            }
            match file::read_summary(&path, &self.journal_of(id), id) {
                Ok(summary) => {
                    if directory.is_none_or(|d| d == summary.directory) {
                        listing.sessions.push(summary);
                    }
                }
                Err(problem) => listing.problem(problem),
            }
        }
        listing
            .sessions
            .sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| b.id.cmp(&a.id)));
        listing.more_sessions = listing.sessions.len().saturating_sub(SESSIONS_LISTED_MAX);
        listing.sessions.truncate(SESSIONS_LISTED_MAX);
        listing
    }

    /// Loads session `id`, whose conversation must be valid.
    pub fn load(&self, id: &str) -> Result<SavedSession, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        let path = self.path_of(id);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(SessionError::NotFound { id: id.to_string() })
            }
            _ => file::read_session(&path, &self.journal_of(id), id),
        }
    }

    /// Opens session `id` to go on with it: locked first when `lock` (so
    /// nobody writes it meanwhile), then loaded.
    pub fn open(
        &self,
        id: &str,
        lock: bool,
    ) -> Result<(SavedSession, Option<SessionLock>), SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        if !self.path_of(id).exists() {
            return Err(SessionError::NotFound { id: id.to_string() });
        }
        let lock = if lock { Some(self.lock(id)?) } else { None };
        Ok((self.load(id)?, lock))
    }

    /// Locks session `id` for this process: no other dashfloat writes it
    /// while the lock lives.
    pub fn lock(&self, id: &str) -> Result<SessionLock, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        file::make_dir(&self.dir)?;
        SessionLock::acquire(&self.dir.join(format!("{id}.lock")), id)
    }

    /// Writes an encoded session (see [`SessionRecord::encode`]) as session
    /// `id`'s snapshot, atomically: a crash leaves the old file or the new
    /// one, never a mix. Journal records up to the one it names are
    /// skipped from then on.
    pub fn write(&self, id: &str, bytes: &[u8]) -> Result<(), SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        if bytes.len() as u64 > SESSION_FILE_MAX_BYTES {
            return Err(SessionError::TooLargeToSave {
                bytes: bytes.len() as u64,
            });
        }
        file::make_dir(&self.dir)?;
        file::write_atomically(&self.dir, &self.path_of(id), bytes)
    }
}

/// A prompt as a session's title: one line, at most [`TITLE_MAX_CHARS`].
pub fn title_of(prompt: &str) -> String {
    let line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= TITLE_MAX_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(TITLE_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
