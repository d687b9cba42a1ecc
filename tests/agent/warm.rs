//! Warming the server's prompt cache while the person types (ADR 0032):
//! what the warm-up sends, that nothing of it shows, that a prompt stops
//! it, and when a session sends one. Saving llama.cpp's slot on quit and
//! restoring it on resume (ADR 0034).

use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::llm::discover::Questions;
use dashfloat::llm::slots;
use dashfloat::llm::wire::{Message, Role};
use dashfloat::protocol::{AgentEvent, UiCommand};
use dashfloat::session::{OpenSession, SessionRecord, SessionSetup, SessionStore};
use serde_json::{Value, json};

use crate::support::agent::{EVENT_WAIT, reply_text, setup, start_with};
use crate::support::server::{Reply, ScriptedServer, assert_prefix_stable};

/// An agent with the warm-up on, in a fresh directory.
fn start_warming(
    server: &ScriptedServer,
    headless: bool,
) -> (crate::support::agent::AgentHarness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.warm_cache = true;
    s.headless = headless;
    (start_with(s), dir)
}

fn roles(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_new_session_sends_its_prefix_ahead_for_one_token_and_nothing_of_it_shows() {
    let server = ScriptedServer::start(vec![Reply::text(&["warm"]), Reply::text(&["hello"])]).await;
    let (mut h, _dir) = start_warming(&server, false);
    let warm = &server.wait_requests(1, EVENT_WAIT).await[0];
    assert_eq!(warm.body["max_tokens"], json!(1));
    assert_eq!(roles(&warm.body), ["system"]);
    assert_eq!(
        warm.body["tools"],
        dashfloat::tools::Registry::builtin().definitions()
    );
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "hello");
    let real = &server.requests()[1];
    assert_eq!(roles(&real.body), ["system", "user"]);
    assert_ne!(real.body["max_tokens"], json!(1));
    // The real request repeats the warm-up's messages byte for byte, so
    // the server's cache holds its prefix.
    let warm_raw = String::from_utf8(warm.raw_body.clone()).unwrap();
    let real_raw = String::from_utf8(real.raw_body.clone()).unwrap();
    let system = serde_json::to_string(&warm.body["messages"][0]).unwrap();
    assert!(warm_raw.contains(&system) && real_raw.contains(&system));
    assert_prefix_stable(&server.requests());
}

#[tokio::test]
async fn a_prompt_stops_the_warm_up_and_is_answered_without_waiting_for_it() {
    let server = ScriptedServer::start(vec![
        // A warm-up the server would take a minute to read.
        Reply::text(&["warm"]).head_delay(Duration::from_secs(60)),
        Reply::text(&["answered"]),
    ])
    .await;
    let (mut h, _dir) = start_warming(&server, false);
    server.wait_requests(1, EVENT_WAIT).await;
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "answered");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn clear_warms_the_new_conversation_and_a_headless_run_never_warms() {
    let server = ScriptedServer::start(vec![
        Reply::text(&["warm"]),
        Reply::text(&["one"]),
        Reply::text(&["warm again"]),
    ])
    .await;
    let (mut h, _dir) = start_warming(&server, false);
    server.wait_requests(1, EVENT_WAIT).await;
    h.prompt("first").await;
    h.turn().await;
    h.send(UiCommand::Clear).await;
    h.until(|e| *e == AgentEvent::TurnDone).await;
    let requests = server.wait_requests(3, EVENT_WAIT).await;
    assert_eq!(roles(&requests[2].body), ["system"]);
    assert_eq!(requests[2].body["max_tokens"], json!(1));

    // `exec` answers at once: there is no typing to warm the cache during.
    let server = ScriptedServer::start(vec![Reply::text(&["only"])]).await;
    let (mut h, _dir) = start_warming(&server, true);
    h.prompt("hi").await;
    h.turn().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(roles(&requests[0].body), ["system", "user"]);
}

/// A llama.cpp server on this machine, asked nothing but its kind.
fn llama_props() -> Reply {
    Reply::status(
        200,
        "application/json",
        r#"{"default_generation_settings":{"n_ctx":8192}}"#,
    )
}

/// llama.cpp refusing a slot action, as a server without
/// `--slot-save-path` does.
fn refused() -> Reply {
    Reply::status(
        501,
        "application/json",
        r#"{"error":{"code":501,"message":"This server does not support slots action.","type":"not_supported_error"}}"#,
    )
}

fn saved() -> Reply {
    Reply::status(
        200,
        "application/json",
        r#"{"id_slot":0,"filename":"x","n_saved":57,"n_written":1000,"timings":{"save_ms":3.0}}"#,
    )
}

fn restored() -> Reply {
    Reply::status(
        200,
        "application/json",
        r#"{"id_slot":0,"filename":"x","n_restored":57,"n_read":1000,"timings":{"restore_ms":2.0}}"#,
    )
}

/// An agent that warms, asks the server's kind, and saves into `store`,
/// opening as `open`.
fn start_saving(
    server: &ScriptedServer,
    root: &std::path::Path,
    store: &SessionStore,
    open: OpenSession,
) -> crate::support::agent::AgentHarness {
    let mut s = setup(&server.base_url(), root, ApprovalPolicy::Ask);
    s.warm_cache = true;
    s.questions = Questions {
        window: false,
        models: false,
        kind: true,
    };
    s.sessions = Some(SessionSetup {
        store: store.clone(),
        open,
        save: true,
        directory: "/projects/demo".into(),
        base_url: server.base_url(),
    });
    start_with(s)
}

/// A project directory, and a session store inside it.
fn project_and_store() -> (tempfile::TempDir, SessionStore) {
    let project = tempfile::tempdir().unwrap();
    let store = SessionStore::at(project.path().join("sessions"));
    (project, store)
}

/// Tells the agent to quit and waits until it has ended.
async fn quit(h: crate::support::agent::AgentHarness) {
    h.send(UiCommand::Quit).await;
    tokio::time::timeout(EVENT_WAIT, h.task)
        .await
        .expect("the agent did not end")
        .unwrap();
}

/// On quit, a llama.cpp server is asked to save its slot under the
/// session's id and model, and as the fixed prefix's; resuming the session
/// asks it to restore the session's file, and a restored slot needs no
/// warm-up (ADR 0034).
#[tokio::test]
async fn quitting_saves_the_slot_and_resuming_restores_it_instead_of_warming() {
    let server = ScriptedServer::start(vec![
        llama_props(),
        refused(),
        Reply::text(&["warm"]),
        saved(),
        Reply::text(&["hello"]),
        saved(),
        saved(),
    ])
    .await;
    let (project, store) = project_and_store();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    server.wait_requests(4, EVENT_WAIT).await;
    h.prompt("hi").await;
    h.turn().await;
    quit(h).await;
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/props",
            "/slots/0?action=restore",
            "/v1/chat/completions",
            "/slots/0?action=save",
            "/v1/chat/completions",
            "/slots/0?action=save",
            "/slots/0?action=save"
        ]
    );
    let listing = store.list(None);
    let id = &listing.sessions[0].id;
    let file = slots::file_name(id, "test-model");
    assert_eq!(requests[5].body, json!({ "filename": file }));
    // The slot is also saved as the fixed prefix's: the warm-up that would
    // have saved it may be cut short by the first prompt.
    assert_eq!(requests[6].body, requests[1].body);

    let server = ScriptedServer::start(vec![
        llama_props(),
        restored(),
        Reply::text(&["welcome back"]),
    ])
    .await;
    let mut h = start_saving(
        &server,
        project.path(),
        &store,
        OpenSession::Resume(id.clone()),
    );
    server.wait_requests(2, EVENT_WAIT).await;
    h.prompt("again").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "welcome back");
    let requests = server.requests();
    assert_eq!(requests[1].path, "/slots/0?action=restore");
    assert_eq!(requests[1].body, json!({ "filename": file }));
    // No warm-up: the next request is the prompt's.
    assert_eq!(requests.len(), 3);
    assert_eq!(
        roles(&requests[2].body),
        ["system", "user", "assistant", "user"]
    );
}

/// A server that refuses the restore of the session's slot (no file) is
/// asked to restore the fixed prefix's, then gets the resumed conversation
/// as a warm-up, whose prefix it then has no need to read; a session that
/// sent nothing since it opened saves no slot on quit.
#[tokio::test]
async fn a_refused_restore_falls_back_to_the_prefix_and_warming_and_an_idle_session_saves_no_slot()
{
    let (project, store) = project_and_store();
    let messages = [
        Message::new(Role::System, "system prompt"),
        Message::new(Role::User, "earlier"),
        Message::new(Role::Assistant, "noted"),
    ];
    let record = SessionRecord {
        id: "20261202-000000-cccccc",
        seq: 0,
        created: 1,
        updated: 2,
        directory: "/projects/demo",
        model: "test-model",
        base_url: "http://127.0.0.1:1/v1",
        wire: dashfloat::llm::wires::Wire::Chat,
        title: "earlier",
        usage: Default::default(),
        last_usage: None,
        messages: &messages,
        pending: &[],
        log: &[],
        log_first: 0,
        checkpoints: &dashfloat::tools::CheckpointLog::default(),
    };
    store.write(record.id, &record.encode().unwrap()).unwrap();
    let server = ScriptedServer::start(vec![
        llama_props(),
        refused(),
        restored(),
        Reply::text(&["warm"]),
    ])
    .await;
    let h = start_saving(
        &server,
        project.path(),
        &store,
        OpenSession::Resume(record.id.to_string()),
    );
    let requests = server.wait_requests(4, EVENT_WAIT).await;
    let session_file = slots::file_name(record.id, "test-model");
    assert_eq!(requests[1].path, "/slots/0?action=restore");
    assert_eq!(requests[1].body["filename"], json!(session_file));
    assert_eq!(requests[2].path, "/slots/0?action=restore");
    let prefix_file = requests[2].body["filename"].as_str().unwrap();
    assert!(
        prefix_file.starts_with("dashfloat-prefix-"),
        "{prefix_file}"
    );
    assert_eq!(requests[3].body["max_tokens"], json!(1));
    assert_eq!(roles(&requests[3].body), ["system", "user", "assistant"]);
    quit(h).await;
    assert_eq!(server.requests().len(), 4);
}

/// A new session's fixed prefix is read once per server start at most: the
/// first warm-up that reads it has the server save the slot under a hash
/// of the request, and the next new session, even on a restarted server,
/// restores that file instead of reading the prefix again (ADR 0034).
#[tokio::test]
async fn a_new_session_restores_the_prefix_slot_saved_by_the_first_warm_up() {
    let (project, store) = project_and_store();
    let server = ScriptedServer::start(vec![
        llama_props(),
        refused(),
        Reply::text(&["warm"]),
        saved(),
    ])
    .await;
    let h = start_saving(&server, project.path(), &store, OpenSession::New);
    let first = server.wait_requests(4, EVENT_WAIT).await;
    quit(h).await;
    assert_eq!(first[1].path, "/slots/0?action=restore");
    assert_eq!(first[3].path, "/slots/0?action=save");
    let file = first[1].body["filename"].as_str().unwrap().to_string();
    assert!(file.starts_with("dashfloat-prefix-"), "{file}");
    assert_eq!(first[3].body["filename"], json!(file));
    // Nothing was sent since the session opened: no session slot on quit.
    assert_eq!(server.requests().len(), 4);

    let server =
        ScriptedServer::start(vec![llama_props(), restored(), Reply::text(&["hello"])]).await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    server.wait_requests(2, EVENT_WAIT).await;
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "hello");
    let requests = server.requests();
    assert_eq!(requests[1].body["filename"], json!(file));
    assert_eq!(requests.len(), 3, "no warm-up after a restored prefix");
    assert_eq!(roles(&requests[2].body), ["system", "user"]);
}

/// A new session's project overview (ADR 0048) is sent ahead as well,
/// after the fixed prefix: the prefix's slot is saved before it, under a
/// name every project shares, and the first prompt's request repeats the
/// overview's warm-up up to the person's words.
#[tokio::test]
async fn the_overview_is_warmed_after_the_prefix_whose_slot_every_project_shares() {
    let mut prefix_files = Vec::new();
    for (name, version) in [("inventory", "0.3.1"), ("ledger", "2.0.0")] {
        let (project, store) = project_and_store();
        let manifest = format!("[project]\nname = \"{name}\"\nversion = \"{version}\"\n");
        std::fs::write(project.path().join("pyproject.toml"), manifest).unwrap();
        let server = ScriptedServer::start(vec![
            llama_props(),
            refused(),
            Reply::text(&["warm"]),
            saved(),
            Reply::text(&["warm"]),
            Reply::text(&["hello"]),
        ])
        .await;
        let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
        s.warm_cache = true;
        s.project_overview = true;
        s.questions = Questions {
            window: false,
            models: false,
            kind: true,
        };
        s.sessions = Some(SessionSetup {
            store: store.clone(),
            open: OpenSession::New,
            save: true,
            directory: "/projects/demo".into(),
            base_url: server.base_url(),
        });
        let mut h = start_with(s);
        let warm = server.wait_requests(5, EVENT_WAIT).await;
        h.prompt("hi").await;
        h.turn().await;
        let requests = server.requests();
        assert_eq!(roles(&warm[2].body), ["system"], "the prefix first");
        assert_eq!(warm[3].path, "/slots/0?action=save");
        assert_eq!(warm[3].body, warm[1].body, "saved as the prefix restored");
        prefix_files.push(warm[1].body["filename"].clone());
        let overview = warm[4].body["messages"][1]["content"].as_str().unwrap();
        assert_eq!(warm[4].body["max_tokens"], json!(1));
        assert!(
            overview.starts_with(dashfloat::overview::OVERVIEW_OPENING)
                && overview.contains(&format!("version: {version}")),
            "{overview}"
        );
        let sent = requests[5].body["messages"][1]["content"].as_str().unwrap();
        assert_eq!(sent, format!("{overview}\n\nhi"));
        assert_prefix_stable(&requests);
        quit(h).await;
    }
    assert_eq!(prefix_files[0], prefix_files[1]);
}

/// Quitting while a reply streams saves no slot: the server would go on
/// reading into a half-filled slot, and the save would wait for it.
#[tokio::test]
async fn quitting_mid_reply_saves_no_slot() {
    let server = ScriptedServer::start(vec![
        llama_props(),
        restored(),
        Reply::text(&["never", "ends"]).hang_after(2),
    ])
    .await;
    let (project, store) = project_and_store();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    server.wait_requests(2, EVENT_WAIT).await;
    h.prompt("hi").await;
    h.until(|e| matches!(e, AgentEvent::AssistantDelta(_)))
        .await;
    quit(h).await;
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        ["/props", "/slots/0?action=restore", "/v1/chat/completions"]
    );
}

/// The most bytes the fixed prefix — the system prompt and the tool
/// schemas, compact JSON — may take. Every session whose prefix slot is
/// not saved reads all of it before its first token: 1,968 tokens of
/// llama.cpp's tokenizer for 7,149 bytes, about 27 s on two cores
/// (ADR 0033, 0034). Raise it only on purpose, with the task suite's
/// figures. Raised by 165 bytes for `execute_command`'s `sandbox` and
/// `reason` (ADR 0044), the way out of the sandbox a model must be able
/// to ask for; the task suite was not run again for it. Raised by 291
/// bytes for `edit_file`'s `insert_at` and `write_file`'s
/// `replace_whole_file` (ADR 0046), measured with the suite (issue 41).
/// Lowered to 7,102 when those two flags, `reason` and `insert_at` left
/// the schema the model is shown (`search_block` shown as required in its
/// place), and the prompt's line about insert_at went with it (ADR 0050:
/// the suite's 1.5B set insert_at on every edit).
const FIXED_PREFIX_MAX_BYTES: usize = 7_102;

#[test]
fn the_fixed_prefix_does_not_grow() {
    let bytes = dashfloat::agent::system_prompt().len()
        + dashfloat::tools::Registry::builtin()
            .definitions()
            .to_string()
            .len();
    assert!(
        bytes <= FIXED_PREFIX_MAX_BYTES,
        "the system prompt and tool schemas take {bytes} bytes, over the {FIXED_PREFIX_MAX_BYTES} budget"
    );
}

/// A warm-up whose reply breaks off before its end left the server with a
/// slot half read: it is not saved as the fixed prefix's, and priming says
/// the prompt was not read (ADR 0034).
#[tokio::test]
async fn a_warm_up_cut_short_saves_no_prefix_slot() {
    let server = ScriptedServer::start(vec![
        llama_props(),
        refused(),
        Reply::text(&["warm"]).cut_after(1),
    ])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    s.warm_cache = true;
    s.questions = Questions {
        window: false,
        models: false,
        kind: true,
    };
    let primed = dashfloat::agent::prime(s).await;
    assert!(
        matches!(primed, dashfloat::agent::Primed::Failed(_)),
        "{primed:?}"
    );
    assert!(!primed.succeeded());
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        ["/props", "/slots/0?action=restore", "/v1/chat/completions"]
    );
}

/// llama-server closes the connection after a streamed reply, so the save
/// that follows a warm-up at once may meet a closed connection: the server
/// did nothing, and the save is sent once more (ADR 0034).
#[tokio::test]
async fn a_save_that_meets_a_closed_connection_is_sent_again() {
    let server = ScriptedServer::start(vec![
        llama_props(),
        refused(),
        Reply::text(&["warm"]),
        Reply::unanswered(),
        saved(),
    ])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    s.warm_cache = true;
    s.questions = Questions {
        window: false,
        models: false,
        kind: true,
    };
    let primed = dashfloat::agent::prime(s).await;
    assert!(
        matches!(primed, dashfloat::agent::Primed::Saved { tokens: 57, .. }),
        "{primed:?}"
    );
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/props",
            "/slots/0?action=restore",
            "/v1/chat/completions",
            "/slots/0?action=save",
            "/slots/0?action=save"
        ]
    );
    assert_eq!(requests[4].body, requests[1].body);
}
