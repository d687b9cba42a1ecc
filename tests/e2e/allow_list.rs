//! The read-only allow-list in the real binary (ADR 0025): `git status`
//! and a `grep` run with no `y`; a redirect and a chain with `rm` still
//! ask, and say why.

use std::path::Path;
use std::process::Command;

use crate::spawn_private;
use crate::support::WAIT;
use crate::support::dashfloat_bin;
use crate::support::pty::PtySession;
use crate::support::server::{Reply, ScriptedServer};

/// A git repository holding one file, with a HOME of its own (no global
/// git configuration), and dashfloat started in it.
fn spawn_in_repo(server: &ScriptedServer) -> (PtySession, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("greet.txt"), "hello world\n").unwrap();
    git(dir.path(), &["init", "--quiet"]);
    let args = ["--base-url", &server.base_url(), "--model", "scripted"];
    let session = spawn_private(&dashfloat_bin(), &args, dir.path(), dir.path(), &[]);
    session.wait_for("idle", WAIT).unwrap();
    (session, dir)
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn command(id: &str, line: &str) -> Reply {
    Reply::tool_call(
        id,
        "execute_command",
        &[&serde_json::json!({ "command": line }).to_string()],
    )
}

#[test]
fn git_status_and_grep_run_with_no_y() {
    let server = ScriptedServer::start_blocking(vec![
        command("c1", "git status --short"),
        Reply::text(&["Status seen."]),
        command("c2", "grep -n hello greet.txt"),
        Reply::text(&["Found it."]),
    ]);
    let (mut session, _dir) = spawn_in_repo(&server);
    session.send(b"what changed?\r");
    let screen = session.wait_for("Status seen.", WAIT).unwrap();
    assert!(
        screen.contains("git status --short · read-only, ran unasked"),
        "{screen}"
    );
    assert!(screen.contains("?? greet.txt"), "{screen}");
    assert!(!screen.contains("Confirm"), "{screen}");
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"find hello\r");
    let screen = session.wait_for("Found it.", WAIT).unwrap();
    assert!(screen.contains("1:hello world"), "{screen}");
    assert!(!screen.contains("Confirm"), "{screen}");
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

#[test]
fn a_redirect_and_a_chain_with_rm_still_ask() {
    let server = ScriptedServer::start_blocking(vec![
        command("c1", "ls > listing.txt"),
        Reply::text(&["Not written."]),
        command("c2", "cat greet.txt; rm greet.txt"),
        Reply::text(&["Not removed."]),
    ]);
    let (mut session, dir) = spawn_in_repo(&server);
    session.send(b"save the listing\r");
    let screen = session
        .wait_for("asks because `>` redirects output to a file", WAIT)
        .unwrap();
    assert!(screen.contains("Confirm (1 of 1)"), "{screen}");
    session.send(b"\x1b");
    session.wait_for("Not written.", WAIT).unwrap();
    assert!(!dir.path().join("listing.txt").exists());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"show then delete it\r");
    let screen = session
        .wait_for("asks because `rm` is not a read-only command", WAIT)
        .unwrap();
    assert!(screen.contains("Confirm (1 of 1)"), "{screen}");
    session.send(b"\x1b");
    session.wait_for("Not removed.", WAIT).unwrap();
    assert!(dir.path().join("greet.txt").exists());
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}
