//! Hooks (ADR 0054) through the real agent against the scripted server,
//! each a real `/bin/sh` command in a temporary project writing what it
//! was told to a file (or a FIFO, where the test must meet a hook that
//! nothing else waits for): a `pre_tool_use` hook denies a call with a
//! reason the model reads, a `user_prompt_submit` hook blocks a prompt or
//! adds to it, `post_tool_use`, `stop` and `session_start` hooks are told
//! their events, a hook that fails or runs too long is a notice and the
//! turn goes on, Esc ends a hook the turn waits for, a running hook is
//! not swept when a command ends, and a project's hooks run only once
//! its file is trusted as it is.

use std::path::{Path, PathBuf};

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::HOOK_TIMEOUT_DEFAULT;
use dashfloat::hooks::{Hook, HookEvent, Whose};
use dashfloat::protocol::{AgentEvent, Phase, Severity, ToolStatus, UiCommand};
use dashfloat::trust::{PROJECT_CONFIG, ProjectTrust, TrustStore};
use serde_json::{Value, json};

use crate::support;
use support::agent::{AgentHarness, EVENT_WAIT, setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// One of the person's hooks for `event`.
fn hook(event: HookEvent, command: &str) -> Hook {
    Hook {
        event,
        command: command.into(),
        tools: None,
        timeout: HOOK_TIMEOUT_DEFAULT,
        whose: Whose::Person,
    }
}

/// An agent in `dir` under `policy`, running `hooks`.
fn start(
    server: &ScriptedServer,
    dir: &Path,
    policy: ApprovalPolicy,
    hooks: Vec<Hook>,
) -> AgentHarness {
    let mut s = setup(&server.base_url(), dir, policy);
    s.hooks = hooks;
    start_with(s)
}

/// The JSON a hook wrote to `file` in `dir`.
fn told(dir: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// A FIFO at `dir/name`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    path
}

/// What a hook writes into the FIFO `path`, read to its end; the wait is
/// bounded only so that a hook that never came fails the test.
async fn read_fifo(path: PathBuf) -> String {
    on_a_thread(
        move || std::fs::read_to_string(path).unwrap(),
        "no hook wrote the FIFO",
    )
    .await
}

/// Writes `text` into the FIFO `path`, once a hook reads it.
async fn write_fifo(path: PathBuf, text: &'static str) {
    on_a_thread(
        move || std::fs::write(path, text).unwrap(),
        "no hook read the FIFO",
    )
    .await;
}

/// What `work` (which may block on a FIFO forever) returns, run on a
/// thread of its own: when it blocks past [`EVENT_WAIT`] the test fails
/// with `failure` at once, as a blocked thread of the runtime's pool
/// would keep the test from ending.
async fn on_a_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
    failure: &str,
) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    tokio::time::timeout(EVENT_WAIT, rx)
        .await
        .expect(failure)
        .unwrap()
}

/// The texts of the user messages of the last request.
fn user_messages(server: &ScriptedServer) -> Vec<String> {
    let requests = server.requests();
    requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_pre_tool_use_hook_denies_a_call_with_a_reason_the_model_reads() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "c1",
            "execute_command",
            &[r#"{"command": "touch ran.txt"}"#],
        ),
        Reply::text(&["understood"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut guard = hook(
        HookEvent::PreToolUse,
        "cat > pre.json; echo 'no commands on Fridays' >&2; exit 2",
    );
    guard.tools = Some(vec!["execute_command".into()]);
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![guard]);
    agent.prompt("make a file").await;
    let events = agent.turn().await;

    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "the person is not asked about a denied call: {events:#?}"
    );
    assert!(
        !dir.path().join("ran.txt").exists(),
        "the command did not run"
    );
    let status = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { status, .. } => Some(status.clone()),
        _ => None,
    });
    assert!(
        matches!(&status, Some(ToolStatus::Error(text)) if text.contains("no commands on Fridays")),
        "the row shows the denial: {status:?}"
    );
    let result = crate::auto::result_of(&server, "c1");
    assert_eq!(result["ok"], false);
    assert_eq!(result["code"], "denied");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains("a hook denied this call: no commands on Fridays"),
        "{error}"
    );
    let pre = told(dir.path(), "pre.json");
    assert_eq!(pre["event"], "pre_tool_use");
    assert_eq!(pre["tool"]["name"], "execute_command");
    assert_eq!(
        pre["tool"]["arguments"],
        json!({"command": "touch ran.txt"})
    );
    assert!(pre["session_id"].as_str().is_some_and(|id| !id.is_empty()));
}

#[tokio::test]
async fn a_hook_for_other_tools_lets_a_call_go_to_the_person() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("c1", "execute_command", &[r#"{"command": "true"}"#]),
        Reply::text(&["done"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut guard = hook(HookEvent::PreToolUse, "exit 2");
    guard.tools = Some(vec!["write_file".into()]);
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![guard]);
    agent.prompt("run it").await;
    let (id, _) = agent.next_confirm().await;
    agent
        .decide(&id, dashfloat::protocol::Decision::Approve)
        .await;
    agent.turn().await;
    assert_eq!(crate::auto::result_of(&server, "c1")["exit_code"], 0);
}

#[tokio::test]
async fn a_user_prompt_submit_hook_blocks_a_prompt_which_is_never_sent() {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let block = hook(
        HookEvent::UserPromptSubmit,
        "cat > prompt.json; echo 'it names a secret' >&2; exit 2",
    );
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![block]);
    agent.prompt("print the API key").await;
    let events = agent.turn().await;
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::System { severity: Severity::Error, text }
            if text == "a hook blocked this prompt, so it was not sent: it names a secret")
        ),
        "{events:#?}"
    );
    assert!(server.requests().is_empty(), "nothing went to the model");
    let prompt = told(dir.path(), "prompt.json");
    assert_eq!(prompt["event"], "user_prompt_submit");
    assert_eq!(prompt["prompt"], "print the API key");
    assert_eq!(
        Path::new(prompt["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn what_a_user_prompt_submit_hook_prints_joins_the_prompt_marked_as_its() {
    let server = ScriptedServer::start(vec![Reply::text(&["on main"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let context = hook(HookEvent::UserPromptSubmit, "echo \"branch: main\"");
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![context]);
    agent.prompt("which branch is this").await;
    agent.turn().await;
    let users = user_messages(&server);
    let prompt = users.last().unwrap();
    assert!(prompt.starts_with("which branch is this\n\n"), "{prompt}");
    assert!(
        prompt.ends_with(
            "[added by your user_prompt_submit hook `echo \"branch: main\"`]\nbranch: main"
        ),
        "{prompt}"
    );
}

/// What a prompt's hooks print together is bounded: two hooks of 40,000
/// bytes each pass [`HOOK_CONTEXT_MAX_BYTES`], and the rest is left out
/// with a line saying so.
#[tokio::test]
async fn what_a_prompts_hooks_add_is_bounded_together() {
    use dashfloat::bounds::HOOK_CONTEXT_MAX_BYTES;
    let server = ScriptedServer::start(vec![Reply::text(&["noted"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let loud = "head -c 40000 /dev/zero | tr '\\0' x";
    let hooks = vec![
        hook(HookEvent::UserPromptSubmit, loud),
        hook(HookEvent::UserPromptSubmit, loud),
    ];
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, hooks);
    agent.prompt("go").await;
    agent.turn().await;
    let users = user_messages(&server);
    let prompt = users.last().unwrap();
    let added = prompt.strip_prefix("go\n\n").unwrap();
    assert!(
        added.ends_with("[the hooks printed more; what passed 64 KiB was left out]"),
        "{}",
        &added[added.len().saturating_sub(200)..]
    );
    assert!(
        added.len() < HOOK_CONTEXT_MAX_BYTES + 100,
        "{}",
        added.len()
    );
    assert!(
        added.len() > HOOK_CONTEXT_MAX_BYTES - 100,
        "{}",
        added.len()
    );
}

#[tokio::test]
async fn post_tool_use_and_stop_hooks_are_told_what_happened() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("c1", "read_file", &[r#"{"path": "notes.txt"}"#]),
        Reply::text(&["it says hello"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let hooks = vec![
        hook(HookEvent::PostToolUse, "cat > post.json"),
        hook(HookEvent::Stop, "cat > stop.json"),
    ];
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, hooks);
    agent.prompt("what do the notes say").await;
    agent.turn().await;

    let post = told(dir.path(), "post.json");
    assert_eq!(post["event"], "post_tool_use");
    assert_eq!(post["tool"]["name"], "read_file");
    assert_eq!(post["tool"]["arguments"]["path"], "notes.txt");
    assert_eq!(post["result"]["status"], "ok");
    let output: Value = serde_json::from_str(post["result"]["output"].as_str().unwrap()).unwrap();
    assert!(
        output["content"].as_str().unwrap().contains("hello"),
        "{output}"
    );
    let stop = told(dir.path(), "stop.json");
    assert_eq!(stop["event"], "stop");
    assert_eq!(stop["reason"], "complete");
    assert_eq!(stop["session_id"], post["session_id"]);
}

#[tokio::test]
async fn a_session_start_hook_is_told_the_session_started() {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let start_fifo = fifo(dir.path(), "start.fifo");
    let _agent = start(
        &server,
        dir.path(),
        ApprovalPolicy::Ask,
        vec![hook(HookEvent::SessionStart, "cat > start.fifo")],
    );
    let told: Value = serde_json::from_str(&read_fifo(start_fifo).await).unwrap();
    assert_eq!(told["event"], "session_start");
    assert_eq!(told["source"], "startup");
}

#[tokio::test]
async fn a_hook_that_fails_or_runs_too_long_is_a_notice_and_the_turn_goes_on() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("c1", "read_file", &[r#"{"path": "notes.txt"}"#]),
        Reply::text(&["read it"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let mut slow = hook(HookEvent::UserPromptSubmit, "sleep 30");
    slow.timeout = std::time::Duration::from_secs(1);
    let hooks = vec![slow, hook(HookEvent::PreToolUse, "echo boom >&2; exit 1")];
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, hooks);
    agent.prompt("read the notes").await;
    let events = agent.turn().await;
    let notices = system_texts(&events);
    assert!(
        notices.contains(
            &"your user_prompt_submit hook `sleep 30` failed: it ran longer than its 1 s timeout and was killed; it was ignored"
                .to_owned()
        ),
        "{notices:#?}"
    );
    assert!(
        notices.contains(
            &"your pre_tool_use hook `echo boom >&2; exit 1` failed: it exited with 1: boom; it was ignored"
                .to_owned()
        ),
        "{notices:#?}"
    );
    assert_eq!(crate::auto::result_of(&server, "c1")["ok"], true);
    assert_eq!(user_messages(&server)[0], "read the notes");
}

#[tokio::test]
async fn esc_kills_the_hooks_a_prompt_waits_for_and_the_prompt_is_not_sent() {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut stuck = hook(HookEvent::UserPromptSubmit, "sleep 100");
    stuck.timeout = std::time::Duration::from_secs(120);
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![stuck]);
    agent.prompt("hello").await;
    agent
        .until(|e| *e == AgentEvent::Phase(Phase::Executing))
        .await;
    agent.send(UiCommand::Cancel).await;
    let events = agent.turn().await;
    assert!(
        system_texts(&events)
            .contains(&"interrupted while the prompt's hooks ran; it was not sent".to_owned()),
        "{events:#?}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn one_esc_ends_a_turn_whose_stop_hooks_then_run_beside() {
    let server = ScriptedServer::start(vec![Reply::tool_call(
        "c1",
        "execute_command",
        &[r#"{"command": "true"}"#],
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let told_stop = fifo(dir.path(), "stop.fifo");
    let mut slow = hook(HookEvent::Stop, "cat > stop.fifo; sleep 100");
    slow.timeout = std::time::Duration::from_secs(120);
    let mut agent = start(&server, dir.path(), ApprovalPolicy::Ask, vec![slow]);
    agent.prompt("run it").await;
    agent.next_confirm().await;
    agent.send(UiCommand::Cancel).await;
    // One Esc: the turn is done without waiting for the hook.
    agent.turn().await;
    let stop: Value = serde_json::from_str(&read_fifo(told_stop).await).unwrap();
    assert_eq!(stop["reason"], "interrupted");
}

#[tokio::test]
async fn a_hook_running_while_a_command_ends_is_not_swept_with_its_strays() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "c1",
            "execute_command",
            &[r#"{"command": "sleep 0 & true"}"#],
        ),
        Reply::text(&["ran"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let started = fifo(dir.path(), "started.fifo");
    let gate = fifo(dir.path(), "gate.fifo");
    let done = fifo(dir.path(), "done.fifo");
    let waits = hook(
        HookEvent::SessionStart,
        "echo started > started.fifo; cat gate.fifo > /dev/null; echo finished > done.fifo",
    );
    let mut agent = start(
        &server,
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
        vec![waits],
    );
    assert_eq!(read_fifo(started).await, "started\n");
    agent.prompt("run it").await;
    agent.turn().await;
    assert_eq!(crate::auto::result_of(&server, "c1")["exit_code"], 0);
    // The command ended and its strays were swept: the hook still reads
    // its gate, and finishes.
    write_fifo(gate, "go").await;
    assert_eq!(read_fifo(done).await, "finished\n");
}

#[tokio::test]
async fn a_projects_hooks_run_only_once_its_file_is_trusted_as_it_is() {
    let server = ScriptedServer::start(vec![Reply::text(&["one"]), Reply::text(&["two"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".dashfloat")).unwrap();
    let file = root.join(".dashfloat/config.toml");
    std::fs::write(
        &file,
        "model = \"ignored\"\n[[hooks]]\nevent = \"user_prompt_submit\"\ncommand = \"cat > project-hook.json\"\n",
    )
    .unwrap();
    let store = TrustStore::new(config.path(), &root, &PROJECT_CONFIG);
    let mut s = setup(&server.base_url(), &root, ApprovalPolicy::Ask);
    s.hooks_trust = Some(store.clone());
    let mut agent = start_with(s);

    agent.prompt("first").await;
    agent.turn().await;
    assert!(
        !root.join("project-hook.json").exists(),
        "untrusted: it did not run"
    );
    agent.send(UiCommand::ListHooks).await;
    let listed = agent
        .until(|e| matches!(e, AgentEvent::System { .. }))
        .await;
    let listed = system_texts(&listed).join("\n");
    assert!(
        listed.contains(
            "user_prompt_submit `cat > project-hook.json`, timeout 10 s (the project's, not trusted: it does not run)"
        ),
        "{listed}"
    );
    assert!(
        listed.contains(
            "trust covers the text of .dashfloat/config.toml, not the scripts its hooks call"
        ),
        "{listed}"
    );

    agent.send(UiCommand::TrustHooks).await;
    let trusted = agent
        .until(|e| matches!(e, AgentEvent::System { .. }))
        .await;
    assert_eq!(
        system_texts(&trusted),
        [
            "this project's .dashfloat/config.toml is trusted as it is now; these hooks run from now on, \
          in the workspace-write sandbox:\n  user_prompt_submit `cat > project-hook.json`, timeout 10 s \
          (the project's, trusted)"
        ],
    );
    agent.prompt("second").await;
    agent.turn().await;
    assert_eq!(told(&root, "project-hook.json")["prompt"], "second");

    std::fs::write(
        &file,
        "[[hooks]]\nevent = \"stop\"\ncommand = \"curl evil\"\n",
    )
    .unwrap();
    assert!(
        matches!(store.read(), ProjectTrust::Untrusted(_)),
        "a changed file asks again"
    );
}

#[tokio::test]
async fn a_projects_file_is_not_trusted_while_a_turn_runs() {
    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".dashfloat")).unwrap();
    std::fs::write(
        root.join(".dashfloat/config.toml"),
        "[[hooks]]\nevent = \"stop\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let store = TrustStore::new(config.path(), &root, &PROJECT_CONFIG);
    let mut stuck = hook(HookEvent::UserPromptSubmit, "sleep 100");
    stuck.timeout = std::time::Duration::from_secs(120);
    let mut s = setup(&server.base_url(), &root, ApprovalPolicy::Ask);
    s.hooks = vec![stuck];
    s.hooks_trust = Some(store.clone());
    let mut agent = start_with(s);
    agent.prompt("hello").await;
    agent
        .until(|e| *e == AgentEvent::Phase(Phase::Executing))
        .await;

    for (command, name) in [
        (UiCommand::TrustHooks, "/hooks trust"),
        (UiCommand::TrustMcp, "/mcp trust"),
    ] {
        agent.send(command).await;
        let refused = agent
            .until(|e| matches!(e, AgentEvent::System { .. }))
            .await;
        assert_eq!(
            system_texts(&refused),
            [format!(
                "the agent is busy; {name} waits until the turn is over, so that what it trusts is the file the turn left"
            )]
        );
    }
    assert!(matches!(store.read(), ProjectTrust::Untrusted(_)));
    agent.send(UiCommand::Cancel).await;
    agent.turn().await;
}

#[tokio::test]
async fn a_projects_file_that_is_a_link_out_of_the_project_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("config.toml"),
        "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".dashfloat")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let store = TrustStore::new(config.path(), &root, &PROJECT_CONFIG);
    assert!(
        matches!(store.read(), ProjectTrust::Unreadable(why) if why.contains("escapes")),
        "{:?}",
        store.read()
    );
}
