//! A command's way out of the sandbox: `execute_command`'s `sandbox:
//! "off"` with a one-line `reason`, which is always put to the person
//! (ADR 0044), and the note a confined command's failure carries telling
//! the model so.

use serde::Deserialize;

use super::Sandbox;
use super::failure::ToolFailure;

/// The longest `reason` a call may give, in characters: one line a person
/// reads in the confirmation.
pub const REASON_MAX_CHARS: usize = 200;

/// The sandbox a call may ask its command to run in: only `"off"`, out of
/// it, once the person approves. A call that asks nothing runs where the
/// approval policy puts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxChoice {
    /// Outside every sandbox, as the person would run it.
    Off,
}

/// The names of the two parameters: hidden from the model until a
/// confined command's failure names them (ADR 0050).
pub(super) const PARAMETERS: [&str; 2] = ["sandbox", "reason"];

/// The schema of `sandbox` and `reason`, as `execute_command`'s
/// parameters take them.
pub(super) fn parameters() -> [(&'static str, serde_json::Value); 2] {
    let [sandbox, reason] = PARAMETERS;
    [
        (
            sandbox,
            serde_json::json!({
                "enum": ["off"],
                "description": "Run outside the sandbox, if the person approves; needs reason"
            }),
        ),
        (
            reason,
            serde_json::json!({
                "type": "string",
                "description": "Why, in one line"
            }),
        ),
    ]
}

/// The rules the schema leaves out, to keep the prompt short (ADR 0033):
/// a `reason` goes with `sandbox: "off"` and only with it, and is one
/// line of at most [`REASON_MAX_CHARS`] characters.
pub(super) fn check(
    tool: &str,
    sandbox: Option<SandboxChoice>,
    reason: Option<&str>,
) -> Result<(), ToolFailure> {
    let invalid = |expected: &str, received: &str| ToolFailure::InvalidArgument {
        tool: tool.to_owned(),
        field: "reason".to_owned(),
        expected: expected.to_owned(),
        received: received.to_owned(),
    };
    match (sandbox, reason) {
        (Some(SandboxChoice::Off), None) => Err(invalid(
            "one line saying why the command must run outside the sandbox",
            "missing",
        )),
        (None, Some(_)) => Err(invalid(
            "no reason unless sandbox is \"off\"",
            "a reason without sandbox \"off\"",
        )),
        (Some(SandboxChoice::Off), Some(reason)) if reason.trim().is_empty() => Err(invalid(
            "one line saying why the command must run outside the sandbox",
            "blank",
        )),
        (Some(SandboxChoice::Off), Some(reason)) if reason.contains(['\n', '\r']) => {
            Err(invalid("a single line", "several lines"))
        }
        (Some(SandboxChoice::Off), Some(reason)) if reason.chars().count() > REASON_MAX_CHARS => {
            Err(invalid(
                &format!("at most {REASON_MAX_CHARS} characters"),
                &format!("{} characters", reason.chars().count()),
            ))
        }
        _ => Ok(()),
    }
}

/// What a command that failed inside `sandbox` tells the model: what the
/// sandbox kept from it and how to ask for the command outside it. `None`
/// for a command that ran unconfined, or in the read-only sandbox, which
/// only the analyser's lines run in.
pub(super) fn confined_note(sandbox: Sandbox) -> Option<String> {
    match sandbox {
        Sandbox::WorkspaceWrite => Some(format!(
            "it ran in the {} sandbox: no network, no writes outside the project or into .git, no Unix sockets. If that is why it failed, call execute_command again with \"sandbox\": \"off\" and a one-line \"reason\"; the person will be asked",
            sandbox.name()
        )),
        Sandbox::Unconfined | Sandbox::ReadOnly => None,
    }
}
