//! A session's snapshot file: its JSON shape, the atomic write
//! (temporary file in the same directory, fsync, rename, fsync of the
//! directory) and the two reads — the summary a list needs (with the
//! journal's size and time, not its records) and the whole session, its
//! journal replayed. ADR 0022, 0040.

use std::path::Path;

use serde::de::IgnoredAny;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::llm::wire::Message;
use crate::llm::wires::Wire;
use crate::own_files::{self, ReadError};
use crate::protocol::{LogItem, SessionSummary, Usage};
use crate::tools::CheckpointLog;

use super::journal::{self, Chained};
use super::log::{SessionLog, Settled};
use super::{SESSION_FILE_MAX_BYTES, SavedSession, SessionError, check_conversation};

/// The schema version this dashfloat writes; it reads this one and older.
/// 2 (ADR 0040): a journal may follow the snapshot, which names the last
/// of its records it holds and where its log starts, and a checkpoint's
/// hash says which function made it. ADR 0022.
pub const SCHEMA_VERSION: u32 = 2;

/// A session to be written whole, as its snapshot, borrowed from the
/// agent's state (or from a session read back, to compact its journal).
#[derive(Debug)]
pub struct SessionRecord<'a> {
    /// Its id.
    pub id: &'a str,
    /// The last journal record it holds (0: none); the journal's next
    /// record is one more.
    pub seq: u64,
    /// When it was created, in seconds since the Unix epoch.
    pub created: u64,
    /// Now.
    pub updated: u64,
    /// The project directory.
    pub directory: &'a str,
    /// The model in use.
    pub model: &'a str,
    /// The provider's base URL; its credentials and query are dropped.
    pub base_url: &'a str,
    /// The API the requests spoke.
    pub wire: Wire,
    /// The first prompt, cut short.
    pub title: &'a str,
    /// Token counts summed over every request.
    pub usage: Usage,
    /// The last request's token counts.
    pub last_usage: Option<Usage>,
    /// The conversation.
    pub messages: &'a [Message],
    /// Messages that follow it in the file only: the answers of a round
    /// still in flight (calls not yet finished answered as cancelled).
    pub pending: &'a [Message],
    /// What the log shows, oldest first.
    pub log: &'a [LogItem],
    /// The place of the log's oldest item since the session began
    /// ([`SessionLog::first`]).
    pub log_first: u64,
    /// What the file tools changed, turn by turn, for `/undo` (ADR 0035).
    pub checkpoints: &'a CheckpointLog,
}

/// The file's shape as written.
#[derive(Serialize)]
struct FileOut<'a> {
    version: u32,
    id: &'a str,
    seq: u64,
    created: u64,
    updated: u64,
    directory: &'a str,
    model: &'a str,
    base_url: &'a str,
    wire: Wire,
    title: &'a str,
    usage: Usage,
    last_usage: Option<Usage>,
    messages: Chained<'a>,
    log: SavedLog<'a>,
    log_first: u64,
    checkpoints: &'a CheckpointLog,
}

/// The file's shape as read whole.
#[derive(Deserialize)]
struct FileIn {
    #[serde(default)]
    seq: u64,
    created: u64,
    updated: u64,
    directory: String,
    model: String,
    base_url: String,
    /// A session saved before wires were recorded spoke chat.
    #[serde(default)]
    wire: Wire,
    title: String,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    last_usage: Option<Usage>,
    messages: Vec<Message>,
    #[serde(default)]
    log: Vec<LogItem>,
    #[serde(default)]
    log_first: u64,
    /// A session saved before checkpoints has none, and may have run
    /// any command.
    #[serde(default = "CheckpointLog::before_checkpoints")]
    checkpoints: CheckpointLog,
}

/// What a list needs; the conversation and the log are skipped unread.
#[derive(Deserialize)]
struct SummaryIn {
    version: u32,
    updated: u64,
    directory: String,
    title: String,
    #[serde(rename = "messages")]
    _messages: IgnoredAny,
}

/// The version alone, to tell a newer schema from a damaged file.
#[derive(Deserialize)]
struct VersionIn {
    version: u32,
}

/// The log as saved: each item [`Settled`].
struct SavedLog<'a>(&'a [LogItem]);

impl Serialize for SavedLog<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(Settled))
    }
}

impl SessionRecord<'_> {
    /// The file's bytes. The base URL loses its userinfo and query (where
    /// a key may ride); no key or header value is ever part of a record.
    pub fn encode(&self) -> Result<Vec<u8>, SessionError> {
        let base_url = crate::base_url::kept(self.base_url);
        serde_json::to_vec(&FileOut {
            version: SCHEMA_VERSION,
            id: self.id,
            seq: self.seq,
            created: self.created,
            updated: self.updated,
            directory: self.directory,
            model: self.model,
            base_url: &base_url,
            wire: self.wire,
            title: self.title,
            usage: self.usage,
            last_usage: self.last_usage,
            messages: Chained(self.messages, self.pending),
            log: SavedLog(self.log),
            log_first: self.log_first,
            checkpoints: self.checkpoints,
        })
        .map_err(SessionError::Encode)
    }
}

impl SavedSession {
    /// The session as its snapshot writes it.
    pub fn record(&self) -> SessionRecord<'_> {
        SessionRecord {
            id: &self.id,
            seq: self.seq,
            created: self.created,
            updated: self.updated,
            directory: &self.directory,
            model: &self.model,
            base_url: &self.base_url,
            wire: self.wire,
            title: &self.title,
            usage: self.usage,
            last_usage: self.last_usage,
            messages: &self.messages,
            pending: &[],
            log: &self.log,
            log_first: self.log_first,
            checkpoints: &self.checkpoints,
        }
    }
}

/// Makes the sessions directory (and its parents) if missing, owner-only.
pub(super) fn make_dir(dir: &Path) -> Result<(), SessionError> {
    own_files::make_dir(dir).map_err(|source| SessionError::Dir {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` atomically, through a temporary file in `dir`
/// ([`own_files::write_atomically`]).
pub(super) fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    own_files::write_atomically(dir, path, bytes, ".session-").map_err(|source| {
        SessionError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// The file's bytes, refused past [`SESSION_FILE_MAX_BYTES`] (a file
/// growing while read is cut there, and then fails to parse).
fn read_bytes(path: &Path) -> Result<Vec<u8>, SessionError> {
    read_bytes_if_any(path)?.ok_or_else(|| SessionError::Read {
        path: path.to_path_buf(),
        source: std::io::ErrorKind::NotFound.into(),
    })
}

/// The same, `None` when there is no file. Non-blocking, so a FIFO named
/// like a session cannot hang the listing; anything but a regular file is
/// refused.
fn read_bytes_if_any(path: &Path) -> Result<Option<Vec<u8>>, SessionError> {
    own_files::read_bounded(path, SESSION_FILE_MAX_BYTES).map_err(|e| match e {
        ReadError::Io(source) => SessionError::Read {
            path: path.to_path_buf(),
            source,
        },
        ReadError::TooLarge(bytes) => SessionError::TooLarge {
            path: path.to_path_buf(),
            bytes,
        },
    })
}

/// Why `bytes` did not parse: a newer schema, or damage.
fn unreadable(path: &Path, bytes: &[u8], error: &serde_json::Error) -> SessionError {
    match serde_json::from_slice::<VersionIn>(bytes) {
        Ok(v) if v.version > SCHEMA_VERSION => SessionError::Newer {
            path: path.to_path_buf(),
            version: v.version,
        },
        _ => SessionError::Corrupt {
            path: path.to_path_buf(),
            detail: error.to_string(),
        },
    }
}

fn check_version(path: &Path, version: u32) -> Result<(), SessionError> {
    if version > SCHEMA_VERSION {
        return Err(SessionError::Newer {
            path: path.to_path_buf(),
            version,
        });
    }
    Ok(())
}

/// The summary of the session whose snapshot is at `path` and journal at
/// `journal`: the snapshot's, updated when the journal was last written,
/// its size both files'. The journal's records are not read.
pub(super) fn read_summary(
    path: &Path,
    journal: &Path,
    id: &str,
) -> Result<SessionSummary, SessionError> {
    let bytes = read_bytes(path)?;
    let summary: SummaryIn =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(path, &bytes, &e))?;
    check_version(path, summary.version)?;
    let (journal_bytes, written) = match std::fs::metadata(journal) {
        Ok(meta) if meta.len() > 0 => {
            let secs = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            (meta.len(), secs)
        }
        _ => (0, 0),
    };
    Ok(SessionSummary {
        id: id.to_string(),
        title: summary.title,
        directory: summary.directory,
        updated: summary.updated.max(written),
        bytes: bytes.len() as u64 + journal_bytes,
    })
}

/// The whole session whose snapshot is at `path`, its journal at
/// `journal` replayed (what could not be is left out, and said in
/// [`SavedSession::damage`]); its conversation must be valid.
pub(super) fn read_session(
    path: &Path,
    journal: &Path,
    id: &str,
) -> Result<SavedSession, SessionError> {
    let bytes = read_bytes(path)?;
    let version: VersionIn =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(path, &bytes, &e))?;
    check_version(path, version.version)?;
    let file: FileIn = serde_json::from_slice(&bytes).map_err(|e| unreadable(path, &bytes, &e))?;
    let journal = read_bytes_if_any(journal)?.unwrap_or_default();
    let mut log = SessionLog::read(file.log, file.log_first);
    let mut session = SavedSession {
        id: id.to_string(),
        seq: file.seq,
        created: file.created,
        updated: file.updated,
        directory: file.directory,
        model: file.model,
        base_url: file.base_url,
        wire: file.wire,
        title: file.title,
        usage: file.usage,
        last_usage: file.last_usage,
        messages: file.messages,
        log: Vec::new(),
        log_first: 0,
        checkpoints: file.checkpoints,
        damage: None,
    };
    session.damage = journal::replay(&mut session, &mut log, &journal);
    session.log_first = log.first();
    session.log = log.into_items();
    check_conversation(&session.messages).map_err(|e| SessionError::Corrupt {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    Ok(session)
}
