//! What a hook is told: one JSON object on its standard input, the same
//! three fields for every event (`event`, `session_id`, `cwd`) and the
//! event's own beside them. `docs/hooks.md` spells every field. ADR 0054.

use std::path::Path;

use serde::Serialize;

use crate::exec::schema::Status;

use super::config::HookEvent;

/// The most of a tool's result a `post_tool_use` hook is given (32 KiB,
/// the most of a command's output a result holds): the rest is cut at a
/// character's end, and a hook that needs all of it reads the file or
/// runs the command itself.
pub const HOOK_RESULT_MAX_BYTES: usize = 32 * 1024;

/// An event, with what a hook is told of it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Event {
    /// A session starts, or another is opened.
    SessionStart {
        /// Why.
        source: SessionSource,
    },
    /// The person sent a prompt; the model has not seen it yet.
    UserPromptSubmit {
        /// The prompt as the person wrote it.
        prompt: String,
    },
    /// A validated call, not yet confirmed or run.
    PreToolUse {
        /// The call.
        tool: ToolUse,
    },
    /// A call ran.
    PostToolUse {
        /// The call.
        tool: ToolUse,
        /// What it came to.
        result: ToolDone,
    },
    /// A turn the person's prompt started is over.
    Stop {
        /// How it ended.
        reason: StopReason,
    },
}

/// Why a session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    /// dashfloat started.
    Startup,
    /// `/clear` began a new session.
    Clear,
    /// `/resume` opened a saved one.
    Resume,
}

/// A tool call as a hook sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolUse {
    /// The tool's name (`execute_command`, `mcp__SERVER__TOOL`, …).
    pub name: String,
    /// The call's arguments: the JSON object the model sent.
    pub arguments: serde_json::Value,
}

/// What a call came to, as a hook sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDone {
    /// In a word.
    pub status: Status,
    /// The result as the model reads it (JSON text), cut at
    /// [`HOOK_RESULT_MAX_BYTES`].
    pub output: String,
}

impl ToolDone {
    /// `status` and the result's text `output`, cut to the bound.
    pub fn new(status: Status, mut output: String) -> ToolDone {
        if output.len() > HOOK_RESULT_MAX_BYTES {
            output.truncate(output.floor_char_boundary(HOOK_RESULT_MAX_BYTES));
        }
        ToolDone { status, output }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered.
    Complete,
    /// The person pressed Esc.
    Interrupted,
    /// A request or a compaction failed.
    Failed,
    /// The turn reached its step limit (`--max-steps`).
    MaxSteps,
}

/// The three fields every event carries, before its own.
#[derive(Serialize)]
struct Stdin<'a> {
    event: &'static str,
    session_id: &'a str,
    cwd: String,
    #[serde(flatten)]
    detail: &'a Event,
}

impl Event {
    /// Which event it is.
    pub fn kind(&self) -> HookEvent {
        match self {
            Event::SessionStart { .. } => HookEvent::SessionStart,
            Event::UserPromptSubmit { .. } => HookEvent::UserPromptSubmit,
            Event::PreToolUse { .. } => HookEvent::PreToolUse,
            Event::PostToolUse { .. } => HookEvent::PostToolUse,
            Event::Stop { .. } => HookEvent::Stop,
        }
    }

    /// The tool it is about, if any.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Event::PreToolUse { tool } | Event::PostToolUse { tool, .. } => Some(&tool.name),
            Event::SessionStart { .. } | Event::UserPromptSubmit { .. } | Event::Stop { .. } => {
                None
            }
        }
    }

    /// The JSON a hook reads on its standard input, for the session
    /// `session_id` in the project `cwd`.
    pub fn stdin(&self, session_id: &str, cwd: &Path) -> Vec<u8> {
        let stdin = Stdin {
            event: self.kind().name(),
            session_id,
            cwd: cwd.to_string_lossy().into_owned(),
            detail: self,
        };
        // Strings, and a value that came from JSON: nothing here fails to
        // encode; an empty object stands in should it ever.
        serde_json::to_vec(&stdin).unwrap_or_else(|_| b"{}".to_vec())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{Value, json};

    fn read(event: &Event) -> Value {
        serde_json::from_slice(&event.stdin("s1", Path::new("/p"))).unwrap()
    }

    #[test]
    fn every_event_carries_its_name_the_session_and_the_project() {
        let stop = read(&Event::Stop {
            reason: StopReason::MaxSteps,
        });
        assert_eq!(
            stop,
            json!({"event": "stop", "session_id": "s1", "cwd": "/p", "reason": "max_steps"})
        );
        let start = read(&Event::SessionStart {
            source: SessionSource::Clear,
        });
        assert_eq!(start["event"], "session_start");
        assert_eq!(start["source"], "clear");
    }

    #[test]
    fn a_tool_event_carries_the_call_and_its_result() {
        let tool = ToolUse {
            name: "execute_command".into(),
            arguments: json!({"command": "ls"}),
        };
        let post = read(&Event::PostToolUse {
            tool,
            result: ToolDone::new(Status::TimedOut, "é".repeat(HOOK_RESULT_MAX_BYTES)),
        });
        assert_eq!(post["event"], "post_tool_use");
        assert_eq!(
            post["tool"],
            json!({"name": "execute_command", "arguments": {"command": "ls"}})
        );
        assert_eq!(post["result"]["status"], "timed_out");
        let output = post["result"]["output"].as_str().unwrap();
        assert_eq!(output.len(), HOOK_RESULT_MAX_BYTES);
    }
}
