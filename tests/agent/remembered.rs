//! Approvals that are remembered (ADR 0044), through the agent: `a`
//! remembers a command's rule for the project, in the config directory
//! and not in the project; a line of that rule then runs unasked in the
//! workspace-write sandbox, its row saying so; another subcommand, a
//! piped line or a way out of the sandbox still asks; `/permissions`
//! lists the rules and forgets one; a rules file that cannot be written
//! is an error entry and the rule holds for the session.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, Severity, UiCommand};
use serde_json::json;

use crate::auto::{command_call, confirms, result_of, sandboxed_setup, small_crate};
use crate::support;
use support::agent::{AgentHarness, remembered, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// Runs one turn calling `args`: the confirmation it asked, if any, is
/// answered `answer`; the turn's events.
async fn turn(
    h: &mut AgentHarness,
    server: &ScriptedServer,
    id: &str,
    args: serde_json::Value,
    answer: Decision,
) -> Vec<AgentEvent> {
    server.push_reply(command_call(id, args));
    server.push_reply(Reply::text(&["done"]));
    h.prompt("go on").await;
    let mut events = h
        .until(|e| matches!(e, AgentEvent::Confirm(_) | AgentEvent::TurnDone))
        .await;
    if let Some(AgentEvent::Confirm(request)) = events.last() {
        h.decide(&request.id.clone(), answer).await;
        events.extend(h.turn().await);
    }
    events
}

/// The summaries rows were given when their command ran unasked.
fn allowed(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolAllowed { summary, .. } => Some(summary.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_command_runs_unasked_in_the_sandbox_until_it_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    small_crate(dir.path());
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = sandboxed_setup(&server, dir.path(), ApprovalPolicy::Ask);
    s.approval.remembered = remembered(config.path(), &s.tools.root);
    let mut h = start_with(s);

    // Asked, with `a` offering the program and subcommand only.
    let events = turn(
        &mut h,
        &server,
        "c1",
        json!({"command": "cargo test --quiet"}),
        Decision::Remember,
    )
    .await;
    let asked = confirms(&events);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].remember.as_deref(), Some("cargo test"));
    let offer = asked[0].preview.last().unwrap();
    assert!(
        offer.text.contains("a: always allow `cargo test`"),
        "{offer:?}"
    );
    let said = system_texts(&events).join("\n");
    assert!(
        said.contains("remembered `cargo test` for this project"),
        "{said}"
    );
    assert_eq!(result_of(&server, "c1")["exit_code"], 0);
    // Kept in the config directory, never in the project.
    let kept = std::fs::read_dir(config.path().join("permissions"))
        .unwrap()
        .count();
    assert_eq!(kept, 1);
    assert!(!std::fs::read_dir(dir.path()).unwrap().any(|e| {
        let name = e.unwrap().file_name();
        name.to_string_lossy().contains("permission")
    }));

    // Another line of the rule runs unasked, in the sandbox.
    let events = turn(
        &mut h,
        &server,
        "c2",
        json!({"command": "cargo test --release"}),
        Decision::Reject,
    )
    .await;
    assert!(confirms(&events).is_empty(), "{events:#?}");
    assert_eq!(
        allowed(&events),
        ["cargo test --release · remembered (cargo test), sandbox workspace-write"]
    );
    assert_eq!(result_of(&server, "c2")["exit_code"], 0);
    // Writing outside the project from a remembered line is refused.
    let events = turn(
        &mut h,
        &server,
        "c3",
        json!({"command": "cargo test --target-dir /tmp"}),
        Decision::Reject,
    )
    .await;
    assert!(confirms(&events).is_empty(), "{events:#?}");
    let refused = result_of(&server, "c3");
    assert_ne!(refused["exit_code"], 0, "{refused:#}");
    assert!(refused["sandbox"].as_str().is_some(), "{refused:#}");

    // Another subcommand, a piped line and a way out still ask.
    for (id, args, remember) in [
        ("c4", json!({"command": "cargo build"}), Some("cargo build")),
        ("c5", json!({"command": "cargo test | tee log"}), None),
        (
            "c6",
            json!({"command": "cargo test", "sandbox": "off", "reason": "it needs the network"}),
            None,
        ),
    ] {
        let events = turn(&mut h, &server, id, args.clone(), Decision::Reject).await;
        let asked = confirms(&events);
        assert_eq!(asked.len(), 1, "{args}");
        assert_eq!(asked[0].remember.as_deref(), remember, "{args}");
    }

    // Listed, then forgotten by its number: it asks again.
    h.send(UiCommand::ListPermissions).await;
    let events = h.until(|e| matches!(e, AgentEvent::System { .. })).await;
    let listed = system_texts(&events).join("\n");
    assert!(listed.contains("1. cargo test"), "{listed}");
    h.send(UiCommand::ForgetPermission { rule: "1".into() })
        .await;
    let events = h.until(|e| matches!(e, AgentEvent::System { .. })).await;
    let said = system_texts(&events).join("\n");
    assert!(said.contains("forgot `cargo test`"), "{said}");
    let events = turn(
        &mut h,
        &server,
        "c7",
        json!({"command": "cargo test"}),
        Decision::Reject,
    )
    .await;
    assert_eq!(confirms(&events).len(), 1);
    let text = std::fs::read_to_string(
        std::fs::read_dir(config.path().join("permissions"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    assert!(!text.contains("cargo test"), "{text}");
    // A rule that is not there is an error entry.
    h.send(UiCommand::ForgetPermission {
        rule: "make".into(),
    })
    .await;
    let events = h.until(|e| matches!(e, AgentEvent::System { .. })).await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::System {
            severity: Severity::Error,
            ..
        }
    )));
}

/// A rules file that cannot be written: the rule still holds for this
/// session, and an error entry says it was not kept.
#[tokio::test]
async fn a_rule_that_cannot_be_kept_holds_for_the_session_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    // A file where the rules directory should be.
    std::fs::write(config.path().join("permissions"), "").unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = sandboxed_setup(&server, dir.path(), ApprovalPolicy::Ask);
    let store = dashfloat::permissions::Store::new(config.path(), &s.tools.root);
    s.approval.remembered = dashfloat::agent::Remembered {
        rules: Vec::new(),
        store: Some(store),
    };
    let mut h = start_with(s);
    let events = turn(
        &mut h,
        &server,
        "m1",
        json!({"command": "make --version"}),
        Decision::Remember,
    )
    .await;
    let errors: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::System {
                severity: Severity::Error,
                text,
            } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert!(errors[0].contains("for this session only"), "{}", errors[0]);
    let events = turn(
        &mut h,
        &server,
        "m2",
        json!({"command": "make -v"}),
        Decision::Reject,
    )
    .await;
    assert!(confirms(&events).is_empty(), "{events:#?}");
}
