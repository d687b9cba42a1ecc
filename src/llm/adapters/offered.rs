//! The tools a request offers, as the adapters need them: the names a text
//! call may use, and which parameters the schema types as something other
//! than a string (GLM writes every value as text).

use std::collections::HashMap;

use serde_json::Value;

/// The offered tools' names and, per tool, the parameters whose schema
/// type is not `string`. Built once from the request's `tools` array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OfferedTools {
    /// Tool name → names of its parameters typed other than `string`.
    tools: HashMap<String, Vec<String>>,
}

impl OfferedTools {
    /// Reads an OpenAI `tools` array (`[{"type": "function", "function":
    /// {"name", "parameters": {"properties": …}}}]`); entries of another
    /// shape are skipped.
    pub fn from_definitions(definitions: &Value) -> Self {
        let tools = definitions
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| {
                let function = tool.get("function")?;
                let name = function.get("name")?.as_str()?.to_string();
                let typed = function
                    .pointer("/parameters/properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(_, schema)| !admits_string(schema))
                    .map(|(key, _)| key.clone())
                    .collect();
                Some((name, typed))
            })
            .collect();
        Self { tools }
    }

    /// No tool is offered: there is nothing a text call could name.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Whether `name` is an offered tool.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Whether the schema of `tool` types `parameter` as something other
    /// than a string (integer, number, boolean, array, object). Unknown
    /// tools and parameters are not: their values stay strings.
    pub fn is_typed(&self, tool: &str, parameter: &str) -> bool {
        self.tools
            .get(tool)
            .is_some_and(|typed| typed.iter().any(|p| p == parameter))
    }
}

/// A property schema without a `type`, or whose type is or includes
/// `string`.
fn admits_string(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "string"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_typed_parameters_come_from_the_catalogue() {
        let offered = OfferedTools::from_definitions(&json!([
            {"type": "function", "function": {"name": "read_file", "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}}
            }}},
            {"type": "function"}
        ]));
        assert!(offered.contains("read_file"));
        assert!(!offered.contains("write_file"));
        assert!(offered.is_typed("read_file", "offset"));
        assert!(!offered.is_typed("read_file", "path"));
        assert!(!offered.is_typed("read_file", "undeclared"));
    }
}
