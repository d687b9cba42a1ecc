//! Custom slash commands: prompt templates kept as Markdown files by the
//! person and by the project (and those Claude Code and Codex keep), found
//! by the agent and expanded by the UI; and the prompt `/init` sends.
//! `docs/decisions/0053-custom-commands-and-init.md`.

mod load;
pub mod template;

pub use load::{COMMAND_FILE_MAX_BYTES, COMMANDS_MAX, Found, PROJECT_DIRS, find, person_dirs};

/// What `/init` asks: a guide to the project for agents, written through
/// the file tools so the person approves it, and an existing one edited
/// rather than replaced.
pub const INIT_PROMPT: &str = "Write an AGENTS.md for this project: the guide a coding agent reads before working here. First look at the project: list its top directory, read its README and build files (Cargo.toml, package.json, pyproject.toml, Makefile, …) and a few central source files. Then write, in short sections: what the project is; how it is laid out; the commands that build it, test it (one test too, if the tools allow it) and lint it; the code style and conventions you see; anything a newcomer would get wrong. Only what you saw in the files — no guesses. If AGENTS.md exists already, read it and change it with edit_file, keeping what is still true; do not replace it. Otherwise create it with write_file.";
