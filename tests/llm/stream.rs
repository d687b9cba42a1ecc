//! The stream task against a real scripted HTTP server: streaming, usage,
//! the request it sends, every bound, and one test per row of the transport
//! error taxonomy (ADR 0004).

use std::time::Duration;

use dashfloat::llm::stream::{Endpoint, progress_step};

use dashfloat::bounds::{
    FRAME_MAX_BYTES, REPLY_CALL_COPIES_MAX, REPLY_MAX_BYTES, TOOL_CALL_EARLY_PROGRESS_BYTES,
    TOOL_CALL_PROGRESS_BYTES,
};
use dashfloat::protocol::{FinishReason, StreamEvent, TransportError, Usage};
use serde_json::json;

use crate::support;
use crate::support::server::{
    Reply, ScriptedServer, Step, content_chunk, finish_chunk, reasoning_chunk, role_chunk,
    usage_chunk,
};
use crate::{content, failure, run};

fn endpoint(base_url: &str) -> Endpoint {
    crate::endpoint(base_url, "sk-test", ("X-Extra", "yes"))
}

#[tokio::test]
async fn a_reply_streams_as_content_finish_usage_done() {
    let server = ScriptedServer::start(vec![Reply::text(&["Hel", "lo", " world"])]).await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "Hello world");
    assert!(events.contains(&StreamEvent::Finish(FinishReason::Stop)));
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Usage(_))));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn the_request_is_a_streaming_chat_completion_with_key_and_headers() {
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    run(endpoint(&server.base_url())).await;
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(req.header("x-extra"), Some("yes"));
    assert_eq!(req.header("accept"), Some("text/event-stream"));
    assert_eq!(req.body["stream"], json!(true));
    assert_eq!(req.body["stream_options"]["include_usage"], json!(true));
}

/// Azure's base URL carries its API version as a query.
#[tokio::test]
async fn a_base_url_with_a_query_keeps_it_after_the_path() {
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let base = format!("{}?api-version=2024-10-21", server.base_url());
    assert_eq!(content(&run(endpoint(&base)).await), "ok");
    assert_eq!(
        server.requests()[0].path,
        "/v1/chat/completions?api-version=2024-10-21"
    );
}

/// A key of its own in an `Authorization` header (OpenRouter's, with
/// `OPENAI_API_KEY` also set): only that one is sent.
#[tokio::test]
async fn an_authorization_header_of_its_own_replaces_the_key() {
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    run(crate::endpoint(
        &server.base_url(),
        "sk-openai",
        ("authorization", "Bearer sk-or-own"),
    ))
    .await;
    let requests = server.requests();
    let sent: Vec<&str> = requests[0]
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.as_str())
        .collect();
    assert_eq!(sent, ["Bearer sk-or-own"]);
}

#[tokio::test]
async fn usage_frame_is_reported() {
    let server = ScriptedServer::start(vec![Reply::sse([
        role_chunk(),
        content_chunk("x"),
        finish_chunk("stop"),
        usage_chunk(120, 7),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(events.contains(&StreamEvent::Usage(Usage {
        prompt_tokens: 120,
        completion_tokens: 7,
        total_tokens: 127,
        cached_tokens: 0,
    })));
}

#[tokio::test]
async fn reasoning_is_separate_from_content() {
    let server = ScriptedServer::start(vec![Reply::sse([
        reasoning_chunk("think"),
        content_chunk("say"),
        finish_chunk("stop"),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(events.contains(&StreamEvent::Reasoning("think".into())));
    assert_eq!(content(&events), "say");
}

/// An empty reasoning field is no reasoning: the reply would otherwise
/// count as having said something.
#[tokio::test]
async fn empty_reasoning_is_not_reported() {
    let server = ScriptedServer::start(vec![Reply::sse([
        reasoning_chunk(""),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "", "reasoning": "why"}}]}),
        finish_chunk("stop"),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    let reasoning: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Reasoning(_)))
        .collect();
    assert_eq!(reasoning, [&StreamEvent::Reasoning("why".into())]);
}

#[tokio::test]
async fn a_finish_reason_dashfloat_does_not_know_is_passed_on_as_sent() {
    let server = ScriptedServer::start(vec![Reply::sse([
        content_chunk("hidden"),
        finish_chunk("content_filter"),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(events.contains(&StreamEvent::Finish(FinishReason::Other(
        "content_filter".into()
    ))));
}

#[tokio::test]
async fn finish_reason_length_is_passed_on() {
    let server = ScriptedServer::start(vec![Reply::sse([
        content_chunk("cut"),
        finish_chunk("length"),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(events.contains(&StreamEvent::Finish(FinishReason::Length)));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn crlf_framed_events_parse() {
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![
        Step::Send(b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\n".to_vec()),
        Step::Send(b"data: [DONE]\r\n\r\n".to_vec()),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "a");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn connection_refused_says_how_to_start_the_local_server() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let events = run(endpoint(&format!("http://127.0.0.1:{port}/v1"))).await;
    let err = failure(&events);
    assert!(
        matches!(err, TransportError::ConnectionRefused { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("scripts/local-model"));
}

#[tokio::test]
async fn an_unresolvable_host_is_a_dns_error() {
    let events = run(endpoint("http://no-such-host.invalid/v1")).await;
    let err = failure(&events);
    assert!(matches!(err, TransportError::Dns { .. }), "{err:?}");
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_a_tls_error() {
    // A plain HTTP server answers a TLS hello with an HTTP error page.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = sock.read(&mut buf).await;
        let _ = sock
            .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .await;
    });
    let url = format!("https://127.0.0.1:{port}/v1");
    let err = failure(&run(endpoint(&url)).await);
    assert!(matches!(err, TransportError::Tls { .. }), "{err:?}");
}

#[tokio::test]
async fn no_response_headers_within_the_request_and_idle_timeouts() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["late"]).head_delay(Duration::from_secs(3)),
    ])
    .await;
    let mut ep = endpoint(&server.base_url());
    ep.context.request_timeout = Duration::from_millis(300);
    ep.idle_timeout = Duration::from_millis(300);
    let err = failure(&run(ep).await);
    assert!(
        matches!(err, TransportError::ConnectTimeout { .. }),
        "{err:?}"
    );
}

/// llama-server sends its headers with the first token, after reading the
/// whole prompt: that wait is as long as a stream's silence may be.
#[tokio::test]
async fn headers_that_come_with_the_first_token_wait_for_the_idle_timeout() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["late"]).head_delay(Duration::from_millis(600)),
    ])
    .await;
    let mut ep = endpoint(&server.base_url());
    ep.context.request_timeout = Duration::from_millis(100);
    ep.idle_timeout = Duration::from_secs(30);
    let events = run(ep).await;
    assert_eq!(content(&events), "late");
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout_and_keeps_what_arrived() {
    let server = ScriptedServer::start(vec![
        Reply::sse([role_chunk(), content_chunk("partial")]).hang_after(2),
    ])
    .await;
    let mut ep = endpoint(&server.base_url());
    ep.idle_timeout = Duration::from_millis(300);
    let events = run(ep).await;
    assert_eq!(content(&events), "partial");
    assert!(matches!(
        failure(&events),
        TransportError::IdleTimeout { .. }
    ));
}

/// `: ping` comments, `every` apart, for `lasting`: the keep-alive a
/// proxy sends while a model thinks.
fn pings(every: Duration, lasting: Duration) -> Vec<Step> {
    let times = (lasting.as_millis() / every.as_millis()) as usize;
    std::iter::repeat_n(
        [Step::Send(b": ping\n\n".to_vec()), Step::Delay(every)],
        times,
    )
    .flatten()
    .collect()
}

/// Comments are no progress: a server that sends nothing but `: ping`
/// every 100 ms ends the turn at the idle timeout. Each ping restarted the
/// clock, so a server held the turn for as long as it pinged (issue 37
/// item 5); these go on for sixty times the timeout, then the body ends.
#[tokio::test]
async fn keep_alive_comments_alone_end_the_turn_at_the_idle_timeout() {
    let idle = Duration::from_millis(500);
    let server = ScriptedServer::start(vec![Reply::sse_steps(pings(
        Duration::from_millis(100),
        60 * idle,
    ))])
    .await;
    let mut ep = endpoint(&server.base_url());
    ep.idle_timeout = idle;
    let events = run(ep).await;
    assert_eq!(content(&events), "");
    assert_eq!(
        failure(&events),
        TransportError::IdleTimeout { after: idle }
    );
}

/// Data restarts the idle clock: keep-alive comments between a reply's
/// tokens, and OpenRouter's `: OPENROUTER PROCESSING` before the first,
/// leave it whole, though the reply takes longer than the idle timeout
/// (each token comes well within it).
#[tokio::test]
async fn a_reply_with_keep_alive_comments_between_its_tokens_is_read_whole() {
    let gap = Duration::from_millis(100);
    let mut steps = std::iter::repeat_n(
        [
            Step::Send(b": OPENROUTER PROCESSING\n\n".to_vec()),
            Step::Delay(gap),
        ],
        5,
    )
    .flatten()
    .collect::<Vec<_>>();
    steps.push(Step::Send(support::server::sse_frame(&role_chunk())));
    let words: Vec<String> = (0..10).map(|i| format!("{i} ")).collect();
    for word in &words {
        steps.push(Step::Send(support::server::sse_frame(&content_chunk(word))));
        steps.extend(pings(gap, 2 * gap));
    }
    steps.push(Step::Send(support::server::sse_frame(&finish_chunk(
        "stop",
    ))));
    steps.push(Step::Send(b"data: [DONE]\n\n".to_vec()));
    let server = ScriptedServer::start(vec![Reply::sse_steps(steps)]).await;
    let mut ep = endpoint(&server.base_url());
    ep.idle_timeout = Duration::from_secs(2);
    let events = run(ep).await;
    assert_eq!(content(&events), words.concat());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn unauthorized_names_the_key_variable() {
    for status in [401, 403] {
        let server = ScriptedServer::start(vec![Reply::status(
            status,
            "application/json",
            r#"{"error":{"message":"Incorrect API key provided"}}"#,
        )])
        .await;
        let err = failure(&run(endpoint(&server.base_url())).await);
        assert!(
            matches!(err, TransportError::Unauthorized { .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("TEST_KEY"), "{text}");
        assert!(text.contains("Incorrect API key"), "{text}");
    }
}

#[tokio::test]
async fn not_found_points_at_the_base_url_and_model() {
    let server = ScriptedServer::start(vec![Reply::status(404, "text/plain", "Not Found")]).await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert!(matches!(err, TransportError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("test-model"));
}

#[tokio::test]
async fn bad_request_shows_the_providers_message() {
    let server = ScriptedServer::start(vec![Reply::status(
        400,
        "application/json",
        r#"{"error":{"code":400,"message":"temperature must be at most 2","type":"invalid_request_error"}}"#,
    )])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert_eq!(
        err,
        TransportError::BadRequest {
            message: "temperature must be at most 2".into()
        }
    );
}

#[tokio::test]
async fn a_refusal_of_the_tools_is_told_apart_from_other_bad_requests() {
    for (status, body, message) in [
        (
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: tools","type":"invalid_request_error"}}"#,
            "Unrecognized request argument supplied: tools",
        ),
        (
            422,
            r#"{"detail":"Invalid role: tool"}"#,
            r#"{"detail":"Invalid role: tool"}"#,
        ),
        (
            400,
            r#"{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}"#,
            "registry.ollama.ai/library/gemma:2b does not support tools",
        ),
    ] {
        let server =
            ScriptedServer::start(vec![Reply::status(status, "application/json", body)]).await;
        let err = failure(&run(endpoint(&server.base_url())).await);
        assert_eq!(
            err,
            TransportError::ToolsRefused {
                status,
                message: message.into()
            }
        );
    }
}

/// A model that takes no images says so in its own words; each is told
/// apart, and an ordinary 400 that names an image or says "not
/// supported", or refuses one image's file, is not taken for one (ADR
/// 0055).
#[tokio::test]
async fn a_refusal_of_images_is_told_apart_from_other_bad_requests() {
    for (status, body, message) in [
        (
            400,
            r#"{"error":{"code":400,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"invalid_request_error"}}"#,
            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
        ),
        (
            400,
            r#"{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","param":"messages.[1].content.[1].type","code":null}}"#,
            "Invalid content type. image_url is only supported by certain models.",
        ),
        (
            404,
            r#"{"error":{"message":"No endpoints found that support image input","code":404}}"#,
            "No endpoints found that support image input",
        ),
        (
            400,
            r#"{"error":"registry.ollama.ai/library/llama3:8b does not support images"}"#,
            "registry.ollama.ai/library/llama3:8b does not support images",
        ),
    ] {
        let server =
            ScriptedServer::start(vec![Reply::status(status, "application/json", body)]).await;
        let err = failure(&run(endpoint(&server.base_url())).await);
        assert_eq!(
            err,
            TransportError::ImagesRefused {
                status,
                message: message.into()
            }
        );
    }
    for body in [
        r#"{"error":{"message":"Invalid image data","type":"invalid_request_error"}}"#,
        r#"{"error":{"message":"temperature is not supported with this model","type":"invalid_request_error"}}"#,
        r#"{"error":{"message":"You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].","type":"invalid_request_error"}}"#,
        r#"{"error":{"message":"Image format image/bmp is not supported","type":"invalid_request_error"}}"#,
    ] {
        let server =
            ScriptedServer::start(vec![Reply::status(400, "application/json", body)]).await;
        let err = failure(&run(endpoint(&server.base_url())).await);
        assert!(
            matches!(err, TransportError::BadRequest { .. }),
            "{body}: {err:?}"
        );
    }
}

/// Each provider's context-exceeded 400, as its server sends it, and the
/// window the message states, if it states one.
const CONTEXT_EXCEEDED_BODIES: [(&str, &str, Option<u64>); 6] = [
    (
        "llama.cpp",
        r#"{"error":{"code":400,"message":"request (8885 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":8885,"n_ctx":8192}}"#,
        Some(8192),
    ),
    (
        "llama.cpp, older words",
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        None,
    ),
    (
        "OpenAI",
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        Some(128_000),
    ),
    (
        "OpenAI, code only",
        r#"{"error":{"message":"Your input is too long for this model.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        None,
    ),
    (
        "vLLM",
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        Some(4096),
    ),
    (
        "OpenRouter",
        r#"{"error":{"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 40000 tokens.","code":400,"metadata":{"provider_name":"X"}}}"#,
        Some(32768),
    ),
];

#[tokio::test]
async fn each_providers_context_exceeded_400_is_typed_with_the_window_it_states() {
    for (provider, body, window) in CONTEXT_EXCEEDED_BODIES {
        let server =
            ScriptedServer::start(vec![Reply::status(400, "application/json", body)]).await;
        let err = failure(&run(endpoint(&server.base_url())).await);
        let TransportError::ContextExceeded {
            window: learned, ..
        } = &err
        else {
            panic!("{provider}: {err:?}")
        };
        assert_eq!(*learned, window, "{provider}");
        let shown = err.to_string();
        assert!(
            shown.contains("/compact") && shown.contains("/clear"),
            "{provider}: {shown}"
        );
        if let Some(tokens) = window {
            assert!(
                shown.contains(&format!("{tokens} tokens")),
                "{provider}: {shown}"
            );
        }
        assert_eq!(server.requests().len(), 1, "{provider}: no retry");
    }
}

#[tokio::test]
async fn rate_limit_is_retried_twice_then_shown_with_retry_after() {
    let limited = || {
        Reply::status(
            429,
            "application/json",
            r#"{"error":{"message":"slow down"}}"#,
        )
        .with_header("Retry-After", "0")
    };
    let server = ScriptedServer::start(vec![limited(), limited(), limited()]).await;
    let events = run(endpoint(&server.base_url())).await;
    let retries = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
    assert_eq!(server.requests().len(), 3);
    let err = failure(&events);
    assert!(matches!(err, TransportError::RateLimited { .. }), "{err:?}");
    assert!(err.to_string().contains("retry after 0s"), "{err}");
}

#[tokio::test]
async fn a_503_before_any_token_is_retried_and_can_succeed() {
    let server = ScriptedServer::start(vec![
        Reply::status(503, "text/plain", "loading model").with_header("Retry-After", "0"),
        Reply::text(&["back"]),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(matches!(
        events[0],
        StreamEvent::Retrying { attempt: 1, .. }
    ));
    assert_eq!(content(&events), "back");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

/// llama-server drops idle kept-alive connections; a request that meets
/// one is answered by nothing at all, and is sent again.
#[tokio::test]
async fn a_connection_closed_without_an_answer_is_retried_and_can_succeed() {
    let server = ScriptedServer::start(vec![Reply::unanswered(), Reply::text(&["answered"])]).await;
    let events = run(endpoint(&server.base_url())).await;
    let StreamEvent::Retrying {
        attempt: 1, reason, ..
    } = &events[0]
    else {
        panic!("no retry: {events:?}");
    };
    assert!(
        matches!(reason, TransportError::ClosedUnanswered { .. }),
        "{reason:?}"
    );
    assert_eq!(
        reason.to_string(),
        format!(
            "{} closed the connection without answering",
            server.base_url()
        )
    );
    assert_eq!(content(&events), "answered");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_long_retry_after_is_shown_not_waited_for() {
    let server = ScriptedServer::start(vec![
        Reply::status(429, "text/plain", "later").with_header("Retry-After", "3600"),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(events.len(), 1);
    assert!(failure(&events).to_string().contains("retry after 3600s"));
}

#[tokio::test]
async fn an_absurd_retry_after_is_reported_not_a_panic() {
    // 1e20 s does not fit a Duration; it once panicked the stream task.
    let server = ScriptedServer::start(vec![
        Reply::status(429, "text/plain", "later").with_header("Retry-After", "1e20"),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let err = failure(&events);
    assert!(matches!(err, TransportError::RateLimited { .. }), "{err:?}");
    assert_eq!(
        server.requests().len(),
        1,
        "an absurd wait is not waited for"
    );
}

#[test]
fn retry_after_is_read_up_to_its_cap_and_never_trusted_past_it() {
    use dashfloat::bounds::RETRY_AFTER_MAX;
    use dashfloat::llm::classify::parse_retry_after;
    let day = RETRY_AFTER_MAX.as_secs();
    assert_eq!(
        parse_retry_after(Some("1.5")),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(
        parse_retry_after(Some(&day.to_string())),
        Some(RETRY_AFTER_MAX)
    );
    for past in [(day + 1).to_string(), "1e20".into(), "1e308".into()] {
        assert_eq!(
            parse_retry_after(Some(&past)),
            Some(RETRY_AFTER_MAX),
            "{past}"
        );
    }
    for junk in ["-1", "NaN", "inf", "soon", "Wed, 21 Oct 2015 07:28:00 GMT"] {
        assert_eq!(parse_retry_after(Some(junk)), None, "{junk}");
    }
}

#[tokio::test]
async fn server_errors_are_not_retried() {
    let server = ScriptedServer::start(vec![Reply::status(500, "text/plain", "boom")]).await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert!(
        matches!(err, TransportError::Server { status: 500, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_html_page_is_not_an_event_stream() {
    let server = ScriptedServer::start(vec![Reply::status(
        200,
        "text/html",
        "<html><body>Welcome to nginx</body></html>",
    )])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert!(
        matches!(err, TransportError::NotEventStream { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("text/html"));
}

#[tokio::test]
async fn a_json_error_with_status_200_is_not_an_event_stream() {
    let server = ScriptedServer::start(vec![Reply::status(
        200,
        "application/json",
        r#"{"error":{"message":"model not loaded"}}"#,
    )])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert!(err.to_string().contains("model not loaded"), "{err}");
}

#[tokio::test]
async fn a_malformed_chunk_keeps_what_arrived_before_it() {
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![
        Step::Send(support::server::sse_frame(&content_chunk("good"))),
        Step::Send(b"data: {not json\n\n".to_vec()),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "good");
    assert!(matches!(
        failure(&events),
        TransportError::MalformedChunk { .. }
    ));
}

#[tokio::test]
async fn an_error_object_inside_the_stream_is_reported() {
    let server = ScriptedServer::start(vec![Reply::sse([
        json!({"error": {"message": "backend crashed"}}),
    ])])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert_eq!(
        err,
        TransportError::InStream {
            message: "backend crashed".into()
        }
    );
}

/// Text generation inference and others send the error as a bare string.
#[tokio::test]
async fn an_error_message_inside_the_stream_is_reported() {
    let server = ScriptedServer::start(vec![Reply::sse([
        json!({"error": "Input validation error", "error_type": "validation"}),
    ])])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert_eq!(
        err,
        TransportError::InStream {
            message: "Input validation error".into()
        }
    );
}

/// llama-server builds before late 2025 send a failure as an `error:`
/// field, then `[DONE]`: it must not read as an empty answer.
#[tokio::test]
async fn an_error_field_of_older_llama_servers_is_reported() {
    let frame = |tail: &str| {
        Reply::sse_steps(vec![
            Step::Send(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".to_vec()),
            Step::Send(format!("error: {{\"code\":400,\"message\":\"the request exceeds the available context size (8192 tokens), try increasing it\",\"type\":\"exceed_context_size_error\"}}{tail}").into_bytes()),
            Step::Send(b"data: [DONE]\n\n".to_vec()),
        ])
    };
    let server = ScriptedServer::start(vec![frame("\n\n"), frame("\r\n\r\n")]).await;
    for _ in 0..2 {
        let events = run(endpoint(&server.base_url())).await;
        assert_eq!(content(&events), "Hel");
        assert!(
            matches!(
                failure(&events),
                TransportError::ContextExceeded {
                    window: Some(8192),
                    ..
                }
            ),
            "{events:?}"
        );
    }
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![Step::Send(
        b"error:\n\ndata: [DONE]\n\n".to_vec(),
    )])])
    .await;
    assert!(matches!(
        failure(&run(endpoint(&server.base_url())).await),
        TransportError::InStream { .. }
    ));
    // Words that are no JSON object or string go as the message.
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![Step::Send(
        b"error: Internal \"server\" error\n\ndata: [DONE]\n\n".to_vec(),
    )])])
    .await;
    assert_eq!(
        failure(&run(endpoint(&server.base_url())).await),
        TransportError::InStream {
            message: "Internal \"server\" error".into()
        }
    );
    let server = ScriptedServer::start(vec![Reply::sse([
        content_chunk("error: none"),
        finish_chunk("stop"),
    ])])
    .await;
    assert_eq!(
        content(&run(endpoint(&server.base_url())).await),
        "error: none"
    );
}

#[tokio::test]
async fn a_stream_closed_before_done_and_finish_is_cut_short() {
    let server = ScriptedServer::start(vec![
        Reply::sse([role_chunk(), content_chunk("half")])
            .unframed()
            .cut_after(2),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "half");
    assert_eq!(failure(&events), TransportError::CutShort);
}

#[tokio::test]
async fn a_connection_broken_mid_chunked_body_is_a_read_failure() {
    let server = ScriptedServer::start(vec![
        Reply::sse([role_chunk(), content_chunk("half")]).cut_after(2),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "half");
    assert!(
        matches!(failure(&events), TransportError::ReadFailed { .. }),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_finish_without_done_is_accepted_as_complete() {
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![
        Step::Send(support::server::sse_frame(&content_chunk("whole"))),
        Step::Send(support::server::sse_frame(&finish_chunk("stop"))),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn a_frame_at_the_cap_passes_and_one_byte_more_is_refused() {
    // A frame of exactly FRAME_MAX_BYTES bytes, its blank line included: a
    // comment line (": ...") that the SSE parser ignores.
    let frame = |len: usize| {
        let mut f = b": ".to_vec();
        f.resize(len - 2, b'x');
        f.extend_from_slice(b"\n\n");
        f
    };
    let at_cap = frame(FRAME_MAX_BYTES);
    let over = frame(FRAME_MAX_BYTES + 1);
    let done = b"data: [DONE]\n\n".to_vec();
    let server = ScriptedServer::start(vec![
        Reply::sse_steps(vec![Step::Send(at_cap), Step::Send(done.clone())]),
        Reply::sse_steps(vec![Step::Send(over), Step::Send(done)]),
    ])
    .await;
    let ok = run(endpoint(&server.base_url())).await;
    assert_eq!(ok.last(), Some(&StreamEvent::Done { tool_calls: vec![] }));
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert_eq!(
        err,
        TransportError::FrameTooLarge {
            limit: FRAME_MAX_BYTES
        }
    );
}

#[tokio::test]
async fn a_reply_over_the_cap_is_cut_off() {
    let piece = "x".repeat(64 * 1024);
    let frames: Vec<_> = (0..(REPLY_MAX_BYTES / piece.len() + 1))
        .map(|_| content_chunk(&piece))
        .collect();
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events).len(), REPLY_MAX_BYTES);
    assert_eq!(
        failure(&events),
        TransportError::ReplyTooLarge {
            limit: REPLY_MAX_BYTES
        }
    );
}

#[tokio::test]
async fn a_reply_exactly_at_the_cap_is_whole() {
    let piece = "x".repeat(64 * 1024);
    let frames: Vec<_> = (0..(REPLY_MAX_BYTES / piece.len()))
        .map(|_| content_chunk(&piece))
        .chain([finish_chunk("stop")])
        .collect();
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

/// A reply of `text` bytes of content in 64 KiB frames, then `comments`
/// bytes of comment frames of 64 KiB (each charged its every byte), then
/// a last word, its finish and `[DONE]`.
fn text_then_comments(text: usize, comments: usize) -> Reply {
    const PIECE: usize = 64 * 1024;
    let mut comment = b": ".to_vec();
    comment.resize(PIECE - 2, b'x');
    comment.extend_from_slice(b"\n\n");
    let mut steps: Vec<Step> = std::iter::repeat_n(
        Step::Send(support::server::sse_frame(&content_chunk(
            &"x".repeat(PIECE),
        ))),
        text / PIECE,
    )
    .collect();
    steps.extend(std::iter::repeat_n(Step::Send(comment), comments / PIECE));
    for frame in [content_chunk("!"), finish_chunk("stop")] {
        steps.push(Step::Send(support::server::sse_frame(&frame)));
    }
    steps.push(Step::Send(b"data: [DONE]\n\n".to_vec()));
    Reply::sse_steps(steps)
}

/// Comments count toward the reply cap, alone or with the reply's text:
/// the parser drops them unseen, and 180 MB of them were once read
/// (issue 37 item 5). Under the cap, the reply is whole.
#[tokio::test]
async fn comments_count_toward_the_reply_cap_with_the_text() {
    let half = REPLY_MAX_BYTES / 2;
    let over = 64 * 1024;
    let server = ScriptedServer::start(vec![
        text_then_comments(0, REPLY_MAX_BYTES + over),
        text_then_comments(half, half + over),
        text_then_comments(half, half - over),
    ])
    .await;
    let too_large = TransportError::ReplyTooLarge {
        limit: REPLY_MAX_BYTES,
    };
    let comments_alone = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&comments_alone), "");
    assert_eq!(failure(&comments_alone), too_large);
    let with_text = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&with_text).len(), half);
    assert_eq!(failure(&with_text), too_large);
    let under = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&under).len(), half + 1);
    assert_eq!(
        under.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

#[tokio::test]
async fn frames_that_arrive_together_are_passed_on_as_one_piece_of_text() {
    let mut body = Vec::new();
    for i in 0..100 {
        body.extend_from_slice(&support::server::sse_frame(&content_chunk(&format!(
            "{i} "
        ))));
    }
    body.extend_from_slice(&support::server::sse_frame(&finish_chunk("stop")));
    body.extend_from_slice(b"data: [DONE]\n\n");
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![Step::Send(body)])]).await;
    let events = run(endpoint(&server.base_url())).await;
    let expected: String = (0..100).map(|i| format!("{i} ")).collect();
    assert_eq!(content(&events), expected);
    let pieces = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Content(_)))
        .count();
    assert!(pieces < 10, "{pieces} content events for one read");
}

#[tokio::test]
async fn frame_ends_split_across_reads_are_found() {
    let frame = support::server::sse_frame(&content_chunk("split"));
    let n = frame.len();
    // Cut inside the blank line, and between the CR and LF of CRLF framing.
    let crlf = b"data: {\"choices\":[{\"delta\":{\"content\":\"!\"}}]}\r\n\r\n".to_vec();
    let m = crlf.len();
    let server = ScriptedServer::start(vec![Reply::sse_steps(vec![
        Step::Send(frame[..n - 1].to_vec()),
        Step::Send(frame[n - 1..].to_vec()),
        Step::Send(crlf[..m - 1].to_vec()),
        Step::Send(crlf[m - 1..].to_vec()),
        Step::Send(b"data: [DONE]\n\n".to_vec()),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "split!");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done { tool_calls: vec![] })
    );
}

/// The calls of an episode that completed without a loop stop.
fn calls_without_a_loop(events: &[StreamEvent]) -> &[dashfloat::protocol::ToolCallRequest] {
    let looped = events
        .iter()
        .any(|e| matches!(e, StreamEvent::Looping { .. }));
    match events.last() {
        Some(StreamEvent::Done { tool_calls }) if !looped => tool_calls,
        _ => panic!("{events:#?}"),
    }
}

/// A call's arguments as the assistant message carries them.
fn sent(arguments: &dashfloat::protocol::CallArguments) -> String {
    serde_json::to_string(arguments.object().unwrap()).unwrap()
}

/// A reply that writes the same calls over and over is stopped once a call
/// is complete for the third time: it ends then with each of its calls
/// once, and what the server sends after is never read. Keys in another
/// order and arguments split over chunks are the same call.
#[tokio::test]
async fn a_reply_repeating_its_calls_is_stopped_at_a_calls_third_copy() {
    assert_eq!(REPLY_CALL_COPIES_MAX, 3);
    let grep = r#"{"pattern":"x","path":"src"}"#;
    let list = r#"{"path":"."}"#;
    let mut frames = vec![role_chunk(), content_chunk("Looking.")];
    let calls = [
        ("grep", grep),
        ("list_directory", list),
        ("grep", r#"{"path": "src", "pattern": "x"}"#),
        ("list_directory", list),
        ("grep", grep),
        ("read_file", r#"{"path":"a"}"#),
    ];
    for (i, (name, args)) in calls.into_iter().enumerate() {
        let (head, tail) = args.split_at(5);
        let i = i as u32;
        frames.push(support::server::tool_call_chunk(
            i,
            Some(&format!("id{i}")),
            Some(name),
            head,
        ));
        frames.push(support::server::tool_call_chunk(i, None, None, tail));
    }
    frames.push(content_chunk(" never read"));
    frames.push(finish_chunk("length"));
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "Looking.");
    assert!(events.contains(&StreamEvent::Looping {
        name: "grep".into(),
        times: 3
    }));
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::Finish(_))));
    let Some(StreamEvent::Done { tool_calls }) = events.last() else {
        panic!("{events:#?}")
    };
    let kept: Vec<(&str, String)> = tool_calls
        .iter()
        .map(|c| (c.id.as_str(), sent(&c.arguments)))
        .collect();
    assert_eq!(kept, [("id0", grep.to_owned()), ("id1", list.to_owned())]);
}

/// A server that sends every call's header before any arguments leaves
/// each call unfinished when the next starts: such calls are not counted,
/// so four reads of four files are no loop.
#[tokio::test]
async fn calls_whose_fragments_interleave_are_not_taken_for_copies() {
    let mut frames = vec![role_chunk()];
    for i in 0..4u32 {
        frames.push(support::server::tool_call_chunk(
            i,
            Some(&format!("id{i}")),
            Some("read_file"),
            "",
        ));
    }
    for i in 0..4u32 {
        frames.push(support::server::tool_call_chunk(
            i,
            None,
            None,
            &json!({ "path": format!("f{i}") }).to_string(),
        ));
    }
    frames.push(finish_chunk("tool_calls"));
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    let tool_calls = calls_without_a_loop(&events);
    let paths: Vec<String> = tool_calls.iter().map(|c| sent(&c.arguments)).collect();
    assert_eq!(
        paths,
        [
            r#"{"path":"f0"}"#,
            r#"{"path":"f1"}"#,
            r#"{"path":"f2"}"#,
            r#"{"path":"f3"}"#
        ]
    );
}

/// A call written twice in one reply is no loop: both copies are kept,
/// though the second is complete (another call follows it).
#[tokio::test]
async fn a_call_written_twice_in_one_reply_is_kept_twice() {
    let list = r#"{"path":"."}"#;
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[
        ("a", "list_directory", list),
        ("b", "read_file", r#"{"path":"x"}"#),
        ("c", "list_directory", list),
        ("d", "read_file", r#"{"path":"y"}"#),
    ])])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    let tool_calls = calls_without_a_loop(&events);
    let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
}

#[tokio::test]
async fn the_65th_tool_call_stops_the_stream_after_announcing_64() {
    let mut frames = vec![role_chunk()];
    for i in 0..65u32 {
        frames.push(support::server::tool_call_chunk(
            i,
            Some(&format!("id{i}")),
            Some("list_directory"),
            &json!({ "path": format!("d{i}") }).to_string(),
        ));
    }
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    let announced = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
        .count();
    assert_eq!(announced, 64);
    assert_eq!(
        failure(&events),
        TransportError::TooManyToolCalls { limit: 64 }
    );
}

/// A long call reports its size every `TOOL_CALL_PROGRESS_BYTES` once past
/// its first KiB, not per piece: five reports for the next 4 KiB streamed
/// in 100-byte pieces. Within the first KiB it reports every
/// `TOOL_CALL_EARLY_PROGRESS_BYTES`, so a small call is seen growing.
#[tokio::test]
async fn a_long_call_reports_its_growing_size_a_kib_at_a_time() {
    let mut frames = vec![support::server::tool_call_chunk(
        0,
        Some("w1"),
        Some("write_file"),
        "",
    )];
    let piece = "y".repeat(100);
    for _ in 0..(5 * TOOL_CALL_PROGRESS_BYTES / 100 + 1) {
        frames.push(support::server::tool_call_chunk(0, None, None, &piece));
    }
    frames.push(finish_chunk("tool_calls"));
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    let sizes: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallProgress { id, bytes } if id == "w1" => Some(*bytes),
            _ => None,
        })
        .collect();
    let (early, late): (Vec<usize>, Vec<usize>) = sizes
        .iter()
        .partition(|bytes| **bytes < TOOL_CALL_PROGRESS_BYTES);
    assert_eq!(early, (1..=10).map(|i| i * 100).collect::<Vec<_>>());
    assert_eq!(late.len(), 5, "{sizes:?}");
    for (step, bytes) in late.iter().enumerate() {
        assert_eq!(bytes / TOOL_CALL_PROGRESS_BYTES, step + 1, "{sizes:?}");
    }
}

#[test]
fn progress_steps_never_go_back_and_are_few() {
    let steps: Vec<usize> = (0..=3 * TOOL_CALL_PROGRESS_BYTES)
        .map(progress_step)
        .collect();
    assert!(steps.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
    assert_eq!(progress_step(TOOL_CALL_EARLY_PROGRESS_BYTES - 1), 0);
    assert_eq!(progress_step(TOOL_CALL_EARLY_PROGRESS_BYTES), 1);
    assert_eq!(progress_step(REPLY_MAX_BYTES), 16 + 4095);
}

#[tokio::test]
async fn tool_call_arguments_count_against_the_reply_cap() {
    let piece = "x".repeat(64 * 1024);
    let mut frames = vec![support::server::tool_call_chunk(
        0,
        Some("big"),
        Some("write_file"),
        "{\"path\":\"a\",\"content\":\"",
    )];
    for _ in 0..(REPLY_MAX_BYTES / piece.len() + 1) {
        frames.push(support::server::tool_call_chunk(0, None, None, &piece));
    }
    let server = ScriptedServer::start(vec![Reply::sse(frames)]).await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        id: "big".into(),
        name: "write_file".into()
    }));
    assert_eq!(
        failure(&events),
        TransportError::ReplyTooLarge {
            limit: REPLY_MAX_BYTES
        }
    );
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_up_to_its_cap() {
    use dashfloat::bounds::ERROR_BODY_MAX_BYTES;
    let body = format!(
        "{{\"error\":{{\"message\":\"{}\"}}}}",
        "e".repeat(4 * ERROR_BODY_MAX_BYTES)
    );
    let server = ScriptedServer::start(vec![Reply::status(400, "application/json", &body)]).await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    // The body was cut, so it no longer parses as JSON: the message is the
    // start of the raw text, shortened for the chat.
    let TransportError::BadRequest { message } = err else {
        panic!("{err:?}")
    };
    assert!(message.starts_with("{\"error\""), "{message}");
    assert!(message.chars().count() <= 401, "{}", message.len());
}

/// A data frame that adds nothing to the reply (an empty `choices`, a
/// delta with no text) is spent from the reply cap by its length, as a
/// comment is: a server cannot send them without end either. A reply's
/// frames that do carry text are charged their text alone.
#[tokio::test]
async fn data_frames_that_add_nothing_count_toward_the_reply_cap() {
    let empty = support::server::sse_frame(&json!({ "choices": [] }));
    let frame_len = r#"{"choices":[]}"#.len();
    let frames = REPLY_MAX_BYTES / frame_len + 1;
    let mut body = Vec::with_capacity(frames * empty.len());
    for _ in 0..frames {
        body.extend_from_slice(&empty);
    }
    body.extend_from_slice(b"data: [DONE]\n\n");
    let server = ScriptedServer::start(vec![
        Reply::sse_steps(vec![Step::Send(body)]),
        Reply::text(&["still", " fine"]),
    ])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(
        failure(&events),
        TransportError::ReplyTooLarge {
            limit: REPLY_MAX_BYTES
        }
    );
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "still fine");
}

/// What the provider read from its prompt cache reaches the usage: OpenAI
/// says it in `usage.prompt_tokens_details`, llama.cpp in the chunk's
/// `timings.cache_n`.
#[tokio::test]
async fn the_cache_figure_is_read_from_either_place() {
    let mut openai = usage_chunk(120, 7);
    openai["usage"]["prompt_tokens_details"]["cached_tokens"] = json!(96);
    let mut llama = usage_chunk(120, 7);
    llama["usage"]
        .as_object_mut()
        .unwrap()
        .remove("prompt_tokens_details");
    llama["timings"]["cache_n"] = json!(80);
    for (chunk, cached) in [(openai, 96), (llama, 80)] {
        let server = ScriptedServer::start(vec![Reply::sse([
            role_chunk(),
            content_chunk("x"),
            finish_chunk("stop"),
            chunk,
        ])])
        .await;
        let events = run(endpoint(&server.base_url())).await;
        let usage = events.iter().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        });
        assert_eq!(usage.map(|u| u.cached_tokens), Some(cached), "{events:?}");
    }
}
