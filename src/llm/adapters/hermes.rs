//! `hermes`: the Hermes / Qwen2.5 form, one call per block,
//! `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`, as the
//! `Qwen/Qwen2.5-Coder-*-Instruct` chat template renders it.

use super::cursor::{Cursor, Step, take};
use super::json_call;
use super::offered::OfferedTools;
use super::{CallHead, Tail};

/// What opens a call (shared with `glm`, told apart by what follows).
pub(super) const OPENERS: &[&str] = &["<tool_call>"];
/// What ends a call, also when its arguments never closed.
pub(super) const CLOSERS: &[&str] = &["</tool_call>"];

/// The call object after the opener.
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    json_call::head(text, offered, false, false)
}

/// `}` then `</tool_call>`.
pub(super) fn tail(text: &str) -> Step<Tail> {
    let mut c = Cursor::new(text);
    take!(json_call::object_end(&mut c, false));
    take!(c.ws_then_more());
    take!(c.lit("</tool_call>"));
    Step::Yes(Tail::Done(c.at()))
}
