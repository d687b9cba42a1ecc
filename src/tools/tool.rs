//! What a tool is: the one trait every tool file implements, so that a tool
//! is one file (its spec, typed arguments, summary, preview and run) plus
//! its line in the registry. The recipe is in the `tools` module
//! documentation; ADR 0011.

use std::borrow::Cow;
use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, ToolStatus};

use super::ToolContext;
use super::failure::ToolFailure;
use super::preview::header;

/// What running a call can change. It decides who is asked first (ADR
/// 0014), whether the call waits for the calls before it (ADR 0015), and
/// how a preview too long to review tells the model to split the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It only reads: it runs at once, beside other reads, never asked.
    Reads,
    /// It writes files inside the project: asked under `ask`, applied
    /// under `auto-edit` unless it lands in `.git` (a run-time tool's
    /// writes are asked about as a command is, ADR 0042).
    WritesFiles,
    /// It runs a program, which may do anything: asked unless every call
    /// is approved.
    RunsCommands,
}

/// One tool. The implementing type is the call's typed arguments, parsed by
/// serde only after the JSON Schema of [`parameters`](Tool::parameters)
/// accepted them, so a serde default must be the schema's `default`.
pub trait Tool:
    DeserializeOwned + Clone + std::fmt::Debug + PartialEq + Eq + Send + Sync + 'static
{
    /// The name the model calls the tool by.
    const NAME: &'static str;
    /// What a call can change.
    const EFFECT: Effect;
    /// What a call that worked returns. Its fields, in order, are what the
    /// model reads after `"ok": true`.
    type Output: Serialize + Shown + std::fmt::Debug + Clone + PartialEq + Eq + Send + 'static;

    /// What the model reads about the tool: what it does, its bounds, and
    /// how to recover from its failures.
    fn description() -> String;

    /// The JSON Schema of the arguments: shown to the model (but for
    /// [`HIDDEN`](Tool::HIDDEN)) and enforced by validation before
    /// anything else.
    fn parameters() -> Value;

    /// Parameters the schema accepts but the model is not shown: flags a
    /// small model would set on every call by reflex, each named by the
    /// failure that needs it (ADR 0050).
    const HIDDEN: &'static [&'static str] = &[];

    /// Parameters the shown schema requires though the whole one does
    /// not: a hidden parameter is their alternative, so as far as the
    /// model knows there is none (ADR 0050).
    const SHOWN_REQUIRED: &'static [&'static str] = &[];

    /// Rules the schema cannot state (two fields compared), checked after
    /// the typed parse and before any side effect.
    fn check(&self) -> Result<(), ToolFailure> {
        Ok(())
    }

    /// The call in brief, for its row in the log: `src/main.rs:120-180`.
    fn summary(&self) -> String;

    /// The path the call reads, writes, lists, searches or runs in, as the
    /// model gave it: what the repeat detector puts in a normal form.
    fn place_mut(&mut self) -> &mut String;

    /// The file the call writes, as the model gave it, so the approval
    /// policy can see whether it lands in `.git`.
    fn written_path(&self) -> Option<&str> {
        None
    }

    /// What the person approves, and the guard its run will check. Reads
    /// files: it runs on the blocking pool. A call that cannot succeed
    /// fails here with the failure its run would give. A tool that only
    /// reads is never previewed; the default is its summary.
    fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
        let _ = ctx;
        Ok(Preview {
            lines: vec![header(self.summary())],
            guard: FileGuard::Unguarded,
        })
    }

    /// Runs the call. A file tool lands only if the file still matches
    /// `guard`; `cancel` stops a command, or a file tool not yet started.
    fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        guard: FileGuard,
    ) -> impl Future<Output = Result<Self::Output, ToolFailure>> + Send;
}

/// What a result that worked shows the person under the call's row (the
/// model reads all of it).
pub trait Shown {
    /// How the row reads: ok, unless the output itself is worth seeing as
    /// a failure at a glance (a command's non-zero exit), or is empty and
    /// the row should say what that means.
    fn status(&self) -> ToolStatus {
        ToolStatus::Ok
    }

    /// The text an excerpt is cut from: file content, command output,
    /// names. Nothing by default.
    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    /// Cuts the output to about `max_bytes` of text, before it is ever
    /// sent, so that it fits the model's context window; what is kept ends
    /// with a marker saying how to get the rest. False when there is
    /// nothing to cut (the default: small outputs). ADR 0021.
    fn cut(&mut self, max_bytes: usize) -> bool {
        let _ = max_bytes;
        false
    }
}

/// Runs a file tool's work on the blocking pool, unless the call was
/// cancelled before it started. Work that has begun runs to its end: a
/// write that may have landed is never reported as cancelled (ADR 0012).
pub(crate) async fn on_blocking_pool<T: Send + 'static>(
    tool: &'static str,
    cancel: &CancellationToken,
    work: impl FnOnce() -> Result<T, ToolFailure> + Send + 'static,
) -> Result<T, ToolFailure> {
    if cancel.is_cancelled() {
        return Err(ToolFailure::Cancelled {
            tool: tool.to_owned(),
            output: None,
        });
    }
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ToolFailure::ExecutionFailed {
            tool: tool.to_owned(),
            message: format!("internal error: the tool task failed: {e}"),
        })
    })
}

/// A path parameter's schema: the same words for every tool.
pub(crate) fn path_parameter(what: &str) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "description": format!(
            "{what}, relative to the working directory (or absolute inside it). \
             Paths that leave the working directory, directly or through a symbolic link, are refused."
        ),
    })
}
