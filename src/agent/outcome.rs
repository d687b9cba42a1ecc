//! A call's result as the log shows it: its status and a bounded, verbatim
//! excerpt of its output (ADR 0007 §5).

use crate::protocol::ToolStatus;
use crate::tools::{Shown, ToolFailure, ToolOutput};

/// Lines of a tool's output shown under its row at most.
const EXCERPT_MAX_LINES: usize = 30;
/// Characters of one excerpt line shown at most.
const EXCERPT_MAX_LINE_CHARS: usize = 240;

/// The status of a result. What worked says so itself (a command that ran
/// to the end worked whatever its exit code, yet a non-zero code or a
/// signal is shown as an error so the person sees it at a glance).
pub fn status(outcome: &Result<ToolOutput, ToolFailure>) -> ToolStatus {
    match outcome {
        Ok(output) => output.status(),
        Err(
            ToolFailure::Rejected { .. }
            | ToolFailure::Redirected { .. }
            | ToolFailure::Unasked { .. }
            | ToolFailure::Unattended { .. },
        ) => ToolStatus::Rejected,
        Err(ToolFailure::Cancelled { .. }) => ToolStatus::Cancelled,
        Err(timeout @ ToolFailure::Timeout { .. }) => ToolStatus::TimedOut(timeout.to_string()),
        Err(
            failure @ ToolFailure::InvalidArgument {
                field,
                expected,
                received,
                ..
            },
        ) => ToolStatus::Error(format!(
            "{}: {field} must be {expected}, got {received}",
            failure.code()
        )),
        Err(failure) => ToolStatus::Error(failure.to_string()),
    }
}

/// The output worth showing — file content, command output (partial, for a
/// command stopped early), directory entries — cut to
/// [`EXCERPT_MAX_LINES`] lines with a note of the rest.
pub fn excerpt(outcome: &Result<ToolOutput, ToolFailure>) -> String {
    let body = match outcome {
        Ok(output) => output.text(),
        Err(
            ToolFailure::Timeout { output, .. }
            | ToolFailure::Cancelled {
                output: Some(output),
                ..
            },
        ) => output.into(),
        Err(_) => "".into(),
    };
    let lines: Vec<&str> = body.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(EXCERPT_MAX_LINES)
        .map(|l| match l.char_indices().nth(EXCERPT_MAX_LINE_CHARS) {
            Some((i, _)) => format!("{}…", &l[..i]),
            None => (*l).to_string(),
        })
        .collect();
    if lines.len() > EXCERPT_MAX_LINES {
        out.push(format!("… {} more lines", lines.len() - EXCERPT_MAX_LINES));
    }
    out.join("\n")
}
