//! End to end, slash commands with the real binary in a pseudo-terminal:
//! `/clear` empties the log and starts a new saved session, `/compact`
//! shows its phase while the summary streams and sends the summary from
//! then on (and Esc stops it with nothing changed), the popup completes and closes, an unknown command never
//! reaches the model, and `/help` lists the keys and the commands.

use dashfloat::bounds::SUMMARY_PREFIX;
use serde_json::Value;
use std::time::Duration;

use crate::sessions::{WAIT, contents, first_saved, loaded_sessions, quit, spawn, store_of};
use crate::support::pty::PtySession;
use crate::support::server::{Reply, ScriptedServer};

/// The roles of the messages a request carried, in order.
fn roles(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Types `prompt` + Enter and waits until `answer` is shown and the agent
/// is idle again.
fn turn(session: &PtySession, prompt: &str, answer: &str) {
    session.send(format!("{prompt}\r").as_bytes());
    session.wait_for(answer, WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
}

/// Whether the input box's line reads `› text` (and nothing after it).
fn input_reads(screen: &str, text: &str) -> bool {
    let line = format!("› {text}");
    screen.lines().any(|l| l.trim_end() == line.trim_end())
}

#[test]
fn clear_empties_the_log_and_the_next_prompt_starts_a_new_saved_session() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["the word is kiwi"]),
        Reply::text(&["a fresh start"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    turn(&session, "remember a fruit", "the word is kiwi");
    let old = first_saved(home.path());

    session.send(b"/clear\r");
    session
        .wait_until(WAIT, |s| {
            !s.contains("the word is kiwi") && !s.contains("remember a fruit")
        })
        .unwrap();
    turn(&session, "which fruit?", "a fresh start");
    quit(&mut session);

    // The new conversation holds only the system prompt and the new prompt.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(roles(&requests[1].body), ["system", "user"]);
    assert_eq!(contents(&requests[1].body)[1], "which fruit?");
    // The old session stays saved beside the new one, and both load.
    let ids: Vec<String> = store_of(home.path())
        .list(None)
        .sessions
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&old), "{ids:?}");
    assert_eq!(loaded_sessions(home.path()), [3, 3]);
}

#[test]
fn compact_shows_its_phase_sends_the_focus_and_the_summary_leads_the_next_request() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // The summary is slow to start and slow to stream, so the phase stays
    // on screen while it comes in.
    let summary = Reply::text(&["The person asked about ", "src/a.rs and src/b.rs."])
        .head_delay(Duration::from_millis(500))
        .delay_each(Duration::from_millis(300));
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
        summary,
        Reply::text(&["third answer"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    turn(&session, "look at src/a.rs", "first answer");
    turn(&session, "now src/b.rs", "second answer");

    session.send(b"/compact keep the file names\r");
    // The status bar (the top row) says so while the summary request is
    // in flight.
    session
        .wait_until(WAIT, |s| {
            server.requests().len() == 3
                && s.lines().next().is_some_and(|l| l.contains("compacting"))
        })
        .unwrap();
    session
        .wait_for("compacted the conversation", WAIT)
        .unwrap();
    session.wait_for("idle", WAIT).unwrap();
    let asked = &server.requests()[2].body;
    assert_eq!(roles(asked), ["system", "user"]);
    let transcript = &contents(asked)[1];
    assert!(
        transcript.contains("keep the file names") && transcript.contains("look at src/a.rs"),
        "{transcript}"
    );

    turn(&session, "and now?", "third answer");
    quit(&mut session);
    let next = &server.requests()[3].body;
    assert_eq!(roles(next), ["system", "user", "assistant", "user"]);
    let sent = contents(next);
    assert_eq!(
        sent[1],
        format!("{SUMMARY_PREFIX}The person asked about src/a.rs and src/b.rs.\n\nnow src/b.rs")
    );
    assert_eq!(sent[2..], ["second answer", "and now?"]);
}

#[test]
fn esc_during_compact_leaves_the_conversation_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
        Reply::text(&["a summary that never ends"]).hang_after(2),
        Reply::text(&["third answer"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    turn(&session, "one", "first answer");
    turn(&session, "two", "second answer");
    session.send(b"/compact\r");
    session
        .wait_until(WAIT, |s| {
            server.requests().len() == 3
                && s.lines().next().is_some_and(|l| l.contains("compacting"))
        })
        .unwrap();
    session.send(b"\x1b");
    session.wait_for("compaction cancelled", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    turn(&session, "three", "third answer");
    quit(&mut session);
    let sent = contents(&server.requests()[3].body);
    assert_eq!(
        sent[1..],
        ["one", "first answer", "two", "second answer", "three"]
    );
}

#[test]
fn the_popup_lists_completes_and_closes_and_an_unknown_command_sends_nothing() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["only this"])]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();

    session.send(b"/");
    // The popup may be caught half drawn (a frame reaches the pty in
    // pieces): wait for the whole of it, not for its first line.
    let listed = [
        "/help",
        "/clear",
        "/compact [focus]",
        "/sessions",
        "/resume [ID]",
        "/quit",
    ];
    session
        .wait_until(WAIT, |s| listed.iter().all(|command| s.contains(command)))
        .map_err(|screen| format!("the popup did not list every command:\n{screen}"))
        .unwrap();
    session.send(b"co");
    session
        .wait_until(WAIT, |s| input_reads(s, "/co") && !s.contains("/help"))
        .unwrap();
    session.send(b"\t");
    session
        .wait_until(WAIT, |s| input_reads(s, "/compact"))
        .unwrap();
    session.send(b"\x1b");
    let screen = session
        .wait_gone("summarise the conversation now", WAIT)
        .unwrap();
    assert!(input_reads(&screen, "/compact"), "{screen}");
    session.send(&[0x7f; 8]);
    session.wait_until(WAIT, |s| input_reads(s, "")).unwrap();

    session.send(b"/nope\r");
    session.wait_for("unknown command /nope", WAIT).unwrap();
    // Nothing went to the model: the first request the server sees is
    // the next prompt's, and it does not hold the command.
    turn(&session, "a real prompt", "only this");
    quit(&mut session);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(contents(&requests[0].body)[1..], ["a real prompt"]);
}

#[test]
fn help_lists_the_keys_and_the_commands() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"/help\r");
    // The picker's keys are the last lines of the help: once they are on
    // the screen, the frame above them is whole.
    let screen = session.wait_for("in the session picker:", WAIT).unwrap();
    for line in [
        "/mcp [restart NAME|trust]     MCP servers and their tools",
        "/hooks [trust]                hooks run on events",
        "/init                         ask the model to write AGENTS.md",
        "/approval [POLICY]",
        "keys: ⏎ send",
        "while the agent works: Esc interrupt",
    ] {
        assert!(screen.contains(line), "{line} missing:\n{screen}");
    }
    quit(&mut session);
    assert!(server.requests().is_empty());
}
