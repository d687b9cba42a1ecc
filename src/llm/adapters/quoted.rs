//! The calls written in what the model was shown besides the person's
//! prompts: tool results (a README read, a command's output) and the
//! summaries made of them. A call written without a marker of its own (a
//! fenced block, bare Llama JSON) that copies one of them is the model
//! quoting what it read, not calling: it stays prose (ADR 0027).

use std::collections::HashSet;

use serde_json::Value;

use super::cursor::Step;
use super::json_call::{self, ValueEnd, ValueScanner};
use super::offered::OfferedTools;
use crate::llm::tool_calls::whole_call_key;

/// The calls found, each as its [`whole_call_key`]: written with other
/// white space or its keys in another order, a copy is still one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotedCalls {
    keys: HashSet<String>,
}

impl QuotedCalls {
    /// Adds every call to an offered tool written in `text`, wherever it
    /// stands (in a code block, in prose, in an array of calls). In a text
    /// that is JSON, as every tool result is (ADR 0011), its strings are
    /// read too, unescaped, as the model reads them.
    pub fn add(&mut self, text: &str, offered: &OfferedTools) {
        self.add_calls(text, offered);
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.add_strings(&value, offered);
        }
    }

    /// Whether a call to `name` with `arguments` copies a call found.
    /// Nothing is parsed while no call was found.
    pub fn contains(&self, name: &str, arguments: &str) -> bool {
        !self.keys.is_empty()
            && whole_call_key(name, arguments).is_some_and(|key| self.keys.contains(&key))
    }

    fn add_strings(&mut self, value: &Value, offered: &OfferedTools) {
        match value {
            Value::String(text) => self.add_calls(text, offered),
            Value::Array(items) => items.iter().for_each(|v| self.add_strings(v, offered)),
            Value::Object(map) => map.values().for_each(|v| self.add_strings(v, offered)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Every `{"name": …, "arguments": {…}}` (or `"parameters"`) in `text`.
    fn add_calls(&mut self, text: &str, offered: &OfferedTools) {
        for (at, _) in text.match_indices('{') {
            let rest = &text[at..];
            let Step::Yes(head) = json_call::head(rest, offered, false, false) else {
                continue;
            };
            let arguments = &rest[head.len..];
            if let (len, Some(ValueEnd::Whole)) = ValueScanner::default().scan(arguments, &[])
                && let Some(key) = whole_call_key(&head.name, &arguments[..len])
            {
                self.keys.insert(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::json_call::tests::offered;
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_in_a_tool_result_are_found_as_the_model_reads_them() {
        let readme = "# Tools\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"limit\": 3}}\n```\nor `{\"name\": \"read_file\", \"parameters\": {\"path\": \"b\"}}`.";
        let result = json!({"ok": true, "content": readme}).to_string();
        let mut quoted = QuotedCalls::default();
        quoted.add(&result, &offered());
        assert!(quoted.contains("read_file", "{\"limit\":3,\n \"path\":\"a\"}"));
        assert!(quoted.contains("read_file", "{\"path\": \"b\"}"));
        assert!(!quoted.contains("read_file", "{\"path\": \"c\"}"));
        assert!(!quoted.contains("read_file", "{\"path\": \"a\"}"));
    }

    #[test]
    fn only_whole_calls_to_offered_tools_count() {
        let mut quoted = QuotedCalls::default();
        quoted.add(
            "{\"name\": \"my-app\", \"arguments\": {}} {\"name\": \"read_file\", \"arguments\": {\"path\": ",
            &offered(),
        );
        assert_eq!(quoted, QuotedCalls::default());
    }
}
