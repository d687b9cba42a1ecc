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
//! contract and ADR 0054 the reasons. The bounds are public through
//! `crate::bounds`.

pub(crate) mod config;
pub(crate) mod event;
pub(crate) mod run;

pub use config::{Hook, HookConfigError, HookEvent, Whose, from_project_file, from_toml};
pub use event::{Event, SessionSource, StopReason, ToolDone, ToolUse};
pub use run::{HookEnd, HookFailure, Ran, Runner, describe, run_hooks};
