//! Asking the server for its window and models at start-up, against the
//! scripted server answering as llama.cpp and vLLM do, and every way an
//! answer can be useless falling back to "unknown".

use std::time::Duration;

use dashfloat::llm::discover::{Answers, Questions, ask};

use dashfloat::bounds::{DISCOVERY_BODY_MAX_BYTES, DISCOVERY_TIMEOUT, SERVED_MODELS_MAX};
use serde_json::json;

use crate::endpoint;
use crate::support::server::{Reply, ScriptedServer};

const WINDOW: Questions = Questions {
    window: true,
    models: false,
    kind: false,
};
const BOTH: Questions = Questions {
    window: true,
    models: true,
    kind: false,
};

fn json_reply(value: &serde_json::Value) -> Reply {
    Reply::status(200, "application/json", &value.to_string())
}

fn llama_props(n_ctx: u64) -> Reply {
    json_reply(&json!({
        "default_generation_settings": {"n_ctx": n_ctx, "temperature": 0.8},
        "total_slots": 1,
        "model_path": "/models/qwen.gguf"
    }))
}

fn vllm_models(cards: &[(&str, u64)]) -> Reply {
    let data: Vec<_> = cards
        .iter()
        .map(|(id, len)| json!({"id": id, "object": "model", "owned_by": "vllm", "max_model_len": len}))
        .collect();
    json_reply(&json!({"object": "list", "data": data}))
}

fn not_found() -> Reply {
    Reply::status(404, "text/plain", "Not Found")
}

async fn answers(server: &ScriptedServer, model: &str, questions: Questions) -> Answers {
    let endpoint = endpoint(&server.base_url(), "sk-discover", ("X-Team", "blue"));
    ask(&endpoint, model, questions).await
}

fn paths(server: &ScriptedServer) -> Vec<String> {
    server.requests().into_iter().map(|r| r.path).collect()
}

#[tokio::test]
async fn llama_cpp_tells_its_window_in_props_at_the_server_root() {
    let server = ScriptedServer::start(vec![llama_props(8192)]).await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, Some(8192));
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    assert_eq!(paths(&server), ["/props"]);
}

/// The template in `/props` says how the server frames a tool result;
/// one without a known marker, or none at all, gives no opener.
#[tokio::test]
async fn llama_cpp_s_template_tells_how_it_opens_a_tool_result() {
    let qwen = json_reply(&json!({
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template": "{%- if message.role == \"tool\" %}{{- '\\n<tool_response>\\n' }}"
    }));
    let plain = json_reply(&json!({
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template": "{{ message.content }}"
    }));
    // A null template is no template: the server is llama.cpp all the same.
    let null = json_reply(&json!({
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template": null
    }));
    let server = ScriptedServer::start(vec![qwen, plain, llama_props(8192), null]).await;
    let mut got = Vec::new();
    for _ in 0..4 {
        let a = answers(&server, "m", WINDOW).await;
        got.push((a.result_opener, a.llama_cpp));
    }
    assert_eq!(
        got,
        [
            (Some("<tool_response>"), true),
            (None, true),
            (None, true),
            (None, true)
        ]
    );
}

/// A server on this machine whose window was configured is still asked
/// what it is: llama.cpp reports prompt progress and saves slots. Its
/// window does not replace the configured one; a server that is not
/// llama.cpp is asked nothing more.
#[tokio::test]
async fn the_kind_alone_asks_props_and_leaves_the_window_alone() {
    let kind = Questions {
        window: false,
        models: false,
        kind: true,
    };
    let server = ScriptedServer::start(vec![llama_props(8192)]).await;
    let got = answers(&server, "test-model", kind).await;
    assert!(got.llama_cpp);
    assert_eq!(got.context_window, None);
    assert_eq!(paths(&server), ["/props"]);

    let server = ScriptedServer::start(vec![not_found()]).await;
    let got = answers(&server, "test-model", kind).await;
    assert!(!got.llama_cpp);
    assert_eq!(paths(&server), ["/props"]);
}

#[tokio::test]
async fn discovery_requests_carry_the_key_and_headers_as_chat_requests_do() {
    let server = ScriptedServer::start(vec![not_found(), vllm_models(&[("m", 4096)])]).await;
    answers(&server, "m", WINDOW).await;
    for request in server.requests() {
        assert_eq!(request.method, "GET");
        assert_eq!(request.header("authorization"), Some("Bearer sk-discover"));
        assert_eq!(request.header("x-team"), Some("blue"));
    }
}

#[tokio::test]
async fn vllm_tells_the_window_of_the_model_in_use_in_models() {
    let server = ScriptedServer::start(vec![
        not_found(),
        vllm_models(&[("other", 2048), ("test-model", 32_768)]),
    ])
    .await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, Some(32_768));
    assert!(got.served.is_empty(), "models were not asked for");
    assert_eq!(paths(&server), ["/props", "/v1/models"]);
}

#[tokio::test]
async fn one_model_served_is_the_one_used_and_its_window_comes_with_it() {
    let server = ScriptedServer::start(vec![
        not_found(),
        vllm_models(&[("Qwen/Qwen2.5-7B", 16_384)]),
    ])
    .await;
    let got = answers(&server, "qwen2.5-coder-0.5b", BOTH).await;
    assert_eq!(got.served, ["Qwen/Qwen2.5-7B"]);
    assert_eq!(got.context_window, Some(16_384));
    assert_eq!(paths(&server), ["/props", "/v1/models"], "one request each");
}

#[tokio::test]
async fn models_are_asked_once_even_when_props_answered_the_window() {
    let server =
        ScriptedServer::start(vec![llama_props(8192), vllm_models(&[("a", 1), ("b", 2)])]).await;
    let got = answers(&server, "test-model", BOTH).await;
    assert_eq!(got.context_window, Some(8192), "props wins over models");
    assert_eq!(got.served, ["a", "b"]);
    assert!(!got.more_served);
}

#[tokio::test]
async fn many_models_are_listed_up_to_the_cap() {
    let names: Vec<String> = (0..SERVED_MODELS_MAX + 5)
        .map(|i| format!("m{i}"))
        .collect();
    let cards: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 4096)).collect();
    let server = ScriptedServer::start(vec![vllm_models(&cards)]).await;
    let got = answers(
        &server,
        "test-model",
        Questions {
            window: false,
            models: true,
            kind: false,
        },
    )
    .await;
    assert_eq!(got.served, names[..SERVED_MODELS_MAX]);
    assert!(got.more_served);
    assert_eq!(got.context_window, None, "the window was not asked for");
    assert_eq!(paths(&server), ["/v1/models"]);
}

#[tokio::test]
async fn no_models_served_leaves_everything_unknown() {
    let server = ScriptedServer::start(vec![not_found(), vllm_models(&[])]).await;
    let got = answers(&server, "test-model", BOTH).await;
    assert_eq!(got.served, Vec::<String>::new());
    assert_eq!(got.context_window, None);
}

#[tokio::test]
async fn a_model_not_served_gives_no_window() {
    let server = ScriptedServer::start(vec![not_found(), vllm_models(&[("a", 1), ("b", 2)])]).await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, None);
}

#[tokio::test]
async fn garbage_404_and_huge_answers_fall_back_to_unknown() {
    let padding = "x".repeat(2 * DISCOVERY_BODY_MAX_BYTES);
    let huge = json_reply(&json!({
        "object": "list",
        "data": [{"id": "test-model", "max_model_len": 4096, "padding": padding}]
    }));
    let server =
        ScriptedServer::start(vec![Reply::status(200, "application/json", "<html>"), huge]).await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, None);
    assert_eq!(got.problems.len(), 2, "{:?}", got.problems);

    let server = ScriptedServer::start(vec![not_found(), not_found()]).await;
    let got = answers(&server, "test-model", BOTH).await;
    assert_eq!(
        got,
        Answers {
            problems: got.problems.clone(),
            ..Answers::default()
        }
    );
    assert!(
        got.problems.iter().all(|p| p.contains("HTTP 404")),
        "{:?}",
        got.problems
    );
}

/// On tokio's paused clock: the timeout passes without the suite
/// waiting for it.
#[tokio::test(start_paused = true)]
async fn a_server_that_does_not_answer_is_given_up_on() {
    let server = ScriptedServer::start(vec![
        llama_props(8192).head_delay(DISCOVERY_TIMEOUT + Duration::from_secs(30)),
        not_found(),
    ])
    .await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, None);
    assert!(got.problems[0].contains("no answer"), "{:?}", got.problems);
}

#[tokio::test]
async fn a_zero_window_is_no_window() {
    let server =
        ScriptedServer::start(vec![llama_props(0), vllm_models(&[("test-model", 0)])]).await;
    let got = answers(&server, "test-model", WINDOW).await;
    assert_eq!(got.context_window, None);
}
