//! Assembles the streamed `choices[0].delta.tool_calls` fragments of one
//! episode into whole calls (ADR 0007 §1). Pure: no I/O, no async, no
//! clock; it never panics, whatever the server sends.
//!
//! How fragments find their call, in this order:
//!
//! 1. **A known id names its call.** A fragment carrying a provider id this
//!    episode has already seen goes to that call, whatever its `index` says.
//! 2. **Otherwise the `index` picks the call**: the call most recently
//!    addressed at that index. A fragment without an `index` (some servers
//!    omit it for a single call) uses the index of the call the previous
//!    fragment went to, or 0 for the first fragment.
//! 3. **A new id or a new name starts a new call** at that index instead.
//!    Some servers send every parallel call with index 0 and tell them apart
//!    only by their `id`; others (whole calls per chunk, no index, no id)
//!    only by their name. So a fragment whose `id` differs from the call's,
//!    or which carries *no* id and names a different function than the call
//!    already has, is the first fragment of the next call — not a conflict;
//!    so is one without an id that names the same function and opens an
//!    object of arguments when the call's arguments are a whole JSON value
//!    already (two whole calls to one tool).
//!    A different name on a fragment carrying the call's own id is a
//!    conflict: [`CallError::ConflictingName`], for that call only.
//!
//! Within a call, `type` and `function.name` are set once: a repeat of the
//! same value is ignored, a different value is recorded as the call's error
//! (the first conflict wins, so a flood of them holds no memory) and
//! surfaces from [`ToolCallAccumulator::finish`]. `arguments` pieces are
//! concatenated as text; they are parsed only at the end, because a piece
//! may end anywhere — inside a string, inside an escape like `\u00e9`.
//! An empty string in `id`, `type` or `name` counts as absent (some
//! compatibility layers send `"id": ""`), and a fragment that carries no
//! id, no name and no arguments never starts a call.
//!
//! A call's id is fixed when the call starts: the provider's if the first
//! fragment carries one (llama.cpp and vLLM send it only there), otherwise a
//! made-up one ([`MadeUpIds`]) for `n`, the call's position in the episode
//! (0-based, order of first appearance). It depends only on that order, so
//! it is the same however the stream was split, and the tool result can
//! echo it. The agent gives each episode its own [`MadeUpIds`] with
//! [`ToolCallAccumulator::with_ids`], to keep ids unique across the
//! episodes of a conversation. A provider that sends the id only on a
//! *later* fragment is not supported: that fragment starts a new call. No
//! two calls share an id: a made-up id already taken (a provider sent it
//! first) moves on to the next number's, and a provider id equal to one
//! already given is answered under a made-up one, its fragments still
//! finding the call by the provider's id (found by fuzzing, ADR 0036).
//!
//! `finish_reason` is not this module's business: calls that end with
//! `stop`, `length`, no finish reason at all, or only at `[DONE]` are
//! assembled the same way. Whether to run them is the agent's decision.
//!
//! Bounds (ADR 0007 §2): at most [`MAX_TOOL_CALLS`] distinct calls per
//! episode; the bytes taken in are reported by [`ToolCallAccumulator::feed`]
//! so the caller can charge them to the episode's 4 MiB budget
//! ([`REPLY_MAX_BYTES`](super::stream::REPLY_MAX_BYTES)) alongside content.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::protocol::{CallArguments, ToolCallRequest};

use super::wire::WireToolCallDelta;

/// ADR 0007 §2: distinct tool calls one episode may start. The cap counts
/// calls, not fragments (one call split into a thousand fragments is one
/// call), so an endpoint that keeps announcing calls cannot grow memory or
/// the confirmation queue without bound.
pub const MAX_TOOL_CALLS: usize = 64;

/// Length of every id dashfloat makes up.
pub const MADE_UP_ID_LEN: usize = 9;

/// Base-36 digits of the episode in a made-up id.
const EPISODE_DIGITS: u32 = 6;
/// Base-36 digits of the call's number in a made-up id: room for
/// [`MAX_TOOL_CALLS`] and as many moved on from ids already taken.
const NUMBER_DIGITS: u32 = 2;

/// The ids dashfloat makes up within one episode: for calls a server sent
/// without one, and for the reads of the files a prompt names (ADR 0038).
/// Each is [`MADE_UP_ID_LEN`] lower-case letters and digits (a letter for
/// the kind, the episode, the call's number, in base 36): the one form
/// every provider takes, as Mistral's API and its chat templates refuse
/// any id but 9 letters and digits (ADR 0038).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MadeUpIds {
    kind: char,
    episode: u64,
}

impl MadeUpIds {
    /// For the calls of model request `episode` that came without an id.
    pub fn calls(episode: u64) -> Self {
        Self { kind: 'c', episode }
    }

    /// For the reads of the files named by the prompt whose first request
    /// is `episode`.
    pub fn attached(episode: u64) -> Self {
        Self { kind: 'a', episode }
    }

    /// The id of call `n` (past the digits' room, it wraps).
    pub fn nth(&self, n: usize) -> String {
        let mut id = String::with_capacity(MADE_UP_ID_LEN);
        id.push(self.kind);
        push_base36(&mut id, self.episode, EPISODE_DIGITS);
        push_base36(&mut id, n as u64, NUMBER_DIGITS);
        id
    }

    /// The id given to the `i`th call of a resumed session whose id was
    /// made up in the old form ([`MadeUpIds::is_old_form`]): `r` and
    /// `i` in base 36, unique for any `i`, never taken for an episode's.
    pub fn renewed(i: usize) -> String {
        let per_episode = 36usize.pow(NUMBER_DIGITS);
        Self {
            kind: 'r',
            episode: (i / per_episode) as u64,
        }
        .nth(i % per_episode)
    }

    /// Whether `id` was made up in the form of sessions saved before this
    /// one, `call_<episode>_…`, which Mistral refuses.
    pub fn is_old_form(id: &str) -> bool {
        id.strip_prefix("call_")
            .and_then(|rest| rest.split_once('_'))
            .is_some_and(|(episode, _)| {
                !episode.is_empty() && episode.bytes().all(|b| b.is_ascii_digit())
            })
    }

    /// The episode a made-up id was made in; `None` for an id of another
    /// form (most of a provider's own).
    pub fn episode_of(id: &str) -> Option<u64> {
        let digits = id.strip_prefix(['c', 'a'])?;
        let is_ours = id.len() == MADE_UP_ID_LEN
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
        is_ours
            .then(|| u64::from_str_radix(&digits[..EPISODE_DIGITS as usize], 36).ok())
            .flatten()
    }
}

/// Appends the last `digits` base-36 digits of `value`, lower case.
fn push_base36(out: &mut String, value: u64, digits: u32) {
    for place in (0..digits).rev() {
        let digit = (value / 36u64.pow(place) % 36) as u32;
        out.push(char::from_digit(digit, 36).unwrap_or('0'));
    }
}

/// Why the episode must be aborted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccumulatorError {
    /// The server started one call more than [`MAX_TOOL_CALLS`].
    #[error("the model started more than {limit} tool calls in one reply; the reply was stopped")]
    TooManyCalls {
        /// The cap that was hit ([`MAX_TOOL_CALLS`]).
        limit: usize,
    },
}

/// Why one assembled call cannot be run. The text is what the model (as
/// the tool result) and the person (in the log) read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The concatenated arguments are not JSON (cut off, or malformed).
    #[error("the arguments are not valid JSON: {detail}")]
    InvalidJson {
        /// serde_json's message, with line and column.
        detail: String,
        /// 1-based line of the error in the arguments text.
        line: usize,
        /// 1-based column of the error in the arguments text.
        column: usize,
    },
    /// The arguments are JSON, but not an object.
    #[error("the arguments are {found}, not a JSON object")]
    NotAnObject {
        /// What they are instead: `null`, `a boolean`, `a number`,
        /// `a string` or `an array`.
        found: &'static str,
        /// The value, which the tool's schema refuses, naming what it is.
        value: Value,
    },
    /// No fragment of the call carried a function name.
    #[error("the call has no function name")]
    MissingName,
    /// Fragments carrying the call's own id named two functions.
    #[error("the call was named both `{first}` and `{then}`")]
    ConflictingName {
        /// The name set first (the one reported).
        first: String,
        /// The conflicting name that came later.
        then: String,
    },
    /// Fragments of the call carried two different `type`s.
    #[error("the call's type was both `{first}` and `{then}`")]
    ConflictingType {
        /// The type set first.
        first: String,
        /// The conflicting type that came later.
        then: String,
    },
}

/// A call whose name is known, as it stands mid-stream: what the agent must
/// answer with a tool result even if the stream then fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnouncedCall<'a> {
    /// The provider's id, or the synthesised one.
    pub id: &'a str,
    /// The function name.
    pub name: &'a str,
    /// The arguments text received so far (possibly incomplete JSON).
    pub arguments: &'a str,
}

/// One call at the end of the episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledCall {
    /// The provider's id, or the synthesised one; the tool result echoes it.
    pub id: String,
    /// The function name; empty when the server never sent one (then
    /// `parsed` is [`CallError::MissingName`]).
    pub name: String,
    /// The arguments text exactly as streamed.
    pub arguments: String,
    /// The arguments as a JSON object (empty or whitespace-only arguments
    /// read as `{}`, for tools without required parameters), or why the call
    /// cannot be run.
    pub parsed: Result<Map<String, Value>, CallError>,
}

/// Assembles the tool-call fragments of one episode (one streamed reply).
/// Feed it every chunk's `delta.tool_calls`, then [`finish`](Self::finish)
/// it. See the module documentation for the merge rules.
#[derive(Debug, Clone)]
pub struct ToolCallAccumulator {
    /// Calls in order of first appearance.
    calls: Vec<PartialCall>,
    /// Per stream index, the position of the call last addressed there.
    current: HashMap<u32, usize>,
    /// The position of the call the previous fragment went to.
    last: Option<usize>,
    /// Bytes of ids, types, names and arguments taken in so far.
    bytes: usize,
    /// The ids made up for calls that come without one.
    ids: MadeUpIds,
}

#[derive(Debug, Clone)]
struct PartialCall {
    index: u32,
    /// The id the call is answered under: unique in the episode.
    id: String,
    /// The id the provider gave, which routes its later fragments.
    provider_id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: String,
    /// The arguments parsed, and how long they were then: parsed once,
    /// the first time the stream needs them whole (the loop stop, a
    /// server that sends whole calls), and kept for the end of the
    /// episode while nothing is added to them.
    json: Option<(usize, Result<Value, CallError>)>,
    /// The first conflict seen; it makes the call unrunnable.
    conflict: Option<CallError>,
}

/// A wire fragment with empty strings read as absent.
struct Fragment<'a> {
    index: Option<u32>,
    id: Option<&'a str>,
    kind: Option<&'a str>,
    name: Option<&'a str>,
    arguments: &'a str,
}

impl<'a> From<&'a WireToolCallDelta> for Fragment<'a> {
    fn from(wire: &'a WireToolCallDelta) -> Self {
        let present = |s: &'a Option<String>| s.as_deref().filter(|s| !s.is_empty());
        let function = wire.function.as_ref();
        Self {
            index: wire.index,
            id: present(&wire.id),
            kind: present(&wire.kind),
            name: function.and_then(|f| present(&f.name)),
            arguments: function.and_then(|f| f.arguments.as_deref()).unwrap_or(""),
        }
    }
}

impl Fragment<'_> {
    /// Bytes charged to the episode budget. Ids, types and names count on
    /// every fragment that repeats them — conservative headroom (ADR 0007
    /// §2), since a server may repeat them each time.
    fn byte_len(&self) -> usize {
        [self.id, self.kind, self.name]
            .iter()
            .flatten()
            .map(|s| s.len())
            .fold(self.arguments.len(), usize::saturating_add)
    }

    /// Carries nothing that could start a call.
    fn is_hollow(&self) -> bool {
        self.id.is_none() && self.name.is_none() && self.arguments.is_empty()
    }
}

impl Default for ToolCallAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolCallAccumulator {
    /// An empty accumulator for one episode, the first of its
    /// conversation.
    pub fn new() -> Self {
        Self::with_ids(MadeUpIds::calls(0))
    }

    /// An empty accumulator that makes up `ids` for calls without one: the
    /// agent passes each episode's, so that ids stay unique across a
    /// whole conversation.
    pub fn with_ids(ids: MadeUpIds) -> Self {
        Self {
            calls: Vec::new(),
            current: HashMap::new(),
            last: None,
            bytes: 0,
            ids,
        }
    }

    /// Merges one chunk's `delta.tool_calls` fragments, in order. Returns the
    /// bytes of ids, types, names and argument pieces taken in, for the
    /// caller to add to the episode's byte budget alongside content.
    ///
    /// Errs when a fragment would start call number [`MAX_TOOL_CALLS`] + 1:
    /// the episode must be aborted. Fragments before it are merged; it and
    /// the rest of the slice are dropped; the calls already started stay
    /// [`announced`](Self::announced) so the agent can answer them.
    pub fn feed(&mut self, fragments: &[WireToolCallDelta]) -> Result<usize, AccumulatorError> {
        let mut taken: usize = 0;
        for wire in fragments {
            let fragment = Fragment::from(wire);
            let Some(position) = self.route(&fragment)? else {
                continue;
            };
            let len = fragment.byte_len();
            taken = taken.saturating_add(len);
            self.bytes = self.bytes.saturating_add(len);
            if let Some(call) = self.calls.get_mut(position) {
                call.merge(&fragment);
            }
        }
        Ok(taken)
    }

    /// Total bytes [`feed`](Self::feed) has reported this episode.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Calls whose name is known, in order of first appearance, with their
    /// arguments so far. The agent must answer every one of them if the
    /// stream fails now.
    pub fn announced(&self) -> Vec<AnnouncedCall<'_>> {
        self.calls
            .iter()
            .filter_map(|call| {
                Some(AnnouncedCall {
                    id: &call.id,
                    name: call.name.as_deref()?,
                    arguments: &call.arguments,
                })
            })
            .collect()
    }

    /// Calls started so far, named or not.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// No call has started: the episode is plain text so far.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The name and arguments of the call `id` when its arguments are a
    /// whole JSON object now; `None` while they are not one (still being
    /// written, or malformed). Parsed once: [`finish`](Self::finish)
    /// takes the same value unless more arguments arrive since.
    pub fn whole_arguments(&mut self, id: &str) -> Option<(&str, &Value)> {
        let call = self.calls.iter_mut().find(|call| call.id == id)?;
        let name = call.name.as_deref()?;
        match parsed_once(&mut call.json, &call.arguments) {
            Ok(value @ Value::Object(_)) => Some((name, value)),
            _ => None,
        }
    }

    /// Ends the episode: every call started, in order of first appearance,
    /// with its arguments parsed into a JSON object or the precise reason
    /// it cannot be run.
    pub fn finish(self) -> Vec<AssembledCall> {
        self.calls.into_iter().map(PartialCall::assemble).collect()
    }

    /// The position of the call `fragment` belongs to, starting one if it
    /// is new; `None` for a hollow fragment that addresses no call.
    fn route(&mut self, fragment: &Fragment<'_>) -> Result<Option<usize>, AccumulatorError> {
        if let Some(id) = fragment.id {
            let known = self
                .calls
                .iter()
                .position(|call| call.provider_id.as_deref() == Some(id));
            if let Some(position) = known {
                return Ok(Some(self.address(position)));
            }
        }
        let index = fragment
            .index
            .or_else(|| self.last.and_then(|p| self.calls.get(p)).map(|c| c.index))
            .unwrap_or(0);
        let current = self
            .current
            .get(&index)
            .copied()
            .filter(|&p| p < self.calls.len());
        let starts_new = match current.and_then(|p| self.calls.get_mut(p)) {
            None => true,
            Some(call) => match (fragment.id, fragment.name) {
                // Known ids returned above, so this one is new.
                (Some(_), _) => true,
                (None, Some(name)) if call.name.is_some() => {
                    call.name.as_deref() != Some(name)
                        || fragment.arguments.trim_start().starts_with('{')
                            && call.has_whole_arguments()
                }
                (None, _) => false,
            },
        };
        match current {
            Some(position) if !starts_new => Ok(Some(self.address(position))),
            _ if fragment.is_hollow() => Ok(None),
            _ => self.start(index, fragment.id).map(Some),
        }
    }

    /// Makes `position` the call that index-less and id-less fragments at
    /// its index go to next.
    fn address(&mut self, position: usize) -> usize {
        if let Some(call) = self.calls.get(position) {
            self.current.insert(call.index, position);
        }
        self.last = Some(position);
        position
    }

    fn start(&mut self, index: u32, id: Option<&str>) -> Result<usize, AccumulatorError> {
        if self.calls.len() >= MAX_TOOL_CALLS {
            return Err(AccumulatorError::TooManyCalls {
                limit: MAX_TOOL_CALLS,
            });
        }
        let position = self.calls.len();
        let taken = |candidate: &str| self.calls.iter().any(|call| call.id == candidate);
        // A provider id that equals an id already given (one made up
        // here) is answered under a made-up one, so no two calls share an
        // answer; its fragments still find it by the provider's id. Fewer
        // calls than made-up numbers are ever taken, so one is free.
        let unique = match id {
            Some(id) if !taken(id) => id.to_owned(),
            _ => (position..)
                .map(|n| self.ids.nth(n))
                .find(|candidate| !taken(candidate))
                .unwrap_or_default(),
        };
        self.calls.push(PartialCall {
            index,
            id: unique,
            provider_id: id.map(str::to_owned),
            kind: None,
            name: None,
            arguments: String::new(),
            json: None,
            conflict: None,
        });
        Ok(self.address(position))
    }
}

impl PartialCall {
    /// Its arguments are one whole JSON value already: nothing more can
    /// be added to them. Parsed only when they end as an object does.
    fn has_whole_arguments(&mut self) -> bool {
        self.arguments.trim_end().ends_with('}') && self.json().is_ok()
    }

    /// Its arguments parsed as they stand.
    fn json(&mut self) -> &Result<Value, CallError> {
        parsed_once(&mut self.json, &self.arguments)
    }

    /// Its arguments parsed as they stand, taken out (a write's content is
    /// not copied): parsed here unless they already were.
    fn take_json(&mut self) -> Result<Value, CallError> {
        match self.json.take() {
            Some((at, parsed)) if at == self.arguments.len() => parsed,
            _ => parse_json(&self.arguments),
        }
    }

    fn merge(&mut self, fragment: &Fragment<'_>) {
        if let Some(then) = set_once(&mut self.kind, fragment.kind) {
            let first = self.kind.clone().unwrap_or_default();
            self.conflict
                .get_or_insert(CallError::ConflictingType { first, then });
        }
        if let Some(then) = set_once(&mut self.name, fragment.name) {
            let first = self.name.clone().unwrap_or_default();
            self.conflict
                .get_or_insert(CallError::ConflictingName { first, then });
        }
        self.arguments.push_str(fragment.arguments);
    }

    fn assemble(mut self) -> AssembledCall {
        let parsed = match (self.conflict.take(), &self.name) {
            (Some(conflict), _) => Err(conflict),
            (None, None) => Err(CallError::MissingName),
            (None, Some(_)) if is_blank(&self.arguments) => Ok(Map::new()),
            (None, Some(_)) => match self.take_json() {
                Ok(Value::Object(map)) => Ok(map),
                Ok(other) => Err(CallError::NotAnObject {
                    found: kind_of(&other),
                    value: other,
                }),
                Err(e) => Err(e),
            },
        };
        AssembledCall {
            id: self.id,
            name: self.name.unwrap_or_default(),
            arguments: self.arguments,
            parsed,
        }
    }
}

impl AssembledCall {
    /// The call as the agent takes it: its arguments as parsed here,
    /// never parsed again, and why it cannot run when the stream alone
    /// shows that (no name, two names). Arguments that are not a JSON
    /// object go on as they are, for validation to refuse with its stable
    /// code; a call that cannot run keeps its arguments for the
    /// assistant message.
    pub fn into_request(self) -> ToolCallRequest {
        let (parsed, error) = match self.parsed {
            Ok(map) => (Ok(Value::Object(map)), None),
            Err(CallError::NotAnObject { value, .. }) => (Ok(value), None),
            Err(CallError::InvalidJson { detail, .. }) => (Err(detail), None),
            // Not parsed yet: it never runs, but the assistant message
            // still carries what it asked.
            Err(e) => (
                parse_json(&self.arguments).map_err(|e| e.to_string()),
                Some(e.to_string()),
            ),
        };
        let arguments = match parsed {
            Ok(value) => CallArguments::Json(value),
            Err(detail) => CallArguments::Malformed {
                text: self.arguments,
                detail,
            },
        };
        ToolCallRequest {
            id: self.id,
            name: self.name,
            arguments,
            error,
        }
    }
}

/// Sets `slot` if empty; returns the new value when it conflicts with the
/// one already there (a repeat of the same value is no conflict).
fn set_once(slot: &mut Option<String>, value: Option<&str>) -> Option<String> {
    let value = value?;
    match slot {
        None => {
            *slot = Some(value.to_owned());
            None
        }
        Some(had) if had == value => None,
        Some(_) => Some(value.to_owned()),
    }
}

/// Whether a call's arguments text is empty or JSON white space only:
/// servers send `""` for a tool without required parameters, and
/// refusing that call would be pedantry at the model's expense, so it
/// reads as `{}`.
fn is_blank(text: &str) -> bool {
    text.trim_matches([' ', '\t', '\n', '\r']).is_empty()
}

#[cfg(test)]
thread_local! {
    /// Arguments texts parsed on this thread, for the test that counts them.
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many arguments texts this thread has parsed.
#[cfg(test)]
pub(super) fn parses() -> usize {
    PARSES.with(std::cell::Cell::get)
}

/// `arguments` parsed, kept in `json` with their length: parsed again
/// only when they grew since (the text only ever grows).
fn parsed_once<'a>(
    json: &'a mut Option<(usize, Result<Value, CallError>)>,
    arguments: &str,
) -> &'a Result<Value, CallError> {
    let len = arguments.len();
    if json.as_ref().is_some_and(|(at, _)| *at != len) {
        *json = None;
    }
    let (_, parsed) = json.get_or_insert_with(|| (len, parse_json(arguments)));
    parsed
}

/// Parses a call's arguments text: the one place it becomes a value.
fn parse_json(text: &str) -> Result<Value, CallError> {
    #[cfg(test)]
    PARSES.with(|n| n.set(n.get() + 1));
    serde_json::from_str::<Value>(text).map_err(|err| CallError::InvalidJson {
        detail: err.to_string(),
        line: err.line(),
        column: err.column(),
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One call in a form that compares equal for the same tool and the same
/// arguments however they were written: object keys are sorted at every
/// level, so `{"a":1,"b":2}` and `{"b":2, "a":1}` are one call. The
/// repeat detector counts the calls that do not validate by it, and the
/// stream's loop stop the calls of one reply (ADR 0015).
pub fn call_key(name: &str, arguments: &Value) -> String {
    format!("{name}\u{0}{}", canonical(arguments))
}

/// [`call_key`] of a call written in text, when its arguments text is a
/// whole JSON object; `None` otherwise. The text adapters compare a call
/// with the calls the model was shown by it (ADR 0027).
pub fn whole_call_key(name: &str, arguments: &str) -> Option<String> {
    let value = serde_json::from_str::<Value>(arguments).ok()?;
    value.is_object().then(|| call_key(name, &value))
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}
