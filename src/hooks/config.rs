//! The `[[hooks]]` tables of the person's `config.toml` and of a
//! project's `.dashfloat/config.toml` (of which nothing else is read):
//!
//! ```toml
//! [[hooks]]
//! event = "pre_tool_use"       # session_start | user_prompt_submit | pre_tool_use | post_tool_use | stop
//! command = "~/.config/dashfloat/hooks/guard.sh" # run by /bin/sh -c in the project
//! tools = ["execute_command"]  # pre/post_tool_use only; absent: every tool
//! timeout = 10                 # seconds, 1 to 120; default 10
//! ```
//!
//! Each table is read on its own: a bad one is a problem naming it (a
//! notice), and the others are kept. The person's hooks run outside the
//! sandbox, so one whose program is a path inside the project (which a
//! cloned repository, or the model, can change) is refused; a project's
//! hooks may name one, as they run sandboxed. ADR 0054.

use std::time::Duration;

use serde::Deserialize;

use crate::safe_text::strip_controls;

/// The most hooks one file configures (32); those past it are left out
/// with a notice. Every matching hook starts a process per event, and a
/// tool call waits for all of its `pre_tool_use` hooks: dozens would
/// make every call slow, and a project's file must not be able to start
/// hundreds of processes per call.
pub const HOOKS_MAX: usize = 32;
/// How long a hook runs when its table says nothing (10 s).
pub const HOOK_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);
/// The longest timeout a hook may ask for (120 s): a turn, or a call,
/// waits for its hooks, and Esc is the only other way out of a wait.
pub const HOOK_TIMEOUT_MAX: Duration = Duration::from_secs(120);

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    /// A session starts, is cleared (`/clear`) or resumed (`/resume`).
    SessionStart,
    /// The person sent a prompt, before the model sees it.
    UserPromptSubmit,
    /// A validated tool call, before it is confirmed or run.
    PreToolUse,
    /// A tool call ran.
    PostToolUse,
    /// A turn the person's prompt started is over.
    Stop,
}

impl HookEvent {
    /// Its name, as the config and the event's JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session_start",
            HookEvent::UserPromptSubmit => "user_prompt_submit",
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
            HookEvent::Stop => "stop",
        }
    }

    /// Whether it is about one tool call, so a hook may name the tools.
    fn is_about_a_tool(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

/// Whose configuration a hook comes from: which sandbox it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The person's `config.toml`: runs as a command they approve would.
    Person,
    /// The project's `.dashfloat/config.toml`, trusted: runs in the
    /// workspace-write sandbox.
    Project,
}

impl Whose {
    /// The file its hooks are configured in, as notices name it.
    pub fn file(self) -> &'static str {
        match self {
            Whose::Person => "config.toml",
            Whose::Project => ".dashfloat/config.toml",
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// The command line, run by `/bin/sh -c` in the project.
    pub command: String,
    /// For tool events: the tools it runs for; `None`: every tool.
    pub tools: Option<Vec<String>>,
    /// How long it may run before its process group is killed.
    pub timeout: Duration,
    /// Whose it is.
    pub whose: Whose,
}

impl Hook {
    /// Whether it runs for `event`, about the tool named `tool` if the
    /// event is about one.
    pub fn runs_for(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.event == event
            && match (&self.tools, tool) {
                (Some(tools), Some(tool)) => tools.iter().any(|t| t == tool),
                _ => true,
            }
    }
}

/// A `[[hooks]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    event: HookEvent,
    command: String,
    tools: Option<Vec<String>>,
    timeout: Option<u64>,
}

/// The part of a project's `.dashfloat/config.toml` that is read.
#[derive(Debug, Deserialize)]
struct ProjectFile {
    #[serde(default)]
    hooks: Vec<toml::Value>,
}

/// A hook that cannot be used as configured. None stops dashfloat: each
/// is a notice, and the hook it names is left out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookConfigError {
    /// A table that is not a hook (a missing or unknown key, a wrong
    /// type, an event that does not exist).
    #[error("hook {number} of {file} cannot be used: {detail}; it is left out")]
    Table {
        /// The file, as notices name it.
        file: &'static str,
        /// Its place among the file's hooks, from 1.
        number: usize,
        /// What is wrong, in the parser's or our words.
        detail: String,
    },
    /// More hooks than [`HOOKS_MAX`].
    #[error(
        "{file} configures more than {HOOKS_MAX} hooks; those after the {HOOKS_MAX}th are left out"
    )]
    TooMany {
        /// The file, as notices name it.
        file: &'static str,
    },
    /// The project's file is not TOML.
    #[error("this project's .dashfloat/config.toml is not valid TOML: {0}; its hooks are left out")]
    ProjectFile(String),
}

/// The hooks of `tables`, the `[[hooks]]` of `whose` file, in order; the
/// tables that are not hooks become `problems`.
pub fn from_toml(
    tables: Vec<toml::Value>,
    whose: Whose,
    problems: &mut Vec<HookConfigError>,
) -> Vec<Hook> {
    let file = whose.file();
    if tables.len() > HOOKS_MAX {
        problems.push(HookConfigError::TooMany { file });
    }
    tables
        .into_iter()
        .take(HOOKS_MAX)
        .enumerate()
        .filter_map(|(index, value)| match hook(value, whose) {
            Ok(hook) => Some(hook),
            Err(detail) => {
                problems.push(HookConfigError::Table {
                    file,
                    number: index + 1,
                    detail,
                });
                None
            }
        })
        .collect()
}

/// The hooks of a project's `.dashfloat/config.toml` whose text is
/// `text`; nothing else of the file is read.
pub fn from_project_file(text: &str, problems: &mut Vec<HookConfigError>) -> Vec<Hook> {
    match toml::from_str::<ProjectFile>(text) {
        Ok(file) => from_toml(file.hooks, Whose::Project, problems),
        Err(e) => {
            problems.push(HookConfigError::ProjectFile(e.message().to_owned()));
            Vec::new()
        }
    }
}

/// One table as a hook, or what is wrong with it.
fn hook(value: toml::Value, whose: Whose) -> Result<Hook, String> {
    let table: Table = value
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_owned())?;
    if table.command.trim().is_empty() {
        return Err("its command is empty".to_owned());
    }
    if table.command.contains('\0') {
        return Err("its command holds a NUL byte".to_owned());
    }
    if whose == Whose::Person
        && let Some(program) = project_program(&table.command)
    {
        return Err(format!(
            "its program `{}` is a path inside the project, which a repository or the model can change; \
             name it by an absolute path or ~/…, or put the hook in the project's .dashfloat/config.toml, \
             which runs sandboxed once trusted",
            strip_controls(program)
        ));
    }
    if table.tools.is_some() && !table.event.is_about_a_tool() {
        return Err(format!(
            "tools is only for pre_tool_use and post_tool_use, not {}",
            table.event.name()
        ));
    }
    if table.tools.as_ref().is_some_and(Vec::is_empty) {
        return Err(
            "tools is empty, so it would never run; leave it out to run for every tool".to_owned(),
        );
    }
    let timeout = match table.timeout {
        None => HOOK_TIMEOUT_DEFAULT,
        Some(secs) if (1..=HOOK_TIMEOUT_MAX.as_secs()).contains(&secs) => Duration::from_secs(secs),
        Some(secs) => {
            return Err(format!(
                "its timeout of {secs} s is outside 1 to {} s",
                HOOK_TIMEOUT_MAX.as_secs()
            ));
        }
    };
    Ok(Hook {
        event: table.event,
        command: table.command,
        tools: table.tools,
        timeout,
        whose,
    })
}

/// The program `command` runs when it is a relative path with a `/` in
/// it (`scripts/guard.sh`, `./x.sh`): a file of the project, as a hook
/// runs in the project's directory. The program is the first word after
/// any `NAME=value` assignments, its quotes taken off; one the shell
/// finds in `PATH`, an absolute path, `~/…` (which `/bin/sh` expands) and
/// one starting with `$` (a variable) are not the project's.
fn project_program(command: &str) -> Option<&str> {
    let program = command
        .split_whitespace()
        .find(|word| !is_assignment(word))?
        .trim_matches(['"', '\'']);
    let outside = program.starts_with(['/', '~', '$']);
    (!outside && program.contains('/')).then_some(program)
}

/// Whether `word` is a shell assignment, `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(text: &str) -> (Vec<Hook>, Vec<HookConfigError>) {
        let mut problems = Vec::new();
        let hooks = from_project_file(text, &mut problems);
        (hooks, problems)
    }

    #[test]
    fn a_table_becomes_a_hook_with_its_defaults() {
        let (hooks, problems) = parse("[[hooks]]\nevent = \"stop\"\ncommand = \"echo done\"\n");
        assert_eq!(problems, []);
        assert_eq!(
            hooks,
            [Hook {
                event: HookEvent::Stop,
                command: "echo done".into(),
                tools: None,
                timeout: HOOK_TIMEOUT_DEFAULT,
                whose: Whose::Project,
            }]
        );
    }

    #[test]
    fn tools_and_timeout_are_read_for_a_tool_event() {
        let (hooks, problems) = parse(
            "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"guard\"\ntools = [\"execute_command\"]\ntimeout = 120\n",
        );
        assert_eq!(problems, []);
        assert_eq!(hooks[0].tools, Some(vec!["execute_command".to_owned()]));
        assert_eq!(hooks[0].timeout, HOOK_TIMEOUT_MAX);
        assert!(hooks[0].runs_for(HookEvent::PreToolUse, Some("execute_command")));
        assert!(!hooks[0].runs_for(HookEvent::PreToolUse, Some("read_file")));
        assert!(!hooks[0].runs_for(HookEvent::PostToolUse, Some("execute_command")));
    }

    #[test]
    fn a_bad_table_is_named_and_the_others_kept() {
        let (hooks, problems) = parse(
            "[[hooks]]\nevent = \"on_save\"\ncommand = \"x\"\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"kept\"\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"  \"\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntools = [\"read_file\"]\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = 0\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = 121\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"x\"\nmatcher = \"Bash\"\n\
             [[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"x\"\ntools = []\n",
        );
        assert_eq!(hooks.len(), 1);
        assert_eq!(hooks[0].command, "kept");
        let numbers: Vec<usize> = problems
            .iter()
            .map(|p| match p {
                HookConfigError::Table { number, .. } => *number,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(numbers, [1, 3, 4, 5, 6, 7, 8]);
        assert!(
            problems[0].to_string().starts_with(
                "hook 1 of .dashfloat/config.toml cannot be used: unknown variant `on_save`"
            ),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn the_persons_hook_may_not_run_a_program_of_the_project() {
        let table = |command: &str| -> toml::Value {
            toml::from_str(&format!("event = \"stop\"\ncommand = {command:?}\n")).unwrap()
        };
        let refused = [
            "scripts/guard.sh",
            "./x.sh --fast",
            "bin/check",
            "CI=1 scripts/guard.sh",
            "'scripts/guard.sh'",
        ];
        let kept = [
            "/usr/local/bin/guard",
            "~/.config/dashfloat/hooks/guard.sh",
            "$HOME/bin/guard",
            "guard --strict",
            "A=b/c guard",
            "cat > pre.json",
        ];
        let tables = refused.iter().chain(&kept).map(|c| table(c)).collect();
        let mut problems = Vec::new();
        let hooks = from_toml(tables, Whose::Person, &mut problems);
        let commands: Vec<&str> = hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, kept);
        assert_eq!(problems.len(), refused.len());
        assert_eq!(
            problems[0].to_string(),
            "hook 1 of config.toml cannot be used: its program `scripts/guard.sh` is a path inside \
             the project, which a repository or the model can change; name it by an absolute path \
             or ~/…, or put the hook in the project's .dashfloat/config.toml, which runs sandboxed \
             once trusted; it is left out"
        );
        let tables = refused.iter().map(|c| table(c)).collect();
        let hooks = from_toml(tables, Whose::Project, &mut problems);
        assert_eq!(
            hooks.len(),
            refused.len(),
            "a project's hooks run sandboxed"
        );
    }

    #[test]
    fn hooks_past_the_bound_are_left_out_with_a_problem() {
        let text = "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\n".repeat(HOOKS_MAX + 3);
        let (hooks, problems) = parse(&text);
        assert_eq!(hooks.len(), HOOKS_MAX);
        assert_eq!(
            problems,
            [HookConfigError::TooMany {
                file: ".dashfloat/config.toml"
            }]
        );
    }

    #[test]
    fn only_the_hooks_of_a_projects_file_are_read() {
        let (hooks, problems) = parse(
            "model = \"whatever\"\nbase_url = \"http://elsewhere\"\n[[hooks]]\nevent = \"session_start\"\ncommand = \"x\"\n",
        );
        assert_eq!(problems, []);
        assert_eq!(hooks.len(), 1);
        let (hooks, problems) = parse("this is not = = toml");
        assert_eq!(hooks, []);
        assert!(matches!(problems[..], [HookConfigError::ProjectFile(_)]));
    }
}
