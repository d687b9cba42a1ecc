//! Runtime validation of a call against the same schema the model was shown,
//! before any side effect and before any confirmation. No coercion: `"5"` is
//! not 5 and `5.0` is not an integer. See `docs/decisions/0011-tool-results-and-failures.md`.

use std::sync::LazyLock;

use jsonschema::error::ValidationErrorKind;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::failure::ToolFailure;
use super::registry::{ToolCall, ToolSpec, specs};

/// Most characters of a received string quoted back in a failure: enough to
/// recognise it, never the whole file content the model sent.
pub const RECEIVED_MAX_CHARS: usize = 60;

/// A spec with its schema compiled once.
struct Compiled {
    spec: ToolSpec,
    /// Our own schemas always compile (a test proves it); should one not,
    /// the call fails as an execution failure instead of the process dying.
    validator: Result<jsonschema::Validator, String>,
}

static CATALOGUE: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    specs()
        .into_iter()
        .map(|spec| {
            let validator = jsonschema::validator_for(&spec.parameters).map_err(|e| e.to_string());
            Compiled { spec, validator }
        })
        .collect()
});

/// Validates a call by tool name and the raw arguments string the model
/// streamed. The error is the failure result to send back; nothing has
/// touched the disk either way.
pub fn validate(name: &str, arguments: &str) -> Result<ToolCall, ToolFailure> {
    let Some(compiled) = CATALOGUE.iter().find(|c| c.spec.name == name) else {
        return Err(ToolFailure::UnknownTool {
            tool: name.to_owned(),
            known: CATALOGUE
                .iter()
                .map(|c| c.spec.name)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let spec = &compiled.spec;
    let value: Value =
        serde_json::from_str(arguments).map_err(|e| ToolFailure::MalformedArguments {
            tool: spec.name.to_owned(),
            detail: e.to_string(),
        })?;
    let validator = compiled
        .validator
        .as_ref()
        .map_err(|e| ToolFailure::ExecutionFailed {
            tool: spec.name.to_owned(),
            message: format!(
                "internal error: the schema of {} does not compile: {e}",
                spec.name
            ),
        })?;
    if let Some(error) = validator.iter_errors(&value).next() {
        return Err(schema_failure(
            spec,
            &value,
            error.kind(),
            error.instance_path().as_str(),
            error.instance(),
        ));
    }
    reject_float_integers(spec, &value)?;
    (spec.parse)(value)
}

/// The typed arguments of `tool`. The schema has already accepted the
/// value, so a failure here means schema and type disagree; it is still a
/// result.
pub(crate) fn typed<T: DeserializeOwned>(tool: &str, value: Value) -> Result<T, ToolFailure> {
    serde_json::from_value(value).map_err(|e| ToolFailure::InvalidArgument {
        tool: tool.to_owned(),
        field: String::new(),
        expected: "arguments matching the schema".to_owned(),
        received: e.to_string(),
    })
}

/// JSON Schema counts `5.0` as an integer; serde would then refuse it with a
/// less precise message, and accepting it would be coercion. Refuse it here,
/// by the schema's own `"type": "integer"`.
fn reject_float_integers(spec: &ToolSpec, value: &Value) -> Result<(), ToolFailure> {
    let (Some(props), Some(args)) = (spec.parameters["properties"].as_object(), value.as_object())
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
                tool: spec.name.to_owned(),
                field: field.clone(),
                expected: expected_for(schema),
                received: received(&args[field]),
            });
        }
    }
    Ok(())
}

fn schema_failure(
    spec: &ToolSpec,
    value: &Value,
    kind: &ValidationErrorKind,
    pointer: &str,
    instance: &Value,
) -> ToolFailure {
    let props = &spec.parameters["properties"];
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
            let expected = format!(
                "no such parameter; {} takes {}",
                spec.name,
                known.join(", ")
            );
            (field.clone(), expected, received(&value[&field]))
        }
        _ => {
            let field = pointer.trim_start_matches('/').to_owned();
            let expected = if field.is_empty() {
                "a JSON object of arguments".to_owned()
            } else {
                expected_for(&props[&field])
            };
            (field, expected, received(instance))
        }
    };
    ToolFailure::InvalidArgument {
        tool: spec.name.to_owned(),
        field,
        expected,
        received: received_text,
    }
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
