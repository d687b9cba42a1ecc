//! End to end with the real local model (llama-server, Qwen2.5-Coder-0.5B).
//! Ignored by default: `scripts/test` starts the server with
//! `scripts/local-model` and runs these serially with DASHFLOAT_LLM_URL set.

use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, Phase, ReplyEnd, ToolStatus};

use crate::support;
use support::agent::{AgentHarness, setup, start_with, system_texts};
use support::dashfloat_bin;
use support::pty::PtySession;

/// Generation on two busy cores can be slow; these are upper bounds only.
const WAIT: Duration = Duration::from_secs(240);

fn llm_url() -> String {
    std::env::var("DASHFLOAT_LLM_URL").expect(
        "DASHFLOAT_LLM_URL is not set: run these through scripts/test, which starts the local model",
    )
}

/// An agent on the real model in a temp project holding a README and a
/// `src` folder; `max_steps` 2 lets one follow-up request go out after the
/// tool results and then ends the turn (these small models tend to call a
/// tool again instead of answering).
fn start_real(max_steps: u32) -> (AgentHarness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# Demo\n\nA demo project.\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let mut s = setup(&llm_url(), dir.path(), ApprovalPolicy::Ask);
    s.max_steps = max_steps;
    // Deterministic replies keep these tests from depending on luck.
    s.temperature = Some(0.0);
    s.system_prompt = dashfloat::agent::system_prompt();
    (start_with(s), dir)
}

async fn next(h: &mut AgentHarness) -> AgentEvent {
    tokio::time::timeout(WAIT, h.events.recv())
        .await
        .expect("the model did not answer in time")
        .expect("agent hung up")
}

/// Runs a turn, approving every confirmation; returns its events.
async fn turn_approving(h: &mut AgentHarness) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let ev = next(h).await;
        if let AgentEvent::Confirm(req) = &ev {
            h.decide(&req.id, Decision::Approve).await;
        }
        let done = ev == AgentEvent::TurnDone;
        events.push(ev);
        if done {
            return events;
        }
    }
}

/// The first tool call of a turn and its status.
fn first_call(events: &[AgentEvent]) -> (String, ToolStatus) {
    let (id, name) = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the model made no tool call: {events:#?}"));
    let status = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult { id: i, status, .. } if *i == id => Some(status.clone()),
            _ => None,
        })
        .expect("the call was answered");
    (name, status)
}

/// The follow-up request after the tool results was accepted: a second
/// episode streamed and no error entry appeared.
fn follow_up_accepted(events: &[AgentEvent]) {
    let episodes = events
        .iter()
        .filter(|e| **e == AgentEvent::Phase(Phase::Streaming))
        .count();
    assert!(episodes >= 2, "no follow-up episode: {events:#?}");
    for text in system_texts(events) {
        assert!(
            !text.contains("HTTP") && !text.contains("rejected the request"),
            "the server refused a request: {text}"
        );
    }
}

#[tokio::test]
#[ignore = "needs the real local model; scripts/test runs it"]
async fn the_agent_chats_with_the_real_model() {
    let (mut h, _dir) = start_real(2);
    for prompt in ["Say hello in five words.", "Now say it in French."] {
        h.prompt(prompt).await;
        let events = turn_approving(&mut h).await;
        assert!(events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Complete)));
        let usage = events.iter().find_map(|e| match e {
            AgentEvent::Usage(u) => Some(*u),
            _ => None,
        });
        let usage = usage.expect("llama-server sends usage");
        assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    }
}

#[tokio::test]
#[ignore = "needs the real local model; scripts/test runs it"]
async fn the_real_model_reads_a_file_and_the_follow_up_is_accepted() {
    let (mut h, _dir) = start_real(2);
    h.prompt("Read the file README.md").await;
    let events = turn_approving(&mut h).await;
    assert_eq!(
        first_call(&events),
        ("read_file".to_string(), ToolStatus::Ok)
    );
    follow_up_accepted(&events);
}

#[tokio::test]
#[ignore = "needs the real local model; scripts/test runs it"]
async fn the_real_model_lists_a_directory_and_the_follow_up_is_accepted() {
    let (mut h, _dir) = start_real(2);
    h.prompt("List the files in src").await;
    let events = turn_approving(&mut h).await;
    assert_eq!(
        first_call(&events),
        ("list_directory".to_string(), ToolStatus::Ok)
    );
    follow_up_accepted(&events);
}

#[tokio::test]
#[ignore = "needs the real local model; scripts/test runs it"]
async fn the_real_model_writes_an_approved_file() {
    let (mut h, dir) = start_real(2);
    h.prompt("Create hello.txt containing hello world").await;
    let events = turn_approving(&mut h).await;
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "a write must be confirmed: {events:#?}"
    );
    assert_eq!(
        first_call(&events),
        ("write_file".to_string(), ToolStatus::Ok)
    );
    let written = std::fs::read_to_string(dir.path().join("hello.txt")).unwrap();
    assert!(written.contains("hello world"), "{written:?}");
    follow_up_accepted(&events);
}

#[test]
#[ignore = "needs the real local model; scripts/test runs it"]
fn the_binary_chats_with_the_real_model_in_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let url = llm_url();
    let mut session = PtySession::spawn(
        &dashfloat_bin(),
        &[
            "--base-url",
            &url,
            "--context-window",
            "8192",
            "--temperature",
            "0",
            "--max-steps",
            "2",
        ],
        &[("HOME", home), ("XDG_CONFIG_HOME", home)],
        dir.path(),
        100,
        30,
    );
    session.wait_for("idle", Duration::from_secs(20)).unwrap();
    session.send(b"Say hello in five words.\r");
    session
        .wait_for("streaming", Duration::from_secs(20))
        .unwrap();
    // The usage frame at the end of the turn fills in the context indicator.
    let screen = session
        .wait_until(WAIT, |s| s.contains("/8.2k (") && s.contains("idle"))
        .unwrap();
    assert!(
        !screen.lines().any(|l| l.starts_with("! ")),
        "an error entry appeared:\n{screen}"
    );
    session.send(b"\x04");
    assert!(
        session
            .wait_exit(Duration::from_secs(20))
            .unwrap()
            .success()
    );
    assert!(!session.alternate_screen());
}
