//! `fenced`: a call as a ```json (or ```tool_call) fenced block holding
//! `{"name": …, "arguments": {…}}` (or `"parameters"`), or a JSON array of
//! such objects. Qwen2.5-Coder and many small models answer this way when
//! the server's template has no tool-call format of its own; the form is
//! the one `scripts/assets/qwen2.5-coder-jsonblock.jinja` teaches.

use super::cursor::{Cursor, Step, take};
use super::json_call;
use super::offered::OfferedTools;
use super::{CallHead, Shape, Tail};

/// What opens a block (the rest of the line may hold spaces only).
pub(super) const OPENERS: &[&str] = &["```json", "```tool_call"];
/// What ends a block, also when the arguments inside never closed.
pub(super) const CLOSERS: &[&str] = &["```"];

/// The call object (or array) after an opener.
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    json_call::head(text, offered, true, false)
}

/// `}` (and `,` or `]` in an array), then the closing fence.
pub(super) fn tail(text: &str, shape: Shape) -> Step<Tail> {
    let mut c = Cursor::new(text);
    let end = take!(json_call::object_end(&mut c, shape == Shape::List));
    if let Tail::Next(_) = end {
        return Step::Yes(end);
    }
    take!(c.ws_then_more());
    take!(c.lit("```"));
    Step::Yes(Tail::Done(c.at()))
}
