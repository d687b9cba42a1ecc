//! The agent actor against a real scripted server: the conversation it
//! sends, what it tells the UI, and how every ending of a turn leaves the
//! conversation valid and the session usable.

use dashfloat::agent::{self, ApprovalPolicy};
use dashfloat::llm::discover::Questions;
use dashfloat::llm::stream::EndpointError;
use dashfloat::protocol::{AgentEvent, Phase, ReplyEnd, Severity, UiCommand, Usage};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support;
use support::agent::{AgentHarness, EVENT_WAIT, reply_text as text, setup, system_texts};
use support::server::{
    Reply, ScriptedServer, content_chunk, finish_chunk, role_chunk, usage_chunk,
};

/// An agent against `base_url`, its tools rooted in a fresh temp dir.
fn start(base_url: &str) -> AgentHarness {
    support::agent::start_in_temp(base_url, ApprovalPolicy::Ask)
}

fn roles(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

#[tokio::test]
async fn a_turn_streams_the_reply_and_ends_idle() {
    let server = ScriptedServer::start(vec![Reply::text(&["Hi", " there"])]).await;
    let mut h = start(&server.base_url());
    h.prompt("hello").await;
    let events = h.turn().await;
    assert_eq!(events[0], AgentEvent::Phase(Phase::Streaming));
    assert_eq!(text(&events), "Hi there");
    let n = events.len();
    assert!(events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Complete)));
    assert_eq!(events[n - 2], AgentEvent::Phase(Phase::Idle));
    assert_eq!(events[n - 1], AgentEvent::TurnDone);
}

#[tokio::test]
async fn a_prompt_over_the_bound_is_refused_and_the_next_one_is_sent() {
    use dashfloat::bounds::PROMPT_MAX_BYTES;
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start(&server.base_url());
    h.prompt(&"x".repeat(usize::try_from(PROMPT_MAX_BYTES).unwrap() + 1))
        .await;
    let events = h.turn().await;
    assert_eq!(
        system_texts(&events),
        ["a prompt holds at most 4 MiB; that one was not sent"]
    );
    assert!(server.requests().is_empty());
    h.prompt("hello").await;
    let events = h.turn().await;
    assert_eq!(text(&events), "ok");
    assert_eq!(roles(&server.requests()[0].body).last().unwrap().1, "hello");
}

/// Temperature, seed and the reply bound go with every request, the
/// compaction's summary request too: a reply cannot outgrow its reserve.
#[tokio::test]
async fn every_request_carries_the_sampling_settings_and_the_reply_bound() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["an answer"]),
        Reply::text(&["another"]),
        Reply::text(&["a summary"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut setup = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    setup.temperature = Some(0.5);
    setup.seed = Some(7);
    setup.max_output = Some(300);
    let mut h = support::agent::start_with(setup);
    h.prompt("one").await;
    h.turn().await;
    h.prompt("two").await;
    h.turn().await;
    h.send(UiCommand::Compact { focus: None }).await;
    h.turn().await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "two prompts and a summary request");
    for req in &reqs {
        assert_eq!(req.body["temperature"], json!(0.5));
        assert_eq!(req.body["seed"], json!(7));
        assert_eq!(req.body["max_tokens"], json!(300));
    }
}

#[tokio::test]
async fn the_conversation_grows_turn_by_turn() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("one").await;
    h.turn().await;
    h.prompt("two").await;
    h.turn().await;
    let reqs = server.requests();
    assert_eq!(
        roles(&reqs[0].body),
        pairs(&[("system", "system prompt"), ("user", "one")])
    );
    assert_eq!(
        roles(&reqs[1].body),
        pairs(&[
            ("system", "system prompt"),
            ("user", "one"),
            ("assistant", "first answer"),
            ("user", "two"),
        ])
    );
    assert_eq!(reqs[1].body["model"], json!("test-model"));
    assert!(reqs[1].body.get("temperature").is_none());
    assert!(reqs[1].body.get("seed").is_none());
    // The reply is bounded by the reserve: 1/8 of the 128,000-token window.
    assert_eq!(reqs[0].body["max_tokens"], json!(16_000));
    let tools: Vec<&str> = reqs[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "write_file",
            "edit_file",
            "execute_command",
            "list_directory",
            "glob",
            "grep"
        ]
    );
}

#[tokio::test]
async fn usage_arrives_before_the_phase_goes_idle() {
    let server = ScriptedServer::start(vec![Reply::sse([
        role_chunk(),
        content_chunk("x"),
        finish_chunk("stop"),
        usage_chunk(50, 5),
    ])])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("q").await;
    let events = h.turn().await;
    let usage = events
        .iter()
        .position(|e| {
            *e == AgentEvent::Usage(Usage {
                prompt_tokens: 50,
                completion_tokens: 5,
                total_tokens: 55,
                cached_tokens: 0,
            })
        })
        .expect("usage forwarded");
    let idle = events
        .iter()
        .position(|e| *e == AgentEvent::Phase(Phase::Idle))
        .unwrap();
    assert!(usage < idle);
}

#[tokio::test]
async fn cancel_keeps_the_partial_reply_and_the_next_prompt_works() {
    let server = ScriptedServer::start(vec![
        Reply::sse([role_chunk(), content_chunk("partial ")]).hang_after(2),
        Reply::text(&["fresh"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("long one").await;
    h.until(|e| *e == AgentEvent::AssistantDelta("partial ".into()))
        .await;
    h.send(UiCommand::Cancel).await;
    let rest = h.turn().await;
    assert!(rest.contains(&AgentEvent::AssistantEnd(ReplyEnd::Interrupted)));

    h.prompt("next").await;
    let events = h.turn().await;
    assert_eq!(text(&events), "fresh");
    let second = &server.requests()[1].body;
    assert_eq!(
        roles(second)[1..],
        pairs(&[
            ("user", "long one"),
            ("assistant", "partial "),
            ("user", "next")
        ])[..]
    );
}

#[tokio::test]
async fn a_failed_stream_keeps_the_partial_reply_and_reports_once() {
    let server = ScriptedServer::start(vec![
        Reply::sse([role_chunk(), content_chunk("half")])
            .unframed()
            .cut_after(2),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("go").await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Failed)));
    let errors = system_texts(&events);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("cut before it finished"));
    // The reply's end comes before the error entry, so the UI closes the
    // reply before adding the error under it.
    let end = events
        .iter()
        .position(|e| matches!(e, AgentEvent::AssistantEnd(_)))
        .unwrap();
    let err = events
        .iter()
        .position(|e| matches!(e, AgentEvent::System { .. }))
        .unwrap();
    assert!(end < err);

    h.prompt("again").await;
    h.turn().await;
    let second = &server.requests()[1].body;
    assert_eq!(roles(second)[2], ("assistant".into(), "half".into()));
}

#[tokio::test]
async fn an_http_error_is_a_chat_entry_and_the_session_stays_usable() {
    let server = ScriptedServer::start(vec![
        Reply::status(
            401,
            "application/json",
            r#"{"error":{"message":"bad key"}}"#,
        ),
        Reply::text(&["works now"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("first").await;
    let events = h.turn().await;
    let errors = system_texts(&events);
    assert!(errors[0].contains("OPENAI_API_KEY"), "{errors:?}");
    h.prompt("second").await;
    assert_eq!(text(&h.turn().await), "works now");
    // Nothing was invented between the two prompts; they go as one user
    // message, as strict chat templates want roles to alternate.
    let second = &server.requests()[1].body;
    assert_eq!(
        roles(second)[1..],
        pairs(&[("user", "first\n\nsecond")])[..]
    );
}

#[tokio::test]
async fn a_context_exceeded_error_with_nothing_to_compact_corrects_the_window_and_is_not_retried() {
    let server = ScriptedServer::start(vec![Reply::status(
        400,
        "application/json",
        r#"{"error":{"code":400,"message":"request (8885 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
    )])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("read everything").await;
    let events = h.turn().await;
    let facts: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::SessionFacts { .. }))
        .collect();
    assert_eq!(
        facts,
        [&AgentEvent::SessionFacts {
            model: None,
            context_window: Some(8192)
        }]
    );
    let errors = system_texts(&events);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("/compact") && errors[0].contains("/clear"),
        "{errors:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

/// Starts an agent that asks the server `questions` before the first
/// prompt, and waits for the prompt's turn.
async fn discovering_turn(server: &ScriptedServer, questions: Questions) -> Vec<AgentEvent> {
    let dir = tempfile::tempdir().unwrap();
    let mut setup = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    setup.questions = questions;
    let mut h = support::agent::start_with(setup);
    h.prompt("hi").await;
    h.turn().await
}

#[tokio::test]
async fn the_one_model_served_is_used_and_shown_with_its_window() {
    let server = ScriptedServer::start(vec![
        Reply::status(404, "text/plain", "Not Found"),
        Reply::status(
            200,
            "application/json",
            r#"{"object":"list","data":[{"id":"served-model","max_model_len":16384}]}"#,
        ),
        Reply::text(&["hello"]),
    ])
    .await;
    let ask_both = Questions {
        window: true,
        models: true,
        kind: false,
    };
    let events = discovering_turn(&server, ask_both).await;
    assert_eq!(
        events[0],
        AgentEvent::SessionFacts {
            model: Some("served-model".into()),
            context_window: Some(16_384)
        }
    );
    assert_eq!(text(&events), "hello");
    let chat = &server.requests()[2];
    assert_eq!(chat.body["model"], "served-model");
}

/// A server that answered llama.cpp's `/props` is asked how far it has
/// read each prompt, and its frames reach the UI until the reply starts.
#[tokio::test]
async fn llama_cpp_reports_how_far_it_has_read_the_prompt_until_the_reply_starts() {
    let progress = |processed: u64, ms: f64| json!({"choices": [], "prompt_progress": {"total": 5800, "cache": 1000, "processed": processed, "time_ms": ms}});
    let server = ScriptedServer::start(vec![
        Reply::status(
            200,
            "application/json",
            r#"{"default_generation_settings":{"n_ctx":8192}}"#,
        ),
        Reply::sse([
            progress(1000, 0.0),
            progress(3400, 20_000.0),
            content_chunk("hi"),
            progress(5800, 40_000.0),
            finish_chunk("stop"),
        ]),
    ])
    .await;
    let events = discovering_turn(
        &server,
        Questions {
            window: true,
            models: false,
            kind: false,
        },
    )
    .await;
    assert_eq!(server.requests()[1].body["return_progress"], json!(true));
    let reading: Vec<(u64, Option<u64>)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReadingPrompt(p) => Some((p.processed, p.remaining().map(|d| d.as_secs()))),
            _ => None,
        })
        .collect();
    // 2,400 tokens read in 20 s: the 2,400 left take 20 s more. The frame
    // after the first token is not shown.
    assert_eq!(reading, [(1000, None), (3400, Some(20))]);
    assert_eq!(text(&events), "hi");

    // A server that is not llama.cpp is never sent the field.
    let server = ScriptedServer::start(vec![
        Reply::status(404, "text/plain", "Not Found"),
        Reply::text(&["hi"]),
    ])
    .await;
    discovering_turn(
        &server,
        Questions {
            window: true,
            models: false,
            kind: false,
        },
    )
    .await;
    let chat = &server.requests()[1].body;
    assert!(chat.get("return_progress").is_none(), "{chat}");
    assert!(chat.get("stop").is_none(), "{chat}");
}

/// The 1.5B behind llama.cpp, whose template hands results back in
/// `<tool_response>` blocks, at times went on after its answer to write
/// one itself: a made-up result, shown to the person and kept in the
/// conversation. Every request now stops where one begins.
#[tokio::test]
async fn requests_stop_where_the_template_would_open_a_tool_result() {
    let props = json!({
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template": "{%- if message.role == \"tool\" %}{{- '<tool_response>\\n' }}"
    });
    let server = ScriptedServer::start(vec![
        Reply::status(200, "application/json", &props.to_string()),
        Reply::text(&["hi"]),
    ])
    .await;
    let window = Questions {
        window: true,
        models: false,
        kind: false,
    };
    discovering_turn(&server, window).await;
    assert_eq!(
        server.requests()[1].body["stop"],
        json!(["<tool_response>"])
    );
}

#[tokio::test]
async fn several_models_served_are_listed_with_how_to_choose() {
    let server = ScriptedServer::start(vec![
        Reply::status(
            200,
            "application/json",
            r#"{"data":[{"id":"alpha"},{"id":"beta"}]}"#,
        ),
        Reply::text(&["hello"]),
    ])
    .await;
    let ask_models = Questions {
        window: false,
        models: true,
        kind: false,
    };
    let events = discovering_turn(&server, ask_models).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::SessionFacts { .. })),
        "nothing learned: {events:?}"
    );
    let notes = system_texts(&events);
    assert!(
        notes[0].contains("alpha, beta") && notes[0].contains("--model NAME"),
        "{notes:?}"
    );
    assert_eq!(server.requests()[1].body["model"], "test-model");
}

#[tokio::test]
async fn an_empty_episode_says_the_model_returned_nothing() {
    let server =
        ScriptedServer::start(vec![Reply::sse([role_chunk(), finish_chunk("stop")])]).await;
    let mut h = start(&server.base_url());
    h.prompt("?").await;
    let events = h.turn().await;
    assert!(system_texts(&events).contains(&"[model returned nothing]".to_string()));
    assert!(
        !roles(&server.requests()[0].body)
            .iter()
            .any(|(r, _)| r == "assistant")
    );
}

#[tokio::test]
async fn a_cut_reply_at_the_length_limit_is_kept_with_a_notice() {
    let server = ScriptedServer::start(vec![Reply::sse([
        content_chunk("truncated tex"),
        finish_chunk("length"),
    ])])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("write a lot").await;
    let events = h.turn().await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("finish_reason: length"))
    );
    assert!(events.contains(&AgentEvent::AssistantEnd(ReplyEnd::Complete)));
}

#[tokio::test]
async fn a_retry_is_a_visible_notice() {
    let server = ScriptedServer::start(vec![
        Reply::status(503, "text/plain", "warming up").with_header("Retry-After", "0"),
        Reply::text(&["ready"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("hi").await;
    let events = h.turn().await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::System { severity: Severity::Notice, text } if text.contains("retrying")
    )));
    assert_eq!(text(&events), "ready");
}

#[tokio::test]
async fn quit_ends_the_agent_and_aborts_the_stream() {
    let server =
        ScriptedServer::start(vec![Reply::sse([content_chunk("forever")]).hang_after(1)]).await;
    let mut h = start(&server.base_url());
    h.prompt("hang").await;
    h.until(|e| matches!(e, AgentEvent::AssistantDelta(_)))
        .await;
    h.send(UiCommand::Quit).await;
    tokio::time::timeout(EVENT_WAIT, h.task)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_missing_client_is_reported_on_each_prompt() {
    let (commands, command_rx) = mpsc::channel(8);
    let (event_tx, mut events) = mpsc::channel(64);
    let dir = tempfile::tempdir().unwrap();
    let mut setup = setup("http://127.0.0.1:9/v1", dir.path(), ApprovalPolicy::Ask);
    // Any reqwest error stands in for a client that could not be built.
    let error =
        dashfloat::llm::build_client(std::time::Duration::from_secs(1), "http://127.0.0.1:9/v1")
            .unwrap()
            .get("no scheme")
            .build()
            .unwrap_err();
    setup.endpoint = Err(EndpointError::Client(error));
    tokio::spawn(agent::run(setup, command_rx, event_tx));
    commands
        .send(UiCommand::Prompt { text: "x".into() })
        .await
        .unwrap();
    let first = next_shown(&mut events).await;
    assert!(
        matches!(
            &first,
            AgentEvent::System {
                severity: Severity::Error,
                text,
            } if text.starts_with("cannot set up the HTTP client: ")
        ),
        "{first:?}"
    );
    assert_eq!(
        next_shown(&mut events).await,
        AgentEvent::Phase(Phase::Idle)
    );
    assert_eq!(next_shown(&mut events).await, AgentEvent::TurnDone);
}

/// The next event but the project's file listing and custom commands,
/// whose place among the others is not fixed.
async fn next_shown(events: &mut mpsc::Receiver<AgentEvent>) -> AgentEvent {
    loop {
        match events.recv().await.unwrap() {
            AgentEvent::ProjectFiles(_) | AgentEvent::CustomCommands { .. } => {}
            event => return event,
        }
    }
}

#[tokio::test]
async fn the_log_notes_requests_replies_and_errors_but_never_the_key() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["fine"]),
        Reply::status(500, "text/plain", "boom"),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("session.log");
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.log = dashfloat::log::Log::to_file(&log_path).unwrap();
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.api_key = Some("sk-secret-value".into());
    }
    let mut h = support::agent::start_with(s);
    h.prompt("one").await;
    h.turn().await;
    h.prompt("two").await;
    h.turn().await;
    drop(h);
    // The writer task flushes as lines arrive.
    let log = support::log_text(&log_path, support::WAIT, |t| t.contains("HTTP 500")).await;
    assert!(log.contains("prompt: 3 bytes"), "{log}");
    assert!(log.contains("request: step 1"), "{log}");
    assert!(log.contains("reply: Complete"), "{log}");
    assert!(log.contains("HTTP 500"), "{log}");
    assert!(!log.contains("sk-secret-value"));
}

#[tokio::test]
async fn a_task_that_panics_is_told_with_its_message() {
    // No input is known to panic a task any more; this is the path every
    // task's JoinError takes into the chat (the agent's own and a stream's).
    let panicked = tokio::spawn(async { panic!("the task broke on 1e20") })
        .await
        .unwrap_err();
    let text = agent::task_failure("stream", &panicked);
    assert!(text.contains("the stream task"), "{text}");
    assert!(text.contains("the task broke on 1e20"), "{text}");
}

/// After each request the agent sends the session's totals (ADR 0052):
/// what `/status` and the cost read.
#[tokio::test]
async fn the_sessions_totals_follow_every_request() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("c1", "list_directory", &["{}"]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start(&server.base_url());
    h.prompt("look around").await;
    let events = h.turn().await;
    let totals: Vec<Usage> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Totals(t) => Some(*t),
            _ => None,
        })
        .collect();
    // Each scripted reply reports 12 prompt tokens and one per piece.
    assert_eq!(
        totals
            .iter()
            .map(|t| (t.prompt_tokens, t.completion_tokens))
            .collect::<Vec<_>>(),
        [(12, 1), (24, 2)]
    );
}
