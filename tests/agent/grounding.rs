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

/// A question about a name answered with that name, when no tool result
/// showed it, is asked once to look; the model then looks and says what
/// it found. A second such answer ends the turn: once a turn.
#[tokio::test]
async fn an_answer_naming_what_no_result_showed_is_asked_once_to_look() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "def parse(text):\n    return text\n",
    )
    .unwrap();
    let read = json!({ "path": "app.py" }).to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("r1", "read_file", &[&read]),
        Reply::text(&["`merge_patches` is defined in app.py."]),
        grep("g1", json!({ "pattern": "merge_patches" })),
        Reply::text(&["I did not find merge_patches in the project."]),
    ])
    .await;
    let mut h = start_with(setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask));
    h.prompt("Which file defines the function merge_patches?")
        .await;
    let events = h.turn().await;
    assert_eq!(server.requests().len(), 4);
    assert_eq!(
        last_message(&server, 2),
        json!({
            "role": "user",
            "content": "[dashfloat] No tool result so far shows `merge_patches`, so that answer is \
                        not from the project. Search for it (grep) before you answer; if it is not \
                        in the project, say you did not find it."
        })
    );
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("asked the model once to look for it")),
        "{events:#?}"
    );

    // Once a turn: the same answer again ends the turn.
    server.push_reply(Reply::text(&["`split_hunks` is in app.py."]));
    server.push_reply(Reply::text(&["`split_hunks` is in app.py, I am sure."]));
    h.prompt("Which file defines split_hunks?").await;
    h.turn().await;
    assert_eq!(server.requests().len(), 6);
}

/// No ask to look when a result showed the name (in this turn or an
/// earlier one), when the answer says it found nothing, after a request
/// to act, or with `ask_to_look` off.
#[tokio::test]
async fn answers_from_results_or_saying_nothing_was_found_are_not_asked_to_look() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "def parse(text):\n    return text\n",
    )
    .unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start_with(setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask));
    let read = json!({ "path": "app.py" }).to_string();
    server.push_reply(Reply::tool_call("r1", "read_file", &[&read]));
    server.push_reply(Reply::text(&[
        "`parse_text` is not defined; `parse` is, in app.py.",
    ]));
    server.push_reply(grep(
        "g1",
        json!({ "pattern": "def parse", "path": "app.py" }),
    ));
    server.push_reply(Reply::text(&["`parse` is defined in app.py."]));
    server.push_reply(Reply::text(&["`parse` is in app.py, as read before."]));
    server.push_reply(Reply::text(&[
        "Shall I add `merge_patches` at the end of app.py?",
    ]));
    for prompt in [
        "Where is parse_text defined?",
        "Which file defines `parse`?",
        "And `parse` again?",
        "Add merge_patches to app.py",
    ] {
        h.prompt(prompt).await;
        h.turn().await;
    }
    assert_eq!(server.requests().len(), 6);
    let server = ScriptedServer::start(vec![Reply::text(&["`merge_patches` is in app.py."])]).await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.ask_to_look = false;
    let mut h = start_with(s);
    h.prompt("Which file defines merge_patches?").await;
    h.turn().await;
    assert_eq!(server.requests().len(), 1);
}

/// A write or edit in a turn whose prompt only asks a question is not
/// run, under every policy, and not put to the person: its result says
/// to answer. A prompt that asks for a change writes as before.
#[tokio::test]
async fn a_question_turn_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "def parse(text):\n    return text\n",
    )
    .unwrap();
    let write = json!({ "path": "notes.md", "content": "parse is in app.py\n" }).to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("w1", "write_file", &[&write]),
        Reply::text(&["`parse` is in app.py."]),
        Reply::tool_call("w2", "write_file", &[&write]),
        Reply::text(&["Written."]),
    ])
    .await;
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
    ));
    h.prompt("Which file defines parse?").await;
    h.turn().await;
    let result = last_message(&server, 1);
    let content: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        content["error"],
        "not run: the person asked a question and did not ask for a change. Answer it from what \
         you have read; change files only when the person asks for a change"
    );
    assert_eq!(content["rejected"], true);
    assert!(!dir.path().join("notes.md").exists());
    h.prompt("Write a note saying where parse is").await;
    h.turn().await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
        "parse is in app.py\n"
    );
}
