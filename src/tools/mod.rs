//! The tool catalogue: everything a tool call does between "the model asked
//! for X" and "here is the structured result". No UI, no agent loop; of
//! the rest of the crate it knows only `protocol`, `secret` and
//! `stable_hash` (which import nothing else).
//!
//! The agent holds a [`Registry`] (the built-ins, and any tool registered
//! at run time, a [`DynamicTool`]) and asks it for the request body's
//! `tools` ([`Registry::definitions`]) and to validate each call the model
//! streamed, its arguments parsed once by the stream
//! ([`Registry::validate`], before confirmation); then [`preview`] for a
//! call that needs confirming, and [`execute`] / [`execute_guarded`] on a
//! validated (and, where asked, approved) call. Every path ends in a typed
//! [`ToolResult`] — a failure is a result ([`ToolFailure`]), never a panic —
//! which becomes the JSON the model reads in one place,
//! [`ToolResult::to_json`]. ADRs 0010–0013; the search tools, ADR 0024;
//! the [`Workspace`] every tool acts through, ADR 0026.
//!
//! # Adding a tool
//!
//! A tool is one file and one line of the registry:
//!
//! 1. In a new file (`stat.rs`), a struct of the call's arguments deriving
//!    `Deserialize` (with `#[serde(deny_unknown_fields)]`, and a serde
//!    default wherever the schema states one), and a struct of what a call
//!    that worked returns deriving `Serialize`, its fields in the order the
//!    model should read them, and implementing [`Shown`] (what the person
//!    sees under the call's row).
//! 2. `impl Tool` for the arguments: its name, its [`Effect`], the
//!    description (with recovery guidance for its failures) and JSON Schema
//!    the model reads, its summary, its preview if it changes anything, and
//!    its `run` (file work goes through `on_blocking_pool`). Every file and
//!    process access goes through `ctx.workspace`, the [`Workspace`]: paths
//!    through `resolve_for` (the path policy), then its `stat`, `open_regular`,
//!    `list`, `write_atomic`, `walk` (as `glob` and `grep` do) or `spawn` —
//!    never `std::fs`, a `Command` or a walker of the tool's own, so the
//!    tool runs unchanged on any workspace (ADR 0026; a test in
//!    `tests/tools/seam.rs` holds every tool file to it).
//! 3. `mod stat;` here, and `Stat(stat::Stat),` in `registry.rs`, where its
//!    line takes its place in the order the model sees the tools.
//!
//! A tool known only at run time is instead a value implementing
//! [`DynamicTool`] (its schema, effect, summary, preview and run over a
//! JSON object of arguments), given to [`Registry::register`]; ADR 0042.
//!
//! Validation, the `tools` array, dispatch, the agent's status and excerpt
//! and the JSON the model reads all follow from those; the snapshot tests in
//! `tests/tools/results.rs` show the new result as the model will read it.

pub(crate) mod analyser;
mod atomic;
mod beneath;
mod checkpoint;
mod command;
mod dynamic;
pub(crate) mod edit;
mod env;
pub(crate) mod escalation;
pub(crate) mod exec;
mod failure;
mod git_dirs;
pub(crate) mod glob;
pub(crate) mod grep;
mod guard;
mod ignore_rules;
mod known;
mod landed;
pub(crate) mod list;
mod local;
pub(crate) mod locate;
pub(crate) mod loose;
mod memory;
mod path_policy;
pub(crate) mod preview;
mod probe;
pub(crate) mod read;
mod reaper;
pub(crate) mod registry;
pub(crate) mod result;
pub mod sandbox;
pub(crate) mod syntax;
mod tool;
mod validate;
pub(crate) mod walk;
mod workspace;
pub(crate) mod write;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::protocol::FileGuard;
use crate::secret::Secret;

pub use analyser::{Analyser, EnvSetting, ParseError, Plan, Verdict, analyse, parse, work_tree};

pub(crate) use analyser::ANALYSER_RUN_ENV;
pub(crate) use checkpoint::CHECKPOINT_MAX_BYTES;
pub use checkpoint::{
    CheckpointLog, CheckpointOp, Checkpoints, FileChange, FileState, Kept, Restored, Standing,
    Surveyed, TurnChanges, restore, state_of, survey,
};
pub use command::{ClearedCommand, ExecuteCommand, ExecuteCommandOutput};
pub use dynamic::{DynamicCall, DynamicOutput, DynamicTool, argument_lines, brief};
pub use edit::{EditFile, EditFileOutput, InsertAt, LocateError, NearMatch, Place, locate, splice};
pub use env::{child_env, is_secret, is_secret_var, with_settings};
pub use escalation::SandboxChoice;
pub use exec::live_tail;
pub(crate) use exec::{EXEC_DEFAULT_MAX_TIMEOUT, EXEC_DEFAULT_TIMEOUT};
pub use failure::ToolFailure;
pub use git_dirs::in_git;
pub use glob::{Glob, GlobOutput};
pub use grep::{Grep, GrepOutput};
pub use known::KnownFiles;
pub use list::{Entry, EntryKind, ListDirectory, ListDirectoryOutput};
pub use local::LocalWorkspace;
pub use locate::{ProjectTop, project_files, project_top};
pub use loose::{LooseMatch, locate_loose};
pub use memory::MemoryWorkspace;
pub use path_policy::{PathError, resolve};
pub use preview::{Judged, judge, preview};
pub use read::{ReadFile, ReadFileOutput, shows_as_text};
pub use reaper::kill_all_commands;
pub use registry::{Registry, RegistryError, ToolCall, ToolOutput};
pub use result::ToolResult;
pub use syntax::{SyntaxError, SyntaxErrors};
pub use tool::{Effect, Shown, Tool};
pub(crate) use workspace::PROBE_TIMEOUT;
pub use workspace::{
    Exit, FileKind, FileReader, Listed, Listing, Opener, Parents, ProbeError, Probed, Processes,
    Sandbox, ScanError, ScanStep, Seen, Served, Shell, SpawnError, Spawned, Stat, Visitor,
    WalkError, Workspace, WriteError,
};
pub use write::{WriteAction, WriteFile, WriteFileOutput};

/// Where and how tools run: the workspace every file and process access
/// goes through, the command time limit, the extra environment variables
/// to keep from child processes, and the files the model has seen.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The workspace's root (for [`ToolContext::new`], the working
    /// directory's real path): what the agent reads the project's
    /// instructions from. The tools reach files only through `workspace`.
    pub root: PathBuf,
    /// Where the tools act: every path is resolved, every file opened and
    /// every command started through it.
    pub workspace: Arc<dyn Workspace>,
    /// How long `execute_command` may run before its process group is
    /// killed.
    pub exec_timeout: Duration,
    /// The longest time limit a call may ask for (`timeout_seconds`).
    pub exec_timeout_max: Duration,
    /// Variables removed from a command's environment besides the
    /// credentials [`is_secret_var`] finds: the provider key variable the
    /// person configured (any name), dashfloat's own start-up variables.
    pub secret_vars: Vec<String>,
    /// Variables handed to every command on purpose (`[exec] pass_env`),
    /// whatever [`is_secret`] says about them.
    pub pass_env: Vec<(OsString, Secret<OsString>)>,
    /// The files the model has seen in this conversation: `write_file`
    /// replaces only those (ADR 0030).
    pub known: KnownFiles,
    /// What the file tools changed in each turn, for `/undo` (ADR 0035).
    pub checkpoints: Checkpoints,
    /// Where a running command's latest output goes while it runs (its
    /// last bytes, which [`live_tail`] makes lines of), for the person
    /// to watch: set on the one call's own copy of the context.
    pub live_output: Option<tokio::sync::watch::Sender<Vec<u8>>>,
    /// The sandbox a command of this call runs in, as the approval policy
    /// decided (ADR 0044): set on the one call's own copy of the context.
    /// [`Sandbox::Unconfined`] in a context made here, for a call run
    /// directly; a line the analyser cleared runs read-only whatever this
    /// says.
    pub sandbox: Sandbox,
}

impl ToolContext {
    /// A context for the [`LocalWorkspace`] at the real path of `root`,
    /// with the default time limits ([`EXEC_DEFAULT_TIMEOUT`],
    /// [`EXEC_DEFAULT_MAX_TIMEOUT`]), no extra secret variables and none
    /// passed.
    pub fn new(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        ToolContext::sandboxed(root, sandbox::SandboxSettings::from_env())
    }

    /// [`ToolContext::new`], with `settings` saying what a sandboxed
    /// command may not read (ADR 0043).
    pub fn sandboxed(
        root: impl Into<PathBuf>,
        settings: sandbox::SandboxSettings,
    ) -> std::io::Result<Self> {
        let local = LocalWorkspace::new(root);
        let real = local.real_path(local.root())?;
        Ok(ToolContext::with_workspace(Arc::new(
            LocalWorkspace::new(real).with_sandbox(settings),
        )))
    }

    /// A context for `workspace` (its root as [`ToolContext::root`]), with
    /// the defaults of [`ToolContext::new`].
    pub fn with_workspace(workspace: Arc<dyn Workspace>) -> Self {
        ToolContext {
            root: workspace.root().to_path_buf(),
            workspace,
            exec_timeout: EXEC_DEFAULT_TIMEOUT,
            exec_timeout_max: EXEC_DEFAULT_MAX_TIMEOUT,
            secret_vars: Vec::new(),
            pass_env: Vec::new(),
            known: KnownFiles::default(),
            checkpoints: Checkpoints::default(),
            live_output: None,
            sandbox: Sandbox::Unconfined,
        }
    }

    /// The environment a command runs with: this process's, minus the
    /// credentials, plus what the person hands to commands on purpose.
    pub fn command_env(&self) -> Vec<(OsString, OsString)> {
        child_env(std::env::vars_os(), &self.secret_vars, &self.pass_env)
    }
}

/// Runs a validated call and returns its result. File tools run on the
/// blocking pool; `cancel` interrupts a command (its process group is
/// killed) and stops a file tool that has not started yet — a write that
/// has begun is never reported as cancelled, because it may have landed.
pub async fn execute(call: &ToolCall, ctx: &ToolContext, cancel: CancellationToken) -> ToolResult {
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
) -> ToolResult {
    execute_approved(&Approved::Call(call.clone()), ctx, cancel, guard).await
}

/// What runs for a call once it may: the model's call as validated, or,
/// for a command line the read-only analyser cleared, its rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approved {
    /// The call as the model made it.
    Call(ToolCall),
    /// The analyser's rendering of a command line (ADR 0025).
    Cleared(ClearedCommand),
}

impl Approved {
    /// What running it can change.
    pub fn effect(&self) -> Effect {
        match self {
            Approved::Call(call) => call.effect(),
            Approved::Cleared(_) => Effect::RunsCommands,
        }
    }

    /// The tool's name as the model knows it.
    pub fn name(&self) -> &str {
        match self {
            Approved::Call(call) => call.name(),
            Approved::Cleared(_) => ExecuteCommand::NAME,
        }
    }
}

/// Runs what was approved: a call as [`execute_guarded`] does, a cleared
/// command line with the analyser's environment.
pub async fn execute_approved(
    run: &Approved,
    ctx: &ToolContext,
    cancel: CancellationToken,
    guard: FileGuard,
) -> ToolResult {
    let outcome = match run {
        Approved::Call(call) => call.run(ctx, &cancel, guard).await,
        Approved::Cleared(cleared) => cleared
            .run(ctx, &cancel)
            .await
            .map(ToolOutput::ExecuteCommand),
    };
    ToolResult {
        outcome,
        confinement_notice: ctx.workspace.take_notice(),
        notice: None,
        unchanged: false,
    }
}

/// `.`, the project itself: the default of every tool's path or
/// directory argument.
fn here() -> String {
    ".".to_owned()
}

/// Resolves a path for `tool` in `workspace`, turning a refusal into its
/// failure.
fn resolve_for(tool: &str, workspace: &dyn Workspace, path: &str) -> Result<PathBuf, ToolFailure> {
    workspace
        .resolve(path)
        .map_err(|e| ToolFailure::PathDenied {
            tool: tool.to_owned(),
            message: e.to_string(),
        })
}

/// Where a search of `tool` looks: the project's root and the `path` the
/// call names, both resolved, and what is at the path; each refusal as
/// `tool`'s failure.
fn search_place(
    tool: &str,
    ws: &dyn Workspace,
    path: &str,
) -> Result<(PathBuf, PathBuf, Stat), ToolFailure> {
    let root = ws
        .real_path(ws.root())
        .map_err(|e| io_failure(tool, ".", "search", &e))?;
    let target = resolve_for(tool, ws, path)?;
    let meta = ws
        .stat(&target)
        .map_err(|e| missing_failure(tool, ws, path, "search", &e))?;
    Ok((root, target, meta))
}

/// A walk that could not start, as a search tool's execution failure.
fn cannot_search(tool: &str, e: &WalkError) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: tool.to_owned(),
        message: format!("cannot search .: {e}"),
    }
}

/// An I/O error as an execution failure naming the path as given. A path
/// not found that holds a wildcard was meant as a pattern (the 1.5B sent
/// grep `target/test_*`): the hint says which argument takes one.
fn io_failure(tool: &str, path: &str, what: &str, e: &std::io::Error) -> ToolFailure {
    let wildcard = has_wildcard(path);
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound if wildcard && tool == Grep::NAME => {
            "; path takes no wildcards: give the folder as path and the file pattern as include"
        }
        std::io::ErrorKind::NotFound if wildcard && tool == Glob::NAME => {
            "; path takes no wildcards: give the folder as path and the rest as pattern"
        }
        std::io::ErrorKind::NotFound if wildcard => {
            "; a path takes no wildcards: glob finds files by a pattern"
        }
        std::io::ErrorKind::NotFound => "; list_directory the parent to find the right name",
        std::io::ErrorKind::PermissionDenied => "; the file's permissions do not allow it",
        _ => "",
    };
    cannot(tool, path, what, e, hint)
}

/// "cannot {what} {path}: {e}" and what to do next, as an execution
/// failure of `tool`.
fn cannot(tool: &str, path: &str, what: &str, e: &std::io::Error, hint: &str) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: tool.to_owned(),
        message: format!("cannot {what} {path}: {e}{hint}"),
    }
}

/// Whether a path holds `*` or `?`: a pattern put where a path goes.
fn has_wildcard(path: &str) -> bool {
    path.contains(['*', '?'])
}

/// [`io_failure`] for the first look at a path a call names: when nothing
/// is there, the hint says where in the project its name is
/// (`locate::hint`).
fn missing_failure(
    tool: &str,
    ws: &dyn Workspace,
    path: &str,
    what: &str,
    e: &std::io::Error,
) -> ToolFailure {
    if e.kind() != std::io::ErrorKind::NotFound || has_wildcard(path) {
        return io_failure(tool, path, what, e);
    }
    cannot(tool, path, what, e, &locate::hint(ws, path))
}
