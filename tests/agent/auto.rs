//! The `auto` policy and the sandbox levels the approval policy picks
//! (ADR 0044), through the real agent, the real `LocalWorkspace` sandbox,
//! real `/bin/sh`, real cargo and curl, against the scripted server: a
//! command `auto` runs is confined to workspace-write and nothing is
//! asked; one that needs the network fails there with a result saying
//! how to ask for more; `sandbox: "off"` is always put to the person,
//! with its reason; `ask` runs a `y`-approved command unsandboxed unless
//! `sandbox = "always"`; `auto` is refused where the kernel cannot give
//! workspace-write. Every assertion about what a command could not do
//! depends on the sandbox's enforcement (`src/tools/sandbox`).

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dashfloat::agent::{AgentSetup, ApprovalPolicy, SandboxScope, WorkspaceWrite};
use dashfloat::bounds::REASON_MAX_CHARS;
use dashfloat::protocol::{AgentEvent, ConfirmRequest, Decision, UiCommand};
use serde_json::{Value, json};

use crate::support;
use support::agent::{AgentHarness, setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// How long a command may run here: a first `cargo test` compiles.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// A crate of one test, without dependencies, in `root`.
pub fn small_crate(root: &Path) {
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub fn two() -> u32 { 2 }\n#[test]\nfn adds() { assert_eq!(super::two(), 2); }\n"
            .replace("super::", "crate::"),
    )
    .unwrap();
}

/// The setup of these tests: `policy` in `root`, commands with room to
/// compile, and cargo's target directory the project's own (the one
/// this test run was built in lies outside it).
pub fn sandboxed_setup(server: &ScriptedServer, root: &Path, policy: ApprovalPolicy) -> AgentSetup {
    let mut s = setup(&server.base_url(), root, policy);
    s.tools.exec_timeout = COMMAND_LIMIT;
    s.tools.secret_vars.push("CARGO_TARGET_DIR".into());
    s
}

/// A reply calling `execute_command` with `args`.
pub fn command_call(id: &str, args: Value) -> Reply {
    Reply::tool_call(id, "execute_command", &[&args.to_string()])
}

/// The confirmations among `events`.
pub fn confirms(events: &[AgentEvent]) -> Vec<&ConfirmRequest> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Confirm(request) => Some(request),
            _ => None,
        })
        .collect()
}

/// The result the model read for call `id`, from the requests sent.
pub fn result_of(server: &ScriptedServer, id: &str) -> Value {
    let requests = server.requests();
    let body = &requests.last().unwrap().body;
    let message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"));
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

/// A loopback listener counting the connections it accepts; each gets a
/// short HTTP answer.
struct Listener {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = std::io::Write::write_all(
                    &mut stream,
                    b"HTTP/1.0 200 OK\r\ncontent-length: 6\r\n\r\nhello\n",
                );
            }
        });
        Listener { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// The scenario: under `auto` the model runs `cargo test` three
/// times and nothing is asked; then a command that needs the network (a
/// connection to a loopback listener) fails in the sandbox with a result
/// saying how to ask for more; the model asks for `sandbox: "off"` with a
/// reason, one confirmation shows it, and once approved it connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_auto_tests_run_unasked_and_the_network_needs_one_confirmation_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    small_crate(dir.path());
    let listener = Listener::start();
    let fetch = format!("curl -sS --max-time 10 http://127.0.0.1:{}/", listener.port);
    let reason = "it fetches the test server's page on 127.0.0.1";
    let server = ScriptedServer::start(vec![
        command_call("t1", json!({"command": "cargo test"})),
        command_call("t2", json!({"command": "cargo test"})),
        command_call("t3", json!({"command": "cargo test"})),
        command_call("n1", json!({"command": fetch})),
        command_call(
            "n2",
            json!({"command": fetch, "sandbox": "off", "reason": reason}),
        ),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start_with(sandboxed_setup(&server, dir.path(), ApprovalPolicy::Auto));
    h.prompt("run the tests, then fetch the page").await;
    let (id, before) = h.next_confirm().await;
    // Nothing was asked before the way out of the sandbox.
    assert_eq!(confirms(&before).len(), 1, "{before:#?}");
    let first = result_of_before(&server, "t1");
    assert!(
        first["output"]
            .as_str()
            .unwrap()
            .contains("test result: ok"),
        "{first:#}"
    );
    for id in ["t1", "t2", "t3"] {
        assert!(tests_passed(&result_of_before(&server, id)), "{id}");
    }
    let marked: Vec<&String> = before
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolAllowed { summary, .. } => Some(summary),
            _ => None,
        })
        .collect();
    assert_eq!(marked.len(), 4, "{marked:?}");
    assert!(marked[0].contains("sandbox workspace-write"), "{marked:?}");
    // The network was refused inside the sandbox, and the model read how
    // to ask for it.
    let refused = result_of_before(&server, "n1");
    assert_ne!(refused["exit_code"], 0, "{refused:#}");
    let note = refused["sandbox"].as_str().unwrap();
    assert!(note.contains("no network"), "{note}");
    assert!(note.contains("\"sandbox\": \"off\""), "{note}");
    assert_eq!(listener.accepted(), 0, "the sandbox let a connection out");
    // The one confirmation says it runs outside the sandbox, and why.
    let request = confirms(&before)[0];
    let shown: Vec<&str> = request.preview.iter().map(|l| l.text.as_str()).collect();
    assert!(shown[0].contains("outside the sandbox"), "{shown:?}");
    assert!(shown.iter().any(|l| l.contains(reason)), "{shown:?}");
    assert_eq!(request.remember, None, "a way out is never remembered");
    h.decide(&id, Decision::Approve).await;
    let after = h.turn().await;
    assert!(confirms(&after).is_empty(), "{after:#?}");
    let fetched = result_of(&server, "n2");
    assert_eq!(fetched["exit_code"], 0, "{fetched:#}");
    assert_eq!(fetched["output"], "hello\n");
    assert!(fetched.get("sandbox").is_none(), "{fetched:#}");
    assert_eq!(listener.accepted(), 1);
}

/// Whether a `cargo test` result says it passed: exit code 0, or, for a
/// run that printed what the one before did, that it is unchanged.
fn tests_passed(result: &Value) -> bool {
    result["ok"] == true && (result["exit_code"] == 0 || result.get("unchanged").is_some())
}

/// The result of call `id` as the request after it carried it.
fn result_of_before(server: &ScriptedServer, id: &str) -> Value {
    server
        .requests()
        .iter()
        .find_map(|r| {
            r.body["messages"].as_array().unwrap().iter().find_map(|m| {
                (m["role"] == "tool" && m["tool_call_id"] == id)
                    .then(|| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
            })
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// How many `y` (or `a`) presses the scripted scenario of three `cargo
/// test` runs needs: under `ask` one for each run, under `ask` with the
/// first answered `a` one in all, under `auto` none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_test_runs_need_three_presses_under_ask_one_with_a_and_none_under_auto() {
    let scenarios = [
        (ApprovalPolicy::Ask, Decision::Approve, 3),
        (ApprovalPolicy::Ask, Decision::Remember, 1),
        (ApprovalPolicy::Auto, Decision::Approve, 0),
    ];
    for (policy, answer, presses) in scenarios {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        small_crate(dir.path());
        let server = ScriptedServer::start(vec![
            command_call("t1", json!({"command": "cargo test"})),
            command_call("t2", json!({"command": "cargo test"})),
            command_call("t3", json!({"command": "cargo test"})),
            Reply::text(&["done"]),
        ])
        .await;
        let mut s = sandboxed_setup(&server, dir.path(), policy);
        s.approval.remembered = support::agent::remembered(config.path(), &s.tools.root);
        let mut h = start_with(s);
        h.prompt("run the tests three times").await;
        let pressed = answer_all(&mut h, &answer).await;
        assert_eq!(pressed, presses, "{policy:?} answering {answer:?}");
        for id in ["t1", "t2", "t3"] {
            assert!(tests_passed(&result_of(&server, id)), "{policy:?} {id}");
        }
    }
}

/// Answers every confirmation of the turn with `answer`; how many there
/// were.
async fn answer_all(h: &mut AgentHarness, answer: &Decision) -> usize {
    let mut pressed = 0;
    loop {
        let events = h
            .until(|e| matches!(e, AgentEvent::Confirm(_) | AgentEvent::TurnDone))
            .await;
        match events.last() {
            Some(AgentEvent::Confirm(request)) => {
                pressed += 1;
                h.decide(&request.id.clone(), answer.clone()).await;
            }
            _ => return pressed,
        }
    }
}

/// Under `ask` a command the person approves runs as they would run it
/// (it writes beside the project); with `sandbox = "always"` the same
/// approval runs it in workspace-write, where the write fails and the
/// result says how to ask for more.
#[tokio::test]
async fn an_approved_command_runs_unsandboxed_unless_the_config_says_always() {
    for scope in [SandboxScope::Unasked, SandboxScope::Always] {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("project");
        std::fs::create_dir(&root).unwrap();
        let server = ScriptedServer::start(vec![
            command_call("w", json!({"command": "echo hi > ../beside.txt"})),
            Reply::text(&["done"]),
        ])
        .await;
        let mut s = sandboxed_setup(&server, &root, ApprovalPolicy::Ask);
        s.approval.scope = scope;
        let mut h = start_with(s);
        h.prompt("write beside the project").await;
        let (id, events) = h.next_confirm().await;
        let shown: Vec<String> = confirms(&events)[0]
            .preview
            .iter()
            .map(|l| l.text.clone())
            .collect();
        let says_sandbox = shown.iter().any(|l| l.contains("workspace-write sandbox"));
        assert_eq!(says_sandbox, scope == SandboxScope::Always, "{shown:?}");
        h.decide(&id, Decision::Approve).await;
        h.turn().await;
        let result = result_of(&server, "w");
        let written = base.path().join("beside.txt").exists();
        match scope {
            SandboxScope::Unasked => {
                assert!(written, "{result:#}");
                assert_eq!(result["exit_code"], 0);
            }
            SandboxScope::Always => {
                assert!(!written, "{result:#}");
                assert_ne!(result["exit_code"], 0);
                assert!(result["sandbox"].as_str().is_some(), "{result:#}");
            }
        }
    }
}

/// Where the kernel cannot give workspace-write, `/approval auto` is
/// refused with what is missing, the policy stays, and commands still
/// ask.
#[tokio::test]
async fn auto_is_refused_without_the_workspace_write_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        command_call("c", json!({"command": "true"})),
        Reply::text(&["done"]),
    ])
    .await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.approval.workspace_write = WorkspaceWrite::Given(Err("this kernel has no Landlock".into()));
    let mut h = start_with(s);
    h.send(UiCommand::SetApproval(ApprovalPolicy::Auto)).await;
    let events = h.until(|e| matches!(e, AgentEvent::System { .. })).await;
    let said = system_texts(&events).join("\n");
    assert!(said.contains("auto policy is refused"), "{said}");
    assert!(said.contains("this kernel has no Landlock"), "{said}");
    h.prompt("run true").await;
    let (id, events) = h.next_confirm().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalChanged(_))),
        "{events:#?}"
    );
    // Nothing is offered to remember where it could not run sandboxed.
    assert_eq!(confirms(&events)[0].remember, None);
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
}

/// `sandbox: "off"` is put to the person under every policy but
/// approve-all, even for a line the read-only analyser would run unasked;
/// a `reason` without it, a missing, blank, multi-line or too long one,
/// is refused
/// before anything is shown.
#[tokio::test]
async fn leaving_the_sandbox_always_asks_and_needs_a_one_line_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Auto);
    s.read_only = Some(dashfloat::tools::Analyser::new(s.tools.root.clone()));
    let mut h = start_with(s);
    for (n, (args, field)) in [
        (json!({"command": "ls", "sandbox": "off"}), "reason"),
        (json!({"command": "ls", "reason": "why"}), "reason"),
        (
            json!({"command": "ls", "sandbox": "off", "reason": "  "}),
            "reason",
        ),
        (
            json!({"command": "ls", "sandbox": "off", "reason": "a\nb"}),
            "reason",
        ),
        (
            json!({"command": "ls", "sandbox": "off", "reason": "x".repeat(REASON_MAX_CHARS + 1)}),
            "reason",
        ),
        (
            json!({"command": "ls", "sandbox": "on", "reason": "x"}),
            "sandbox",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("bad{n}");
        server.push_reply(command_call(&id, args.clone()));
        server.push_reply(Reply::text(&["done"]));
        h.prompt("try").await;
        let events = h.turn().await;
        assert!(confirms(&events).is_empty(), "{args}: {events:#?}");
        let result = result_of(&server, &id);
        assert_eq!(result["code"], "invalid_argument", "{args}: {result:#}");
        assert_eq!(result["field"], field, "{args}: {result:#}");
    }
    for (n, policy) in [
        ApprovalPolicy::Auto,
        ApprovalPolicy::AutoEdit,
        ApprovalPolicy::Ask,
    ]
    .into_iter()
    .enumerate()
    {
        h.send(UiCommand::SetApproval(policy)).await;
        h.until(|e| matches!(e, AgentEvent::ApprovalChanged(_)))
            .await;
        server.push_reply(command_call(
            &format!("ls{n}"),
            json!({"command": "ls", "sandbox": "off", "reason": "to see it all"}),
        ));
        server.push_reply(Reply::text(&["done"]));
        h.prompt("list").await;
        let (id, _) = h.next_confirm().await;
        h.decide(&id, Decision::Reject).await;
        h.turn().await;
    }
}
