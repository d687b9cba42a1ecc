//! `execute_command` as the model sees it: its spec, typed arguments,
//! summary, preview and output. Running the command line — its own
//! session, the output cap, the group kill — is `exec`'s.
//! `docs/decisions/0013-command-runner.md`.

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, PreviewKind, ToolStatus};

use super::analyser::ANALYSER_RUN_ENV;
use super::escalation::{self, SandboxChoice};
use super::exec::{EXEC_DEFAULT_TIMEOUT, EXEC_OUTPUT_MAX_BYTES, Run, execute_command, working_dir};
use super::failure::ToolFailure;
use super::preview::{header, line};
use super::result::cut_head;
use super::tool::{Effect, Shown, Tool};
use super::{Sandbox, ToolContext};

/// An `execute_command` call: a `/bin/sh -c` command line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteCommand {
    /// The command line.
    pub command: String,
    /// The directory to run in, as the model gave it.
    #[serde(default = "super::here")]
    pub cwd: String,
    /// The time limit the model asked for; the configured
    /// `exec_timeout` when none.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// `"off"`: run it outside the sandbox, which is always put to the
    /// person (ADR 0044).
    #[serde(default)]
    pub sandbox: Option<SandboxChoice>,
    /// Why it must run outside the sandbox: one line, shown in the
    /// confirmation; given with `sandbox: "off"` only.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A command line the read-only analyser cleared to run unasked: its
/// rendering of the line, run in the call's directory with
/// [`ANALYSER_RUN_ENV`] and the default time limit (ADR 0025). Only
/// [`judge`](super::judge) makes one, from the analyser's verdict; no
/// model's arguments can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearedCommand {
    rendered: String,
    cwd: String,
}

impl ClearedCommand {
    /// The cleared rendering of `call`'s line.
    pub(crate) fn new(call: &ExecuteCommand, rendered: String) -> Self {
        ClearedCommand {
            rendered,
            cwd: call.cwd.clone(),
        }
    }

    /// The line as it runs, in brief, for its row in the log.
    pub fn summary(&self) -> String {
        ExecuteCommand {
            command: self.rendered.clone(),
            cwd: self.cwd.clone(),
            timeout_seconds: None,
            sandbox: None,
            reason: None,
        }
        .summary()
    }

    /// Runs the rendering, with the analyser's environment, in the
    /// read-only sandbox.
    pub(crate) async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> Result<ExecuteCommandOutput, ToolFailure> {
        // A line nobody approved runs in the read-only sandbox, with a
        // temporary folder emptied of whatever it left (`sort` spills
        // there). ADR 0043.
        let run = Run {
            command: &self.rendered,
            cwd: &self.cwd,
            limit: ctx.exec_timeout,
            env: ANALYSER_RUN_ENV,
            sandbox: Sandbox::ReadOnly,
        };
        execute_command(run, ctx, cancel).await
    }
}

impl ExecuteCommand {
    /// Whether the call asks to run outside the sandbox (`sandbox:
    /// "off"`): it is put to the person whatever the policy, short of
    /// approving everything.
    pub fn leaves_sandbox(&self) -> bool {
        self.sandbox == Some(SandboxChoice::Off)
    }

    /// How long the call may run: what the model asked for, which may not
    /// pass the configured maximum, else the configured default.
    pub fn time_limit(&self, ctx: &ToolContext) -> Result<Duration, ToolFailure> {
        let Some(secs) = self.timeout_seconds else {
            return Ok(ctx.exec_timeout);
        };
        let max = ctx.exec_timeout_max.max(ctx.exec_timeout);
        if secs == 0 || Duration::from_secs(secs) > max {
            return Err(ToolFailure::InvalidArgument {
                tool: Self::NAME.to_owned(),
                field: "timeout_seconds".to_owned(),
                expected: format!(
                    "integer 1..={} (the configured maximum; split the work or narrow it)",
                    max.as_secs()
                ),
                received: secs.to_string(),
            });
        }
        Ok(Duration::from_secs(secs))
    }
}

/// How a command that ran to its end ended, and what it printed. A
/// non-zero exit is the command's answer, not a tool failure (ADR 0011).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecuteCommandOutput {
    /// The exit code; none when a signal ended it.
    pub exit_code: Option<i32>,
    /// stdout and stderr interleaved, the head kept, with a marker naming
    /// the total when more was printed.
    pub output: String,
    /// Everything printed, counted.
    pub output_bytes: u64,
    /// More was printed than kept.
    pub truncated: bool,
    /// The signal that ended it (`SIGTERM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// When it failed inside the workspace-write sandbox: what the sandbox
    /// kept from it, and how to ask for it outside (ADR 0044).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Why reading stopped before the output's end: a process that left
    /// the command's group held it open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_incomplete: Option<String>,
}

impl Shown for ExecuteCommandOutput {
    /// A failure inside the workspace-write sandbox says so: the person
    /// sees why the model may next ask to leave it.
    fn status(&self) -> ToolStatus {
        let confined = if self.sandbox.is_some() {
            " in the sandbox"
        } else {
            ""
        };
        match (self.exit_code, &self.signal) {
            (Some(code), _) if code != 0 => {
                ToolStatus::Error(format!("exit code {code}{confined}"))
            }
            (_, Some(signal)) => ToolStatus::Error(format!("killed by {signal}{confined}")),
            _ if self.output.is_empty() => ToolStatus::Empty("no output".into()),
            _ => ToolStatus::Ok,
        }
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.output)
    }

    fn cut(&mut self, max_bytes: usize) -> bool {
        let cut = cut_output(&mut self.output, max_bytes);
        self.truncated |= cut;
        cut
    }
}

/// Cuts a command's output to its head within `max_bytes`, with a marker
/// saying to narrow the command: unlike a file, output cannot be read on
/// from an offset. False when it fits already. ADR 0021.
pub(crate) fn cut_output(output: &mut String, max_bytes: usize) -> bool {
    cut_head(
        output,
        max_bytes,
        "narrow the command (grep, head, tail, a smaller scope) to see the rest",
    )
}

impl Tool for ExecuteCommand {
    const NAME: &'static str = "execute_command";
    const EFFECT: Effect = Effect::RunsCommands;
    const HIDDEN: &'static [&'static str] = &escalation::PARAMETERS;
    type Output = ExecuteCommandOutput;

    fn description() -> String {
        format!(
            "Run a shell command line (/bin/sh -c) in the project, e.g. the tests or a build; \
             returns `exit_code` and `output` (the first {} KiB). Do not use it to change files: \
             use edit_file or write_file. A read-only line (ls, cat, grep, find, wc, git \
             status/log/diff/show) runs at once; others need the person's approval. It is killed \
             after {} s unless `timeout_seconds` says more, and everything it started ends with it.",
            EXEC_OUTPUT_MAX_BYTES / 1024,
            EXEC_DEFAULT_TIMEOUT.as_secs()
        )
    }

    fn parameters() -> Value {
        let mut parameters = json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The command line."
                },
                "cwd": {
                    "type": "string",
                    "minLength": 1,
                    "default": ".",
                    "description": "Directory to run in, relative to the working directory; must stay inside it."
                },
                "timeout_seconds": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Seconds the command may run before it is killed; leave it out for the default. Raise it for builds and test runs."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        });
        for (name, schema) in escalation::parameters() {
            parameters["properties"][name] = schema;
        }
        parameters
    }

    fn check(&self) -> Result<(), ToolFailure> {
        escalation::check(Self::NAME, self.sandbox, self.reason.as_deref())
    }

    fn summary(&self) -> String {
        if self.cwd == "." {
            one_line(&self.command)
        } else {
            format!("{} (in {})", one_line(&self.command), self.cwd)
        }
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.cwd
    }

    /// The directory, the time limit and every line of the command; for
    /// one that asks to leave the sandbox, that and the model's reason.
    fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
        working_dir(ctx.workspace.as_ref(), &self.cwd)?;
        let limit = self.time_limit(ctx)?;
        let outside = if self.leaves_sandbox() {
            ", outside the sandbox"
        } else {
            ""
        };
        let mut lines = vec![header(format!(
            "run in {} (time limit {}){outside}:",
            self.cwd,
            seconds(limit)
        ))];
        if let Some(reason) = self.reason.as_deref().filter(|_| self.leaves_sandbox()) {
            lines.push(line(
                PreviewKind::Marker,
                &format!("the model asks to run it outside the sandbox: {reason}"),
            ));
        }
        lines.extend(
            self.command
                .lines()
                .map(|l| line(PreviewKind::Added, &format!("$ {l}"))),
        );
        Ok(Preview {
            lines,
            guard: FileGuard::Unguarded,
        })
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<ExecuteCommandOutput, ToolFailure> {
        let limit = self.time_limit(ctx)?;
        let run = Run {
            command: &self.command,
            cwd: &self.cwd,
            limit,
            env: &[],
            sandbox: ctx.sandbox,
        };
        let mut output = execute_command(run, ctx, cancel).await?;
        if output.exit_code != Some(0) {
            output.sandbox = escalation::confined_note(ctx.sandbox);
        }
        Ok(output)
    }
}

/// A time limit as the person reads it: `30 s`, `10 min`.
fn seconds(limit: Duration) -> String {
    match limit.as_secs() {
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// The first line of a command, marked when there is more.
fn one_line(command: &str) -> String {
    let mut lines = command.lines();
    let first = lines.next().unwrap_or("");
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first.to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A line the analyser cleared runs without a pager, the system git
    /// configuration or the variables that would point git elsewhere,
    /// with a temporary folder, emptied after it;
    /// the same line as the model asked for it runs with the person's
    /// environment. Each test runs in a process of its own (nextest).
    #[test]
    #[allow(unsafe_code)]
    fn a_cleared_line_runs_with_the_analysers_environment() {
        // SAFETY: this test's own process, no other thread yet.
        unsafe {
            std::env::set_var("LESS", "-R");
            std::env::set_var("GIT_DIR", "/elsewhere");
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        let call = ExecuteCommand {
            command: "env".into(),
            cwd: ".".into(),
            timeout_seconds: None,
            sandbox: None,
            reason: None,
        };
        let cancel = CancellationToken::new();
        let cleared = ClearedCommand::new(&call, "env".into());
        let allowed = rt.block_on(cleared.run(&ctx, &cancel)).unwrap().output;
        for set in ["GIT_PAGER=cat\n", "PAGER=cat\n", "GIT_CONFIG_NOSYSTEM=1\n"] {
            assert!(allowed.contains(set), "{set} missing:\n{allowed}");
        }
        assert!(!allowed.contains("LESS="), "{allowed}");
        assert!(!allowed.contains("GIT_DIR="), "{allowed}");
        // A temporary folder, emptied after the call.
        let temp = allowed
            .lines()
            .find_map(|l| l.strip_prefix("TMPDIR="))
            .unwrap();
        let left = std::fs::read_dir(temp).map_or(0, Iterator::count);
        assert_eq!(left, 0, "{temp}");
        let guard = FileGuard::Unguarded;
        let asked = rt.block_on(call.run(&ctx, &cancel, guard)).unwrap().output;
        assert!(asked.contains("LESS=-R"), "{asked}");
        assert!(!asked.contains("GIT_PAGER="), "{asked}");
    }
}
