//! execute_command with real processes: exit codes, signals, the output
//! cap, timeouts, cancellation, no survivors in the process table (in the
//! command's group or escaped from it), no zombies, a process outside the
//! call holding the pipe, shell semantics, secrets kept out.

use std::time::{Duration, Instant};

use crate::support::calls::validate;
use dashfloat::bounds::EXEC_OUTPUT_MAX_BYTES;
use dashfloat::tools::{ToolContext, child_env, execute};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::json_of;
use crate::support::{self, until_left};

fn ctx(dir: &tempfile::TempDir, timeout: Duration) -> ToolContext {
    let mut ctx = ToolContext::new(dir.path()).unwrap();
    ctx.exec_timeout = timeout;
    ctx
}

async fn sh(dir: &tempfile::TempDir, command: &str, timeout: Duration) -> Value {
    let call = validate(
        "execute_command",
        &json!({ "command": command }).to_string(),
    )
    .unwrap();
    json_of(execute(&call, &ctx(dir, timeout), CancellationToken::new()).await)
}

/// Waits for SIGKILL to take effect (it is asynchronous), with the
/// suite's generous deadline.
fn gone(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < support::WAIT {
        if !support::process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn pids_in(output: &str) -> Vec<i32> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("PID "))
        .map(|p| p.trim().parse().unwrap())
        .collect()
}

#[tokio::test]
async fn a_successful_command_reports_exit_code_zero_and_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(&dir, "echo hello", Duration::from_secs(10)).await;
    assert_eq!(
        v,
        json!({"ok": true, "exit_code": 0, "output": "hello\n", "output_bytes": 6, "truncated": false})
    );
}

/// The model reads the output as a terminal would show it: no colours or
/// line erases, a line rewritten with `\r` in its last form; the count is
/// of the bytes printed.
#[tokio::test]
async fn colours_and_progress_redraws_reach_the_model_as_plain_lines() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(
        &dir,
        r"printf '\033[1;32mok\033[0m\n 10%%\r\033[2K100%%\r\ndone\033]0;title\007\ntwice\r\r\n'",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(v["output"], "ok\n100%\ndone\ntwice\n");
    assert_eq!(v["output_bytes"], 52);
}

#[tokio::test]
async fn a_non_zero_exit_code_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(&dir, "echo oops >&2; exit 3", Duration::from_secs(10)).await;
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["output"], "oops\n");
}

#[tokio::test]
async fn a_death_by_signal_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(&dir, "kill -TERM $$", Duration::from_secs(10)).await;
    assert_eq!(v["exit_code"], Value::Null);
    assert_eq!(v["signal"], "SIGTERM");
}

#[tokio::test]
async fn stdout_and_stderr_are_interleaved_in_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(
        &dir,
        "echo 1; echo 2 >&2; echo 3; echo 4 >&2",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(v["output"], "1\n2\n3\n4\n");
}

#[tokio::test]
async fn shell_semantics_hold_for_cd_and_chains() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let v = sh(
        &dir,
        "cd sub && pwd; false; echo after | tr a-z A-Z",
        Duration::from_secs(10),
    )
    .await;
    let real = dir.path().canonicalize().unwrap();
    assert_eq!(v["output"], format!("{}/sub\nAFTER\n", real.display()));
}

#[tokio::test]
async fn the_cwd_argument_is_used_and_confined() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let call = validate("execute_command", r#"{"command":"pwd","cwd":"sub"}"#).unwrap();
    let v = json_of(
        execute(
            &call,
            &ctx(&dir, Duration::from_secs(10)),
            CancellationToken::new(),
        )
        .await,
    );
    assert!(v["output"].as_str().unwrap().ends_with("/sub\n"));
    let call = validate(
        "execute_command",
        r#"{"command":"touch escaped","cwd":".."}"#,
    )
    .unwrap();
    let v = json_of(
        execute(
            &call,
            &ctx(&dir, Duration::from_secs(10)),
            CancellationToken::new(),
        )
        .await,
    );
    assert_eq!(v["code"], "path_denied");
}

#[tokio::test]
async fn stdin_is_empty_so_a_reader_does_not_wait() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(&dir, "cat; echo done", Duration::from_secs(10)).await;
    assert_eq!(v["output"], "done\n");
}

#[tokio::test]
async fn the_output_cap_at_below_and_above_with_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    for (n, truncated) in [
        (EXEC_OUTPUT_MAX_BYTES - 1, false),
        (EXEC_OUTPUT_MAX_BYTES, false),
        (EXEC_OUTPUT_MAX_BYTES + 1, true),
    ] {
        let v = sh(
            &dir,
            &format!("head -c {n} /dev/zero | tr '\\0' x"),
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(v["truncated"], truncated, "{n}");
        assert_eq!(v["output_bytes"], n, "{n}");
        let out = v["output"].as_str().unwrap();
        if truncated {
            assert!(out.ends_with(&format!(
                "[output truncated: showed the first {EXEC_OUTPUT_MAX_BYTES} of {n} bytes]"
            )));
        } else {
            assert_eq!(out.len(), n);
        }
    }
}

#[tokio::test]
async fn output_past_the_cap_is_drained_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    // 4 MiB: the command would block on a full pipe if reading stopped.
    let v = sh(
        &dir,
        "head -c 4194304 /dev/zero | tr '\\0' y; echo end",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["output_bytes"], 4 * 1024 * 1024 + 4);
}

#[test]
fn secret_variables_are_filtered_from_an_environment() {
    let base = vec![
        ("OPENAI_API_KEY".into(), "sk-1".into()),
        ("MY_PROVIDER_KEY".into(), "k".into()),
        ("SOME_SERVICE_TOKEN".into(), "t".into()),
        ("PATH".into(), "/usr/bin:/bin".into()),
    ];
    let kept = child_env(base, &["MY_PROVIDER_KEY".to_owned()], &[]);
    assert_eq!(kept, vec![("PATH".into(), "/usr/bin:/bin".into())]);
}

#[test]
#[allow(unsafe_code)]
fn the_provider_key_and_the_configured_key_variable_never_reach_the_child() {
    // SAFETY: nextest runs each test in its own process, and this one sets
    // the variables before it starts the runtime or any other thread.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-must-not-leak");
        std::env::set_var("CUSTOM_LLM_CREDENTIAL", "must-not-leak-either");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(&dir, Duration::from_secs(10));
    ctx.secret_vars = vec!["CUSTOM_LLM_CREDENTIAL".to_owned()];
    let call = validate(
        "execute_command",
        r#"{"command":"env; echo HOME=${HOME-unset}"}"#,
    )
    .unwrap();
    let v = json_of(rt.block_on(execute(&call, &ctx, CancellationToken::new())));
    let out = v["output"].as_str().unwrap();
    assert!(!out.contains("must-not-leak"), "{out}");
    assert!(!out.contains("OPENAI_API_KEY"));
    // Ordinary variables still pass.
    assert!(!out.contains("HOME=unset"));
}

#[tokio::test]
async fn a_timeout_returns_the_partial_output_and_kills_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    // The loop never ends by itself: the result coming back at all, coded
    // `timeout`, is the proof it was killed.
    let v = sh(
        &dir,
        "echo started; echo PID $$; while :; do :; done",
        Duration::from_millis(500),
    )
    .await;
    assert_eq!(v["ok"], false);
    assert_eq!(v["code"], "timeout");
    assert_eq!(v["error"], "timed out after 0.5s");
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("started\n"));
    for pid in pids_in(out) {
        assert!(gone(pid), "busy loop {pid} survived the timeout");
    }
}

/// A build asks for more than the default: it runs past the default and
/// ends by itself; a limit past the maximum is refused before anything
/// runs.
#[tokio::test]
async fn a_call_may_ask_for_its_own_time_limit_up_to_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(&dir, Duration::from_millis(200));
    let run = |secs: u64| {
        validate(
            "execute_command",
            &json!({ "command": "sleep 0.5; echo done > out", "timeout_seconds": secs })
                .to_string(),
        )
        .unwrap()
    };
    let v = json_of(execute(&run(20), &ctx, CancellationToken::new()).await);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["exit_code"], 0);
    std::fs::remove_file(dir.path().join("out")).unwrap();
    ctx.exec_timeout_max = Duration::from_secs(10);
    let v = json_of(execute(&run(20), &ctx, CancellationToken::new()).await);
    assert_eq!(v["code"], "invalid_argument", "{v}");
    assert!(!dir.path().join("out").exists(), "nothing ran");
}

#[tokio::test]
async fn background_children_and_busy_loops_are_gone_after_completion() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(
        &dir,
        "sleep 1000 & echo PID $!; (while :; do :; done) & echo PID $!; echo done",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(v["exit_code"], 0);
    let pids = pids_in(v["output"].as_str().unwrap());
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(gone(pid), "{pid} survived the command");
    }
}

#[tokio::test]
async fn everything_is_gone_after_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, Duration::from_secs(60));
    let cancel = CancellationToken::new();
    let call = validate(
        "execute_command",
        r#"{"command":"sleep 1000 & echo PID $!; (while :; do :; done) & echo PID $!; echo PID $$; echo $$ > pid; wait"}"#,
    )
    .unwrap();
    let trigger = cancel.clone();
    // Cancels once the shell has printed every pid and started waiting.
    let pid_file = dir.path().join("pid");
    tokio::spawn(async move {
        support::pid_written(&pid_file, support::WAIT).await;
        trigger.cancel();
    });
    let v = json_of(execute(&call, &ctx, cancel).await);
    // Cancelled, not left to the 60 s time limit (which would say so).
    assert_eq!(v["cancelled"], true);
    assert_eq!(v["code"], "cancelled");
    let pids = pids_in(v["output"].as_str().unwrap());
    assert_eq!(pids.len(), 3);
    for pid in pids {
        assert!(gone(pid), "{pid} survived the cancellation");
    }
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pid");
    let ctx = ctx(&dir, Duration::from_secs(60));
    let call = validate(
        "execute_command",
        r#"{"command":"sleep 1000 & echo $! > pid; wait"}"#,
    )
    .unwrap();
    let run = execute(&call, &ctx, CancellationToken::new());
    // The agent aborting a tool task drops its future mid-run: here, once
    // the command has started its child.
    let pid = tokio::select! {
        result = run => panic!("the command ended by itself: {result:?}"),
        pid = support::pid_written(&marker, support::WAIT) => pid,
    };
    assert!(gone(pid));
}

/// Zombie children of this process: what a subreaper failed to reap.
fn zombie_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let mut fields = stat.rsplit(')').next().unwrap().split_whitespace();
                fields.next() == Some("Z") && fields.next() == Some(me.as_str())
            })
        })
        .collect()
}

/// Runs `command`, then checks that every `PID n` it printed is gone.
async fn leaves_nothing(command: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(&dir, command, Duration::from_secs(10)).await;
    let pids = pids_in(v["output"].as_str().unwrap());
    assert!(!pids.is_empty(), "{v}");
    for pid in pids {
        assert!(gone(pid), "{pid} from {command:?} outlived its call");
    }
    v
}

#[tokio::test]
async fn a_child_that_starts_its_own_session_dies_with_the_call() {
    let v = leaves_nothing(&format!(
        "setsid sleep 313 & {}; echo PID $!; echo done",
        until_left("sid")
    ))
    .await;
    assert_eq!(v["exit_code"], 0);
    assert!(v.get("output_incomplete").is_none(), "{v}");
}

#[tokio::test]
async fn a_child_that_starts_its_own_group_dies_with_the_call() {
    leaves_nothing(&format!(
        "perl -e 'setpgrp; sleep 313' & {}; echo PID $!",
        until_left("pg")
    ))
    .await;
}

#[tokio::test]
async fn an_escapee_whose_parent_already_exited_dies_with_the_call() {
    // The middle shell exits at once, so the sleeper is an orphan before
    // the command ends; without an environment it carries no trace of us.
    leaves_nothing(&format!(
        "sh -c 'env -i setsid sleep 313 & {}; echo PID $!'; echo done",
        until_left("sid")
    ))
    .await;
}

#[tokio::test]
async fn escapees_die_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let v = sh(
        &dir,
        &format!(
            "setsid sleep 313 & {}; echo PID $!; perl -e 'setpgrp; sleep 313' & {}; echo PID $!; sleep 313",
            until_left("sid"),
            until_left("pg")
        ),
        Duration::from_millis(500),
    )
    .await;
    assert_eq!(v["code"], "timeout");
    let pids = pids_in(v["output"].as_str().unwrap());
    assert_eq!(pids.len(), 2, "{v}");
    for pid in pids {
        assert!(gone(pid), "{pid} outlived the timeout");
    }
}

#[tokio::test]
async fn escapees_die_when_the_call_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, Duration::from_secs(60));
    let call = validate(
        "execute_command",
        &json!({ "command": format!("setsid sleep 313 & {}; echo $! > pid; wait", until_left("sid")) })
            .to_string(),
    )
    .unwrap();
    let mut run = Box::pin(execute(&call, &ctx, CancellationToken::new()));
    let pid_file = dir.path().join("pid");
    // Poll the call until the escapee exists, then drop it mid-run, as the
    // agent does when it aborts a tool task.
    let deadline = Instant::now() + support::WAIT;
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        let _ = tokio::time::timeout(Duration::from_millis(20), &mut run).await;
    };
    drop(run);
    assert!(gone(pid), "{pid} outlived the dropped call");
}

#[tokio::test]
async fn what_a_call_leaves_behind_is_reaped_not_left_as_zombies() {
    // Orphans come to this process (a subreaper): one that exits by itself
    // and one that is killed must both be waited for.
    let v = leaves_nothing(&format!(
        "setsid sh -c 'exit 0' & setsid sleep 313 & {}; echo PID $!; echo done",
        until_left("sid")
    ))
    .await;
    assert_eq!(v["exit_code"], 0);
    until_none("zombies left", zombie_children);
}

/// Waits, with the suite's generous deadline, until `scan` finds no
/// process; fails naming `what` and the pids still found.
fn until_none(what: &str, scan: impl Fn() -> Vec<i32>) {
    let deadline = Instant::now() + support::WAIT;
    loop {
        let found = scan();
        if found.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {found:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live processes running exactly `argv` (an argument unique to one test
/// tells its processes apart from every other test's).
fn running(argv: &[&str]) -> Vec<i32> {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted)
                && support::process_alive(*pid)
        })
        .collect()
}

#[tokio::test]
async fn a_fork_loop_dies_with_everything_it_forked() {
    // Each child leaves the session at once; the loop forks until the
    // timeout, and keeps forking while the sweep runs.
    let dir = tempfile::tempdir().unwrap();
    let v = sh(
        &dir,
        "while :; do setsid sleep 313.17 & done",
        Duration::from_millis(500),
    )
    .await;
    assert_eq!(v["code"], "timeout");
    until_none("survivors", || running(&["sleep", "313.17"]));
}

#[tokio::test]
async fn reaping_orphans_never_takes_a_shell_from_under_its_call() {
    // Orphans are reaped by pid, never with wait(-1), so tokio still gets
    // every shell's own status, call after call.
    let dir = tempfile::tempdir().unwrap();
    for code in 1..=4 {
        let v = sh(
            &dir,
            &format!(
                "setsid sh -c 'exit 0' & setsid sleep 313 & {}; echo PID $!; exit {code}",
                until_left("sid")
            ),
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(v["exit_code"], code, "{v}");
        for pid in pids_in(v["output"].as_str().unwrap()) {
            assert!(gone(pid), "{pid} outlived call {code}");
        }
    }
}

#[tokio::test]
async fn a_process_outside_the_call_holding_its_output_cannot_hang_it() {
    // A second, concurrent call opens the first one's output pipe through
    // /proc and holds it: it is not the first call's to kill, so the first
    // stops reading after the grace. Each call keeps its own exit status.
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, Duration::from_secs(60));
    let first = validate(
        "execute_command",
        &json!({ "command": "echo $$ > pid; while [ ! -e held ]; do sleep 0.01; done; echo parent done; exit 3" })
            .to_string(),
    )
    .unwrap();
    let holder = validate(
        "execute_command",
        &json!({ "command": "while [ ! -s pid ]; do sleep 0.01; done; exec 3>/proc/$(cat pid)/fd/1; touch held; echo PID $$; exec sleep 313" })
            .to_string(),
    )
    .unwrap();
    let stop_holder = CancellationToken::new();
    let holding = async { json_of(execute(&holder, &ctx, stop_holder.clone()).await) };
    let first_run = async {
        let v = json_of(execute(&first, &ctx, CancellationToken::new()).await);
        stop_holder.cancel();
        v
    };
    let (v, held) = tokio::join!(first_run, holding);
    assert_eq!(v["exit_code"], 3);
    assert!(v["output"].as_str().unwrap().contains("parent done"));
    assert!(
        v["output_incomplete"]
            .as_str()
            .unwrap()
            .contains("kept its output open"),
        "{v}"
    );
    assert_eq!(held["code"], "cancelled");
    for pid in pids_in(held["output"].as_str().unwrap()) {
        assert!(gone(pid), "the holder {pid} outlived its own call");
    }
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let call = validate("execute_command", r#"{"command":"touch ran"}"#).unwrap();
    let v = json_of(execute(&call, &ctx(&dir, Duration::from_secs(10)), cancel).await);
    assert_eq!(v["cancelled"], true);
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn the_command_runs_in_its_own_session() {
    let dir = tempfile::tempdir().unwrap();
    // Field 6 of /proc/PID/stat is the session id; field 5 the group.
    let v = sh(
        &dir,
        "echo $$; cut -d' ' -f5,6 /proc/$$/stat",
        Duration::from_secs(10),
    )
    .await;
    let out = v["output"].as_str().unwrap();
    let mut lines = out.lines();
    let pid = lines.next().unwrap();
    assert_eq!(
        lines.next().unwrap(),
        format!("{pid} {pid}"),
        "the shell leads its own group and session"
    );
}
