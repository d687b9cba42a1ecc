//! Hooks: the person's shell commands (and, once trusted, a project's)
//! run on the agent's events — a session starting, a prompt submitted,
//! a tool call about to run and just run, a turn stopping — each given
//! the event as one JSON object on its standard input, within a bounded
//! time and output. A `pre_tool_use` hook can deny a call with a reason
//! the model reads; a `user_prompt_submit` hook can block a prompt or add
//! context to it; the others only learn what happened. A hook that fails
//! is a notice and the event goes on as if it had none.
//!
//! `config` reads the `[[hooks]]` tables, `event` is what a hook is
//! told, `run` starts hooks and reads what they answer. The agent
//! decides when they run (`agent::hooks`); `docs/hooks.md` is the
//! contract and ADR 0054 the reasons.

pub mod config;
pub mod event;
pub mod run;

pub use config::{
    HOOK_TIMEOUT_DEFAULT, HOOK_TIMEOUT_MAX, HOOKS_MAX, Hook, HookConfigError, HookEvent, Whose,
};
pub use event::{
    DoneStatus, Event, RESULT_OUTPUT_MAX_BYTES, SessionSource, StopReason, ToolDone, ToolUse,
};
pub use run::{
    HOOK_OUTPUT_MAX_BYTES, HOOK_REASON_MAX_BYTES, HookEnd, HookFailure, Ran, Runner, describe,
    run_hooks,
};
