//! Saved sessions: the store (files, permissions, the lock, damaged and
//! newer files) and the agent that saves after every step and opens saved
//! sessions — each against a temporary sessions directory.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::{
    ID_MAX_CHARS, PROBLEMS_LISTED_MAX, SCHEMA_VERSION, SESSION_FILE_MAX_BYTES, SESSIONS_LISTED_MAX,
    TITLE_MAX_CHARS,
};
use dashfloat::bounds::{LOG_BYTES_MAX, LOG_ITEMS_MAX};
use dashfloat::llm::wire::{FunctionCall, Message, Role, ToolCallMessage};
use dashfloat::protocol::{
    AgentEvent, Decision, LogItem, Phase, ReplyEnd, Severity, ToolStatus, UiCommand,
};
use dashfloat::secret::Secret;
use dashfloat::session::{
    InvalidConversation, OpenSession, SessionError, SessionSetup, SessionStore, check_conversation,
    new_id, title_of, valid_id,
};
use serde_json::Value;

use crate::support;
use support::WAIT;
use support::agent::{AgentHarness, setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer, Step, role_chunk, sse_frame};
use support::sessions::write_record;

/// The project directory sessions are recorded under in these tests.
const PROJECT: &str = "/projects/demo";

fn sessions(store: &SessionStore, open: OpenSession, base_url: &str) -> SessionSetup {
    SessionSetup {
        store: store.clone(),
        open,
        save: true,
        directory: PROJECT.to_string(),
        base_url: base_url.to_string(),
    }
}

/// An agent against `server` in `root`, saving into `store`, opening as
/// `open`.
pub(crate) fn start_saving(
    server: &ScriptedServer,
    root: &Path,
    store: &SessionStore,
    open: OpenSession,
) -> AgentHarness {
    let mut s = setup(&server.base_url(), root, ApprovalPolicy::Ask);
    s.sessions = Some(sessions(store, open, &server.base_url()));
    start_with(s)
}

/// Waits until the agent has done what it was doing and its saves are on
/// disk: it queues a save after telling the UI a turn is over, and reads
/// the next command only then; a listing waits for the saves queued
/// before it.
pub(crate) async fn settled(h: &mut AgentHarness) {
    h.send(UiCommand::ListSessions { all: true }).await;
    h.until(|e| matches!(e, AgentEvent::Sessions { .. })).await;
}

/// The ids of the session files in `store`.
fn saved_ids(store: &SessionStore) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(store.dir())
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_suffix(".json")
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// The messages of the first request `server` received.
fn first_request(server: &ScriptedServer) -> Vec<Message> {
    serde_json::from_value(server.requests()[0].body["messages"].clone()).unwrap()
}

/// The ids of the calls `messages` make, in order.
fn call_ids(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| c.id.as_str())
        .collect()
}

fn message(role: Role, content: &str) -> Message {
    Message::new(role, content)
}

fn calling(ids: &[&str]) -> Message {
    Message {
        role: Role::Assistant,
        content: None,
        tool_calls: ids
            .iter()
            .map(|id| ToolCallMessage {
                id: (*id).to_string(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "read_file".into(),
                    arguments: "{}".into(),
                },
            })
            .collect(),
        tool_call_id: None,
        carried: Vec::new(),
        images: Vec::new(),
    }
}

fn answer(id: &str) -> Message {
    Message {
        role: Role::Tool,
        content: Some("{}".into()),
        tool_calls: Vec::new(),
        tool_call_id: Some(id.into()),
        carried: Vec::new(),
        images: Vec::new(),
    }
}

/// Writes a small valid session `id` of `directory` updated at `updated`.
fn write_session(store: &SessionStore, id: &str, directory: &str, updated: u64, title: &str) {
    support::sessions::write_session(store, id, directory, updated, (title, "an answer"));
}

// ------------------------------------------------------------ validity --

#[test]
fn the_validity_check_wants_every_call_answered_in_order() {
    let system = message(Role::System, "s");
    let user = message(Role::User, "u");
    assert_eq!(check_conversation(&[system.clone(), user.clone()]), Ok(()));
    assert_eq!(
        check_conversation(std::slice::from_ref(&user)),
        Err(InvalidConversation::NoSystemPrompt)
    );
    assert_eq!(
        check_conversation(&[
            system.clone(),
            calling(&["a", "b"]),
            answer("a"),
            answer("b")
        ]),
        Ok(())
    );
    assert!(matches!(
        check_conversation(&[system.clone(), calling(&["a", "b"]), answer("a")]),
        Err(InvalidConversation::Unanswered { .. })
    ));
    assert!(matches!(
        check_conversation(&[
            system.clone(),
            calling(&["a", "b"]),
            answer("b"),
            answer("a")
        ]),
        Err(InvalidConversation::Unexpected { .. })
    ));
    assert!(matches!(
        check_conversation(&[system.clone(), calling(&["a"]), user.clone(), answer("a")]),
        Err(InvalidConversation::Unanswered { .. })
    ));
    assert!(matches!(
        check_conversation(&[system, user, answer("x")]),
        Err(InvalidConversation::Unexpected { .. })
    ));
}

#[test]
fn ids_sort_by_time_and_name_no_path() {
    // 2026-12-01 08:15:00 UTC.
    let id = new_id(1_796_112_900);
    assert!(id.starts_with("20261201-081500-"), "{id}");
    assert!(valid_id(&id));
    assert!(new_id(1_796_112_900) < new_id(1_796_112_901 + 86_400));
    for bad in ["", "../x", "a/b", "-rf", "x.json", &"9".repeat(65)] {
        assert!(!valid_id(bad), "{bad:?}");
    }
}

#[test]
fn a_title_is_the_first_prompt_on_one_line_cut_at_its_bound() {
    assert_eq!(title_of("fix\n  the   bug"), "fix the bug");
    let long = "x".repeat(TITLE_MAX_CHARS + 10);
    let title = title_of(&long);
    assert_eq!(title.chars().count(), TITLE_MAX_CHARS);
    assert!(title.ends_with('…'));
    assert_eq!(
        title_of(&"y".repeat(TITLE_MAX_CHARS)).chars().count(),
        TITLE_MAX_CHARS
    );
}

// --------------------------------------------------------------- store --

#[test]
fn files_are_the_owners_only() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("dashfloat/sessions"));
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 1, "t");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.dir()), 0o700);
    assert_eq!(mode(&store.path_of("20261201-000000-aaaaaa")), 0o600);
    let _lock = store.lock("20261201-000000-aaaaaa").unwrap();
    assert_eq!(
        mode(&store.dir().join("20261201-000000-aaaaaa.lock")),
        0o600
    );
    // Only the file itself: no temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(store.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn damaged_newer_and_unreadable_files_are_reported_untouched_and_skipped() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "good one");
    let corrupt = store.path_of("20261201-000001-bbbbbb");
    std::fs::write(&corrupt, b"{\"version\": 1, \"id\": ").unwrap();
    let newer = store.path_of("20261201-000002-cccccc");
    let newer_text = format!(
        "{{\"version\": {}, \"shape\": \"unknown\"}}",
        SCHEMA_VERSION + 1
    );
    std::fs::write(&newer, &newer_text).unwrap();
    // A directory where a file should be cannot be read, even by root.
    let unreadable = store.path_of("20261201-000003-dddddd");
    std::fs::create_dir(&unreadable).unwrap();
    // A conversation whose call is never answered is damaged too.
    let invalid = store.path_of("20261201-000004-eeeeee");
    let mut bad: Value =
        serde_json::from_slice(&std::fs::read(store.path_of("20261201-000000-aaaaaa")).unwrap())
            .unwrap();
    bad["messages"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::to_value(calling(&["c1"])).unwrap());
    std::fs::write(&invalid, bad.to_string()).unwrap();

    let listing = store.list(None);
    assert_eq!(listing.sessions.len(), 2, "{:?}", listing.sessions);
    assert_eq!(listing.sessions[1].id, "20261201-000000-aaaaaa");
    assert_eq!(listing.problems.len(), 3, "{:?}", listing.problems);
    let texts: Vec<String> = listing.problems.iter().map(ToString::to_string).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("damaged") && t.contains("000001"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("newer dashfloat") && t.contains("000002"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("cannot read") && t.contains("000003"))
    );
    // The invalid conversation lists (its summary is fine) but does not load.
    assert!(matches!(
        store.load("20261201-000004-eeeeee"),
        Err(SessionError::Corrupt { .. })
    ));
    assert!(matches!(
        store.load("20261201-000002-cccccc"),
        Err(SessionError::Newer { version, .. }) if version == SCHEMA_VERSION + 1
    ));
    assert!(store.load("20261201-000000-aaaaaa").is_ok());
    assert_eq!(
        std::fs::read(&corrupt).unwrap(),
        b"{\"version\": 1, \"id\": "
    );
    assert_eq!(std::fs::read_to_string(&newer).unwrap(), newer_text);
    assert!(unreadable.is_dir());
}

/// A FIFO named like a session would block a plain open for ever: it is
/// reported and skipped, and the listing goes on.
#[test]
fn a_fifo_named_like_a_session_is_reported_not_waited_on() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "kept");
    let fifo = store.path_of("20261201-000001-bbbbbb");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let listing = store.list(None);
    assert_eq!(listing.sessions.len(), 1);
    assert!(
        matches!(&listing.problems[..], [SessionError::Read { .. }]),
        "{:?}",
        listing.problems
    );
    assert!(store.load("20261201-000001-bbbbbb").is_err());
}

#[test]
fn a_file_over_the_bound_is_refused_both_ways_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "kept");
    let huge = store.path_of("20261201-000001-bbbbbb");
    // Sparse: the size is over the bound, the disk holds nothing.
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(SESSION_FILE_MAX_BYTES + 1)
        .unwrap();
    let listing = store.list(None);
    assert_eq!(listing.sessions.len(), 1);
    assert!(
        matches!(&listing.problems[..], [SessionError::TooLarge { bytes, .. }] if *bytes == SESSION_FILE_MAX_BYTES + 1),
        "{:?}",
        listing.problems
    );
    assert!(matches!(
        store.load("20261201-000001-bbbbbb"),
        Err(SessionError::TooLarge { .. })
    ));
    assert_eq!(
        std::fs::metadata(&huge).unwrap().len(),
        SESSION_FILE_MAX_BYTES + 1
    );

    let too_big = vec![b' '; usize::try_from(SESSION_FILE_MAX_BYTES).unwrap() + 1];
    let refused = store.write("20261201-000000-aaaaaa", &too_big);
    assert!(
        matches!(refused, Err(SessionError::TooLargeToSave { .. })),
        "{refused:?}"
    );
    assert!(
        store.load("20261201-000000-aaaaaa").is_ok(),
        "the old file stands"
    );
}

#[test]
fn a_listing_names_its_first_problems_and_newest_sessions_and_counts_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 0, "template");
    let template = std::fs::read_to_string(store.path_of("20261201-000000-aaaaaa")).unwrap();
    let extra = 3;
    for n in 1..SESSIONS_LISTED_MAX + extra {
        let id = format!("20261201-{n:06}-aaaaaa");
        let text = template
            .replace("20261201-000000-aaaaaa", &id)
            .replace("\"updated\":0", &format!("\"updated\":{n}"));
        std::fs::write(store.path_of(&id), text).unwrap();
    }
    for n in 0..PROBLEMS_LISTED_MAX + 2 {
        std::fs::write(store.path_of(&format!("20261202-{n:06}-bbbbbb")), b"{").unwrap();
    }
    let listing = store.list(None);
    assert_eq!(listing.sessions.len(), SESSIONS_LISTED_MAX);
    assert_eq!(listing.more_sessions, extra);
    assert_eq!(
        listing.sessions[0].updated as usize,
        SESSIONS_LISTED_MAX + extra - 1
    );
    assert_eq!(listing.problems.len(), PROBLEMS_LISTED_MAX);
    assert_eq!(listing.more_problems, 2);
    let notes = listing.notes();
    assert_eq!(notes.len(), PROBLEMS_LISTED_MAX + 2, "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n == "2 more session files could not be used")
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("3 older sessions are not listed"))
    );
}

#[test]
fn a_list_is_newest_first_and_of_one_directory_unless_all() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "older");
    write_session(&store, "20261201-000001-bbbbbb", PROJECT, 20, "newer");
    write_session(&store, "20261201-000002-cccccc", "/elsewhere", 30, "other");
    let here: Vec<String> = store
        .list(Some(PROJECT))
        .sessions
        .into_iter()
        .map(|s| s.title)
        .collect();
    assert_eq!(here, ["newer", "older"]);
    assert_eq!(store.list(None).sessions.len(), 3);
    assert!(store.list(None).sessions[0].bytes > 0);
}

#[test]
fn a_locked_session_is_refused_until_its_holder_lets_go() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "t");
    let held = store.lock("20261201-000000-aaaaaa").unwrap();
    let refused = store.open("20261201-000000-aaaaaa", true).unwrap_err();
    assert!(
        matches!(&refused, SessionError::Locked { holder: Some(pid), .. } if *pid == std::process::id()),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("open in another dashfloat"));
    drop(held);
    assert!(store.open("20261201-000000-aaaaaa", true).is_ok());
}

#[test]
fn ids_that_could_name_other_files_are_refused() {
    let store = SessionStore::at(tempfile::tempdir().unwrap().path());
    let too_long = "a".repeat(ID_MAX_CHARS + 1);
    assert!(valid_id(&"a".repeat(ID_MAX_CHARS)));
    for id in ["../../etc/passwd", "a/b", "-rf", "", &too_long] {
        assert!(matches!(store.load(id), Err(SessionError::BadId { .. })));
        assert!(matches!(
            store.write(id, b"{}"),
            Err(SessionError::BadId { .. })
        ));
    }
    assert!(matches!(
        store.load("20261201-000000-ffffff"),
        Err(SessionError::NotFound { .. })
    ));
}

// --------------------------------------------------------------- agent --

/// Words sent instead of an answer are saved as a prompt is, before the
/// model is asked: a quit or a kill while it answers keeps them.
#[tokio::test]
async fn words_sent_instead_of_an_answer_are_saved_before_the_model_answers() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("w1", "write_file", &[r#"{"path":"a.md","content":"a"}"#]),
        Reply::sse_steps(vec![Step::Send(sse_frame(&role_chunk())), Step::Hang]),
    ])
    .await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("write a").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Redirect("write b instead".into()))
        .await;
    h.until(|e| matches!(e, AgentEvent::Phase(Phase::Streaming)))
        .await;
    settled(&mut h).await;
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    let last = saved.messages.last().unwrap();
    assert_eq!(
        (last.role, last.content.as_deref()),
        (Role::User, Some("write b instead"))
    );
    h.send(UiCommand::Quit).await;
}

/// Words sent instead of an answer: neither the call nor the rest of its
/// reply runs, the model reads the words as the person's message after the
/// round's results, and the saved log keeps them as the person's, after
/// the call's row.
#[tokio::test]
async fn words_sent_instead_of_an_answer_reject_the_call_and_reach_the_model() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            (
                "w1",
                "write_file",
                r#"{"path":"test_app.py","content":"assert True\n"}"#,
            ),
            ("w2", "write_file", r#"{"path":"notes.md","content":"n\n"}"#),
        ]),
        Reply::text(&["I will fix the code"]),
    ])
    .await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("make the test pass").await;
    let (id, _) = h.next_confirm().await;
    let words = "fix the code, not the test";
    h.decide(&id, Decision::Redirect(words.into())).await;
    // The reply's other call followed the plan turned down: not asked,
    // not run.
    let events = h.turn().await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "{events:#?}"
    );
    for id in ["w1", "w2"] {
        assert!(events.contains(&AgentEvent::ToolResult {
            id: id.into(),
            status: ToolStatus::Rejected,
            excerpt: String::new(),
        }));
    }
    assert!(!project.path().join("test_app.py").exists());
    assert!(!project.path().join("notes.md").exists());
    // The result says the call was not run; the words follow it as the
    // person's message.
    let sent: Vec<Message> =
        serde_json::from_value(server.requests()[1].body["messages"].clone()).unwrap();
    let [.., first, second, said] = sent.as_slice() else {
        panic!("{sent:?}")
    };
    for (result, id) in [(first, "w1"), (second, "w2")] {
        assert_eq!(result.tool_call_id.as_deref(), Some(id));
        let result: Value = serde_json::from_str(result.content.as_deref().unwrap()).unwrap();
        assert_eq!(
            result,
            serde_json::json!({
                "ok": false,
                "rejected": true,
                "error": "not run: the person turned this down and wrote what to do instead in their message that follows. Do what it says",
                "code": "rejected",
                "tool": "write_file",
            })
        );
    }
    assert_eq!(
        (said.role, said.content.as_deref()),
        (Role::User, Some(words))
    );
    settled(&mut h).await;
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    let users: Vec<&LogItem> = saved
        .log
        .iter()
        .filter(|item| matches!(item, LogItem::User(_)))
        .collect();
    assert_eq!(
        users,
        [
            &LogItem::User("make the test pass".into()),
            &LogItem::User(words.into())
        ]
    );
    let tool_row = saved
        .log
        .iter()
        .position(|item| matches!(item, LogItem::Tool { .. }));
    let redirect = saved
        .log
        .iter()
        .position(|item| item == &LogItem::User(words.into()));
    assert!(tool_row < redirect, "{:?}", saved.log);
}

/// Words sent for a confirmation that no longer waits (its turn ended in
/// the meantime) are not dropped: they are the next prompt.
#[tokio::test]
async fn words_sent_for_a_call_no_longer_waiting_are_a_prompt() {
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["heard you"])]).await;
    let mut h = start_with(setup(
        &server.base_url(),
        project.path(),
        ApprovalPolicy::Ask,
    ));
    h.decide(
        &"gone".to_owned(),
        Decision::Redirect("are you there?".into()),
    )
    .await;
    let events = h.turn().await;
    assert_eq!(support::agent::reply_text(&events), "heard you");
    let sent: Vec<Message> =
        serde_json::from_value(server.requests()[0].body["messages"].clone()).unwrap();
    assert_eq!(
        sent.last().unwrap().content.as_deref(),
        Some("are you there?")
    );
}

#[tokio::test]
async fn a_session_is_saved_and_resumed_with_its_log_and_conversation() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "remember me\n").unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("r1", "read_file", &[r#"{"path":"notes.txt"}"#]),
        Reply::text(&["it says remember me"]),
    ])
    .await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("what do the notes say?").await;
    h.turn().await;
    settled(&mut h).await;
    let ids = saved_ids(&store);
    assert_eq!(ids.len(), 1);
    let saved = store.load(&ids[0]).unwrap();
    assert_eq!(saved.title, "what do the notes say?");
    assert_eq!(saved.directory, PROJECT);
    assert_eq!(saved.model, "test-model");
    let roles: Vec<Role> = saved.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ]
    );
    assert!(matches!(&saved.log[0], LogItem::User(t) if t == "what do the notes say?"));
    // The first reply only called a tool: like the screen, the log has no
    // empty reply for it.
    assert_eq!(
        saved
            .log
            .iter()
            .filter(|item| matches!(item, LogItem::Assistant { .. }))
            .count(),
        1,
        "{:?}",
        saved.log
    );
    assert!(saved.log.iter().any(|item| matches!(
        item,
        LogItem::Tool { name, outcome: Some((ToolStatus::Ok, excerpt)), .. }
            if name == "read_file" && excerpt.contains("remember me")
    )));
    assert!(matches!(
        saved.log.last(),
        Some(LogItem::Assistant { text, end: ReplyEnd::Complete, .. }) if text == "it says remember me"
    ));
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();

    // A second agent resumes it: the log comes back, and the next request
    // carries the earlier conversation.
    let server2 = ScriptedServer::start(vec![Reply::text(&["still here"])]).await;
    let mut h2 = start_saving(
        &server2,
        project.path(),
        &store,
        OpenSession::Resume(ids[0].clone()),
    );
    let opened = h2
        .until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    let Some(AgentEvent::SessionOpened { log }) = opened.last() else {
        unreachable!()
    };
    assert_eq!(*log, saved.log);
    h2.prompt("and now?").await;
    h2.turn().await;
    settled(&mut h2).await;
    let body = &server2.requests()[0].body;
    let sent: Vec<Message> = serde_json::from_value(body["messages"].clone()).unwrap();
    assert_eq!(sent[..saved.messages.len()], saved.messages[..]);
    assert_eq!(sent.last().unwrap().content.as_deref(), Some("and now?"));
    // The same file goes on: one session, now with the new turn.
    assert_eq!(saved_ids(&store), ids);
    let again = store.load(&ids[0]).unwrap();
    assert_eq!(again.messages.len(), saved.messages.len() + 2);
    assert_eq!(again.created, saved.created);
}

#[tokio::test]
async fn a_file_named_after_a_resume_gets_a_call_id_of_its_own() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(project.path().join("b.txt"), "beta\n").unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let ask = |server: &ScriptedServer, open| start_saving(server, project.path(), &store, open);
    let server = ScriptedServer::start(vec![Reply::text(&["alpha"])]).await;
    let mut h = ask(&server, OpenSession::New);
    h.prompt("what is in a.txt?").await;
    h.turn().await;
    settled(&mut h).await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();

    let server2 = ScriptedServer::start(vec![Reply::text(&["beta"])]).await;
    let mut h2 = ask(&server2, OpenSession::Resume(saved_ids(&store)[0].clone()));
    h2.prompt("and in b.txt?").await;
    h2.turn().await;
    let sent = first_request(&server2);
    let ids = call_ids(&sent);
    assert_eq!(ids.len(), 2, "{sent:#?}");
    assert_ne!(ids[0], ids[1]);
}

/// A session saved when made-up ids were `call_<episode>_…` resumes with
/// ids of the one form every provider takes, each result following its
/// call's (the nearest earlier, where an old id came twice); a
/// provider's own id is left as it was.
#[tokio::test]
async fn old_made_up_ids_are_renewed_on_resume() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let messages = [
        message(Role::System, "system prompt"),
        message(Role::User, "read them"),
        calling(&["call_1_at0", "call_abc123XYZ"]),
        answer("call_1_at0"),
        answer("call_abc123XYZ"),
        calling(&["call_1_at0"]),
        answer("call_1_at0"),
        message(Role::Assistant, "done"),
    ];
    write_record(&store, "s1", PROJECT, 1, &messages, &[]);
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(
        &server,
        project.path(),
        &store,
        OpenSession::Resume("s1".into()),
    );
    h.prompt("go on").await;
    h.turn().await;
    let sent = first_request(&server);
    let calls = call_ids(&sent);
    let answers: Vec<&str> = sent
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(calls, ["r00000000", "call_abc123XYZ", "r00000001"]);
    assert_eq!(answers, calls);
}

#[tokio::test]
async fn a_round_in_flight_is_saved_with_its_calls_cancelled() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[
        ("l1", "list_directory", r#"{"path":"."}"#),
        ("w1", "write_file", r#"{"path":"a.txt","content":"x"}"#),
    ])])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("write it").await;
    // The write waits for the person: the file holds the listing's result
    // and the write answered as cancelled, so it resumes as a valid
    // conversation.
    h.next_confirm().await;
    settled(&mut h).await;
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    let n = saved.messages.len();
    assert_eq!(saved.messages[n - 2].tool_call_id.as_deref(), Some("l1"));
    assert!(
        !saved.messages[n - 2]
            .content
            .as_deref()
            .unwrap()
            .contains("cancel")
    );
    assert_eq!(saved.messages[n - 1].tool_call_id.as_deref(), Some("w1"));
    assert!(
        saved.messages[n - 1]
            .content
            .as_deref()
            .unwrap()
            .contains("cancel")
    );
    assert!(saved.log.iter().any(|item| matches!(
        item,
        LogItem::Tool { id, outcome: Some((ToolStatus::Cancelled, _)), .. } if id == "w1"
    )));
}

/// Quitting while an approved command runs: the command is killed and its
/// end awaited, so the session holds what it did (here its output)
/// rather than the "cancelled" saved for it before it ran.
#[tokio::test]
async fn quitting_mid_round_saves_what_the_running_call_did() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let command = r#"{"command":"echo started; sleep 5"}"#;
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "c1",
        "execute_command",
        command,
    )])])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("run it").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Approve).await;
    h.until(|e| matches!(e, AgentEvent::ToolOutput { .. }))
        .await;
    // What the UI sends when the person quits while the call runs.
    h.send(UiCommand::Cancel).await;
    h.send(UiCommand::Quit).await;
    tokio::time::timeout(WAIT, &mut h.task)
        .await
        .unwrap()
        .unwrap();
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    let last = saved.messages.last().unwrap();
    assert_eq!(last.tool_call_id.as_deref(), Some("c1"));
    let result = last.content.as_deref().unwrap_or_default();
    assert!(result.contains("started"), "{result}");
}

/// A result saved while its round waits is cut as it will be sent: a
/// crash then must not leave a session whose next request overflows.
#[tokio::test]
async fn a_result_saved_mid_round_is_already_cut_to_fit() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let project = tempfile::tempdir().unwrap();
    let big = "y".repeat(60 * 1024);
    std::fs::write(project.path().join("big.txt"), &big).unwrap();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[
        ("r1", "read_file", r#"{"path":"big.txt"}"#),
        ("w1", "write_file", r#"{"path":"a.txt","content":"x"}"#),
    ])])
    .await;
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    s.sessions = Some(sessions(&store, OpenSession::New, &server.base_url()));
    s.context_window = 6_000;
    s.max_output = Some(1_000);
    let mut h = start_with(s);
    h.prompt("read it, then write").await;
    h.next_confirm().await;
    settled(&mut h).await;
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    let read = saved
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("r1"))
        .and_then(|m| m.content.as_deref())
        .unwrap();
    assert!(read.len() < 16 * 1024, "{} bytes saved", read.len());
    assert!(
        read.contains("cut to fit the model's context window"),
        "{read}"
    );
}

/// Continues the latest session of `store` in `project`: the events up to
/// its opening, and the log it opened with.
async fn continued(
    server: &ScriptedServer,
    project: &Path,
    store: &SessionStore,
) -> (Vec<AgentEvent>, Vec<LogItem>) {
    let mut h = start_saving(server, project, store, OpenSession::Continue);
    let events = h
        .until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    let Some(AgentEvent::SessionOpened { log }) = events.last() else {
        unreachable!()
    };
    let log = log.clone();
    (events, log)
}

#[tokio::test]
async fn continue_opens_the_latest_session_of_this_directory() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "older here");
    write_session(&store, "20261201-000001-bbbbbb", PROJECT, 20, "latest here");
    write_session(
        &store,
        "20261201-000002-cccccc",
        "/elsewhere",
        30,
        "elsewhere",
    );
    let server = ScriptedServer::start(vec![]).await;
    let project = tempfile::tempdir().unwrap();
    let (_, log) = continued(&server, project.path(), &store).await;
    assert_eq!(log[0], LogItem::User("latest here".into()));

    // With none saved here: a notice, and a new session.
    let empty = SessionStore::at(home.path().join("none"));
    let mut h = start_saving(&server, project.path(), &empty, OpenSession::Continue);
    h.send(UiCommand::ListSessions { all: false }).await;
    let events = h.until(|e| matches!(e, AgentEvent::Sessions { .. })).await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("no saved session in this directory"))
    );
}

/// A newest session whose conversation is damaged is skipped, as the list
/// skips a file it cannot read: the one before it is continued, and a
/// notice says why.
#[tokio::test]
async fn continue_skips_a_damaged_session_for_the_one_before_it() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "older here");
    let orphan: Message = serde_json::from_value(serde_json::json!(
        {"role": "tool", "tool_call_id": "c00000000", "content": "{}"}
    ))
    .unwrap();
    write_record(
        &store,
        "20261201-000001-bbbbbb",
        PROJECT,
        20,
        &[
            Message::new(Role::System, "system prompt"),
            Message::new(Role::User, "damaged"),
            orphan,
        ],
        &[LogItem::User("damaged".into())],
    );
    let server = ScriptedServer::start(vec![]).await;
    let project = tempfile::tempdir().unwrap();
    let (events, log) = continued(&server, project.path(), &store).await;
    assert_eq!(log[0], LogItem::User("older here".into()));
    let said = system_texts(&events).join("\n");
    assert!(said.contains("20261201-000001-bbbbbb"), "{said}");
    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::System {
                severity: Severity::Error,
                ..
            }
        )),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_continued_session_is_sent_with_the_instructions_as_they_read_now() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(&store, "20261201-000000-aaaaaa", PROJECT, 10, "earlier");
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("AGENTS.md"), "New rule: be brief.\n").unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::Continue);
    let events = h
        .until(|e| matches!(e, AgentEvent::System { text, .. } if text.contains("instructions")))
        .await;
    let opened = events
        .iter()
        .position(|e| matches!(e, AgentEvent::SessionOpened { .. }));
    assert!(
        opened.is_some_and(|at| at + 1 < events.len()),
        "the notice follows the restored log: {events:?}"
    );
    h.prompt("again").await;
    h.turn().await;
    let body = &server.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("New rule: be brief."), "{system}");
    assert_eq!(body["messages"][1]["content"], "earlier");
}

#[tokio::test]
async fn clear_starts_a_new_session_and_the_old_one_stays_saved() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let server = ScriptedServer::start(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
    ])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("one").await;
    h.turn().await;
    h.send(UiCommand::Clear).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::SessionOpened { log: Vec::new() }));
    h.prompt("two").await;
    h.turn().await;
    settled(&mut h).await;
    let sent = &server.requests()[1].body["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 2, "{sent}");
    assert_eq!(sent[1]["content"], "two");
    let titles: Vec<String> = store
        .list(None)
        .sessions
        .into_iter()
        .map(|s| s.title)
        .collect();
    assert_eq!(titles.len(), 2);
    assert!(titles.contains(&"one".to_string()) && titles.contains(&"two".to_string()));

    h.send(UiCommand::ListSessions { all: true }).await;
    let events = h.until(|e| matches!(e, AgentEvent::Sessions { .. })).await;
    let Some(AgentEvent::Sessions { list, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(list.len(), 2);
    assert!(list[0].updated >= list[1].updated);
}

#[tokio::test]
async fn resuming_a_session_open_elsewhere_is_refused_and_this_one_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    write_session(
        &store,
        "20261201-000000-aaaaaa",
        PROJECT,
        10,
        "busy elsewhere",
    );
    let _held = store.lock("20261201-000000-aaaaaa").unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["fresh"])]).await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.send(UiCommand::Resume {
        id: "20261201-000000-aaaaaa".into(),
    })
    .await;
    let events = h.turn().await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("open in another dashfloat")),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::SessionOpened { .. }))
    );
    h.prompt("go on").await;
    h.turn().await;
    assert_eq!(
        server.requests()[0].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn a_failed_save_is_one_notice_and_the_session_goes_on() {
    let home = tempfile::tempdir().unwrap();
    // A file where the sessions directory should be: no save can succeed.
    let blocked = home.path().join("sessions");
    std::fs::write(&blocked, "not a directory").unwrap();
    let store = SessionStore::at(&blocked);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("l1", "list_directory", &[r#"{"path":"."}"#]),
        Reply::text(&["listed"]),
        Reply::text(&["again"]),
    ])
    .await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("list").await;
    let mut events = h.turn().await;
    h.prompt("more").await;
    events.extend(h.turn().await);
    let failures: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::System {
                severity: Severity::Error,
                text,
            } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("not being saved"), "{failures:?}");
    assert!(support::agent::reply_text(&events).contains("again"));
}

#[tokio::test]
async fn no_key_header_or_url_credential_reaches_the_file() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let server = ScriptedServer::start(vec![Reply::text(&["fine"])]).await;
    let project = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.api_key = Some(Secret::new("sk-SESSION-KEY".into()));
        endpoint.headers = vec![("X-Token".into(), Secret::new("HEADER-VALUE".into()))];
    }
    let with_credentials = server
        .base_url()
        .replace("http://", "http://alice:URL-PASSWORD@")
        + "?api-key=QUERY-KEY";
    s.sessions = Some(sessions(&store, OpenSession::New, &with_credentials));
    let mut h = start_with(s);
    h.prompt("hello").await;
    h.turn().await;
    settled(&mut h).await;
    let id = &saved_ids(&store)[0];
    // The snapshot and the journal of the steps after it.
    let text = std::fs::read_to_string(store.path_of(id)).unwrap()
        + &std::fs::read_to_string(store.journal_of(id)).unwrap();
    assert!(text.contains("hello") && text.contains("fine"), "{text}");
    for secret in [
        "sk-SESSION-KEY",
        "HEADER-VALUE",
        "URL-PASSWORD",
        "alice",
        "QUERY-KEY",
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let saved = store.load(&saved_ids(&store)[0]).unwrap();
    assert_eq!(saved.base_url, server.base_url());
}

#[tokio::test]
async fn with_saving_off_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let server = ScriptedServer::start(vec![Reply::text(&["fine"])]).await;
    let project = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    s.sessions = Some(SessionSetup {
        save: false,
        ..sessions(&store, OpenSession::New, &server.base_url())
    });
    let mut h = start_with(s);
    h.prompt("hello").await;
    h.turn().await;
    settled(&mut h).await;
    assert!(!store.dir().exists());
}

/// Saves a session whose log is `log`, resumes it, and returns the log the
/// screen is given.
async fn resumed_log(log: &[LogItem]) -> Vec<LogItem> {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path());
    let messages = [message(Role::System, "s"), message(Role::User, "u")];
    let id = "20261201-000000-aaaaaa";
    write_record(&store, id, PROJECT, 1, &messages, log);
    let server = ScriptedServer::start(vec![]).await;
    let project = tempfile::tempdir().unwrap();
    let mut h = start_saving(
        &server,
        project.path(),
        &store,
        OpenSession::Resume(id.into()),
    );
    let mut events = h
        .until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    let Some(AgentEvent::SessionOpened { log: shown }) = events.pop() else {
        unreachable!()
    };
    shown
}

#[tokio::test]
async fn a_resumed_log_keeps_its_newest_items_up_to_the_bound() {
    let log: Vec<LogItem> = (0..LOG_ITEMS_MAX + 5)
        .map(|i| LogItem::User(format!("prompt {i}")))
        .collect();
    let shown = resumed_log(&log).await;
    assert_eq!(shown.len(), LOG_ITEMS_MAX);
    assert_eq!(shown[0], LogItem::User("prompt 5".into()));
}

#[tokio::test]
async fn a_log_of_long_replies_keeps_its_newest_up_to_the_byte_bound() {
    // Six replies of 1 MiB: over the bound, which keeps the newest four.
    let reply = |i: usize| LogItem::Assistant {
        text: format!("{i}{}", "x".repeat(1024 * 1024 - 1)),
        reasoning: String::new(),
        end: ReplyEnd::Complete,
    };
    let log: Vec<LogItem> = (0..6).map(reply).collect();
    let shown = resumed_log(&log).await;
    assert_eq!(shown.len(), LOG_BYTES_MAX / (1024 * 1024));
    assert_eq!(shown[0], reply(2));
    assert_eq!(shown.last(), Some(&reply(5)));
}
