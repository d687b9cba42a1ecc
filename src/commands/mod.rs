//! Custom slash commands: prompt templates kept as Markdown files by the
//! person and by the project (and those Claude Code and Codex keep), found
//! by the agent and expanded by the UI; and the prompt `/init` sends.
//! `docs/decisions/0053-custom-commands-and-init.md`.

pub(crate) mod load;
pub mod template;

pub use load::{Found, find, person_dirs};

/// What `/init` asks: a guide to the project for agents, written through
/// the file tools so the person approves it, and an existing one edited
/// rather than replaced.
pub const INIT_PROMPT: &str = "Create AGENTS.md at the root of this project: a short guide, in Markdown, for coding agents who work on it. First call list_directory on the project's root, then read its README and its build or package file (only files the listing shows). Then call write_file once for AGENTS.md with four sections headed `## Overview` (what the project is), `## Layout` (its main folders and files), `## Commands` (how to build, test and lint it) and `## Conventions` (the code style you saw), a few plain lines each. Write only what you read in the files. When it is written, stop and say in one line what it holds. If the listing shows an AGENTS.md already, read it and improve it with edit_file instead, keeping what is still true.";
