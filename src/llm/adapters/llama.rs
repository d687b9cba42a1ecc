//! `llama`: Llama 3.x. The `meta-llama/Llama-3.1-8B-Instruct` template
//! asks for `{"name": function name, "parameters": dictionary of argument
//! name and its value}` as the whole reply and renders a call that way,
//! ending with `<|eot_id|>`; `<|python_tag|>` may precede it (`<|eom_id|>`
//! then ends it). Bare JSON is recognised only at the very start of a
//! reply; the end tokens, if a server passes them on, are dropped.

use super::cursor::{Cursor, Step};
use super::json_call;
use super::offered::OfferedTools;
use super::{CallHead, Tail};

/// What opens a call besides a `{` at the start of the reply.
pub(super) const OPENERS: &[&str] = &["<|python_tag|>"];
/// End-of-turn tokens: never prose, and they end malformed arguments.
pub(super) const CLOSERS: &[&str] = &["<|eot_id|>", "<|eom_id|>"];

/// The call object after the opener (or at the start of the reply).
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    json_call::head(text, offered, false, false)
}

/// The `}` that closes the call object.
pub(super) fn tail(text: &str) -> Step<Tail> {
    json_call::object_end(&mut Cursor::new(text), false)
}
