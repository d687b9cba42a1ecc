//! Tools registered at run time, as a test registers them beside the
//! built-ins: `echo`-like tools that say their text back, with a schema
//! of their own, and `wait`, which runs until the call is cancelled.

use std::sync::Arc;

use dashfloat::tools::{DynamicOutput, DynamicTool, Effect, ToolContext, ToolFailure};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// Says `text` back, `times` times (1 to 3, 1 when left out), joined by
/// spaces.
#[derive(Debug)]
pub struct Echo {
    name: String,
    effect: Effect,
    schema: Value,
}

impl Echo {
    /// An echo tool called `name` whose calls have `effect`.
    pub fn named(name: &str, effect: Effect) -> Arc<dyn DynamicTool> {
        Arc::new(Echo {
            name: name.to_owned(),
            effect,
            schema: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1, "description": "What to say back."},
                    "times": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1},
                },
                "required": ["text"],
                "additionalProperties": false,
            }),
        })
    }
}

impl DynamicTool for Echo {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "Says the text back."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn effect(&self) -> Effect {
        self.effect
    }

    fn run<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        _ctx: &'a ToolContext,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DynamicOutput, ToolFailure>> {
        Box::pin(async move {
            let text = arguments["text"].as_str().unwrap_or_default();
            let times = arguments.get("times").and_then(Value::as_u64).unwrap_or(1);
            let said: Vec<&str> = (0..times).map(|_| text).collect();
            Ok(DynamicOutput {
                output: said.join(" "),
            })
        })
    }
}

/// Runs until its call is cancelled, then answers `cancelled`.
#[derive(Debug)]
pub struct Wait {
    schema: Value,
}

impl Wait {
    /// The `wait` tool, which only reads (it runs unasked).
    pub fn tool() -> Arc<dyn DynamicTool> {
        Arc::new(Wait {
            schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        })
    }
}

impl DynamicTool for Wait {
    fn name(&self) -> &str {
        "wait"
    }

    fn description(&self) -> &str {
        "Waits until it is stopped."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn effect(&self) -> Effect {
        Effect::Reads
    }

    fn run<'a>(
        &'a self,
        _arguments: &'a Map<String, Value>,
        _ctx: &'a ToolContext,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DynamicOutput, ToolFailure>> {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(ToolFailure::Cancelled {
                tool: "wait".to_owned(),
                output: None,
            })
        })
    }
}
