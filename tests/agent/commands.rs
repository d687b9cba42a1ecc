//! The commands that change the session between turns: `/model` and
//! `/approval` (ADR 0023). The next request asks for the new model; the
//! next round asks (or not) by the new policy.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, ApprovalMode, UiCommand};
use serde_json::json;

use crate::support;
use support::agent::{AgentHarness, start_in_temp, system_texts};
use support::server::{Reply, ScriptedServer};

/// Changes the policy and waits for the agent to confirm it.
async fn set_approval(h: &mut AgentHarness, policy: ApprovalPolicy) -> Vec<AgentEvent> {
    h.send(UiCommand::SetApproval(policy)).await;
    h.until(|e| matches!(e, AgentEvent::ApprovalChanged(_)))
        .await
}

/// Whether a turn stopped for a confirmation.
fn asked(events: &[AgentEvent]) -> bool {
    events.iter().any(|e| matches!(e, AgentEvent::Confirm(_)))
}

/// A turn that calls `name` with `args`, then answers "done".
fn call_then_done(server: &ScriptedServer, name: &str, args: serde_json::Value) {
    server.push_reply(Reply::tool_call("c", name, &[&args.to_string()]));
    server.push_reply(Reply::text(&["done"]));
}

#[tokio::test]
async fn set_model_changes_the_model_of_the_next_request_and_says_so() {
    let server = ScriptedServer::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("first").await;
    h.turn().await;
    h.send(UiCommand::SetModel {
        name: "other-model".into(),
    })
    .await;
    let events = h
        .until(|e| matches!(e, AgentEvent::SessionFacts { .. }))
        .await;
    assert_eq!(
        events.last(),
        Some(&AgentEvent::SessionFacts {
            model: Some("other-model".into()),
            context_window: None,
        })
    );
    assert_eq!(
        system_texts(&events),
        vec!["the model is now `other-model`, from the next request on"]
    );
    h.prompt("second").await;
    h.turn().await;
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "test-model");
    assert_eq!(requests[1].body["model"], "other-model");
}

#[tokio::test]
async fn set_approval_changes_which_calls_ask_from_the_next_round_on() {
    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let dir = h.dir.as_ref().unwrap().path().to_path_buf();

    let events = set_approval(&mut h, ApprovalPolicy::AutoEdit).await;
    assert_eq!(
        events.last(),
        Some(&AgentEvent::ApprovalChanged(ApprovalMode {
            policy: ApprovalPolicy::AutoEdit,
            sandbox: "off".into(),
        }))
    );
    assert_eq!(
        system_texts(&events),
        vec!["approval policy: auto-edit (commands it runs: sandbox off)"]
    );
    call_then_done(
        &server,
        "write_file",
        json!({"path": "a.txt", "content": "auto\n"}),
    );
    h.prompt("write a.txt").await;
    let events = h.turn().await;
    assert!(!asked(&events), "auto-edit asked for a write: {events:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "auto\n"
    );
    // Auto-edit still asks before a command.
    call_then_done(&server, "execute_command", json!({"command": "true"}));
    h.prompt("run true").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, dashfloat::protocol::Decision::Reject).await;
    h.turn().await;

    set_approval(&mut h, ApprovalPolicy::DangerouslyApproveAll).await;
    call_then_done(
        &server,
        "execute_command",
        json!({"command": "echo ran > ran.txt"}),
    );
    h.prompt("run it").await;
    let events = h.turn().await;
    assert!(!asked(&events), "approve-all asked: {events:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("ran.txt")).unwrap(),
        "ran\n"
    );

    set_approval(&mut h, ApprovalPolicy::Ask).await;
    call_then_done(
        &server,
        "write_file",
        json!({"path": "b.txt", "content": "asked\n"}),
    );
    h.prompt("write b.txt").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, dashfloat::protocol::Decision::Reject).await;
    h.turn().await;
    assert!(!dir.join("b.txt").exists());
}
