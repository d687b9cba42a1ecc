//! The same agent on every wire (ADR 0052): each scenario runs against the
//! scripted server speaking chat completions, OpenAI Responses and
//! Anthropic Messages in turn (`support::wires` writes the scripted chat
//! replies as each wire's stream and checks each request by that wire's
//! pairing rules), and must come out the same.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::llm::wires::Wire;
use dashfloat::protocol::{AgentEvent, ReplyEnd, UiCommand, Usage};
use serde_json::{Value, json};

use crate::support;
use support::agent::{AgentHarness, reply_text, setup, start_with, system_texts, tool_results};
use support::server::{
    Reply, ScriptedServer, content_chunk, reasoning_chunk, role_chunk, usage_chunk,
};

const WIRES: [Wire; 3] = [Wire::Chat, Wire::Responses, Wire::Anthropic];

/// An agent on `wire` against `server`, in `dir`, edits allowed.
fn agent(wire: Wire, server: &ScriptedServer, dir: &std::path::Path) -> AgentHarness {
    let mut s = setup(&server.base_url(), dir, ApprovalPolicy::AutoEdit);
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.context.wire = wire;
    }
    start_with(s)
}

fn usage(events: &[AgentEvent]) -> Option<Usage> {
    events.iter().rev().find_map(|e| match e {
        AgentEvent::Usage(u) => Some(*u),
        _ => None,
    })
}

#[tokio::test]
async fn a_reply_and_its_cache_figures_on_every_wire() {
    for wire in WIRES {
        let dir = tempfile::tempdir().unwrap();
        let mut cached = usage_chunk(900, 3);
        cached["usage"]["prompt_tokens_details"]["cached_tokens"] = json!(800);
        let server = ScriptedServer::speaking(
            wire,
            vec![Reply::sse([
                role_chunk(),
                content_chunk("Hello"),
                content_chunk(" there"),
                support::server::finish_chunk("stop"),
                cached,
            ])],
        )
        .await;
        let mut h = agent(wire, &server, dir.path());
        h.prompt("hi").await;
        let events = h.turn().await;
        assert_eq!(reply_text(&events), "Hello there", "{wire:?}");
        assert!(events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Complete)));
        let usage = usage(&events).unwrap_or_else(|| panic!("{wire:?}: no usage"));
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.cached_tokens,
                usage.completion_tokens
            ),
            (900, 800, 3),
            "{wire:?}"
        );
    }
}

/// A call, its result sent back paired, then parallel calls, each
/// answered: the requests each wire's own (checked by the server), the
/// conversation the same.
#[tokio::test]
async fn calls_and_their_results_on_every_wire() {
    for wire in WIRES {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let server = ScriptedServer::speaking(
            wire,
            vec![
                Reply::tool_call("c1", "read_file", &[r#"{"path":"#, r#""notes.txt"}"#]),
                Reply::tool_calls(&[
                    ("c2", "grep", r#"{"pattern":"beta"}"#),
                    ("c3", "list_directory", "{}"),
                ]),
                Reply::text(&["Read it."]),
            ],
        )
        .await;
        let mut h = agent(wire, &server, dir.path());
        h.prompt("read the notes").await;
        let events = h.turn().await;
        assert_eq!(reply_text(&events), "Read it.", "{wire:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{wire:?}");
        let results = tool_results(&requests[2].body);
        assert_eq!(results.len(), 3, "{wire:?}: {results:?}");
        assert!(results[0]["content"].as_str().unwrap().contains("beta"));
        assert!(
            results[1]["matches"]
                .as_str()
                .unwrap()
                .contains("notes.txt:2:beta")
        );
        assert_eq!(results[2]["ok"], true);
    }
}

/// An interrupted reply and a stream that broke off: the partial reply is
/// kept, every announced call answered, and the next prompt works.
#[tokio::test]
async fn an_interrupt_and_a_broken_stream_leave_the_session_usable_on_every_wire() {
    for wire in WIRES {
        let dir = tempfile::tempdir().unwrap();
        let server = ScriptedServer::speaking(
            wire,
            vec![
                Reply::sse([role_chunk(), content_chunk("partial ")]).hang_after(2),
                Reply::sse([role_chunk(), content_chunk("half")]).cut_after(2),
                Reply::text(&["fresh"]),
            ],
        )
        .await;
        let mut h = agent(wire, &server, dir.path());
        h.prompt("long one").await;
        h.until(|e| *e == AgentEvent::AssistantDelta("partial ".into()))
            .await;
        h.send(UiCommand::Cancel).await;
        let events = h.turn().await;
        assert!(
            events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Interrupted)),
            "{wire:?}"
        );
        h.prompt("again").await;
        let events = h.turn().await;
        assert!(
            events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Failed)),
            "{wire:?}: {events:#?}"
        );
        assert_eq!(system_texts(&events).len(), 1, "{wire:?}");
        h.prompt("next").await;
        let events = h.turn().await;
        assert_eq!(reply_text(&events), "fresh", "{wire:?}");
        let last = &server.requests()[2].body;
        let said: Vec<&str> = last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .filter_map(|m| m["content"].as_str())
            .collect();
        assert_eq!(said, ["partial ", "half"], "{wire:?}");
    }
}

/// What a wire requires be sent back with a reply goes back with it:
/// Anthropic's signed thinking, Responses' encrypted reasoning (chat
/// carries nothing).
#[tokio::test]
async fn reasoning_is_carried_back_on_the_wires_that_require_it() {
    for wire in WIRES {
        let dir = tempfile::tempdir().unwrap();
        let server = ScriptedServer::speaking(
            wire,
            vec![
                Reply::sse([
                    role_chunk(),
                    reasoning_chunk("look first"),
                    content_chunk("Looking."),
                    support::server::finish_chunk("stop"),
                ]),
                Reply::text(&["ok"]),
            ],
        )
        .await;
        let mut h = agent(wire, &server, dir.path());
        h.prompt("one").await;
        let events = h.turn().await;
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::ReasoningDelta(t) if t == "look first")),
            "{wire:?}"
        );
        h.prompt("two").await;
        h.turn().await;
        let raw: Value = serde_json::from_slice(&server.requests()[1].raw_body).unwrap();
        match wire {
            Wire::Chat => assert!(!raw.to_string().contains("carried"), "{raw}"),
            Wire::Anthropic => assert_eq!(
                raw["messages"][1]["content"][0],
                json!({"type": "thinking", "thinking": "look first", "signature": "c2lnbmVk"})
            ),
            Wire::Responses => assert_eq!(
                raw["input"][1],
                json!({"type": "reasoning", "summary": [], "encrypted_content": "enc0"})
            ),
        }
    }
}

/// A session records its wire; resumed on chat, what only the other wire
/// reads (its carried reasoning) is left out, and the person told.
#[tokio::test]
async fn a_session_resumed_on_chat_leaves_out_another_wires_reasoning() {
    use dashfloat::session::{OpenSession, SessionSetup, SessionStore};
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::at(home.path().join("sessions"));
    let saving = |open| SessionSetup {
        store: store.clone(),
        open,
        save: true,
        directory: "/projects/demo".to_string(),
        base_url: "http://127.0.0.1:1/v1".to_string(),
    };
    let server = ScriptedServer::speaking(
        Wire::Anthropic,
        vec![Reply::sse([
            role_chunk(),
            reasoning_chunk("think"),
            content_chunk("Thought."),
            support::server::finish_chunk("stop"),
        ])],
    )
    .await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.context.wire = Wire::Anthropic;
    }
    s.sessions = Some(saving(OpenSession::New));
    let mut h = start_with(s);
    h.prompt("one").await;
    h.turn().await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();

    let chat = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut s = setup(&chat.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.sessions = Some(saving(OpenSession::Continue));
    let mut h = start_with(s);
    let opened = h
        .until(|e| matches!(e, AgentEvent::System { text, .. } if text.contains("wire")))
        .await;
    assert!(
        system_texts(&opened).iter().any(|t| t
            == "this session spoke the anthropic wire: 1 reasoning items only that wire reads are left out on chat"),
        "{opened:#?}"
    );
    h.prompt("two").await;
    h.turn().await;
    let raw = String::from_utf8(chat.requests()[0].raw_body.clone()).unwrap();
    assert!(
        raw.contains("Thought.") && !raw.contains("carried"),
        "{raw}"
    );
}
