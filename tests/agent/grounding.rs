//! Grounded answers and doing, not advising (ADR 0049): the ask to answer
//! after searches that found nothing says so; a request for a change
//! answered with advice is asked once to act.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::{ANSWER_NOW_PROMPT, NOTHING_FOUND_PROMPT};
use serde_json::{Value, json};

use crate::support;
use support::agent::{setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// The last message of request `n` the server received.
fn last_message(server: &ScriptedServer, n: usize) -> Value {
    server.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap()
}

fn grep(id: &str, arguments: Value) -> Reply {
    Reply::tool_call(id, "grep", &[&arguments.to_string()])
}

/// The last step's ask to answer says the searches found nothing when
/// every search of the turn did, and is the plain ask when one found
/// something — in the rest of the project, too, when it looked in one
/// file.
#[tokio::test]
async fn the_ask_to_answer_says_when_every_search_found_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("setup.cfg"),
        "[metadata]\nversion = 8.0.4\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("app.py"), "print('hello')\n").unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.max_steps = 3;
    let mut h = start_with(s);
    let pattern = |p: &str| json!({ "pattern": p });
    let in_app = json!({ "pattern": "version", "path": "app.py" });
    for (n, (first, second, ask)) in [
        (pattern("redis"), pattern("REDIS_URL"), NOTHING_FOUND_PROMPT),
        (pattern("redis"), pattern("version"), ANSWER_NOW_PROMPT),
        (pattern("redis"), in_app, ANSWER_NOW_PROMPT),
    ]
    .into_iter()
    .enumerate()
    {
        server.push_reply(grep(&format!("a{n}"), first));
        server.push_reply(grep(&format!("b{n}"), second));
        server.push_reply(Reply::text(&["answer"]));
        h.prompt("Which file configures the Redis connection?")
            .await;
        h.turn().await;
        let third = server.requests().len() - 1;
        assert_eq!(
            last_message(&server, third),
            json!({"role": "user", "content": ask}),
            "turn {n}"
        );
    }
}

/// "Fix …" answered with advice and no call is asked once to act; the
/// model then acts. A second reply in words ends the turn: it is asked
/// once only.
#[tokio::test]
async fn a_request_to_fix_answered_with_advice_is_asked_once_to_act() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), "print(nmae)\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text(&["Install the package, then run it again."]),
        Reply::tool_call(
            "e1",
            "edit_file",
            &[r#"{"path":"app.py","search_block":"nmae","replace_block":"name"}"#],
        ),
        Reply::text(&["Fixed the misspelt name."]),
    ])
    .await;
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
    ));
    h.prompt("Find and fix the cause of the crash of `python3 app.py`")
        .await;
    let events = h.turn().await;
    assert_eq!(server.requests().len(), 3);
    let note = last_message(&server, 1);
    assert_eq!(note["role"], "user");
    assert!(
        note["content"]
            .as_str()
            .unwrap()
            .starts_with("[dashfloat] Do it now with your tools"),
        "{note}"
    );
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("asked it once to make the change")),
        "{events:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "print(name)\n"
    );

    // Once a turn: advice twice ends the turn with the second.
    server.push_reply(Reply::text(&["You could rename it."]));
    server.push_reply(Reply::text(&["Rename it yourself."]));
    h.prompt("Fix it again").await;
    h.turn().await;
    assert_eq!(server.requests().len(), 5);
}

/// No ask to act after a question about the project, a reply that asks
/// the person something, or with `ask_to_act` off.
#[tokio::test]
async fn questions_and_replies_that_ask_are_not_followed_by_the_ask_to_act() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start_with(setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask));
    for (prompt, reply) in [
        ("How do I run the tests?", "Run `make test`."),
        ("Fix the bug", "Which bug do you mean?"),
    ] {
        server.push_reply(Reply::text(&[reply]));
        h.prompt(prompt).await;
        h.turn().await;
    }
    assert_eq!(server.requests().len(), 2);
    let server = ScriptedServer::start(vec![Reply::text(&["Edit line 3."])]).await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.ask_to_act = false;
    let mut h = start_with(s);
    h.prompt("Fix the bug").await;
    h.turn().await;
    assert_eq!(server.requests().len(), 1);
}
