//! The bytes the model reads: every tool's result and every failure class,
//! exactly as the agent pushes them into the conversation (the `content`
//! of each tool message in the next request), with the outcome row the
//! person sees for each, and the tool catalogue as the request carries it.
//! These snapshots pin the model-visible JSON, key order included; a
//! refactor of how results travel must leave them untouched. Last, how
//! each tool cuts a result too big for the context window (ADR 0021).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, Phase, UiCommand};
use serde_json::{Value, json};

use crate::support::agent::{AgentHarness, EVENT_WAIT, setup, start_with};
use crate::support::server::{Reply, ScriptedServer, finish_chunk, role_chunk, tool_call_chunk};
use crate::support::{self, pid_written};

/// An agent with tools rooted at `root` under `approval`, commands timing
/// out after `exec_timeout`.
fn agent(
    server: &ScriptedServer,
    root: &Path,
    approval: ApprovalPolicy,
    exec_timeout: Duration,
) -> AgentHarness {
    let mut s = setup(&server.base_url(), root, approval);
    s.tools.exec_timeout = exec_timeout;
    start_with(s)
}

/// The tool messages of the request at `index`, verbatim (`id content`),
/// then the outcome row the UI was sent for each (`id status excerpt`), in
/// call order (calls that run side by side finish in any order).
fn transcript(server: &ScriptedServer, index: usize, events: &[AgentEvent]) -> String {
    let requests = server.requests();
    let answers: Vec<(&str, &str)> = requests[index].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    let mut out = String::from("== what the model reads ==\n");
    for (id, content) in &answers {
        out.push_str(&format!("{id} {content}\n"));
    }
    out.push_str("== what the person sees ==\n");
    for (call, _) in &answers {
        for e in events {
            if let AgentEvent::ToolResult {
                id,
                status,
                excerpt,
            } = e
                && id == call
            {
                out.push_str(&format!("{id} {status:?} {excerpt:?}\n"));
            }
        }
    }
    out
}

#[tokio::test]
async fn every_tool_result_as_the_model_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "hi\nthere\n").unwrap();
    std::fs::write(root.join("five.txt"), "1\n2\n3\n4\n5\n").unwrap();
    let tree = root.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("file.txt"), "12345").unwrap();
    symlink("file.txt", tree.join("link")).unwrap();
    nix::unistd::mkfifo(&tree.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::write(tree.join(OsStr::from_bytes(b"bad\xffname")), "").unwrap();
    std::fs::write(root.join("empty.txt"), "").unwrap();
    std::fs::create_dir(root.join("hollow")).unwrap();
    let list = r#"{"path":"tree"}"#;
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("r1", "read_file", r#"{"path":"notes.txt"}"#),
            ("r2", "read_file", r#"{"path":"five.txt","offset":2,"limit":2}"#),
            ("r3", "read_file", r#"{"path":"notes.txt","offset":9}"#),
            ("r4", "read_file", r#"{"path":"empty.txt"}"#),
            ("r5", "read_file", r#"{"path":"notes.txt","offset":3}"#),
            ("w1", "write_file", r#"{"path":"new/a.txt","content":"one\ntwo\n"}"#),
            ("w2", "write_file", r#"{"path":"notes.txt","content":"bye"}"#),
            ("e1", "edit_file", r#"{"path":"new/a.txt","search_block":"two","replace_block":"2"}"#),
            ("x1", "execute_command", r#"{"command":"echo out; echo err >&2"}"#),
            ("x2", "execute_command", r#"{"command":"exit 3","cwd":"tree"}"#),
            ("x3", "execute_command", r#"{"command":"kill -TERM $$"}"#),
            ("x5", "execute_command", r#"{"command":"true"}"#),
            (
                "x4",
                "execute_command",
                r#"{"command":"setsid sh -c 'echo $$ > held.pid; exec sleep 30' & while [ ! -s held.pid ]; do sleep 0.01; done; echo done"}"#,
            ),
            ("l1", "list_directory", list),
            ("l2", "list_directory", list),
            ("l4", "list_directory", r#"{"path":"hollow"}"#),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = agent(
        &server,
        root,
        ApprovalPolicy::DangerouslyApproveAll,
        Duration::from_secs(30),
    );
    h.prompt("use every tool").await;
    let events = h.turn().await;
    // The grandchild left the command's session on purpose; it died with
    // the call (ADR 0013), so its output was complete.
    support::assert_all_gone(
        &[support::wait_for_pid(&root.join("held.pid"), EVENT_WAIT)],
        EVENT_WAIT,
    );
    insta::assert_snapshot!("every_tool_result", transcript(&server, 1, &events));
}

#[tokio::test]
async fn the_search_tools_results_as_the_model_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/tools")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn lib() {}\n// needle\n").unwrap();
    std::fs::write(root.join("src/tools/mod.rs"), "fn tools() {}\n").unwrap();
    std::fs::write(root.join("node_modules/dep/index.rs"), "fn dep() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(root.join("build.log"), "needle\n").unwrap();
    std::fs::write(root.join("blob.bin"), b"needle\0").unwrap();
    std::fs::write(
        root.join("min.js"),
        format!("var needle = '{}';\n", "x".repeat(300)),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("g1", "glob", r#"{"pattern":"**/*.rs"}"#),
            (
                "g2",
                "glob",
                r#"{"pattern":"**/*.rs","path":"src","max_results":1}"#,
            ),
            ("s1", "grep", r#"{"pattern":"fn \\w+\\(","include":"*.rs"}"#),
            (
                "s2",
                "grep",
                r#"{"pattern":"NEEDLE","ignore_case":true,"max_results":1}"#,
            ),
            ("f1", "grep", r#"{"pattern":"fn main("}"#),
            ("f2", "glob", r#"{"pattern":"**","path":".."}"#),
            ("n1", "grep", r#"{"pattern":"absent","include":"*.rs"}"#),
            ("n2", "glob", r#"{"pattern":"*.py"}"#),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = agent(&server, root, ApprovalPolicy::Ask, Duration::from_secs(30));
    h.prompt("search").await;
    let events = h.turn().await;
    insta::assert_snapshot!("the_search_tools", transcript(&server, 1, &events));
}

#[tokio::test]
async fn every_failure_class_as_the_model_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
    let mut frames = vec![role_chunk()];
    for (i, (id, name, args)) in [
        ("m1", "read_file", r#"{"path": "#),
        ("u1", "remove_file", r#"{"path":"a.txt"}"#),
        ("i1", "read_file", r#"{"path":"a.txt","limit":"20"}"#),
        (
            "i2",
            "edit_file",
            r#"{"path":"a.txt","search_block":"x","replace_block":"x"}"#,
        ),
        ("p1", "read_file", r#"{"path":"../outside.txt"}"#),
        ("f1", "read_file", r#"{"path":"missing.txt"}"#),
        (
            "f2",
            "edit_file",
            r#"{"path":"a.txt","search_block":"alpha\ngamma","replace_block":"x"}"#,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        frames.push(tool_call_chunk(i as u32, Some(id), Some(name), args));
    }
    // The same id naming a second function: the call cannot be assembled.
    frames.push(tool_call_chunk(7, Some("n1"), Some("list_directory"), "{}"));
    frames.push(tool_call_chunk(7, Some("n1"), Some("read_file"), ""));
    frames.push(tool_call_chunk(
        8,
        Some("j1"),
        Some("write_file"),
        r#"{"path":"b.txt","content":"b"}"#,
    ));
    frames.push(tool_call_chunk(
        9,
        Some("k1"),
        Some("write_file"),
        r#"{"path":"c.txt","content":"c"}"#,
    ));
    frames.push(finish_chunk("tool_calls"));
    let server =
        ScriptedServer::start(vec![Reply::sse(frames), Reply::text(&["understood"])]).await;
    let mut h = agent(&server, root, ApprovalPolicy::Ask, Duration::from_secs(30));
    h.prompt("fail in every way").await;
    let (id, mut events) = h.next_confirm().await;
    assert_eq!(id, "j1");
    h.decide(&id, Decision::Reject).await;
    let (id, more) = h.next_confirm().await;
    events.extend(more);
    assert_eq!(id, "k1");
    h.send(UiCommand::Cancel).await;
    events.extend(h.turn().await);
    h.prompt("go on").await;
    events.extend(h.turn().await);
    insta::assert_snapshot!("every_failure_class", transcript(&server, 1, &events));
}

#[tokio::test]
async fn a_timeout_and_an_interrupted_command_as_the_model_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            (
                "t1",
                "execute_command",
                r#"{"command":"echo before; sleep 30"}"#,
            ),
            (
                "c1",
                "execute_command",
                r#"{"command":"echo $$ > pid; sleep 30"}"#,
            ),
        ]),
        Reply::text(&["understood"]),
    ])
    .await;
    let mut h = agent(
        &server,
        root,
        ApprovalPolicy::DangerouslyApproveAll,
        Duration::from_secs(1),
    );
    h.prompt("wait").await;
    let mut events = h.until(|e| *e == AgentEvent::Phase(Phase::Executing)).await;
    pid_written(&root.join("pid"), EVENT_WAIT).await;
    h.send(UiCommand::Cancel).await;
    events.extend(h.turn().await);
    h.prompt("go on").await;
    events.extend(h.turn().await);
    insta::assert_snapshot!(
        "a_timeout_and_an_interrupted_command",
        transcript(&server, 1, &events)
    );
}

#[tokio::test]
async fn calls_of_a_reply_that_broke_off_as_the_model_reads_them() {
    // The role chunk and the first piece of the call's arguments.
    let cut = Reply::tool_call("b1", "write_file", &[r#"{"path": "a.txt", "cont"#]).cut_after(2);
    let server = ScriptedServer::start(vec![cut, Reply::text(&["recovered"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut h = agent(
        &server,
        dir.path(),
        ApprovalPolicy::Ask,
        Duration::from_secs(30),
    );
    h.prompt("write").await;
    let mut events = h.turn().await;
    h.prompt("again").await;
    events.extend(h.turn().await);
    insta::assert_snapshot!("a_reply_that_broke_off", transcript(&server, 1, &events));
}

/// A write that landed with syntax errors: the model reads where and what
/// to do; the person's row says ok, with where, marked (ADR 0047).
#[tokio::test]
async fn writes_that_left_syntax_errors_as_the_model_and_the_person_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("e1", "edit_file", r#"{"path":"calc.py","search_block":"return a + b","replace_block":"return (a + b"}"#),
            ("w1", "write_file", r#"{"path":"conf.json","content":"{\n  \"a\": 1\n  \"b\": 2\n}\n"}"#),
            ("w2", "write_file", r#"{"path":"ok.json","content":"{}\n"}"#),
        ]),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = agent(
        &server,
        root,
        ApprovalPolicy::DangerouslyApproveAll,
        Duration::from_secs(30),
    );
    h.prompt("break things").await;
    let events = h.turn().await;
    insta::assert_snapshot!("writes_with_syntax_errors", transcript(&server, 1, &events));
}

#[tokio::test]
async fn the_tool_catalogue_as_the_request_carries_it() {
    let server = ScriptedServer::start(vec![Reply::text(&["hello"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut h = agent(
        &server,
        dir.path(),
        ApprovalPolicy::Ask,
        Duration::from_secs(30),
    );
    h.prompt("hi").await;
    h.turn().await;
    let body: Value = server.requests()[0].body.clone();
    let tools = serde_json::to_string(&body["tools"]).unwrap();
    // The request's own bytes, not a re-encoding of them.
    let raw = String::from_utf8(server.requests()[0].raw_body.clone()).unwrap();
    assert!(raw.contains(&format!("\"tools\":{tools}")));
    assert_eq!(
        body["tools"],
        dashfloat::tools::Registry::builtin().definitions()
    );
    insta::assert_snapshot!("the_tool_catalogue", tools);
}

/// Runs one call for real and returns its typed result.
async fn result_of(root: &std::path::Path, tool: &str, args: &str) -> dashfloat::tools::ToolResult {
    let ctx = dashfloat::tools::ToolContext::new(root).unwrap();
    let call = crate::support::calls::validate(tool, args).unwrap();
    dashfloat::tools::execute(&call, &ctx, tokio_util::sync::CancellationToken::new()).await
}

#[tokio::test]
async fn a_read_cut_for_the_context_keeps_whole_lines_and_names_the_offset_to_read_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "abc\n".repeat(10)).unwrap();
    let mut result = result_of(dir.path(), "read_file", r#"{"path":"f.txt","offset":3}"#).await;
    assert!(!result.cut(1_000), "it fits");
    assert!(result.cut(10));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json["content"],
        "abc\nabc\n[cut to fit the model's context window: showed 2 lines from line 3; read on with offset=5 and a smaller limit]"
    );
    assert_eq!(
        (json["lines"].as_u64(), json["truncated"].as_bool()),
        (Some(2), Some(true))
    );
}

#[tokio::test]
async fn a_listing_cut_for_the_context_keeps_the_first_entries_and_says_there_are_more() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..10 {
        std::fs::write(dir.path().join(format!("file{n}")), "").unwrap();
    }
    let mut result = result_of(dir.path(), "list_directory", "{}").await;
    assert!(result.cut(100));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["entries"].as_array().unwrap().len(), 2);
    assert_eq!(json["entries"][0]["name"], "file0");
    assert_eq!(
        (json["total"].as_u64(), json["truncated"].as_bool()),
        (Some(10), Some(true))
    );
}

#[tokio::test]
async fn a_glob_cut_for_the_context_keeps_the_first_paths_and_says_there_are_more() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..10 {
        std::fs::write(dir.path().join(format!("file{n}.txt")), "").unwrap();
    }
    let mut result = result_of(dir.path(), "glob", r#"{"pattern":"*.txt"}"#).await;
    assert!(!result.cut(1_000), "it fits");
    assert!(result.cut(25));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["files"], json!(["file0.txt", "file1.txt"]));
    assert_eq!(
        (json["total"].as_u64(), json["truncated"].as_bool()),
        (Some(10), Some(true))
    );
}

#[tokio::test]
async fn a_grep_cut_for_the_context_keeps_whole_lines_and_says_how_to_narrow() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "hit\n".repeat(10)).unwrap();
    let mut result = result_of(dir.path(), "grep", r#"{"pattern":"hit"}"#).await;
    assert!(!result.cut(1_000), "it fits");
    assert!(result.cut(20));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json["matches"],
        "f.txt:1:hit\n[cut to fit the model's context window: showed 1 of 10 matching lines; \
         narrow with path, include or a more specific pattern]"
    );
    assert_eq!(
        (
            json["shown"].as_u64(),
            json["total"].as_u64(),
            json["truncated"].as_bool()
        ),
        (Some(1), Some(10), Some(true))
    );
}

#[test]
fn a_timed_out_commands_output_is_cut_like_a_finished_ones_and_a_write_is_never_cut() {
    let mut timed_out =
        dashfloat::tools::ToolResult::from(dashfloat::tools::ToolFailure::Timeout {
            tool: "execute_command".to_owned(),
            after: std::time::Duration::from_secs(30),
            output: "1\n2\n3\n4\n".to_owned(),
        });
    assert!(timed_out.cut(4));
    let json = serde_json::to_value(&timed_out).unwrap();
    assert_eq!(
        json["output"],
        "1\n2\n[output cut to its first 4 of 8 bytes to fit the model's context window; narrow the command (grep, head, tail, a smaller scope) to see the rest]"
    );
    let mut rejected =
        dashfloat::tools::ToolResult::from(dashfloat::tools::ToolFailure::Rejected {
            tool: "write_file".to_owned(),
            again: false,
        });
    assert!(!rejected.cut(0));
}
