//! Starting hooks and reading what they answer. Each hook is
//! `/bin/sh -c COMMAND` in the project, started as an MCP server is
//! (`Workspace::serve`, on a blocking thread, as starting one blocks): in
//! a session of its own, dying with dashfloat, and kept out of every
//! command's sweep, so a command ending in the same turn never kills a
//! hook. The person's hooks run in the sandbox a
//! command they approve runs in; a project's always in workspace-write,
//! and where the kernel cannot give that, not at all (the start fails,
//! which is a notice). The hooks of one event run side by side; the
//! event waits for all of them. ADR 0054.
//!
//! What a hook answers (`docs/hooks.md`): exit 0 goes on, its standard
//! output kept (context for `user_prompt_submit`); exit 2 blocks a
//! `pre_tool_use` call or a `user_prompt_submit` prompt, its standard
//! error the reason — or exit 0 with `{"decision": "deny"|"block",
//! "reason": …}` on its standard output. Anything else, a timeout or a
//! start that failed is a [`HookFailure`]: the event goes on as if there
//! were no hook.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::safe_text::strip_controls;
use crate::tools::{Sandbox, Served, Workspace};

use super::config::{Hook, HookEvent, Whose};
use super::event::Event;

/// The most of a hook's standard output, and of its standard error, kept
/// (64 KiB each); the rest is read and dropped, so a hook printing
/// without end neither fills memory nor blocks on a full pipe.
pub const HOOK_OUTPUT_MAX_BYTES: usize = 64 * 1024;
/// The most of what a prompt's hooks print that follows it (64 KiB, all
/// its hooks together): far more than the context a hook adds, and a
/// bound however many hooks there are.
pub const HOOK_CONTEXT_MAX_BYTES: usize = 64 * 1024;
/// The most of a reason a blocking hook gives that is kept (2 KiB): the
/// model reads it in the call's result, and a paragraph says why.
pub const HOOK_REASON_MAX_BYTES: usize = 2 * 1024;
/// The most of a failed hook's standard error its notice shows.
const FAILURE_EXCERPT_MAX_BYTES: usize = 300;
/// How long to keep reading after a hook ended and its group was killed:
/// a process outside the group handed the pipe can hold it open forever,
/// and must not hold the event with it (as for a command, ADR 0013).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// The shell every hook runs under.
const SHELL: &str = "/bin/sh";
/// The exit code that blocks (Claude Code's, so a guard script written
/// for it answers the same here).
const EXIT_BLOCK: i32 = 2;

/// Where and as whom hooks run: the workspace that starts them, the
/// project they run in and are told of, the environment a command gets,
/// the sandbox of a command the person approves (for their own hooks),
/// and the session they are told of.
#[derive(Debug, Clone)]
pub struct Runner {
    /// Starts the hooks' processes.
    pub workspace: Arc<dyn Workspace>,
    /// The project's root: the hooks' working directory and `cwd`.
    pub project: PathBuf,
    /// The environment a command gets (credentials removed).
    pub env: Vec<(OsString, OsString)>,
    /// The sandbox the person's own hooks run in.
    pub person_sandbox: Sandbox,
    /// The open session's id.
    pub session_id: String,
}

/// One hook and how it ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The hook.
    pub hook: Hook,
    /// How it ended.
    pub end: HookEnd,
}

/// How a hook ended, as the event reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEnd {
    /// It let the event go on; its standard output, trimmed.
    Passed(String),
    /// It blocked the call or the prompt, with this reason.
    Blocked(String),
    /// It failed: the event goes on as if there were no hook.
    Failed(HookFailure),
}

/// Why a hook failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookFailure {
    /// It could not be started (the sandbox could not be entered, the
    /// shell could not be run, the workspace runs no processes).
    #[error("it could not start: {0}")]
    Start(String),
    /// It ran past its timeout, and its process group was killed.
    #[error("it ran longer than its {0} s timeout and was killed")]
    TimedOut(u64),
    /// It exited with a code that is neither 0 nor a block.
    #[error("it exited with {code}{stderr}")]
    Exit {
        /// The exit code.
        code: i32,
        /// `: ` and the start of its standard error, or nothing.
        stderr: String,
    },
    /// A signal ended it.
    #[error("it was killed by signal {0}")]
    Signal(i32),
    /// Its end could not be waited for.
    #[error("cannot wait for it: {0}")]
    Wait(String),
}

impl Ran {
    /// The notice that says it failed, if it did.
    pub fn failure_notice(&self) -> Option<String> {
        let HookEnd::Failed(failure) = &self.end else {
            return None;
        };
        Some(format!(
            "{} failed: {failure}; it was ignored",
            describe(&self.hook)
        ))
    }
}

/// A hook as notices name it: its event, whose it is and its command.
pub fn describe(hook: &Hook) -> String {
    let whose = match hook.whose {
        Whose::Person => "your",
        Whose::Project => "the project's",
    };
    format!(
        "{whose} {} hook `{}`",
        hook.event.name(),
        strip_controls(&hook.command)
    )
}

/// Runs the hooks among `hooks` that are for `event`, side by side, each
/// told `event` on its standard input; how each ended, in their order.
pub async fn run_hooks(hooks: &[Hook], event: &Event, runner: &Runner) -> Vec<Ran> {
    let kind = event.kind();
    let stdin: Arc<[u8]> = event.stdin(&runner.session_id, &runner.project).into();
    let runs = hooks
        .iter()
        .filter(|hook| hook.runs_for(kind, event.tool()))
        .map(|hook| {
            let stdin = Arc::clone(&stdin);
            async move {
                let end = match run_one(hook, &stdin, runner).await {
                    Ok(finished) => finished.judge(kind),
                    Err(failure) => HookEnd::Failed(failure),
                };
                Ran {
                    hook: hook.clone(),
                    end,
                }
            }
        });
    futures_util::future::join_all(runs).await
}

/// What a hook that ran to its end left.
struct Finished {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Starts `hook`, gives it `stdin`, and waits for it within its timeout.
async fn run_one(hook: &Hook, stdin: &[u8], runner: &Runner) -> Result<Finished, HookFailure> {
    let sandbox = match hook.whose {
        Whose::Person => runner.person_sandbox,
        Whose::Project => Sandbox::WorkspaceWrite,
    };
    let mut env = runner.env.clone();
    env.push(("DASHFLOAT_EVENT".into(), hook.event.name().into()));
    env.push(("DASHFLOAT_PROJECT".into(), runner.project.clone().into()));
    // Starting blocks: the sandbox's rules are built, the repository
    // found, paths resolved and the process forked. Not on the async
    // threads, which other hooks, calls and the UI's events share.
    let start = {
        let (workspace, project) = (Arc::clone(&runner.workspace), runner.project.clone());
        let args = ["-c".to_owned(), hook.command.clone()];
        tokio::task::spawn_blocking(move || workspace.serve(&project, SHELL, &args, env, sandbox))
    };
    let Served { mut child, hold } = start
        .await
        .map_err(|e| HookFailure::Start(format!("the task starting it failed: {e}")))?
        .map_err(|e| HookFailure::Start(e.to_string()))?;
    // Killed with everything in its group however this ends: its end,
    // its timeout, or the event's wait dropped (Esc).
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(|id| Group(Pid::from_raw(id)));
    let (input, output, errors) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let ended = {
        let io = async {
            tokio::join!(
                feed(input, stdin),
                keep_head(output, &mut stdout),
                keep_head(errors, &mut stderr)
            )
        };
        tokio::pin!(io);
        let deadline = tokio::time::sleep(hook.timeout);
        tokio::pin!(deadline);
        let mut io_done = false;
        let ended = loop {
            tokio::select! {
                biased;
                () = &mut deadline => break None,
                _ = &mut io, if !io_done => io_done = true,
                status = child.wait() => break Some(status),
            }
        };
        // What it left running in its group dies with it, so the pipes
        // close unless something outside the group holds them.
        drop(group);
        if !io_done {
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut io).await;
        }
        ended
    };
    drop(hold);
    match ended {
        None => Err(HookFailure::TimedOut(hook.timeout.as_secs())),
        Some(Err(e)) => Err(HookFailure::Wait(e.to_string())),
        Some(Ok(status)) => Ok(Finished {
            status,
            stdout,
            stderr,
        }),
    }
}

/// A hook's process group, killed when this is dropped.
struct Group(Pid);

impl Drop for Group {
    fn drop(&mut self) {
        // ESRCH: everything in it has ended already.
        let _ = killpg(self.0, Signal::SIGKILL);
    }
}

/// Writes the event to the hook and closes its input. A hook that does
/// not read it (or ends first) breaks the pipe: that is its choice.
async fn feed(input: Option<tokio::process::ChildStdin>, bytes: &[u8]) {
    if let Some(mut input) = input {
        let _ = input.write_all(bytes).await;
    }
}

/// Reads `pipe` to its end, keeping the first [`HOOK_OUTPUT_MAX_BYTES`]
/// in `kept`.
async fn keep_head(pipe: Option<impl AsyncRead + Unpin>, kept: &mut Vec<u8>) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let room = HOOK_OUTPUT_MAX_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
}

/// What a blocking hook may print on its standard output instead of
/// exiting with 2.
#[derive(Debug, Deserialize)]
struct Printed {
    decision: PrintedDecision,
    #[serde(default)]
    reason: String,
}

/// The decisions a hook may print; `allow` and `approve` go on as exit 0
/// does, and never let a call past the approval policy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum PrintedDecision {
    Deny,
    Block,
    Allow,
    Approve,
}

impl Finished {
    /// How the hook ended, for `event`: only a `pre_tool_use` and a
    /// `user_prompt_submit` hook can block.
    fn judge(self, event: HookEvent) -> HookEnd {
        let can_block = matches!(event, HookEvent::PreToolUse | HookEvent::UserPromptSubmit);
        let stdout = String::from_utf8_lossy(&self.stdout).trim().to_owned();
        let stderr = String::from_utf8_lossy(&self.stderr);
        match self.status.code() {
            Some(0) => match serde_json::from_str::<Printed>(&stdout) {
                Ok(Printed {
                    decision: PrintedDecision::Deny | PrintedDecision::Block,
                    reason,
                }) if can_block => HookEnd::Blocked(reason_of(&reason)),
                Ok(_) => HookEnd::Passed(String::new()),
                Err(_) => HookEnd::Passed(stdout),
            },
            Some(EXIT_BLOCK) if can_block => HookEnd::Blocked(reason_of(&stderr)),
            Some(code) => HookEnd::Failed(HookFailure::Exit {
                code,
                stderr: excerpt(&stderr),
            }),
            None => HookEnd::Failed(HookFailure::Signal(self.status.signal().unwrap_or(0))),
        }
    }
}

/// A blocking hook's reason: its words without control characters,
/// trimmed, at most [`HOOK_REASON_MAX_BYTES`].
fn reason_of(text: &str) -> String {
    let clean = strip_controls(text.trim()).trim().to_owned();
    if clean.is_empty() {
        return "it gave no reason".to_owned();
    }
    cut(clean, HOOK_REASON_MAX_BYTES)
}

/// `: ` and the start of a failed hook's standard error, or nothing.
fn excerpt(stderr: &str) -> String {
    let clean = strip_controls(stderr.trim()).replace('\n', " ");
    if clean.is_empty() {
        return String::new();
    }
    format!(": {}", cut(clean, FAILURE_EXCERPT_MAX_BYTES))
}

/// `text` cut at a character's end within `max` bytes, `…` marking a cut.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        text.truncate(text.floor_char_boundary(max));
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
        Finished {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn exit_two_blocks_with_its_errors_as_the_reason() {
        let end = finished(2, "", "  no rm -rf here\n").judge(HookEvent::PreToolUse);
        assert_eq!(end, HookEnd::Blocked("no rm -rf here".into()));
        let end = finished(2, "", "").judge(HookEvent::UserPromptSubmit);
        assert_eq!(end, HookEnd::Blocked("it gave no reason".into()));
    }

    #[test]
    fn a_printed_decision_blocks_only_where_blocking_means_something() {
        let deny = r#"{"decision": "deny", "reason": "not on main"}"#;
        assert_eq!(
            finished(0, deny, "").judge(HookEvent::PreToolUse),
            HookEnd::Blocked("not on main".into())
        );
        assert_eq!(
            finished(0, deny, "").judge(HookEvent::Stop),
            HookEnd::Passed(String::new())
        );
        let allow = r#"{"decision": "allow"}"#;
        assert_eq!(
            finished(0, allow, "").judge(HookEvent::PreToolUse),
            HookEnd::Passed(String::new())
        );
    }

    #[test]
    fn exit_zero_keeps_what_it_printed() {
        assert_eq!(
            finished(0, "\nbranch: main\n", "").judge(HookEvent::UserPromptSubmit),
            HookEnd::Passed("branch: main".into())
        );
    }

    #[test]
    fn any_other_exit_is_a_failure_with_the_start_of_its_errors() {
        let end = finished(2, "", "boom\nmore").judge(HookEvent::PostToolUse);
        assert_eq!(
            end,
            HookEnd::Failed(HookFailure::Exit {
                code: 2,
                stderr: ": boom more".into()
            })
        );
        let long = "x".repeat(5000);
        let HookEnd::Blocked(reason) = finished(2, "", &long).judge(HookEvent::PreToolUse) else {
            panic!("not blocked");
        };
        assert_eq!(reason.len(), HOOK_REASON_MAX_BYTES + '…'.len_utf8());
    }
}
