//! A tool registered at run time, end to end through the scripted server:
//! offered in the request, its calls validated against its own schema (a
//! bad one answered `invalid_argument` and never run), asked about as its
//! effect says, run, cancelled by Esc, and answered back in call order.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, Phase, PreviewKind, ToolStatus, UiCommand};
use dashfloat::tools::Effect;
use serde_json::json;

use crate::support;
use crate::tools::tool_results;
use support::agent::{AgentHarness, setup, start_with};
use support::dynamic::{Echo, Wait};
use support::server::{Reply, ScriptedServer};

/// An agent in a fresh directory whose registry holds the built-ins and
/// `tools`.
fn start_with_tools(
    base_url: &str,
    approval: ApprovalPolicy,
    tools: Vec<std::sync::Arc<dyn dashfloat::tools::DynamicTool>>,
) -> AgentHarness {
    let dir = tempfile::tempdir().unwrap();
    let mut setup = setup(base_url, dir.path(), approval);
    for tool in tools {
        setup.registry.register(tool).unwrap();
    }
    let mut harness = start_with(setup);
    harness.dir = Some(dir);
    harness
}

#[tokio::test]
async fn a_run_time_tool_is_offered_validated_asked_about_and_run() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("e1", "echo", r#"{"text": 5}"#),
            ("e2", "echo", r#"{"times": 2, "text": "hi"}"#),
        ]),
        Reply::text(&["It said hi hi."]),
    ])
    .await;
    let mut h = start_with_tools(
        &server.base_url(),
        ApprovalPolicy::Ask,
        vec![Echo::named("echo", Effect::RunsCommands)],
    );
    h.prompt("say hi twice").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "e2", "the bad call is never put to the person");
    assert!(events.contains(&AgentEvent::ToolCall {
        id: "e2".into(),
        name: "echo".into(),
        summary: r#"{"times":2,"text":"hi"}"#.into(),
    }));
    let Some(AgentEvent::Confirm(request)) = events.last() else {
        unreachable!()
    };
    assert_eq!((request.position, request.of), (1, 1));
    assert_eq!(request.preview[0].kind, PreviewKind::Header);
    assert_eq!(request.preview[0].text, "call echo with:");
    assert!(
        request
            .preview
            .iter()
            .any(|l| l.kind == PreviewKind::Added && l.text == "  \"text\": \"hi\"")
    );
    h.decide(&id, Decision::Approve).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "e2".into(),
        status: ToolStatus::Ok,
        excerpt: "hi hi".into(),
    }));

    let requests = server.requests();
    let offered = requests[0].body["tools"].as_array().unwrap();
    assert_eq!(offered.last().unwrap()["function"]["name"], "echo");
    let second = &requests[1].body;
    assert_eq!(
        tool_results(second),
        [
            json!({
                "ok": false,
                "error": "invalid_argument",
                "field": "text",
                "expected": "non-empty string",
                "received": "integer 5",
                "code": "invalid_argument",
                "tool": "echo",
            }),
            json!({"ok": true, "output": "hi hi"}),
        ]
    );
    let calls = &second["messages"][2]["tool_calls"];
    assert_eq!(
        calls[1]["function"]["arguments"], r#"{"times":2,"text":"hi"}"#,
        "the arguments go back as the model wrote them"
    );
}

/// Under auto-edit a run-time tool that only reads runs unasked; one that
/// writes files is asked about as a command is, since no diff shows its
/// change, no path policy confines it and `/undo` cannot take it back.
#[tokio::test]
async fn a_run_time_tool_is_asked_about_as_its_effect_says() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("p1", "peek", r#"{"text": "look"}"#),
            ("n1", "note", r#"{"text": "write"}"#),
            ("e1", "echo", r#"{"text": "act"}"#),
        ]),
        Reply::text(&["Done."]),
    ])
    .await;
    let mut h = start_with_tools(
        &server.base_url(),
        ApprovalPolicy::AutoEdit,
        vec![
            Echo::named("peek", Effect::Reads),
            Echo::named("note", Effect::WritesFiles),
            Echo::named("echo", Effect::RunsCommands),
        ],
    );
    h.prompt("look, write, then act").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "n1", "a run-time tool that writes is asked about");
    assert!(
        events.contains(&AgentEvent::ToolResult {
            id: "p1".into(),
            status: ToolStatus::Ok,
            excerpt: "look".into(),
        }),
        "one that only reads ran unasked: {events:#?}"
    );
    h.decide(&id, Decision::Approve).await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(
        id, "e1",
        "a command-like tool is asked about under auto-edit"
    );
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0], json!({"ok": true, "output": "look"}));
    assert_eq!(results[1], json!({"ok": true, "output": "write"}));
    assert_eq!(results[2]["code"], "rejected");
}

#[tokio::test]
async fn esc_cancels_a_running_run_time_call_and_it_is_answered_cancelled() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("w1", "wait", &["{}"]),
        Reply::text(&["Stopped."]),
    ])
    .await;
    let mut h = start_with_tools(&server.base_url(), ApprovalPolicy::Ask, vec![Wait::tool()]);
    h.prompt("wait").await;
    h.until(|e| *e == AgentEvent::Phase(Phase::Executing)).await;
    h.send(UiCommand::Cancel).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "w1".into(),
        status: ToolStatus::Cancelled,
        excerpt: String::new(),
    }));
    h.prompt("go on").await;
    h.turn().await;
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["code"], "cancelled");
}
