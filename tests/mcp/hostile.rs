//! A hostile server cannot hang, flood or spoof dashfloat: huge results,
//! escape sequences in names and descriptions, a schema that is not JSON
//! Schema, 10,000 tools, a list that never ends, garbage on the wire, a
//! line that never ends, silence, death mid-answer.

use std::time::{Duration, Instant};

use dashfloat::mcp::{MESSAGE_MAX_BYTES, SERVER_TOOLS_MAX, TOOL_PAGES_MAX};
use dashfloat::protocol::{McpServerState, Severity};
use dashfloat::tools::{DynamicTool, Registry, ToolFailure};
use serde_json::json;

use crate::{call, configs, hostile_table, started, tool};

fn state(servers: &dashfloat::mcp::McpServers, name: &str) -> McpServerState {
    servers
        .views(|_| 0)
        .into_iter()
        .find(|v| v.name == name)
        .unwrap()
        .state
}

#[tokio::test]
async fn a_result_larger_than_a_message_may_be_fails_the_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    // A timeout far beyond the bound below: only failing at once passes.
    let servers = started(
        configs(&hostile_table("h", "huge", &log, "tool_timeout_sec = 600")),
        dir.path(),
    )
    .await;
    let started = Instant::now();
    let answer = call(&tool(&servers, "mcp__h__huge"), json!({}), dir.path()).await;
    let Err(ToolFailure::ExecutionFailed { message, .. }) = answer else {
        panic!("{answer:?}");
    };
    assert!(
        message.contains(&format!("larger than {} MiB", MESSAGE_MAX_BYTES >> 20)),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "failed when the line was dropped, not at the 600 s tool timeout"
    );
}

#[tokio::test]
async fn escapes_in_names_and_descriptions_never_reach_the_screen_or_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&hostile_table("h", "controls", &log, "")),
        dir.path(),
    )
    .await;
    let tools = servers.tools(|_| false);
    assert!(tools.len() >= 4, "{tools:?}");
    for tool in &tools {
        assert!(
            tool.name()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{}",
            tool.name()
        );
        assert!(tool.name().len() <= dashfloat::bounds::TOOL_NAME_MAX_CHARS);
        assert!(
            !tool
                .description()
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{:?}",
            tool.description()
        );
    }
    let colliding: Vec<&str> = tools
        .iter()
        .map(|t| t.name())
        .filter(|n| n.starts_with("mcp__h__read_file_"))
        .collect();
    assert_eq!(colliding.len(), 2, "both kept, told apart: {colliding:?}");
    let notes = servers.take_notes();
    assert!(
        notes
            .iter()
            .any(|(s, t)| *s == Severity::Notice && t.contains("is offered as")),
        "{notes:?}"
    );
    assert!(
        notes.iter().all(|(_, t)| !t.contains('\u{1b}')),
        "{notes:?}"
    );
    for view in servers.views(|_| 0) {
        for tool in view.tools {
            assert!(!tool.name.contains('\u{1b}') && !tool.description.contains('\u{1b}'));
        }
    }
    let mut registry = Registry::builtin();
    for tool in tools {
        registry.register(tool).unwrap();
    }
}

#[tokio::test]
async fn a_schema_that_is_not_json_schema_drops_that_tool_alone() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&hostile_table("h", "bad-schema", &log, "")),
        dir.path(),
    )
    .await;
    let mut registry = Registry::builtin();
    let mut refused = Vec::new();
    for tool in servers.tools(|_| false) {
        if let Err(e) = registry.register(tool) {
            refused.push(e.to_string());
        }
    }
    assert!(registry.contains("mcp__h__good"));
    assert!(!registry.contains("mcp__h__bad"));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("cannot validate its calls"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn ten_thousand_tools_are_cut_to_the_bound_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&hostile_table(
            "h",
            "many",
            &log,
            "startup_timeout_sec = 60",
        )),
        dir.path(),
    )
    .await;
    assert_eq!(servers.tools(|_| false).len(), SERVER_TOOLS_MAX);
    let notes = servers.take_notes();
    assert!(
        notes
            .iter()
            .any(|(_, t)| t.contains(&format!("more than {SERVER_TOOLS_MAX} tools"))),
        "{notes:?}"
    );
}

#[tokio::test]
async fn a_tool_list_that_never_ends_is_read_to_the_page_bound() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&hostile_table(
            "h",
            "endless",
            &log,
            "startup_timeout_sec = 60",
        )),
        dir.path(),
    )
    .await;
    assert_eq!(servers.tools(|_| false).len(), TOOL_PAGES_MAX);
    let notes = servers.take_notes();
    assert!(
        notes
            .iter()
            .any(|(_, t)| t.contains(&format!("past {TOOL_PAGES_MAX} pages"))),
        "{notes:?}"
    );
}

#[tokio::test]
async fn garbage_on_the_wire_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&hostile_table("h", "garbage", &log, "")),
        dir.path(),
    )
    .await;
    let out = call(
        &tool(&servers, "mcp__h__echo"),
        json!({"text": "x"}),
        dir.path(),
    )
    .await;
    assert!(out.is_ok(), "{out:?}");
}

#[tokio::test]
async fn silence_a_line_without_end_and_death_fail_the_server_within_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let text = hostile_table("silent", "silent", &log, "startup_timeout_sec = 2")
        + &hostile_table("long", "long-line", &log, "startup_timeout_sec = 4")
        + &hostile_table("dies", "die-on-list", &log, "");
    let servers = started(configs(&text), dir.path()).await;
    for name in ["silent", "long", "dies"] {
        let McpServerState::Failed(why) = state(&servers, name) else {
            panic!("{name} did not fail");
        };
        assert!(!why.is_empty());
        // The silent one is given up by its own startup timeout, not by
        // the harness's wait: the reason names it.
        if name == "silent" {
            assert!(why.contains("did not start within 2s"), "{why}");
        }
    }
    let McpServerState::Failed(why) = state(&servers, "silent") else {
        unreachable!()
    };
    assert!(why.contains("did not start within 2s"), "{why}");
    let notes = servers.take_notes();
    assert_eq!(
        notes.iter().filter(|(s, _)| *s == Severity::Error).count(),
        3,
        "{notes:?}"
    );
    assert!(servers.tools(|_| false).is_empty());
}
