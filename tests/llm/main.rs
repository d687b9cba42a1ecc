//! The model's side of the wire: the stream task against the scripted
//! server, the frame cutter, the tool-call accumulator, credentials on the
//! way to the provider, and the scripted server itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod adapters;
mod discover;
mod guarded;
mod secrets;
mod slots;
mod stream;
mod support_selftest;
mod tool_calls;
mod wires;

use std::time::Duration;

use dashfloat::llm::classify::RequestContext;
use dashfloat::llm::stream::Endpoint;
use dashfloat::protocol::{StreamEvent, TransportError};
use serde_json::json;
use tokio::sync::mpsc;

/// An endpoint at `base_url` sending `api_key` and one extra `header`,
/// with five-second timeouts.
fn endpoint(base_url: &str, api_key: &str, header: (&str, &str)) -> Endpoint {
    Endpoint {
        client: dashfloat::llm::build_client(Duration::from_secs(5), base_url).unwrap(),
        context: RequestContext {
            base_url: base_url.to_string(),
            model: "test-model".into(),
            key_var: "TEST_KEY".into(),
            request_timeout: Duration::from_secs(5),
            wire: dashfloat::llm::wires::Wire::Chat,
        },
        api_key: Some(api_key.into()),
        headers: vec![(header.0.into(), header.1.into())],
        idle_timeout: Duration::from_secs(5),
    }
}

/// The body of a one-message streaming request.
fn body() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": true,
        "stream_options": {"include_usage": true}
    }))
    .unwrap()
}

/// Runs one episode to its end and returns every event.
async fn run(endpoint: Endpoint) -> Vec<StreamEvent> {
    episode(endpoint, body()).await
}

/// Runs one episode of the request `body` to its end; every event.
async fn episode(endpoint: Endpoint, body: Vec<u8>) -> Vec<StreamEvent> {
    let (tx, mut rx) = mpsc::channel(1024);
    let task = tokio::spawn(dashfloat::llm::stream::run(
        endpoint,
        body,
        dashfloat::llm::stream::EpisodeSetup::native(dashfloat::llm::tool_calls::MadeUpIds::calls(
            0,
        )),
        tx,
    ));
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        events.push(ev);
    }
    task.await.unwrap();
    events
}

/// The failure that ended an episode.
fn failure(events: &[StreamEvent]) -> TransportError {
    match events.last() {
        Some(StreamEvent::Failed(e)) => e.clone(),
        other => panic!("expected a failure, got {other:?} in {events:?}"),
    }
}

/// The reply text of an episode.
fn content(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Content(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
