//! `execute_command`: a `/bin/sh -c` command line the workspace starts in
//! its own session ([`Workspace::spawn`](super::Workspace::spawn)), its
//! output captured with a head cap, and every process it started — in its
//! group or not — killed on every way out ([`Spawned::processes`]).
//! `docs/decisions/0013-command-runner.md`.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::safe_text::strip_escapes;

use super::analyser::EnvSetting;
use super::command::{ExecuteCommand, ExecuteCommandOutput};
use super::env::with_settings;
use super::failure::{ToolFailure, format_duration};
use super::read::{is_continuation, trim_partial_char, whole_chars_len};
use super::tool::{Tool, on_blocking_pool};
use super::{
    Exit, Sandbox, SpawnError, Spawned, ToolContext, Workspace, io_failure, missing_failure,
    resolve_for,
};

const TOOL: &str = ExecuteCommand::NAME;

/// How long a command may run before its process group is killed (30 s),
/// unless the context says otherwise. ADR 0007 §2.
pub const EXEC_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest time limit a call may ask for with `timeout_seconds`
/// (30 min), unless the configuration says otherwise: long enough for a
/// build or a test run, short enough that a forgotten server is not kept
/// for hours.
pub const EXEC_DEFAULT_MAX_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Bytes of output kept (32 KiB): the head; the rest is read and counted
/// but not stored. ADR 0007 §2.
pub const EXEC_OUTPUT_MAX_BYTES: usize = 32 * 1024;
/// How long to keep reading after the command ended and its processes
/// were killed: a process outside the call (handed the pipe, or opening it
/// through `/proc`) can hold it open forever, and must not hold the call
/// with it. ADR 0013.
const EXEC_DRAIN_GRACE: Duration = Duration::from_millis(500);
/// Size of one read from the output pipe (one pipe buffer's worth).
const EXEC_READ_CHUNK_BYTES: usize = 64 * 1024;
/// The lines of a running command's output shown as it runs: enough to
/// see a test runner or a build move, few enough not to push the
/// conversation off the screen.
pub const EXEC_LIVE_LINES: usize = 5;
/// The most of one live line kept (bytes); a longer one is cut.
const EXEC_LIVE_LINE_BYTES: usize = 200;
/// The end of the output a live tail is taken from (bytes): at least
/// [`EXEC_LIVE_LINES`] lines of [`EXEC_LIVE_LINE_BYTES`].
const EXEC_LIVE_WINDOW_BYTES: usize = 2 * EXEC_LIVE_LINES * EXEC_LIVE_LINE_BYTES;
/// The shell the workspace runs every command line under, as failures name
/// it.
const SHELL: &str = "/bin/sh";

/// The head of the output and the count of everything, and while the
/// command runs, its latest bytes for whoever watches.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    total: u64,
    /// Holds the last [`EXEC_LIVE_WINDOW_BYTES`] of the output, when the
    /// call is watched.
    live: Option<tokio::sync::watch::Sender<Vec<u8>>>,
}

impl Capture {
    fn watched(live: Option<tokio::sync::watch::Sender<Vec<u8>>>) -> Self {
        Capture {
            live,
            ..Capture::default()
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = EXEC_OUTPUT_MAX_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        // Only bytes move here: the watcher makes lines of them when it
        // looks, at most every `LIVE_OUTPUT_INTERVAL`.
        if let Some(live) = &self.live {
            let recent = &bytes[bytes.len().saturating_sub(EXEC_LIVE_WINDOW_BYTES)..];
            live.send_modify(|window| {
                window.extend_from_slice(recent);
                let over = window.len().saturating_sub(EXEC_LIVE_WINDOW_BYTES);
                window.drain(..over);
            });
        }
    }

    fn truncated(&self) -> bool {
        self.total > self.head.len() as u64
    }

    /// The kept head as text, with the marker naming the total when more
    /// was printed than kept.
    fn render(mut self) -> String {
        let truncated = self.truncated();
        if truncated {
            trim_partial_char(&mut self.head);
        }
        let mut text = as_shown(&String::from_utf8_lossy(&self.head));
        if truncated {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[output truncated: showed the first {} of {} bytes]",
                self.head.len(),
                self.total
            ));
        }
        text
    }
}

/// The last [`EXEC_LIVE_LINES`] lines of `window` as a terminal would
/// show them: a line rewritten with `\r` (a progress bar) is its last
/// form, each is cut to [`EXEC_LIVE_LINE_BYTES`], and a character cut by
/// the window's start or by the last read is left out.
pub fn live_tail(window: &[u8]) -> String {
    let start = window
        .iter()
        .position(|b| !is_continuation(*b))
        .unwrap_or(window.len());
    // A read may also end inside a character: it shows once complete.
    let window = &window[start..];
    let text = String::from_utf8_lossy(&window[..whole_chars_len(window)]);
    let text = strip_escapes(&text);
    let text = text.trim_end_matches(['\n', '\r']);
    let lines: Vec<&str> = text
        .rsplit('\n')
        .map(|line| super::result::head(last_form(line), EXEC_LIVE_LINE_BYTES))
        .take(EXEC_LIVE_LINES)
        .collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// Output as a terminal shows it, in plain text: without its escape
/// sequences (colours, line erases, titles), and with each line rewritten
/// with `\r` (a progress bar) in its last form.
fn as_shown(output: &str) -> String {
    let plain = strip_escapes(output);
    if !plain.contains('\r') {
        return plain.into_owned();
    }
    plain
        .split('\n')
        .map(last_form)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last form of one line of output: what follows its last `\r`,
/// other than the `\r`s that end it (`\r\n`, or `\r\r\n` from a line
/// ending translated twice).
fn last_form(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    line.rsplit('\r').next().unwrap_or(line)
}

/// How the wait for the command ended.
enum End {
    Exited(std::io::Result<Exit>),
    TimedOut,
    Cancelled,
}

/// One command to run.
pub(crate) struct Run<'a> {
    /// The command line.
    pub(crate) command: &'a str,
    /// Where, as the model gave it.
    pub(crate) cwd: &'a str,
    /// How long it may run.
    pub(crate) limit: Duration,
    /// Changes to its environment after the credential scrub.
    pub(crate) env: &'a [EnvSetting],
    /// The kernel sandbox it runs in (a confined level also gives it a
    /// temporary folder of its own, `TMPDIR`, removed after the call).
    pub(crate) sandbox: Sandbox,
}

/// The directory a command runs in: `cwd` beneath the root, and a
/// directory that exists, so a call that could not start fails before
/// the person is asked to approve it.
pub(crate) fn working_dir(ws: &dyn Workspace, cwd: &str) -> Result<PathBuf, ToolFailure> {
    let dir = resolve_for(TOOL, ws, cwd)?;
    let meta = ws
        .stat(&dir)
        .map_err(|e| missing_failure(TOOL, ws, cwd, "run in", &e))?;
    if !meta.is_dir() {
        return Err(failed(format!("cwd {cwd} is not a directory")));
    }
    Ok(dir)
}

/// Runs a command line under `/bin/sh -c` in its `cwd` (opened beneath the
/// root), with the output captured and everything it started killed
/// however the call ends.
pub(crate) async fn execute_command(
    Run {
        command,
        cwd,
        limit,
        env,
        sandbox,
    }: Run<'_>,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> Result<ExecuteCommandOutput, ToolFailure> {
    // A missing `cwd` walks the project for its name: not on this thread.
    // Cancelled already, nothing starts.
    let dir = {
        let (ws, cwd) = (Arc::clone(&ctx.workspace), cwd.to_owned());
        on_blocking_pool(TOOL, cancel, move || working_dir(ws.as_ref(), &cwd)).await?
    };
    let ws = ctx.workspace.as_ref();
    let env = with_settings(ctx.command_env(), env);
    // Everything the command starts is the call's from the fork on: every
    // way out below kills it, and dropping `processes` (here or when the
    // call's future is dropped mid-run) sweeps again and reaps the dead.
    // `processes` first: the shell (killed on drop) goes before the sweep.
    let Spawned {
        processes,
        output: mut pipe,
        mut shell,
    } = ws.spawn(&dir, command, env, sandbox).map_err(|e| match e {
        SpawnError::Directory(e) => io_failure(TOOL, cwd, "run in", &e),
        SpawnError::Start(e) => failed(format!("cannot start {SHELL}: {e}")),
        SpawnError::Sandbox(e) => failed(format!(
            "cannot run it in the {} sandbox: {e}",
            sandbox.name()
        )),
    })?;

    let mut capture = Capture::watched(ctx.live_output.clone());
    let mut chunk = vec![0u8; EXEC_READ_CHUNK_BYTES];
    let mut eof = false;
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    let end = loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => break End::Cancelled,
            _ = &mut deadline => break End::TimedOut,
            read = pipe.read(&mut chunk), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => capture.push(&chunk[..n]),
            },
            exit = shell.wait() => break End::Exited(exit),
        }
    };
    // Every way out kills what the command started: what it left running
    // in the background, in its group or not, or a loop still spinning at
    // the timeout, dies here.
    processes.kill_all();
    if !matches!(end, End::Exited(_)) {
        // Reap the killed shell; kill_on_drop and tokio's orphan reaper
        // cover the case where even SIGKILL takes longer than the grace.
        let _ = tokio::time::timeout(EXEC_DRAIN_GRACE, shell.wait()).await;
    }
    let complete = drain(&mut pipe, &mut chunk, &mut capture, eof).await;
    let output_bytes = capture.total;
    let truncated = capture.truncated();
    let output = capture.render();
    match end {
        End::TimedOut => Err(ToolFailure::Timeout {
            tool: TOOL.to_owned(),
            after: limit,
            output,
        }),
        End::Cancelled => Err(ToolFailure::Cancelled {
            tool: TOOL.to_owned(),
            output: Some(output),
        }),
        End::Exited(Err(e)) => Err(failed(format!("cannot wait for the command: {e}"))),
        End::Exited(Ok(exit)) => Ok(ExecuteCommandOutput {
            exit_code: exit.code,
            output,
            output_bytes,
            truncated,
            sandbox: None,
            signal: exit.signal.map(|signal| {
                Signal::try_from(signal)
                    .map_or_else(|_| signal.to_string(), |s| s.as_str().to_owned())
            }),
            output_incomplete: (!complete).then(|| {
                format!(
                    "a process outside the command's tree kept its output open; stopped reading {} after the command ended",
                    format_duration(EXEC_DRAIN_GRACE)
                )
            }),
        }),
    }
}

/// Reads what is left in the pipe until end-of-file or the grace runs out.
/// Returns whether end-of-file was reached.
async fn drain(
    pipe: &mut Pin<Box<dyn AsyncRead + Send>>,
    chunk: &mut [u8],
    capture: &mut Capture,
    mut eof: bool,
) -> bool {
    let grace = tokio::time::sleep(EXEC_DRAIN_GRACE);
    tokio::pin!(grace);
    while !eof {
        tokio::select! {
            _ = &mut grace => return false,
            read = pipe.read(chunk) => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => capture.push(&chunk[..n]),
            },
        }
    }
    true
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: TOOL.to_owned(),
        message,
    }
}
