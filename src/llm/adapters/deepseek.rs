//! `deepseek`: DeepSeek V3 / R1 write
//! `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>`
//! (`deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja`), V3.1 writes
//! `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`
//! (`deepseek-ai-DeepSeek-V3.1.jinja`, both in ggml-org/llama.cpp
//! `models/templates/`); either inside
//! `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>`, which are dropped.

use super::cursor::{Cursor, Step, take};
use super::offered::OfferedTools;
use super::{CallHead, Shape, Tail};

/// What opens one call.
pub(super) const OPENERS: &[&str] = &["<｜tool▁call▁begin｜>"];
/// The block's own markers: never prose.
pub(super) const SILENT: &[&str] = &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"];
/// What ends a call, also when its arguments never closed.
pub(super) const CLOSERS: &[&str] = &["<｜tool▁call▁end｜>"];
const SEP: &str = "<｜tool▁sep｜>";

/// `function<sep>NAME\n```json\n` or `NAME<sep>`, up to the arguments.
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    let mut c = Cursor::new(text);
    let mut name = take!(c.name());
    take!(c.lit(SEP));
    if name == "function" {
        let after = c;
        match c.name() {
            Step::Yes(named) => {
                name = named;
                take!(c.lit("\n"));
                take!(c.ws_then_more());
                take!(c.lit("```json"));
            }
            Step::More => return Step::More,
            Step::No => c = after,
        }
    }
    if !offered.contains(name) {
        return Step::No;
    }
    take!(c.ws_then_more());
    Step::Yes(CallHead {
        name: name.to_string(),
        len: c.at(),
        shape: Shape::Bare,
    })
}

/// The closing fence if any, then `<｜tool▁call▁end｜>`.
pub(super) fn tail(text: &str) -> Step<Tail> {
    let mut c = Cursor::new(text);
    take!(c.ws_then_more());
    if c.lit("```") == Step::More {
        return Step::More;
    }
    take!(c.ws_then_more());
    take!(c.lit(CLOSERS[0]));
    Step::Yes(Tail::Done(c.at()))
}
