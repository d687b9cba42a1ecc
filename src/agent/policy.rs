//! The approval policy: which calls wait for the person's y / Esc.
//! `docs/decisions/0014-approval-policy.md`.

use crate::tools::{Effect, ToolCall, ToolContext};

/// Which mutating calls run without asking. Read-only calls never ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Ask before every write, edit and command (the default).
    #[default]
    Ask,
    /// Apply file edits and writes inside the project without asking; still
    /// ask before every command, and before a write or edit that lands in
    /// the repository's own files (`.git`).
    AutoEdit,
    /// Run everything without asking. Named so nobody picks it by accident;
    /// the status bar warns while it is active.
    DangerouslyApproveAll,
}

impl ApprovalPolicy {
    /// Whether `call` must wait for the person. Under auto-edit this looks
    /// at where a write lands (`tools` is where paths resolve), so it is
    /// asked again just before the call runs.
    pub fn needs_confirmation(self, call: &ToolCall, tools: &ToolContext) -> bool {
        match self {
            ApprovalPolicy::Ask => call.mutates(),
            ApprovalPolicy::AutoEdit => {
                call.effect() == Effect::RunsCommands || call.writes_into_git(tools)
            }
            ApprovalPolicy::DangerouslyApproveAll => false,
        }
    }

    /// The status bar's warning while a permissive policy is active.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            ApprovalPolicy::Ask => None,
            ApprovalPolicy::AutoEdit => Some("auto-edit"),
            ApprovalPolicy::DangerouslyApproveAll => Some("APPROVE-ALL"),
        }
    }
}
