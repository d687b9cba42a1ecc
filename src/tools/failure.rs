//! The failure side of a tool result: one stable code per failure class, so
//! the agent, the UI and the model can tell a typo in the arguments from a
//! policy denial, a crash, a timeout or a person's "no" without parsing
//! sentences. See `docs/decisions/0011-tool-results-and-failures.md`.

use std::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};

/// Why a tool call did not produce a normal result. Each variant has a
/// stable [`code`](ToolFailure::code), serialised into the result object
/// the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolFailure {
    /// The arguments string the model streamed is not a JSON document.
    #[error(
        "the arguments of {tool} are not valid JSON ({detail}); send one JSON object, e.g. {{}} when no argument is needed"
    )]
    MalformedArguments {
        /// The tool the call named.
        tool: String,
        /// The parser's words, with line and column.
        detail: String,
    },
    /// The call named a tool that is not in the catalogue.
    #[error("there is no tool named {tool:?}; the tools are {known}")]
    UnknownTool {
        /// The name as the model sent it.
        tool: String,
        /// The catalogue's names, comma-separated.
        known: String,
    },
    /// An argument is missing, unknown, of the wrong type or out of range.
    #[error("invalid argument {field:?} of {tool}: expected {expected}, received {received}")]
    InvalidArgument {
        /// The tool the call named.
        tool: String,
        /// The argument's name (a JSON pointer without the leading `/`;
        /// empty for the arguments object itself).
        field: String,
        /// The shape the schema asks for, e.g. `integer 1..10000`.
        expected: String,
        /// What arrived, e.g. `string "20"` or `missing`.
        received: String,
    },
    /// The path policy refused a path (it leaves the working directory, is
    /// empty, holds a NUL byte, or loops through links).
    #[error("{message}")]
    PathDenied {
        /// The tool the call named.
        tool: String,
        /// The policy's sentence, naming the path as given.
        message: String,
    },
    /// The tool ran and failed: not found, not a regular file, a block that
    /// matched twice, an I/O error...
    #[error("{message}")]
    ExecutionFailed {
        /// The tool the call named.
        tool: String,
        /// What failed and what to do next.
        message: String,
    },
    /// A command ran past its time limit; its process group was killed.
    #[error("timed out after {}", format_duration(*after))]
    Timeout {
        /// The tool the call named.
        tool: String,
        /// The limit that was hit.
        after: Duration,
        /// What the command printed before it was killed (capped, marked).
        output: String,
    },
    /// The person interrupted the call while it ran.
    #[error("cancelled by the user")]
    Cancelled {
        /// The tool the call named.
        tool: String,
        /// Output gathered before the interruption, if the tool makes any.
        output: Option<String>,
    },
    /// The person declined the call at the confirmation prompt or,
    /// `again`, declined this exact call since they last wrote, so it was
    /// not put to them a second time.
    #[error("{}", if *again { REJECTED_AGAIN } else { REJECTED })]
    Rejected {
        /// The tool the call named.
        tool: String,
        /// The same call was rejected before; this one was not asked.
        again: bool,
    },
    /// The person answered a confirmation of this reply by writing what to
    /// do instead: the call asked about, and every call of the reply not
    /// started by then, is not run. The words reach the model as the
    /// person's message after the round's results.
    #[error("{REDIRECTED}")]
    Redirected {
        /// The tool the call named.
        tool: String,
        /// What the person wrote, on the call they were asked about.
        words: Option<String>,
    },
    /// A write or edit in a turn whose prompt only asks a question
    /// (ADR 0049): not run, and not put to the person.
    #[error(
        "not run: the person asked a question and did not ask for a change. Answer it from what you have read; change files only when the person asks for a change"
    )]
    Unasked {
        /// The tool the call named.
        tool: String,
    },
    /// The call needed the person's approval, but no one can give it:
    /// dashfloat runs headless (`dashfloat exec`), so it was not run.
    /// ADR 0028.
    #[error(
        "not run: dashfloat runs headless (dashfloat exec), so no one can approve this call. Do not make it again in this turn; {}",
        unattended_next(.allow)
    )]
    Unattended {
        /// The tool the call named.
        tool: String,
        /// The flag that would let such a call run, e.g.
        /// `--approval auto-edit`; none for a call every policy puts to
        /// the person (a write replacing most of a file).
        allow: Option<String>,
    },
    /// A `pre_tool_use` hook denied the call (ADR 0054): not run, and
    /// not put to the person.
    #[error(
        "not run: a hook denied this call: {reason}. Do not make the same call again; do what the reason says, or tell the person why you cannot"
    )]
    Denied {
        /// The tool the call named.
        tool: String,
        /// The hook's reason.
        reason: String,
    },
}

/// What an unattended call's failure tells the model to do next.
fn unattended_next(allow: &Option<String>) -> String {
    match allow {
        Some(allow) => format!(
            "finish with what you have, or say what should be done. The person can allow such calls by running again with {allow}"
        ),
        None => "replacing most of a file always needs the person, under every policy: make the \
                 change with edit_file (insert_at to add text, search_block to change part)"
            .to_owned(),
    }
}

/// What the model reads when the person rejects a call: without a next
/// step, a small model asks for the very same call again.
const REJECTED: &str = "the person rejected this call. Do not make the same call again: change it as they would want, or ask them what they want instead";
/// What the model reads for a call not run because the person wrote what
/// to do instead: their words follow as their own message.
const REDIRECTED: &str = "not run: the person turned this down and wrote what to do instead in their message that follows. Do what it says";
/// What the model reads for a call the person rejected before.
const REJECTED_AGAIN: &str = "not run: the person already rejected this exact call since they last wrote, so it was not put to them again. Ask them what they want instead";

impl ToolFailure {
    /// Cuts the output a command printed before it timed out or was
    /// interrupted, as [`Shown::cut`](super::tool::Shown::cut) cuts a
    /// finished command's; false when there was nothing to cut.
    pub(crate) fn cut_output(&mut self, max_bytes: usize) -> bool {
        match self {
            ToolFailure::Timeout { output, .. }
            | ToolFailure::Cancelled {
                output: Some(output),
                ..
            } => super::command::cut_output(output, max_bytes),
            _ => false,
        }
    }

    /// The stable, machine-readable code of the failure class.
    pub fn code(&self) -> &'static str {
        match self {
            ToolFailure::MalformedArguments { .. } => "malformed_arguments",
            ToolFailure::UnknownTool { .. } => "unknown_tool",
            ToolFailure::InvalidArgument { .. } => "invalid_argument",
            ToolFailure::PathDenied { .. } => "path_denied",
            ToolFailure::ExecutionFailed { .. } => "execution_failed",
            ToolFailure::Timeout { .. } => "timeout",
            ToolFailure::Cancelled { .. } => "cancelled",
            ToolFailure::Rejected { .. }
            | ToolFailure::Redirected { .. }
            | ToolFailure::Unasked { .. }
            | ToolFailure::Unattended { .. } => "rejected",
            ToolFailure::Denied { .. } => "denied",
        }
    }

    /// The tool the failed call named (as the model sent it for an unknown
    /// tool).
    pub fn tool(&self) -> &str {
        match self {
            ToolFailure::MalformedArguments { tool, .. }
            | ToolFailure::UnknownTool { tool, .. }
            | ToolFailure::InvalidArgument { tool, .. }
            | ToolFailure::PathDenied { tool, .. }
            | ToolFailure::ExecutionFailed { tool, .. }
            | ToolFailure::Timeout { tool, .. }
            | ToolFailure::Cancelled { tool, .. }
            | ToolFailure::Rejected { tool, .. }
            | ToolFailure::Redirected { tool, .. }
            | ToolFailure::Unasked { tool }
            | ToolFailure::Unattended { tool, .. }
            | ToolFailure::Denied { tool, .. } => tool,
        }
    }
}

/// The failure as the model reads it: always `"ok": false`, then `error` —
/// the code itself for an invalid argument (whose detail is in
/// `field`/`expected`/`received`), the sentence otherwise — then the stable
/// `code` and the `tool`. Rejections and cancellations also carry
/// `"rejected": true` / `"cancelled": true` as ADR 0007 §1 shows them, and
/// a timeout or cancellation the output gathered before it.
impl Serialize for ToolFailure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("ok", &false)?;
        match self {
            ToolFailure::InvalidArgument {
                field,
                expected,
                received,
                ..
            } => {
                out.serialize_entry("error", self.code())?;
                out.serialize_entry("field", field)?;
                out.serialize_entry("expected", expected)?;
                out.serialize_entry("received", received)?;
            }
            ToolFailure::Timeout { output, .. } => {
                out.serialize_entry("error", &self.to_string())?;
                out.serialize_entry("output", output)?;
            }
            ToolFailure::Cancelled { output, .. } => {
                out.serialize_entry("cancelled", &true)?;
                out.serialize_entry("error", &self.to_string())?;
                if let Some(output) = output {
                    out.serialize_entry("output", output)?;
                }
            }
            ToolFailure::Rejected { .. }
            | ToolFailure::Redirected { .. }
            | ToolFailure::Unasked { .. }
            | ToolFailure::Unattended { .. } => {
                out.serialize_entry("rejected", &true)?;
                out.serialize_entry("error", &self.to_string())?;
            }
            _ => out.serialize_entry("error", &self.to_string())?,
        }
        out.serialize_entry("code", self.code())?;
        out.serialize_entry("tool", self.tool())?;
        out.end()
    }
}

/// `30s` for whole seconds, `1.5s` otherwise: the limit as a person wrote it.
pub(crate) fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
