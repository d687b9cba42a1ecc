//! `mistral`: `[TOOL_CALLS] [{"name": …, "arguments": {…}}, …]` as the
//! `Mistral-Small-3.1-24B-Instruct-2503` template renders calls
//! (ggml-org/llama.cpp `models/templates/`), and the newer
//! `[TOOL_CALLS]NAME[ARGS]{…}` (optionally `NAME[CALL_ID]ID[ARGS]`) of the
//! Ministral 3 / Devstral Small 2 and Magistral templates.

use super::cursor::{Cursor, Step, take};
use super::json_call;
use super::offered::OfferedTools;
use super::{CallHead, Shape, Tail};

/// What opens one call (new form) or an array of calls (old form).
pub(super) const OPENERS: &[&str] = &["[TOOL_CALLS]"];

/// An array or object of calls, or `NAME[ARGS]`.
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    let mut c = Cursor::new(text);
    take!(c.ws_then_more());
    if matches!(c.peek(), Some('[' | '{')) {
        return json_call::head(text, offered, true, false);
    }
    let name = take!(c.name());
    if !offered.contains(name) {
        return Step::No;
    }
    if take!(c.one_of(&["[ARGS]", "[CALL_ID]"])) == 1 {
        take!(c.name());
        take!(c.lit("[ARGS]"));
    }
    take!(c.ws_then_more());
    Step::Yes(CallHead {
        name: name.to_string(),
        len: c.at(),
        shape: Shape::Bare,
    })
}

/// The end of a call object (and array); nothing after `[ARGS]{…}`.
pub(super) fn tail(text: &str, shape: Shape) -> Step<Tail> {
    match shape {
        Shape::Bare => Step::Yes(Tail::Done(0)),
        shape => json_call::object_end(&mut Cursor::new(text), shape == Shape::List),
    }
}
