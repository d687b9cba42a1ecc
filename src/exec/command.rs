//! A prompt given to `dashfloat exec` that names a custom command
//! (`dashfloat exec "/review src/lib.rs"`): expanded as the full screen
//! expands it, and sent as the person's words or the project's (ADR
//! 0053). Anything else — a built-in's name, an unknown one, `//text`, a
//! path such as `/etc/hosts is odd` — goes as it was written, as `exec`
//! has always sent it.

use std::path::{Path, PathBuf};

use crate::commands::{find, template};
use crate::protocol::{PROMPT_MAX_BYTES, Severity, UiCommand};
use crate::tools::ToolContext;
use crate::ui::slash::{self, CustomCommands, Input};

/// Why the command's prompt was not sent.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Its expansion passed the prompt's bound.
    #[error("/{name}'s prompt would be larger than {} MiB; no prompt was sent", PROMPT_MAX_BYTES >> 20)]
    TooLarge {
        /// The command's name.
        name: String,
    },
}

/// What to send for `prompt` in the project at `cwd` with the person's
/// command directories `dirs`, and the notices to print first (the
/// command files left out, what of the command is not honoured).
pub fn command_prompt(
    prompt: String,
    cwd: &Path,
    dirs: &[PathBuf],
) -> Result<(UiCommand, Vec<(Severity, String)>), CommandError> {
    let as_written = |prompt| Ok((UiCommand::Prompt { text: prompt }, Vec::new()));
    if !prompt.starts_with('/') || prompt.starts_with("//") {
        return as_written(prompt);
    }
    let Ok(tools) = ToolContext::new(cwd) else {
        return as_written(prompt);
    };
    let found = find(&*tools.workspace, dirs);
    let custom = CustomCommands::new(found.commands);
    let Ok(Input::Custom { command, arguments }) = slash::parse(&prompt, &custom) else {
        return as_written(prompt);
    };
    let text = template::expand(&command.template, &arguments, PROMPT_MAX_BYTES as usize)
        .ok_or_else(|| CommandError::TooLarge {
            name: command.name.clone(),
        })?;
    let notices = found
        .problems
        .into_iter()
        .map(|problem| format!("custom command {problem}"))
        .chain(template::ignored_notice(&command))
        .map(|text| (Severity::Notice, text))
        .collect();
    Ok((template::sent_as(command.scope)(text), notices))
}
