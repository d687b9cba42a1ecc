//! The screen without a terminal: the pure update, the editor, the
//! markdown renderer, the wrapping engine, the session picker, snapshots
//! drawn on ratatui's `TestBackend`, and control bytes kept off the
//! terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod bounds;
mod control_bytes;
mod custom;
mod editor;
mod markdown;
mod mention;
mod notify;
mod panics;
mod picker;
mod remember;
mod rewind;
mod screens;
mod slash;
mod update;
mod walls;
mod wrap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dashfloat::protocol::{
    AgentEvent, ApprovalMode, ApprovalPolicy, ConfirmRequest, Phase, PreviewKind, PreviewLine,
    ToolStatus,
};
use dashfloat::ui::state::{SessionInfo, State};
use dashfloat::ui::theme::Theme;
use dashfloat::ui::update::{Effect, Msg, update};
use dashfloat::ui::view::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The session the status bar shows in every test.
fn session() -> SessionInfo {
    SessionInfo {
        model: "qwen2.5-coder-0.5b".into(),
        host: "127.0.0.1:8088".into(),
        cwd: "~/src/project".into(),
        context_window: 8192,
        approval: mode(ApprovalPolicy::Ask, "off"),
        prices: Default::default(),
    }
}

/// A policy and the sandbox its commands run in, as the agent reports it.
fn mode(policy: ApprovalPolicy, sandbox: &str) -> ApprovalMode {
    ApprovalMode {
        policy,
        sandbox: sandbox.into(),
    }
}

/// A fresh monochrome state of `width`×`height` (`NO_COLOR`: the snapshots
/// are text).
fn state(width: u16, height: u16) -> State {
    State::new(session(), Theme::new(true), (width, height))
}

/// Hands the state an event from the agent.
fn agent(s: &mut State, event: AgentEvent) {
    update(s, Msg::Agent(event));
}

/// Presses `code` without modifiers; the effects it asks for.
fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    update(s, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))).effects
}

/// Types `text` key by key.
fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c));
    }
}

/// Prepares and draws the state on a `TestBackend` of its size.
fn render(s: &mut State) -> Terminal<TestBackend> {
    let (w, h) = s.size();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    s.prepare();
    terminal.draw(|f| view(s, f)).unwrap();
    terminal
}

/// The screen as text, one quoted row per line.
fn draw(s: &mut State) -> String {
    render(s).backend().to_string()
}

/// The agent announces a call.
fn tool_call(s: &mut State, id: &str, name: &str, summary: &str) {
    agent(
        s,
        AgentEvent::ToolCall {
            id: id.into(),
            name: name.into(),
            summary: summary.into(),
        },
    );
}

/// The agent reports a call's outcome.
fn tool_result(s: &mut State, id: &str, status: ToolStatus, excerpt: &str) {
    agent(
        s,
        AgentEvent::ToolResult {
            id: id.into(),
            status,
            excerpt: excerpt.into(),
        },
    );
}

/// One line of a preview.
fn preview_line(kind: PreviewKind, text: &str) -> PreviewLine {
    PreviewLine {
        kind,
        text: text.into(),
    }
}

/// Asks to confirm call `id`, the only one of its reply, on `preview`.
fn confirm(s: &mut State, id: &str, preview: Vec<PreviewLine>) {
    agent(
        s,
        AgentEvent::Confirm(ConfirmRequest {
            id: id.into(),
            preview,
            position: 1,
            of: 1,
            remember: None,
        }),
    );
}

/// Asks to confirm a command of `commands` lines, the call `x`: harmless
/// ones and the last, `echo EVIL > marker` (past the first screen when
/// there are 61).
fn confirm_command(s: &mut State, commands: usize) {
    let mut preview = vec![preview_line(PreviewKind::Header, "run in .:")];
    preview.extend(
        (1..commands).map(|i| preview_line(PreviewKind::Added, &format!("$ echo harmless {i}"))),
    );
    preview.push(preview_line(PreviewKind::Added, "$ echo EVIL > marker"));
    tool_call(s, "x", "execute_command", "echo harmless 1 …");
    confirm(s, "x", preview);
    agent(s, AgentEvent::Phase(Phase::Confirming));
}
