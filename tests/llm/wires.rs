//! The Anthropic Messages and OpenAI Responses wires against the scripted
//! server replaying streams built from the providers' published examples
//! (`tests/fixtures/wires/`, each following the documentation named in
//! ADR 0052): the same events come out as chat's, the requests are each
//! API's own, and failures land in the same taxonomy.

use dashfloat::llm::stream::Endpoint;
use dashfloat::llm::wires::Wire;
use dashfloat::protocol::{FinishReason, StreamEvent, TransportError, Usage};
use serde_json::{Value, json};

use crate::support::server::{Reply, ScriptedServer, Step};
use crate::{content, endpoint, episode, failure};

/// An endpoint on `wire` at `server`, with the key `sk-test`.
fn on(wire: Wire, server: &ScriptedServer) -> Endpoint {
    let mut endpoint = endpoint(&server.base_url(), "sk-test", ("X-Trace", "t1"));
    endpoint.context.wire = wire;
    endpoint
}

/// A chat body with a system prompt, a call and its result, then the
/// person's words.
fn conversation() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are dashfloat."},
            {"role": "user", "content": "Where is main?"},
            {"role": "assistant", "content": "Looking.", "tool_calls": [
                {"id": "call:1", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"fn main\"}"}}
            ], "carried": [
                {"type": "thinking", "thinking": "grep it", "signature": "sig"},
                {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
            ]},
            {"role": "tool", "tool_call_id": "call:1", "content": "{\"ok\":true}"},
            {"role": "user", "content": "And then?"}
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {"name": "grep", "description": "Search.", "parameters": {"type": "object"}}}],
        "max_tokens": 1000,
        "temperature": 0.2,
        "tool_choice": "none",
        "stop": ["<tool_response>"]
    }))
    .unwrap()
}

fn fixture(wire: &str, name: &str) -> Reply {
    Reply::fixture(format!("wires/{wire}/{name}"))
}

/// The window a context-exceeded failure learnt; `None` for another end.
fn learnt_window(events: &[StreamEvent]) -> Option<Option<u64>> {
    match failure(events) {
        TransportError::ContextExceeded { window, .. } => Some(window),
        _ => None,
    }
}

fn usage(events: &[StreamEvent]) -> Usage {
    events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .expect("a usage event")
}

/// The calls of the `Done` that ended the episode, as (name, arguments).
fn calls(events: &[StreamEvent]) -> Vec<(String, Value)> {
    match events.last() {
        Some(StreamEvent::Done { tool_calls }) => tool_calls
            .iter()
            .map(|c| {
                let args = c.arguments.object().cloned().map(Value::Object);
                (c.name.clone(), args.unwrap_or(Value::Null))
            })
            .collect(),
        other => panic!("expected Done, got {other:?} in {events:?}"),
    }
}

fn finish(events: &[StreamEvent]) -> Option<FinishReason> {
    events.iter().find_map(|e| match e {
        StreamEvent::Finish(f) => Some(f.clone()),
        _ => None,
    })
}

fn reasoning(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Reasoning(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn carried(events: &[StreamEvent]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Carried(item) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn anthropic_text_with_its_cache_figures() {
    let server = ScriptedServer::start(vec![fixture("anthropic", "text.sse")]).await;
    let events = episode(on(Wire::Anthropic, &server), conversation()).await;
    assert!(!content(&events).is_empty(), "{events:?}");
    assert!(calls(&events).is_empty());
    assert_eq!(finish(&events), Some(FinishReason::Stop));
    let usage = usage(&events);
    assert!(usage.cached_tokens > 0, "{usage:?}");
    // input_tokens leaves out what was read from or written to the cache.
    assert!(usage.prompt_tokens > usage.cached_tokens, "{usage:?}");
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("x-trace"), Some("t1"));
}

/// The request is the Messages API's: system apart, results first in the
/// user turn after their call, thinking sent back before the text, ids
/// as the API takes them, three cache breakpoints (tools, system, the
/// last turn), `tool_choice` none when the reply must be words.
#[tokio::test]
async fn anthropic_requests_pair_calls_and_mark_the_cache() {
    let server = ScriptedServer::start(vec![fixture("anthropic", "text.sse")]).await;
    episode(on(Wire::Anthropic, &server), conversation()).await;
    let body = &server.requests()[0].body;
    // `call:1` has a character the API refuses: changed, with a hash of
    // what it was, the same for the call and its result.
    let id = format!(
        "call_1_{:08x}",
        dashfloat::stable_hash::checksum(b"call:1") as u32
    );
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are dashfloat.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    assert_eq!(body["stop_sequences"], json!(["<tool_response>"]));
    assert_eq!(
        body["tools"],
        json!([{"name": "grep", "description": "Search.", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Where is main?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "grep it", "signature": "sig"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": id, "name": "grep", "input": {"pattern": "fn main"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "{\"ok\":true}"},
                {"type": "text", "text": "And then?", "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
    assert!(body.get("stream_options").is_none() && body.get("carried").is_none());
}

#[tokio::test]
async fn anthropic_parallel_calls_stream_in_pieces() {
    let server = ScriptedServer::start(vec![fixture("anthropic", "tool_use.sse")]).await;
    let events = episode(on(Wire::Anthropic, &server), conversation()).await;
    assert_eq!(
        calls(&events),
        [
            ("read_file".to_owned(), json!({"path": "README.md"})),
            ("grep".to_owned(), json!({"pattern": "fn main"})),
        ]
    );
    assert_eq!(finish(&events), Some(FinishReason::ToolCalls));
    assert!(content(&events).contains("README"), "{events:?}");
}

#[tokio::test]
async fn anthropic_thinking_is_shown_and_carried_whole() {
    let server = ScriptedServer::start(vec![
        fixture("anthropic", "thinking.sse"),
        fixture("anthropic", "redacted_thinking.sse"),
    ])
    .await;
    let events = episode(on(Wire::Anthropic, &server), conversation()).await;
    let items = carried(&events);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["type"], "thinking");
    assert_eq!(
        items[0]["thinking"].as_str(),
        Some(reasoning(&events).as_str())
    );
    assert!(!items[0]["signature"].as_str().unwrap().is_empty());
    assert!(!content(&events).is_empty());

    let events = episode(on(Wire::Anthropic, &server), conversation()).await;
    let items = carried(&events);
    assert_eq!(items[0]["type"], "redacted_thinking", "{items:?}");
    assert!(items[0]["data"].is_string());
}

#[tokio::test]
async fn anthropic_failures_land_in_the_taxonomy() {
    let too_long = std::fs::read_to_string("tests/fixtures/wires/anthropic/too_long.json").unwrap();
    let overloaded =
        std::fs::read_to_string("tests/fixtures/wires/anthropic/overloaded.json").unwrap();
    let server = ScriptedServer::start(vec![
        fixture("anthropic", "error_mid_stream.sse"),
        fixture("anthropic", "incomplete.sse"),
        Reply::status(400, "application/json", &too_long),
        Reply::status(529, "application/json", &overloaded).with_header("retry-after", "0"),
        fixture("anthropic", "text.sse"),
    ])
    .await;
    let endpoint = on(Wire::Anthropic, &server);

    let events = episode(endpoint.clone(), conversation()).await;
    assert!(!content(&events).is_empty());
    assert!(
        matches!(failure(&events), TransportError::InStream { message } if message == "Overloaded"),
        "{events:?}"
    );
    let events = episode(endpoint.clone(), conversation()).await;
    assert_eq!(finish(&events), Some(FinishReason::Length));
    let events = episode(endpoint.clone(), conversation()).await;
    assert_eq!(learnt_window(&events), Some(Some(200_000)), "{events:?}");
    // Overloaded before any token: sent again, as a 503 would be.
    let events = episode(endpoint, conversation()).await;
    assert!(
        matches!(&events[0], StreamEvent::Retrying { attempt: 1, .. }),
        "{events:?}"
    );
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
}

#[tokio::test]
async fn responses_text_with_its_cache_figures() {
    let server = ScriptedServer::start(vec![fixture("responses", "text.sse")]).await;
    let events = episode(on(Wire::Responses, &server), conversation()).await;
    assert!(!content(&events).is_empty(), "{events:?}");
    assert_eq!(finish(&events), Some(FinishReason::Stop));
    let usage = usage(&events);
    assert!(usage.cached_tokens > 0, "{usage:?}");
    assert!(usage.prompt_tokens >= usage.cached_tokens);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
}

/// The request is the Responses API's: nothing stored, encrypted
/// reasoning asked for and sent back (without the id the provider did
/// not keep), the calls and their outputs as items, one cache key for the
/// conversation.
#[tokio::test]
async fn responses_requests_carry_reasoning_and_pair_calls() {
    let server = ScriptedServer::start(vec![
        fixture("responses", "text.sse"),
        fixture("responses", "text.sse"),
    ])
    .await;
    episode(on(Wire::Responses, &server), conversation()).await;
    let body = &server.requests()[0].body;
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["instructions"], "You are dashfloat.");
    assert_eq!(body["max_output_tokens"], 1000);
    assert_eq!(body["tool_choice"], "none");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "grep", "description": "Search.", "parameters": {"type": "object"}, "strict": false}])
    );
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "Where is main?"},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
            {"role": "assistant", "content": "Looking."},
            {"type": "function_call", "call_id": "call:1", "name": "grep", "arguments": "{\"pattern\":\"fn main\"}"},
            {"type": "function_call_output", "call_id": "call:1", "output": "{\"ok\":true}"},
            {"role": "user", "content": "And then?"}
        ])
    );
    let key = body["prompt_cache_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("dashfloat-"), "{key}");
    // A later request of the same conversation names the same cache.
    let mut longer: Value = serde_json::from_slice(&conversation()).unwrap();
    longer["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": "Done."}));
    episode(
        on(Wire::Responses, &server),
        serde_json::to_vec(&longer).unwrap(),
    )
    .await;
    assert_eq!(server.requests()[1].body["prompt_cache_key"], key.as_str());
}

#[tokio::test]
async fn responses_parallel_calls_stream_in_pieces() {
    let server = ScriptedServer::start(vec![fixture("responses", "tool_use.sse")]).await;
    let events = episode(on(Wire::Responses, &server), conversation()).await;
    assert_eq!(
        calls(&events),
        [
            ("read_file".to_owned(), json!({"path": "README.md"})),
            ("grep".to_owned(), json!({"pattern": "fn main"})),
        ]
    );
    assert_eq!(finish(&events), Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn responses_reasoning_is_shown_and_carried_without_its_id() {
    let server = ScriptedServer::start(vec![fixture("responses", "thinking.sse")]).await;
    let events = episode(on(Wire::Responses, &server), conversation()).await;
    assert!(!reasoning(&events).is_empty(), "{events:?}");
    let items = carried(&events);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["type"], "reasoning");
    assert!(items[0]["encrypted_content"].is_string());
    assert!(items[0].get("id").is_none());
    assert!(!content(&events).is_empty());
}

#[tokio::test]
async fn responses_failures_land_in_the_taxonomy() {
    let too_long = std::fs::read_to_string("tests/fixtures/wires/responses/too_long.json").unwrap();
    let server = ScriptedServer::start(vec![
        fixture("responses", "error_mid_stream.sse"),
        fixture("responses", "incomplete.sse"),
        fixture("responses", "context_failed.sse"),
        Reply::status(400, "application/json", &too_long),
    ])
    .await;
    let endpoint = on(Wire::Responses, &server);
    let events = episode(endpoint.clone(), conversation()).await;
    assert!(
        matches!(failure(&events), TransportError::InStream { .. }),
        "{events:?}"
    );
    let events = episode(endpoint.clone(), conversation()).await;
    assert_eq!(finish(&events), Some(FinishReason::Length));
    for _ in 0..2 {
        let events = episode(endpoint.clone(), conversation()).await;
        assert!(
            matches!(failure(&events), TransportError::ContextExceeded { .. }),
            "{events:?}"
        );
    }
}

/// A stream as a server sends it: `event: TYPE` and `data: JSON` per
/// event.
fn stream(events: &[Value]) -> Reply {
    let steps = events
        .iter()
        .map(|e| {
            let name = e["type"].as_str().unwrap();
            Step::Send(format!("event: {name}\ndata: {e}\n\n").into_bytes())
        })
        .collect();
    Reply::sse_steps(steps)
}

/// What imitations of these APIs send, and refusals that only look like
/// one of chat's: unsigned thinking is not sent back, arguments given
/// whole at a call's start are not taken twice, Anthropic's other
/// context-limit words compact, and a 400 about tools on a wire whose API
/// always has them is no reason to drop native tools.
#[tokio::test]
async fn imitations_and_lookalike_refusals() {
    let unsigned = stream(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_stop"}),
    ]);
    let limit = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"}});
    let pairing = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after"}});
    let server = ScriptedServer::start(vec![
        unsigned,
        Reply::status(400, "application/json", &limit.to_string()),
        Reply::status(400, "application/json", &pairing.to_string()),
    ])
    .await;
    let endpoint = on(Wire::Anthropic, &server);
    let events = episode(endpoint.clone(), conversation()).await;
    assert_eq!(reasoning(&events), "hm");
    assert!(carried(&events).is_empty(), "{events:?}");
    let events = episode(endpoint.clone(), conversation()).await;
    assert_eq!(learnt_window(&events), Some(Some(200_000)), "{events:?}");
    let events = episode(endpoint, conversation()).await;
    assert!(
        matches!(failure(&events), TransportError::BadRequest { .. }),
        "{events:?}"
    );

    let whole = stream(&[
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": "{\"pattern\":\"x\"}"}}),
        json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{\"pattern\":\"x\"}"}),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
    ]);
    let server = ScriptedServer::start(vec![whole]).await;
    let events = episode(on(Wire::Responses, &server), conversation()).await;
    assert_eq!(
        calls(&events),
        [("grep".to_owned(), json!({"pattern": "x"}))]
    );
}
