//! Real servers: the official Python SDK's over stdio and Streamable
//! HTTP, and server-everything from npm. Listing with pagination, every
//! content type, `isError`, progress and cancellation, a tool list that
//! changes, a crash and a hang mid-call, and a command's sweep that
//! leaves the servers alone.

use std::sync::Arc;
use std::time::Duration;

use dashfloat::mcp::McpServers;
use dashfloat::mcp::result::RESULT_MAX_BYTES;
use dashfloat::protocol::McpServerState;
use dashfloat::tools::{DynamicTool, ToolContext, ToolFailure};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    call, configs, events, installed, lit, sdk_table, server_script, started, tool, wait_for_event,
};

fn ready_protocol(servers: &McpServers, name: &str) -> String {
    let views = servers.views(|_| 0);
    let view = views.iter().find(|v| v.name == name).unwrap();
    match &view.state {
        McpServerState::Ready { protocol } => protocol.clone(),
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test]
async fn a_stdio_server_lists_its_tools_page_by_page_and_answers_every_content_type() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let table = sdk_table("py", &log, "") + "MCP_TEST_PAGE_SIZE = \"2\"\n";
    let servers = started(configs(&table), dir.path()).await;
    assert_eq!(ready_protocol(&servers, "py"), "2025-11-25");
    let init = events(&log)
        .into_iter()
        .find(|e| e["event"] == "request" && e["method"] == "initialize")
        .unwrap();
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    let names: Vec<String> = servers
        .tools(|_| false)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    for expected in [
        "echo",
        "read_only_echo",
        "all_content",
        "fail",
        "slow",
        "crash",
    ] {
        assert!(names.contains(&format!("mcp__py__{expected}")), "{names:?}");
    }
    let lists = events(&log)
        .iter()
        .filter(|e| e["event"] == "request" && e["method"] == "tools/list")
        .count();
    assert!(lists >= 5, "two tools a page: {lists} pages asked for");

    let echo = tool(&servers, "mcp__py__echo");
    let out = call(&echo, json!({"text": "hello"}), dir.path())
        .await
        .unwrap();
    assert_eq!(out.output, "hello");

    let all = call(
        &tool(&servers, "mcp__py__all_content"),
        json!({}),
        dir.path(),
    )
    .await
    .unwrap()
    .output;
    for part in [
        "[image image/png, ",
        "[audio audio/wav, ",
        "[resource link file:///tmp/example.txt",
        "1.2 KiB]",
        "[resource mem://notes, ",
        "[resource mem://blob, ",
        "structured content:",
        "\"answer\":42",
    ] {
        assert!(all.contains(part), "{part:?} not in {all}");
    }

    let failed = call(
        &tool(&servers, "mcp__py__fail"),
        json!({"message": "no such row"}),
        dir.path(),
    )
    .await;
    match failed {
        Err(ToolFailure::ExecutionFailed { tool, message }) => {
            assert_eq!(tool, "mcp__py__fail");
            assert_eq!(message, "no such row");
        }
        other => panic!("isError is a failed result: {other:?}"),
    }

    let big = call(
        &tool(&servers, "mcp__py__big"),
        json!({"bytes": RESULT_MAX_BYTES + 10_000}),
        dir.path(),
    )
    .await
    .unwrap()
    .output;
    assert!(big.len() < RESULT_MAX_BYTES + 200, "{}", big.len());
    assert!(big.ends_with("ask the tool for less]"));
}

#[tokio::test]
async fn progress_shows_on_the_row_and_esc_tells_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(configs(&sdk_table("py", &log, "")), dir.path()).await;
    let slow = tool(&servers, "mcp__py__slow");
    let (live, mut watched) = tokio::sync::watch::channel(Vec::new());
    let ctx = ToolContext {
        live_output: Some(live),
        ..ToolContext::new(dir.path()).unwrap()
    };
    let cancel = CancellationToken::new();
    let args = json!({"seconds": 30, "steps": 30});
    let args = args.as_object().unwrap().clone();
    let run = {
        let (slow, cancel) = (Arc::clone(&slow), cancel.clone());
        tokio::spawn(async move { slow.run(&args, &ctx, &cancel).await })
    };
    tokio::time::timeout(Duration::from_secs(20), watched.changed())
        .await
        .unwrap()
        .unwrap();
    let shown = String::from_utf8(watched.borrow().clone()).unwrap();
    assert!(shown.starts_with("step 1 of 30 (1/30)"), "{shown}");
    cancel.cancel();
    let answered = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("Esc ends the call at once")
        .unwrap();
    assert!(
        matches!(answered, Err(ToolFailure::Cancelled { .. })),
        "{answered:?}"
    );
    wait_for_event(&log, |e| e["event"] == "cancelled" && e["tool"] == "slow").await;
    // The server goes on answering.
    let out = call(
        &tool(&servers, "mcp__py__echo"),
        json!({"text": "still here"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "still here");
}

#[tokio::test]
async fn a_tool_list_that_changes_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(configs(&sdk_table("py", &log, "")), dir.path()).await;
    let mut changes = servers.watch();
    changes.borrow_and_update();
    assert!(
        !servers
            .tools(|_| false)
            .iter()
            .any(|t| t.name() == "mcp__py__late_tool")
    );
    call(&tool(&servers, "mcp__py__add_tool"), json!({}), dir.path())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            changes.changed().await.unwrap();
            if servers
                .tools(|_| false)
                .iter()
                .any(|t| t.name() == "mcp__py__late_tool")
            {
                break;
            }
        }
    })
    .await
    .expect("the new tool is listed");
    let out = call(&tool(&servers, "mcp__py__late_tool"), json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(out.output, "late");
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_the_call_and_is_restarted_on_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(configs(&sdk_table("py", &log, "")), dir.path()).await;
    let crashed = call(&tool(&servers, "mcp__py__crash"), json!({}), dir.path()).await;
    let Err(ToolFailure::ExecutionFailed { message, .. }) = crashed else {
        panic!("{crashed:?}");
    };
    assert!(message.contains("stopped during the call"), "{message}");
    assert!(
        message.contains("started again on the next call"),
        "{message}"
    );
    let out = call(
        &tool(&servers, "mcp__py__echo"),
        json!({"text": "back"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "back");
    let starts = events(&log)
        .iter()
        .filter(|e| e["event"] == "started")
        .count();
    assert_eq!(starts, 2, "started once more");
}

#[tokio::test]
async fn a_server_that_hangs_times_out_and_restarts_at_most_a_few_times() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(
        configs(&sdk_table("py", &log, "tool_timeout_sec = 1")),
        dir.path(),
    )
    .await;
    let hang = tool(&servers, "mcp__py__hang");
    for _ in 0..=dashfloat::mcp::RESTARTS_MAX {
        let hung = call(&hang, json!({}), dir.path()).await;
        let Err(ToolFailure::ExecutionFailed { message, .. }) = hung else {
            panic!("{hung:?}");
        };
        assert!(message.contains("did not answer within 1s"), "{message}");
    }
    let last = call(&hang, json!({}), dir.path()).await;
    let Err(ToolFailure::ExecutionFailed { message, .. }) = last else {
        panic!("{last:?}");
    };
    assert!(message.contains("restarted 3 times already"), "{message}");
    assert!(message.contains("/mcp restart py"), "{message}");
    let starts = events(&log)
        .iter()
        .filter(|e| e["event"] == "started")
        .count();
    assert_eq!(starts, 1 + dashfloat::mcp::RESTARTS_MAX as usize);
    // By hand it starts again.
    assert!(servers.restart("py"));
    tokio::time::timeout(Duration::from_secs(30), servers.settled())
        .await
        .unwrap();
    let out = call(
        &tool(&servers, "mcp__py__echo"),
        json!({"text": "up"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "up");
}

#[tokio::test]
async fn a_streamable_http_server_is_used_as_a_stdio_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut child = tokio::process::Command::new(&installed().python)
        .args([
            server_script("sdk_server.py").as_str(),
            "--transport",
            "http",
            "--port",
            "0",
        ])
        .env("MCP_TEST_LOG", &log)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut line),
    )
    .await
    .unwrap()
    .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_owned();
    let table = format!("[mcp_servers.web]\nurl = {}\n", lit(&url));
    let servers = started(configs(&table), dir.path()).await;
    assert!(!ready_protocol(&servers, "web").is_empty());
    let out = call(
        &tool(&servers, "mcp__web__echo"),
        json!({"text": "over http"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "over http");
    let all = call(
        &tool(&servers, "mcp__web__all_content"),
        json!({}),
        dir.path(),
    )
    .await
    .unwrap()
    .output;
    assert!(all.contains("[image image/png"), "{all}");
}

#[tokio::test]
async fn the_published_reference_server_works() {
    let dir = tempfile::tempdir().unwrap();
    let everything = &installed().everything;
    let args: Vec<String> = everything[1..].iter().map(|a| lit(a)).collect();
    let table = format!(
        "[mcp_servers.everything]\ncommand = {}\nargs = [{}]\nstartup_timeout_sec = 30\n",
        lit(&everything[0]),
        args.join(", ")
    );
    let servers = started(configs(&table), dir.path()).await;
    let tools = servers.tools(|_| false);
    assert!(tools.len() >= 5, "{tools:?}");
    let out = call(
        &tool(&servers, "mcp__everything__echo"),
        json!({"message": "hi"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert!(out.output.contains("hi"), "{}", out.output);
}

#[tokio::test]
async fn a_commands_sweep_leaves_the_servers_alone() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let servers = started(configs(&sdk_table("py", &log, "")), dir.path()).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    let command = dashfloat::tools::ExecuteCommand {
        command: "sleep 30 & echo left".into(),
        cwd: ".".into(),
        timeout_seconds: None,
        sandbox: None,
        reason: None,
    };
    let result = dashfloat::tools::execute(&command.into(), &ctx, CancellationToken::new()).await;
    assert!(result.outcome.is_ok(), "{result:?}");
    let out = call(
        &tool(&servers, "mcp__py__echo"),
        json!({"text": "alive"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "alive");
    let starts = events(&log)
        .iter()
        .filter(|e| e["event"] == "started")
        .count();
    assert_eq!(starts, 1, "the sweep did not kill the server");
}

#[tokio::test]
async fn a_stdio_server_gets_no_credentials_but_those_its_table_passes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let table = sdk_table("py", &log, "env_vars = [\"PATH\"]") + "SERVICE_TOKEN = \"given\"\n";
    let servers = started(configs(&table), dir.path()).await;
    let env = tool(&servers, "mcp__py__env");
    let token = call(&env, json!({"name": "SERVICE_TOKEN"}), dir.path())
        .await
        .unwrap();
    assert_eq!(token.output, "given", "the table's env is passed whole");
    let cwd = call(&tool(&servers, "mcp__py__cwd"), json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(
        std::path::Path::new(&cwd.output).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap(),
        "it runs in the project"
    );
}
