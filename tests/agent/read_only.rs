//! The read-only allow-list in the agent loop (ADR 0025): a command line
//! the analyser accepts runs without asking, as it rendered it, with its
//! row marked; any other line asks with the reason in the preview; a line
//! the shell could not parse is answered as an invalid argument.

use std::path::Path;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, PreviewKind};
use dashfloat::tools::Analyser;
use serde_json::{Value, json};

use crate::support;
use support::agent::{AgentHarness, setup, start_with};
use support::server::{Reply, ScriptedServer};

/// An agent under `ask` in `root`, with the analyser on (reading no
/// global git configuration) unless `auto_allow` is false.
fn start(server: &ScriptedServer, root: &Path, auto_allow: bool) -> AgentHarness {
    let mut s = setup(&server.base_url(), root, ApprovalPolicy::Ask);
    s.read_only = auto_allow.then(|| {
        Analyser::new(s.tools.root.clone())
            .with_command_env(support::command_env(Path::new("/dev/null")))
    });
    start_with(s)
}

/// A reply calling `execute_command` with `command`, then a closing text.
fn script(command: &str) -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "c1",
            "execute_command",
            &[&json!({ "command": command }).to_string()],
        ),
        Reply::text(&["done"]),
    ]
}

/// The tool message of the second request, parsed.
fn result_sent(server: &ScriptedServer) -> Value {
    let body = &server.requests()[1].body;
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_read_only_line_runs_unasked_and_its_row_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let server = ScriptedServer::start(script("cat a.txt | wc -l")).await;
    let mut h = start(&server, dir.path(), true);
    h.prompt("count the lines").await;
    let events = h.turn().await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "{events:#?}"
    );
    assert!(events.contains(&AgentEvent::ToolAllowed {
        id: "c1".into(),
        summary: "cat a.txt | wc -l · read-only, ran unasked".into(),
    }));
    let result = result_sent(&server);
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["output"], "2\n");
}

#[tokio::test]
async fn what_runs_is_the_rendering_with_the_analysers_environment() {
    let dir = tempfile::tempdir().unwrap();
    // `echo` of a quoted word runs as the analyser rendered it; the pager
    // variables it sets reach the command, though it cannot print them
    // itself (`$` is refused): the file tool's env test checks them.
    let server = ScriptedServer::start(script(r#"echo "two  spaces""#)).await;
    let mut h = start(&server, dir.path(), true);
    h.prompt("say it").await;
    let events = h.turn().await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ToolAllowed { summary, .. } if summary.starts_with("echo 'two  spaces'")
    )));
    assert_eq!(result_sent(&server)["output"], "two  spaces\n");
}

#[tokio::test]
async fn a_line_that_writes_asks_with_the_reason_in_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(script("ls > listing.txt")).await;
    let mut h = start(&server, dir.path(), true);
    h.prompt("list into a file").await;
    let (id, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(request)) = events.last() else {
        unreachable!()
    };
    let note = request
        .preview
        .iter()
        .find(|l| l.kind == PreviewKind::Marker)
        .expect("a note saying why it asks");
    assert!(note.text.starts_with("asks because "), "{}", note.text);
    assert!(note.text.contains('>'), "{}", note.text);
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    assert!(!dir.path().join("listing.txt").exists());
}

/// A read-only line that asks for more time than a command runs unasked
/// asks: a longer run is the person's call, and run unasked within the
/// default it would only time out again.
#[tokio::test]
async fn a_read_only_line_asking_for_more_time_asks() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "c1",
            "execute_command",
            &[&json!({ "command": "ls", "timeout_seconds": 600 }).to_string()],
        ),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start(&server, dir.path(), true);
    h.prompt("list slowly").await;
    let (id, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(request)) = events.last() else {
        unreachable!()
    };
    assert!(
        request.preview.iter().any(|l| l.kind == PreviewKind::Marker
            && l.text
                == "asks because it asks for 600 s, longer than the 30 s a command runs unasked"),
        "{:?}",
        request.preview
    );
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
}

#[tokio::test]
async fn an_unterminated_quote_is_an_invalid_argument_never_run_or_asked() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(script("cat 'a.txt")).await;
    let mut h = start(&server, dir.path(), true);
    h.prompt("read it").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    let result = result_sent(&server);
    assert_eq!(result["code"], "invalid_argument", "{result}");
    assert_eq!(result["field"], "command");
}

#[tokio::test]
async fn with_the_switch_off_every_command_asks() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(script("ls")).await;
    let mut h = start(&server, dir.path(), false);
    h.prompt("list").await;
    let (id, events) = h.next_confirm().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolAllowed { .. }))
    );
    h.decide(&id, Decision::Approve).await;
    h.turn().await;
    assert_eq!(result_sent(&server)["exit_code"], 0);
}

/// Runs real git in `dir` with no global or system configuration.
fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A repository committed inside the project (a gitlink and no
/// `.gitmodules`, as `git add` of an embedded repository leaves it, and
/// as an unpacked archive can plant it) whose own configuration names a
/// program: git status and git diff open it to compare the gitlink, and
/// would run git in it. They ask, saying why, and nothing runs there.
#[tokio::test]
async fn git_status_and_diff_in_a_planted_inner_repository_ask_and_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let root = dir.path();
    git(root, &["init", "-q"]);
    git(root, &["init", "-q", "inner"]);
    std::fs::write(root.join("inner/f.txt"), "one\n").unwrap();
    git(&root.join("inner"), &["add", "f.txt"]);
    git(&root.join("inner"), &["commit", "-qm", "inner"]);
    git(root, &["add", "inner"]);
    git(root, &["commit", "-qm", "outer"]);
    assert!(!root.join(".gitmodules").exists());
    let program = format!("touch {}; false", ran.display());
    git(&root.join("inner"), &["config", "core.fsmonitor", &program]);
    std::fs::write(root.join("inner/f.txt"), "two\n").unwrap();

    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            (
                "c1",
                "execute_command",
                &json!({ "command": "git status" }).to_string(),
            ),
            (
                "c2",
                "execute_command",
                &json!({ "command": "git diff" }).to_string(),
            ),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start(&server, root, true);
    h.prompt("what changed?").await;
    for _ in 0..2 {
        let (id, events) = h.next_confirm().await;
        let Some(AgentEvent::Confirm(request)) = events.last() else {
            unreachable!()
        };
        assert!(
            request.preview.iter().any(|l| l.kind == PreviewKind::Marker
                && l.text
                    .contains("`inner` is a gitlink whose folder holds a `.git`")),
            "{:?}",
            request.preview
        );
        h.decide(&id, Decision::Reject).await;
    }
    let events = h.turn().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolAllowed { .. })),
        "{events:#?}"
    );
    assert!(!ran.exists(), "the inner repository's fsmonitor ran");
}
