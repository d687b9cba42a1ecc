//! Slash commands: the catalogue that the completion popup and `/help`
//! show, the parser that turns a submitted input into a prompt or a
//! command, and the popup's state. Typing `/` at the start of the input
//! opens the popup; `//` sends a prompt that starts with `/`.
//! `docs/decisions/0023-slash-commands-and-project-instructions.md`.

use crate::protocol::{ApprovalPolicy, CommandScope, CustomCommand};

use super::keys;

/// The most rows the completion popup takes; more candidates scroll with
/// the selection. ADR 0023.
pub const POPUP_MAX_ROWS: usize = 17;

/// One command of the catalogue.
#[derive(Debug)]
pub struct Command {
    /// Its name, typed after the `/`.
    pub name: &'static str,
    /// Its arguments as `/help` and the popup show them (`[focus]`).
    pub usage: &'static str,
    /// What it does, in one line.
    pub about: &'static str,
    /// Builds the command from its argument text, if any was typed.
    build: fn(Option<&str>) -> Result<Slash, ArgError>,
}

impl Command {
    /// Whether it takes an argument: Tab completing it adds a space.
    pub fn takes_argument(&self) -> bool {
        !self.usage.is_empty()
    }
}

/// Every command, in the order the popup and `/help` list them.
pub const COMMANDS: [Command; 17] = [
    Command {
        name: "help",
        usage: "",
        about: "list the keys and the commands",
        build: |arg| no_argument(arg, Slash::Help),
    },
    Command {
        name: "clear",
        usage: "",
        about: "start a new session; the old one stays saved",
        build: |arg| no_argument(arg, Slash::Clear),
    },
    Command {
        name: "compact",
        usage: "[focus]",
        about: "summarise the conversation now, keeping what focus names",
        build: |arg| {
            Ok(Slash::Compact {
                focus: arg.map(str::to_string),
            })
        },
    },
    Command {
        name: "undo",
        usage: "",
        about: "revert the files the latest turn changed (after showing the diff)",
        build: |arg| no_argument(arg, Slash::Undo),
    },
    Command {
        name: "redo",
        usage: "",
        about: "re-apply what the last /undo reverted",
        build: |arg| no_argument(arg, Slash::Redo),
    },
    Command {
        name: "rewind",
        usage: "",
        about: "go back to an earlier prompt (also Esc Esc)",
        build: |arg| no_argument(arg, Slash::Rewind),
    },
    Command {
        name: "sessions",
        usage: "",
        about: "list this directory's saved sessions",
        build: |arg| no_argument(arg, Slash::Sessions),
    },
    Command {
        name: "resume",
        usage: "[ID]",
        about: "resume a saved session; without an id, pick one",
        build: |arg| Ok(Slash::Resume { id: one_word(arg)? }),
    },
    Command {
        name: "model",
        usage: "[NAME]",
        about: "show the model, or use another from the next request on",
        build: |arg| {
            Ok(Slash::Model {
                name: one_word(arg)?,
            })
        },
    },
    Command {
        name: "status",
        usage: "",
        about: "show the session's tokens and what they cost",
        build: |arg| no_argument(arg, Slash::Status),
    },
    Command {
        name: "approval",
        usage: "[POLICY]",
        about: "show or change which calls wait for your approval",
        build: |arg| {
            let policy = match one_word(arg)? {
                None => None,
                Some(name) => Some(ApprovalPolicy::from_name(&name).ok_or(ArgError::Policy(name))?),
            };
            Ok(Slash::Approval { policy })
        },
    },
    Command {
        name: "permissions",
        usage: "[remove N|RULE]",
        about: "list the commands remembered for this project, or forget one",
        build: |arg| {
            let remove = match arg {
                None => None,
                Some(arg) => match arg.strip_prefix("remove") {
                    Some(rule) if rule.starts_with(char::is_whitespace) => {
                        Some(rule.trim().to_string())
                    }
                    _ => return Err(ArgError::Permissions),
                },
            };
            Ok(Slash::Permissions { remove })
        },
    },
    Command {
        name: "mcp",
        usage: "[restart NAME|trust]",
        about: "MCP servers and their tools; start one again; trust .mcp.json",
        build: |arg| {
            let mut words = arg.unwrap_or("").split_whitespace();
            let action = match (words.next(), words.next(), words.next()) {
                (None, _, _) => McpAction::List,
                (Some("trust"), None, _) => McpAction::Trust,
                (Some("restart"), Some(name), None) => McpAction::Restart(name.to_owned()),
                _ => return Err(ArgError::Mcp),
            };
            Ok(Slash::Mcp(action))
        },
    },
    Command {
        name: "hooks",
        usage: "[trust]",
        about: "hooks run on events; trust .dashfloat/config.toml",
        build: |arg| match one_word(arg)?.as_deref() {
            None => Ok(Slash::Hooks { trust: false }),
            Some("trust") => Ok(Slash::Hooks { trust: true }),
            Some(_) => Err(ArgError::Hooks),
        },
    },
    Command {
        name: "copy",
        usage: "[N]",
        about: "copy the last reply, or its code block N, to the clipboard",
        build: |arg| {
            let block = match one_word(arg)? {
                None => None,
                Some(n) => Some(
                    n.parse::<usize>()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or(ArgError::Block(n))?,
                ),
            };
            Ok(Slash::Copy { block })
        },
    },
    Command {
        name: "init",
        usage: "",
        about: "ask the model to write AGENTS.md for this project (you approve it)",
        build: |arg| no_argument(arg, Slash::Init),
    },
    Command {
        name: "quit",
        usage: "",
        about: "leave dashfloat",
        build: |arg| no_argument(arg, Slash::Quit),
    },
];

/// A command as typed, arguments parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    /// `/help`.
    Help,
    /// `/clear`.
    Clear,
    /// `/compact [focus]`.
    Compact {
        /// What the summary should keep in focus.
        focus: Option<String>,
    },
    /// `/undo`.
    Undo,
    /// `/redo`.
    Redo,
    /// `/rewind`.
    Rewind,
    /// `/sessions`.
    Sessions,
    /// `/resume [ID]`.
    Resume {
        /// The session; `None` opens the picker.
        id: Option<String>,
    },
    /// `/model [NAME]`.
    Model {
        /// The model to use; `None` shows the current one.
        name: Option<String>,
    },
    /// `/status`.
    Status,
    /// `/approval [POLICY]`.
    Approval {
        /// The policy to use; `None` shows the current one.
        policy: Option<ApprovalPolicy>,
    },
    /// `/permissions [remove N|RULE]`.
    Permissions {
        /// The rule to forget, by its number in the list or its words;
        /// `None` lists them.
        remove: Option<String>,
    },
    /// `/mcp [restart NAME|trust]`.
    Mcp(McpAction),
    /// `/hooks [trust]`.
    Hooks {
        /// Trust the project's `.dashfloat/config.toml` as it is now;
        /// `false` lists the hooks.
        trust: bool,
    },
    /// `/copy [N]`.
    Copy {
        /// The code block (1-based); `None` copies the whole reply.
        block: Option<usize>,
    },
    /// `/init`.
    Init,
    /// `/quit`.
    Quit,
}

impl Slash {
    /// Whether it asks the agent to do something, so it must wait until
    /// the agent is idle. `/quit` never waits, and the forms that only
    /// show something (`/model`, `/approval` without an argument) ask
    /// nothing of the agent. `/mcp trust` and `/hooks trust` wait: they
    /// trust the file as it is on disk then, and during a turn the model
    /// may just have rewritten it.
    pub fn needs_idle(&self) -> bool {
        match self {
            Slash::Clear
            | Slash::Compact { .. }
            | Slash::Undo
            | Slash::Redo
            | Slash::Rewind
            | Slash::Sessions
            | Slash::Init
            | Slash::Resume { .. } => true,
            Slash::Model { name } => name.is_some(),
            Slash::Approval { policy } => policy.is_some(),
            Slash::Permissions { remove } => remove.is_some(),
            Slash::Mcp(action) => *action == McpAction::Trust,
            Slash::Hooks { trust } => *trust,
            Slash::Help | Slash::Status | Slash::Copy { .. } | Slash::Quit => false,
        }
    }
}

/// What `/mcp` asks for. Listing and restarting do not wait for the
/// agent to be idle, as what they change takes effect at the next
/// prompt; trusting does (see [`Slash::needs_idle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpAction {
    /// `/mcp`: the servers and their tools.
    List,
    /// `/mcp restart NAME`.
    Restart(String),
    /// `/mcp trust`: the project's `.mcp.json` as it is now.
    Trust,
}

/// What a submitted input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A prompt for the model, as it is sent (`//x` is sent as `/x`).
    Prompt(String),
    /// A command.
    Command(Slash),
    /// A custom command, with the arguments typed after its name.
    Custom {
        /// The command.
        command: CustomCommand,
        /// What follows its name, trimmed.
        arguments: String,
    },
}

/// Why an argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// The command takes none.
    #[error("it takes no argument")]
    Unexpected,
    /// The command takes one word.
    #[error("it takes a single word")]
    OneWord,
    /// Not a policy's name.
    #[error("`{0}` is not an approval policy; choose {choices}", choices = policy_choices())]
    Policy(String),
    /// Not a code block's number.
    #[error("`{0}` is not a code block's number (1, 2, …)")]
    Block(String),
    /// `/permissions` with something but `remove` and what to remove.
    #[error("it takes nothing, or `remove` and a number from the list or a command's words")]
    Permissions,
    /// `/mcp` with something but `restart NAME` or `trust`.
    #[error("it takes nothing, `restart` and a server's name, or `trust`")]
    Mcp,
    /// `/hooks` with something but `trust`.
    #[error("it takes nothing, or `trust`")]
    Hooks,
}

/// Why a submitted input is not a command; shown as an error entry and
/// never sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlashError {
    /// No such command.
    #[error(
        "unknown command /{0} — /help lists the commands; start with // to send a prompt that begins with /"
    )]
    Unknown(String),
    /// A command with an argument it cannot take.
    #[error("/{command} {usage}: {why}")]
    Argument {
        /// The command's name.
        command: &'static str,
        /// Its usage.
        usage: &'static str,
        /// What is wrong.
        why: ArgError,
    },
}

/// The policies' names as `/approval` takes them: `ask|auto-edit|…`.
pub fn policy_choices() -> String {
    ApprovalPolicy::ALL.map(ApprovalPolicy::name).join("|")
}

fn no_argument(arg: Option<&str>, command: Slash) -> Result<Slash, ArgError> {
    match arg {
        None => Ok(command),
        Some(_) => Err(ArgError::Unexpected),
    }
}

fn one_word(arg: Option<&str>) -> Result<Option<String>, ArgError> {
    match arg {
        Some(word) if word.contains(char::is_whitespace) => Err(ArgError::OneWord),
        arg => Ok(arg.map(str::to_string)),
    }
}

/// Reads a submitted input: a prompt, or (starting with one `/`) a
/// command with its arguments: a built-in, else one of `custom`.
pub fn parse(text: &str, custom: &CustomCommands) -> Result<Input, SlashError> {
    let Some(rest) = text.strip_prefix('/') else {
        return Ok(Input::Prompt(text.to_string()));
    };
    if rest.starts_with('/') {
        return Ok(Input::Prompt(rest.to_string()));
    }
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, Some(arg.trim()).filter(|a| !a.is_empty())),
        None => (rest, None),
    };
    let Some(command) = COMMANDS.iter().find(|c| c.name == name) else {
        return custom
            .find(name)
            .map(|command| Input::Custom {
                command: command.clone(),
                arguments: arg.unwrap_or_default().to_owned(),
            })
            .ok_or_else(|| SlashError::Unknown(name.to_string()));
    };
    (command.build)(arg)
        .map(Input::Command)
        .map_err(|why| SlashError::Argument {
            command: command.name,
            usage: command.usage,
            why,
        })
}

/// The custom commands the agent found, each with the name the popup
/// offers it by: its own, unless a built-in or the person's command of
/// that name has it, then `project:NAME` or `user:NAME`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomCommands(Vec<(String, CustomCommand)>);

impl CustomCommands {
    /// Names the commands found, the person's first.
    pub fn new(found: Vec<CustomCommand>) -> Self {
        let mut named: Vec<(String, CustomCommand)> = Vec::with_capacity(found.len());
        for command in found {
            let taken = COMMANDS.iter().any(|c| c.name == command.name)
                || named.iter().any(|(_, c)| c.name == command.name);
            let name = if taken {
                format!("{}:{}", command.scope.prefix(), command.name)
            } else {
                command.name.clone()
            };
            named.push((name, command));
        }
        CustomCommands(named)
    }

    /// The command `typed` names: `project:NAME` or `user:NAME` (also
    /// Codex's `prompts:NAME`) the scope's, a bare name the person's,
    /// else the project's.
    fn find(&self, typed: &str) -> Option<&CustomCommand> {
        let (scope, name) = match typed.split_once(':') {
            Some(("project", name)) => (Some(CommandScope::Project), name),
            Some(("user" | "prompts", name)) => (Some(CommandScope::Person), name),
            Some(_) => return None,
            None => (None, typed),
        };
        let mut named = self.0.iter().map(|(_, c)| c).filter(|c| c.name == name);
        match scope {
            Some(scope) => named.find(|c| c.scope == scope),
            None => named.next(),
        }
    }

    /// The commands as the popup offers them.
    fn offered(&self) -> impl Iterator<Item = Candidate<'_>> {
        self.0
            .iter()
            .map(|(name, command)| Candidate::Custom(name, command))
    }
}

/// One row of the completion popup: a built-in command or a custom one.
#[derive(Debug, Clone, Copy)]
pub enum Candidate<'a> {
    /// A built-in.
    Builtin(&'static Command),
    /// A custom command, by the name that reaches it.
    Custom(&'a str, &'a CustomCommand),
}

impl Candidate<'_> {
    /// Its name as typed after the `/`.
    pub fn name(&self) -> &str {
        match self {
            Candidate::Builtin(command) => command.name,
            Candidate::Custom(name, _) => name,
        }
    }

    /// Whether it takes an argument: Tab completing it adds a space. A
    /// custom command may always be given some.
    pub fn takes_argument(&self) -> bool {
        match self {
            Candidate::Builtin(command) => command.takes_argument(),
            Candidate::Custom(..) => true,
        }
    }

    /// `/name usage`, as the popup and `/help` show it.
    pub fn synopsis(&self) -> String {
        match self {
            Candidate::Builtin(command) => synopsis(command),
            Candidate::Custom(name, command) if command.argument_hint.is_empty() => {
                format!("/{name}")
            }
            Candidate::Custom(name, command) => format!("/{name} {}", command.argument_hint),
        }
    }

    /// What it does, in one line; a custom command says whose it is.
    pub fn about(&self) -> String {
        match self {
            Candidate::Builtin(command) => command.about.to_owned(),
            Candidate::Custom(_, command) => {
                format!("{} ({})", command.description, whose(command))
            }
        }
    }
}

/// Whose a custom command is, as the popup and `/help` say it.
fn whose(command: &CustomCommand) -> String {
    match command.scope {
        CommandScope::Project => format!("project: {}", command.origin),
        CommandScope::Person => "yours".to_owned(),
    }
}

/// The commands whose name starts with what is typed, while the input is
/// a `/` and the start of a name (one line, no space yet): the
/// built-ins, then `custom`.
pub fn candidates<'a>(input: &str, custom: &'a CustomCommands) -> Vec<Candidate<'a>> {
    let Some(typed) = input.strip_prefix('/') else {
        return Vec::new();
    };
    if typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    let builtins = COMMANDS
        .iter()
        .filter(|c| c.name.starts_with(typed))
        .map(Candidate::Builtin);
    let custom = custom.offered().filter(|c| c.name().starts_with(typed));
    builtins.chain(custom).collect()
}

/// The `/help` entry: the commands from the catalogue, then the custom
/// ones, then the key table.
pub fn help_text(custom: &CustomCommands) -> String {
    let builtins: Vec<Candidate<'_>> = COMMANDS.iter().map(Candidate::Builtin).collect();
    let custom: Vec<Candidate<'_>> = custom.offered().collect();
    let column = builtins
        .iter()
        .chain(&custom)
        .map(|c| c.synopsis().chars().count())
        .max()
        .unwrap_or(0);
    let rows = |out: &mut String, candidates: &[Candidate<'_>]| {
        for candidate in candidates {
            let synopsis = candidate.synopsis();
            let pad = column - synopsis.chars().count();
            out.push_str(&format!(
                "\n  {synopsis}{}  {}",
                " ".repeat(pad),
                candidate.about()
            ));
        }
    };
    let mut out = String::from("commands (type / to list them, Tab completes):");
    rows(&mut out, &builtins);
    out.push_str(&format!(
        "\n  (POLICY is one of {}; //text sends /text as a prompt)",
        policy_choices()
    ));
    if !custom.is_empty() {
        out.push_str("\ncustom commands (files in .dashfloat/commands and the like; /project:NAME or /user:NAME reach one whose name is taken):");
        rows(&mut out, &custom);
    }
    for (heading, items) in keys::TABLES {
        out.push_str(&format!("\n{heading}: {}", items.join(" · ")));
    }
    out
}

/// `/name usage`, as the popup and `/help` show a built-in command.
fn synopsis(command: &Command) -> String {
    if command.takes_argument() {
        format!("/{} {}", command.name, command.usage)
    } else {
        format!("/{}", command.name)
    }
}

/// The rows of a list of `count` shown in `rows` rows so that `selected`
/// is among them: the top stays put until the selection passes the
/// bottom.
pub fn window(count: usize, selected: usize, rows: usize) -> std::ops::Range<usize> {
    let rows = rows.min(count);
    let start = (selected + 1).saturating_sub(rows).min(count - rows);
    start..start + rows
}

/// The completion popup: which candidate is selected and whether Esc
/// closed it. It follows the input: any edit matches afresh.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// What the candidates are matched against: the input as typed, kept
    /// while Tab and the arrows put candidates into the input.
    stem: String,
    /// The input as last seen; a different one is an edit.
    seen: String,
    /// The selected candidate.
    selected: usize,
    /// Esc closed the popup for this input.
    closed: bool,
}

impl Completion {
    /// Catches up with the input after a message: an edit matches afresh,
    /// from the first candidate, with the popup open again.
    pub fn follow(&mut self, input: &str) {
        if input != self.seen {
            *self = Completion {
                stem: input.to_string(),
                seen: input.to_string(),
                selected: 0,
                closed: false,
            };
        }
    }

    /// The candidates the popup shows, of the built-ins and `custom`;
    /// empty while it is closed.
    pub fn candidates<'a>(&self, custom: &'a CustomCommands) -> Vec<Candidate<'a>> {
        let open = !self.closed && !self.seen.contains(char::is_whitespace);
        if open {
            candidates(&self.stem, custom)
        } else {
            Vec::new()
        }
    }

    /// The selected candidate, while the popup is open.
    pub fn selected<'a>(&self, custom: &'a CustomCommands) -> Option<Candidate<'a>> {
        self.candidates(custom).get(self.selected).copied()
    }

    /// The selected candidate's place in [`Completion::candidates`].
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// Esc: closes the popup until the input changes.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Tab: puts the selected candidate into the input, or, when it is
    /// there already, the next one. The only candidate is completed with a
    /// space when it takes an argument. Returns the new input.
    pub fn tab(&mut self, custom: &CustomCommands) -> Option<String> {
        let candidates = self.candidates(custom);
        let current = candidates.get(self.selected)?;
        if candidates.len() == 1 {
            let space = if current.takes_argument() { " " } else { "" };
            return Some(self.show(format!("/{}{space}", current.name())));
        }
        if self.seen == format!("/{}", current.name()) {
            self.selected = (self.selected + 1) % candidates.len();
        }
        Some(self.show(format!("/{}", candidates[self.selected].name())))
    }

    /// ↑ / ↓: moves the selection, wrapping. After a Tab the input follows
    /// the selection; returns the new input then.
    pub fn step(&mut self, down: bool, custom: &CustomCommands) -> Option<String> {
        let candidates = self.candidates(custom);
        let count = candidates.len();
        if count == 0 {
            return None;
        }
        self.selected = if down {
            (self.selected + 1) % count
        } else {
            (self.selected + count - 1) % count
        };
        if self.seen == self.stem {
            return None;
        }
        let name = format!("/{}", candidates[self.selected].name());
        Some(self.show(name))
    }

    fn show(&mut self, input: String) -> String {
        self.seen.clone_from(&input);
        input
    }
}
