//! The project overview as the agent sends it (ADR 0048): in a new
//! conversation's first user message, before the person's words, once;
//! the requests after it repeat it byte for byte; `/clear` brings a fresh
//! one; a resumed session keeps the one it was sent; the config switch
//! turns it off.

use std::path::Path;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::overview::OVERVIEW_OPENING;
use dashfloat::protocol::{AgentEvent, UiCommand};
use dashfloat::session::{OpenSession, SessionSetup, SessionStore};
use serde_json::Value;

use crate::support::agent::{AgentHarness, setup, start_with, system_texts};
use crate::support::server::{Reply, ScriptedServer, assert_prefix_stable};

/// A small Python project at version `version`.
fn write_project(root: &Path, version: &str) {
    let pyproject = format!(
        "[project]\nname = \"inventory\"\nversion = \"{version}\"\ndescription = \"Keeps stock\"\n"
    );
    std::fs::write(root.join("pyproject.toml"), pyproject).unwrap();
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/items.py"), "class Item: pass\n").unwrap();
}

/// An agent in `root` with the overview `on` or off.
fn start(server: &ScriptedServer, root: &Path, on: bool) -> AgentHarness {
    let mut s = setup(&server.base_url(), root, ApprovalPolicy::Ask);
    s.project_overview = on;
    start_with(s)
}

/// The contents of a request's messages, as sent.
fn contents(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// How many overviews a request carries.
fn overviews(body: &Value) -> usize {
    contents(body)
        .iter()
        .map(|c| c.matches(OVERVIEW_OPENING).count())
        .sum()
}

#[tokio::test]
async fn the_first_prompt_carries_the_overview_and_later_ones_repeat_it_unchanged() {
    let project = tempfile::tempdir().unwrap();
    write_project(project.path(), "0.3.1");
    let server = ScriptedServer::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let mut h = start(&server, project.path(), true);
    h.prompt("What version is this?").await;
    let events = h.turn().await;
    let notices = system_texts(&events);
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("project overview sent with the prompt (")
                && n.ends_with(" lines: inventory 0.3.1)")),
        "{notices:?}"
    );
    h.prompt("And the tests?").await;
    h.turn().await;
    let requests = server.requests();
    let first = contents(&requests[0].body);
    assert_eq!(first.len(), 2, "the system prompt and one user message");
    assert!(first[1].starts_with(OVERVIEW_OPENING), "{}", first[1]);
    assert!(
        first[1].contains("\nversion: 0.3.1 (pyproject.toml)\n"),
        "{}",
        first[1]
    );
    assert!(
        first[1].ends_with("</project_overview>\n\nWhat version is this?"),
        "the person's words follow the overview: {}",
        first[1]
    );
    let second = contents(&requests[1].body);
    assert_eq!(second[1], first[1], "sent again as it was");
    assert_eq!(second.last().unwrap(), "And the tests?");
    assert_eq!(
        overviews(&requests[1].body),
        1,
        "the second prompt adds none"
    );
    assert_prefix_stable(&requests);
}

#[tokio::test]
async fn clear_brings_a_fresh_overview_of_the_project_as_it_is_now() {
    let project = tempfile::tempdir().unwrap();
    write_project(project.path(), "0.3.1");
    let server = ScriptedServer::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let mut h = start(&server, project.path(), true);
    h.prompt("first").await;
    h.turn().await;
    write_project(project.path(), "0.4.0");
    h.send(UiCommand::Clear).await;
    h.turn().await;
    h.prompt("again").await;
    h.turn().await;
    let requests = server.requests();
    let after = contents(&requests[1].body);
    assert_eq!(after.len(), 2, "a new conversation: {after:?}");
    assert!(
        after[1].contains("\nversion: 0.4.0 (pyproject.toml)\n"),
        "{}",
        after[1]
    );
    assert!(after[1].ends_with("\n\nagain"));
    assert_eq!(overviews(&requests[1].body), 1);
}

#[tokio::test]
async fn the_switch_turns_it_off() {
    let project = tempfile::tempdir().unwrap();
    write_project(project.path(), "0.3.1");
    let server = ScriptedServer::start(vec![Reply::text(&["one"])]).await;
    let mut h = start(&server, project.path(), false);
    h.prompt("What version is this?").await;
    let events = h.turn().await;
    assert!(
        !system_texts(&events)
            .iter()
            .any(|n| n.contains("project overview")),
        "{events:?}"
    );
    let sent = contents(&server.requests()[0].body);
    assert_eq!(sent[1], "What version is this?");
}

#[tokio::test]
async fn a_resumed_session_keeps_the_overview_it_was_sent() {
    let project = tempfile::tempdir().unwrap();
    write_project(project.path(), "0.3.1");
    let sessions = tempfile::tempdir().unwrap();
    let store = SessionStore::at(sessions.path());
    let saving = |server: &ScriptedServer, open: OpenSession| {
        let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
        s.project_overview = true;
        s.sessions = Some(SessionSetup {
            store: store.clone(),
            open,
            save: true,
            directory: "/projects/demo".into(),
            base_url: server.base_url(),
        });
        start_with(s)
    };
    let server = ScriptedServer::start(vec![Reply::text(&["one"])]).await;
    let mut h = saving(&server, OpenSession::New);
    h.prompt("first").await;
    h.turn().await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    let sent = contents(&server.requests()[0].body);

    // The project changes; the session goes on with what it was told.
    write_project(project.path(), "9.9.9");
    let server = ScriptedServer::start(vec![Reply::text(&["two"])]).await;
    let mut h = saving(&server, OpenSession::Continue);
    h.until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    h.prompt("second").await;
    h.turn().await;
    let resumed = contents(&server.requests()[0].body);
    assert_eq!(resumed[1], sent[1], "the overview as it was sent");
    assert_eq!(overviews(&server.requests()[0].body), 1);
    assert_eq!(resumed.last().unwrap(), "second");
}
