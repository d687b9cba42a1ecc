//! Kills at random points: the real binary, `dashfloat -c exec` through a
//! turn of several steps (a listing, reads side by side, a command, a
//! write, a long answer), `SIGKILL`ed at a random moment, again and again on
//! the same session, so every run first recovers what the kill before
//! left and then writes after it. After each kill the session must open
//! with every record that was written whole: the journal's last whole
//! line is the last record read, only a line cut short may be left out,
//! the conversation is valid, and no message saved before is lost.
//!
//! `SOAK_KILLS` (default 20, as CI runs it) and `SOAK_SEED` choose the
//! run; a failure prints the seed. ADR 0040.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use dashfloat::session::{SessionStore, check_conversation};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::random::{Rng, env_or};
use crate::support::server::{Reply, ScriptedServer};
use crate::support::{WAIT, dashfloat_bin};
use crate::{DEFAULT_SEED, SeedOnFailure};

/// Kills in the run CI does.
const DEFAULT_KILLS: usize = 20;
/// The latest moment of a kill after the start: a run (start-up, the
/// turn, folding the journal on its way out) takes a few hundred
/// milliseconds, so some runs end before it.
const KILL_WINDOW_MS: usize = 800;

/// The replies of one turn, in a loop: each run's requests take the next.
fn reply(n: usize) -> Reply {
    let id = |tag: &str| format!("k{n}{tag}");
    match n % 5 {
        0 => Reply::tool_call(&id("l"), "list_directory", &[r#"{"path":"."}"#]),
        1 => Reply::tool_calls(&[
            (&id("a"), "read_file", r#"{"path":"a.txt"}"#),
            (&id("b"), "read_file", r#"{"path":"b.txt"}"#),
        ]),
        2 => Reply::tool_call(
            &id("x"),
            "execute_command",
            &[r#"{"command":"sleep 0.05; echo ran"}"#],
        ),
        3 => Reply::tool_call(
            &id("w"),
            "write_file",
            &[&format!(r#"{{"path":"out.txt","content":"run {n}\n"}}"#)],
        ),
        // Long enough that the journal passes its folding size every few
        // runs, so kills land in a folding too.
        _ => Reply::text(&["all done: ", &"done ".repeat(20_000)]),
    }
}

/// The number of each whole line of a journal (those ending in a
/// newline), and the bytes after the last of them.
fn whole_records(journal: &[u8]) -> (Vec<u64>, usize) {
    let whole = journal
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let seqs = journal[..whole]
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let record: Value = serde_json::from_slice(&line[17..]).expect("a whole line parses");
            record["seq"].as_u64().expect("a record has its number")
        })
        .collect();
    (seqs, journal.len() - whole)
}

/// What one kill left: the session opens with every whole record.
/// Whether a line was cut short.
fn check_after_kill(store: &SessionStore, kill: usize, saved_before: &mut Vec<String>) -> bool {
    let listing = store.list(None);
    assert!(
        listing.problems.is_empty(),
        "kill {kill}: {:?}",
        listing.problems
    );
    let Some(summary) = listing.sessions.first() else {
        assert!(saved_before.is_empty(), "kill {kill}: the session is gone");
        return false;
    };
    assert_eq!(
        listing.sessions.len(),
        1,
        "kill {kill}: one session, continued"
    );
    let id = &summary.id;
    let session = store
        .load(id)
        .unwrap_or_else(|e| panic!("kill {kill}: the session does not open: {e}"));
    check_conversation(&session.messages).unwrap();
    let snapshot: Value =
        serde_json::from_slice(&std::fs::read(store.path_of(id)).unwrap()).unwrap();
    let journal = std::fs::read(store.journal_of(id)).unwrap_or_default();
    let (seqs, torn) = whole_records(&journal);
    let last = seqs
        .iter()
        .copied()
        .chain(snapshot["seq"].as_u64())
        .max()
        .unwrap_or(0);
    assert_eq!(
        session.seq, last,
        "kill {kill}: a record written whole was not read (journal records {seqs:?})"
    );
    match &session.damage {
        None => assert_eq!(torn, 0, "kill {kill}: a cut line went unnoticed"),
        Some(damage) => assert_eq!(
            damage.bytes, torn as u64,
            "kill {kill}: more than the line being written was left out ({damage})"
        ),
    }
    let texts: Vec<String> = session
        .messages
        .iter()
        .skip(1)
        .map(|m| format!("{:?} {}", m.role, m.content.as_deref().unwrap_or_default()))
        .collect();
    assert!(
        texts.len() >= saved_before.len() && texts[..saved_before.len()] == saved_before[..],
        "kill {kill}: a message saved before this run was lost"
    );
    *saved_before = texts;
    torn > 0
}

#[test]
fn kills_at_random_points_lose_no_record_written_whole() {
    let kills: usize = env_or("SOAK_KILLS", DEFAULT_KILLS);
    let seed: u64 = env_or("SOAK_SEED", DEFAULT_SEED);
    let _guard = SeedOnFailure(seed, kills);
    let mut rng = Rng(seed ^ 0x0c1e_a4ed);
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(project.path().join("b.txt"), "beta\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("dashfloat/sessions"));
    let server = ScriptedServer::start_blocking(Vec::new());
    let mut served = 0;
    server.respond_with(move |_| {
        served += 1;
        reply(served)
    });
    let mut saved_before = Vec::new();
    let (mut finished, mut cut) = (0, 0);
    for round in 1..=kills {
        let delay = Duration::from_millis(rng.below(KILL_WINDOW_MS) as u64);
        let mut child = exec(home.path(), project.path(), &server, round > 1);
        std::thread::sleep(delay);
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
        let _ = kill(pid, Signal::SIGKILL);
        let status = child.wait().unwrap();
        finished += usize::from(status.success());
        cut += usize::from(check_after_kill(&store, round, &mut saved_before));
    }
    // A run that is not killed carries on from all of it.
    let mut child = exec(home.path(), project.path(), &server, true);
    let deadline = std::time::Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the last run did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    check_after_kill(&store, kills + 1, &mut saved_before);
    println!(
        "{kills} kills ({finished} after the run ended, {cut} cutting a record short): {} messages saved at the end",
        saved_before.len()
    );
}

/// `dashfloat exec` of one prompt in `project`, continuing the latest
/// session when `continued`.
fn exec(
    home: &Path,
    project: &Path,
    server: &ScriptedServer,
    continued: bool,
) -> std::process::Child {
    let url = server.base_url();
    let mut args = vec![
        "--base-url",
        &url,
        "--model",
        "scripted",
        "--approval",
        "dangerously-approve-all",
        // No compaction: each run only adds to the conversation.
        "--context-window",
        "10000000",
    ];
    if continued {
        args.push("-c");
    }
    args.extend(["exec", "look around and write out.txt"]);
    Command::new(dashfloat_bin())
        .args(&args)
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}
