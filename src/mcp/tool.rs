//! An MCP server's tool as the registry takes it: a [`DynamicTool`]
//! offered as `mcp__SERVER__TOOL`, its description cleaned of control
//! characters and cut, its input schema enforced before every call, asked
//! about before every call unless the person's config approves it (the
//! server's `readOnlyHint` is shown, not trusted), and run through the
//! server's live connection. ADR 0045.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::Tool;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, PreviewKind};
use crate::safe_text::strip_controls;
use crate::tools::preview::{header, line};
use crate::tools::{DynamicOutput, DynamicTool, argument_lines, brief};
use crate::tools::{Effect, ToolContext, ToolFailure};

use super::result::answer;
use super::servers::Server;

/// Characters of a tool's description the model is shown at most: the
/// rest of a long one costs the prefix more than it tells.
pub const DESCRIPTION_MAX_CHARS: usize = 1_024;

/// The largest input schema of a tool offered (64 KiB): every request
/// carries it; a larger one is left out with a notice.
pub const SCHEMA_MAX_BYTES: usize = 64 * 1024;

/// One MCP tool.
pub struct McpTool {
    name: String,
    description: String,
    parameters: Value,
    /// The server's own name for it.
    tool: String,
    read_only_hint: bool,
    server: Arc<Server>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// `server`'s tool `tool`, offered as `name`.
    pub(super) fn new(name: String, server: Arc<Server>, tool: &Tool) -> McpTool {
        let description: String = strip_controls(tool.description.as_deref().unwrap_or(""))
            .chars()
            .take(DESCRIPTION_MAX_CHARS)
            .collect();
        let mut parameters = Value::Object((*tool.input_schema).clone());
        // Servers often leave out what every tool's arguments are.
        if let Value::Object(schema) = &mut parameters {
            schema
                .entry("type")
                .or_insert_with(|| Value::String("object".to_owned()));
        }
        McpTool {
            name,
            description,
            parameters,
            tool: tool.name.to_string(),
            read_only_hint: tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
            server,
        }
    }

    /// The server it belongs to, as configured.
    pub fn server_name(&self) -> &str {
        &self.server.config.name
    }
}

impl DynamicTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Whatever the server's annotations say: they come from the server
    /// and are not trusted.
    fn effect(&self) -> Effect {
        Effect::RunsCommands
    }

    fn approved(&self) -> bool {
        self.server.config.approval.approves(&self.tool)
    }

    fn summary(&self, arguments: &Map<String, Value>) -> String {
        let args = brief(arguments);
        let name = strip_controls(&self.server.config.name);
        let tool = strip_controls(&self.tool);
        if args.is_empty() {
            format!("{name} · {tool}")
        } else {
            format!("{name} · {tool} {args}")
        }
    }

    fn preview(
        &self,
        arguments: &Map<String, Value>,
        _ctx: &ToolContext,
    ) -> Result<Preview, ToolFailure> {
        let mut lines = vec![header(format!(
            "MCP server {}, tool {}",
            strip_controls(&self.server.config.name),
            strip_controls(&self.tool)
        ))];
        if self.read_only_hint {
            lines.push(line(
                PreviewKind::Context,
                "the server says this tool only reads (readOnlyHint); dashfloat cannot check that",
            ));
        }
        lines.push(line(PreviewKind::Context, "with the arguments:"));
        lines.extend(argument_lines(arguments));
        Ok(Preview {
            lines,
            guard: FileGuard::Unguarded,
        })
    }

    fn run<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        ctx: &'a ToolContext,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DynamicOutput, ToolFailure>> {
        Box::pin(async move {
            let live = ctx.live_output.clone();
            let result = self
                .server
                .call(&self.name, &self.tool, arguments, cancel, live)
                .await?;
            let answer = answer(&result);
            if answer.is_error {
                return Err(ToolFailure::ExecutionFailed {
                    tool: self.name.clone(),
                    message: if answer.text.is_empty() {
                        "the tool reported an error and said nothing more".to_owned()
                    } else {
                        answer.text
                    },
                });
            }
            Ok(DynamicOutput {
                output: answer.text,
            })
        })
    }
}
