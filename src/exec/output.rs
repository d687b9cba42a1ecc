//! Where the lines of a headless run go: as JSON, one object per line on
//! stdout (`--json`); or for a person, the reply's text on stdout as it
//! streams and everything else on stderr. A closed stdout or stderr
//! (`| head`) is not a failure of the run: what cannot be written is
//! dropped.

use std::io::Write;

use crate::protocol::ToolStatus;
use crate::safe_text::strip_controls;

use super::schema::{Line, Loudness, Status, TurnStatus};

/// The two ways a run prints.
#[derive(Debug)]
pub enum Output {
    /// `--json`.
    Json,
    /// For a person; remembers whether stdout ends mid-line.
    Human {
        /// The reply printed so far does not end with a newline.
        open_line: bool,
    },
}

impl Output {
    /// The output `--json` asks for.
    pub fn new(json: bool) -> Self {
        if json {
            Output::Json
        } else {
            Output::Human { open_line: false }
        }
    }

    /// Prints one line.
    pub fn print(&mut self, line: &Line) {
        match self {
            Output::Json => match line.to_json() {
                Ok(text) => {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{text}");
                    let _ = out.flush();
                }
                // Nothing in a line can fail to encode; should it, stderr
                // says so rather than the line vanishing.
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "dashfloat: cannot encode a line: {e}");
                }
            },
            Output::Human { open_line } => human(line, open_line),
        }
    }
}

/// A line as a person reads it: the reply on stdout, the rest on stderr.
fn human(line: &Line, open_line: &mut bool) {
    let stderr = |text: String| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", strip_controls(&text));
    };
    match line {
        Line::Delta { text } => {
            let text = strip_controls(text);
            if !text.is_empty() {
                *open_line = !text.ends_with('\n');
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
        }
        Line::Message { .. } => {
            if std::mem::take(open_line) {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(b"\n");
                let _ = out.flush();
            }
        }
        Line::ToolCall { name, summary, .. } => stderr(format!("⚙ {name} {summary}")),
        Line::ToolAllowed { summary, .. } => stderr(format!("  ran unasked: {summary}")),
        Line::ToolResult {
            status,
            detail,
            note,
            ..
        } => {
            let outcome = match (status, detail) {
                (Status::Ok, _) => ToolStatus::ok_words(note.as_deref()),
                (Status::Rejected, _) => {
                    "rejected: it needs approval, which dashfloat exec cannot ask for \
                     (--approval auto-edit allows edits and writes, --approval auto \
                     commands in the sandbox too, --approval dangerously-approve-all everything)"
                        .to_string()
                }
                (Status::Cancelled, _) => "cancelled".to_string(),
                (Status::Error | Status::TimedOut, Some(detail)) => format!("error: {detail}"),
                (Status::Error, None) => "error".to_string(),
                (Status::TimedOut, None) => "timed out".to_string(),
            };
            stderr(format!("  → {outcome}"));
        }
        Line::Notice { severity, text } => match severity {
            Loudness::Notice => stderr(format!("dashfloat: {text}")),
            Loudness::Error => stderr(format!("dashfloat: error: {text}")),
        },
        Line::TurnEnd {
            status,
            exit_code,
            steps,
            tool_calls,
            ..
        } => {
            let how = match status {
                TurnStatus::Answered => return,
                TurnStatus::Failed => "failed",
                TurnStatus::Interrupted => "was interrupted",
                TurnStatus::TimedOut => "ran out of time (--timeout)",
            };
            stderr(format!(
                "dashfloat: the turn {how} after {steps} model requests and {tool_calls} tool calls (exit status {exit_code})"
            ));
        }
        Line::TurnStart { .. } | Line::Reasoning { .. } | Line::Usage { .. } => {}
    }
}
