//! Context management against the scripted server (ADR 0021): the budget
//! prunes and then summarises at the threshold, a provider's
//! context-exceeded 400 compacts (the turn's own results cut to the window
//! it states) and retries once, Esc during a summary
//! changes nothing, a result too big for the budget is cut, `/compact`
//! runs on demand, and between compactions every request starts with the
//! previous one's bytes. Replies carry no usage frame, so the estimate is
//! the request's bytes at the starting ratio; every request body is
//! pairing-checked by the server.

use std::path::Path;

use dashfloat::agent::ApprovalPolicy;

use dashfloat::bounds::{PRUNED_TAIL, RESULT_CUT_MIN_BYTES, SUMMARY_PREFIX, SUMMARY_PROMPT};
use dashfloat::protocol::{AgentEvent, Phase, Severity, UiCommand};
use serde_json::Value;

use crate::support;
use support::agent::{AgentHarness, setup, start_with, system_texts};
use support::server::{
    Recorded, Reply, ScriptedServer, Step, content_chunk, finish_chunk, role_chunk, sse_frame,
};

/// An agent with a `window`-token context and `max_output` reserved for
/// the reply, its tools rooted at `root`.
fn start(
    server: &ScriptedServer,
    root: &Path,
    approval: ApprovalPolicy,
    window: u64,
    max_output: u64,
) -> AgentHarness {
    let mut setup = setup(&server.base_url(), root, approval);
    setup.context_window = window;
    setup.max_output = Some(max_output);
    start_with(setup)
}

/// A whole reply with no usage frame.
fn plain(text: &str) -> Reply {
    Reply::sse([role_chunk(), content_chunk(text), finish_chunk("stop")])
}

/// One `read_file` call (no usage frame).
fn read(id: &str, path: &str) -> Reply {
    Reply::tool_calls(&[(id, "read_file", &format!(r#"{{"path":"{path}"}}"#))])
}

/// A reply that starts and then stalls until the server is dropped.
fn stalled() -> Reply {
    Reply::sse_steps(vec![Step::Send(sse_frame(&role_chunk())), Step::Hang])
}

/// A file of `lines` lines of 79 letters.
fn write_lines(dir: &Path, name: &str, lines: usize) {
    let line = format!("{}\n", "a".repeat(79));
    std::fs::write(dir.join(name), line.repeat(lines)).unwrap();
}

fn messages(request: &Recorded) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap_or("")
}

/// The request's bytes up to the end of its messages.
fn prefix(request: &Recorded) -> &[u8] {
    let raw = &request.raw_body;
    let end = raw
        .windows(11)
        .position(|w| w == b"],\"stream\":")
        .expect("messages end");
    &raw[..end]
}

/// The text of a pruned result, if the message is one.
fn pruned(message: &Value) -> Option<String> {
    let answer: Value = serde_json::from_str(content(message)).ok()?;
    answer["pruned"].as_str().map(str::to_string)
}

fn notices(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::System {
                severity: Severity::Notice,
                text,
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn errors(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::System {
                severity: Severity::Error,
                text,
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn past_the_threshold_old_results_are_pruned_deep_and_the_prefix_then_holds() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        write_lines(dir.path(), name, 250);
    }
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read a"),
        read("rb", "b.txt"),
        plain("read b"),
        read("rc", "c.txt"),
        plain("read c"),
        plain("you are welcome"),
    ])
    .await;
    // 20,000 tokens, 2,000 for the reply: compaction past 16,000, pruning
    // down to 10,000. Each file is about 5,800 tokens.
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 20_000, 2_000);
    for prompt in ["read a", "read b"] {
        h.prompt(prompt).await;
        let events = h.turn().await;
        assert!(notices(&events).is_empty(), "{events:#?}");
    }
    h.prompt("read c").await;
    let events = h.turn().await;
    let said = notices(&events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("compacted the conversation: pruned 2 old tool results; about "),
        "{said:?}"
    );
    assert!(!events.contains(&AgentEvent::Phase(Phase::Compacting)));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacted { estimate } if *estimate > 0 && *estimate <= 10_000)),
        "the status bar learns the new size: {events:#?}"
    );
    h.prompt("thanks").await;
    h.turn().await;

    let requests = server.requests();
    assert_eq!(requests.len(), 7);
    let sent = messages(&requests[5]);
    let results: Vec<&Value> = sent.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 3, "pairing never changes");
    assert_eq!(
        pruned(results[0]).unwrap(),
        format!(r#"read_file {{"path":"a.txt"}}: 19 KB {PRUNED_TAIL}"#)
    );
    assert_eq!(
        pruned(results[1]).unwrap(),
        format!(r#"read_file {{"path":"b.txt"}}: 19 KB {PRUNED_TAIL}"#)
    );
    assert!(
        content(results[2]).starts_with(r#"{"ok":true,"path":"c.txt""#),
        "the current turn's result is never pruned"
    );
    assert_eq!(content(&sent[0]), "system prompt");
    // Before and after the prune, each request starts with the bytes of
    // the one before it.
    for pair in [(0, 1), (1, 2), (2, 3), (3, 4), (5, 6)] {
        assert!(
            requests[pair.1]
                .raw_body
                .starts_with(prefix(&requests[pair.0])),
            "request {} does not start with request {}",
            pair.1,
            pair.0
        );
    }
    assert!(!requests[5].raw_body.starts_with(prefix(&requests[4])));
}

#[tokio::test]
async fn when_pruning_is_not_enough_older_turns_are_summarised_and_later_folded_in() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        plain("one"),
        plain("two"),
        plain("SUMMARY ONE"),
        plain("three"),
        plain("four"),
        plain("SUMMARY TWO"),
        plain("five"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 20_000, 2_000);
    // About 6,300 tokens each: the third passes the threshold, and only
    // the last prompt fits in half the budget.
    let long = |n: usize| format!("prompt {n}: {}", "word ".repeat(4_400));
    for n in 1..=2 {
        h.prompt(&long(n)).await;
        h.turn().await;
    }
    h.prompt(&long(3)).await;
    let events = h.turn().await;
    let compacting = events
        .iter()
        .position(|e| *e == AgentEvent::Phase(Phase::Compacting))
        .expect("compacting phase");
    let streaming = events
        .iter()
        .position(|e| *e == AgentEvent::Phase(Phase::Streaming))
        .expect("the request after it");
    assert!(compacting < streaming);
    let said = notices(&events);
    assert!(
        said[0].starts_with("compacted the conversation: summarised 4 earlier messages; about "),
        "{said:?}"
    );
    assert!(
        !support::agent::reply_text(&events).contains("SUMMARY"),
        "the summary streams out of sight"
    );

    let requests = server.requests();
    let summary_request = &requests[2].body;
    assert!(summary_request.get("tools").is_none());
    let asked = summary_request["messages"].as_array().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(content(&asked[0]), SUMMARY_PROMPT);
    let transcript = content(&asked[1]);
    assert!(transcript.contains("Person: prompt 1:"));
    assert!(transcript.contains("Agent: one"));
    assert!(transcript.contains("Person: prompt 2:"));
    assert!(
        !transcript.contains("prompt 3:"),
        "kept verbatim, not summarised"
    );

    // The summary and the kept prompt after it go as one user message.
    let after = messages(&requests[3]);
    assert_eq!(after.len(), 2);
    assert_eq!(content(&after[0]), "system prompt");
    assert_eq!(
        content(&after[1]),
        format!("{SUMMARY_PREFIX}SUMMARY ONE\n\n{}", long(3))
    );

    h.prompt(&long(4)).await;
    h.turn().await;
    h.prompt(&long(5)).await;
    h.turn().await;
    let requests = server.requests();
    let transcript = content(&requests[5].body["messages"][1]).to_string();
    assert!(
        transcript.contains("Summary of what came before:\nSUMMARY ONE"),
        "the earlier summary is folded in"
    );
    assert!(transcript.contains("Person: prompt 3:"));
    let after = messages(&requests[6]);
    assert_eq!(after.len(), 2);
    assert_eq!(
        content(&after[1]),
        format!("{SUMMARY_PREFIX}SUMMARY TWO\n\n{}", long(5))
    );
}

/// The context-exceeded 400 bodies of llama.cpp, OpenAI and vLLM.
const WALLS: [&str; 3] = [
    r#"{"error":{"code":400,"message":"request (8885 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
    r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8885 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    r#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 8885 tokens (7885 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}"#,
];

fn wall(body: &str) -> Reply {
    Reply::status(400, "application/json", body)
}

#[tokio::test]
async fn a_context_exceeded_400_in_each_providers_shape_compacts_and_retries_once() {
    for body in WALLS {
        let dir = tempfile::tempdir().unwrap();
        write_lines(dir.path(), "a.txt", 40);
        let server = ScriptedServer::start(vec![
            read("ra", "a.txt"),
            plain("read it"),
            wall(body),
            plain("fits now"),
        ])
        .await;
        let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
        h.prompt("read a").await;
        h.turn().await;
        h.prompt("and now?").await;
        let events = h.turn().await;
        assert!(errors(&events).is_empty(), "{body}: {events:#?}");
        assert!(
            events.contains(&AgentEvent::SessionFacts {
                model: None,
                context_window: Some(8192)
            }),
            "{body}"
        );
        let said = notices(&events);
        assert!(said[0].contains("did not fit"), "{body}: {said:?}");
        assert!(
            said[1].contains("pruned 1 old tool results"),
            "{body}: {said:?}"
        );
        assert_eq!(support::agent::reply_text(&events), "fits now", "{body}");
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{body}: retried once");
        let retried = messages(&requests[3]);
        assert!(
            pruned(&retried[3]).unwrap().ends_with(PRUNED_TAIL),
            "{body}"
        );
        assert_eq!(content(retried.last().unwrap()), "and now?");
    }
}

/// After a compaction the model has only a summary or a pruned marker of
/// the files it read before: replacing one whole needs another read, even
/// where writes are not asked about (ADR 0030).
#[tokio::test]
async fn after_compacting_a_file_read_before_must_be_read_again_to_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 40);
    let before = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
    let write = Reply::tool_calls(&[(
        "wa",
        "write_file",
        r#"{"path":"a.txt","content":"only this\n"}"#,
    )]);
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read it"),
        plain("fine"),
        plain("SUMMARY"),
        write,
        plain("done"),
    ])
    .await;
    let mut h = start(
        &server,
        dir.path(),
        ApprovalPolicy::AutoEdit,
        128_000,
        16_000,
    );
    for prompt in ["read a", "ok"] {
        h.prompt(prompt).await;
        h.turn().await;
    }
    h.send(UiCommand::Compact { focus: None }).await;
    h.turn().await;
    // Words that name no file: nothing is read for the model (ADR 0038).
    h.prompt("add a line to it").await;
    h.turn().await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        before
    );
    let sent = messages(&server.requests()[5]);
    let result = sent.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        content(result).contains("you have not read it"),
        "{}",
        content(result)
    );
}

/// The step after a repeat asks for an answer; when that request does not
/// fit, the retry after compacting still asks for one.
#[tokio::test]
async fn the_retry_after_a_wall_still_asks_for_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 40);
    std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read it"),
        read("rb", "b.txt"),
        read("rb2", "b.txt"),
        wall(WALLS[0]),
        plain("it says beta"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
    h.prompt("read a").await;
    h.turn().await;
    h.prompt("and b?").await;
    let events = h.turn().await;
    assert_eq!(support::agent::reply_text(&events), "it says beta");
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    let asks = |i: usize| requests[i].body["tool_choice"] == "none";
    assert!(!asks(3), "the repeat itself is a call");
    assert!(asks(4), "the step after the repeat asks for an answer");
    assert!(asks(5), "and so does its retry");
}

#[tokio::test]
async fn a_second_context_exceeded_400_in_the_turn_shows_the_entry_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 40);
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read it"),
        wall(WALLS[0]),
        wall(WALLS[0]),
        plain("still here"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
    h.prompt("read a").await;
    h.turn().await;
    h.prompt("and now?").await;
    let events = h.turn().await;
    let shown = errors(&events);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("/compact") && shown[0].contains("/clear"),
        "{shown:?}"
    );
    assert_eq!(server.requests().len(), 4, "never an endless loop");
    h.prompt("hello?").await;
    assert_eq!(support::agent::reply_text(&h.turn().await), "still here");
}

#[tokio::test]
async fn esc_during_a_summary_leaves_the_conversation_exactly_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 250);
    write_lines(dir.path(), "b.txt", 250);
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read a"),
        read("rb", "b.txt"),
        plain("read b"),
        stalled(),
        plain("fine"),
    ])
    .await;
    // About 13,000 tokens after two reads: under the threshold, over the
    // prune target, so /compact would prune the first read too.
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 20_000, 2_000);
    h.prompt("read a").await;
    h.turn().await;
    h.prompt("read b").await;
    h.turn().await;
    h.send(UiCommand::Compact { focus: None }).await;
    h.until(|e| *e == AgentEvent::Phase(Phase::Compacting))
        .await;
    server.wait_requests(5, support::WAIT).await;
    h.send(UiCommand::Cancel).await;
    let events = h.turn().await;
    assert!(
        notices(&events)
            .contains(&"compaction cancelled; the conversation is unchanged".to_string()),
        "{events:#?}"
    );
    assert!(events.contains(&AgentEvent::Phase(Phase::Idle)));
    h.prompt("next").await;
    h.turn().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    assert!(requests[5].raw_body.starts_with(prefix(&requests[3])));
    let sent = messages(&requests[5]);
    assert!(sent.iter().all(|m| pruned(m).is_none()));
    assert_eq!(content(sent.last().unwrap()), "next");
}

#[tokio::test]
async fn compact_with_a_focus_summarises_all_but_the_last_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        plain("first"),
        plain("second"),
        plain("SUMMARY"),
        plain("third"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
    h.prompt("one").await;
    h.turn().await;
    h.prompt("two").await;
    h.turn().await;
    h.send(UiCommand::Compact {
        focus: Some("the parser bug".into()),
    })
    .await;
    let events = h.turn().await;
    assert_eq!(events[0], AgentEvent::Phase(Phase::Compacting));
    let said = notices(&events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("summarised 2 earlier messages"),
        "{said:?}"
    );
    h.prompt("three").await;
    h.turn().await;

    let requests = server.requests();
    let transcript = content(&requests[2].body["messages"][1]);
    assert!(
        transcript.contains("Person: one\n\nAgent: first"),
        "{transcript}"
    );
    assert!(
        transcript.ends_with("keep this in focus: the parser bug"),
        "{transcript}"
    );
    let after: Vec<(String, String)> = messages(&requests[3])
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                content(m).to_string(),
            )
        })
        .collect();
    let expected = [
        ("system", "system prompt".to_string()),
        ("user", format!("{SUMMARY_PREFIX}SUMMARY\n\ntwo")),
        ("assistant", "second".to_string()),
        ("user", "three".to_string()),
    ];
    assert_eq!(
        after,
        expected
            .iter()
            .map(|(r, c)| (r.to_string(), c.clone()))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn compact_refuses_when_there_is_nothing_to_compact_or_a_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![plain("only"), stalled()]).await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
    h.send(UiCommand::Compact { focus: None }).await;
    let said = notices(&h.turn().await);
    assert!(said[0].starts_with("nothing to compact yet"), "{said:?}");
    h.prompt("one").await;
    h.turn().await;
    h.send(UiCommand::Compact { focus: None }).await;
    let said = notices(&h.turn().await);
    assert!(
        said[0].starts_with("nothing to compact yet"),
        "one turn: {said:?}"
    );

    h.prompt("two").await;
    server.wait_requests(2, support::WAIT).await;
    h.send(UiCommand::Compact { focus: None }).await;
    let events = h.until(|e| matches!(e, AgentEvent::System { .. })).await;
    assert!(
        system_texts(&events)[0].starts_with("the agent is busy; /compact waits"),
        "{events:#?}"
    );
    h.send(UiCommand::Cancel).await;
    h.turn().await;
    assert_eq!(server.requests().len(), 2, "no summary was asked for");
}

#[tokio::test]
async fn a_file_bigger_than_the_budget_is_cut_with_the_offset_to_read_on() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=1000)
        .map(|n| format!("line {n:04} {}\n", "x".repeat(48)))
        .collect();
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    let server =
        ScriptedServer::start(vec![read("rbig", "big.txt"), plain("read the start")]).await;
    // 6,000 tokens, 1,000 for the reply: about 3,600 left for a 60 KB
    // file (17,000 tokens), which is cut to half of that.
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 6_000, 1_000);
    h.prompt("read big.txt").await;
    h.turn().await;
    let requests = server.requests();
    let sent = messages(&requests[1]);
    let result: Value = serde_json::from_str(content(&sent[3])).unwrap();
    let kept = result["content"].as_str().unwrap();
    assert!(kept.len() < 8 * 1024, "{} bytes", kept.len());
    assert!(kept.len() > 4 * 1024, "{} bytes", kept.len());
    let lines = result["lines"].as_u64().unwrap();
    assert!(kept.starts_with("line 0001 "));
    assert!(
        kept.ends_with(&format!(
            "[cut to fit the model's context window: showed {lines} lines from line 1; read on with offset={} and a smaller limit]",
            lines + 1
        )),
        "{kept}"
    );
    assert_eq!(result["truncated"], true);
    assert!(kept.contains(&format!("line {lines:04} ")));
    assert!(!kept.contains(&format!("line {:04} ", lines + 1)));
}

#[tokio::test]
async fn command_output_bigger_than_the_budget_is_cut_with_advice_to_narrow_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("c1", "execute_command", r#"{"command":"seq 1 20000"}"#)]),
        plain("many numbers"),
    ])
    .await;
    let mut h = start(
        &server,
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
        6_000,
        1_000,
    );
    h.prompt("count").await;
    h.turn().await;
    let sent = messages(&server.requests()[1]);
    let result: Value = serde_json::from_str(content(&sent[3])).unwrap();
    let output = result["output"].as_str().unwrap();
    assert!(output.starts_with("1\n2\n3\n"));
    assert!(output.len() < 8 * 1024, "{} bytes", output.len());
    assert!(output.ends_with(
        "bytes to fit the model's context window; narrow the command (grep, head, tail, a smaller scope) to see the rest]"
    ), "{output}");
    assert_eq!(result["truncated"], true);
}

#[tokio::test]
async fn a_full_window_still_keeps_the_smallest_cut_of_a_result() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 250);
    let server = ScriptedServer::start(vec![read("ra", "a.txt"), plain("ok")]).await;
    // 1,700 tokens, 400 for the reply: the system prompt and tools leave
    // almost nothing, yet the cut keeps RESULT_CUT_MIN_BYTES.
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 1_700, 400);
    h.prompt("read a").await;
    h.turn().await;
    let sent = messages(&server.requests()[1]);
    let result: Value = serde_json::from_str(content(&sent[3])).unwrap();
    let kept = result["content"].as_str().unwrap();
    let (head, marker) = kept.split_at(kept.find("[cut to fit").unwrap());
    assert_eq!(
        head.len(),
        RESULT_CUT_MIN_BYTES / 80 * 80,
        "whole lines within the floor"
    );
    assert!(marker.contains("read on with offset=13 "), "{marker}");
}

#[tokio::test]
async fn results_of_one_turn_together_fit_the_window() {
    // Nothing of the turn in progress can be compacted: four 12 KB files
    // read in one round (here, named in the prompt: ADR 0038) must fit
    // the window together, not each on its own. (Each result keeps at
    // least RESULT_CUT_MIN_BYTES, so the last ones may take some of the
    // reply's share.)
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        write_lines(dir.path(), name, 150);
    }
    let server = ScriptedServer::start(vec![plain("compared")]).await;
    let window: u32 = 8_192;
    let mut h = start(
        &server,
        dir.path(),
        ApprovalPolicy::Ask,
        window.into(),
        1_024,
    );
    h.prompt("compare a.txt, b.txt, c.txt and d.txt").await;
    let events = h.turn().await;
    assert!(errors(&events).is_empty(), "{events:#?}");
    let body = &server.requests()[0].raw_body;
    let estimate = body.len() as f64 / dashfloat::bounds::BYTES_PER_TOKEN_START;
    assert!(
        estimate <= f64::from(window),
        "{} bytes, about {estimate:.0} tokens",
        body.len()
    );
}

#[tokio::test]
async fn without_compaction_every_request_starts_with_the_bytes_of_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 10);
    let server = ScriptedServer::start(vec![
        read("r1", "a.txt"),
        plain("done"),
        Reply::tool_calls(&[
            ("r2", "read_file", r#"{"path":"a.txt"}"#),
            ("r3", "list_directory", r#"{}"#),
        ]),
        plain("done again"),
        plain("bye"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 128_000, 16_000);
    for prompt in ["read", "read and list", "bye"] {
        h.prompt(prompt).await;
        let events = h.turn().await;
        assert!(notices(&events).is_empty());
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    for n in 1..requests.len() {
        assert!(
            requests[n].raw_body.starts_with(prefix(&requests[n - 1])),
            "request {n}"
        );
    }
}

/// Two turns, `/compact` with `summary` as the model's summary reply, and
/// a third turn: the compaction's events, and what the third request sent
/// as the summary.
async fn compact_with(summary: Reply) -> (Vec<AgentEvent>, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        plain("first"),
        plain("second"),
        summary,
        plain("third"),
    ])
    .await;
    // 6,000 tokens, 1,000 for the reply: a summary keeps at most 1,250
    // tokens, 4,375 bytes before any usage report.
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 6_000, 1_000);
    for prompt in ["one", "two"] {
        h.prompt(prompt).await;
        h.turn().await;
    }
    h.send(UiCommand::Compact { focus: None }).await;
    let events = h.turn().await;
    h.prompt("three").await;
    h.turn().await;
    // The summary is sent joined with the kept prompt.
    let sent = messages(&server.requests()[3]);
    let summary = content(&sent[1]).strip_suffix("\n\ntwo").unwrap();
    (events, summary.to_string())
}

/// The summary kept of `total` bytes of `s`: the bound's worth of them.
fn summary_cut_from(total: usize) -> String {
    use dashfloat::bounds::SUMMARY_MAX_DIVISOR;
    let kept = (5_000 / SUMMARY_MAX_DIVISOR) as f64 * 3.5;
    format!(
        "{SUMMARY_PREFIX}{}… [{total} bytes in all]",
        "s".repeat(kept as usize)
    )
}

#[tokio::test]
async fn a_runaway_summary_is_cut_to_a_quarter_of_the_prompt_budget() {
    let (_, summary) = compact_with(plain(&"s".repeat(10_000))).await;
    assert_eq!(summary, summary_cut_from(10_000));
}

#[tokio::test]
async fn a_summary_that_runs_past_its_bound_is_stopped_there_and_kept() {
    // The summary passes its bound and then never ends: nothing past the
    // bound is kept, so the agent neither buffers nor waits for more.
    let runaway = Reply::sse_steps(vec![
        Step::Send(sse_frame(&role_chunk())),
        Step::Send(sse_frame(&content_chunk(&"s".repeat(5_000)))),
        Step::Hang,
    ]);
    let (events, summary) = compact_with(runaway).await;
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.starts_with("compacted the conversation")),
        "{events:#?}"
    );
    assert_eq!(summary, summary_cut_from(5_000));
}

#[tokio::test]
async fn one_compaction_prunes_first_and_summarises_when_that_is_not_enough() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 200);
    let server = ScriptedServer::start(vec![
        read("ra", "a.txt"),
        plain("read a"),
        plain("two"),
        plain("SUMMARY"),
        plain("three"),
    ])
    .await;
    let mut h = start(&server, dir.path(), ApprovalPolicy::Ask, 20_000, 2_000);
    // About 7,700 tokens a prompt and 4,600 for the file (2,600 for the
    // system prompt and the tools): the second prompt stays under 16,000,
    // the third passes it even with the file pruned.
    let long = |n: usize| format!("prompt {n}: {}", "word ".repeat(5_400));
    h.prompt("read a").await;
    h.turn().await;
    h.prompt(&long(2)).await;
    assert!(notices(&h.turn().await).is_empty());
    h.prompt(&long(3)).await;
    let events = h.turn().await;
    let said = notices(&events);
    assert!(
        said[0].starts_with(
            "compacted the conversation: pruned 1 old tool results, summarised 6 earlier messages; about "
        ),
        "{said:?}"
    );
    let requests = server.requests();
    let transcript = content(&requests[3].body["messages"][1]);
    assert!(
        transcript.contains(&format!(
            r#"Result of read_file: {{"pruned":"read_file {{\"path\":\"a.txt\"}}: 15 KB {PRUNED_TAIL}"}}"#
        )),
        "the summary sees the pruned result: {}",
        &transcript[..300]
    );
    let after = messages(&requests[4]);
    assert_eq!(after.len(), 2);
    assert_eq!(
        content(&after[1]),
        format!("{SUMMARY_PREFIX}SUMMARY\n\n{}", long(3))
    );
}

/// What llama.cpp says of a request past its window: 8,192 tokens.
const LEARNT_WALL: &str = r#"{"error":{"code":400,"message":"request (34000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#;

/// The tool messages a request carried, as the JSON the model reads.
fn results(request: &Recorded) -> Vec<Value> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(content(m)).unwrap())
        .collect()
}

/// A server that states no window answers a turn that read two 56 KB
/// files (sent whole: 128,000 tokens were assumed) with a context-exceeded
/// error naming 8,192 tokens, then `after`. The agent saves into `store`.
async fn two_reads_then_the_wall(
    store: &dashfloat::session::SessionStore,
    after: Vec<Reply>,
) -> (
    ScriptedServer,
    AgentHarness,
    Vec<AgentEvent>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 700);
    write_lines(dir.path(), "b.txt", 700);
    let mut script = vec![
        Reply::tool_calls(&[
            ("ra", "read_file", r#"{"path":"a.txt"}"#),
            ("rb", "read_file", r#"{"path":"b.txt"}"#),
        ]),
        wall(LEARNT_WALL),
    ];
    script.extend(after);
    let server = ScriptedServer::start(script).await;
    let mut h = crate::sessions::start_saving(
        &server,
        dir.path(),
        store,
        dashfloat::session::OpenSession::New,
    );
    h.prompt("compare the two files").await;
    let events = h.turn().await;
    (server, h, events, dir)
}

/// A read cut to fit: its content ends with the note naming the offset to
/// read on from.
fn assert_cut_with_the_offset(result: &Value) {
    let kept = result["content"].as_str().unwrap();
    let lines = result["lines"].as_u64().unwrap();
    assert!(
        kept.ends_with(&format!(
            "[cut to fit the model's context window: showed {lines} lines from line 1; read on with offset={} and a smaller limit]",
            lines + 1
        )),
        "{kept}"
    );
    assert_eq!(result["truncated"], true);
    assert!(lines < 700, "{lines} lines");
}

/// A window learnt from the error mid-turn cuts the turn's own results,
/// each by its tool's cut, and the retry fits: the turn ends with the
/// model's answer, and the saved session holds what the model saw.
#[tokio::test]
async fn a_window_learnt_mid_turn_cuts_the_turns_own_results_and_the_retry_fits() {
    let home = tempfile::tempdir().unwrap();
    let store = dashfloat::session::SessionStore::at(home.path().join("sessions"));
    let (server, mut h, events, _dir) =
        two_reads_then_the_wall(&store, vec![plain("both hold the same")]).await;
    assert!(errors(&events).is_empty(), "{events:#?}");
    assert_eq!(support::agent::reply_text(&events), "both hold the same");
    assert!(events.contains(&AgentEvent::SessionFacts {
        model: None,
        context_window: Some(8192)
    }));
    let said = notices(&events);
    assert!(said[0].contains("did not fit"), "{said:?}");
    assert!(
        said[1].contains("cut 2 tool results of this turn"),
        "{said:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "retried once");
    for whole in results(&requests[1]) {
        assert_eq!(whole["truncated"], false, "first sent whole");
    }
    let cut = results(&requests[2]);
    assert_eq!(cut.len(), 2);
    for result in &cut {
        assert_cut_with_the_offset(result);
    }
    let budget = dashfloat::agent::Budget::new(8192, None, dashfloat::bounds::DEFAULT_COMPACT_AT);
    let estimate = budget.estimate(requests[2].raw_body.len());
    assert!(
        estimate <= budget.usable(),
        "about {estimate} tokens of {}",
        budget.usable()
    );

    crate::sessions::settled(&mut h).await;
    let id = store.list(None).sessions[0].id.clone();
    let saved = store.load(&id).unwrap();
    let saved: Vec<Value> = saved
        .messages
        .iter()
        .filter(|m| m.role == dashfloat::llm::wire::Role::Tool)
        .map(|m| serde_json::from_str(m.content.as_deref().unwrap()).unwrap())
        .collect();
    assert_eq!(saved, cut, "the session holds what the model saw");
}

/// When the results cut to the learnt window still do not fit, the turn
/// ends with the entry that says what to do, and the session goes on.
#[tokio::test]
async fn a_turn_cut_to_the_learnt_window_that_still_does_not_fit_ends_with_the_entry() {
    let home = tempfile::tempdir().unwrap();
    let store = dashfloat::session::SessionStore::at(home.path().join("sessions"));
    let (server, mut h, events, _dir) =
        two_reads_then_the_wall(&store, vec![wall(LEARNT_WALL), plain("still here")]).await;
    let shown = errors(&events);
    assert_eq!(shown.len(), 1, "{events:#?}");
    assert!(
        shown[0].contains("/compact") && shown[0].contains("/clear"),
        "{shown:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "never an endless loop");
    for result in &results(&requests[2]) {
        assert_cut_with_the_offset(result);
    }
    h.prompt("hello?").await;
    let events = h.turn().await;
    assert_eq!(support::agent::reply_text(&events), "still here");
    let last = &server.requests()[3];
    assert_eq!(content(messages(last).last().unwrap()), "hello?");
}

/// Results cut when first sent never grow when cut again: a window
/// learnt larger than the one assumed leaves them as they were, so there
/// is nothing to compact and the entry shows.
#[tokio::test]
async fn results_first_cut_to_a_smaller_window_never_grow_when_cut_again() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(dir.path(), "a.txt", 700);
    write_lines(dir.path(), "b.txt", 700);
    let larger = LEARNT_WALL.replace("(8192 tokens)", "(32768 tokens)");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("ra", "read_file", r#"{"path":"a.txt"}"#),
            ("rb", "read_file", r#"{"path":"b.txt"}"#),
        ]),
        wall(&larger),
    ])
    .await;
    let mut setup = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    setup.context_window = 8192;
    let mut h = start_with(setup);
    h.prompt("compare the two files").await;
    let events = h.turn().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{events:#?}");
    for result in &results(&requests[1]) {
        assert_cut_with_the_offset(result);
    }
    let shown = errors(&events);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains("/compact"), "{shown:?}");
    assert!(
        notices(&events).iter().all(|n| !n.contains("did not fit")),
        "{events:#?}"
    );
}
