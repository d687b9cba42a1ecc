//! Warming the server's prompt cache while the person types (ADR 0032):
//! what the warm-up sends, that nothing of it shows, that a prompt stops
//! it, and when a session sends one.

use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, UiCommand};
use serde_json::{Value, json};

use crate::support::agent::{EVENT_WAIT, reply_text, setup, start_with};
use crate::support::server::{Reply, ScriptedServer, assert_prefix_stable};

/// An agent with the warm-up on, in a fresh directory.
fn start_warming(
    server: &ScriptedServer,
    headless: bool,
) -> (crate::support::agent::AgentHarness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.warm_cache = true;
    s.headless = headless;
    (start_with(s), dir)
}

fn roles(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_new_session_sends_its_prefix_ahead_for_one_token_and_nothing_of_it_shows() {
    let server = ScriptedServer::start(vec![Reply::text(&["warm"]), Reply::text(&["hello"])]).await;
    let (mut h, _dir) = start_warming(&server, false);
    let warm = &server.wait_requests(1, EVENT_WAIT).await[0];
    assert_eq!(warm.body["max_tokens"], json!(1));
    assert_eq!(roles(&warm.body), ["system"]);
    assert_eq!(warm.body["tools"], json!(dashfloat::tools::definitions()));
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "hello");
    let real = &server.requests()[1];
    assert_eq!(roles(&real.body), ["system", "user"]);
    assert_ne!(real.body["max_tokens"], json!(1));
    // The real request repeats the warm-up's messages byte for byte, so
    // the server's cache holds its prefix.
    let warm_raw = String::from_utf8(warm.raw_body.clone()).unwrap();
    let real_raw = String::from_utf8(real.raw_body.clone()).unwrap();
    let system = serde_json::to_string(&warm.body["messages"][0]).unwrap();
    assert!(warm_raw.contains(&system) && real_raw.contains(&system));
    assert_prefix_stable(&server.requests());
}

#[tokio::test]
async fn a_prompt_stops_the_warm_up_and_is_answered_without_waiting_for_it() {
    let server = ScriptedServer::start(vec![
        // A warm-up the server would take a minute to read.
        Reply::text(&["warm"]).head_delay(Duration::from_secs(60)),
        Reply::text(&["answered"]),
    ])
    .await;
    let (mut h, _dir) = start_warming(&server, false);
    server.wait_requests(1, EVENT_WAIT).await;
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "answered");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn clear_warms_the_new_conversation_and_a_headless_run_never_warms() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["warm"]),
        Reply::text(&["one"]),
        Reply::text(&["warm again"]),
    ])
    .await;
    let (mut h, _dir) = start_warming(&server, false);
    server.wait_requests(1, EVENT_WAIT).await;
    h.prompt("first").await;
    h.turn().await;
    h.send(UiCommand::Clear).await;
    h.until(|e| *e == AgentEvent::TurnDone).await;
    let requests = server.wait_requests(3, EVENT_WAIT).await;
    assert_eq!(roles(&requests[2].body), ["system"]);
    assert_eq!(requests[2].body["max_tokens"], json!(1));

    // `exec` answers at once: there is no typing to warm the cache during.
    let server = ScriptedServer::start(vec![Reply::text(&["only"])]).await;
    let (mut h, _dir) = start_warming(&server, true);
    h.prompt("hi").await;
    h.turn().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(roles(&requests[0].body), ["system", "user"]);
}
