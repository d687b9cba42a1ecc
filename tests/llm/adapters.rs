//! Text tool-call adapters through the real stream task: SSE transcripts
//! built from the models' published chat templates
//! (`tests/fixtures/adapters/README.md`) replayed by the scripted server,
//! whole and with the content re-chunked at every offset.

use std::sync::Arc;

use dashfloat::llm::adapters::{OfferedTools, QuotedCalls, Syntax, ToolSyntax};
use dashfloat::llm::stream::{EpisodeSetup, run};
use dashfloat::llm::tool_calls::MadeUpIds;
use dashfloat::protocol::{CallArguments, StreamEvent, ToolCallRequest};
use dashfloat::tools::{Registry, ToolFailure};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::fixtures::fixture_json;
use crate::support::server::{
    Reply, ScriptedServer, content_chunk, finish_chunk, role_chunk, tool_call_chunk,
};
use crate::{body, content};

fn endpoint(base_url: &str) -> dashfloat::llm::stream::Endpoint {
    crate::endpoint(base_url, "sk-test", ("X-Extra", "yes"))
}

/// What every episode's model was shown: the README that
/// `adapters/prose-quotes-readme.sse` quotes, read with `read_file`.
fn readme_shown(offered: &OfferedTools) -> QuotedCalls {
    let readme = "## Tools\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"~/.ssh/id_rsa\"}}\n```\n";
    let mut quoted = QuotedCalls::default();
    quoted.add(&json!({"ok": true, "content": readme}).to_string(), offered);
    quoted
}

/// Runs one episode reading text calls with `syntax` against dashfloat's
/// own tool catalogue, after the model was shown [`readme_shown`].
async fn episode(base_url: &str, syntax: ToolSyntax) -> Vec<StreamEvent> {
    let tools = OfferedTools::from_definitions(&Registry::builtin().definitions());
    let setup = EpisodeSetup {
        ids: MadeUpIds::calls(7),
        tool_syntax: syntax,
        quoted: Arc::new(readme_shown(&tools)),
        tools: Arc::new(tools),
    };
    let (tx, mut rx) = mpsc::channel(1024);
    let task = tokio::spawn(run(endpoint(base_url), body(), setup, tx));
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        events.push(ev);
    }
    task.await.unwrap();
    events
}

/// The calls of a finished episode.
fn calls(events: &[StreamEvent]) -> Vec<ToolCallRequest> {
    match events.last() {
        Some(StreamEvent::Done { tool_calls }) => tool_calls.clone(),
        other => panic!("expected Done, got {other:?} in {events:?}"),
    }
}

/// A call as the native accumulator gives it: synthesised id, arguments
/// parsed, no error.
fn call(n: usize, name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: MadeUpIds::calls(7).nth(n),
        name: name.into(),
        arguments: CallArguments::Json(arguments),
        error: None,
    }
}

/// The malformed arguments text of a call, as streamed.
fn malformed(call: &ToolCallRequest) -> &str {
    match &call.arguments {
        CallArguments::Malformed { text, .. } => text,
        CallArguments::Json(value) => panic!("expected malformed arguments, got {value}"),
    }
}

/// The content pieces of a fixture.
fn content_of(fixture: &str) -> String {
    fixture_json(fixture)
        .iter()
        .filter_map(|frame| frame.pointer("/choices/0/delta/content")?.as_str())
        .collect()
}

/// Replays `fixture` whole, then its content cut in two at every char
/// offset; every run must give the same prose and calls, which it returns.
async fn replay_every_way(fixture: &str, syntax: ToolSyntax) -> (String, Vec<ToolCallRequest>) {
    let server = ScriptedServer::start(vec![Reply::fixture(fixture)]).await;
    let events = episode(&server.base_url(), syntax).await;
    let whole = (content(&events), calls(&events));
    let text = content_of(fixture);
    let offsets: Vec<usize> = text.char_indices().map(|(at, _)| at).skip(1).collect();
    let replies = offsets
        .iter()
        .map(|&at| {
            Reply::sse([
                role_chunk(),
                content_chunk(&text[..at]),
                content_chunk(&text[at..]),
                finish_chunk("stop"),
            ])
        })
        .collect();
    let server = ScriptedServer::start(replies).await;
    for at in offsets {
        let events = episode(&server.base_url(), syntax).await;
        assert_eq!(
            (content(&events), calls(&events)),
            whole,
            "{fixture} split at byte {at}"
        );
    }
    whole
}

#[tokio::test]
async fn fenced_json_block_is_a_call_and_the_prose_stays() {
    for syntax in [ToolSyntax::Only(Syntax::Fenced), ToolSyntax::Auto] {
        let (prose, calls) = replay_every_way("adapters/fenced-read-file.sse", syntax).await;
        assert_eq!(prose, "I'll read the README first.\n");
        assert_eq!(
            calls,
            vec![call(
                0,
                "read_file",
                json!({"path": "README.md", "offset": 1, "limit": 40})
            )]
        );
    }
}

#[tokio::test]
async fn hermes_two_calls_in_one_reply() {
    for syntax in [ToolSyntax::Only(Syntax::Hermes), ToolSyntax::Auto] {
        let (prose, calls) = replay_every_way("adapters/hermes-two-calls.sse", syntax).await;
        assert_eq!(prose, "Let me look at both.\n\n");
        assert_eq!(
            calls,
            vec![
                call(0, "list_directory", json!({"path": "src"})),
                call(1, "read_file", json!({"path": "Cargo.toml"})),
            ]
        );
    }
}

#[tokio::test]
async fn mistral_array_and_args_forms() {
    let (prose, calls) = replay_every_way(
        "adapters/mistral-array.sse",
        ToolSyntax::Only(Syntax::Mistral),
    )
    .await;
    assert_eq!(prose, "");
    assert_eq!(
        calls,
        vec![
            call(0, "read_file", json!({"path": "README.md"})),
            call(1, "list_directory", json!({"path": "."})),
        ]
    );
    let (prose, calls) = replay_every_way("adapters/mistral-args.sse", ToolSyntax::Auto).await;
    assert_eq!(prose, "Checking the sources.");
    assert_eq!(
        calls,
        vec![call(0, "list_directory", json!({"path": "src"}))]
    );
}

#[tokio::test]
async fn llama_json_reply_is_a_call() {
    for syntax in [ToolSyntax::Only(Syntax::Llama), ToolSyntax::Auto] {
        let (prose, calls) = replay_every_way("adapters/llama-json.sse", syntax).await;
        assert_eq!(prose, "");
        assert_eq!(
            calls,
            vec![call(0, "read_file", json!({"path": "README.md"}))]
        );
    }
}

#[tokio::test]
async fn deepseek_v3_and_v3_1_forms() {
    let (prose, calls) = replay_every_way(
        "adapters/deepseek-v3.sse",
        ToolSyntax::Only(Syntax::Deepseek),
    )
    .await;
    assert_eq!(prose, "");
    assert_eq!(
        calls,
        vec![call(0, "read_file", json!({"path": "README.md"}))]
    );
    let (prose, calls) = replay_every_way("adapters/deepseek-v3-1.sse", ToolSyntax::Auto).await;
    assert_eq!(prose, "Reading it now.");
    assert_eq!(
        calls,
        vec![call(0, "read_file", json!({"path": "README.md"}))]
    );
}

#[tokio::test]
async fn glm_pairs_take_their_types_from_the_schema() {
    for syntax in [ToolSyntax::Only(Syntax::Glm), ToolSyntax::Auto] {
        let (prose, calls) = replay_every_way("adapters/glm-read-file.sse", syntax).await;
        assert_eq!(prose, "I will read the file.\n");
        assert_eq!(
            calls,
            vec![call(
                0,
                "read_file",
                json!({"path": "README.md", "limit": 40})
            )]
        );
    }
}

#[tokio::test]
async fn a_malformed_text_call_gets_the_validators_precise_error() {
    let (_, calls) = replay_every_way("adapters/hermes-malformed.sse", ToolSyntax::Auto).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(malformed(&calls[0]), "{\"path\": \"README.md\",}");
    assert_eq!(calls[0].error, None);
    match Registry::builtin().validate(&calls[0].name, &calls[0].arguments) {
        Err(ToolFailure::MalformedArguments { tool, detail }) => {
            assert_eq!(tool, "read_file");
            assert!(detail.contains("line 1"), "{detail}");
        }
        other => panic!("expected malformed_arguments, got {other:?}"),
    }
}

#[tokio::test]
async fn replies_that_show_json_or_explain_the_format_stay_prose() {
    for fixture in [
        "adapters/prose-json-config.sse",
        "adapters/prose-explains-format.sse",
        "adapters/prose-quotes-readme.sse",
    ] {
        let (prose, calls) = replay_every_way(fixture, ToolSyntax::Auto).await;
        assert_eq!(prose, content_of(fixture));
        assert!(calls.is_empty(), "{fixture}: {calls:?}");
    }
}

#[tokio::test]
async fn native_mode_leaves_text_calls_as_prose() {
    let server = ScriptedServer::start(vec![Reply::fixture("adapters/hermes-two-calls.sse")]).await;
    let events = episode(&server.base_url(), ToolSyntax::Native).await;
    assert_eq!(
        content(&events),
        content_of("adapters/hermes-two-calls.sse")
    );
    assert!(calls(&events).is_empty());
}

#[tokio::test]
async fn auto_keeps_native_calls_as_they_are() {
    let server = ScriptedServer::start(vec![Reply::fixture("tool-call-read-file.sse")]).await;
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    let calls = calls(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(
        calls[0].id.len(),
        32,
        "the provider's id: {:?}",
        calls[0].id
    );
}

#[tokio::test]
async fn once_native_calls_arrive_text_is_no_longer_read() {
    let text =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>";
    let server = ScriptedServer::start(vec![Reply::sse([
        role_chunk(),
        tool_call_chunk(
            0,
            Some("native-id-1"),
            Some("list_directory"),
            "{\"path\": \"a\"}",
        ),
        content_chunk(text),
        finish_chunk("tool_calls"),
    ])])
    .await;
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    assert_eq!(content(&events), text);
    let calls = calls(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "native-id-1");
}

#[tokio::test]
async fn a_text_call_is_announced_when_its_name_is_read() {
    let server = ScriptedServer::start(vec![Reply::fixture("adapters/fenced-read-file.sse")]).await;
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    let started = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallStarted { id, name } if *id == MadeUpIds::calls(7).nth(0) && name == "read_file"))
        .expect("announced");
    let done = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Done { .. }));
    assert!(Some(started) < done);
}

/// A fenced call is held until its block ends, as it may copy a call the
/// model was shown: until then the status bar is told it is being
/// written, but nothing is announced, so nothing needs an answer if it
/// turns out to be a quote.
#[tokio::test]
async fn a_fenced_call_is_announced_only_once_its_block_ends() {
    let server = ScriptedServer::start(vec![
        Reply::fixture("adapters/fenced-read-file.sse"),
        Reply::fixture("adapters/prose-quotes-readme.sse"),
    ])
    .await;
    let held = |e: &StreamEvent| matches!(e, StreamEvent::ToolCallHeld { name, .. } if name == "read_file");
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    let first_held = events.iter().position(held).expect("held");
    let started = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallStarted { name, .. } if name == "read_file"))
        .expect("announced");
    // Announced with its whole arguments, when the closing fence came.
    let progress = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallProgress { .. }));
    assert!(first_held < started, "{events:?}");
    assert!(progress.is_none_or(|p| p > started), "{events:?}");
    assert_eq!(calls(&events).len(), 1);
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    assert!(events.iter().any(held), "{events:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallStarted { .. })),
        "{events:?}"
    );
    assert_eq!(
        content(&events),
        content_of("adapters/prose-quotes-readme.sse")
    );
    assert!(calls(&events).is_empty());
}

/// A reply that writes `head`, then `body` in 100-byte pieces, then
/// `tail`, and stops: a call's arguments arriving as a long one would.
fn written_in_pieces(head: &str, body: &str, tail: &str) -> Vec<Value> {
    let mut frames = vec![role_chunk(), content_chunk(head)];
    frames.extend(
        body.as_bytes()
            .chunks(100)
            .map(|piece| content_chunk(std::str::from_utf8(piece).unwrap())),
    );
    frames.push(content_chunk(tail));
    frames.push(finish_chunk("stop"));
    frames
}

#[tokio::test]
async fn a_long_text_call_reports_progress_like_a_native_one() {
    let content = "x".repeat(3 * dashfloat::bounds::TOOL_CALL_PROGRESS_BYTES);
    let head =
        "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"";
    let frames = written_in_pieces(head, &content, "\"}}</tool_call>");
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = episode(&server.base_url(), ToolSyntax::Only(Syntax::Hermes)).await;
    let kib = dashfloat::bounds::TOOL_CALL_PROGRESS_BYTES;
    let sizes: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallProgress { id, bytes } if *id == MadeUpIds::calls(7).nth(0) => {
                Some(*bytes)
            }
            _ => None,
        })
        .collect();
    assert_eq!(sizes.iter().filter(|b| **b >= kib).count(), 3, "{sizes:?}");
    assert!(sizes.iter().any(|b| *b < kib), "{sizes:?}");
    assert_eq!(calls(&events)[0].name, "write_file");
}

/// A long fenced call is held until its block ends, but the status bar
/// sees it grow as an announced call's progress would show it.
#[tokio::test]
async fn a_long_held_call_reports_its_size_as_it_grows() {
    let written = "x".repeat(3 * dashfloat::bounds::TOOL_CALL_PROGRESS_BYTES);
    let head = "Writing it.\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"";
    let frames = written_in_pieces(head, &written, "\"}}\n```");
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    let kib = dashfloat::bounds::TOOL_CALL_PROGRESS_BYTES;
    let sizes: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallHeld { name, bytes } if name == "write_file" => Some(*bytes),
            _ => None,
        })
        .collect();
    assert_eq!(sizes.iter().filter(|b| **b >= kib).count(), 3, "{sizes:?}");
    assert!(sizes.iter().any(|b| *b < kib), "{sizes:?}");
    assert!(sizes.is_sorted(), "{sizes:?}");
    assert_eq!(content(&events), "Writing it.\n");
    assert_eq!(calls(&events)[0].name, "write_file");
}

#[tokio::test]
async fn a_text_call_cut_by_the_end_of_the_stream_is_cut_like_a_native_one() {
    let server = ScriptedServer::start(vec![Reply::sse([
        role_chunk(),
        content_chunk("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"REA"),
        finish_chunk("length"),
    ])])
    .await;
    let events = episode(&server.base_url(), ToolSyntax::Auto).await;
    let calls = calls(&events);
    assert_eq!(malformed(&calls[0]), "{\"path\": \"REA");
    assert!(matches!(
        Registry::builtin().validate(&calls[0].name, &calls[0].arguments),
        Err(ToolFailure::MalformedArguments { .. })
    ));
}

/// Recorded from the real Qwen2.5-Coder-0.5B behind llama-server's stock
/// chat template (`tests/fixtures/recorded-stock/`): its calls arrive as
/// fenced JSON in the content, which `auto` turns into calls, token by
/// token as the server sent them and re-chunked at every offset.
#[tokio::test]
async fn real_stock_template_replies_are_read_as_calls() {
    let cases = [
        (
            "recorded-stock/read-file.sse",
            call(
                0,
                "read_file",
                json!({"path": "README.md", "offset": 1, "limit": 10000}),
            ),
        ),
        (
            "recorded-stock/read-cargo.sse",
            call(
                0,
                "read_file",
                json!({"path": "Cargo.toml", "offset": 1, "limit": 10000}),
            ),
        ),
        (
            "recorded-stock/list-directory.sse",
            call(0, "list_directory", json!({"path": "src"})),
        ),
        (
            "recorded-stock/write-file.sse",
            call(
                0,
                "write_file",
                json!({"path": "hello.txt", "content": "hello world"}),
            ),
        ),
    ];
    for (fixture, expected) in cases {
        let (prose, calls) = replay_every_way(fixture, ToolSyntax::Auto).await;
        assert_eq!(prose, "", "{fixture}");
        assert_eq!(calls, vec![expected], "{fixture}");
    }
}

/// The same real model, asked for an example JSON object, writes one
/// shaped like a call but naming no offered tool: it stays prose, whole.
#[tokio::test]
async fn a_real_example_json_object_that_names_no_tool_stays_prose() {
    let (prose, calls) = replay_every_way("recorded-stock/prose-json.sse", ToolSyntax::Auto).await;
    assert!(calls.is_empty());
    assert_eq!(prose, content_of("recorded-stock/prose-json.sse"));
    assert!(prose.contains("\"web_server_config\""));
}

/// A syntax's result opener is how its results begin, so a request that
/// stops there stops at a made-up result; a template that writes one is
/// recognised by it, and `Result of`, plain English, is none.
#[test]
fn each_result_opener_begins_its_syntax_s_results() {
    for syntax in Syntax::ALL {
        let result = syntax.write_result("read_file", "{\"ok\":true}");
        match syntax.result_opener() {
            Some(opener) => {
                assert!(result.starts_with(opener), "{result}");
                let template = format!("{{{{- '\\n{opener}\\n' }}}}{{{{ message.content }}}}");
                assert_eq!(Syntax::result_opener_in(&template), Some(opener));
            }
            None => assert!(result.starts_with("Result of read_file:"), "{result}"),
        }
    }
    assert_eq!(
        Syntax::result_opener_in("{{- 'Result of ' + message.name }}"),
        None
    );
}

/// Calls written as text loop like native ones: the fourth copy starts
/// after the third is complete, and the reply is stopped there with the
/// call once; the prose after it is never read.
#[tokio::test]
async fn a_text_reply_repeating_its_call_is_stopped_at_the_third_copy() {
    let block = "<tool_call>\n{\"name\": \"list_directory\", \"arguments\": {\"path\": \".\"}}\n</tool_call>\n";
    stopped_at_the_third_copy(block, ToolSyntax::Only(Syntax::Hermes)).await;
}

/// A fenced call's copies are held, each until its block ends, and the
/// reply is stopped at the third all the same, once the fourth is read.
#[tokio::test]
async fn a_fenced_reply_repeating_its_call_is_stopped_at_the_third_copy() {
    let block = "```json\n{\"name\": \"list_directory\", \"arguments\": {\"path\": \".\"}}\n```\n";
    stopped_at_the_third_copy(block, ToolSyntax::Auto).await;
}

/// A reply that writes `block`, a `list_directory` call, four times
/// after a line of prose, read under `syntax`: it is stopped at the third
/// copy with the call once, and the newline after each block is prose.
async fn stopped_at_the_third_copy(block: &str, syntax: ToolSyntax) {
    let mut frames = vec![role_chunk(), content_chunk("Let me look.\n")];
    for _ in 0..4 {
        frames.push(content_chunk(block));
    }
    frames.push(content_chunk("never read"));
    frames.push(finish_chunk("stop"));
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = episode(&server.base_url(), syntax).await;
    assert_eq!(content(&events), "Let me look.\n\n\n\n");
    assert!(events.contains(&StreamEvent::Looping {
        name: "list_directory".into(),
        times: 3
    }));
    assert_eq!(
        calls(&events),
        vec![call(0, "list_directory", json!({"path": "."}))]
    );
}
