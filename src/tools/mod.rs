//! The tool catalogue: everything a tool call does between "the model asked
//! for X" and "here is the structured result". No UI, no agent loop; of
//! the rest of the crate it knows only `protocol`.
//!
//! The agent calls [`definitions`] for the request body, [`validate`] on
//! each call the model streamed (before confirmation), [`preview`] for a
//! call that needs confirming, and [`execute`] / [`execute_guarded`] on a
//! validated (and, where asked, approved) call. Every path ends in a JSON result object; a failure is a
//! result ([`ToolFailure::to_json`]), never a panic. ADRs 0010–0013.

mod atomic;
mod catalogue;
mod edit;
mod env;
mod exec;
mod failure;
mod guard;
mod list;
mod path_policy;
mod preview;
mod read;
mod reaper;
mod validate;
mod write;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::FileGuard;

pub use catalogue::definitions;
pub use edit::{EDIT_MAX_FILE_BYTES, LocateError, NearMatch, locate, splice};
pub use env::{SECRET_VARS, child_env, is_secret};
pub use exec::{EXEC_DEFAULT_TIMEOUT, EXEC_DRAIN_GRACE, EXEC_OUTPUT_MAX_BYTES};
pub use failure::ToolFailure;
pub use list::LIST_MAX_ENTRIES;
pub use path_policy::{PATH_MAX_LINKS, PathError, resolve};
pub use preview::{PREVIEW_CONTEXT_LINES, PREVIEW_MAX_LINES, preview};
pub use read::{
    READ_BINARY_PROBE_BYTES, READ_DEFAULT_LIMIT, READ_DEFAULT_OFFSET, READ_MAX_BYTES,
    READ_MAX_LIMIT, READ_MAX_LINES, READ_STREAM_THRESHOLD_BYTES,
};
pub use reaper::kill_all_commands;
pub use validate::validate;

/// Where and how tools run: the working directory every path is confined
/// to, the command time limit, and the extra environment variables to keep
/// from child processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolContext {
    /// The working directory; every path is resolved inside it.
    pub root: PathBuf,
    /// How long `execute_command` may run before its process group is
    /// killed.
    pub exec_timeout: Duration,
    /// Variables removed from a command's environment on top of
    /// [`SECRET_VARS`] — e.g. the provider key variable the person
    /// configured.
    pub secret_vars: Vec<String>,
}

impl ToolContext {
    /// A context rooted at the real path of `root`, with the default time
    /// limit ([`EXEC_DEFAULT_TIMEOUT`]) and no extra secret variables.
    pub fn new(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        Ok(ToolContext {
            root: root.into().canonicalize()?,
            exec_timeout: EXEC_DEFAULT_TIMEOUT,
            secret_vars: Vec::new(),
        })
    }
}

/// A validated call, ready to run: the tool and its typed arguments with
/// defaults filled in. Only [`validate`] makes one from model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// `read_file`: a window of lines of a text file.
    ReadFile {
        /// The file, as the model gave it.
        path: String,
        /// First line, 1-based.
        offset: u64,
        /// How many lines were asked for.
        limit: u64,
    },
    /// `write_file`: create or replace a whole file.
    WriteFile {
        /// The file, as the model gave it.
        path: String,
        /// The complete new content.
        content: String,
    },
    /// `edit_file`: replace one unique exact block.
    EditFile {
        /// The file, as the model gave it.
        path: String,
        /// The exact text to find (non-empty).
        search_block: String,
        /// Its replacement (differs from `search_block`).
        replace_block: String,
    },
    /// `execute_command`: a `/bin/sh -c` command line.
    ExecuteCommand {
        /// The command line.
        command: String,
        /// The directory to run in, as the model gave it.
        cwd: String,
    },
    /// `list_directory`: one directory's entries.
    ListDirectory {
        /// The directory, as the model gave it.
        path: String,
    },
}

impl ToolCall {
    /// Whether the call changes the machine (files or processes), i.e.
    /// whether the agent must ask before running it.
    pub fn mutates(&self) -> bool {
        match self {
            ToolCall::WriteFile { .. }
            | ToolCall::EditFile { .. }
            | ToolCall::ExecuteCommand { .. } => true,
            ToolCall::ReadFile { .. } | ToolCall::ListDirectory { .. } => false,
        }
    }

    /// The tool's name as the model knows it.
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::ReadFile { .. } => "read_file",
            ToolCall::WriteFile { .. } => "write_file",
            ToolCall::EditFile { .. } => "edit_file",
            ToolCall::ExecuteCommand { .. } => "execute_command",
            ToolCall::ListDirectory { .. } => "list_directory",
        }
    }
}

/// Runs a validated call and returns its result object. File tools run on
/// the blocking pool; `cancel` interrupts a command (its process group is
/// killed) and stops a file tool that has not started yet — a write that
/// has begun is never reported as cancelled, because it may have landed.
pub async fn execute(call: &ToolCall, ctx: &ToolContext, cancel: CancellationToken) -> Value {
    execute_guarded(call, ctx, cancel, FileGuard::Unguarded).await
}

/// Runs a call the person approved after seeing its [`preview`]: a write
/// or edit lands only if the file still matches `guard`, so what was
/// approved is what lands.
pub async fn execute_guarded(
    call: &ToolCall,
    ctx: &ToolContext,
    cancel: CancellationToken,
    guard: FileGuard,
) -> Value {
    let outcome = match call {
        ToolCall::ExecuteCommand { command, cwd } => {
            exec::execute_command(command, cwd, ctx, &cancel).await
        }
        _ if cancel.is_cancelled() => Err(ToolFailure::Cancelled {
            tool: call.name().to_owned(),
            output: None,
        }),
        _ => {
            let call = call.clone();
            let root = ctx.root.clone();
            let name = call.name();
            tokio::task::spawn_blocking(move || run_file_tool(&call, &root, guard))
                .await
                .unwrap_or_else(|e| {
                    Err(ToolFailure::ExecutionFailed {
                        tool: name.to_owned(),
                        message: format!("internal error: the tool task failed: {e}"),
                    })
                })
        }
    };
    outcome.unwrap_or_else(|failure| failure.to_json())
}

fn run_file_tool(
    call: &ToolCall,
    root: &std::path::Path,
    guard: FileGuard,
) -> Result<Value, ToolFailure> {
    match call {
        ToolCall::ReadFile {
            path,
            offset,
            limit,
        } => read::read_file(root, path, *offset, *limit),
        ToolCall::WriteFile { path, content } => write::write_file(root, path, content, guard),
        ToolCall::EditFile {
            path,
            search_block,
            replace_block,
        } => edit::edit_file(
            root,
            path,
            search_block.as_bytes(),
            replace_block.as_bytes(),
            guard,
        ),
        ToolCall::ListDirectory { path } => list::list_directory(root, path),
        ToolCall::ExecuteCommand { .. } => Err(ToolFailure::ExecutionFailed {
            tool: call.name().to_owned(),
            message: "internal error: a command reached the file tool runner".to_owned(),
        }),
    }
}

/// Resolves a path for `tool`, turning a refusal into its failure.
fn resolve_for(tool: &str, root: &std::path::Path, path: &str) -> Result<PathBuf, ToolFailure> {
    resolve(root, path).map_err(|e| ToolFailure::PathDenied {
        tool: tool.to_owned(),
        message: e.to_string(),
    })
}

/// An I/O error as an execution failure naming the path as given.
fn io_failure(tool: &str, path: &str, what: &str, e: &std::io::Error) -> ToolFailure {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => "; list_directory the parent to find the right name",
        std::io::ErrorKind::PermissionDenied => "; the file's permissions do not allow it",
        _ => "",
    };
    ToolFailure::ExecutionFailed {
        tool: tool.to_owned(),
        message: format!("cannot {what} {path}: {e}{hint}"),
    }
}
