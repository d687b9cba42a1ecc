//! Tool calls as a test makes them: arguments text, as a model would
//! stream it, validated against the built-in tools.

use dashfloat::protocol::CallArguments;
use dashfloat::tools::{Registry, ToolCall, ToolFailure};

/// `text` as the stream hands a call's arguments on: its JSON, or the
/// text with the parser's words when it is none.
pub fn arguments(text: &str) -> CallArguments {
    match serde_json::from_str(text) {
        Ok(value) => CallArguments::Json(value),
        Err(e) => CallArguments::Malformed {
            text: text.to_owned(),
            detail: e.to_string(),
        },
    }
}

/// Validates `arguments` (text) for the built-in tool `name`.
pub fn validate(name: &str, arguments: &str) -> Result<ToolCall, ToolFailure> {
    Registry::builtin().validate(name, &self::arguments(arguments))
}
