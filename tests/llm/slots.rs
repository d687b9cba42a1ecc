//! Asking llama.cpp to save and restore its slot (ADR 0034), against the
//! scripted server answering as llama-server does: what is sent, and every
//! way the answer can be a refusal, each with what the server said.

use std::time::Duration;

use dashfloat::llm::slots::{SlotAction, SlotError, act};

use dashfloat::bounds::{REFUSAL_SHOWN_MAX_BYTES, SLOT_ACTION_TIMEOUT, SLOT_REPLY_MAX_BYTES};
use serde_json::json;

use crate::endpoint;
use crate::support::server::{Reply, ScriptedServer};

fn json_reply(status: u16, body: &str) -> Reply {
    Reply::status(status, "application/json", body)
}

#[tokio::test]
async fn a_save_and_a_restore_post_the_file_at_the_server_root_with_the_credentials() {
    let server = ScriptedServer::start(vec![
        json_reply(
            200,
            r#"{"id_slot":0,"filename":"f.bin","n_saved":1539,"n_written":18936484}"#,
        ),
        json_reply(
            200,
            r#"{"id_slot":0,"filename":"f.bin","n_restored":1539,"n_read":18936484}"#,
        ),
    ])
    .await;
    let endpoint = endpoint(&server.base_url(), "sk-slots", ("X-Team", "blue"));
    assert_eq!(
        act(&endpoint, SlotAction::Save, "f.bin").await.unwrap(),
        1539
    );
    assert_eq!(
        act(&endpoint, SlotAction::Restore, "f.bin").await.unwrap(),
        1539
    );
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/slots/0?action=save", "/slots/0?action=restore"]);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.body, json!({"filename": "f.bin"}));
        assert_eq!(request.header("authorization"), Some("Bearer sk-slots"));
        assert_eq!(request.header("x-team"), Some("blue"));
    }
}

#[tokio::test]
async fn a_refusal_carries_the_servers_message_or_the_start_of_its_body() {
    let server = ScriptedServer::start(vec![
        json_reply(
            400,
            r#"{"error":{"code":400,"message":"Unable to restore slot: No available space in KV cache or invalid slot save file","type":"invalid_request_error"}}"#,
        ),
        Reply::status(404, "text/plain", "Not Found"),
        json_reply(200, r#"{"id_slot":0}"#),
    ])
    .await;
    let endpoint = endpoint(&server.base_url(), "k", ("X-Team", "blue"));
    let err = act(&endpoint, SlotAction::Restore, "gone.bin")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SlotError::Refused { status: 400, message } if message.starts_with("Unable to restore slot")),
        "{err:?}"
    );
    let err = act(&endpoint, SlotAction::Save, "f.bin").await.unwrap_err();
    assert_eq!(err.to_string(), "HTTP 404: Not Found");
    // Success without a token count is not llama.cpp's answer.
    let err = act(&endpoint, SlotAction::Save, "f.bin").await.unwrap_err();
    assert!(matches!(err, SlotError::Unreadable(_)), "{err:?}");
}

/// Of a huge refusal that is not llama.cpp's JSON, only the start is shown.
#[tokio::test]
async fn a_huge_refusal_shows_only_its_start() {
    let body = "x".repeat(SLOT_REPLY_MAX_BYTES * 8);
    let server = ScriptedServer::start(vec![Reply::status(500, "text/plain", &body)]).await;
    let endpoint = endpoint(&server.base_url(), "k", ("X-Team", "blue"));
    let err = act(&endpoint, SlotAction::Save, "f.bin").await.unwrap_err();
    let SlotError::Refused { status, message } = err else {
        panic!("not a refusal: {err:?}");
    };
    assert_eq!(status, 500);
    assert_eq!(message, "x".repeat(REFUSAL_SHOWN_MAX_BYTES));
}

/// A server that never answers is given up on after the timeout, so
/// quitting never waits longer than its grace. On tokio's paused clock:
/// the timeout passes without the suite waiting for it.
#[tokio::test(start_paused = true)]
async fn a_server_that_does_not_answer_is_given_up_on() {
    let server = ScriptedServer::start(vec![
        json_reply(200, r#"{"n_saved":1}"#)
            .head_delay(SLOT_ACTION_TIMEOUT + Duration::from_secs(30)),
    ])
    .await;
    let endpoint = endpoint(&server.base_url(), "k", ("X-Team", "blue"));
    let err = act(&endpoint, SlotAction::Save, "f.bin").await.unwrap_err();
    assert!(matches!(err, SlotError::Timeout), "{err:?}");
    assert_eq!(err.to_string(), "no answer within 10s");
}
