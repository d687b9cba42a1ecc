//! A finished call as it travels from its tool task to the conversation:
//! typed all the way, and turned into the JSON the model reads in one place,
//! [`ToolResult::to_json`]. ADR 0011.

use std::borrow::Cow;

use serde::Serialize;

use super::failure::ToolFailure;
use super::registry::ToolOutput;
use super::tool::Shown;

/// A finished call: what its tool returned or why it returned nothing, and
/// the notices the model is told with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The tool's output, or the failure.
    pub outcome: Result<ToolOutput, ToolFailure>,
    /// The kernel lacks the second wall of the path policy; said once per
    /// process, with whichever result comes next (ADR 0010).
    pub confinement_notice: Option<&'static str>,
    /// Advice the agent adds for the model: the repeat detector's
    /// (ADR 0015).
    pub notice: Option<String>,
    /// The same call gave this same result earlier in the turn: the model
    /// is told so instead of reading it again (ADR 0015).
    pub unchanged: bool,
}

/// What the model reads instead of a result it already has.
pub const UNCHANGED_RESULT: &str = "this exact call already gave this exact result earlier in this turn (see it above); it will not change. Answer the person from it now, or make a different call";

impl From<ToolFailure> for ToolResult {
    fn from(failure: ToolFailure) -> Self {
        ToolResult {
            outcome: Err(failure),
            confinement_notice: None,
            notice: None,
            unchanged: false,
        }
    }
}

/// The JSON object the model reads: `"ok": true` and the output's fields,
/// or the failure's; then the notices, when there are any.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    outcome: Outcome<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confinement_notice: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notice: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Outcome<'a> {
    Worked {
        ok: bool,
        #[serde(flatten)]
        output: &'a ToolOutput,
    },
    Failed(&'a ToolFailure),
    Unchanged {
        ok: bool,
        unchanged: &'static str,
    },
}

impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let outcome = match &self.outcome {
            _ if self.unchanged => Outcome::Unchanged {
                ok: self.outcome.is_ok(),
                unchanged: UNCHANGED_RESULT,
            },
            Ok(output) => Outcome::Worked { ok: true, output },
            Err(failure) => Outcome::Failed(failure),
        };
        Answer {
            outcome,
            confinement_notice: self.confinement_notice,
            notice: self.notice.as_deref(),
        }
        .serialize(serializer)
    }
}

impl ToolResult {
    /// Cuts what the call printed or read to about `max_bytes`, with a
    /// marker saying how to get the rest, each tool in its own way; false
    /// when there was nothing to cut. ADR 0021.
    pub fn cut(&mut self, max_bytes: usize) -> bool {
        match &mut self.outcome {
            Ok(output) => output.cut(max_bytes),
            Err(failure) => failure.cut_output(max_bytes),
        }
    }

    /// Whether a search (`grep`, `glob`) found anything: a grep that
    /// found no line in a short file did not, though it gave the file's
    /// text; `None` for any other result, a failed search included.
    pub fn search_found(&self) -> Option<bool> {
        match &self.outcome {
            Ok(ToolOutput::Grep(out)) => Some(out.total > 0),
            Ok(ToolOutput::Glob(out)) => Some(out.total > 0),
            _ => None,
        }
    }

    /// What the call read or found, to look for a name in: a file's text,
    /// the lines a search matched, a command's output. Nothing for a failure, whose words may echo what
    /// was asked for.
    pub fn found_text(&self) -> Vec<Cow<'_, str>> {
        match &self.outcome {
            Ok(ToolOutput::Grep(out)) => [Some(&out.matches), out.content.as_ref()]
                .into_iter()
                .flatten()
                .map(|text| Cow::Borrowed(text.as_str()))
                .collect(),
            Ok(output) => vec![output.text()],
            Err(_) => Vec::new(),
        }
    }

    /// The JSON text the model reads as the call's answer: the only place a
    /// result becomes JSON. Keys keep their order (`ok` first, `code` and
    /// `tool` closing a failure, the notices last).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            // Nothing in a result can fail to encode (every key is a
            // string); should it ever, the model still gets an object.
            serde_json::json!({
                "ok": false,
                "error": format!("internal error: the result could not be encoded: {e}"),
                "code": "execution_failed",
            })
            .to_string()
        })
    }
}

/// The head of `text` within `max_bytes`: up to the end of the last whole
/// line inside it, or, when the first line alone is longer, up to the
/// last character boundary.
pub(crate) fn head(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let end = text.floor_char_boundary(max_bytes);
    match text[..end].rfind('\n') {
        Some(newline) => &text[..=newline],
        None => &text[..end],
    }
}

/// Cuts `text` to its head within `max_bytes`, ending with a marker that
/// says how much was kept and `rest`, how to see the rest. False when it
/// fits already. ADR 0021.
pub(crate) fn cut_head(text: &mut String, max_bytes: usize, rest: &str) -> bool {
    if text.len() <= max_bytes {
        return false;
    }
    let total = text.len();
    let kept = head(text, max_bytes).len();
    text.truncate(kept);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "[output cut to its first {kept} of {total} bytes to fit the model's context window; {rest}]"
    ));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::list::ListDirectoryOutput;

    #[test]
    fn the_head_ends_at_a_line_end_or_a_character_boundary() {
        assert_eq!(head("ab\ncd\nef", 7), "ab\ncd\n");
        assert_eq!(head("ab\ncd", 99), "ab\ncd");
        assert_eq!(head("aéb", 2), "a", "never inside a character");
        assert_eq!(head("abcdef", 3), "abc");
    }

    #[test]
    fn the_notices_close_the_object_in_the_order_they_were_added() {
        let result = ToolResult {
            outcome: Ok(ToolOutput::ListDirectory(ListDirectoryOutput {
                path: ".".to_owned(),
                entries: Vec::new(),
                total: 0,
                truncated: false,
                note: None,
            })),
            confinement_notice: Some("no openat2"),
            notice: Some("again".to_owned()),
            unchanged: false,
        };
        assert_eq!(
            result.to_json(),
            r#"{"ok":true,"path":".","entries":[],"total":0,"truncated":false,"confinement_notice":"no openat2","notice":"again"}"#
        );
        let failed = ToolResult {
            confinement_notice: Some("no openat2"),
            ..ToolResult::from(ToolFailure::Rejected {
                tool: "write_file".to_owned(),
                again: false,
            })
        };
        assert_eq!(
            failed.to_json(),
            r#"{"ok":false,"rejected":true,"error":"the person rejected this call. Do not make the same call again: change it as they would want, or ask them what they want instead","code":"rejected","tool":"write_file","confinement_notice":"no openat2"}"#
        );
    }

    #[test]
    fn an_unchanged_result_says_so_instead_of_repeating_itself() {
        let result = ToolResult {
            notice: Some("again".to_owned()),
            unchanged: true,
            ..ToolResult::from(ToolFailure::Rejected {
                tool: "write_file".to_owned(),
                again: false,
            })
        };
        assert_eq!(
            result.to_json(),
            format!(r#"{{"ok":false,"unchanged":"{UNCHANGED_RESULT}","notice":"again"}}"#)
        );
    }
}
