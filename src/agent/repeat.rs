//! The exact-repeat detector (ADR 0015): small models often make the
//! same call again and again. When one canonical call (as validated, its
//! path in a normal form; else its name and sorted arguments) is
//! seen for the 3rd, 5th and 8th time in a session, an advisory notice goes
//! into that call's result; when a repeat gives the very result the call
//! gave before, the model is told it is unchanged instead of reading it
//! again. Calls are never blocked, except that a call the person rejected
//! is not put to them again (and the stream drops copies past the third in
//! one reply, `llm::stream::REPLY_CALL_COPIES_MAX`); failed and rejected
//! calls count; a message from the person resets the counts.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value};

use crate::llm::tool_calls::call_key;
use crate::protocol::CallArguments;
use crate::tools::ToolCall;

/// The repeat counts at which a notice is added.
const REPEAT_THRESHOLDS: [u32; 3] = [3, 5, 8];
/// Distinct calls remembered per session; past this the counts restart, so
/// a very long session cannot grow the table without bound.
pub const REPEAT_MAX_KEYS: usize = 4096;

/// Counts of canonical calls since the person last wrote.
#[derive(Debug, Default)]
pub struct RepeatDetector {
    counts: HashMap<String, Seen>,
}

/// What is remembered of one canonical call.
#[derive(Debug, Default)]
struct Seen {
    count: u32,
    /// A hash of the result it last gave.
    result: Option<u64>,
    /// The person rejected it.
    rejected: bool,
}

/// One call as the detector counted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The canonical call, for [`RepeatDetector::unchanged`].
    pub key: String,
    /// The notice for its result, when its count reached a threshold.
    pub notice: Option<String>,
    /// How many times the call has been made since the person last
    /// wrote, this one included.
    pub count: u32,
}

impl Repeat {
    /// What the log tells the person when the model was told to stop
    /// repeating the call `name`: the model's notice speaks to the model.
    pub fn shown(&self, name: &str) -> Option<String> {
        self.notice.as_ref().map(|_| {
            format!(
                "the model made this same {name} call {} times since your last message; \
                 its result now tells it to stop and answer",
                self.count
            )
        })
    }
}

/// Until this many identical calls, a failed repeat is answered with its
/// whole error again (it says how to recover), not as unchanged: a small
/// model given only "unchanged" copies that into its answer. ADR 0015.
pub(crate) const FAILED_REPEAT_RETRIES: u32 = 2;

/// What a failed call made again reads beside its error.
pub const FAILED_REPEAT_NOTICE: &str = "this exact call failed the same way before; change what the error says to change, or answer the person";

impl RepeatDetector {
    /// Forgets every count (the person wrote a message).
    pub fn reset(&mut self) {
        self.counts.clear();
    }

    /// The key the call `name` with `arguments` is counted under, `valid`
    /// when it validated (as the round already did): the validated call's
    /// canonical form when it has one (`{}` and `{"path": "./"}` are one
    /// listing of the project); else its name and arguments, keys sorted
    /// (arguments that are no object count as `{}`).
    pub fn key(name: &str, arguments: &CallArguments, valid: Option<&ToolCall>) -> String {
        valid
            .and_then(ToolCall::canonical)
            .unwrap_or_else(|| match arguments {
                CallArguments::Json(object @ Value::Object(_)) => call_key(name, object),
                _ => call_key(name, &Value::Object(Map::new())),
            })
    }

    /// Counts one call of `name` by its [`key`](Self::key); with the
    /// notice for its result when the count reaches a threshold.
    pub fn record(&mut self, name: &str, key: String) -> Repeat {
        if self.counts.len() >= REPEAT_MAX_KEYS {
            self.counts.clear();
        }
        let seen = self.counts.entry(key.clone()).or_default();
        seen.count += 1;
        let n = seen.count;
        let notice = REPEAT_THRESHOLDS.contains(&n).then(|| {
            let advice = match n {
                3 => "do not make it again: answer the person now from the results you have",
                5 => "it gives the same result every time; stop calling tools and answer the person now",
                _ => "stop repeating this call: answer the person now, saying what you tried and what is missing",
            };
            format!("this exact call ({name} with the same arguments) has now been made {n} times since the person last wrote; {advice}")
        });
        Repeat {
            key,
            notice,
            count: n,
        }
    }

    /// Remembers that the person rejected the call `key`
    /// ([`Repeat::key`]), until they next write.
    pub fn reject(&mut self, key: &str) {
        if let Some(seen) = self.counts.get_mut(key) {
            seen.rejected = true;
        }
    }

    /// Whether the person rejected the call `key` since they last wrote:
    /// the same call is then not put to them again.
    pub fn rejected(&self, key: &str) -> bool {
        self.counts.get(key).is_some_and(|seen| seen.rejected)
    }

    /// Whether the call `key` ([`Repeat::key`]) gave this same result
    /// (`answer`, the text the model reads) the last time it was made;
    /// remembers `answer` for the next time.
    pub fn unchanged(&mut self, key: &str, answer: &str) -> bool {
        let mut hasher = DefaultHasher::new();
        answer.hash(&mut hasher);
        let hash = hasher.finish();
        self.counts
            .get_mut(key)
            .is_some_and(|seen| seen.result.replace(hash) == Some(hash))
    }
}
