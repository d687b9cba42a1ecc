//! The approval policy: which calls wait for the person's y / Esc, and
//! what a call that would wait is answered when no one can give one
//! (`dashfloat exec`). `docs/decisions/0014-approval-policy.md`, ADR 0028.

pub use crate::protocol::ApprovalPolicy;
use crate::tools::{ToolCall, ToolContext, ToolFailure};

impl ApprovalPolicy {
    /// Whether `call` must wait for the person. Under auto-edit this looks
    /// at where a write lands (`tools` is where paths resolve), so it is
    /// asked again just before the call runs.
    pub fn needs_confirmation(self, call: &ToolCall, tools: &ToolContext) -> bool {
        match self {
            ApprovalPolicy::Ask => call.mutates(),
            ApprovalPolicy::AutoEdit => call.beyond_undo() || call.writes_into_git(tools),
            ApprovalPolicy::DangerouslyApproveAll => false,
        }
    }

    /// The answer to a call that needs confirmation while dashfloat runs
    /// headless: not run, naming the least permissive policy that would
    /// have let it run (auto-edit for a write or edit; approving everything
    /// for a command, or for a write into `.git`, which auto-edit still
    /// asks about).
    pub fn unattended(self, call: &ToolCall) -> ToolFailure {
        let allow = if call.beyond_undo() || self == ApprovalPolicy::AutoEdit {
            ApprovalPolicy::DangerouslyApproveAll
        } else {
            ApprovalPolicy::AutoEdit
        };
        ToolFailure::Unattended {
            tool: call.name().to_string(),
            allow: format!("--approval {}", allow.name()),
        }
    }
}
