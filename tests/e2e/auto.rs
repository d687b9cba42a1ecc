//! End to end, `dashfloat exec --approval auto` (ADR 0044): commands run
//! unasked in the workspace-write sandbox — a write inside the project
//! lands, one beside it fails and the model reads how to ask for more —
//! and a way out of the sandbox, which only a person may allow, is
//! answered as not run, naming the flag that would allow it. On a kernel
//! without Landlock (a seccomp filter answering `ENOSYS`, as a kernel
//! built without it does), `--approval auto` stops before the prompt
//! with exit status 2, saying what is missing.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::no_landlock::without_landlock;
use crate::support::server::{Reply, ScriptedServer};

/// `dashfloat exec --approval auto --json PROMPT` in `project`.
fn exec_auto(home: &Path, project: &Path, server: &ScriptedServer) -> Command {
    let args = ["--approval", "auto", "--json", "make the files"];
    crate::exec::exec(home, project, server, &args)
}

fn call(id: &str, args: Value) -> Reply {
    Reply::tool_call(id, "execute_command", &[&args.to_string()])
}

/// The result the last request carried for call `id`, parsed.
fn result_sent(server: &ScriptedServer, id: &str) -> Value {
    let requests = server.requests();
    let messages = requests.last().unwrap().body["messages"].clone();
    let message = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap()
        .clone();
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

#[test]
fn exec_under_auto_runs_commands_in_the_sandbox_and_answers_a_way_out_as_not_run() {
    let base = tempfile::tempdir().unwrap();
    let (home, project) = (base.path().join("home"), base.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let server = ScriptedServer::start_blocking(vec![
        call("in", json!({"command": "echo made > made.txt"})),
        call("out", json!({"command": "echo out > ../beside.txt"})),
        call(
            "off",
            json!({"command": "echo out > ../beside.txt", "sandbox": "off", "reason": "it writes beside the project"}),
        ),
        Reply::text(&["Done."]),
    ]);
    let output = exec_auto(&home, &project, &server).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "turn_start");
    assert_eq!(lines[0]["approval"], "auto");
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(!base.path().join("beside.txt").exists());
    let statuses = crate::exec::statuses(&lines);
    assert_eq!(
        statuses,
        [("in", "ok"), ("out", "error"), ("off", "rejected")],
        "{stdout}"
    );
    let refused = result_sent(&server, "out");
    assert!(
        refused["sandbox"]
            .as_str()
            .unwrap()
            .contains("\"sandbox\": \"off\"")
    );
    let off = result_sent(&server, "off");
    let error = off["error"].as_str().unwrap();
    assert!(
        error.contains("--approval dangerously-approve-all"),
        "{off:#}"
    );
}

#[test]
#[allow(unsafe_code)]
fn exec_refuses_auto_where_the_kernel_has_no_landlock() {
    let base = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["never"])]);
    let program = without_landlock();
    let mut command = exec_auto(base.path(), base.path(), &server);
    // SAFETY: between fork and exec the child only installs the filter
    // built above (prctl and seccomp system calls; no allocation).
    unsafe {
        command
            .pre_exec(move || seccompiler::apply_filter(&program).map_err(std::io::Error::other));
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the auto policy is refused"), "{stderr}");
    assert!(stderr.contains("no Landlock"), "{stderr}");
    assert!(stderr.contains("no prompt was sent"), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/chat/completions")),
        "a prompt was sent"
    );
}
