//! The approval policy: which calls wait for the person's y / Esc.
//! `docs/decisions/0014-approval-policy.md`.

pub use crate::protocol::ApprovalPolicy;
use crate::tools::{Effect, ToolCall, ToolContext};

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
}
