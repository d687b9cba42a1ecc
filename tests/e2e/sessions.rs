//! End to end, saved sessions with the real binary: `--continue` shows the
//! earlier transcript and sends the earlier conversation, the picker
//! resumes the session chosen, a session open in one process is refused in
//! another, `dashfloat sessions` lists them (as JSON too), `--no-save`
//! writes nothing, and `kill -9` at any point of a multi-step turn leaves
//! a session that loads as a valid conversation.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dashfloat::session::SessionStore;
use serde_json::Value;

use crate::spawn_private;
use crate::support::dashfloat_bin;
use crate::support::pty::PtySession;
use crate::support::server::{Reply, ScriptedServer};
use crate::support::sessions::write_session;

pub(crate) const WAIT: Duration = Duration::from_secs(30);
/// How often the kill -9 test kills a turn.
const KILLS: usize = 50;

/// Where dashfloat started with `home` as its config directory keeps its
/// sessions.
pub(crate) fn store_of(home: &Path) -> SessionStore {
    SessionStore::at(home.join("dashfloat/sessions"))
}

/// The project directory as dashfloat records it (its working directory,
/// symlinks resolved).
fn recorded(project: &Path) -> String {
    project
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// dashfloat in `project` against `server`, `home` its config directory.
pub(crate) fn spawn(
    home: &Path,
    project: &Path,
    server: &ScriptedServer,
    extra: &[&str],
) -> PtySession {
    let url = server.base_url();
    let mut args = vec!["--base-url", &url, "--model", "scripted"];
    args.extend_from_slice(extra);
    spawn_private(&dashfloat_bin(), &args, home, project, &[])
}

/// The id of the first session saved under `home`, once there is one (the
/// agent saves right after it says the turn is over).
pub(crate) fn first_saved(home: &Path) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(first) = store_of(home).list(None).sessions.first() {
            return first.id.clone();
        }
        assert!(std::time::Instant::now() < deadline, "nothing was saved");
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(crate) fn quit(session: &mut PtySession) {
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

/// The contents of each message a request carried.
pub(crate) fn contents(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn continue_shows_the_earlier_transcript_and_sends_the_earlier_conversation() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["the word is kiwi"]),
        Reply::text(&["you said kiwi"]),
    ]);
    let mut first = spawn(home.path(), project.path(), &server, &[]);
    first.wait_for("idle", WAIT).unwrap();
    first.send(b"remember a fruit\r");
    first.wait_for("the word is kiwi", WAIT).unwrap();
    first.wait_for("idle", WAIT).unwrap();
    quit(&mut first);

    let mut second = spawn(home.path(), project.path(), &server, &["--continue"]);
    second.wait_for("the word is kiwi", WAIT).unwrap();
    let screen = second.wait_for("remember a fruit", WAIT).unwrap();
    assert!(screen.contains("idle"), "{screen}");
    second.send(b"which fruit?\r");
    second.wait_for("you said kiwi", WAIT).unwrap();
    quit(&mut second);
    let sent = contents(&server.requests()[1].body);
    assert_eq!(
        sent[1..],
        ["remember a fruit", "the word is kiwi", "which fruit?"]
    );
    // One session, continued in place.
    assert_eq!(store_of(home.path()).list(None).sessions.len(), 1);
}

#[test]
fn the_picker_resumes_the_session_chosen_with_the_arrows() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = store_of(home.path());
    let here = recorded(project.path());
    let now = dashfloat::session::now_secs();
    write_session(
        &store,
        "20261201-080000-aaaaaa",
        &here,
        now - 60,
        ("newest prompt", "newest answer"),
    );
    write_session(
        &store,
        "20261130-080000-bbbbbb",
        &here,
        now - 7_200,
        ("older prompt", "older answer"),
    );
    write_session(
        &store,
        "20261129-080000-cccccc",
        "/elsewhere",
        now,
        ("elsewhere prompt", "x"),
    );
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["carrying on"])]);
    let mut session = spawn(home.path(), project.path(), &server, &["--resume"]);
    // The picker may be caught half drawn: wait for its last row, not
    // for its title.
    let screen = session
        .wait_until(WAIT, |s| {
            s.contains("Resume a session")
                && s.contains("newest prompt")
                && s.contains("older prompt")
        })
        .map_err(|screen| format!("the picker did not list both sessions:\n{screen}"))
        .unwrap();
    assert!(!screen.contains("elsewhere prompt"), "{screen}");
    session.send(b"\x1b[B");
    session
        .wait_until(WAIT, |s| {
            s.lines()
                .any(|l| l.contains('›') && l.contains("older prompt"))
        })
        .unwrap();
    session.send(b"\r");
    session.wait_for("older answer", WAIT).unwrap();
    session.wait_gone("Resume a session", WAIT).unwrap();
    session.send(b"go on\r");
    session.wait_for("carrying on", WAIT).unwrap();
    quit(&mut session);
    let sent = contents(&server.requests()[0].body);
    assert_eq!(sent[1..], ["older prompt", "older answer", "go on"]);
}

#[test]
fn a_session_open_in_one_process_is_refused_in_another() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["saved and held"])]);
    let mut holder = spawn(home.path(), project.path(), &server, &[]);
    holder.wait_for("idle", WAIT).unwrap();
    holder.send(b"hold this\r");
    holder.wait_for("saved and held", WAIT).unwrap();
    let id = first_saved(home.path());

    let mut other = spawn(home.path(), project.path(), &server, &["--resume", &id]);
    let pid = holder.pid().unwrap().to_string();
    let screen = other.wait_for("open in another dashfloat", WAIT).unwrap();
    assert!(screen.contains(&pid), "{screen}");
    quit(&mut other);
    quit(&mut holder);
    // Once the holder has gone, it opens.
    let mut again = spawn(home.path(), project.path(), &server, &["--resume", &id]);
    again.wait_for("saved and held", WAIT).unwrap();
    quit(&mut again);
}

fn sessions_command(home: &Path, project: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(dashfloat_bin())
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_sessions_command_lists_them_and_reports_damaged_files() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = store_of(home.path());
    let here = recorded(project.path());
    write_session(
        &store,
        "20261201-080000-aaaaaa",
        &here,
        20,
        ("here newer", "a"),
    );
    write_session(
        &store,
        "20261130-080000-bbbbbb",
        &here,
        10,
        ("here older", "b"),
    );
    write_session(
        &store,
        "20261129-080000-cccccc",
        "/elsewhere",
        30,
        ("there", "c"),
    );
    std::fs::write(store.path_of("20261128-080000-dddddd"), "{ damaged").unwrap();

    let (json, errors) = sessions_command(home.path(), project.path(), &["sessions", "--json"]);
    let list: Value = serde_json::from_str(&json).unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["20261201-080000-aaaaaa", "20261130-080000-bbbbbb"]);
    assert_eq!(list[0]["title"], "here newer");
    assert_eq!(list[0]["directory"].as_str(), Some(here.as_str()));
    assert!(list[0]["bytes"].as_u64().unwrap() > 0);
    assert!(
        errors.contains("20261128-080000-dddddd") && errors.contains("damaged"),
        "{errors}"
    );

    // --all, as plain text, and with a credential flag before the
    // subcommand (handed over and put back where it belongs).
    let (text, _) = sessions_command(
        home.path(),
        project.path(),
        &["--header", "X-Secret: s", "sessions", "--all"],
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("20261129-080000-cccccc") && lines[0].contains("there"),
        "{text}"
    );
}

/// The session files in `home`'s store, each loaded (the load checks the
/// conversation: every call answered, in order): their message counts.
pub(crate) fn loaded_sessions(home: &Path) -> Vec<usize> {
    let store = store_of(home);
    let listing = store.list(None);
    assert!(listing.problems.is_empty(), "{:?}", listing.problems);
    listing
        .sessions
        .iter()
        .map(|s| match store.load(&s.id) {
            Ok(saved) => saved.messages.len(),
            Err(e) => panic!("session {} does not load: {e}", s.id),
        })
        .collect()
}

/// A multi-step turn: a listing, two reads side by side, a command, an
/// answer.
fn multi_step_script() -> Vec<Reply> {
    vec![
        Reply::tool_call("l1", "list_directory", &[r#"{"path":"."}"#]),
        Reply::tool_calls(&[
            ("r1", "read_file", r#"{"path":"a.txt"}"#),
            ("r2", "read_file", r#"{"path":"b.txt"}"#),
        ]),
        Reply::tool_call(
            "x1",
            "execute_command",
            &[r#"{"command":"sleep 0.1; echo ran"}"#],
        ),
        Reply::text(&["all done"]),
    ]
}

#[test]
fn kill_9_anywhere_in_a_turn_leaves_a_valid_session() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(project.path().join("b.txt"), "beta\n").unwrap();
    // A cheap, seeded spread of kill points over the turn (0–250 ms after
    // the prompt), the seed printed so a failure can be replayed.
    let mut seed = dashfloat::session::now_secs() | 1;
    println!("seed {seed}");
    let mut counts: Vec<usize> = Vec::new();
    for _ in 0..KILLS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_millis(seed % 250);
        let home = tempfile::tempdir().unwrap();
        let server = ScriptedServer::start_blocking(multi_step_script());
        let mut session = spawn(
            home.path(),
            project.path(),
            &server,
            &["--approval", "dangerously-approve-all"],
        );
        session.wait_for("idle", WAIT).unwrap();
        session.send(b"look around\r");
        std::thread::sleep(delay);
        let pid = nix::unistd::Pid::from_raw(session.pid().unwrap() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        session
            .wait_exit(WAIT)
            .expect("killed dashfloat did not exit");
        counts.extend(loaded_sessions(home.path()));
        // The survivor's lock went with it: the session opens again.
        for summary in store_of(home.path()).list(None).sessions {
            assert!(store_of(home.path()).open(&summary.id, true).is_ok());
        }
    }
    println!("messages saved at each kill: {counts:?}");
    assert!(!counts.is_empty(), "no kill came after the first save");
}

#[test]
fn no_save_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["noted"])]);
    let mut session = spawn(home.path(), project.path(), &server, &["--no-save"]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"note it\r");
    session.wait_for("noted", WAIT).unwrap();
    quit(&mut session);
    assert!(!store_of(home.path()).dir().exists());
}
