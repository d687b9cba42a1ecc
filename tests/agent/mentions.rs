//! Files and folders the person names with `@` in a prompt (ADR 0038):
//! read for the model before its first step, as calls of its own tools,
//! under any policy, without counting as the model's repeats.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::AgentEvent;
use serde_json::{Value, json};

use crate::support;
use support::agent::{AgentHarness, setup, start, start_with};
use support::server::{Reply, ScriptedServer, assert_prefix_stable};

/// The messages of request `n`, parsed.
fn messages(server: &ScriptedServer, n: usize) -> Vec<Value> {
    server.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .clone()
}

/// A tool message's content, parsed.
fn result_of(message: &Value) -> Value {
    assert_eq!(message["role"], "tool", "{message}");
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_named_file_and_folder_are_read_before_the_first_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello from the notes\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["it says hello"])]).await;
    let mut h = start(&server.base_url(), dir.path());
    h.prompt("what does @notes.txt say, and what is in (@src/)?")
        .await;
    let events = h.turn().await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "{events:#?}"
    );
    let rows: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { name, summary, .. } => Some((name.as_str(), summary.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        rows,
        [("read_file", "notes.txt"), ("list_directory", "src/")]
    );

    assert_eq!(server.requests().len(), 1);
    let sent = messages(&server, 0);
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    let calls = sent[2]["tool_calls"].as_array().unwrap();
    let called: Vec<(&str, Value)> = calls
        .iter()
        .map(|c| {
            let args = c["function"]["arguments"].as_str().unwrap();
            (
                c["function"]["name"].as_str().unwrap(),
                serde_json::from_str(args).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        called,
        [
            ("read_file", json!({ "path": "notes.txt" })),
            ("list_directory", json!({ "path": "src/" })),
        ]
    );
    for (call, result) in calls.iter().zip(&sent[3..]) {
        assert_eq!(result["tool_call_id"], call["id"]);
    }
    assert!(
        result_of(&sent[3])["content"]
            .as_str()
            .unwrap()
            .contains("hello from the notes"),
        "{}",
        sent[3]
    );
    assert!(sent[4]["content"].as_str().unwrap().contains("a.rs"));
    assert_eq!(support::agent::reply_text(&events), "it says hello");
}

#[tokio::test]
async fn what_names_nothing_in_the_project_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "no").unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start(&server.base_url(), dir.path());
    let prompt = format!(
        "mail me@example.com about @decorator and @{}",
        outside.path().join("secret.txt").display()
    );
    stays_text(&mut h, &server, &prompt).await;
}

/// Sends `prompt` and checks that it reached the server as it is, with
/// nothing read for it.
async fn stays_text(h: &mut AgentHarness, server: &ScriptedServer, prompt: &str) {
    h.prompt(prompt).await;
    let events = h.turn().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCall { .. })),
        "{events:#?}"
    );
    let sent = messages(server, 0);
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(sent[1]["content"], prompt);
}

#[tokio::test]
async fn the_model_reading_a_named_file_again_is_not_its_repeat() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "c1",
            "read_file",
            &[&json!({ "path": "notes.txt" }).to_string()],
        ),
        Reply::text(&["hello"]),
    ])
    .await;
    let mut h = start(&server.base_url(), dir.path());
    h.prompt("read @notes.txt").await;
    h.turn().await;
    let sent = messages(&server, 1);
    let again = result_of(sent.last().unwrap());
    assert!(again.get("unchanged").is_none(), "{again}");
    assert!(again["content"].as_str().unwrap().contains("hello"));
    assert!(
        server.requests()[1].body.get("tool_choice").is_none(),
        "the next step may still call tools"
    );
    assert_prefix_stable(&server.requests());
}

/// The next list of the project's files the agent sends.
async fn next_listing(h: &mut AgentHarness) -> Vec<String> {
    let events = h.until(|e| matches!(e, AgentEvent::ProjectFiles(_))).await;
    let Some(AgentEvent::ProjectFiles(files)) = events.last() else {
        unreachable!()
    };
    files.clone()
}

#[tokio::test]
async fn the_project_files_reach_the_ui_at_start_and_after_each_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    std::fs::create_dir(dir.path().join("target")).unwrap();
    std::fs::write(dir.path().join("src/deep/b.rs"), "").unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
    std::fs::write(dir.path().join("target/built"), "").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(dir.path().join("run.log"), "").unwrap();
    // A name with a space is named in quotes; one with a quote cannot be.
    std::fs::write(dir.path().join("my notes.md"), "").unwrap();
    std::fs::write(dir.path().join("say \"hi\".md"), "").unwrap();
    // A link, into the project or out of it, is not listed or followed.
    std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("src-link")).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "w1",
            "write_file",
            &[&json!({ "path": "src/new.rs", "content": "" }).to_string()],
        ),
        Reply::text(&["made"]),
    ])
    .await;
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::AutoEdit,
    ));
    assert_eq!(
        next_listing(&mut h).await,
        [
            ".gitignore",
            "my notes.md",
            "src/",
            "src/a.rs",
            "src/deep/",
            "src/deep/b.rs"
        ]
    );
    h.prompt("make a new file").await;
    h.turn().await;
    assert!(
        next_listing(&mut h)
            .await
            .contains(&"src/new.rs".to_owned())
    );
}

/// A name in the project that leads out of it (a link to a file beside
/// the project) or could block (a FIFO) is never read for the model,
/// with `@` or without: it stays plain text (SECURITY.md).
#[tokio::test]
async fn a_named_link_out_of_the_project_or_a_fifo_stays_text() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET-OUTSIDE").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("leak.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../../../../../../../../etc", dir.path().join("etc")).unwrap();
    nix::unistd::mkfifo(&dir.path().join("pipe.txt"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start(&server.base_url(), dir.path());
    let prompt = "compare @leak.txt, leak.txt, @etc/passwd and @pipe.txt";
    stays_text(&mut h, &server, prompt).await;
    assert!(!server.requests()[0].body.to_string().contains("SECRET"));
}
