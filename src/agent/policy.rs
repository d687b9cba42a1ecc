//! The approval policy: which calls wait for the person's y / Esc, which
//! sandbox a command runs in, what a call that would wait is answered
//! when no one can give one (`dashfloat exec`), and the commands
//! remembered for the project. `docs/decisions/0014-approval-policy.md`,
//! ADR 0028, ADR 0044.

use serde::Deserialize;

use crate::permissions::{Rule, Store};
use crate::protocol::ApprovalMode;
pub use crate::protocol::ApprovalPolicy;
use crate::tools::{Sandbox, ToolCall, ToolContext, ToolFailure};

/// Whether this kernel enforces the workspace-write sandbox, or what it
/// lacks: as the sandbox's probe answers, asked the first time it
/// matters (the probe starts two children, which a start under `ask`
/// need not wait for before its first frame), or as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceWrite {
    /// The sandbox's own probe, made once a process when first asked.
    Probed,
    /// As given: a kernel described rather than asked (the tests').
    Given(Result<(), String>),
}

impl WorkspaceWrite {
    /// Whether the kernel enforces it, or what it lacks.
    pub fn get(&self) -> Result<(), String> {
        match self {
            WorkspaceWrite::Probed => crate::tools::sandbox::support().workspace_write(),
            WorkspaceWrite::Given(answer) => answer.clone(),
        }
    }
}

/// Which commands run in the workspace-write sandbox (the config file's
/// `sandbox`; ADR 0044). Commands nobody approved always do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxScope {
    /// Those nobody approved: every command under `auto`, and the
    /// remembered ones. A command the person approved with `y` runs as
    /// they would run it themselves.
    #[default]
    Unasked,
    /// Every command, the approved ones too, but one the person let leave
    /// the sandbox (`sandbox: "off"`) and any under
    /// `dangerously-approve-all`.
    Always,
}

/// The commands remembered for this project, and where they are kept
/// (`None`: there is no configuration directory, so `a` is not offered).
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    /// The rules, in the order remembered.
    pub rules: Vec<Rule>,
    /// The project's rules file.
    pub store: Option<Store>,
}

/// What decides who is asked and where a command runs: the policy, the
/// config's sandbox scope, what this kernel can enforce, and the commands
/// remembered for the project.
#[derive(Debug, Clone)]
pub struct Approvals {
    /// Which calls wait for the person.
    pub policy: ApprovalPolicy,
    /// Which commands run in the workspace-write sandbox.
    pub scope: SandboxScope,
    /// Whether this kernel can enforce the workspace-write sandbox, or
    /// what it lacks. Without it `auto` is refused and nothing is
    /// remembered: a command never runs unasked in a weaker sandbox.
    pub workspace_write: WorkspaceWrite,
    /// The commands remembered for the project.
    pub remembered: Remembered,
}

impl Approvals {
    /// `policy`, with the default scope and nothing remembered; the
    /// kernel enforces workspace-write as `workspace_write` says.
    pub fn new(policy: ApprovalPolicy, workspace_write: WorkspaceWrite) -> Approvals {
        Approvals {
            policy,
            scope: SandboxScope::default(),
            workspace_write,
            remembered: Remembered::default(),
        }
    }

    /// Whether `policy` can be had here, or why not: `auto` runs commands
    /// unasked only inside the workspace-write sandbox, and refuses to
    /// run them in anything weaker.
    pub fn admit(&self, policy: ApprovalPolicy) -> Result<(), String> {
        if policy != ApprovalPolicy::Auto {
            return Ok(());
        }
        self.workspace_write.get().map_err(|why| {
            format!(
                "the auto policy is refused: {why}. Commands would run unasked outside a sandbox; use --approval ask or auto-edit"
            )
        })
    }

    /// Whether `call` must wait for the person. This looks at where a
    /// write lands (`tools` is where paths resolve), so it is asked again
    /// just before the call runs.
    pub fn needs_confirmation(&self, call: &ToolCall, tools: &ToolContext) -> bool {
        let policy = self.policy;
        if call.replaces_whole_file() {
            return true;
        }
        if leaves_sandbox(call) {
            return policy != ApprovalPolicy::DangerouslyApproveAll;
        }
        if let ToolCall::Dynamic(call) = call
            && call.tool().approved()
        {
            return false;
        }
        let asks = match policy {
            ApprovalPolicy::Ask => call.mutates(),
            ApprovalPolicy::AutoEdit => call.beyond_undo() || call.writes_into_git(tools),
            ApprovalPolicy::Auto => {
                (call.beyond_undo() && !is_command(call)) || call.writes_into_git(tools)
            }
            ApprovalPolicy::DangerouslyApproveAll => false,
        };
        asks && self.remembered_rule(call).is_none()
    }

    /// The rule remembered for the project that lets `call` run unasked,
    /// if any: only a command that stays in the sandbox, only where the
    /// kernel enforces workspace-write, only under the policies that would
    /// ask about it.
    pub fn remembered_rule(&self, call: &ToolCall) -> Option<&Rule> {
        let ToolCall::ExecuteCommand(command) = call else {
            return None;
        };
        let asks = matches!(self.policy, ApprovalPolicy::Ask | ApprovalPolicy::AutoEdit);
        if !asks || command.leaves_sandbox() || self.workspace_write.get().is_err() {
            return None;
        }
        let rules = &self.remembered.rules;
        rules.iter().find(|rule| rule.matches(&command.command))
    }

    /// The rule `a` would remember for `call`, when its confirmation may
    /// offer one: a command that stays in the sandbox, whose line is one
    /// simple command of a program that does not run others, where there
    /// is a rules file and the kernel enforces workspace-write.
    pub fn offer(&self, call: &ToolCall) -> Option<Rule> {
        let ToolCall::ExecuteCommand(command) = call else {
            return None;
        };
        let keeps = self.remembered.store.is_some() && self.workspace_write.get().is_ok();
        if !keeps || command.leaves_sandbox() {
            return None;
        }
        Rule::for_line(&command.command).ok()
    }

    /// The sandbox `call` runs in: `asked` when the person approved it.
    /// A command that left the sandbox with the person's approval, or any
    /// under approve-all, runs unconfined; one approved with `y` too
    /// unless the scope is `always`; every other in workspace-write.
    pub fn sandbox(&self, call: &ToolCall, asked: bool) -> Sandbox {
        if !is_command(call) || leaves_sandbox(call) {
            Sandbox::Unconfined
        } else if asked {
            self.approved_sandbox()
        } else if self.policy == ApprovalPolicy::DangerouslyApproveAll {
            Sandbox::Unconfined
        } else {
            Sandbox::WorkspaceWrite
        }
    }

    /// The sandbox a command the person approved runs in: unconfined
    /// unless the scope is `always` (and the policy is not approve-all).
    /// The person's own hooks run in it too, as their commands would
    /// (ADR 0054).
    pub fn approved_sandbox(&self) -> Sandbox {
        if self.policy == ApprovalPolicy::DangerouslyApproveAll
            || self.scope == SandboxScope::Unasked
        {
            Sandbox::Unconfined
        } else {
            Sandbox::WorkspaceWrite
        }
    }

    /// The policy and the sandbox its commands run in, as the status bar
    /// shows them: under `ask` and `auto-edit`, where a command the
    /// person approves runs.
    pub fn mode(&self) -> ApprovalMode {
        let level = match (self.policy, self.scope) {
            (ApprovalPolicy::DangerouslyApproveAll, _)
            | (ApprovalPolicy::Ask | ApprovalPolicy::AutoEdit, SandboxScope::Unasked) => {
                Sandbox::Unconfined
            }
            (ApprovalPolicy::Auto, _)
            | (ApprovalPolicy::Ask | ApprovalPolicy::AutoEdit, SandboxScope::Always) => {
                Sandbox::WorkspaceWrite
            }
        };
        ApprovalMode {
            policy: self.policy,
            sandbox: level.name().to_owned(),
        }
    }

    /// The answer to a call that needs confirmation while dashfloat runs
    /// headless: not run, naming the least permissive policy that would
    /// have let it run — auto-edit for a write or edit, auto for a command
    /// that stays in the sandbox where the kernel has one, approving
    /// everything for the rest (a command outside the sandbox, a write
    /// into `.git`, a run-time tool).
    pub fn unattended(&self, call: &ToolCall) -> ToolFailure {
        if call.replaces_whole_file() {
            return ToolFailure::Unattended {
                tool: call.name().to_string(),
                allow: None,
            };
        }
        let sandboxed_command = is_command(call) && !leaves_sandbox(call);
        let allow = if sandboxed_command && self.workspace_write.get().is_ok() {
            ApprovalPolicy::Auto
        } else if call.beyond_undo() || self.policy != ApprovalPolicy::Ask {
            ApprovalPolicy::DangerouslyApproveAll
        } else {
            ApprovalPolicy::AutoEdit
        };
        ToolFailure::Unattended {
            tool: call.name().to_string(),
            allow: Some(format!("--approval {}", allow.name())),
        }
    }
}

/// Whether `call` is an `execute_command`, whose command the sandbox can
/// confine (a run-time tool's process it cannot).
fn is_command(call: &ToolCall) -> bool {
    matches!(call, ToolCall::ExecuteCommand(_))
}

/// Whether `call` is a command that asks to run outside the sandbox.
fn leaves_sandbox(call: &ToolCall) -> bool {
    matches!(call, ToolCall::ExecuteCommand(command) if command.leaves_sandbox())
}
