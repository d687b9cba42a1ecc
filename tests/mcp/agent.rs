//! The agent with MCP servers, end to end against the scripted model:
//! the model calls an MCP tool, the person approves it, the answer goes
//! back; Esc cancels a slow call and the server is told; a tool the
//! config approves runs unasked; a prompt sent before a server is ready
//! goes without its tools, with a notice; `/mcp` answers.

use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::log::Log;
use dashfloat::mcp::McpServers;
use dashfloat::protocol::{
    AgentEvent, Decision, McpServerState, PreviewKind, ToolStatus, UiCommand,
};
use dashfloat::tools::ToolContext;

use crate::support::agent::{AgentHarness, setup, start_with, system_texts, tool_results};
use crate::support::server::{Reply, ScriptedServer};
use crate::{configs, hostile_table, sdk_table, wait_for_event};

/// An agent in `dir` whose MCP servers are those of `table`, started with
/// it, waited for when `settle`.
async fn agent_with(
    base_url: &str,
    dir: &std::path::Path,
    table: &str,
    policy: ApprovalPolicy,
    settle: bool,
) -> AgentHarness {
    let mut setup = setup(base_url, dir, policy);
    let servers = McpServers::new(
        configs(table),
        ToolContext::new(dir).unwrap(),
        Log::off(),
        |k| std::env::var(k).ok(),
    );
    setup.mcp = Some(servers.clone());
    let harness = start_with(setup);
    if settle {
        tokio::time::timeout(Duration::from_secs(60), servers.settled())
            .await
            .unwrap();
    }
    harness
}

#[tokio::test]
async fn the_model_calls_an_mcp_tool_the_person_approves_and_the_answer_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("m1", "mcp__py__echo", &[r#"{"text": "from the model"}"#]),
        Reply::text(&["It echoed."]),
    ])
    .await;
    let mut h = agent_with(
        &server.base_url(),
        dir.path(),
        &sdk_table("py", &log, ""),
        ApprovalPolicy::AutoEdit,
        true,
    )
    .await;
    h.prompt("echo it").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "m1", "an MCP call asks even under auto-edit");
    assert!(events.contains(&AgentEvent::ToolCall {
        id: "m1".into(),
        name: "mcp__py__echo".into(),
        summary: r#"py · echo {"text":"from the model"}"#.into(),
    }));
    let Some(AgentEvent::Confirm(request)) = events.last() else {
        unreachable!()
    };
    assert_eq!(request.preview[0].kind, PreviewKind::Header);
    assert_eq!(request.preview[0].text, "MCP server py, tool echo");
    assert!(
        request
            .preview
            .iter()
            .any(|l| l.kind == PreviewKind::Added && l.text == "  \"text\": \"from the model\"")
    );
    h.decide(&id, Decision::Approve).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "m1".into(),
        status: ToolStatus::Ok,
        excerpt: "from the model".into(),
    }));
    let requests = server.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"mcp__py__echo"), "{offered:?}");
    assert_eq!(
        tool_results(&requests[1].body),
        [serde_json::json!({"ok": true, "output": "from the model"})]
    );
}

#[tokio::test]
async fn esc_cancels_a_slow_call_and_the_server_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("s1", "mcp__py__slow", &[r#"{"seconds": 60, "steps": 60}"#]),
        Reply::text(&["Stopped."]),
    ])
    .await;
    let table = sdk_table("py", &log, "default_tools_approval_mode = \"approve\"");
    let mut h = agent_with(
        &server.base_url(),
        dir.path(),
        &table,
        ApprovalPolicy::Ask,
        true,
    )
    .await;
    h.prompt("wait a while").await;
    let events = h
        .until(|e| matches!(e, AgentEvent::ToolOutput { id, .. } if id == "s1"))
        .await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "the config approves it: no question"
    );
    let Some(AgentEvent::ToolOutput { tail, .. }) = events.last() else {
        unreachable!()
    };
    assert!(tail.contains("of 60"), "progress on the call's row: {tail}");
    h.send(UiCommand::Cancel).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "s1".into(),
        status: ToolStatus::Cancelled,
        excerpt: String::new(),
    }));
    wait_for_event(&log, |e| {
        e["event"] == "notification" && e["method"] == "notifications/cancelled"
    })
    .await;
}

#[tokio::test]
async fn a_prompt_before_a_server_is_ready_goes_without_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let server = ScriptedServer::start(vec![Reply::text(&["Hello."])]).await;
    let table = hostile_table("late", "silent", &log, "startup_timeout_sec = 30");
    let mut h = agent_with(
        &server.base_url(),
        dir.path(),
        &table,
        ApprovalPolicy::Ask,
        false,
    )
    .await;
    h.prompt("hi").await;
    let events = h.turn().await;
    let notes = system_texts(&events);
    assert!(
        notes
            .iter()
            .any(|t| t.contains("MCP servers still starting: late")),
        "{notes:?}"
    );
    let offered = server.requests()[0].body["tools"].as_array().unwrap().len();
    assert_eq!(
        offered,
        dashfloat::tools::Registry::builtin()
            .definitions()
            .as_array()
            .unwrap()
            .len()
    );
}

#[tokio::test]
async fn slash_mcp_shows_each_server_its_tools_and_their_cost() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let server = ScriptedServer::start(vec![Reply::text(&["Hello."])]).await;
    let table = sdk_table("py", &log, "disabled_tools = [\"crash\"]")
        + &hostile_table("broken", "die-on-list", &log, "");
    let mut h = agent_with(
        &server.base_url(),
        dir.path(),
        &table,
        ApprovalPolicy::Ask,
        true,
    )
    .await;
    h.prompt("hi").await;
    let events = h.turn().await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.starts_with("MCP server broken failed:")),
        "{events:?}"
    );
    h.send(UiCommand::ListMcp).await;
    let events = h.until(|e| matches!(e, AgentEvent::McpServers(_))).await;
    let Some(AgentEvent::McpServers(views)) = events.last() else {
        unreachable!()
    };
    let py = views.iter().find(|v| v.name == "py").unwrap();
    assert!(matches!(py.state, McpServerState::Ready { .. }));
    assert!(py.tokens > 100, "{}", py.tokens);
    let crash = py.tools.iter().find(|t| t.name == "crash").unwrap();
    assert!(!crash.offered);
    assert!(
        py.tools
            .iter()
            .find(|t| t.name == "read_only_echo")
            .unwrap()
            .read_only_hint
    );
    let broken = views.iter().find(|v| v.name == "broken").unwrap();
    assert!(matches!(broken.state, McpServerState::Failed(_)));
    assert_eq!(broken.tokens, 0);
    let offered = server.requests()[0].body["tools"].clone();
    assert!(!offered.to_string().contains("mcp__py__crash"));
}
