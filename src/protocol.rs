//! The messages that cross task boundaries.
//!
//! dashfloat runs as four kinds of tokio task — the UI, the agent actor, one
//! stream task per model episode and one tool task per call — that share no
//! mutable state but two (the checkpoints and the files the model has seen,
//! each behind a mutex; ADR 0001 says why). (`dashfloat exec` puts a headless driver, `exec`, where the
//! UI is; it speaks the same enums.) Everything they say to each other is
//! one of the plain enums below, sent over bounded `tokio::sync::mpsc` channels — except what a
//! tool task reports, which carries the typed results of `tools` and so is
//! declared beside the agent code that spawns the task (`agent::round`).
//! This module is the contract; it imports nothing else of the crate but
//! `stable_hash` (which imports nothing), so a reader can learn the whole system from this file and a test can drive
//! either side by sending these values. See
//! `docs/decisions/0001-architecture.md`. What a saved session holds of
//! these (the log items, usage, the session list) derives serde's traits,
//! so the session file and `dashfloat sessions --json` can carry them
//! as they are (ADR 0022).

use std::time::Duration;

/// The largest prompt, in bytes, whether typed, pasted or piped to
/// `dashfloat exec`: a thousand pages. A larger one would not fit any
/// context window and could not be compacted away.
pub const PROMPT_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// The most log items a session keeps, and the screen shows, for it to be
/// redrawn; older ones are dropped first (the conversation itself is not
/// cut). ADR 0022.
pub const LOG_ITEMS_MAX: usize = 2_000;

/// The most bytes of text a session's log keeps, and the screen shows (4
/// MiB, a thousand pages); older items are dropped first, the newest
/// always kept. With the conversation (bounded by the context window)
/// and the checkpoints (ADR 0035), it keeps a session file well under its
/// bound however long the replies. ADR 0036.
pub const LOG_BYTES_MAX: usize = 4 * 1024 * 1024;

/// What the UI asks of the agent. Sent on every user action that leaves the
/// screen; the agent answers with [`AgentEvent`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiCommand {
    /// The person submitted a prompt. The agent appends it to the
    /// conversation and starts a turn; answered by `Phase(Streaming)`, the
    /// reply's deltas and finally `TurnDone`. Sent only while idle.
    Prompt {
        /// The prompt exactly as typed (may span lines), at most
        /// [`PROMPT_MAX_BYTES`].
        text: String,
    },
    /// A prompt a project's custom command made (ADR 0053): as `Prompt`,
    /// except that nothing outside the project is read for it — the
    /// words are the repository's, and only the person's own words may
    /// name an image outside the project (ADR 0055).
    ProjectPrompt {
        /// The prompt as the command made it, at most
        /// [`PROMPT_MAX_BYTES`].
        text: String,
    },
    /// Stop whatever the current turn is doing (Esc, or Ctrl+C while busy).
    /// Partial output is kept; answered by `AssistantEnd { Interrupted }`
    /// and `TurnDone`. Ignored when idle.
    Cancel,
    /// The person's answer to a [`AgentEvent::Confirm`], echoing its id.
    /// Answered by the call's `ToolResult` (after it ran, or as rejected)
    /// and then the next confirmation or episode.
    Decide {
        /// The call being answered.
        id: CallId,
        /// Run it or not.
        decision: Decision,
    },
    /// Compact the conversation now (`/compact [focus]`), keeping what
    /// `focus` names in the summary. Answered by `Phase(Compacting)`, a
    /// notice saying what was saved, and `TurnDone`. Sent only while idle.
    Compact {
        /// What the summary should keep in focus, as typed.
        focus: Option<String>,
    },
    /// Start a new session (`/clear`); the old one stays saved. Answered by
    /// `SessionOpened` with an empty log.
    Clear,
    /// List the saved sessions (`/sessions`, `/resume` without an id).
    /// Answered by `Sessions`.
    ListSessions {
        /// Every directory's sessions, not only this one's.
        all: bool,
    },
    /// Resume a saved session (`/resume ID`, the picker). Answered by
    /// `SessionOpened` with its log, or an error entry.
    Resume {
        /// The session's id.
        id: String,
    },
    /// Use another model from the next request on (`/model NAME`).
    /// Answered by `SessionFacts`.
    SetModel {
        /// The model's name.
        name: String,
    },
    /// Change which calls wait for the person (`/approval`). Answered by
    /// `ApprovalChanged`, or an error entry when the policy cannot be had
    /// here (`auto` on a kernel without the workspace-write sandbox).
    SetApproval(ApprovalPolicy),
    /// List the commands remembered for this project (`/permissions`).
    /// Answered by a notice.
    ListPermissions,
    /// Forget a remembered command (`/permissions remove RULE`): `rule`
    /// as the list shows it (`cargo test`) or its number there. Answered
    /// by a notice, or an error entry.
    ForgetPermission {
        /// The rule's words or its number, as typed.
        rule: String,
    },
    /// Revert the files changed by the latest turn that changed any
    /// (`/undo`): each change is put to the person as a `Confirm`, then a
    /// notice says what was restored, and `TurnDone`. Sent only while idle.
    Undo,
    /// Re-apply what the last `/undo` reverted (`/redo`); answered as
    /// `Undo` is.
    Redo,
    /// List the conversation's prompts to rewind to (`/rewind`, Esc Esc).
    /// Answered by `Prompts`.
    ListPrompts,
    /// Drop the conversation from prompt `prompt` (an index into the
    /// `Prompts` list) on. Answered by `Rewound`, then a `Confirm` offering
    /// to undo the files those turns changed (when they changed any), and
    /// `TurnDone`. Sent only while idle.
    Rewind {
        /// The prompt, 0-based, oldest first.
        prompt: usize,
    },
    /// Show the MCP servers (`/mcp`). Answered by `McpServers`.
    ListMcp,
    /// Start an MCP server again (`/mcp restart NAME`). Answered by a
    /// notice, then `McpServers` once it is ready or has failed.
    RestartMcp {
        /// The server's name, as configured.
        name: String,
    },
    /// Trust the project's `.mcp.json` as it is now and start its
    /// servers (`/mcp trust`). Answered by a notice or an error entry.
    TrustMcp,
    /// Show the hooks that run, and a project's not trusted (`/hooks`).
    /// Answered by a notice. ADR 0054.
    ListHooks,
    /// Trust the project's `.dashfloat/config.toml` as it is now, so its
    /// hooks run (`/hooks trust`). Answered by a notice or an error
    /// entry.
    TrustHooks,
    /// The person is leaving. The agent stops its tasks and ends; the UI
    /// does not wait for an answer.
    Quit,
}

/// Which mutating calls run without asking. Read-only calls never ask.
/// `docs/decisions/0014-approval-policy.md`, ADR 0044.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Ask before every write, edit and command (the default).
    #[default]
    Ask,
    /// Apply file edits and writes inside the project without asking; still
    /// ask before every command, and before a write or edit that lands in
    /// the repository's own files (`.git`).
    AutoEdit,
    /// As auto-edit for files, and run commands without asking in the
    /// workspace-write sandbox; ask before a command the model wants run
    /// outside it. Only where the kernel can enforce that sandbox.
    Auto,
    /// Run everything without asking. Named so nobody picks it by accident;
    /// the status bar warns while it is active.
    DangerouslyApproveAll,
}

impl ApprovalPolicy {
    /// Every policy, in the order `/approval` lists them.
    pub const ALL: [ApprovalPolicy; 4] = [
        ApprovalPolicy::Ask,
        ApprovalPolicy::AutoEdit,
        ApprovalPolicy::Auto,
        ApprovalPolicy::DangerouslyApproveAll,
    ];

    /// The policy's name as `--approval` and `/approval` spell it.
    pub fn name(self) -> &'static str {
        match self {
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::AutoEdit => "auto-edit",
            ApprovalPolicy::Auto => "auto",
            ApprovalPolicy::DangerouslyApproveAll => "dangerously-approve-all",
        }
    }

    /// The policy named `name` (as [`ApprovalPolicy::name`] spells it).
    pub fn from_name(name: &str) -> Option<ApprovalPolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The status bar's warning while a permissive policy is active.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            ApprovalPolicy::Ask => None,
            ApprovalPolicy::AutoEdit => Some("auto-edit"),
            ApprovalPolicy::Auto => Some("auto"),
            ApprovalPolicy::DangerouslyApproveAll => Some("APPROVE-ALL"),
        }
    }
}

/// The approval policy in force and the sandbox level a command it lets
/// run is confined to, as the status bar shows them (ADR 0044).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalMode {
    /// Which calls wait for the person.
    pub policy: ApprovalPolicy,
    /// The sandbox level's name (`off`, `workspace-write`): where a
    /// command runs that the policy runs unasked, or, under `ask` and
    /// `auto-edit`, one the person approved.
    pub sandbox: String,
}

/// One entry of a saved session's log, as the screen redraws it on
/// resume: what the person saw, not what the model is sent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LogItem {
    /// A prompt the person sent.
    User(String),
    /// A reply, with its reasoning and how it ended.
    Assistant {
        /// The reply's markdown.
        text: String,
        /// The reasoning shown dimmed above it (empty if none).
        reasoning: String,
        /// How it ended.
        end: ReplyEnd,
    },
    /// A tool call's row, with its outcome once it had one.
    Tool {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The tool's name.
        name: String,
        /// The arguments in brief.
        summary: String,
        /// How it ended and the excerpt of its output.
        outcome: Option<(ToolStatus, String)>,
    },
    /// A notice or an error line.
    System {
        /// Notice or error.
        severity: Severity,
        /// What it says, one or more lines.
        text: String,
    },
}

/// A saved session as a list or the picker shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionSummary {
    /// The id `--resume` and `/resume` take (sortable by time).
    pub id: String,
    /// The first prompt, cut short.
    pub title: String,
    /// The project directory it ran in.
    pub directory: String,
    /// When it was last saved, in seconds since the Unix epoch.
    pub updated: u64,
    /// The session file's size in bytes.
    pub bytes: u64,
}

/// Identifies one tool call: the provider's id, or one the agent made up
/// when the provider sent none. Tool results echo it.
pub type CallId = String;

/// The person's answer to a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `y`: run the call exactly as previewed.
    Approve,
    /// `a`: run it as `y` does, and from now on run commands of the rule
    /// its confirmation offered without asking, in this project
    /// ([`ConfirmRequest::remember`]).
    Remember,
    /// `Esc` or `n`: do not run it; the model is told it was rejected.
    Reject,
    /// Text typed and sent instead of an answer: do not run it; the model
    /// reads the person's words as what to do instead. At most
    /// [`PROMPT_MAX_BYTES`].
    Redirect(String),
}

/// How a tool call ended, as the outcome row shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ToolStatus {
    /// It ran and succeeded.
    Ok,
    /// It ran and succeeded with nothing to show: the words say what the
    /// empty output means ("no output", "no matches"), so a bare "ok" is
    /// not left to be guessed at.
    Empty(String),
    /// It ran and succeeded, and left something the person should see at
    /// a glance without it reading as a failure: a write that landed with
    /// syntax errors ("syntax error at line 4").
    Warning(String),
    /// It was refused before running, or failed while running.
    Error(String),
    /// The person rejected it.
    Rejected,
    /// The person interrupted it (or the turn it belonged to).
    Cancelled,
    /// It ran out of time.
    TimedOut(String),
}

impl ToolStatus {
    /// `Ok`, or `Empty` saying `note` when the output is `empty`: the
    /// status of a result whose emptiness means something.
    pub fn ok_unless_empty(empty: bool, note: impl FnOnce() -> String) -> Self {
        if empty {
            ToolStatus::Empty(note())
        } else {
            ToolStatus::Ok
        }
    }

    /// What a call that worked ended with, as a row or exec's stderr says
    /// it: "ok", or "ok · no output" with the note of an empty result.
    pub fn ok_words(note: Option<&str>) -> String {
        match note {
            Some(note) => format!("ok · {note}"),
            None => "ok".to_string(),
        }
    }
}

/// What kind of line a preview line is, for styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewKind {
    /// A title: the file and what will happen to it, or the command.
    Header,
    /// Unchanged context around a change.
    Context,
    /// A line that will be added (`+`).
    Added,
    /// A line that will be removed (`-`).
    Removed,
    /// A note such as "… 120 more lines".
    Marker,
}

/// One line of a confirmation preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewLine {
    /// How the line is styled and prefixed.
    pub kind: PreviewKind,
    /// Its text, without the `+`/`-` prefix.
    pub text: String,
}

/// A call that waits for the person's y / Esc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmRequest {
    /// The call; the answer echoes it.
    pub id: CallId,
    /// What will happen, exactly: the diff to be applied or the command.
    pub preview: Vec<PreviewLine>,
    /// This confirmation's place among the episode's (1-based).
    pub position: usize,
    /// How many calls of the episode need confirming.
    pub of: usize,
    /// The rule `a` would remember (`cargo test`), when the call is a
    /// command that can be remembered; `None`: `a` does nothing.
    pub remember: Option<String>,
}

/// What the agent is doing, as shown in the status bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// Waiting for a prompt; no timers run.
    #[default]
    Idle,
    /// A model reply is streaming in.
    Streaming,
    /// A tool call is running.
    Executing,
    /// A tool call waits for the person's y / Esc.
    Confirming,
    /// The conversation is being compacted (a summary streams in); Esc
    /// cancels and leaves it unchanged.
    Compacting,
}

impl Phase {
    /// Whether the phase is active: an active phase shows a spinner and
    /// accepts Esc as an interrupt.
    pub fn is_active(self) -> bool {
        self != Phase::Idle
    }
}

/// How far the server has read a request's prompt: llama.cpp's
/// `prompt_progress`, sent while a long prompt is read, before the first
/// token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptProgress {
    /// Tokens in the prompt.
    pub total: u64,
    /// Of those, tokens the server had cached and did not read again.
    pub cache: u64,
    /// Tokens ready so far, the cached ones included.
    pub processed: u64,
    /// Milliseconds since the server began reading.
    pub elapsed_ms: u64,
}

impl PromptProgress {
    /// How much longer reading should take, at the rate so far; `None`
    /// before anything was read.
    pub fn remaining(&self) -> Option<Duration> {
        let read = self.processed.saturating_sub(self.cache);
        if read == 0 || self.elapsed_ms == 0 {
            return None;
        }
        let left = self.total.saturating_sub(self.processed);
        Some(Duration::from_millis(
            left.saturating_mul(self.elapsed_ms) / read,
        ))
    }
}

/// Token counts from the provider's last usage frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens in the request (the whole conversation so far).
    pub prompt_tokens: u64,
    /// Tokens generated in the reply.
    pub completion_tokens: u64,
    /// Their sum, as the provider reports it.
    pub total_tokens: u64,
    /// How many of the prompt's tokens the provider read from its cache
    /// (0 when it did not say).
    #[serde(default)]
    pub cached_tokens: u64,
}

/// What a model costs, in millionths of a US dollar per million tokens
/// (the config's `[prices."MODEL"]`, ADR 0052): whole numbers, so a
/// price compares exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Price {
    /// A prompt token not read from the cache.
    pub input: u64,
    /// A prompt token read from the cache.
    pub cached_input: u64,
    /// A reply token.
    pub output: u64,
}

impl Price {
    /// What `totals` cost at this price, in US dollars.
    pub fn cost(&self, totals: &Usage) -> f64 {
        let cached = totals.cached_tokens.min(totals.prompt_tokens);
        let parts = [
            (totals.prompt_tokens - cached, self.input),
            (cached, self.cached_input),
            (totals.completion_tokens, self.output),
        ];
        let micro: u128 = parts
            .iter()
            .map(|&(tokens, price)| u128::from(tokens) * u128::from(price))
            .sum();
        micro as f64 / 1e12
    }
}

/// How a streamed assistant reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ReplyEnd {
    /// The model finished (`finish_reason` and `[DONE]`).
    Complete,
    /// The person interrupted it; the partial text is kept.
    Interrupted,
    /// The stream failed; the partial text is kept and a system entry says
    /// why.
    Failed,
}

/// How loud a system entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Severity {
    /// Information: a retry, a cut reply, a note about the session.
    Notice,
    /// Something went wrong; the text says what and how to fix it.
    Error,
}

/// What the agent tells the UI: the display contract. The UI renders these
/// and never needs to know about HTTP, files or processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentEvent {
    /// The agent entered a phase. `Idle` arrives only with or after
    /// `TurnDone`.
    Phase(Phase),
    /// A piece of the assistant's reply text (markdown). Opens a reply entry
    /// if none is open.
    AssistantDelta(String),
    /// A piece of the model's reasoning (`reasoning_content`), shown dimmed
    /// and never sent back to the model.
    ReasoningDelta(String),
    /// The open reply entry is finished.
    AssistantEnd(ReplyEnd),
    /// Token counts of the last request; sent before the phase change that
    /// ends the episode.
    Usage(Usage),
    /// The session's token counts summed over every request (after each
    /// request, and when a session opens): `/status` and the cost read
    /// them.
    Totals(Usage),
    /// What the agent learned about the model after start-up (from the
    /// server, or from a context-exceeded error), for the status bar. A
    /// `None` leaves that fact as it is. ADR 0020.
    SessionFacts {
        /// The model in use, if it changed.
        model: Option<String>,
        /// The model's context window in tokens, if it changed.
        context_window: Option<u64>,
    },
    /// The project's files and folders (folders ending with `/`), the
    /// shallowest first, of at most [`crate::tools::LOCATE_MAX_FILES`]
    /// files: what the input box completes `@` with. Sent when the agent
    /// starts and after every turn, as files come and go. ADR 0038.
    ProjectFiles(Vec<String>),
    /// The model called a tool: a dim row with the tool's name and a short
    /// summary of its arguments (`read_file src/main.rs:120-180`).
    ToolCall {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The tool's name.
        name: String,
        /// The arguments in brief.
        summary: String,
    },
    /// A call is being written: its name, and how much of its arguments
    /// has arrived, so a long or runaway call is seen (and can be
    /// interrupted) before it is whole.
    ToolCallWriting {
        /// The tool's name.
        name: String,
        /// Bytes of its arguments so far.
        bytes: usize,
    },
    /// The server is reading a long prompt before its first token: how
    /// far it has got, for the status bar.
    ReadingPrompt(PromptProgress),
    /// A command the analyser showed to be read-only runs without asking:
    /// its row's summary becomes the line as it runs, marked so (ADR
    /// 0025).
    ToolAllowed {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The row's new summary.
        summary: String,
    },
    /// A running command printed more: its latest lines (at most
    /// `EXEC_LIVE_LINES`), shown under its row or preview until its
    /// result replaces them. Sent at most every `LIVE_OUTPUT_INTERVAL`.
    ToolOutput {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The output's last lines, as a terminal would show them.
        tail: String,
    },
    /// A call waits for the person: the preview goes into the log and the
    /// phase becomes `Confirming`. Answered by `UiCommand::Decide`.
    Confirm(ConfirmRequest),
    /// A call ended: the outcome row under its tool row.
    ToolResult {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// How it ended.
        status: ToolStatus,
        /// A bounded excerpt of its output (at most 30 lines), verbatim.
        excerpt: String,
    },
    /// A dim line in the log: an error with its fix, or a notice.
    System {
        /// Notice or error.
        severity: Severity,
        /// The sentence the person reads.
        text: String,
    },
    /// A session was opened (`/clear`, `/resume`, `--continue`): the log is
    /// replaced by the session's own.
    SessionOpened {
        /// What the log shows, oldest first (empty for a new session).
        log: Vec<LogItem>,
    },
    /// The id the open session is saved under, or `None` when saving is
    /// off (`--no-save`). Sent at start-up once the first session is open,
    /// and again when another opens; never when there is no sessions
    /// directory (nothing is saved then).
    SessionId(Option<String>),
    /// The saved sessions, newest first: the answer to `ListSessions`.
    Sessions {
        /// The sessions.
        list: Vec<SessionSummary>,
        /// The time of the listing (Unix seconds), which their ages are
        /// counted from: the UI reads no clock.
        now: u64,
    },
    /// The approval policy now in force, with its sandbox level.
    ApprovalChanged(ApprovalMode),
    /// The prompts a rewind can return to, oldest first: the answer to
    /// `ListPrompts`.
    Prompts {
        /// Each prompt's text.
        list: Vec<String>,
    },
    /// The conversation was rewound: the prompt it went back to, for the
    /// input box to hold again.
    Rewound {
        /// The prompt's text.
        text: String,
    },
    /// The conversation was compacted: the last usage no longer says how
    /// full the window is; this estimate of the next prompt does, until
    /// the next request reports its own.
    Compacted {
        /// Estimated prompt tokens of the compacted conversation.
        estimate: u64,
    },
    /// The custom commands found, the person's first: what the `/` list
    /// offers besides the built-ins. Sent when the agent starts and after
    /// every turn, as files come and go. ADR 0053.
    CustomCommands {
        /// The commands.
        found: Vec<CustomCommand>,
        /// One line per command file left out, saying why: shown when
        /// first seen.
        problems: Vec<String>,
    },
    /// The MCP servers and their tools: the answer to `ListMcp`. ADR 0045.
    McpServers(Vec<McpServerView>),
    /// The turn is over; the agent is idle and takes the next prompt.
    TurnDone,
}

/// Whose a custom command is: where its file was found (ADR 0053).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// The project's (`.dashfloat/commands/`, `.claude/commands/`): the
    /// repository chose its words, so the popup says so.
    Project,
    /// The person's own (`~/.config/dashfloat/commands/`,
    /// `~/.claude/commands/`, `~/.codex/prompts/`).
    Person,
}

impl CommandScope {
    /// The prefix that reaches the scope's command of a name whatever
    /// else has it (`/project:NAME`, `/user:NAME`).
    pub fn prefix(self) -> &'static str {
        match self {
            CommandScope::Project => "project",
            CommandScope::Person => "user",
        }
    }
}

/// A prompt template kept as a Markdown file, offered in the `/` list
/// and expanded into a prompt when typed (ADR 0053).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Its name: the file's name without `.md`.
    pub name: String,
    /// Whose it is.
    pub scope: CommandScope,
    /// The directory it came from, as the popup names it
    /// (`.claude/commands`).
    pub origin: String,
    /// What it does, from its front matter's `description` (else its
    /// first line).
    pub description: String,
    /// Its arguments as the popup shows them (`argument-hint`).
    pub argument_hint: String,
    /// The prompt, front matter removed, with `$ARGUMENTS`, `$1`… still
    /// in it.
    pub template: String,
    /// What the file asks that dashfloat does not do (`allowed-tools`, a
    /// `` !`command` `` line): said when it is used, its text sent as it
    /// is.
    pub ignored: Vec<String>,
}

/// One MCP server as `/mcp` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerView {
    /// Its name, as configured.
    pub name: String,
    /// Starting, ready, failed or disabled.
    pub state: McpServerState,
    /// Estimated tokens its offered tools add to every request's prefix.
    pub tokens: u64,
    /// Its tools, as the server listed them (when ready).
    pub tools: Vec<McpToolView>,
}

/// Where an MCP server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerState {
    /// `enabled = false` in its table.
    Disabled,
    /// Being started.
    Starting,
    /// Running, speaking the protocol revision named.
    Ready {
        /// The protocol revision negotiated (`2025-06-18`).
        protocol: String,
    },
    /// Not running: why.
    Failed(String),
}

/// One MCP tool as `/mcp` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolView {
    /// The server's own name for it.
    pub name: String,
    /// The first line of its description, cut.
    pub description: String,
    /// Whether the model is offered it (`enabled_tools`/`disabled_tools`).
    pub offered: bool,
    /// Whether the server annotates it read-only (shown, not trusted).
    pub read_only_hint: bool,
    /// Whether the config lets it run without asking.
    pub approved: bool,
}

/// Why a model request failed: the HTTP/transport error taxonomy. Each
/// variant's text names the cause and the fix; it is shown as a chat entry
/// and the session stays usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// Nothing listens at the base URL.
    #[error(
        "no model server answers at {url} (connection refused). Start one — `scripts/local-model` starts the local default — or set OPENAI_BASE_URL / --base-url"
    )]
    ConnectionRefused {
        /// The base URL that was tried.
        url: String,
    },
    /// The host name did not resolve.
    #[error("cannot resolve the host of {url}: {detail}. Check --base-url / OPENAI_BASE_URL")]
    Dns {
        /// The base URL that was tried.
        url: String,
        /// The resolver's words.
        detail: String,
    },
    /// The TLS handshake failed.
    #[error(
        "TLS handshake with {url} failed: {detail}. Check that the URL's scheme (http/https) and port are right"
    )]
    Tls {
        /// The base URL that was tried.
        url: String,
        /// The TLS library's words.
        detail: String,
    },
    /// The server closed the connection without answering: typically a
    /// kept-alive connection it had already dropped (llama-server closes
    /// idle ones). Nothing was generated, so the request is sent again.
    #[error("{url} closed the connection without answering")]
    ClosedUnanswered {
        /// The base URL that was tried.
        url: String,
    },
    /// Some other connection failure (reset, unreachable, ...).
    #[error("cannot connect to {url}: {detail}")]
    Connect {
        /// The base URL that was tried.
        url: String,
        /// What the network stack said.
        detail: String,
    },
    /// No connection within the request timeout, or no response headers
    /// within the longer of it and the idle timeout.
    #[error("{url} did not answer within {}s. Is the server overloaded? If it is just slow, raise --request-timeout (to connect) or --idle-timeout (a local server answers only once it has read the prompt)", .after.as_secs())]
    ConnectTimeout {
        /// The base URL that was tried.
        url: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// The stream sent no data for longer than the idle timeout (comments
    /// and the other lines without data are no progress; ADR 0007).
    #[error("the stream sent no data for {}s and was closed; the partial reply is kept. Raise --idle-timeout for slow models", .after.as_secs())]
    IdleTimeout {
        /// The idle timeout that ran out.
        after: Duration,
    },
    /// 401 or 403: the key is missing, wrong, or lacks access.
    #[error(
        "the provider refused the API key (HTTP {status}): {message}. Set {key_var} to a valid key for this provider"
    )]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The environment variable the key is read from.
        key_var: String,
        /// The provider's message.
        message: String,
    },
    /// 404: wrong base URL or unknown model.
    #[error(
        "HTTP 404 from {url}: {message}. Check the base URL (it usually ends in /v1) and the model name `{model}`"
    )]
    NotFound {
        /// The request URL.
        url: String,
        /// The model that was asked for.
        model: String,
        /// The provider's message.
        message: String,
    },
    /// 400: the provider rejected the request.
    #[error("the provider rejected the request (HTTP 400): {message}")]
    BadRequest {
        /// The provider's message.
        message: String,
    },
    /// 400 or 422 about tools: the server takes no `tools` field or no
    /// `tool` messages. The agent then offers the tools in the prompt
    /// instead (ADR 0031); shown only if that fails too.
    #[error(
        "the provider refused the request's tool calls (HTTP {status}): {message}. Set tool_syntax to the model's own syntax if its calls are not read"
    )]
    ToolsRefused {
        /// 400 or 422.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// 400, 404 or 422 saying the model takes no images (llama.cpp
    /// without a vision projector, OpenAI's text models, OpenRouter with
    /// no endpoint for images). The agent then sends the prompt again
    /// without them (ADR 0055); shown only if that is not possible.
    #[error(
        "the model does not take images (HTTP {status}): {message}. Choose a model that does with /model, or name no image"
    )]
    ImagesRefused {
        /// 400, 404 or 422.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The request no longer fits the model's context window (the
    /// provider said so in a 400). The agent compacts and retries once;
    /// shown only when that did not help, so the entry says what the
    /// person can do. ADR 0020, 0021.
    #[error(
        "the conversation no longer fits the model's context window{}: {message}. Compact it with /compact (add what to keep in focus), or start afresh with /clear",
        window_hint(.window)
    )]
    ContextExceeded {
        /// The true window in tokens, where the provider's message says it.
        window: Option<u64>,
        /// The provider's message.
        message: String,
    },
    /// 429: rate limited, after any retries.
    #[error("rate limited (HTTP 429){}: {message}", retry_hint(.retry_after))]
    RateLimited {
        /// What Retry-After said, if anything.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// 5xx: the provider failed.
    #[error("the provider failed (HTTP {status}){}: {message}. Try again in a moment", retry_hint(.retry_after))]
    Server {
        /// The status code.
        status: u16,
        /// What Retry-After said, if anything.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// Any other unexpected status.
    #[error("unexpected HTTP {status} from the provider: {message}")]
    Status {
        /// The status code.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// A redirect to another origin (scheme, host or port), which is not
    /// followed: the custom headers, which may carry credentials, would
    /// follow it.
    #[error(
        "{url} redirects to {location}, another scheme, host or port; dashfloat does not follow that, so your key and headers go nowhere else. If you trust it, set --base-url to where it points"
    )]
    Redirect {
        /// The URL that answered with the redirect (credentials redacted).
        url: String,
        /// Where it pointed (credentials redacted).
        location: String,
    },
    /// A 2xx answer that is not an event stream (an HTML page, a JSON error).
    #[error(
        "the server answered with {content_type}, not an event stream: {excerpt}. Is the base URL an OpenAI-compatible API?"
    )]
    NotEventStream {
        /// The Content-Type it sent.
        content_type: String,
        /// The start of the body.
        excerpt: String,
    },
    /// A `data:` frame that is not a chat-completion chunk.
    #[error("the provider sent a malformed chunk ({detail}); the partial reply is kept")]
    MalformedChunk {
        /// The parser's words and the start of the frame.
        detail: String,
    },
    /// An error object sent inside the stream.
    #[error("the provider reported an error mid-stream: {message}")]
    InStream {
        /// The provider's message.
        message: String,
    },
    /// The connection ended before `[DONE]`.
    #[error("the stream was cut before it finished; the partial reply is kept")]
    CutShort,
    /// The connection broke while reading.
    #[error("the connection broke mid-stream ({detail}); the partial reply is kept")]
    ReadFailed {
        /// What the network stack said.
        detail: String,
    },
    /// One SSE frame exceeded the frame cap.
    #[error("the provider sent a frame larger than {limit} bytes; the stream was closed")]
    FrameTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// The reply exceeded the episode's cap: its text and calls, with the
    /// stream's lines that carry no data (comments; ADR 0007).
    #[error(
        "the reply (with the stream's comments) exceeded {limit} bytes and was cut off; the partial reply is kept"
    )]
    ReplyTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// The model announced more tool calls in one reply than allowed.
    #[error(
        "the model asked for more than {limit} tool calls in one reply; the stream was stopped"
    )]
    TooManyToolCalls {
        /// The cap.
        limit: usize,
    },
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(", retry after {}s", d.as_secs()),
        None => String::new(),
    }
}

fn window_hint(window: &Option<u64>) -> String {
    match window {
        Some(tokens) => format!(" of {tokens} tokens"),
        None => String::new(),
    }
}

/// A tool call as the model made it, assembled from the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRequest {
    /// The provider's id, or the one the stream task made up; the result
    /// echoes it.
    pub id: CallId,
    /// The tool's name, as the model wrote it (it may not exist).
    pub name: String,
    /// The arguments, parsed once where the stream assembled the call:
    /// validation reads them as they are, and the assistant message
    /// carries them back.
    pub arguments: CallArguments,
    /// Why the call is unusable before validation even starts (e.g. the
    /// stream gave it two different names), if it is.
    pub error: Option<String>,
}

/// A call's arguments as the stream assembled them: parsed once, so that
/// nothing between the stream and the tool reads the text again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallArguments {
    /// They are JSON: an object for a call that can be valid; any other
    /// value is refused by the tool's schema, which names what it is.
    Json(serde_json::Value),
    /// They are not JSON (cut off, or malformed): answered with the
    /// parser's words, never run.
    Malformed {
        /// The text exactly as streamed.
        text: String,
        /// The parser's words, with line and column.
        detail: String,
    },
}

impl CallArguments {
    /// The arguments as a JSON object, when they are one.
    pub fn object(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        match self {
            CallArguments::Json(serde_json::Value::Object(map)) => Some(map),
            _ => None,
        }
    }
}

/// What a file looked like when its change was previewed. An approved
/// change is written only if the file still looks like this, so the bytes
/// approved are the bytes that land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileGuard {
    /// Nothing to guard (a command).
    Unguarded,
    /// The file did not exist.
    Absent,
    /// The file's content hashed to this.
    Content(crate::stable_hash::ContentHash),
}

/// A confirmation preview with the guard its execution must check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The lines to show.
    pub lines: Vec<PreviewLine>,
    /// The state of the target when the preview was built.
    pub guard: FileGuard,
}

/// Why the model stopped generating, as the choice's `finish_reason`
/// says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`: the reply is complete.
    Stop,
    /// `length`: the reply reached the model's output limit and was cut.
    Length,
    /// `tool_calls`: the reply ends with calls to run.
    ToolCalls,
    /// Anything else a provider sends (`content_filter`, ...), as sent.
    Other(String),
}

impl From<String> for FinishReason {
    fn from(reason: String) -> Self {
        match reason.as_str() {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            _ => FinishReason::Other(reason),
        }
    }
}

/// What a stream task tells the agent about one model episode. The last
/// event of every stream is `Done` or `Failed`; a stream whose task ended
/// without either is treated as `Failed(CutShort)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of reply text.
    Content(String),
    /// A piece of reasoning text.
    Reasoning(String),
    /// The usage frame.
    Usage(Usage),
    /// `finish_reason` of the choice.
    Finish(FinishReason),
    /// An item the wire requires be sent back with this reply (signed
    /// thinking, encrypted reasoning), as the provider sent it: the agent
    /// keeps it with the reply's message.
    Carried(serde_json::Value),
    /// A retryable failure before any token: the request is sent again
    /// after `wait`.
    Retrying {
        /// Which retry this is (1-based).
        attempt: u32,
        /// How long the task waits first.
        wait: Duration,
        /// The failure being retried.
        reason: TransportError,
    },
    /// A tool call's id and name are known (its arguments may still be
    /// streaming). Every announced call gets a result, whatever happens.
    ToolCallStarted {
        /// The call's id (the provider's, or synthesised).
        id: CallId,
        /// The tool's name.
        name: String,
    },
    /// The arguments of an announced call grew by another
    /// `TOOL_CALL_PROGRESS_BYTES`: how much of them has arrived.
    ToolCallProgress {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// Bytes of its arguments so far.
        bytes: usize,
    },
    /// A call written as text without a marker of its own (a fenced
    /// block) is being read: it is held until its block ends, as it may
    /// turn out to quote a call the model was shown and be prose (ADR
    /// 0027), so it is not announced yet. Its tool and the bytes of its
    /// arguments so far, for the status bar alone.
    ToolCallHeld {
        /// The tool it names.
        name: String,
        /// Bytes of its arguments so far.
        bytes: usize,
    },
    /// The server is still reading the prompt (llama.cpp, asked with
    /// `return_progress`).
    PromptProgress(PromptProgress),
    /// The reply wrote the same call `times` times, so it was taken to be
    /// looping and stopped there; the `Done` that follows holds each of
    /// its calls once.
    Looping {
        /// The tool the call was for.
        name: String,
        /// How many times it was written.
        times: u32,
    },
    /// The reply is complete (`[DONE]`, or a finish_reason and the end of
    /// the body), with the tool calls it asked for, in order.
    Done {
        /// The assembled calls; empty for a plain reply.
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The episode failed; nothing follows.
    Failed(TransportError),
}
