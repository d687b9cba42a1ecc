//! Runtime validation of a call against the same schema the model was shown,
//! before any side effect and before any confirmation. No coercion: `"5"` is
//! not 5 and `5.0` is not an integer. The registry holds one [`Schema`] per
//! tool and checks with it the arguments of each call, as the stream parsed
//! them once. See `docs/decisions/0011-tool-results-and-failures.md`.

use jsonschema::error::ValidationErrorKind;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::failure::ToolFailure;

/// Most characters of a received string quoted back in a failure: enough to
/// recognise it, never the whole file content the model sent.
const RECEIVED_MAX_CHARS: usize = 60;

/// What a call's arguments must be, in the words of a failure.
pub(super) const AN_OBJECT: &str = "a JSON object of arguments";

/// A tool's JSON Schema, compiled once, when the tool joins a registry.
pub(super) struct Schema {
    parameters: Value,
    validator: jsonschema::Validator,
}

impl Schema {
    /// Compiles `parameters`, which must describe an object, as a call's
    /// arguments are (providers refuse any other schema); what is wrong
    /// with them when they cannot validate a call.
    pub(super) fn compile(parameters: Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(&parameters).map_err(|e| e.to_string())?;
        if parameters["type"] != "object" {
            return Err(
                "it must describe an object of arguments (\"type\": \"object\")".to_owned(),
            );
        }
        Ok(Schema {
            parameters,
            validator,
        })
    }

    /// The schema as the model is shown it.
    pub(super) fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Checks the arguments of a call of `tool`; the first thing the
    /// schema refuses is the failure the model reads.
    pub(super) fn check(&self, tool: &str, value: &Value) -> Result<(), ToolFailure> {
        if let Some(error) = self.validator.iter_errors(value).next() {
            return Err(self.failure(
                tool,
                value,
                error.kind(),
                error.instance_path().as_str(),
                error.instance(),
            ));
        }
        self.reject_float_integers(tool, value)
    }

    /// JSON Schema counts `5.0` as an integer; serde would then refuse it
    /// with a less precise message, and accepting it would be coercion.
    /// Refuse it here, by the schema's own `"type": "integer"`.
    fn reject_float_integers(&self, tool: &str, value: &Value) -> Result<(), ToolFailure> {
        let (Some(props), Some(args)) =
            (self.parameters["properties"].as_object(), value.as_object())
        else {
            return Ok(());
        };
        for (field, schema) in props {
            if schema["type"] != "integer" {
                continue;
            }
            if let Some(Value::Number(n)) = args.get(field)
                && !(n.is_i64() || n.is_u64())
            {
                return Err(ToolFailure::InvalidArgument {
                    tool: tool.to_owned(),
                    field: field.clone(),
                    expected: expected_for(schema),
                    received: received(&args[field]),
                });
            }
        }
        Ok(())
    }

    /// The failure of a call of `tool` whose arguments `value` the
    /// validator refused as `kind`, at `pointer`, for `instance`.
    fn failure(
        &self,
        tool: &str,
        value: &Value,
        kind: &ValidationErrorKind,
        pointer: &str,
        instance: &Value,
    ) -> ToolFailure {
        let props = &self.parameters["properties"];
        let (field, expected, received_text) = match kind {
            ValidationErrorKind::Required { property } => {
                let field = property.as_str().unwrap_or_default().to_owned();
                let expected = expected_for(&props[&field]);
                (field, expected, "missing".to_owned())
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let field = unexpected.first().cloned().unwrap_or_default();
                let known: Vec<&str> = props
                    .as_object()
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let expected = format!("no such parameter; {tool} takes {}", known.join(", "));
                (field.clone(), expected, received(&value[&field]))
            }
            _ => {
                let field = pointer.trim_start_matches('/').to_owned();
                let expected = if field.is_empty() {
                    AN_OBJECT.to_owned()
                } else {
                    expected_for(&props[&field])
                };
                (field, expected, received(instance))
            }
        };
        ToolFailure::InvalidArgument {
            tool: tool.to_owned(),
            field,
            expected,
            received: received_text,
        }
    }
}

/// The typed arguments of `tool`, read from the value its schema
/// accepted. A failure here means schema and type disagree; it is still a
/// result.
pub(super) fn typed<T: DeserializeOwned>(tool: &str, value: &Value) -> Result<T, ToolFailure> {
    T::deserialize(value).map_err(|e| ToolFailure::InvalidArgument {
        tool: tool.to_owned(),
        field: String::new(),
        expected: "arguments matching the schema".to_owned(),
        received: e.to_string(),
    })
}

/// The shape a property's schema asks for, in the words of a failure:
/// `integer 1..10000`, `integer >= 1`, `non-empty string`.
fn expected_for(schema: &Value) -> String {
    match schema["type"].as_str() {
        Some("integer") => match (schema["minimum"].as_i64(), schema["maximum"].as_i64()) {
            (Some(lo), Some(hi)) => format!("integer {lo}..{hi}"),
            (Some(lo), None) => format!("integer >= {lo}"),
            (None, Some(hi)) => format!("integer <= {hi}"),
            (None, None) => "integer".to_owned(),
        },
        Some("string") if schema["minLength"].as_u64().is_some_and(|n| n > 0) => {
            "non-empty string".to_owned()
        }
        Some(other) => other.to_owned(),
        None => "a value".to_owned(),
    }
}

/// What arrived, typed and quoted: `string "20"`, `number 5.0`, `null`.
pub(crate) fn received(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("integer {n}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let mut shown: String = s.chars().take(RECEIVED_MAX_CHARS).collect();
            if shown.len() < s.len() {
                shown.push('…');
            }
            format!("string {shown:?}")
        }
        Value::Array(items) => format!("array of {} items", items.len()),
        Value::Object(_) => "object".to_owned(),
    }
}
