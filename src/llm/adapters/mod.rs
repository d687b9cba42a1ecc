//! Text tool-call adapters: small local models (behind Ollama, LM Studio or
//! a stock llama-server template) write tool calls as text in
//! `delta.content`. An adapter reads that text as it streams and splits it
//! into prose to show and calls, which the stream task feeds into the same
//! [`ToolCallAccumulator`](super::tool_calls::ToolCallAccumulator) as a
//! server's native `delta.tool_calls`: from there on a recovered call is a
//! native one. One file per syntax holds its markers and grammar;
//! [`TextCalls`] is the streaming reader. ADR 0027.
//!
//! Only a call whose shape is exactly a call and whose name is an offered
//! tool is taken; anything else stays prose, as does a marker inside a
//! code block, an inline code span or a block quote. A call written
//! without a marker of its own (a fenced block, bare Llama JSON), which a
//! reply may be quoting, counts only where Markdown opens a block, and
//! not when it copies a call the model was shown ([`QuotedCalls`]): it is
//! held until its block ends. Text held while a call's head is undecided
//! is bounded by [`HOLD_MAX_BYTES`].

mod cursor;
mod deepseek;
mod fenced;
mod glm;
mod hermes;
mod json_call;
mod llama;
mod mistral;
mod offered;
mod prompted;
mod quoted;
mod scanner;

use std::str::FromStr;

use serde::Deserialize;

pub use offered::OfferedTools;
pub use quoted::QuotedCalls;
pub use scanner::{HeldCall, TextCalls};

/// The most text held back while it is undecided whether it starts a
/// call (after an opening marker, before the call's name and the start of
/// its arguments are read) or how a call ends. Real call heads are well
/// under 100 bytes; what is still undecided at 4 KiB is shown as prose.
pub(crate) const HOLD_MAX_BYTES: usize = 4096;

/// How tool calls are read from the model's reply (`--tool-syntax`,
/// `tool_syntax`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum ToolSyntax {
    /// Native `delta.tool_calls` when the server sends them, else any
    /// known text syntax found in the content.
    #[default]
    Auto,
    /// Only native `delta.tool_calls`; text is never parsed.
    Native,
    /// Native calls, and text calls in this one syntax.
    Only(Syntax),
}

/// Why a tool syntax was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdapterError {
    /// The name is none of [`ToolSyntax::all`]'s.
    #[error(
        "unknown tool syntax `{0}`: expected auto, native, fenced, hermes, mistral, llama, deepseek or glm"
    )]
    UnknownSyntax(String),
}

impl ToolSyntax {
    /// Every setting, as `--tool-syntax` lists them.
    pub fn all() -> impl Iterator<Item = ToolSyntax> {
        [ToolSyntax::Auto, ToolSyntax::Native]
            .into_iter()
            .chain(Syntax::ALL.into_iter().map(ToolSyntax::Only))
    }

    /// The setting's name as the flag and the config file spell it.
    pub fn name(self) -> &'static str {
        match self {
            ToolSyntax::Auto => "auto",
            ToolSyntax::Native => "native",
            ToolSyntax::Only(syntax) => syntax.name(),
        }
    }

    /// The text syntaxes this setting reads.
    fn syntaxes(&self) -> &[Syntax] {
        match self {
            ToolSyntax::Auto => &Syntax::ALL,
            ToolSyntax::Native => &[],
            ToolSyntax::Only(syntax) => std::slice::from_ref(syntax),
        }
    }
}

impl FromStr for ToolSyntax {
    type Err = AdapterError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::all()
            .find(|s| s.name() == name)
            .ok_or_else(|| AdapterError::UnknownSyntax(name.to_string()))
    }
}

impl TryFrom<String> for ToolSyntax {
    type Error = AdapterError;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        name.parse()
    }
}

/// What [`TextCalls`] made of the content it was fed, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextPiece {
    /// Text to show as the reply.
    Prose(String),
    /// A call to this tool starts; its arguments follow.
    CallStarted(String),
    /// More arguments text of the call started last.
    Arguments(String),
}

/// One text syntax of tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// ```json fenced blocks.
    Fenced,
    /// Hermes / Qwen `<tool_call>{…}</tool_call>`.
    Hermes,
    /// Mistral `[TOOL_CALLS]`.
    Mistral,
    /// Llama 3.x JSON replies and `<|python_tag|>`.
    Llama,
    /// DeepSeek V3 / R1 / V3.1 `<｜tool▁call▁begin｜>`.
    Deepseek,
    /// GLM-4.5 `<tool_call>NAME<arg_key>…`.
    Glm,
}

/// What a call's head said: its name, and where its arguments start.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CallHead {
    name: String,
    /// Bytes after the opener up to the arguments' first character.
    len: usize,
    shape: Shape,
}

/// How a call's arguments are written and what closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A JSON value closed by the `}` of a call object.
    Object,
    /// The same, inside a JSON array of calls.
    List,
    /// A JSON value right after the name, nothing of its own after it.
    Bare,
    /// GLM's key/value pairs.
    Pairs,
}

/// How the text after a call's arguments ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// The call (and its block) is over after this many bytes.
    Done(usize),
    /// Another call of the same array follows after this many bytes.
    Next(usize),
}

impl Syntax {
    /// Every text syntax, in the order `auto` tries them.
    pub const ALL: [Syntax; 6] = [
        Syntax::Fenced,
        Syntax::Hermes,
        Syntax::Mistral,
        Syntax::Llama,
        Syntax::Deepseek,
        Syntax::Glm,
    ];

    /// The syntax's name as `--tool-syntax` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Fenced => "fenced",
            Syntax::Hermes => "hermes",
            Syntax::Mistral => "mistral",
            Syntax::Llama => "llama",
            Syntax::Deepseek => "deepseek",
            Syntax::Glm => "glm",
        }
    }

    /// Whether the syntax's openers are markers only a call writes. A
    /// fenced block's fence is ordinary Markdown, which a reply may quote:
    /// such a call counts only at a line's start, and not as a copy of a
    /// call the model was shown (ADR 0027).
    fn marked(self) -> bool {
        self != Syntax::Fenced
    }

    fn openers(self) -> &'static [&'static str] {
        match self {
            Syntax::Fenced => fenced::OPENERS,
            Syntax::Hermes => hermes::OPENERS,
            Syntax::Mistral => mistral::OPENERS,
            Syntax::Llama => llama::OPENERS,
            Syntax::Deepseek => deepseek::OPENERS,
            Syntax::Glm => glm::OPENERS,
        }
    }

    /// Special tokens of the syntax that are dropped from prose.
    fn silent(self) -> &'static [&'static str] {
        match self {
            Syntax::Llama => llama::CLOSERS,
            Syntax::Deepseek => deepseek::SILENT,
            _ => &[],
        }
    }

    /// What ends a call whose arguments never closed.
    fn closers(self) -> &'static [&'static str] {
        match self {
            Syntax::Fenced => fenced::CLOSERS,
            Syntax::Hermes => hermes::CLOSERS,
            Syntax::Llama => llama::CLOSERS,
            Syntax::Deepseek => deepseek::CLOSERS,
            Syntax::Mistral | Syntax::Glm => &[],
        }
    }

    /// Reads a call's head: `text` follows the opener (or a `,` of an
    /// array of calls, when `next_in_list`).
    fn head(
        self,
        text: &str,
        offered: &OfferedTools,
        next_in_list: bool,
    ) -> cursor::Step<CallHead> {
        if next_in_list {
            return json_call::head(text, offered, false, true).map_shape(Shape::List);
        }
        match self {
            Syntax::Fenced => fenced::head(text, offered),
            Syntax::Hermes => hermes::head(text, offered),
            Syntax::Mistral => mistral::head(text, offered),
            Syntax::Llama => llama::head(text, offered),
            Syntax::Deepseek => deepseek::head(text, offered),
            Syntax::Glm => glm::head(text, offered),
        }
    }

    /// Reads what follows a call's whole arguments value.
    fn tail(self, text: &str, shape: Shape) -> cursor::Step<Tail> {
        match self {
            Syntax::Fenced => fenced::tail(text, shape),
            Syntax::Hermes => hermes::tail(text),
            Syntax::Mistral => mistral::tail(text, shape),
            Syntax::Llama => llama::tail(text),
            Syntax::Deepseek => deepseek::tail(text),
            Syntax::Glm => cursor::Step::Yes(Tail::Done(0)),
        }
    }
}

impl cursor::Step<CallHead> {
    /// The head with its shape set (a later element of an array).
    fn map_shape(self, shape: Shape) -> Self {
        match self {
            cursor::Step::Yes(head) => cursor::Step::Yes(CallHead { shape, ..head }),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests;
