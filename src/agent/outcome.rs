//! Reading a tool's JSON result for the log: its status and a bounded,
//! verbatim excerpt of its output (ADR 0007 §5).

use serde_json::Value;

use crate::protocol::ToolStatus;

/// Lines of a tool's output shown under its row at most.
pub const EXCERPT_MAX_LINES: usize = 30;
/// Characters of one excerpt line shown at most.
pub const EXCERPT_MAX_LINE_CHARS: usize = 240;

/// The status a result object describes. A command that ran to the end is
/// `ok:true` whatever its exit code; a non-zero code or a signal is shown
/// as an error so the person sees it at a glance.
pub fn status(result: &Value) -> ToolStatus {
    let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_string);
    if result.get("ok") == Some(&Value::Bool(true)) {
        if let Some(code) = result.get("exit_code").and_then(Value::as_i64)
            && code != 0
        {
            return ToolStatus::Error(format!("exit code {code}"));
        }
        if let Some(signal) = text("signal") {
            return ToolStatus::Error(format!("killed by {signal}"));
        }
        return ToolStatus::Ok;
    }
    if result.get("rejected") == Some(&Value::Bool(true)) {
        return ToolStatus::Rejected;
    }
    if result.get("cancelled") == Some(&Value::Bool(true)) {
        return ToolStatus::Cancelled;
    }
    let error = text("error").unwrap_or_else(|| "failed".to_string());
    let detail = match (text("field"), text("expected"), result.get("received")) {
        (Some(field), Some(expected), Some(received)) => {
            format!(
                "{error}: {field} must be {expected}, got {}",
                received_text(received)
            )
        }
        _ => error,
    };
    if text("code").as_deref() == Some("timeout") {
        ToolStatus::TimedOut(detail)
    } else {
        ToolStatus::Error(detail)
    }
}

fn received_text(received: &Value) -> String {
    match received {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The output worth showing: file content, command output or directory
/// entries, cut to [`EXCERPT_MAX_LINES`] lines with a note of the rest.
pub fn excerpt(result: &Value) -> String {
    let body = ["output", "content"]
        .iter()
        .find_map(|k| result.get(*k).and_then(Value::as_str).map(str::to_string))
        .or_else(|| {
            result
                .get("entries")
                .and_then(Value::as_array)
                .map(|entries| {
                    entries
                        .iter()
                        .map(|e| match e {
                            Value::String(s) => s.clone(),
                            Value::Object(o) => o
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("?")
                                .to_string(),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
        })
        .unwrap_or_default();
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
