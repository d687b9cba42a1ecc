//! The pure state transition: a message in, the state changed, and the
//! effects the UI loop must carry out. Keys go to `ui::mode`, which binds
//! them (ADR 0003); what they and the agent's events set off is here.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use crate::commands::{INIT_PROMPT, template};
use crate::protocol::{
    AgentEvent, ConfirmRequest, CustomCommand, Decision, LogItem, PROMPT_MAX_BYTES, Phase,
    SessionSummary, Severity, UiCommand, Usage,
};

use super::editor::Editor;
use super::markdown;
use super::mode::{self, Confirmation};
use super::notify;
use super::picker::Picker;
use super::slash::{self, CustomCommands, Input, McpAction, Slash};
use super::state::{ContextUse, Hint, Progress, SPINNER, State, TurnClock};
use super::transcript::EntryKind;

/// The largest text put on the clipboard; terminals drop larger OSC 52
/// payloads silently, so the person is told instead.
pub const COPY_MAX_BYTES: usize = 1024 * 1024;
/// Lines one wheel notch scrolls.
const WHEEL_LINES: usize = 3;
/// The most characters of a call's name the status bar shows while the
/// call is being written.
pub const WRITING_NAME_MAX_CHARS: usize = 48;

/// What the UI loop feeds into [`update`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// Bracketed paste: text that is inserted, never submitted.
    Paste(String),
    /// A mouse event (only the wheel is used).
    Mouse(MouseEvent),
    /// The terminal's new size.
    Resize(u16, u16),
    /// A message from the agent.
    Agent(AgentEvent),
    /// The agent's channel closed.
    AgentGone,
    /// The terminal gained (`true`) or lost focus (focus reporting).
    Focus(bool),
    /// The spinner tick, and when it fired: it also runs the turn's clock.
    Tick(Instant),
    /// A command the UI could not hand to the agent, and why.
    Undelivered(UiCommand, SendFailure),
}

/// Why a command did not reach the agent (the UI never waits for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendFailure {
    /// Its queue is full: it has not been reading for a while.
    Full,
    /// Its channel is closed: it has stopped.
    Closed,
}

/// What the loop must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send this to the agent.
    Send(UiCommand),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Write these bytes to the terminal to draw the person back: the
    /// bell or a desktop notification (ADR 0056).
    Notify(String),
    /// Clear and redraw the whole screen.
    Redraw,
    /// Give the terminal to the shell and stop until continued (Ctrl+Z).
    Suspend,
    /// End the UI loop: the terminal is restored and the transcript printed.
    Quit,
}

/// The result of one update.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the screen must be redrawn.
    pub changed: bool,
    /// Effects to carry out, in order.
    pub effects: Vec<Effect>,
}

impl Outcome {
    /// The screen must be redrawn; nothing else to do.
    pub(super) fn changed() -> Self {
        Self {
            changed: true,
            effects: Vec::new(),
        }
    }

    /// The screen must be redrawn, and `effects` carried out.
    pub(super) fn with(effects: Vec<Effect>) -> Self {
        Self {
            changed: true,
            effects,
        }
    }
}

/// Applies one message to the state.
pub fn update(state: &mut State, msg: Msg) -> Outcome {
    // The `@` popup opens for a word being typed, not for one the cursor
    // or a recalled prompt lands on, nor while a call waits (its words
    // are not looked up: ADR 0038).
    let typing = state.mode.lets_popups_open() && types_in_place(&msg);
    let out = apply(state, msg);
    state.completion.follow(state.editor.text());
    state
        .mention
        .follow(state.editor.text(), state.editor.cursor(), typing);
    if !state.mode.lets_popups_open() {
        // A popup would cover the preview's last rows, which would still
        // count as seen; and its keys are the confirmation's now.
        state.completion.close();
        state.mention.close();
    }
    out
}

/// Whether `msg` types, deletes or completes at the cursor: a character,
/// Backspace, Delete, Tab or Enter (which complete in a popup), with no
/// modifier but Shift.
fn types_in_place(msg: &Msg) -> bool {
    let Msg::Key(key) = msg else {
        return false;
    };
    key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
        && matches!(
            key.code,
            KeyCode::Char(_) | KeyCode::Backspace | KeyCode::Delete | KeyCode::Tab | KeyCode::Enter
        )
}

fn apply(state: &mut State, msg: Msg) -> Outcome {
    match msg {
        Msg::Key(key) if key.kind == KeyEventKind::Release => Outcome::default(),
        Msg::Key(key) => {
            let had_hint = state.hint.take().is_some();
            let mut out = mode::on_key(state, key);
            out.changed |= had_hint;
            out
        }
        Msg::Paste(text) => {
            insert(state, |editor| editor.insert_str(&text));
            Outcome::changed()
        }
        Msg::Mouse(mouse) => on_mouse(state, mouse),
        Msg::Resize(w, h) => {
            state.size = (w, h);
            Outcome::changed()
        }
        Msg::Agent(event) => {
            let alert = notify::alert(&event).filter(|_| !state.focused);
            on_agent(state, event);
            match alert.and_then(|what| state.notify.sequence(what)) {
                Some(bytes) => Outcome::with(vec![Effect::Notify(bytes)]),
                None => Outcome::changed(),
            }
        }
        Msg::Focus(focused) => {
            state.focused = focused;
            Outcome::default()
        }
        Msg::AgentGone => {
            if !state.agent_gone {
                state.agent_gone = true;
                state
                    .transcript
                    .end_reply(crate::protocol::ReplyEnd::Failed);
                state.transcript.push(
                    EntryKind::System(Severity::Error),
                    "the agent stopped unexpectedly; the transcript is kept but prompts can no longer be answered — restart dashfloat".to_string(),
                );
            }
            // Nothing can answer a call now: the question goes, so keys
            // stop trying to.
            state.mode.forget_call();
            state.phase = Phase::Idle;
            Outcome::changed()
        }
        Msg::Tick(now) => {
            if state.phase.is_active() {
                state.spinner = (state.spinner + 1) % SPINNER.len();
                state.turn_clock.tick(now, state.phase != Phase::Confirming);
                Outcome::changed()
            } else {
                Outcome::default()
            }
        }
        Msg::Undelivered(command, why) => {
            undelivered(state, command, why);
            Outcome::changed()
        }
    }
}

/// Types or pastes into the input box through `put`; what would grow the
/// prompt past [`PROMPT_MAX_BYTES`] is left out, and the help line says so.
pub(super) fn insert(state: &mut State, put: impl FnOnce(&mut Editor) -> bool) {
    if !put(&mut state.editor) {
        past_the_bound(state, "that was not inserted");
    }
}

/// Says on the help line that [`PROMPT_MAX_BYTES`] kept something from
/// happening (`what`).
fn past_the_bound(state: &mut State, what: &str) {
    state.hint = Some(Hint::new(format!(
        "a prompt holds at most {} MiB; {what}",
        PROMPT_MAX_BYTES >> 20
    )));
}

/// Tells the person a command went nowhere. An undelivered prompt goes
/// back into the input, and no turn runs; an answer to a confirmation
/// that the agent had no room for puts the confirmation back, to be
/// answered again, and words sent instead of one back into the input.
fn undelivered(state: &mut State, command: UiCommand, why: SendFailure) {
    match command {
        UiCommand::Prompt { text } | UiCommand::ProjectPrompt { text } => {
            state.editor.set(&text);
            state.phase = Phase::Idle;
        }
        UiCommand::Compact { .. } => state.phase = Phase::Idle,
        UiCommand::ListSessions { .. } => state.pick_sessions = false,
        UiCommand::Decide { id, decision } => answer_undelivered(state, &id, decision, why),
        _ => {}
    }
    let text = match why {
        SendFailure::Full => "the agent is not keeping up; that key was dropped — try again",
        SendFailure::Closed => "the agent has stopped; restart dashfloat",
    };
    state
        .transcript
        .push(EntryKind::System(Severity::Error), text.to_string());
}

/// An answer that did not reach the agent. If it answered the call last
/// asked, the question comes back when the agent's queue was full (it is
/// still there to take the answer again), and words sent instead of an
/// answer go back into the input, not to be lost.
fn answer_undelivered(state: &mut State, id: &str, decision: Decision, why: SendFailure) {
    if !state.mode.take_back(id, why) {
        return;
    }
    if why == SendFailure::Full {
        state.phase = Phase::Confirming;
    }
    if let Decision::Redirect(words) = decision {
        state.editor.choose(&words);
    }
}

/// What the agent said, shown: the turn's progress, the log's entries,
/// a question about a call, the session's facts and lists.
fn on_agent(state: &mut State, event: AgentEvent) {
    match event {
        AgentEvent::Phase(phase) => new_phase(state, phase),
        AgentEvent::ToolCallWriting { name, bytes } => {
            // A tool name is short; whatever the model streamed as one is
            // shown no longer than this.
            let name = name.chars().take(WRITING_NAME_MAX_CHARS).collect();
            state.progress = Progress::Writing { name, bytes };
        }
        AgentEvent::ReadingPrompt(progress) => state.progress.reading(progress),
        AgentEvent::AssistantDelta(text) => {
            // Text of the reply: no call is being written now (a held
            // text call that turned out to be prose is shown as such).
            state.progress = Progress::Streaming;
            state.transcript.append_reply(&text);
        }
        AgentEvent::ReasoningDelta(text) => {
            state.progress.streaming();
            state.transcript.append_reasoning(&text);
        }
        AgentEvent::AssistantEnd(end) => state.transcript.end_reply(end),
        AgentEvent::Usage(usage) => state.context = ContextUse::Reported(usage),
        AgentEvent::Totals(totals) => state.totals = totals,
        AgentEvent::Compacted { estimate } => state.context = ContextUse::Estimated(estimate),
        AgentEvent::SessionFacts {
            model,
            context_window,
        } => state.learn_session_facts(model, context_window),
        AgentEvent::ProjectFiles(files) => state.mention.set_files(files),
        AgentEvent::CustomCommands { found, problems } => {
            for problem in problems
                .iter()
                .filter(|p| !state.command_problems.contains(p))
            {
                state.transcript.push(
                    EntryKind::System(Severity::Notice),
                    format!("custom command {problem}"),
                );
            }
            state.command_problems = problems;
            state.commands = CustomCommands::new(found);
        }
        AgentEvent::ToolCall { id, name, summary } => {
            state.transcript.push(
                EntryKind::Tool {
                    id,
                    name,
                    outcome: None,
                },
                summary,
            );
        }
        AgentEvent::ToolAllowed { id, summary } => state.transcript.set_tool_summary(&id, summary),
        AgentEvent::ToolOutput { id, tail } => state.transcript.set_tool_live(&id, tail),
        AgentEvent::Confirm(request) => ask(state, request),
        AgentEvent::ToolResult {
            id,
            status,
            excerpt,
        } => {
            state.mode.settle(&id);
            state.transcript.set_tool_outcome(&id, status, excerpt);
        }
        AgentEvent::System { severity, text } => {
            state.transcript.push(EntryKind::System(severity), text);
        }
        AgentEvent::SessionOpened { log } => session_opened(state, log),
        AgentEvent::Sessions { list, now } => sessions(state, list, now),
        AgentEvent::ApprovalChanged(mode) => state.session.approval = mode,
        AgentEvent::Prompts { list } => prompts(state, list),
        AgentEvent::McpServers(servers) => {
            let text = super::mcp::listing(&servers);
            state
                .transcript
                .push(EntryKind::System(Severity::Notice), text);
        }
        AgentEvent::Rewound { text } => state.editor.set(&text),
        // The screen does not show it; `/sessions` lists the ids.
        AgentEvent::SessionId(_) => {}
        AgentEvent::TurnDone => {
            state.phase = Phase::Idle;
            turn_over(state);
            state.mode.forget_call();
        }
    }
}

/// The agent's phase changed: what came back of the request before is
/// out of date, and a phase that is not active ends the turn.
fn new_phase(state: &mut State, phase: Phase) {
    state.phase = phase;
    state.progress = Progress::Waiting;
    if !phase.is_active() {
        turn_over(state);
        state.turn_clock = TurnClock::default();
    }
}

/// The agent asks about a call: its preview goes into the log, and the
/// keys are the question's.
fn ask(state: &mut State, request: ConfirmRequest) {
    let preview = EntryKind::Preview {
        id: request.id.clone(),
        preview: request.preview,
        outcome: None,
    };
    let entry = state.transcript.push(preview, String::new());
    let confirmation = Confirmation::new(request.id, request.position, request.of, entry)
        .offering(request.remember);
    state.mode.ask(confirmation);
    state.phase = Phase::Confirming;
}

/// Another session opened (resumed, rewound, cleared): its log replaces
/// the one shown, and nothing of the old one is asked or counted.
fn session_opened(state: &mut State, log: Vec<LogItem>) {
    state.transcript.replace_with(log);
    state.context = ContextUse::Unknown;
    state.totals = Usage::default();
    state.mode.forget_call();
}

/// The saved sessions, listed: in the picker when `/resume` asked for it
/// (and there is one to choose), else in the log.
fn sessions(state: &mut State, list: Vec<SessionSummary>, now: u64) {
    if std::mem::take(&mut state.pick_sessions) && !list.is_empty() {
        let picker = Picker::sessions(list, now);
        if !state.mode.pick(picker) {
            picker_refused(state);
        }
    } else {
        state.show_sessions(list);
    }
}

/// The conversation's prompts, for the rewind picker.
fn prompts(state: &mut State, list: Vec<String>) {
    if list.is_empty() {
        state.transcript.push(
            EntryKind::System(Severity::Notice),
            "no prompt to rewind to yet".to_string(),
        );
    } else if !state.mode.pick(Picker::prompts(list)) {
        picker_refused(state);
    }
}

/// Says why a list asked for did not open the picker: a call waits for an
/// answer, and the picker would cover its preview.
fn picker_refused(state: &mut State) {
    state.transcript.push(
        EntryKind::System(Severity::Notice),
        "a call waits for your answer, so the list is not shown; ask for it again once it is answered"
            .to_string(),
    );
}

fn on_mouse(state: &mut State, mouse: MouseEvent) -> Outcome {
    match mouse.kind {
        MouseEventKind::ScrollUp => state.transcript.scroll_up(WHEEL_LINES),
        MouseEventKind::ScrollDown => state.transcript.scroll_down(WHEEL_LINES),
        // Motion and clicks arrive in floods with mouse capture on; they
        // change nothing, so they must not cost a frame.
        _ => return Outcome::default(),
    }
    Outcome::changed()
}

/// The turn stopped: Ctrl+C is no longer armed to quit after a cancel,
/// and a hint about stopping the turn is out of date.
fn turn_over(state: &mut State) {
    state.quit_armed = false;
    if state.hint.as_ref().is_some_and(|h| h.ends_with_turn) {
        state.hint = None;
    }
}

/// Ctrl+C: cancels the turn in flight, the first time; quits otherwise.
pub(super) fn ctrl_c(state: &mut State) -> Outcome {
    if state.phase.is_active() && !state.quit_armed {
        state.quit_armed = true;
        state.hint = Some(Hint::while_stopping(
            "cancelling — press Ctrl+C again to quit",
        ));
        return Outcome::with(vec![Effect::Send(UiCommand::Cancel)]);
    }
    quit(state)
}

/// Quits, cancelling the turn in flight first.
pub(super) fn quit(state: &mut State) -> Outcome {
    let mut effects = Vec::new();
    if state.phase.is_active() {
        effects.push(Effect::Send(UiCommand::Cancel));
    }
    effects.push(Effect::Send(UiCommand::Quit));
    effects.push(Effect::Quit);
    Outcome::with(effects)
}

/// Enter: sends the prompt, or runs the command typed (the popup's
/// selected one while it is open). A command that asks the agent for
/// something waits until it is idle, its text kept in the box; one that
/// cannot be read is an error entry and never reaches the model.
pub(super) fn submit(state: &mut State) -> Outcome {
    if let Some(command) = state.completion.selected(&state.commands) {
        state.editor.choose(&format!("/{}", command.name()));
    }
    if state.editor.text().trim().is_empty() {
        return Outcome::default();
    }
    match slash::parse(state.editor.text(), &state.commands) {
        Ok(Input::Prompt(text)) if state.mode.confirmation().is_some() => redirect(state, text),
        Ok(Input::Prompt(text)) => send_prompt(state, text),
        Ok(Input::Command(command)) => run_command(state, command),
        Ok(Input::Custom { command, arguments }) => run_custom(state, &command, &arguments),
        Err(why) => {
            take_into_history(state);
            state
                .transcript
                .push(EntryKind::System(Severity::Error), why.to_string());
            state.transcript.follow();
            Outcome::changed()
        }
    }
}

/// The words written while a call waits for its answer, sent instead of
/// one: the call is not run and the model reads them. They go into the
/// log and the history as a prompt does.
fn redirect(state: &mut State, text: String) -> Outcome {
    match take_prompt(state, text) {
        Some(text) => answer(state, Decision::Redirect(text)),
        None => Outcome::changed(),
    }
}

/// Sends the answer to the confirmation shown, which is then answered.
pub(super) fn answer(state: &mut State, decision: Decision) -> Outcome {
    let Some(id) = state.mode.answer() else {
        return Outcome::default();
    };
    state.phase = Phase::Executing;
    Outcome::with(vec![Effect::Send(UiCommand::Decide { id, decision })])
}

/// Whether the agent can take a turn now; if not, the help line says why
/// and the input stays.
fn agent_ready(state: &mut State) -> bool {
    let why = if state.phase.is_active() {
        "the agent is busy — Esc interrupts it; your text stays here"
    } else if state.agent_gone {
        "the agent has stopped; restart dashfloat"
    } else {
        return true;
    };
    state.hint = Some(Hint::new(why));
    false
}

/// Empties the input into the prompt history.
fn take_into_history(state: &mut State) {
    let typed = state.editor.take();
    state.history.push(typed);
    state.history.reset_position();
}

/// The person's words, sent: into the history and the log. `None`, with
/// the help line saying why and the words left in the input, when they
/// are past the prompt's bound (text put back whole, a rewound prompt or
/// one from the history, can be).
fn take_prompt(state: &mut State, text: String) -> Option<String> {
    if text.len() as u64 > PROMPT_MAX_BYTES {
        past_the_bound(state, "shorten this one to send it");
        return None;
    }
    take_into_history(state);
    state.transcript.push(EntryKind::User, text.clone());
    state.transcript.follow();
    Some(text)
}

fn send_prompt(state: &mut State, text: String) -> Outcome {
    send_words(state, text, |text| UiCommand::Prompt { text })
}

/// Sends `text` as the prompt `command` makes of it, once the agent is
/// idle: into the history and the log first.
fn send_words(state: &mut State, text: String, command: fn(String) -> UiCommand) -> Outcome {
    if !agent_ready(state) {
        return Outcome::changed();
    }
    let Some(text) = take_prompt(state, text) else {
        return Outcome::changed();
    };
    state.phase = Phase::Streaming;
    Outcome::with(vec![Effect::Send(command(text))])
}

/// Runs a slash command: shown here, or asked of the agent once it is
/// idle.
pub(super) fn run_command(state: &mut State, command: Slash) -> Outcome {
    if command.needs_idle() && !agent_ready(state) {
        return Outcome::changed();
    }
    take_into_history(state);
    let send = |command| Outcome::with(vec![Effect::Send(command)]);
    match command {
        Slash::Help => {
            let text = slash::help_text(&state.commands);
            notice(state, text)
        }
        Slash::Init => send_prompt(state, INIT_PROMPT.to_owned()),
        Slash::Clear => send(UiCommand::Clear),
        Slash::Compact { focus } => {
            state.phase = Phase::Compacting;
            send(UiCommand::Compact { focus })
        }
        Slash::Sessions => {
            state.pick_sessions = false;
            send(UiCommand::ListSessions { all: false })
        }
        Slash::Resume { id: Some(id) } => send(UiCommand::Resume { id }),
        Slash::Resume { id: None } => {
            state.pick_sessions = true;
            send(UiCommand::ListSessions { all: false })
        }
        Slash::Model { name: Some(name) } => send(UiCommand::SetModel { name }),
        Slash::Model { name: None } => {
            let text = format!(
                "model: {} — /model NAME uses another from the next request on",
                state.session.model
            );
            notice(state, text)
        }
        Slash::Status => {
            let text = state.status_text();
            notice(state, text)
        }
        Slash::Approval {
            policy: Some(policy),
        } => send(UiCommand::SetApproval(policy)),
        Slash::Approval { policy: None } => {
            let mode = &state.session.approval;
            let text = format!(
                "approval: {} (commands it runs: sandbox {}) — /approval {} changes it",
                mode.policy.name(),
                mode.sandbox,
                slash::policy_choices()
            );
            notice(state, text)
        }
        Slash::Permissions { remove: None } => send(UiCommand::ListPermissions),
        Slash::Permissions { remove: Some(rule) } => send(UiCommand::ForgetPermission { rule }),
        Slash::Mcp(McpAction::List) => send(UiCommand::ListMcp),
        Slash::Mcp(McpAction::Restart(name)) => send(UiCommand::RestartMcp { name }),
        Slash::Mcp(McpAction::Trust) => send(UiCommand::TrustMcp),
        Slash::Hooks { trust: false } => send(UiCommand::ListHooks),
        Slash::Hooks { trust: true } => send(UiCommand::TrustHooks),
        Slash::Copy { block } => copy_reply(state, block.map(|n| n - 1)),
        Slash::Undo => send(UiCommand::Undo),
        Slash::Redo => send(UiCommand::Redo),
        Slash::Rewind => send(UiCommand::ListPrompts),
        Slash::Quit => quit(state),
    }
}

/// Sends the prompt a custom command makes of `arguments`, as if typed
/// (a project's as the project's words: ADR 0055); what of its file is
/// not done is said first.
fn run_custom(state: &mut State, command: &CustomCommand, arguments: &str) -> Outcome {
    if !agent_ready(state) {
        return Outcome::changed();
    }
    let Some(prompt) = template::expand(&command.template, arguments, PROMPT_MAX_BYTES as usize)
    else {
        past_the_bound(state, "this command's prompt would pass it");
        return Outcome::changed();
    };
    if let Some(text) = template::ignored_notice(command) {
        state
            .transcript
            .push(EntryKind::System(Severity::Notice), text);
    }
    send_words(state, prompt, template::sent_as(command.scope))
}

fn notice(state: &mut State, text: String) -> Outcome {
    state
        .transcript
        .push(EntryKind::System(Severity::Notice), text);
    state.transcript.follow();
    Outcome::changed()
}

/// Puts the last reply, or its code block `block` (0-based), on the
/// clipboard; the help line says what was copied, or why not.
pub(super) fn copy_reply(state: &mut State, block: Option<usize>) -> Outcome {
    let Some(reply) = state.transcript.last_reply() else {
        state.hint = Some(Hint::new("no reply to copy yet"));
        return Outcome::changed();
    };
    let (text, what) = match block {
        None => (reply.to_string(), "the last reply".to_string()),
        Some(i) => match markdown::code_blocks(reply).into_iter().nth(i) {
            Some(code) => (code, format!("code block [{}]", i + 1)),
            None => {
                state.hint = Some(Hint::new(format!(
                    "the last reply has no code block [{}]",
                    i + 1
                )));
                return Outcome::changed();
            }
        },
    };
    if text.len() > COPY_MAX_BYTES {
        state.hint = Some(Hint::new(format!(
            "not copied: {what} is {} bytes, more than terminals accept over OSC 52 — select it with Shift-drag",
            text.len()
        )));
        return Outcome::changed();
    }
    state.hint = Some(Hint::new(format!("copied {what} to the clipboard")));
    Outcome::with(vec![Effect::Copy(text)])
}
