//! A session's journal: `<id>.journal` beside its snapshot `<id>.json`,
//! one line appended (and fsync'd) per save, saying what that save
//! changed: the conversation from an index on, the log's new and changed
//! items, the checkpoints' changes, the usage and the model. A reader
//! loads the snapshot and replays the lines in order (ADR 0040).
//!
//! A line is `<checksum> <record>\n`: the record's XXH3-64 in 16 hex
//! digits, a space, the record as one line of JSON (JSON escapes every
//! line break within it, so the newline ends the record), a newline.
//! Each record carries its number, one more than the record before; the
//! snapshot names the last record it holds, and records up to it are
//! skipped (a crash between writing a new snapshot and emptying the
//! journal leaves them behind). Replay stops at the first line that is
//! cut short (a crash or `kill -9` while it was written), fails its
//! checksum, does not parse, does not follow the record before, or does
//! not apply: every later record depends on it. What was read before it
//! is the session; what was left out is said.

use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::llm::wire::Message;
use crate::llm::wires::Wire;
use crate::protocol::Usage;
use crate::stable_hash::checksum;
use crate::tools::CheckpointOp;

use super::log::{LogDelta, LogDeltaIn, SessionLog};
use super::{SavedSession, SessionError};

/// What one save changed, borrowed from the agent's state, to be
/// appended to the journal as one record.
#[derive(Debug)]
pub struct StepRecord<'a> {
    /// Its number: one more than the last record's (or the snapshot's).
    pub seq: u64,
    /// Now, in seconds since the Unix epoch.
    pub updated: u64,
    /// The model in use.
    pub model: &'a str,
    /// The provider's base URL; its credentials and query are dropped.
    pub base_url: &'a str,
    /// The API the requests speak.
    pub wire: Wire,
    /// The project directory.
    pub directory: &'a str,
    /// Token counts summed over every request.
    pub usage: Usage,
    /// The last request's token counts.
    pub last_usage: Option<Usage>,
    /// The conversation from `at` on, when anything there changed.
    pub tail: Option<Tail<'a>>,
    /// The log's new and changed items.
    pub log: &'a SessionLog,
    /// The checkpoints' changes, in the order they were made.
    pub checkpoints: &'a [CheckpointOp],
}

/// The conversation from index `at` on, as the files are to hold it:
/// everything the files held from there is replaced by `messages`, then
/// `pending` (the answers of a round in flight, a call not yet finished
/// answered as cancelled).
#[derive(Debug, Clone, Copy)]
pub struct Tail<'a> {
    /// Where the files' conversation is cut.
    pub at: usize,
    /// The conversation's messages from `at` on.
    pub messages: &'a [Message],
    /// The round's answers that follow them in the files only.
    pub pending: &'a [Message],
}

/// A record as written.
#[derive(Serialize)]
struct RecordOut<'a> {
    seq: u64,
    updated: u64,
    model: &'a str,
    base_url: &'a str,
    wire: Wire,
    directory: &'a str,
    usage: Usage,
    last_usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tail: Option<TailOut<'a>>,
    log: LogDelta<'a>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checkpoints: &'a [CheckpointOp],
}

#[derive(Serialize)]
struct TailOut<'a> {
    at: usize,
    messages: Chained<'a>,
}

/// Two message slices written as one array.
pub(super) struct Chained<'a>(pub(super) &'a [Message], pub(super) &'a [Message]);

impl Serialize for Chained<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().chain(self.1))
    }
}

/// A record as read.
#[derive(Deserialize)]
struct RecordIn {
    seq: u64,
    updated: u64,
    model: String,
    base_url: String,
    #[serde(default)]
    wire: Wire,
    directory: String,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    last_usage: Option<Usage>,
    #[serde(default)]
    tail: Option<TailIn>,
    log: LogDeltaIn,
    #[serde(default)]
    checkpoints: Vec<CheckpointOp>,
}

#[derive(Deserialize)]
struct TailIn {
    at: usize,
    messages: Vec<Message>,
}

impl StepRecord<'_> {
    /// The journal line: checksum, record, newline. The base URL loses
    /// its userinfo and query, as in the snapshot.
    pub fn encode(&self) -> Result<Vec<u8>, SessionError> {
        let base_url = crate::base_url::kept(self.base_url);
        let record = RecordOut {
            seq: self.seq,
            updated: self.updated,
            model: self.model,
            base_url: &base_url,
            wire: self.wire,
            directory: self.directory,
            usage: self.usage,
            last_usage: self.last_usage,
            tail: self.tail.map(|tail| TailOut {
                at: tail.at,
                messages: Chained(tail.messages, tail.pending),
            }),
            log: self.log.delta(),
            checkpoints: self.checkpoints,
        };
        // Room for the checksum and the space before the record.
        let mut line = b"0123456789abcdef ".to_vec();
        serde_json::to_writer(&mut line, &record).map_err(SessionError::Encode)?;
        let sum = format!("{:016x}", checksum(&line[CHECKSUM_HEX + 1..]));
        line[..CHECKSUM_HEX].copy_from_slice(sum.as_bytes());
        line.push(b'\n');
        Ok(line)
    }
}

/// The hex digits of a line's checksum.
const CHECKSUM_HEX: usize = 16;

/// Why a journal's records from some point on were left out of the
/// session read from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalDamage {
    /// The bytes left out, from the first unusable line to the end.
    pub bytes: u64,
    /// What was wrong with that line.
    pub why: String,
}

impl std::fmt::Display for JournalDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "its last save was not read whole ({}): the {} bytes from there on were left out; everything saved before is here",
            self.why, self.bytes
        )
    }
}

/// Replays the journal `bytes` onto `session` (its snapshot) and `log`
/// (the snapshot's log): every record after the snapshot's, in order,
/// until the end or the first that cannot be used, which is returned with
/// what followed it.
pub(super) fn replay(
    session: &mut SavedSession,
    log: &mut SessionLog,
    bytes: &[u8],
) -> Option<JournalDamage> {
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let damage = |why: String| {
            Some(JournalDamage {
                bytes: rest.len() as u64,
                why,
            })
        };
        let Some(end) = memchr::memchr(b'\n', rest) else {
            return damage(
                "the last record was cut short, as a crash while saving leaves it".into(),
            );
        };
        let line = &rest[..end];
        let record = match parse(line) {
            Ok(record) => record,
            Err(why) => return damage(why),
        };
        if record.seq > session.seq {
            if record.seq != session.seq + 1 {
                return damage(format!(
                    "record {} follows record {}",
                    record.seq, session.seq
                ));
            }
            if let Err(why) = apply(session, log, record) {
                return damage(why);
            }
        }
        at += end + 1;
    }
    None
}

/// A line's record, its checksum checked.
fn parse(line: &[u8]) -> Result<RecordIn, String> {
    let (sum, json) = match line.split_at_checked(CHECKSUM_HEX) {
        Some((sum, rest)) if rest.first() == Some(&b' ') => (sum, &rest[1..]),
        _ => return Err("a record has no checksum".into()),
    };
    let sum = std::str::from_utf8(sum)
        .ok()
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .ok_or("a record has no checksum")?;
    if sum != checksum(json) {
        return Err("a record's checksum does not match its bytes".into());
    }
    serde_json::from_slice(json).map_err(|e| format!("a record does not parse: {e}"))
}

/// One record's changes made to the session.
fn apply(session: &mut SavedSession, log: &mut SessionLog, record: RecordIn) -> Result<(), String> {
    if let Some(tail) = record.tail {
        if tail.at > session.messages.len() {
            return Err(format!(
                "record {} replaces the conversation from message {}, past its {}",
                record.seq,
                tail.at,
                session.messages.len()
            ));
        }
        session.messages.truncate(tail.at);
        session.messages.extend(tail.messages);
    }
    log.apply(record.log)?;
    for op in record.checkpoints {
        session.checkpoints.apply(op);
    }
    session.seq = record.seq;
    session.updated = record.updated;
    session.model = record.model;
    session.base_url = record.base_url;
    session.wire = record.wire;
    session.directory = record.directory;
    session.usage = record.usage;
    session.last_usage = record.last_usage;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::llm::wire::Role;
    use crate::protocol::LogItem;
    use crate::tools::CheckpointLog;

    fn snapshot() -> SavedSession {
        SavedSession {
            id: "20261205-000000-aaaaaa".into(),
            seq: 0,
            created: 1,
            updated: 1,
            directory: "/p".into(),
            model: "m".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            wire: Wire::Chat,
            title: "t".into(),
            usage: Usage::default(),
            last_usage: None,
            messages: vec![Message::new(Role::System, "s")],
            log: Vec::new(),
            log_first: 0,
            checkpoints: CheckpointLog::default(),
            damage: None,
        }
    }

    /// A journal of one prompt and one reply per record, `records` of
    /// them, as the agent writes it.
    fn journal(records: u64) -> Vec<u8> {
        let mut messages = vec![Message::new(Role::System, "s")];
        let mut log = SessionLog::default();
        let mut out = Vec::new();
        for seq in 1..=records {
            let at = messages.len();
            messages.push(Message::new(Role::User, format!("prompt {seq}")));
            messages.push(Message::new(Role::Assistant, format!("reply {seq}")));
            log.push(LogItem::User(format!("prompt {seq}")));
            let line = StepRecord {
                seq,
                updated: 100 + seq,
                model: "m",
                base_url: "http://alice:secret@127.0.0.1:1/v1?key=k",
                wire: Wire::Anthropic,
                directory: "/p",
                usage: Usage::default(),
                last_usage: None,
                tail: Some(Tail {
                    at,
                    messages: &messages[at..],
                    pending: &[],
                }),
                log: &log,
                checkpoints: &[],
            }
            .encode()
            .unwrap();
            log.saved_all();
            out.extend(line);
        }
        out
    }

    fn replayed(bytes: &[u8]) -> (SavedSession, Option<JournalDamage>) {
        let mut session = snapshot();
        let mut log = SessionLog::read(Vec::new(), 0);
        let damage = replay(&mut session, &mut log, bytes);
        session.log = log.into_items();
        (session, damage)
    }

    #[test]
    fn every_record_is_replayed_in_order() {
        let (session, damage) = replayed(&journal(3));
        assert_eq!(damage, None);
        assert_eq!(session.seq, 3);
        assert_eq!(session.updated, 103);
        assert_eq!(session.messages.len(), 7);
        assert_eq!(session.messages[6].content.as_deref(), Some("reply 3"));
        assert_eq!(session.log.len(), 3);
        // The base URL is kept without what could carry a key.
        assert_eq!(session.base_url, "http://127.0.0.1:1/v1");
    }

    #[test]
    fn a_last_record_cut_short_is_left_out_and_said() {
        let whole = journal(3);
        let two = journal(2).len();
        for cut in [two + 1, two + 20, whole.len() - 1] {
            let (session, damage) = replayed(&whole[..cut]);
            assert_eq!(session.seq, 2, "cut at {cut}");
            assert_eq!(session.messages.len(), 5);
            let damage = damage.unwrap();
            assert_eq!(damage.bytes, (cut - two) as u64);
            assert!(damage.why.contains("cut short"), "{damage}");
        }
    }

    #[test]
    fn replay_stops_at_a_damaged_record_and_keeps_what_came_before() {
        let whole = journal(3);
        let one = journal(1).len();
        // A byte of the second record's JSON changed.
        let mut flipped = whole.clone();
        flipped[one + 30] ^= 1;
        let (session, damage) = replayed(&flipped);
        assert_eq!(session.seq, 1);
        assert!(damage.unwrap().why.contains("checksum"));
        // The second record lost: the third does not follow the first.
        let mut gap = journal(1);
        gap.extend(&whole[journal(2).len()..]);
        let (session, damage) = replayed(&gap);
        assert_eq!(session.seq, 1);
        assert!(damage.unwrap().why.contains("follows"));
    }

    #[test]
    fn records_the_snapshot_holds_already_are_skipped() {
        let mut session = snapshot();
        session.seq = 2;
        session.messages = replayed(&journal(2)).0.messages;
        let mut log = SessionLog::read(Vec::new(), 0);
        let damage = replay(&mut session, &mut log, &journal(3));
        assert_eq!(damage, None);
        assert_eq!(session.seq, 3);
        assert_eq!(session.messages.len(), 7);
    }
}
