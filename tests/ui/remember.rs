//! The confirmation of a command under the sandbox policies (ADR 0044):
//! `a` approves and remembers the rule offered, only when one is, only
//! once the preview has been seen, never while the person is writing;
//! the screens of a confirmation offering `a`, of one asking to leave
//! the sandbox with the model's reason, and of the status bar under
//! `auto`; `/permissions` and its `remove`.

use crossterm::event::KeyCode;
use dashfloat::protocol::{
    AgentEvent, ApprovalPolicy, ConfirmRequest, Decision, Phase, PreviewKind, UiCommand,
};
use dashfloat::ui::state::State;
use dashfloat::ui::update::Effect;

use crate::{agent, draw, mode, press, preview_line, state, tool_call, typed};

/// `cargo test --release` waiting, its confirmation offering to remember
/// `cargo test` when `remember`.
fn cargo_test_waits(s: &mut State, remember: bool) {
    tool_call(s, "x", "execute_command", "cargo test --release");
    let mut preview = vec![
        preview_line(PreviewKind::Header, "run in . (time limit 30 s):"),
        preview_line(PreviewKind::Added, "$ cargo test --release"),
    ];
    if remember {
        preview.push(preview_line(
            PreviewKind::Marker,
            "a: always allow `cargo test` in this project (unasked, in the workspace-write sandbox)",
        ));
    }
    agent(
        s,
        AgentEvent::Confirm(ConfirmRequest {
            id: "x".into(),
            preview,
            position: 1,
            of: 1,
            remember: remember.then(|| "cargo test".into()),
        }),
    );
    agent(s, AgentEvent::Phase(Phase::Confirming));
}

fn answered(effects: &[Effect], decision: Decision) -> bool {
    effects
        == [Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision,
        })]
}

#[test]
fn a_remembers_only_what_is_offered_once_seen_and_never_while_typing() {
    // Not offered: `a` is a letter of the next prompt.
    let mut s = state(80, 24);
    cargo_test_waits(&mut s, false);
    draw(&mut s);
    assert!(press(&mut s, KeyCode::Char('a')).is_empty());
    assert_eq!(s.editor().text(), "a");
    assert!(s.mode().confirmation().is_some());

    // Offered, but before the preview has been drawn: refused.
    let mut s = state(80, 24);
    cargo_test_waits(&mut s, true);
    assert!(press(&mut s, KeyCode::Char('a')).is_empty());
    assert!(s.hint().unwrap().contains("not approved yet"));
    assert!(s.editor().is_empty());
    // While the person writes, a letter.
    draw(&mut s);
    typed(&mut s, "why");
    assert!(press(&mut s, KeyCode::Char('a')).is_empty());
    assert_eq!(s.editor().text(), "whya");
    for _ in 0..4 {
        press(&mut s, KeyCode::Backspace);
    }
    // Seen and not writing: approved and remembered.
    draw(&mut s);
    assert!(answered(
        &press(&mut s, KeyCode::Char('a')),
        Decision::Remember
    ));
    assert!(s.mode().confirmation().is_none());
}

#[test]
fn a_confirmation_offering_to_remember_its_command() {
    let mut s = state(80, 12);
    cargo_test_waits(&mut s, true);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn a_command_asking_to_leave_the_sandbox_shows_its_reason() {
    let mut s = state(80, 12);
    agent(
        &mut s,
        AgentEvent::ApprovalChanged(mode(ApprovalPolicy::Auto, "workspace-write")),
    );
    tool_call(&mut s, "x", "execute_command", "npm install left-pad");
    agent(
        &mut s,
        AgentEvent::Confirm(ConfirmRequest {
            id: "x".into(),
            preview: vec![
                preview_line(
                    PreviewKind::Header,
                    "run in . (time limit 30 s), outside the sandbox:",
                ),
                preview_line(
                    PreviewKind::Marker,
                    "the model asks to run it outside the sandbox: npm must download left-pad from the registry",
                ),
                preview_line(PreviewKind::Added, "$ npm install left-pad"),
            ],
            position: 1,
            of: 1,
            remember: None,
        }),
    );
    agent(&mut s, AgentEvent::Phase(Phase::Confirming));
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn the_status_bar_shows_the_policy_and_the_sandbox_level() {
    let mut s = state(100, 6);
    let mut screens = Vec::new();
    for (policy, sandbox) in [
        (ApprovalPolicy::Ask, "off"),
        (ApprovalPolicy::Ask, "workspace-write"),
        (ApprovalPolicy::AutoEdit, "off"),
        (ApprovalPolicy::Auto, "workspace-write"),
        (ApprovalPolicy::DangerouslyApproveAll, "off"),
    ] {
        agent(&mut s, AgentEvent::ApprovalChanged(mode(policy, sandbox)));
        screens.push(draw(&mut s).lines().next().unwrap_or("").to_owned());
    }
    insta::assert_snapshot!(screens.join("\n"));
}

#[test]
fn permissions_lists_and_remove_forgets_by_number_or_words() {
    let mut s = state(80, 24);
    let run = |s: &mut State, text: &str| {
        typed(s, text);
        press(s, KeyCode::Enter)
    };
    assert_eq!(
        run(&mut s, "/permissions"),
        [Effect::Send(UiCommand::ListPermissions)]
    );
    assert_eq!(
        run(&mut s, "/permissions remove 2"),
        [Effect::Send(UiCommand::ForgetPermission {
            rule: "2".into()
        })]
    );
    assert_eq!(
        run(&mut s, "/permissions remove npm run build"),
        [Effect::Send(UiCommand::ForgetPermission {
            rule: "npm run build".into()
        })]
    );
    for bad in [
        "/permissions cargo test",
        "/permissions remove",
        "/permissions removed x",
    ] {
        assert!(run(&mut s, bad).is_empty(), "{bad}");
        let screen = draw(&mut s);
        assert!(
            screen.contains("/permissions [remove N|RULE]"),
            "{bad}: {screen}"
        );
    }
}
