//! End to end, the real binary in a pty against the scripted server: a
//! command cannot read the API key or `--header` values from dashfloat's
//! own process (`/proc/$PPID/environ`, `/proc/$PPID/cmdline`), as root and
//! as an unprivileged user, while the key still reaches the provider, and
//! neither is saved in the session file; and the tools work in a
//! directory whose name is not UTF-8.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::spawn_private;
use crate::support::dashfloat_bin;
use crate::support::pty::PtySession;
use crate::support::server::{Recorded, Reply, ScriptedServer};

const WAIT: Duration = Duration::from_secs(30);
const KEY: &str = "sk-environ-marker";
const HEADER_SECRET: &str = "header-argv-marker";
const PASSED: &str = "gh-passed-marker";
/// The unprivileged user the second run drops to.
const NOBODY: u32 = 65534;
const SETPRIV: &str = "/usr/bin/setpriv";

/// What the model asks to run: everything dashfloat's own process shows
/// about itself, plus the one variable handed over on purpose.
fn snoop_command() -> String {
    json!({
        "command": "cat /proc/$PPID/environ /proc/$PPID/cmdline; \
                    tr '\\0' '\\n' < /proc/$PPID/environ; echo passed=$GH_TOKEN"
    })
    .to_string()
}

/// Runs the snooping command through dashfloat started by `program
/// prefix..` (dashfloat itself with no prefix, or setpriv with its options
/// and dashfloat's path) in `home`/`project`, and returns the body of the
/// request that carried the command's output.
fn snoop(program: &Path, prefix: &[&str], home: &Path, project: &Path) -> String {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call("x1", "execute_command", &[&snoop_command()]),
        Reply::text(&["done snooping"]),
    ]);
    let config = home.join("dashfloat");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[exec]\npass_env = [\"GH_TOKEN\"]\n",
    )
    .unwrap();
    // The config directory is the home owner's, so dashfloat can keep its
    // sessions there whoever it runs as.
    let owner = std::fs::metadata(home).unwrap();
    std::os::unix::fs::chown(&config, Some(owner.uid()), Some(owner.gid())).unwrap();
    let header = format!("X-Secret: {HEADER_SECRET}");
    let base_url = server.base_url();
    let mut args: Vec<&str> = prefix.to_vec();
    args.extend([
        "--base-url",
        &base_url,
        "--model",
        "scripted",
        "--header",
        &header,
    ]);
    let mut session = spawn_private(
        program,
        &args,
        home,
        project,
        &[("OPENAI_API_KEY", KEY), ("GH_TOKEN", PASSED)],
    );
    session.wait_for("idle", WAIT).unwrap();
    approve_the_snooping_and_quit(&mut session);

    let requests = server.requests();
    // The key and the header still reach the provider.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].header("x-secret"), Some(HEADER_SECRET));
    assert_eq!(requests[1].header("x-secret"), Some(HEADER_SECRET));
    assert_no_secret_saved(home);
    String::from_utf8_lossy(&requests[1].raw_body).into_owned()
}

/// The session was saved, and its file holds neither the key nor the
/// header's value.
fn assert_no_secret_saved(home: &Path) {
    let dir = home.join("dashfloat/sessions");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("show me"), "{text}");
    assert!(!text.contains(KEY), "the key was saved: {text}");
    assert!(
        !text.contains(HEADER_SECRET),
        "the header was saved: {text}"
    );
}

/// Asks for the snooping command, approves it, waits for the model's last
/// word and quits.
fn approve_the_snooping_and_quit(session: &mut PtySession) {
    session.send(b"show me\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.send(b"y");
    session.wait_for("done snooping", WAIT).unwrap();
    quit(session);
}

/// Ctrl+D, and dashfloat exits cleanly.
fn quit(session: &mut PtySession) {
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

fn assert_nothing_leaked(body: &str) {
    assert!(!body.contains(KEY), "the key leaked: {body}");
    assert!(!body.contains(HEADER_SECRET), "the header leaked: {body}");
    // The command did read the command line...
    assert!(body.contains("--base-url"), "{body}");
    // ...and got the variable it was handed, once: not from the environ.
    assert!(body.contains(&format!("passed={PASSED}")), "{body}");
    assert_eq!(body.matches(PASSED).count(), 1, "{body}");
}

#[test]
fn a_command_cannot_read_the_key_or_header_values_from_dashfloat() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let body = snoop(&dashfloat_bin(), &[], home.path(), project.path());
    assert_nothing_leaked(&body);
    if running_as_root() {
        // Root reads any environment: this one is just clean.
        assert!(body.contains("TERM=xterm-256color"), "{body}");
    } else {
        assert_environ_unreadable(&body);
    }
}

/// Whether this test runs as root: a file it creates belongs to uid 0.
fn running_as_root() -> bool {
    let probe = tempfile::tempfile().unwrap();
    probe.metadata().unwrap().uid() == 0
}

#[test]
fn an_unprivileged_user_cannot_read_them_either() {
    if !running_as_root() {
        println!("skipped: dropping to uid {NOBODY} needs root");
        return;
    }
    if !Path::new(SETPRIV).exists() {
        println!("skipped: {SETPRIV} (util-linux) is not installed");
        return;
    }
    let ids = [
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".to_owned(),
        "--".to_owned(),
    ];
    let bin = dashfloat_bin();
    let mut prefix: Vec<&str> = ids.iter().map(String::as_str).collect();
    prefix.push(bin.to_str().unwrap());
    let can_run = std::process::Command::new(SETPRIV)
        .args(&prefix)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !can_run {
        println!(
            "skipped: uid {NOBODY} cannot run {} (a directory on the way is private)",
            bin.display()
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for dir in [home.path(), project.path()] {
        std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let body = snoop(Path::new(SETPRIV), &prefix, home.path(), project.path());
    assert_nothing_leaked(&body);
    assert_environ_unreadable(&body);
}

/// A process of the same non-root user cannot even open the environment
/// of an undumpable process.
fn assert_environ_unreadable(body: &str) {
    assert!(body.contains("environ: Permission denied"), "{body}");
}

#[test]
fn the_tools_work_in_a_directory_whose_name_is_not_utf8() {
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join(OsStr::from_bytes(b"proj-\xff"));
    // Where a lossy conversion of the name would lead.
    let lossy = parent.path().join("proj-\u{FFFD}");
    for (dir, file) in [(&project, "inside.txt"), (&lossy, "decoy.txt")] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join(file), "x\n").unwrap();
    }
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call("l1", "list_directory", &[r#"{"path": "."}"#]),
        Reply::text(&["listed it"]),
    ]);
    let mut session = spawn_private(
        &dashfloat_bin(),
        &["--base-url", &server.base_url(), "--model", "scripted"],
        parent.path(),
        &project,
        &[],
    );
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"what is here?\r");
    session.wait_for("listed it", WAIT).unwrap();
    quit(&mut session);
    let listing = String::from_utf8_lossy(&server.requests()[1].raw_body).into_owned();
    assert!(listing.contains("inside.txt"), "{listing}");
    assert!(!listing.contains("decoy.txt"), "{listing}");
}

/// Runs `cat` of dashfloat's environ and cmdline with the base URL given
/// as a flag or as `OPENAI_BASE_URL`, and returns the screen while the
/// session ran and the requests the server saw.
fn snoop_with_credentials_in_the_url(as_flag: bool) -> (String, Vec<Recorded>) {
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call(
            "x1",
            "execute_command",
            &[r#"{"command": "cat /proc/$PPID/environ /proc/$PPID/cmdline"}"#],
        ),
        Reply::text(&["done snooping"]),
    ]);
    let url = server
        .base_url()
        .replacen("http://", "http://alice:pw-marker@", 1);
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut env = Vec::new();
    let mut args = vec!["--model", "scripted"];
    if as_flag {
        args.extend(["--base-url", &url]);
    } else {
        env.push(("OPENAI_BASE_URL", url.as_str()));
    }
    let mut session = spawn_private(&dashfloat_bin(), &args, home.path(), project.path(), &env);
    let screen = session.wait_for("idle", WAIT).unwrap();
    approve_the_snooping_and_quit(&mut session);
    (screen, server.requests())
}

#[test]
fn credentials_in_the_base_url_are_sent_but_never_shown_or_left_readable() {
    for as_flag in [true, false] {
        let (screen, requests) = snoop_with_credentials_in_the_url(as_flag);
        // The status bar names the host alone.
        assert!(screen.contains("127.0.0.1:"), "{screen}");
        assert!(!screen.contains("pw-marker"), "{screen}");
        // The credentials still reach the server, as basic auth.
        let basic = format!("Basic {}", base64_of("alice:pw-marker"));
        assert_eq!(requests[0].header("authorization"), Some(basic.as_str()));
        let body = String::from_utf8_lossy(&requests[1].raw_body).into_owned();
        assert!(body.contains("--model"), "{body}");
        assert!(!body.contains("pw-marker"), "as_flag {as_flag}: {body}");
    }
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[test]
fn a_stray_hand_over_variable_is_reported_and_the_session_works() {
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["still here"])]);
    let home = tempfile::tempdir().unwrap();
    let mut session = spawn_private(
        &dashfloat_bin(),
        &["--base-url", &server.base_url(), "--model", "scripted"],
        home.path(),
        home.path(),
        &[("DASHFLOAT_HANDOVER_FD", "0")],
    );
    session.wait_for("hand-over file", WAIT).unwrap();
    session.send(b"hello\r");
    session.wait_for("still here", WAIT).unwrap();
    quit(&mut session);
}
