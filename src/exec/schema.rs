//! The lines `dashfloat exec --json` prints: one JSON object per line,
//! each with the schema version `v` and its `type`. Made from the
//! protocol's events; `docs/exec-json.md` documents every field, and
//! what changes bump [`SCHEMA_VERSION`].

use serde::Serialize;

use crate::protocol::{ReplyEnd, Severity, ToolStatus, Usage};

/// The version every line carries as `v`. A field removed or renamed, a
/// type removed, or a value's meaning changed bumps it; a new type or a
/// new field does not (readers ignore what they do not know).
pub const SCHEMA_VERSION: u32 = 1;

/// One line of the `--json` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The turn begins: always the first line of a run that sends its
    /// prompt.
    TurnStart {
        /// The model asked for (as discovered, if the server said).
        model: String,
        /// The id the session is saved under; `null` when not saved.
        session: Option<String>,
        /// The approval policy, as `--approval` spells it.
        approval: &'static str,
    },
    /// A piece of the assistant's reply text.
    Delta {
        /// The piece.
        text: String,
    },
    /// A piece of the model's reasoning.
    Reasoning {
        /// The piece.
        text: String,
    },
    /// An assistant message ended (one per model request): its whole text.
    Message {
        /// The whole reply text (empty when the reply only called tools).
        text: String,
        /// How it ended.
        end: End,
    },
    /// The model called a tool.
    ToolCall {
        /// The call's id; later lines about it echo it.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments in brief.
        summary: String,
    },
    /// A command the read-only analyser allowed runs without approval.
    ToolAllowed {
        /// Which call: the id its rows and its answer carry.
        id: String,
        /// The command line as it runs.
        summary: String,
    },
    /// A call ended.
    ToolResult {
        /// Which call: the id its rows and its answer carry.
        id: String,
        /// How it ended.
        status: Status,
        /// The error or time-out text; `null` otherwise.
        detail: Option<String>,
        /// What a result with nothing to show means ("no output", "no
        /// matches in 3 files"), or what one that worked warns of
        /// ("syntax error at line 4"); `null` otherwise.
        note: Option<String>,
        /// At most 30 lines of its output, verbatim.
        excerpt: String,
    },
    /// A notice or an error from dashfloat.
    Notice {
        /// How loud it is.
        severity: Loudness,
        /// The sentence.
        text: String,
    },
    /// The token counts of the turn's last model request.
    Usage {
        /// Tokens in the request.
        prompt_tokens: u64,
        /// Tokens generated.
        completion_tokens: u64,
        /// Their sum, as the provider reports it.
        total_tokens: u64,
        /// Prompt tokens the provider read from its cache.
        cached_tokens: u64,
    },
    /// The turn is over: always the last line.
    TurnEnd {
        /// How it ended.
        status: TurnStatus,
        /// The process's exit status.
        exit_code: u8,
        /// Model requests made in the turn.
        steps: u32,
        /// Tool calls made in the turn: the model's, and the reads of files
        /// the prompt named (ADR 0038).
        tool_calls: u32,
        /// Milliseconds since dashfloat started the run.
        elapsed_ms: u64,
    },
}

/// How an assistant message ended (`message.end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The model finished it.
    Complete,
    /// The run was interrupted or timed out while it streamed.
    Interrupted,
    /// The stream failed; a `notice` says why.
    Failed,
}

/// How a tool call ended in a word: `tool_result.status`, and the
/// `result.status` a `post_tool_use` hook reads (ADR 0054).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It ran and succeeded.
    Ok,
    /// It was refused before running, or failed while running.
    Error,
    /// It was not let run: the person rejected it, or (headless) it
    /// needed approval no one can give.
    Rejected,
    /// The run was interrupted or timed out while it waited or ran.
    Cancelled,
    /// It ran out of its own time.
    TimedOut,
}

/// `notice.severity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Loudness {
    /// Information.
    Notice,
    /// Something went wrong.
    Error,
}

/// How the turn ended (`turn_end.status`); each has its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The model's last message completed, with text, without calling a
    /// tool.
    Answered,
    /// The stream or the endpoint failed, the model returned nothing, the
    /// step limit was reached, or the turn ended on an error notice.
    Failed,
    /// SIGINT, SIGTERM or SIGHUP cancelled the turn.
    Interrupted,
    /// `--timeout` ran out and cancelled the turn.
    TimedOut,
}

impl TurnStatus {
    /// The process's exit status for this ending (ADR 0028).
    pub fn exit_code(self) -> u8 {
        match self {
            TurnStatus::Answered => super::EXIT_ANSWERED,
            TurnStatus::Failed => super::EXIT_FAILED,
            TurnStatus::Interrupted => super::EXIT_INTERRUPTED,
            TurnStatus::TimedOut => super::EXIT_TIMED_OUT,
        }
    }
}

impl From<ReplyEnd> for End {
    fn from(end: ReplyEnd) -> Self {
        match end {
            ReplyEnd::Complete => End::Complete,
            ReplyEnd::Interrupted => End::Interrupted,
            ReplyEnd::Failed => End::Failed,
        }
    }
}

impl From<Severity> for Loudness {
    fn from(severity: Severity) -> Self {
        match severity {
            Severity::Notice => Loudness::Notice,
            Severity::Error => Loudness::Error,
        }
    }
}

impl From<Usage> for Line {
    fn from(usage: Usage) -> Self {
        Line::Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total_tokens,
            cached_tokens: usage.cached_tokens,
        }
    }
}

/// A tool status as `tool_result` splits it: the status, its detail and
/// its note.
pub fn status_of(status: ToolStatus) -> (Status, Option<String>, Option<String>) {
    match status {
        ToolStatus::Ok => (Status::Ok, None, None),
        ToolStatus::Empty(note) | ToolStatus::Warning(note) => (Status::Ok, None, Some(note)),
        ToolStatus::Error(detail) => (Status::Error, Some(detail), None),
        ToolStatus::Rejected => (Status::Rejected, None, None),
        ToolStatus::Cancelled => (Status::Cancelled, None, None),
        ToolStatus::TimedOut(detail) => (Status::TimedOut, Some(detail), None),
    }
}

/// A line with the schema version in front, as printed.
#[derive(Serialize)]
struct Versioned<'a> {
    v: u32,
    #[serde(flatten)]
    line: &'a Line,
}

impl Line {
    /// The line's JSON text, without the newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&Versioned {
            v: SCHEMA_VERSION,
            line: self,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_opens_with_its_version_and_type() {
        let line = Line::ToolResult {
            id: "c1".into(),
            status: Status::TimedOut,
            detail: Some("timed out after 1s".into()),
            note: None,
            excerpt: String::new(),
        };
        assert_eq!(
            line.to_json().ok().as_deref(),
            Some(
                r#"{"v":1,"type":"tool_result","id":"c1","status":"timed_out","detail":"timed out after 1s","note":null,"excerpt":""}"#
            )
        );
    }
}
