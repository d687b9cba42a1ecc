//! `execute_command`: a `/bin/sh -c` command line in its own session, its
//! output captured with a head cap, and every process it started — in its
//! group or not — killed on every way out ([`super::reaper`]).
//! `docs/decisions/0013-command-runner.md`.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::fcntl::OFlag;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe::Receiver;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::analyser::EnvSetting;
use super::beneath;
use super::command::{ExecuteCommand, ExecuteCommandOutput};
use super::env::{child_env, with_settings};
use super::failure::{ToolFailure, format_duration};
use super::read::trim_partial_char;
use super::reaper::CallProcesses;
use super::tool::Tool;
use super::{ToolContext, io_failure, resolve_for};

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
pub const EXEC_DRAIN_GRACE: Duration = Duration::from_millis(500);
/// Size of one read from the output pipe (one pipe buffer's worth).
const EXEC_READ_CHUNK_BYTES: usize = 64 * 1024;
/// The shell every command line runs under, so `;`, `&&`, `cd` and pipes
/// mean what they say.
const SHELL: &str = "/bin/sh";

/// The head of the output and the count of everything.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    total: u64,
}

impl Capture {
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = EXEC_OUTPUT_MAX_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
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
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
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

/// How the wait for the command ended.
enum End {
    Exited(std::io::Result<ExitStatus>),
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
    }: Run<'_>,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> Result<ExecuteCommandOutput, ToolFailure> {
    if cancel.is_cancelled() {
        return Err(ToolFailure::Cancelled {
            tool: TOOL.to_owned(),
            output: None,
        });
    }
    let dir = resolve_for(TOOL, &ctx.root, cwd)?;
    let meta = std::fs::metadata(&dir).map_err(|e| io_failure(TOOL, cwd, "run in", &e))?;
    if !meta.is_dir() {
        return Err(failed(format!("cwd {cwd} is not a directory")));
    }
    let dir = beneath::open(&ctx.root, &dir, OFlag::O_PATH | OFlag::O_DIRECTORY)
        .map_err(|e| io_failure(TOOL, cwd, "run in", &e))?;
    let spawn_failed = |e: std::io::Error| failed(format!("cannot start {SHELL}: {e}"));
    // One pipe for both streams: the kernel keeps the order in which the
    // command wrote, which two pipes read concurrently cannot.
    let (reader, writer) = std::io::pipe().map_err(spawn_failed)?;
    let writer_for_stderr = writer.try_clone().map_err(spawn_failed)?;
    let mut cmd = Command::new(SHELL);
    cmd.arg("-c")
        .arg(command)
        // A command waiting for input (a pager, `rg` with no path, a
        // password prompt) would otherwise wait until the timeout.
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_for_stderr)
        .env_clear()
        .envs(with_settings(
            child_env(std::env::vars_os(), &ctx.secret_vars, &ctx.pass_env),
            env,
        ))
        .kill_on_drop(true);
    own_session_with_parent_death(&mut cmd);
    enter(&mut cmd, dir);
    // Counted as running before the fork, so a sweep of another call can
    // tell our shell from an orphan; dropped on every way out below.
    let mut processes = CallProcesses::start();
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end; until they are
    // closed, the read side never sees end-of-file.
    drop(cmd);
    let mut child = spawned.map_err(spawn_failed)?;
    if let Some(shell) = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw)
    {
        processes.spawned(shell);
    }
    let mut pipe = Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(spawn_failed)?;

    let mut capture = Capture::default();
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
            status = child.wait() => break End::Exited(status),
        }
    };
    // Every way out kills what the command started: what it left running
    // in the background, in its group or not, or a loop still spinning at
    // the timeout, dies here. Dropping `processes` (here or when the call's
    // future is dropped mid-run) sweeps again and reaps the dead.
    processes.kill_all();
    if !matches!(end, End::Exited(_)) {
        // Reap the killed shell; kill_on_drop and tokio's orphan reaper
        // cover the case where even SIGKILL takes longer than the grace.
        let _ = tokio::time::timeout(EXEC_DRAIN_GRACE, child.wait()).await;
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
        End::Exited(Ok(status)) => Ok(ExecuteCommandOutput {
            exit_code: status.code(),
            output,
            output_bytes,
            truncated,
            signal: status.signal().map(|signal| {
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
    pipe: &mut Receiver,
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

/// Puts the shell in a new session (so nothing it does reaches
/// dashfloat's terminal or group) and asks the kernel to SIGKILL it if
/// dashfloat dies first, even by SIGKILL.
///
/// The death signal is a backstop for that one case, and reaches only the
/// shell: it fires when the *thread* that forked exits, not the process.
/// `spawn` forks on the thread polling the call — a runtime worker, which
/// lives as long as the runtime (or, on a current-thread runtime, the
/// thread in `block_on`). Were the spawn moved to `spawn_blocking`, the
/// pool thread's exit after its idle keep-alive (10 s) would SIGKILL a
/// command still running; the same after a `block_in_place` on the
/// spawning worker. What keeps every process from outliving its call, and
/// dashfloat, is the subreaper's sweep ([`CallProcesses`]), on every way
/// out but dashfloat's own SIGKILL.
#[allow(unsafe_code)]
fn own_session_with_parent_death(cmd: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is allowed. setsid, prctl and getppid are
    // single system calls; nothing allocates or takes a lock (an Errno
    // becomes an io::Error by value).
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // dashfloat may have died between fork and prctl; then the
            // death signal was never armed and the child must not run.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
}

/// Makes the child start in `dir`, the directory the policy approved and
/// opened beneath the root: by its handle, so no path is walked again
/// between the check and the shell.
#[allow(unsafe_code)]
fn enter(cmd: &mut Command, dir: OwnedFd) {
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is allowed; fchdir is a single system call on
    // a descriptor the closure owns, and nothing allocates or takes a lock
    // (an Errno becomes an io::Error by value). The descriptor is
    // close-on-exec, so the command does not inherit it.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::fchdir(&dir)?;
            Ok(())
        });
    }
}
