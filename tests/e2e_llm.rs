//! End to end with the real local model (llama-server, Qwen2.5-Coder-0.5B).
//! Ignored by default: `scripts/test` starts the server with
//! `scripts/local-model` and runs these serially with DASHFLOAT_LLM_URL set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use dashfloat::agent::{self, AgentSetup};
use dashfloat::llm::classify::RequestContext;
use dashfloat::llm::stream::Endpoint;
use dashfloat::protocol::{AgentEvent, ReplyEnd, UiCommand};
use support::dashfloat_bin;
use support::pty::PtySession;
use tokio::sync::mpsc;

/// Generation on two busy cores can be slow; these are upper bounds only.
const WAIT: Duration = Duration::from_secs(240);

fn llm_url() -> String {
    std::env::var("DASHFLOAT_LLM_URL")
        .expect("DASHFLOAT_LLM_URL is not set: run these through scripts/test, which starts the local model")
}

#[tokio::test]
#[ignore = "needs the real local model; scripts/test runs it"]
async fn the_agent_chats_with_the_real_model() {
    let endpoint = Endpoint {
        client: dashfloat::llm::build_client(Duration::from_secs(30)).unwrap(),
        context: RequestContext {
            base_url: llm_url(),
            model: "qwen2.5-coder-0.5b".into(),
            key_var: "OPENAI_API_KEY".into(),
            request_timeout: Duration::from_secs(120),
        },
        api_key: None,
        headers: Vec::new(),
        idle_timeout: Duration::from_secs(120),
    };
    let (commands, command_rx) = mpsc::channel(8);
    let (event_tx, mut events) = mpsc::channel(4096);
    let setup = AgentSetup {
        endpoint: Ok(endpoint),
        model: "qwen2.5-coder-0.5b".into(),
        system_prompt: agent::system_prompt("/tmp/project"),
    };
    tokio::spawn(agent::run(setup, command_rx, event_tx));
    for prompt in ["Say hello in five words.", "Now say it in French."] {
        commands
            .send(UiCommand::Prompt {
                text: prompt.into(),
            })
            .await
            .unwrap();
        let mut text = String::new();
        let mut usage = None;
        let mut ended = None;
        loop {
            let ev = tokio::time::timeout(WAIT, events.recv())
                .await
                .expect("the model did not finish in time")
                .expect("agent hung up");
            match ev {
                AgentEvent::AssistantDelta(t) => text.push_str(&t),
                AgentEvent::Usage(u) => usage = Some(u),
                AgentEvent::AssistantEnd(end) => ended = Some(end),
                AgentEvent::System { text, .. } => panic!("unexpected system entry: {text}"),
                AgentEvent::TurnDone => break,
                _ => {}
            }
        }
        assert_eq!(ended, Some(ReplyEnd::Complete));
        assert!(!text.trim().is_empty(), "empty reply to {prompt:?}");
        let usage = usage.expect("llama-server sends usage");
        assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    }
}

#[test]
#[ignore = "needs the real local model; scripts/test runs it"]
fn the_binary_chats_with_the_real_model_in_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let url = llm_url();
    let mut session = PtySession::spawn(
        &dashfloat_bin(),
        &["--base-url", &url],
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
        .wait_until(WAIT, |s| {
            s.contains("ctx ") && s.contains("/8.2k (") && s.contains("idle")
        })
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
