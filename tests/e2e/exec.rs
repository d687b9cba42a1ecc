//! End to end, `dashfloat exec`: the real binary run headless with
//! `std::process::Command` against the scripted server, in temporary
//! project and config directories. Every exit status, the JSON lines and
//! their counts, the human output's split between stdout and stderr, the
//! prompt from stdin, calls answered as not run under `ask`, a file
//! written under `auto-edit`, a session continued, and the flags on
//! either side of `exec`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use clap::Parser;
use dashfloat::config::{ApprovalFlag, Cli, CliCommand};
use dashfloat::llm::wire::Role;
use dashfloat::protocol::{LogItem, ToolStatus};
use serde_json::Value;

use crate::sessions::{WAIT, contents, store_of};
use crate::support::dashfloat_bin;
use crate::support::server::{Reply, ScriptedServer};
use crate::support::sessions::write_session;

/// `dashfloat exec` in `project` against `server`, `home` its config
/// directory, with `args` after `exec` (the prompt among them).
pub(crate) fn exec(home: &Path, project: &Path, server: &ScriptedServer, args: &[&str]) -> Command {
    let mut command = Command::new(dashfloat_bin());
    command
        .arg("exec")
        .args(["--base-url", &server.base_url(), "--model", "scripted"])
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("DASHFLOAT_CONTEXT_WINDOW", "128000")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DASHFLOAT_APPROVAL")
        .stdin(Stdio::null());
    command
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Every stdout line parsed, each checked to carry `v: 1` and a `type`.
/// Each call's id and the status of its result, in order, from the
/// JSON lines of `exec --json`.
pub(crate) fn statuses(lines: &[Value]) -> Vec<(&str, &str)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["id"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect()
}

fn lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_eq!(value["v"], 1, "{line}");
            assert!(value["type"].is_string(), "{line}");
            value
        })
        .collect()
}

/// The lines' types, a run of `delta`s as one (the stream may join the
/// pieces the server sent).
fn types(lines: &[Value]) -> Vec<&str> {
    let mut types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    types.dedup_by(|a, b| *a == "delta" && *b == "delta");
    types
}

/// The tool message the request carried for call `id`.
fn tool_result_sent(body: &Value, id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id} in {body}"))
        .to_string()
}

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_call(id, name, &[&args.to_string()])
}

#[test]
fn an_answer_is_printed_on_stdout_and_exits_0() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["Hello", ", world"])]);
    let output = run(&mut exec(home.path(), project.path(), &server, &["say hi"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Hello, world\n");
    let sent = contents(&server.requests()[0].body);
    assert_eq!(sent.last().unwrap(), "say hi");
}

/// A prompt naming a custom command is expanded as the full screen does
/// (ADR 0053); anything else that starts with `/` goes as written.
#[test]
fn a_custom_commands_prompt_is_expanded_and_other_slashes_go_as_written() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let commands = project.path().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\nallowed-tools: Bash(git diff:*)\n---\nReview $1 for $2.",
    )
    .unwrap();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["reviewed"]),
        Reply::text(&["odd indeed"]),
        Reply::text(&["helped"]),
    ]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["/review src/lib.rs \"its errors\""],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("/review: `allowed-tools` not honoured"),
        "{}",
        stderr(&output)
    );
    for prompt in ["/etc/hosts is odd", "/help me"] {
        let output = run(&mut exec(home.path(), project.path(), &server, &[prompt]));
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let requests = server.requests();
    let last = |n: usize| contents(&requests[n].body).last().unwrap().clone();
    assert!(
        last(0).ends_with("Review src/lib.rs for its errors."),
        "{}",
        last(0)
    );
    assert!(last(1).ends_with("/etc/hosts is odd"), "{}", last(1));
    assert!(last(2).ends_with("/help me"), "{}", last(2));
}

#[test]
fn json_lines_follow_a_turn_with_a_tool_call_and_count_it() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(project.path().join("notes.txt"), "kiwi\n").unwrap();
    let server = ScriptedServer::start_blocking(vec![
        call("r1", "read_file", serde_json::json!({"path": "notes.txt"})),
        Reply::text(&["It says ", "kiwi."]),
    ]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--json", "read the notes"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = lines(&output);
    assert_eq!(
        types(&lines),
        [
            "turn_start",
            "notice",
            "message",
            "tool_call",
            "tool_result",
            "delta",
            "message",
            "usage",
            "turn_end"
        ]
    );
    assert_eq!(lines[0]["model"], "scripted");
    assert_eq!(lines[0]["approval"], "ask");
    let session = lines[0]["session"].as_str().unwrap();
    assert!(store_of(home.path()).path_of(session).exists());
    // The project overview went out with the prompt (ADR 0048).
    assert_eq!(
        lines[1]["text"],
        "project overview sent with the prompt (5 lines)"
    );
    let sent = contents(&server.requests()[0].body);
    assert!(
        sent[1].starts_with(dashfloat::overview::OVERVIEW_OPENING)
            && sent[1].ends_with("notes.txt\n</project_overview>\n\nread the notes"),
        "{}",
        sent[1]
    );
    assert_eq!(lines[2]["text"], "");
    assert_eq!(lines[2]["end"], "complete");
    assert_eq!(lines[3]["id"], "r1");
    assert_eq!(lines[3]["name"], "read_file");
    assert_eq!(lines[4]["id"], "r1");
    assert_eq!(lines[4]["status"], "ok");
    assert_eq!(lines[4]["detail"], Value::Null);
    assert!(lines[4]["excerpt"].as_str().unwrap().contains("kiwi"));
    let deltas: String = lines
        .iter()
        .filter(|l| l["type"] == "delta")
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "It says kiwi.");
    let [.., message, usage, end] = &lines[..] else {
        panic!("too few lines");
    };
    assert_eq!(message["text"], "It says kiwi.");
    assert_eq!(message["end"], "complete");
    assert!(usage["total_tokens"].is_u64());
    assert_eq!(end["status"], "answered");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["steps"], 2);
    assert_eq!(end["tool_calls"], 1);
    assert!(end["elapsed_ms"].is_u64());
}

/// An image named in the prompt goes with it, and the JSON lines say so
/// in a `notice` (ADR 0055): no new type, so readers of `v: 1` read it.
#[test]
fn an_image_named_in_the_prompt_is_sent_and_said_in_a_notice() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let png: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    std::fs::write(project.path().join("shot.png"), png).unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["A dot."])]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--json", "what is in @shot.png?"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = lines(&output);
    assert!(
        lines.iter().any(|l| l["type"] == "notice"
            && l["severity"] == "notice"
            && l["text"] == format!("image shot.png ({} bytes)", png.len())),
        "{lines:?}"
    );
    let raw = String::from_utf8_lossy(&server.requests()[0].raw_body).into_owned();
    assert!(raw.contains(r#""image_url":{"url":"data:image/png;base64,iVBORw0KGgo"#));
}

#[test]
fn a_person_reads_the_reply_on_stdout_and_the_tool_rows_on_stderr() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(project.path().join("notes.txt"), "kiwi\n").unwrap();
    let server = ScriptedServer::start_blocking(vec![
        call("r1", "read_file", serde_json::json!({"path": "notes.txt"})),
        Reply::text(&["It says kiwi."]),
    ]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["read notes.txt"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "It says kiwi.\n");
    let err = stderr(&output);
    assert!(err.contains("⚙ read_file notes.txt"), "{err}");
    assert!(err.contains("→ ok"), "{err}");
}

/// A result with nothing to show says what that means, as the TUI's row
/// does: on stderr after `ok`, and as the `note` of an `ok` line.
#[test]
fn an_empty_result_says_what_it_means_in_both_forms() {
    for json in [false, true] {
        let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(project.path().join("notes.txt"), "kiwi\n").unwrap();
        let server = ScriptedServer::start_blocking(vec![
            call("g1", "grep", serde_json::json!({"pattern": "mango"})),
            Reply::text(&["No mango."]),
        ]);
        let mut args = vec!["find mango"];
        if json {
            args.insert(0, "--json");
        }
        let output = run(&mut exec(home.path(), project.path(), &server, &args));
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        if json {
            let lines = lines(&output);
            let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
            assert_eq!(result["status"], "ok");
            assert_eq!(result["detail"], Value::Null);
            assert_eq!(result["note"], "no matches in 1 file");
        } else {
            let err = stderr(&output);
            assert!(err.contains("→ ok · no matches in 1 file"), "{err}");
        }
    }
}

#[test]
fn the_prompt_comes_from_stdin_when_absent_or_a_dash() {
    for args in [&[][..], &["-"][..]] {
        let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let server = ScriptedServer::start_blocking(vec![Reply::text(&["ok"])]);
        let mut child = exec(home.path(), project.path(), &server, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"a prompt\nfrom a pipe\n").unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let sent = contents(&server.requests()[0].body);
        assert_eq!(sent.last().unwrap(), "a prompt\nfrom a pipe");
    }
}

#[test]
fn a_failed_stream_exits_1() {
    let (message, notices) = a_failed_turn(Reply::text(&["partial", " reply"]).cut_after(2));
    assert_eq!(message["end"], "failed");
    assert!(notices.iter().any(|n| n["severity"] == "error"));
}

#[test]
fn a_reply_with_nothing_in_it_is_no_answer_and_exits_1() {
    let (message, notices) = a_failed_turn(Reply::text(&["  \n"]));
    assert_eq!(message["end"], "complete");
    assert!(
        notices
            .iter()
            .any(|n| n["text"] == "[model returned nothing]")
    );
}

/// A `--json` run whose model replies `reply`, checked to fail the turn
/// (exit 1, `turn_end` last): its message line, and its notices.
fn a_failed_turn(reply: Reply) -> (Value, Vec<Value>) {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![reply]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--json", "hi"],
    ));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = lines(&output);
    let end = lines.last().unwrap();
    assert_eq!(end["type"], "turn_end");
    assert_eq!(end["status"], "failed");
    assert_eq!(end["exit_code"], 1);
    let message = lines.iter().find(|l| l["type"] == "message").unwrap();
    let notices = lines.iter().filter(|l| l["type"] == "notice").cloned();
    (message.clone(), notices.collect())
}

#[test]
fn reaching_the_step_limit_exits_1_with_every_call_answered() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![call(
        "l1",
        "list_directory",
        serde_json::json!({"path": "."}),
    )]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--json", "look around", "--max-steps", "1"],
    ));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = lines(&output);
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "ok");
    let end = lines.last().unwrap();
    assert_eq!(end["status"], "failed");
    assert_eq!(end["steps"], 1);
    assert_eq!(end["tool_calls"], 1);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn bad_usage_exits_2_without_a_request() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(Vec::new());
    for args in [
        &["--timeout", "0", "hi"][..],
        &["--approval", "sometimes", "hi"][..],
        &["--resume", "--", "hi"][..],
        &["   "][..],
        // stdin is empty.
        &[][..],
    ] {
        let output = run(&mut exec(home.path(), project.path(), &server, args));
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "{args:?}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_config_problem_or_a_session_that_cannot_be_resumed_exits_2() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = home.path().join("bad.toml");
    std::fs::write(&config, "model = [unclosed").unwrap();
    let server = ScriptedServer::start_blocking(Vec::new());
    let config = config.to_str().unwrap();
    for args in [
        &["--config", config, "--json", "hi"][..],
        &["--resume", "20261201-080000-aaaaaa", "--json", "hi"][..],
    ] {
        let output = run(&mut exec(home.path(), project.path(), &server, args));
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "{args:?}");
        assert!(stderr(&output).contains("no prompt was sent"), "{args:?}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn sigint_or_sigterm_during_a_long_command_kills_it_answers_the_call_and_exits_130() {
    for signal in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        interrupt_a_long_command(signal);
    }
}

fn interrupt_a_long_command(signal: nix::sys::signal::Signal) {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![call(
        "x1",
        "execute_command",
        serde_json::json!({"command": "echo $$ > pid; sleep 313"}),
    )]);
    let child = exec(
        home.path(),
        project.path(),
        &server,
        &["--approval", "dangerously-approve-all", "--json", "wait"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let shell = crate::support::wait_for_pid(&project.path().join("pid"), WAIT);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        signal,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    crate::support::assert_all_gone(&[shell], WAIT);
    let lines = lines(&output);
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "cancelled");
    let end = lines.last().unwrap();
    assert_eq!(end["status"], "interrupted");
    assert_eq!(end["exit_code"], 130);
    // The session holds the call answered, in the conversation and the log.
    let store = store_of(home.path());
    let id = lines[0]["session"].as_str().unwrap();
    let (saved, _) = store.open(id, false).unwrap();
    let answer = saved
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap();
    assert!(answer.contains(r#""cancelled":true"#), "{answer}");
    assert!(saved.log.iter().any(|item| matches!(
        item,
        LogItem::Tool {
            outcome: Some((ToolStatus::Cancelled, _)),
            ..
        }
    )));
}

#[test]
fn the_whole_run_times_out_with_124() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["slow", "er"]).hang_after(2)]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--timeout", "3", "--json", "hi"],
    ));
    assert_eq!(output.status.code(), Some(124), "{}", stderr(&output));
    let lines = lines(&output);
    let message = lines.iter().find(|l| l["type"] == "message").unwrap();
    assert_eq!(message["end"], "interrupted");
    let end = lines.last().unwrap();
    assert_eq!(end["status"], "timed_out");
    assert_eq!(end["exit_code"], 124);
}

#[test]
fn under_ask_a_call_that_needs_approval_is_answered_as_not_run() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_calls(&[
            (
                "w1",
                "write_file",
                r#"{"path":"new.txt","content":"hello\n"}"#,
            ),
            ("x1", "execute_command", r#"{"command":"touch made"}"#),
            ("x2", "execute_command", r#"{"command":"ls"}"#),
        ]),
        Reply::text(&["I could not write it."]),
    ]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--json", "write new.txt"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!project.path().join("new.txt").exists());
    assert!(!project.path().join("made").exists());
    let lines = lines(&output);
    let statuses = statuses(&lines);
    assert_eq!(
        statuses,
        [("w1", "rejected"), ("x1", "rejected"), ("x2", "ok")]
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "tool_allowed" && l["id"] == "x2")
    );
    let second = &server.requests()[1].body;
    let write = tool_result_sent(second, "w1");
    assert!(write.contains("dashfloat runs headless"), "{write}");
    assert!(write.contains("--approval auto-edit"), "{write}");
    // A command is allowed by auto where the kernel has its sandbox.
    let allows = match dashfloat::tools::sandbox::support().workspace_write() {
        Ok(()) => "--approval auto",
        Err(_) => "--approval dangerously-approve-all",
    };
    let command = tool_result_sent(second, "x1");
    assert!(command.contains(allows), "{command}");
}

#[test]
fn auto_edit_writes_the_file() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![
        call(
            "w1",
            "write_file",
            serde_json::json!({"path": "new.txt", "content": "hello\n"}),
        ),
        Reply::text(&["Written."]),
    ]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--approval", "auto-edit", "write new.txt"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(project.path().join("new.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn continue_then_exec_adds_the_turn_to_the_session() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = store_of(home.path());
    let here = project
        .path()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let id = "20261201-080000-aaaaaa";
    let now = dashfloat::session::now_secs();
    write_session(&store, id, &here, now - 60, ("remember kiwi", "kiwi noted"));
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["you said kiwi"])]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--continue", "--json", "which fruit?"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&output)[0]["session"], id);
    let sent = contents(&server.requests()[0].body);
    assert_eq!(sent[1..], ["remember kiwi", "kiwi noted", "which fruit?"]);
    assert_eq!(store.list(None).sessions.len(), 1);
    let (saved, _) = store.open(id, false).unwrap();
    let prompts: Vec<&str> = saved
        .log
        .iter()
        .filter_map(|item| match item {
            LogItem::User(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, ["remember kiwi", "which fruit?"]);
    assert_eq!(
        saved.messages.last().unwrap().content.as_deref(),
        Some("you said kiwi")
    );
}

#[test]
fn no_save_leaves_no_session_and_reports_none() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["ok"])]);
    let output = run(&mut exec(
        home.path(),
        project.path(),
        &server,
        &["--no-save", "--json", "hi"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&output)[0]["session"], Value::Null);
    assert!(store_of(home.path()).list(None).sessions.is_empty());
}

#[test]
fn dashfloat_flags_work_before_and_after_exec() {
    let expect = |cli: Cli| {
        assert_eq!(cli.approval, ApprovalFlag::AutoEdit);
        assert_eq!(cli.max_steps, Some(3));
        assert_eq!(cli.model.as_deref(), Some("m"));
        assert_eq!(cli.temperature, Some(0.5));
        assert!(cli.continue_latest);
        let Some(CliCommand::Exec(args)) = cli.command else {
            panic!("not exec");
        };
        assert!(args.json);
        assert_eq!(args.timeout, Some(9));
        assert_eq!(args.prompt.as_deref(), Some("hi"));
    };
    let flags = [
        "--approval",
        "auto-edit",
        "--max-steps",
        "3",
        "--model",
        "m",
        "--temperature",
        "0.5",
        "--continue",
    ];
    let own = ["--json", "--timeout", "9", "hi"];
    let before = ["dashfloat"]
        .iter()
        .chain(&flags)
        .chain(&["exec"])
        .chain(&own);
    expect(Cli::parse_from(before));
    let after = ["dashfloat", "exec"].iter().chain(&flags).chain(&own);
    expect(Cli::parse_from(after));
    let resumed = Cli::parse_from(["dashfloat", "exec", "--resume", "ID", "hi"]);
    assert_eq!(
        resumed.open_session(),
        dashfloat::session::OpenSession::Resume("ID".into())
    );
}

/// `exec --json` is the same on every wire (ADR 0052): the same lines for
/// the same turn, and the session records the wire it spoke.
#[test]
fn json_lines_are_the_same_on_every_wire() {
    use dashfloat::llm::wires::Wire;
    let mut seen = Vec::new();
    for wire in [Wire::Chat, Wire::Responses, Wire::Anthropic] {
        let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(project.path().join("notes.txt"), "kiwi\n").unwrap();
        let server = ScriptedServer::speaking_blocking(
            wire,
            vec![
                call("r1", "read_file", serde_json::json!({"path": "notes.txt"})),
                Reply::text(&["It says ", "kiwi."]),
            ],
        );
        let output = run(exec(
            home.path(),
            project.path(),
            &server,
            &["--wire", wire.name(), "--json", "read the notes"],
        )
        .env_remove("ANTHROPIC_API_KEY"));
        assert_eq!(
            output.status.code(),
            Some(0),
            "{wire:?}: {}",
            stderr(&output)
        );
        let lines = lines(&output);
        assert_eq!(statuses(&lines), [("r1", "ok")], "{wire:?}");
        let message = &lines[lines.len() - 3];
        assert_eq!(message["text"], "It says kiwi.", "{wire:?}");
        let session = lines[0]["session"].as_str().unwrap();
        let saved: Value =
            serde_json::from_slice(&std::fs::read(store_of(home.path()).path_of(session)).unwrap())
                .unwrap();
        assert_eq!(saved["wire"], wire.name());
        seen.push(types(&lines).join(" "));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
}
