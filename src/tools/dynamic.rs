//! Tools known only at run time (an MCP server's, `mcp__SERVER__TOOL`):
//! the one trait such a tool implements, its validated call and what it
//! answers. Given to [`Registry::register`](super::Registry::register), it
//! is offered beside the built-ins; its calls are validated against its
//! own schema (a bad one is answered `invalid_argument`, which the model
//! can fix), asked about as its [`Effect`] says, and run as any call is,
//! in a task of their own, with the turn's cancellation. ADR 0042.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, PreviewKind, PreviewLine, ToolStatus};

use super::ToolContext;
use super::failure::ToolFailure;
use super::preview::{header, line};
use super::result::cut_head;
use super::tool::{Effect, Shown};

/// Characters of a call's arguments its row shows at most when no
/// summary of its own names it.
const BRIEF_MAX_CHARS: usize = 80;

/// A tool registered at run time. Its calls' arguments are the JSON object
/// its schema accepted, kept as such (a built-in's are typed, [`Tool`]).
///
/// [`Tool`]: super::Tool
pub trait DynamicTool: Send + Sync + std::fmt::Debug {
    /// The name the model calls it by, unique in its registry: letters,
    /// digits, `_` and `-` ([`TOOL_NAME_MAX_CHARS`] at most).
    ///
    /// [`TOOL_NAME_MAX_CHARS`]: super::TOOL_NAME_MAX_CHARS
    fn name(&self) -> &str;

    /// What the model reads about the tool.
    fn description(&self) -> &str;

    /// The JSON Schema of its arguments, an object's: shown to the model,
    /// compiled once when the tool is registered, and enforced on every
    /// call before anything else.
    fn parameters(&self) -> &Value;

    /// What a call can change: whether it waits for the calls before it
    /// (ADR 0015) and who is asked before it runs (ADR 0014). Only
    /// [`Effect::Reads`] runs unasked; any other is asked about as a
    /// command is, even under auto-edit, as no diff shows its change and
    /// `/undo` cannot take it back ([`ToolCall::beyond_undo`]). A tool
    /// that cannot say what it does is [`Effect::RunsCommands`].
    ///
    /// [`ToolCall::beyond_undo`]: super::ToolCall::beyond_undo
    fn effect(&self) -> Effect;

    /// Whether the person's own configuration lets its calls run without
    /// asking, whatever their effect (an MCP tool the config approves).
    /// Never what the tool says of itself.
    fn approved(&self) -> bool {
        false
    }

    /// The call in brief, for its row in the log; by default what
    /// [`brief`] makes of its arguments.
    fn summary(&self, arguments: &Map<String, Value>) -> String {
        brief(arguments)
    }

    /// What the person approves when the policy asks about a call; by
    /// default the call's arguments, every line of them, so a person
    /// never approves what they could not see. A call that cannot succeed may fail here
    /// with the failure its run would give. Run off the agent's task.
    fn preview(
        &self,
        arguments: &Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<Preview, ToolFailure> {
        let _ = ctx;
        Ok(arguments_preview(self.name(), arguments))
    }

    /// Runs a call, in a task of its own: a failure is a result, and so is
    /// a panic. `cancel` is the person's Esc: the call should stop and
    /// answer [`ToolFailure::Cancelled`] soon after.
    fn run<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        ctx: &'a ToolContext,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DynamicOutput, ToolFailure>>;
}

/// A validated call of a tool registered at run time: the tool, and the
/// arguments object its schema accepted.
#[derive(Clone)]
pub struct DynamicCall {
    tool: Arc<dyn DynamicTool>,
    arguments: Map<String, Value>,
}

impl DynamicCall {
    /// A call of `tool`; only the registry makes one, once the schema
    /// accepted `arguments`.
    pub(super) fn new(tool: Arc<dyn DynamicTool>, arguments: Map<String, Value>) -> Self {
        DynamicCall { tool, arguments }
    }

    /// The registered tool itself, which the call's name, effect,
    /// summary, preview and run are asked of.
    pub fn tool(&self) -> &dyn DynamicTool {
        self.tool.as_ref()
    }

    /// The arguments object the tool's schema accepted, which its
    /// summary, preview and run read.
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }
}

impl std::fmt::Debug for DynamicCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicCall")
            .field("tool", &self.tool.name())
            .field("arguments", &self.arguments)
            .finish()
    }
}

/// Two calls are the same call when they are of the very same tool (not
/// merely one of the same name) with the same arguments.
impl PartialEq for DynamicCall {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.tool, &other.tool) && self.arguments == other.arguments
    }
}

impl Eq for DynamicCall {}

/// What a run-time tool's call that worked answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DynamicOutput {
    /// The answer as text: what the model reads after `"ok": true`, and
    /// what the person's excerpt is cut from.
    pub output: String,
}

impl Shown for DynamicOutput {
    fn status(&self) -> ToolStatus {
        if self.output.is_empty() {
            ToolStatus::Empty("no output".into())
        } else {
            ToolStatus::Ok
        }
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.output)
    }

    fn cut(&mut self, max_bytes: usize) -> bool {
        cut_head(
            &mut self.output,
            max_bytes,
            "ask the tool for less to see the rest",
        )
    }
}

/// A call in brief from its arguments alone: the file, command or pattern
/// they name (its first line), or else the arguments as compact JSON; at
/// most 80 characters, empty when there are none. The row
/// of a call that failed validation reads it, and so does a run-time
/// tool's without a summary of its own.
pub fn brief(arguments: &Map<String, Value>) -> String {
    let named = ["path", "command", "pattern"].iter().find_map(|key| {
        arguments
            .get(*key)?
            .as_str()?
            .lines()
            .next()
            .map(str::to_owned)
    });
    let shown = named
        .or_else(|| {
            (!arguments.is_empty()).then(|| serde_json::to_string(arguments).unwrap_or_default())
        })
        .unwrap_or_default();
    shown.chars().take(BRIEF_MAX_CHARS).collect()
}

/// A call's arguments whole, as a confirmation shows them: indented
/// JSON, one line a row (control characters arrive escaped).
pub fn argument_lines(arguments: &Map<String, Value>) -> Vec<PreviewLine> {
    let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
    text.lines().map(|l| line(PreviewKind::Added, l)).collect()
}

/// A preview of a call of `tool` that shows its arguments whole, one line
/// of indented JSON a row.
fn arguments_preview(tool: &str, arguments: &Map<String, Value>) -> Preview {
    let mut lines = vec![header(format!("call {tool} with:"))];
    lines.extend(argument_lines(arguments));
    Preview {
        lines,
        guard: FileGuard::Unguarded,
    }
}
