//! The real binary with MCP servers from its config file: `exec --json`
//! calls an MCP tool the config approves; a server gets no credentials
//! but those its table passes; its stderr goes to the `--log` file, never
//! to the terminal; under `ask` an unapproved MCP call is not run
//! headless; `--no-mcp` turns the servers off; `/mcp` in the full screen.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::dashfloat_bin;
use crate::support::pty::PtySession;
use crate::support::server::{Reply, ScriptedServer};
use crate::{lit, sdk_table};

/// `home/dashfloat/config.toml` holding `config`.
fn write_config(home: &Path, config: &str) {
    std::fs::create_dir_all(home.join("dashfloat")).unwrap();
    std::fs::write(home.join("dashfloat/config.toml"), config).unwrap();
}

/// `dashfloat exec --json` in `project` against `server`.
fn exec(home: &Path, project: &Path, server: &ScriptedServer, args: &[&str]) -> Output {
    Command::new(dashfloat_bin())
        .arg("exec")
        .args(["--base-url", &server.base_url(), "--model", "scripted"])
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("DASHFLOAT_CONTEXT_WINDOW", "128000")
        .env("GITHUB_TOKEN", "the-persons-token")
        .env_remove("DASHFLOAT_APPROVAL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_call(id, name, &[&args.to_string()])
}

fn tool_result_sent(body: &Value, id: &str) -> Value {
    let text = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id} in {body}"));
    serde_json::from_str(text).unwrap()
}

#[test]
fn exec_json_calls_an_approved_mcp_tool_without_passing_credentials() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = home.path().join("server.jsonl");
    let approved = "default_tools_approval_mode = \"approve\"";
    let config = sdk_table("py", &log, approved)
        + &sdk_table(
            "passed",
            &log,
            &format!("{approved}\nenv_vars = [\"GITHUB_TOKEN\"]"),
        );
    write_config(home.path(), &config);
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_calls(&[
            ("m1", "mcp__py__env", r#"{"name": "GITHUB_TOKEN"}"#),
            ("m2", "mcp__passed__env", r#"{"name": "GITHUB_TOKEN"}"#),
        ]),
        Reply::text(&["Done."]),
    ]);
    let log_file = home.path().join("dashfloat.log");
    let output = exec(
        home.path(),
        project.path(),
        &server,
        &[
            "--json",
            "--log",
            log_file.to_str().unwrap(),
            "read the token",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines = lines(&output);
    let results: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["id"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect();
    assert_eq!(results, [("m1", "ok"), ("m2", "ok")], "{lines:?}");
    let second = &server.requests()[1].body;
    assert_eq!(
        tool_result_sent(second, "m1"),
        json!({"ok": true, "output": "(unset)"}),
        "a credential is not passed unless the table says so"
    );
    assert_eq!(
        tool_result_sent(second, "m2"),
        json!({"ok": true, "output": "the-persons-token"}),
    );
    assert!(
        !stderr.contains("sdk_server"),
        "a server's stderr stays off the terminal: {stderr}"
    );
    let logged = std::fs::read_to_string(&log_file).unwrap();
    assert!(
        logged.contains("mcp py stderr: sdk_server: started on stdio"),
        "{logged}"
    );
    assert!(logged.contains("mcp py: ready"), "{logged}");
    // Every server dies with dashfloat, as commands do.
    let pids: Vec<u64> = crate::events(&log)
        .iter()
        .filter(|e| e["event"] == "started")
        .filter_map(|e| e["pid"].as_u64())
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        let gone = (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            !Path::new(&format!("/proc/{pid}")).exists()
        });
        assert!(gone, "server {pid} outlived dashfloat");
    }
}

#[test]
fn exec_under_ask_does_not_run_an_mcp_call_and_says_how_to_allow_it() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = home.path().join("server.jsonl");
    write_config(home.path(), &sdk_table("py", &log, ""));
    let server = ScriptedServer::start_blocking(vec![
        call("m1", "mcp__py__echo", json!({"text": "x"})),
        Reply::text(&["Not run."]),
    ]);
    let output = exec(home.path(), project.path(), &server, &["--json", "echo"]);
    assert_eq!(output.status.code(), Some(0));
    let result = tool_result_sent(&server.requests()[1].body, "m1");
    assert_eq!(result["ok"], false);
    assert!(
        result
            .to_string()
            .contains("--approval dangerously-approve-all"),
        "{result}"
    );
    let calls = crate::events(&log)
        .iter()
        .filter(|e| e["event"] == "call")
        .count();
    assert_eq!(calls, 0, "nothing ran");
}

#[test]
fn no_mcp_starts_no_server_and_offers_no_mcp_tool() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = home.path().join("server.jsonl");
    write_config(home.path(), &sdk_table("py", &log, ""));
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["Hi."])]);
    let output = exec(home.path(), project.path(), &server, &["--no-mcp", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(!tools.contains("mcp__"), "{tools}");
    assert!(crate::events(&log).is_empty(), "the server never started");
}

#[test]
fn slash_mcp_in_the_full_screen_shows_the_servers() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = home.path().join("server.jsonl");
    let broken = format!(
        "[mcp_servers.broken]\ncommand = {}\n",
        lit("/nonexistent/mcp-server")
    );
    write_config(home.path(), &(sdk_table("py", &log, "") + &broken));
    let server = ScriptedServer::start_blocking(vec![]);
    let home_str = home.path().to_str().unwrap();
    let mut pty = PtySession::spawn(
        &dashfloat_bin(),
        &["--base-url", &server.base_url(), "--no-save"],
        &[
            ("HOME", home_str),
            ("XDG_CONFIG_HOME", home_str),
            ("NO_COLOR", ""),
            ("DASHFLOAT_CONTEXT_WINDOW", "128000"),
        ],
        project.path(),
        100,
        40,
    );
    pty.wait_for("idle", Duration::from_secs(20)).unwrap();
    pty.wait_for("MCP server broken failed", Duration::from_secs(30))
        .unwrap();
    // Asked again until the Python server has finished starting.
    let ready = (0..20).any(|_| {
        pty.send(b"/mcp\r");
        pty.wait_for("py: ready", Duration::from_secs(2)).is_ok()
    });
    assert!(ready, "{}", pty.screen_text());
    let screen = pty.screen_text();
    assert!(
        screen.contains("broken: failed: cannot start /nonexistent/mcp-server"),
        "{screen}"
    );
    assert!(screen.contains("    echo "), "{screen}");
    assert!(
        screen.contains("read_only_echo [says it only reads]"),
        "{screen}"
    );
    pty.send(b"/quit\r");
    pty.wait_exit(Duration::from_secs(10));
}
