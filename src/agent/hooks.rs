//! The agent's side of hooks (ADR 0054): when each event's hooks run and
//! what the turn does with their answers, and `/hooks [trust]`.
//!
//! - `session_start` hooks run beside everything (at start, `/clear`,
//!   `/resume`): nothing waits for them; a failure is a notice.
//! - `user_prompt_submit` and `stop` hooks are a state of the turn
//!   (`Turn::Hooking`): the actor goes on taking commands, Esc kills them.
//!   A prompt a hook blocks is never sent and the conversation is
//!   unchanged; what the hooks print joins the prompt, marked as theirs.
//!   `stop` hooks run once a prompt's turn is over, before the UI is told
//!   so — except for a turn the person interrupted: Esc gives the prompt
//!   back at once, and its `stop` hooks run beside, as `session_start`
//!   hooks do.
//! - `pre_tool_use` and `post_tool_use` hooks are a call's (`round`).

use tokio::task::{JoinError, JoinHandle};

use crate::exec::schema::{Status, status_of};
use crate::hooks::run::HOOK_CONTEXT_MAX_BYTES;
use crate::hooks::{
    Event, Hook, HookEnd, HookEvent, Ran, Runner, SessionSource, StopReason, Whose, describe,
    from_project_file, run_hooks,
};
use crate::protocol::{AgentEvent, Phase, Severity};
use crate::safe_text::strip_controls;
use crate::tools::ToolResult;
use crate::trust::ProjectTrust;

use super::turn::Wanted;
use super::{Agent, task_failure};

/// How the hooks a turn waited for ended: each hook's end, or why their
/// task ended without one.
pub(super) type HookEnds = Result<Vec<Ran>, JoinError>;

/// Hooks the turn waits for, and what it does once they have ended.
pub(super) struct Hooking {
    task: JoinHandle<Vec<Ran>>,
    then: AfterHooks,
}

/// What the turn does once its hooks have ended.
enum AfterHooks {
    /// Sends the person's prompt (as the hooks let it, with what they
    /// added), or not (a hook blocked it).
    Prompt(String),
    /// Ends the turn.
    EndTurn,
}

impl Hooking {
    /// Waits for the hooks to end.
    pub(super) async fn ended(&mut self) -> HookEnds {
        (&mut self.task).await
    }

    /// Stops the hooks: dropping their task kills each hook's group.
    pub(super) fn abort(&self) {
        self.task.abort();
    }
}

/// What a call's hooks need in its tasks: the hooks, and where they
/// run as the round's calls start.
#[derive(Debug, Clone)]
pub(super) struct CallHooks {
    hooks: Vec<Hook>,
    runner: Runner,
}

impl CallHooks {
    /// Whether any of them runs for `event` about the tool `tool`.
    pub(super) fn runs_for(&self, event: HookEvent, tool: &str) -> bool {
        self.hooks.iter().any(|h| h.runs_for(event, Some(tool)))
    }

    /// Runs those for `event`, in a task of their own so that a panic in
    /// their work is an `Err` (no hook answered) and the call is still
    /// answered. Dropping this future (Esc, the call's task aborted)
    /// aborts that task, which kills the hooks.
    pub(super) async fn run(&self, event: Event) -> HookEnds {
        let (hooks, runner) = (self.hooks.clone(), self.runner.clone());
        let mut task = AbortOnDrop(tokio::spawn(async move {
            run_hooks(&hooks, &event, &runner).await
        }));
        (&mut task.0).await
    }
}

/// A task aborted when this is dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A call's result in the word its `post_tool_use` hooks read: the
/// word `exec --json` gives it.
pub(super) fn done_status(result: &ToolResult) -> Status {
    status_of(super::outcome::status(&result.outcome)).0
}

impl Agent {
    /// The hooks a round's calls run, as things stand now; `None` when
    /// there are none.
    pub(super) fn call_hooks(&self) -> Option<CallHooks> {
        (!self.setup.hooks.is_empty()).then(|| CallHooks {
            hooks: self.setup.hooks.clone(),
            runner: self.hook_runner(),
        })
    }

    /// Where hooks run now: the project, a command's environment, the
    /// sandbox a command the person approves runs in under the policy in
    /// force, and the open session.
    pub(super) fn hook_runner(&self) -> Runner {
        let tools = &self.setup.tools;
        Runner {
            workspace: std::sync::Arc::clone(&tools.workspace),
            project: tools.root.clone(),
            env: tools.command_env(),
            person_sandbox: self.setup.approval.approved_sandbox(),
            session_id: self.saving.id.clone(),
        }
    }

    /// Whether any hook runs for `event` (about the tool `tool`).
    pub(super) fn has_hooks(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.setup.hooks.iter().any(|h| h.runs_for(event, tool))
    }

    /// A task running the hooks for `event`.
    fn spawn_hooks(&self, event: Event) -> JoinHandle<Vec<Ran>> {
        let (hooks, runner) = (self.setup.hooks.clone(), self.hook_runner());
        tokio::spawn(async move { run_hooks(&hooks, &event, &runner).await })
    }

    /// Starts the hooks for `event` beside everything: nothing waits for
    /// them, and their failures are notices when they end.
    fn spawn_side_hooks(&mut self, event: Event) {
        let (hooks, runner) = (self.setup.hooks.clone(), self.hook_runner());
        self.side_hooks
            .spawn(async move { run_hooks(&hooks, &event, &runner).await });
    }

    /// Starts the `session_start` hooks; nothing waits for them.
    pub(super) fn start_session_hooks(&mut self, source: SessionSource) {
        if self.has_hooks(HookEvent::SessionStart, None) {
            self.spawn_side_hooks(Event::SessionStart { source });
        }
    }

    /// How each hook among `ends` ended; when their task failed, a
    /// notice saying so and none (the event goes on as if there were no
    /// hook).
    pub(super) async fn hooks_ran(&mut self, ends: HookEnds) -> Vec<Ran> {
        match ends {
            Ok(ran) => ran,
            Err(e) => {
                self.system(Severity::Notice, task_failure("hooks", &e))
                    .await;
                Vec::new()
            }
        }
    }

    /// Says which of `ran` failed, one notice each.
    pub(super) async fn tell_hook_failures(&mut self, ran: &[Ran]) {
        for notice in ran.iter().filter_map(Ran::failure_notice) {
            self.system(Severity::Notice, notice).await;
        }
    }

    /// Hooks that ran beside the turn ended.
    pub(super) async fn side_hooks_ended(&mut self, ends: HookEnds) {
        match ends {
            Ok(ran) => self.tell_hook_failures(&ran).await,
            Err(e) if e.is_cancelled() => {}
            Err(e) => {
                self.system(Severity::Notice, task_failure("hooks", &e))
                    .await
            }
        }
    }

    /// A prompt the person sent: its `user_prompt_submit` hooks first, if
    /// any, then the turn.
    pub(super) async fn submit_prompt(&mut self, text: String) {
        if !self.has_hooks(HookEvent::UserPromptSubmit, None) {
            return self.run_prompt(text, None).await;
        }
        let task = self.spawn_hooks(Event::UserPromptSubmit {
            prompt: text.clone(),
        });
        self.turn.hook(Hooking {
            task,
            then: AfterHooks::Prompt(text),
        });
        self.emit(AgentEvent::Phase(Phase::Executing)).await;
    }

    /// The turn is over: its `stop` hooks run first when a prompt started
    /// it. Whether the turn waits for them (it then ends when they do):
    /// one the person interrupted does not, as a second Esc would be
    /// needed to get the prompt back; its hooks run beside.
    pub(super) async fn start_stop_hooks(&mut self) -> bool {
        let Some(reason) = self.progress.stop.take() else {
            return false;
        };
        if !self.turn.is_idle() || !self.has_hooks(HookEvent::Stop, None) {
            return false;
        }
        if reason == StopReason::Interrupted {
            self.spawn_side_hooks(Event::Stop { reason });
            return false;
        }
        let task = self.spawn_hooks(Event::Stop { reason });
        self.turn.hook(Hooking {
            task,
            then: AfterHooks::EndTurn,
        });
        self.emit(AgentEvent::Phase(Phase::Executing)).await;
        true
    }

    /// The hooks the turn waited for ended: the prompt goes (or not), or
    /// the turn ends.
    pub(super) async fn turn_hooks_ended(&mut self, ends: HookEnds) {
        let Some(hooking) = self.turn.end_hooking() else {
            return;
        };
        let ran = self.hooks_ran(ends).await;
        self.tell_hook_failures(&ran).await;
        match hooking.then {
            AfterHooks::EndTurn => self.close_turn().await,
            AfterHooks::Prompt(text) => match blocked(&ran) {
                Some(reason) => {
                    self.system(
                        Severity::Error,
                        format!("a hook blocked this prompt, so it was not sent: {reason}"),
                    )
                    .await;
                    self.close_turn().await;
                }
                None => self.run_prompt(text, context(&ran)).await,
            },
        }
    }

    /// Esc while the turn's hooks run: they are killed; a prompt they
    /// held is not sent.
    pub(super) async fn cancel_hooks(&mut self) {
        let Some(hooking) = self.turn.end_hooking() else {
            return;
        };
        hooking.abort();
        if let AfterHooks::Prompt(_) = hooking.then {
            self.system(
                Severity::Notice,
                "interrupted while the prompt's hooks ran; it was not sent",
            )
            .await;
        }
        self.close_turn().await;
    }

    /// `/hooks`: every hook that runs, and those of a project file not
    /// trusted as it is now.
    pub(super) async fn list_hooks(&mut self) {
        let mut lines: Vec<String> = self
            .setup
            .hooks
            .iter()
            .map(|hook| line(hook, "trusted"))
            .collect();
        let pending = match self.setup.hooks_trust.as_ref().map(|t| t.read()) {
            Some(ProjectTrust::Untrusted(text)) => from_project_file(&text, &mut Vec::new()),
            _ => Vec::new(),
        };
        lines.extend(
            pending
                .iter()
                .map(|hook| line(hook, "not trusted: it does not run")),
        );
        let mut text = if lines.is_empty() {
            "no hooks are configured (see docs/hooks.md)".to_owned()
        } else {
            format!("hooks:\n{}", lines.join("\n"))
        };
        if !pending.is_empty() {
            text.push_str(
                "\n/hooks trust trusts this project's .dashfloat/config.toml as it is now: its hooks then run",
            );
        }
        let projects = self.setup.hooks.iter().chain(&pending);
        if projects
            .into_iter()
            .any(|hook| hook.whose == Whose::Project)
        {
            text.push_str(
                "\ntrust covers the text of .dashfloat/config.toml, not the scripts its hooks call; \
                 a project's hooks run in the workspace-write sandbox",
            );
        }
        self.system(Severity::Notice, text).await;
    }

    /// `/hooks trust`: the project's `.dashfloat/config.toml` as it is now
    /// is trusted, and its hooks run from now on.
    pub(super) async fn trust_hooks(&mut self) {
        if !self.admit(Wanted::Trust("/hooks trust")).await {
            return;
        }
        let Some(trust) = self.setup.hooks_trust.clone() else {
            self.system(
                Severity::Error,
                "there is no configuration directory to keep the trust in (neither XDG_CONFIG_HOME nor HOME is set)",
            )
            .await;
            return;
        };
        let Some(hooks) = self.trust_project_file(&trust, from_project_file).await else {
            return;
        };
        let text = if hooks.is_empty() {
            "this project's .dashfloat/config.toml is trusted as it is now; it configures no hooks"
                .to_owned()
        } else {
            let listed: Vec<String> = hooks.iter().map(|hook| line(hook, "trusted")).collect();
            format!(
                "this project's .dashfloat/config.toml is trusted as it is now; these hooks run from now on, in the workspace-write sandbox:\n{}",
                listed.join("\n")
            )
        };
        self.setup.hooks.retain(|hook| hook.whose == Whose::Person);
        self.setup.hooks.extend(hooks);
        self.system(Severity::Notice, text).await;
    }
}

/// One hook as `/hooks` lists it; `project` says how a project's stands.
fn line(hook: &Hook, project: &str) -> String {
    let tools = match &hook.tools {
        Some(tools) => format!(", tools {}", strip_controls(&tools.join(", "))),
        None => String::new(),
    };
    let whose = match hook.whose {
        Whose::Person => "yours".to_owned(),
        Whose::Project => format!("the project's, {project}"),
    };
    format!(
        "  {} `{}`{tools}, timeout {} s ({whose})",
        hook.event.name(),
        strip_controls(&hook.command),
        hook.timeout.as_secs()
    )
}

/// The reasons of the hooks among `ran` that blocked, joined; `None`
/// when none did.
pub(super) fn blocked(ran: &[Ran]) -> Option<String> {
    let reasons: Vec<&str> = ran
        .iter()
        .filter_map(|r| match &r.end {
            HookEnd::Blocked(reason) => Some(reason.as_str()),
            HookEnd::Passed(_) | HookEnd::Failed(_) => None,
        })
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// What the hooks among `ran` printed, to follow the prompt: each under a
/// line naming its hook, so the model reads it as theirs and not the
/// person's; at most [`HOOK_CONTEXT_MAX_BYTES`] in all, the rest left out
/// with a line saying so. `None` when none printed anything.
fn context(ran: &[Ran]) -> Option<String> {
    let added: Vec<String> = ran
        .iter()
        .filter_map(|r| match &r.end {
            HookEnd::Passed(out) if !out.is_empty() => {
                Some(format!("[added by {}]\n{out}", describe(&r.hook)))
            }
            HookEnd::Passed(_) | HookEnd::Blocked(_) | HookEnd::Failed(_) => None,
        })
        .collect();
    if added.is_empty() {
        return None;
    }
    let mut text = added.join("\n\n");
    if text.len() > HOOK_CONTEXT_MAX_BYTES {
        text.truncate(text.floor_char_boundary(HOOK_CONTEXT_MAX_BYTES));
        text.push_str(&format!(
            "\n[the hooks printed more; what passed {} KiB was left out]",
            HOOK_CONTEXT_MAX_BYTES / 1024
        ));
    }
    Some(text)
}
