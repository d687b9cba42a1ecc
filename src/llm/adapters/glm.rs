//! `glm`: GLM-4.5 / 4.6 write one call per block as
//! `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n…</tool_call>`
//! (ggml-org/llama.cpp `models/templates/glm_4_5.jinja`). The template
//! writes a string value as it is and any other value as JSON, so a value
//! is read as JSON only where the tool's schema types that parameter as
//! something other than a string *and* the text is valid JSON; otherwise
//! it stays the string the model wrote, and the validator reports a wrong
//! type precisely. Nothing is coerced.

use serde_json::Value;

use super::cursor::{Cursor, Step, floor_boundary, take};
use super::offered::OfferedTools;
use super::{CallHead, HOLD_MAX_BYTES, Shape};

/// What opens a call (shared with `hermes`, told apart by what follows).
pub(super) const OPENERS: &[&str] = &["<tool_call>"];
const CLOSE: &str = "</tool_call>";
const KEY: &str = "<arg_key>";
const KEY_END: &str = "</arg_key>";
const VALUE: &str = "<arg_value>";
const VALUE_END: &str = "</arg_value>";

/// `NAME` followed by a line end or a tag.
pub(super) fn head(text: &str, offered: &OfferedTools) -> Step<CallHead> {
    let mut c = Cursor::new(text);
    let name = take!(c.name());
    if !matches!(c.peek(), Some('\n' | '\r' | '<')) || !offered.contains(name) {
        return Step::No;
    }
    Step::Yes(CallHead {
        name: name.to_string(),
        len: c.at(),
        shape: Shape::Pairs,
    })
}

/// What one step over a call's pairs did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PairStep {
    /// Nothing can be decided until more text arrives.
    Wait,
    /// `consumed` bytes were read; `arguments` is the JSON text they add.
    Took {
        /// Bytes of the text read.
        consumed: usize,
        /// Arguments text to append.
        arguments: String,
    },
    /// `</tool_call>` was read: the call is whole.
    Closed {
        /// Bytes of the text read, the closer included.
        consumed: usize,
        /// Arguments text to append (the object's end).
        arguments: String,
    },
}

/// Builds the arguments object of one GLM call from its key/value pairs,
/// a pair at a time. Text that breaks the pattern turns the rest of the
/// call into raw arguments text, which the validator reports as invalid
/// JSON.
#[derive(Debug, Clone)]
pub(super) struct PairArgs {
    tool: String,
    pairs: usize,
    key: Option<String>,
    /// How much of the value being read was already looked through for
    /// its end: a long value is searched once, not again on every piece.
    searched: usize,
    raw: bool,
}

impl PairArgs {
    /// The pairs of a call to `tool`.
    pub(super) fn new(tool: String) -> Self {
        Self {
            tool,
            pairs: 0,
            key: None,
            searched: 0,
            raw: false,
        }
    }

    /// Reads the next unit of `text` (the call's unread text).
    pub(super) fn step(&mut self, text: &str, offered: &OfferedTools) -> PairStep {
        if self.raw {
            return raw(text);
        }
        let mut c = Cursor::new(text);
        if c.ws_then_more() == Step::More {
            return PairStep::Wait;
        }
        let Some(key) = self.key.take() else {
            return match c.one_of(&[KEY, CLOSE]) {
                // The key's end is looked for within the hold bound only, so
                // whether it is found does not depend on how much text had
                // arrived when it was looked for.
                Step::Yes(0) => match within_hold(c.rest()).find(KEY_END) {
                    Some(end) => {
                        self.key = Some(c.rest()[..end].to_string());
                        PairStep::Took {
                            consumed: c.at() + end + KEY_END.len(),
                            arguments: String::new(),
                        }
                    }
                    None if c.rest().len() >= HOLD_MAX_BYTES => self.broken(),
                    None => PairStep::Wait,
                },
                Step::Yes(_) => PairStep::Closed {
                    consumed: c.at(),
                    arguments: if self.pairs == 0 { "{}" } else { "}" }.to_string(),
                },
                Step::More => PairStep::Wait,
                Step::No => self.broken(),
            };
        };
        match c.lit(VALUE) {
            Step::Yes(()) => {
                let value = c.rest();
                let from = floor_boundary(value, self.searched);
                match value[from..].find(VALUE_END) {
                    Some(end) => {
                        self.searched = 0;
                        let arguments = self.pair(&key, &value[..from + end], offered);
                        PairStep::Took {
                            consumed: c.at() + from + end + VALUE_END.len(),
                            arguments,
                        }
                    }
                    None => {
                        // The end may begin in the last bytes looked at.
                        self.searched = value.len().saturating_sub(VALUE_END.len() - 1);
                        self.key = Some(key);
                        PairStep::Wait
                    }
                }
            }
            Step::More => {
                self.key = Some(key);
                PairStep::Wait
            }
            Step::No => self.broken(),
        }
    }

    /// The JSON text one pair adds to the object.
    fn pair(&mut self, key: &str, value: &str, offered: &OfferedTools) -> String {
        let open = if self.pairs == 0 { "{" } else { ", " };
        self.pairs += 1;
        let value = match serde_json::from_str::<Value>(value) {
            Ok(json) if offered.is_typed(&self.tool, key) => json,
            _ => Value::String(value.to_string()),
        };
        format!("{open}{}: {value}", Value::String(key.to_string()))
    }

    fn broken(&mut self) -> PairStep {
        self.raw = true;
        PairStep::Took {
            consumed: 0,
            arguments: String::new(),
        }
    }
}

/// The first [`HOLD_MAX_BYTES`] of `text`, or less to end on a character.
fn within_hold(text: &str) -> &str {
    &text[..floor_boundary(text, HOLD_MAX_BYTES)]
}

/// The rest of a broken call, as raw arguments text, up to `</tool_call>`.
fn raw(text: &str) -> PairStep {
    match text.find(CLOSE) {
        Some(end) => PairStep::Closed {
            consumed: end + CLOSE.len(),
            arguments: text[..end].to_string(),
        },
        None => {
            let safe = floor_boundary(text, text.len().saturating_sub(CLOSE.len()));
            if safe == 0 {
                PairStep::Wait
            } else {
                PairStep::Took {
                    consumed: safe,
                    arguments: text[..safe].to_string(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered() -> OfferedTools {
        OfferedTools::from_definitions(&json!([{"type": "function", "function": {
            "name": "read_file",
            "parameters": {"properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}
        }}]))
    }

    fn arguments(text: &str) -> String {
        let mut pairs = PairArgs::new("read_file".into());
        let mut args = String::new();
        let mut rest = text;
        loop {
            match pairs.step(rest, &offered()) {
                PairStep::Wait => return args,
                PairStep::Took {
                    consumed,
                    arguments,
                } => {
                    args.push_str(&arguments);
                    rest = &rest[consumed..];
                }
                PairStep::Closed { arguments, .. } => {
                    args.push_str(&arguments);
                    return args;
                }
            }
        }
    }

    #[test]
    fn typed_values_are_json_and_the_rest_strings() {
        let args = arguments(
            "\n<arg_key>path</arg_key>\n<arg_value>5</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>10</arg_value>\n</tool_call>",
        );
        assert_eq!(args, r#"{"path": "5", "limit": 10}"#);
    }

    #[test]
    fn a_typed_value_that_is_not_json_stays_a_string() {
        let args = arguments("<arg_key>limit</arg_key><arg_value>ten</arg_value></tool_call>");
        assert_eq!(args, r#"{"limit": "ten"}"#);
    }

    #[test]
    fn no_pairs_is_an_empty_object() {
        assert_eq!(arguments("\n</tool_call>"), "{}");
    }

    #[test]
    fn a_broken_call_becomes_raw_invalid_arguments() {
        let args = arguments("<arg_key>path</arg_key>oops</tool_call>");
        assert_eq!(args, "oops");
        assert!(serde_json::from_str::<Value>(&args).is_err());
    }
}
