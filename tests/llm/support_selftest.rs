//! Tests of the test support itself: the scripted server driven by a real
//! reqwest client over real TCP, the recorded fixtures replayed through it,
//! and the pty driver running real programs on a real pseudo-terminal.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support;
use support::fixtures::{self, fixture_frames, fixture_json, split_sse_events, sse_data};
use support::pairing;
use support::pty::PtySession;
use support::server::{self, Reply, ScriptedServer, Step};

/// Generous upper bound for anything that should be quick.
const SLOW: Duration = Duration::from_secs(20);

/// The body chunks of a response as the client received them, and the
/// error that ended the body early, if any.
async fn chunks(resp: reqwest::Response) -> (Vec<Vec<u8>>, Option<reqwest::Error>) {
    let mut stream = resp.bytes_stream();
    let mut out = Vec::new();
    while let Some(item) = tokio::time::timeout(SLOW, stream.next())
        .await
        .expect("body stalled")
    {
        match item {
            Ok(bytes) => out.push(bytes.to_vec()),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

async fn post(server: &ScriptedServer, body: &Value) -> reqwest::Response {
    support::http_client()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(body)
        .send()
        .await
        .expect("send request")
}

fn request_body() -> Value {
    json!({
        "model": "m",
        "stream": true,
        "messages": [{"role": "user", "content": "hi"}],
    })
}

fn expected_frames(reply: &Reply) -> Vec<Vec<u8>> {
    reply
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Send(b) => Some(b.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- server --

#[tokio::test]
async fn text_reply_streams_one_frame_per_chunk_with_delays() {
    let delay = Duration::from_millis(120);
    let reply = Reply::text(&["Hel", "lo", " world"]).delay_each(delay);
    let frames = expected_frames(&reply);
    assert_eq!(frames.len(), 7, "role, 3 contents, finish, usage, [DONE]");
    let server = ScriptedServer::start(vec![reply]).await;

    let resp = post(&server, &request_body()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    assert_eq!(resp.headers()["transfer-encoding"], "chunked");
    let (got, err) = chunks(resp).await;
    assert!(err.is_none(), "{err:?}");
    // The delays between frames are what keeps each one its own chunk.
    assert_eq!(got, frames, "each SSE frame arrives as its own chunk");

    let data = sse_data(&got.concat());
    assert_eq!(data.last().unwrap(), "[DONE]");
    let json: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(json[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = json[1..4]
        .iter()
        .map(|c| c["choices"][0]["delta"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello world");
    assert_eq!(json[4]["choices"][0]["finish_reason"], "stop");
    assert_eq!(json[4]["choices"][0]["delta"], json!({}));
    assert_eq!(json[5]["choices"], json!([]));
    assert_eq!(json[5]["usage"]["completion_tokens"], 3);
}

#[tokio::test]
async fn a_frame_arrives_before_the_next_is_sent() {
    // The second frame is only sent after a hang the test controls: if the
    // client sees the first, the server really streams.
    let reply = Reply::sse([server::content_chunk("first")]).hang_after(1);
    let server = ScriptedServer::start(vec![reply]).await;
    let resp = post(&server, &request_body()).await;
    let mut stream = resp.bytes_stream();
    let first = tokio::time::timeout(SLOW, stream.next()).await.unwrap();
    let first = first.unwrap().unwrap();
    assert_eq!(
        sse_data(&first),
        vec![server::content_chunk("first").to_string()]
    );
    let next = tokio::time::timeout(Duration::from_millis(400), stream.next()).await;
    assert!(next.is_err(), "nothing more while the reply hangs");
}

#[tokio::test]
async fn head_delay_holds_back_the_status_line() {
    let reply = Reply::text(&["x"]).head_delay(Duration::from_secs(60));
    let server = ScriptedServer::start(vec![reply]).await;
    // Behaviour, not speed: a minute's hold is still holding when a
    // client gives up after a second.
    let held = tokio::time::timeout(Duration::from_secs(1), post(&server, &request_body())).await;
    assert!(held.is_err(), "the status line came before the hold ended");
    assert_eq!(server.requests().len(), 1, "the request itself arrived");
}

#[tokio::test]
async fn requests_are_recorded_in_order() {
    let server = ScriptedServer::start(vec![Reply::text(&["a"]), Reply::text(&["b"])]).await;
    let client = support::http_client();
    let first =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "one"}]});
    let resp = client
        .post(format!("{}/chat/completions", server.base_url()))
        .bearer_auth("sk-test")
        .json(&first)
        .send()
        .await
        .unwrap();
    resp.bytes().await.unwrap();
    let resp = client
        .post(server.url("/v1/other?x=1"))
        .body("plain text, not json")
        .send()
        .await
        .unwrap();
    resp.bytes().await.unwrap();

    let got = server.wait_requests(2, SLOW).await;
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].method, "POST");
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(got[0].header("AUTHORIZATION"), Some("Bearer sk-test"));
    assert_eq!(got[0].header("content-type"), Some("application/json"));
    assert_eq!(got[0].body, first);
    assert_eq!(got[0].raw_body, serde_json::to_vec(&first).unwrap());
    assert_eq!(got[1].path, "/v1/other?x=1");
    assert_eq!(got[1].body, Value::Null);
    assert_eq!(got[1].raw_body, b"plain text, not json");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.remaining_replies(), 0);
}

#[tokio::test]
async fn chunked_request_bodies_are_decoded() {
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let parts: Vec<Result<Vec<u8>, std::io::Error>> = vec![
        Ok(br#"{"model":"m","messages":[],"#.to_vec()),
        Ok(br#""stream":true}"#.to_vec()),
    ];
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(parts));
    let resp = support::http_client()
        .post(format!("{}/chat/completions", server.base_url()))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    resp.bytes().await.unwrap();
    let got = server.wait_requests(1, SLOW).await;
    assert_eq!(got[0].header("transfer-encoding"), Some("chunked"));
    assert_eq!(
        got[0].body,
        json!({"model": "m", "messages": [], "stream": true})
    );
}

#[tokio::test]
async fn status_replies_and_exhausted_script() {
    let error = r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#;
    let server = ScriptedServer::start(vec![Reply::status(400, "application/json", error)]).await;

    let resp = post(&server, &request_body()).await;
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.headers()["content-length"], error.len().to_string());
    assert_eq!(resp.text().await.unwrap(), error);

    let resp = post(&server, &request_body()).await;
    assert_eq!(resp.status(), 500);
    let text = resp.text().await.unwrap();
    assert!(text.starts_with("script exhausted"), "{text}");
    assert!(text.contains("request #2"), "{text}");
    assert_eq!(
        server.requests().len(),
        2,
        "exhausted requests are recorded too"
    );
}

#[tokio::test]
async fn raw_replies_send_bytes_verbatim() {
    let server = ScriptedServer::start(vec![
        Reply::raw(
            200,
            &[("Content-Type", "text/html")],
            vec![
                Step::Send(b"<html>".to_vec()),
                Step::Send(b"</html>".to_vec()),
            ],
        )
        .unframed(),
        Reply::sse_steps(vec![
            Step::Send(b"data: {not json\n\n".to_vec()),
            Step::Send(b": comment\n\nevent: x\ndata: [DONE]\n\n".to_vec()),
        ])
        .with_header("X-Extra", "1"),
    ])
    .await;

    let resp = post(&server, &request_body()).await;
    assert!(resp.headers().get("transfer-encoding").is_none());
    assert_eq!(resp.text().await.unwrap(), "<html></html>");

    let resp = post(&server, &request_body()).await;
    assert_eq!(resp.headers()["x-extra"], "1");
    let (got, err) = chunks(resp).await;
    assert!(err.is_none());
    assert_eq!(
        got,
        vec![
            b"data: {not json\n\n".to_vec(),
            b": comment\n\nevent: x\ndata: [DONE]\n\n".to_vec()
        ]
    );
}

#[tokio::test]
async fn disconnect_mid_body_is_a_body_error() {
    let reply = Reply::text(&["a", "b", "c"]).cut_after(2);
    assert_eq!(reply.steps.last(), Some(&Step::Disconnect));
    let frames = expected_frames(&reply);
    assert_eq!(frames.len(), 2);
    let server = ScriptedServer::start(vec![reply]).await;
    let resp = post(&server, &request_body()).await;
    assert_eq!(resp.status(), 200);
    let (got, err) = chunks(resp).await;
    assert_eq!(got, frames);
    assert!(err.is_some(), "a cut stream must not look complete");
}

#[tokio::test]
async fn reset_mid_body_is_a_body_error() {
    let reply = Reply::text(&["a", "b"]).with_steps(vec![
        Step::Send(server::sse_frame(&server::content_chunk("a"))),
        Step::Delay(Duration::from_millis(50)),
        Step::Reset,
    ]);
    let server = ScriptedServer::start(vec![reply]).await;
    let resp = post(&server, &request_body()).await;
    let (got, err) = chunks(resp).await;
    assert!(got.len() <= 1);
    assert!(err.is_some(), "a reset stream must not look complete");
}

#[tokio::test]
async fn hang_keeps_the_client_waiting_until_the_server_drops() {
    let server = ScriptedServer::start(vec![Reply::text(&["a", "b"]).hang_after(1)]).await;
    let client = support::http_client();
    let resp = client
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&request_body())
        .send()
        .await
        .unwrap();
    let mut stream = resp.bytes_stream();
    assert!(stream.next().await.unwrap().is_ok());

    // A client-side timeout is the only way out.
    let waited = tokio::time::timeout(Duration::from_millis(500), stream.next()).await;
    assert!(waited.is_err(), "the hanging reply sent more: {waited:?}");

    // The whole-request timeout of reqwest fires too.
    server.push_reply(Reply::text(&["x"]).hang_after(0));
    let timed = client
        .post(format!("{}/chat/completions", server.base_url()))
        .timeout(Duration::from_millis(300))
        .json(&request_body())
        .send()
        .await
        .unwrap()
        .bytes()
        .await;
    assert!(timed.unwrap_err().is_timeout());

    // Dropping the server ends the hang: the body fails, it does not end.
    drop(server);
    let end = tokio::time::timeout(SLOW, stream.next()).await.unwrap();
    assert!(matches!(end, Some(Err(_))), "{end:?}");
}

#[tokio::test]
async fn connections_are_served_concurrently() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["a"]).hang_after(1),
        Reply::text(&["second"]),
    ])
    .await;
    let hanging = post(&server, &request_body()).await;
    server.wait_requests(1, SLOW).await;
    let resp = post(&server, &request_body()).await;
    let (got, err) = chunks(resp).await;
    assert!(err.is_none());
    assert!(String::from_utf8(got.concat()).unwrap().contains("second"));
    drop(hanging);
}

#[tokio::test]
async fn client_cancelling_mid_stream_does_not_upset_the_server() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["a"; 50]).delay_each(Duration::from_millis(10)),
        Reply::text(&["after"]),
    ])
    .await;
    let resp = post(&server, &request_body()).await;
    let mut stream = resp.bytes_stream();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    // The server keeps writing into a closed socket, then gives up quietly.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resp = post(&server, &request_body()).await;
    let (got, err) = chunks(resp).await;
    assert!(err.is_none());
    assert!(String::from_utf8(got.concat()).unwrap().contains("after"));
}

/// A conversation in which the assistant calls `calls` and `answers` are
/// the tool messages that follow, each `(tool_call_id, content)`.
fn conversation(calls: &[(&str, &str)], answers: &[(&str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, args)| {
            json!({"id": id, "type": "function", "function": {"name": "read_file", "arguments": args}})
        })
        .collect();
    let mut messages = vec![
        json!({"role": "user", "content": "hi"}),
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
    ];
    messages.extend(
        answers
            .iter()
            .map(|(id, content)| json!({"role": "tool", "tool_call_id": id, "content": content})),
    );
    json!({"model": "m", "stream": true, "messages": messages})
}

#[test]
fn the_pairing_check_names_each_way_a_conversation_breaks() {
    let args = r#"{"path":"a"}"#;
    let ok = r#"{"ok":true}"#;
    assert_eq!(
        pairing::check(&conversation(
            &[("a", args), ("b", args)],
            &[("a", ok), ("b", ok)]
        )),
        Ok(())
    );
    for (body, said) in [
        (json!({"model": "m"}), "no messages array"),
        (conversation(&[("a", args)], &[]), "call a is not answered"),
        (
            conversation(&[("a", args), ("b", args)], &[("b", ok), ("a", ok)]),
            "answers out of order",
        ),
        (
            conversation(&[("a", args)], &[("a", ok), ("a", ok)]),
            "answers no call",
        ),
        (
            conversation(&[("a", "[1]")], &[("a", ok)]),
            "arguments are not a JSON object",
        ),
        (
            conversation(&[("a", args)], &[("a", "done")]),
            "is not one JSON object",
        ),
    ] {
        let broken = pairing::check(&body).unwrap_err();
        assert!(broken.contains(said), "{broken} (expected {said:?})");
    }
}

#[tokio::test]
#[should_panic(expected = "request #2: call a is not answered")]
async fn a_request_that_breaks_the_pairing_fails_the_test_when_the_server_drops() {
    let server =
        ScriptedServer::start(vec![Reply::text(&["fine"]), Reply::text(&["too late"])]).await;
    let unanswered = conversation(&[("a", r#"{"path":"a"}"#)], &[]);
    for body in [request_body(), unanswered] {
        let (_, err) = chunks(post(&server, &body).await).await;
        assert!(err.is_none());
    }
    // The broken request was answered as scripted; the test fails when
    // the server drops, here.
    assert_eq!(server.remaining_replies(), 0);
}

#[tokio::test]
#[should_panic(expected = "expected 1 request(s)")]
async fn wait_requests_panics_with_what_arrived() {
    let server = ScriptedServer::start(vec![]).await;
    server.wait_requests(1, Duration::from_millis(100)).await;
}

#[tokio::test(start_paused = true)]
async fn wait_requests_uses_real_time_under_paused_tokio_time() {
    // With paused time, a tokio timeout would fire at once while the
    // runtime idles; the wait must still see a request that comes later.
    let server = ScriptedServer::start(vec![Reply::status(204, "text/plain", "")]).await;
    let port = server.port();
    let client = std::thread::spawn(move || {
        use std::io::{Read, Write};
        std::thread::sleep(Duration::from_millis(200));
        let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut reply = String::new();
        tcp.read_to_string(&mut reply).unwrap();
        reply
    });
    let got = server.wait_requests(1, SLOW).await;
    assert_eq!(got[0].method, "GET");
    assert_eq!(got[0].path, "/v1/models");
    assert!(got[0].raw_body.is_empty());
    let reply = client.join().unwrap();
    assert!(reply.starts_with("HTTP/1.1 204 No Content\r\n"), "{reply}");
    assert!(reply.contains("Connection: close\r\n"), "{reply}");
}

#[test]
fn the_server_serves_while_a_test_blocks() {
    // A synchronous test (like a pty test) blocking its thread: the server
    // has its own thread and runtime.
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["sync"])]);
    let url = format!("{}/chat/completions", server.base_url());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = rt.block_on(async {
        support::http_client()
            .post(url)
            .json(&request_body())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    assert!(body.contains("sync"));
    assert_eq!(server.wait_requests_blocking(1, SLOW).len(), 1);
}

#[test]
fn chunk_helpers_build_llama_server_shapes() {
    let first = server::tool_call_chunk(0, Some("abc"), Some("read_file"), "");
    assert_eq!(
        first["choices"][0]["delta"]["tool_calls"][0],
        json!({"index": 0, "id": "abc", "type": "function", "function": {"name": "read_file", "arguments": ""}})
    );
    let more = server::tool_call_chunk(0, None, None, "{\"path\"");
    assert_eq!(
        more["choices"][0]["delta"]["tool_calls"][0],
        json!({"index": 0, "function": {"arguments": "{\"path\""}})
    );
    assert_eq!(
        server::reasoning_chunk("hmm")["choices"][0]["delta"]["reasoning_content"],
        "hmm"
    );
    assert_eq!(server::usage_chunk(3, 4)["usage"]["total_tokens"], 7);
    assert_eq!(
        server::role_chunk()["choices"][0]["delta"]["content"],
        Value::Null
    );
    assert_eq!(
        server::finish_chunk("length")["choices"][0]["finish_reason"],
        "length"
    );
}

#[tokio::test]
async fn tool_call_reply_assembles_to_valid_arguments() {
    let reply = Reply::tool_call(
        "call-1",
        "read_file",
        &["{", "\"path\":", " \"README.md\"}"],
    );
    let server = ScriptedServer::start(vec![reply]).await;
    let (got, _) = chunks(post(&server, &request_body()).await).await;
    assert_eq!(got.len(), 7, "role, 3 fragments, finish, usage, [DONE]");
    let frames: Vec<Value> = sse_data(&got.concat())
        .iter()
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(
        frames[1]["choices"][0]["delta"]["tool_calls"][0]["function"],
        json!({"name": "read_file", "arguments": "{"})
    );
    let (name, args) = assemble_tool_call(&frames);
    assert_eq!(name, "read_file");
    assert_eq!(args, json!({"path": "README.md"}));
    assert_eq!(finish_reason(&frames), "tool_calls");
}

#[test]
fn split_sse_events_round_trips() {
    let input = b"data: a\n\ndata: b\r\n\r\n: c\ndata: d\n\ndata: trailing";
    let events = split_sse_events(input);
    assert_eq!(
        events,
        vec![
            b"data: a\n\n".to_vec(),
            b"data: b\r\n\r\n".to_vec(),
            b": c\ndata: d\n\n".to_vec(),
            b"data: trailing".to_vec(),
        ]
    );
    assert_eq!(events.concat(), input);
    assert_eq!(sse_data(input), vec!["a", "b", "d", "trailing"]);
    assert_eq!(sse_data(b"data:x\ndata: y\n\n"), vec!["x\ny"]);
}

// -------------------------------------------------------------- fixtures --

const FIXTURES: [&str; 4] = [
    "plain-reply.sse",
    "tool-call-read-file.sse",
    "tool-call-list-directory.sse",
    "tool-call-write-file.sse",
];

fn assemble_tool_call(frames: &[Value]) -> (String, Value) {
    let mut name = String::new();
    let mut args = String::new();
    for f in frames {
        for call in f["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            assert_eq!(call["index"], 0, "one call per reply");
            if let Some(n) = call["function"]["name"].as_str() {
                name.push_str(n);
            }
            if let Some(a) = call["function"]["arguments"].as_str() {
                args.push_str(a);
            }
        }
    }
    let args = serde_json::from_str(&args).unwrap_or_else(|e| panic!("args {args:?}: {e}"));
    (name, args)
}

fn finish_reason(frames: &[Value]) -> String {
    frames
        .iter()
        .find_map(|f| f["choices"][0]["finish_reason"].as_str())
        .expect("a finish_reason")
        .to_owned()
}

#[tokio::test]
async fn fixtures_replay_byte_identical_frame_by_frame() {
    for name in FIXTURES {
        let frames = fixture_frames(name);
        assert!(frames.len() > 3, "{name}: {} frames", frames.len());
        assert_eq!(frames.concat(), fixtures::fixture_bytes(name), "{name}");
        let server = ScriptedServer::start(vec![Reply::fixture(name)]).await;
        let resp = post(&server, &fixtures::fixture_request(name)).await;
        assert_eq!(resp.status(), 200, "{name}");
        let (got, err) = chunks(resp).await;
        assert!(err.is_none(), "{name}: {err:?}");
        assert_eq!(got, frames, "{name}: replay differs");
        assert_eq!(
            server.requests()[0].body,
            fixtures::fixture_request(name),
            "{name}"
        );
    }
}

#[test]
fn fixtures_have_the_recorded_shapes() {
    for name in FIXTURES {
        let bytes = fixtures::fixture_bytes(name);
        assert!(bytes.ends_with(b"data: [DONE]\n\n"), "{name}");
        assert!(!bytes.contains(&b'\r'), "{name}: LF only");
        let frames = fixture_json(name);
        assert_eq!(
            frames[0]["choices"][0]["delta"],
            json!({"role": "assistant", "content": null}),
            "{name}"
        );
        let last = frames.last().unwrap();
        assert_eq!(last["choices"], json!([]), "{name}: usage frame last");
        assert!(last["usage"]["completion_tokens"].as_u64().unwrap() > 0);
        let request = fixtures::fixture_request(name);
        assert_eq!(request["temperature"], 0, "{name}");
        assert_eq!(request["stream"], true, "{name}");
        assert_eq!(request["stream_options"]["include_usage"], true, "{name}");
    }

    let plain = fixture_json("plain-reply.sse");
    let text: String = plain
        .iter()
        .filter_map(|f| f["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert!(!text.trim().is_empty());
    assert_eq!(finish_reason(&plain), "stop");

    let cases = [
        (
            "tool-call-read-file.sse",
            "read_file",
            json!({"path": "README.md", "offset": 1, "limit": 10000}),
        ),
        (
            "tool-call-list-directory.sse",
            "list_directory",
            json!({"path": "src"}),
        ),
    ];
    for (name, tool, args) in cases {
        let frames = fixture_json(name);
        assert_eq!(finish_reason(&frames), "tool_calls", "{name}");
        assert_eq!(
            assemble_tool_call(&frames),
            (tool.to_owned(), args),
            "{name}"
        );
    }
    let frames = fixture_json("tool-call-write-file.sse");
    assert_eq!(finish_reason(&frames), "tool_calls");
    let (tool, args) = assemble_tool_call(&frames);
    assert_eq!(tool, "write_file");
    assert_eq!(args["path"], "hello.txt");
    assert!(args["content"].as_str().unwrap().contains("hello world"));

    let catalogue = fixtures::tool_catalogue();
    let names: Vec<&str> = catalogue
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "edit_file",
            "execute_command",
            "list_directory"
        ]
    );
}

/// Object keys in order, recursively (arrays: their first element); the
/// contents of llama-server's free-form `timings` are left out.
fn layout(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Array(
            map.iter()
                .map(|(k, v)| {
                    if k == "timings" {
                        json!(k)
                    } else {
                        json!([k, layout(v)])
                    }
                })
                .collect(),
        ),
        Value::Array(items) => json!([items.first().map(layout)]),
        _ => Value::Null,
    }
}

#[test]
fn scripted_chunks_have_the_recorded_layout() {
    let plain = fixture_json("plain-reply.sse");
    let n = plain.len();
    assert_eq!(layout(&server::role_chunk()), layout(&plain[0]));
    assert_eq!(layout(&server::content_chunk("x")), layout(&plain[1]));
    assert_eq!(layout(&server::finish_chunk("stop")), layout(&plain[n - 2]));
    assert_eq!(layout(&server::usage_chunk(1, 2)), layout(&plain[n - 1]));

    let call = fixture_json("tool-call-read-file.sse");
    assert_eq!(
        layout(&server::tool_call_chunk(
            0,
            Some("id"),
            Some("read_file"),
            "{"
        )),
        layout(&call[1])
    );
    assert_eq!(
        layout(&server::tool_call_chunk(0, None, None, "x")),
        layout(&call[2])
    );
}

// ------------------------------------------------------------------- pty --

fn sh(script: &str, cols: u16, rows: u16) -> PtySession {
    PtySession::spawn(
        Path::new("/bin/sh"),
        &["-c", script],
        &[("PS1", "")],
        Path::new("/"),
        cols,
        rows,
    )
}

#[test]
fn pty_alternate_screen_input_and_exit_status() {
    let mut pty = sh(
        r#"printf '\033[?1049h'; printf 'hello %s' "$TERM"; read x; printf '\033[?1049l'; printf 'got %s' "$x"; exit 3"#,
        80,
        24,
    );
    let screen = pty.wait_for("hello xterm-256color", SLOW).unwrap();
    assert!(screen.starts_with("hello"));
    assert!(pty.alternate_screen());
    pty.send(b"typed\r");
    let status = pty.wait_exit(SLOW).expect("exits");
    assert_eq!(status.exit_code(), 3);
    assert!(!pty.alternate_screen());
    assert!(pty.raw_contains(b"\x1b[?1049h"));
    assert!(pty.raw_contains(b"\x1b[?1049l"));
    assert!(
        pty.screen_text().contains("got typed"),
        "{}",
        pty.screen_text()
    );
    assert_eq!(pty.termios_is_cooked(), Some(true));
}

#[test]
fn pty_answers_cursor_position_queries() {
    let mut pty = sh(
        r#"stty -icanon -echo min 1; printf '\033[3;5H\033[6n'; r=$(dd bs=1 count=6 2>/dev/null); stty sane; printf '\033[10;1Hgot:%s' "$(printf %s "$r" | tr '\033' E)""#,
        80,
        24,
    );
    pty.wait_for("got:E[3;5R", SLOW).unwrap();
    assert!(pty.wait_exit(SLOW).unwrap().success());
    assert_eq!(pty.queries_answered(), 1);
}

#[test]
fn pty_answers_device_attributes() {
    let mut pty = sh(
        r#"stty -icanon -echo min 1; printf '\033[c'; r=$(dd bs=1 count=7 2>/dev/null); stty sane; printf 'da:%s' "$(printf %s "$r" | tr '\033' E)""#,
        80,
        24,
    );
    pty.wait_for("da:E[?1;2c", SLOW).unwrap();
    assert!(pty.wait_exit(SLOW).unwrap().success());
}

#[test]
fn pty_sees_raw_mode_left_behind() {
    let mut pty = sh(
        "stty raw -echo; printf ready; head -c 1 >/dev/null; exit 0",
        80,
        24,
    );
    pty.wait_for("ready", SLOW).unwrap();
    assert_eq!(pty.termios_is_cooked(), Some(false), "raw while running");
    pty.send(b"q");
    assert!(pty.wait_exit(SLOW).unwrap().success());
    assert_eq!(pty.termios_is_cooked(), Some(false), "still raw after exit");

    let mut pty = sh(
        "stty raw -echo; printf ready; head -c 1 >/dev/null; stty sane; exit 0",
        80,
        24,
    );
    pty.wait_for("ready", SLOW).unwrap();
    pty.send(b"q");
    assert!(pty.wait_exit(SLOW).unwrap().success());
    assert_eq!(pty.termios_is_cooked(), Some(true), "restored");
}

#[test]
fn pty_resize_reaches_the_program() {
    let mut pty = sh("printf ready; read x; stty size", 80, 24);
    pty.wait_for("ready", SLOW).unwrap();
    pty.resize(100, 30);
    pty.send(b"\r");
    pty.wait_for("30 100", SLOW).unwrap();
    assert!(pty.wait_exit(SLOW).unwrap().success());
    assert_eq!(pty.with_screen(|s| s.size()), (30, 100));
}

#[test]
fn pty_ctrl_c_and_wait_exit_timeout() {
    let mut pty = sh("printf ready; sleep 30", 80, 24);
    pty.wait_for("ready", SLOW).unwrap();
    assert!(pty.is_running());
    pty.send(b"\x03");
    let status = pty.wait_exit(SLOW).expect("Ctrl+C ends it");
    assert!(!status.success());

    let mut pty = sh("trap '' INT; printf ready; sleep 30", 80, 24);
    pty.wait_for("ready", SLOW).unwrap();
    assert!(
        pty.wait_exit(Duration::from_millis(300)).is_none(),
        "killed on timeout"
    );
    // The wait gave up at its timeout and killed the child, which would
    // otherwise sleep on for 30 s.
    assert!(!pty.is_running());
    let err = pty
        .wait_for("never", Duration::from_millis(50))
        .unwrap_err();
    assert!(err.contains("ready"), "the error shows the screen: {err}");
}
