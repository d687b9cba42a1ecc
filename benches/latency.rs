//! Time to first token on the real local model, on a CPU (issue 12): what
//! a person waits for after pressing Enter. Four moments, each from a
//! freshly started server (nothing in its caches), each with the cache
//! warm-up off and on (ADR 0032), measured in the same run:
//!
//! - (a) the first prompt of a new session, typed for 10 s, on the first
//!   run (nothing saved), and (a') on a later run, after the server
//!   restarted (the fixed prefix's slot saved, ADR 0034); with the warm-up
//!   on, (a) also as `scripts/local-model` gives it from `scripts/dashfloat`:
//!   the server started, nothing saved, and the prefix primed
//!   (`dashfloat prime-cache`) before the session starts;
//! - (b) the follow-up right after (a);
//! - (c) the first prompt after resuming a saved session of ~6k tokens,
//!   typed for 10 s;
//! - (d) the first prompt after `/compact` of that session, typed for 10 s.
//!
//! With the warm-up on, the session of (c) and (d) was last run on an
//! earlier server, which saved its slot on quit (ADR 0034): the server is
//! restarted between that run and the resume, as after a reboot.
//!
//! Also the fixed prefix (system prompt and tool schemas) in the server's
//! own tokens (`/apply-template`, then `/tokenize`).
//!
//! Run with `cargo bench --bench latency`. It starts its own llama-server
//! with `scripts/local-model` on port 8093 and restarts it before every
//! moment; `LATENCY_MODEL` picks the model (default: the local default),
//! `LATENCY_PAUSE_SECS` the typing pause (default 10).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use dashfloat::agent::{self, AgentSetup, ApprovalPolicy};
use dashfloat::bounds::{LOCAL_CONTEXT_WINDOW, LOCAL_MODEL};
use dashfloat::llm::discover::Questions;
use dashfloat::llm::wire::{FunctionCall, Message, Role, ToolCallMessage};
use dashfloat::protocol::{AgentEvent, UiCommand};
use dashfloat::session::{OpenSession, SessionRecord, SessionSetup, SessionStore};
use serde_json::json;
use support::agent::{AgentHarness, setup, start_with};

const PORT: u16 = 8093;
/// Bytes of tool output in the resumed session: with the fixed prefix,
/// about 6k tokens of the 8k window.
const SESSION_OUTPUT_BYTES: usize = 11_000;
const SESSION_ID: &str = "20261202-000000-bbbbbb";

fn main() {
    let model = std::env::var("LATENCY_MODEL").unwrap_or_else(|_| LOCAL_MODEL.to_string());
    let pause = Duration::from_secs(
        std::env::var("LATENCY_PAUSE_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(10),
    );
    dashfloat::llm::install_crypto_provider();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "time to first token, {model}, two cores, typing pause {}s\n",
        pause.as_secs()
    );
    let url = restart(&model);
    let prefix = runtime.block_on(support::prefix::prefix_tokens(&url));
    println!("fixed prefix (system prompt + tool schemas): {prefix} tokens (target ≤ 700)\n");
    let mut primed = None;
    let mut rows: Vec<(&str, [Option<Measured>; 2])> = vec![
        ("(a) first prompt, new session, first run", [None, None]),
        ("(a') first prompt, new session, a later run", [None, None]),
        ("(b) follow-up", [None, None]),
        ("(c) first prompt after resuming ~6k tokens", [None, None]),
        ("(d) first prompt after /compact", [None, None]),
    ];
    for (i, warm) in [false, true].into_iter().enumerate() {
        forget_saved_prefixes();
        let url = restart(&model);
        let (a, b) = runtime.block_on(new_session(&url, warm, pause));
        rows[0].1[i] = Some(a);
        rows[2].1[i] = Some(b);
        if warm {
            forget_saved_prefixes();
            let url = restart(&model);
            primed = Some(runtime.block_on(primed_first_run(&url, pause)));
        }
        let url = restart(&model);
        rows[1].1[i] = Some(runtime.block_on(new_session(&url, warm, pause)).0);
        for (row, compact) in [(3, false), (4, true)] {
            let mut url = restart(&model);
            let dir = saved_session(&url);
            if warm {
                runtime.block_on(run_and_quit(&url, dir.path()));
                url = restart(&model);
            }
            rows[row].1[i] =
                Some(runtime.block_on(resumed(&url, dir.path(), warm, pause, compact)));
        }
    }
    println!("| moment | warm-up off | warm-up on | on / off | prompt tokens |");
    println!("| --- | --- | --- | --- | --- |");
    for &(name, [off, on]) in &rows {
        let (off, on) = (off.unwrap(), on.unwrap());
        println!(
            "| {name} | {:.2} s | {:.2} s | {:.2} | {} |",
            off.ttft.as_secs_f64(),
            on.ttft.as_secs_f64(),
            on.ttft.as_secs_f64() / off.ttft.as_secs_f64(),
            on.prompt_tokens
        );
    }
    let ((priming, a_primed), a) = (primed.unwrap(), rows[0].1[1].unwrap());
    println!(
        "\n(a) first prompt, first run, the prefix primed as the server started \
         (priming took {:.2} s): {:.2} s, against {:.2} s unprimed ({:.2}), {} prompt tokens",
        priming.as_secs_f64(),
        a_primed.ttft.as_secs_f64(),
        a.ttft.as_secs_f64(),
        a_primed.ttft.as_secs_f64() / a.ttft.as_secs_f64(),
        a_primed.prompt_tokens
    );
}

/// One prompt's wait.
#[derive(Debug, Clone, Copy)]
struct Measured {
    /// From sending the prompt to the first thing the model wrote.
    ttft: Duration,
    /// The request's size in the server's tokens.
    prompt_tokens: u64,
}

/// (Re)starts the bench's server, so nothing is in its caches.
fn restart(model: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/local-model");
    let port = PORT.to_string();
    let status = Command::new(&script)
        .args(["stop", &port])
        .status()
        .unwrap();
    assert!(status.success(), "scripts/local-model stop failed");
    let out = Command::new(&script)
        .args(["start", "--model", model, &port])
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/local-model start failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_string()
}

/// The agent as the binary starts it for the local model, warming or not.
fn start_agent(url: &str, root: &Path, warm: bool, sessions: Option<SessionSetup>) -> AgentHarness {
    start_with(agent_setup(url, root, warm, sessions))
}

/// The agent's setup as the binary builds it for the local model.
fn agent_setup(url: &str, root: &Path, warm: bool, sessions: Option<SessionSetup>) -> AgentSetup {
    let mut s = setup(url, root, ApprovalPolicy::Ask);
    s.system_prompt = agent::system_prompt();
    s.context_window = LOCAL_CONTEXT_WINDOW;
    s.questions = Questions {
        window: true,
        models: false,
        kind: true,
    };
    s.temperature = Some(0.0);
    s.max_steps = 1;
    s.warm_cache = warm;
    s.sessions = sessions;
    s
}

/// Sends `prompt` and waits for the turn; how long until the first token.
async fn measure(h: &mut AgentHarness, prompt: &str) -> Measured {
    h.prompt(prompt).await;
    let sent = Instant::now();
    let mut ttft = None;
    let mut prompt_tokens = 0;
    loop {
        let event = h.events.recv().await.expect("agent hung up");
        match event {
            AgentEvent::AssistantDelta(_)
            | AgentEvent::ReasoningDelta(_)
            | AgentEvent::ToolCallWriting { .. } => {
                ttft.get_or_insert_with(|| sent.elapsed());
            }
            AgentEvent::Usage(usage) => prompt_tokens = usage.prompt_tokens,
            AgentEvent::System { text, .. } => println!("  (notice: {text})"),
            AgentEvent::TurnDone => break,
            _ => {}
        }
    }
    Measured {
        ttft: ttft.expect("the model wrote nothing"),
        prompt_tokens,
    }
}

/// The first run after `scripts/local-model` started the server and
/// primed the fixed prefix (ADR 0034): how long priming took, then the
/// first prompt of a new session after the pause, with the warm-up on.
async fn primed_first_run(url: &str, pause: Duration) -> (Duration, Measured) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let primed = agent::prime(agent_setup(url, dir.path(), true, None)).await;
    let priming = started.elapsed();
    assert!(primed.succeeded(), "{primed}");
    println!("  (priming: {primed})");
    let (first, _) = session_in(dir.path(), url, true, pause).await;
    (priming, first)
}

/// A new session: the pause, a first prompt, a follow-up, quit (when the
/// server saves the slot as the fixed prefix's, ADR 0034).
async fn new_session(url: &str, warm: bool, pause: Duration) -> (Measured, Measured) {
    let dir = tempfile::tempdir().unwrap();
    session_in(dir.path(), url, warm, pause).await
}

/// [`new_session`] in `dir`.
async fn session_in(dir: &Path, url: &str, warm: bool, pause: Duration) -> (Measured, Measured) {
    let mut h = start_agent(url, dir, warm, None);
    tokio::time::sleep(pause).await;
    let first = measure(&mut h, "Reply with one word: hello.").await;
    let follow = measure(&mut h, "Now reply with one word: goodbye.").await;
    quit(h).await;
    (first, follow)
}

async fn quit(h: AgentHarness) {
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
}

/// Deletes the fixed prefix's saved slots in `scripts/local-model`'s slot
/// folder, as on the first run after installing.
fn forget_saved_prefixes() {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let home = var("DASHFLOAT_LLM_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let cache = var("XDG_CACHE_HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| Path::new(&var("HOME").unwrap()).join(".cache"));
            cache.join("dashfloat-llm")
        });
    let Ok(entries) = std::fs::read_dir(home.join("slots")) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with("dashfloat-prefix-")
        {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

/// A directory holding a saved session of about 6k tokens last run
/// against `url`.
fn saved_session(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let messages = session_messages();
    let here = directory(dir.path());
    let record = SessionRecord {
        id: SESSION_ID,
        seq: 0,
        created: 1,
        updated: dashfloat::session::now_secs(),
        directory: &here,
        model: LOCAL_MODEL,
        base_url: url,
        title: "latency",
        usage: Default::default(),
        last_usage: None,
        messages: &messages,
        pending: &[],
        log: &[],
        log_first: 0,
        checkpoints: &dashfloat::tools::CheckpointLog::default(),
    };
    store(dir.path())
        .write(SESSION_ID, &record.encode().unwrap())
        .unwrap();
    dir
}

fn store(dir: &Path) -> SessionStore {
    SessionStore::at(dir.join("sessions"))
}

fn directory(dir: &Path) -> String {
    dir.canonicalize().unwrap().to_string_lossy().into_owned()
}

/// The agent resuming the session in `dir`, warming or not.
fn resume(url: &str, dir: &Path, warm: bool) -> AgentHarness {
    let sessions = SessionSetup {
        store: store(dir),
        open: OpenSession::Resume(SESSION_ID.to_string()),
        save: true,
        directory: directory(dir),
        base_url: url.to_string(),
    };
    start_agent(url, dir, warm, Some(sessions))
}

/// An earlier run of the session in `dir`: resumed, one prompt, quit, so
/// the server saves its slot.
async fn run_and_quit(url: &str, dir: &Path) {
    let mut h = resume(url, dir, true);
    measure(&mut h, "Reply with one word: ready.").await;
    quit(h).await;
}

/// Resumes the session in `dir`; with `compact`, runs `/compact` first.
/// Then the pause and a prompt.
async fn resumed(url: &str, dir: &Path, warm: bool, pause: Duration, compact: bool) -> Measured {
    let mut h = resume(url, dir, warm);
    if compact {
        h.send(UiCommand::Compact { focus: None }).await;
        // Not `until`: reading ~6k tokens for the summary can go longer
        // than its wait for one event on two cores.
        while h.events.recv().await.expect("agent hung up") != AgentEvent::TurnDone {}
    }
    tokio::time::sleep(pause).await;
    let measured = measure(&mut h, "Reply with one word: again.").await;
    quit(h).await;
    measured
}

/// The system prompt, then turns that each read a slice of this
/// repository's source, until the tool output reaches
/// [`SESSION_OUTPUT_BYTES`].
fn session_messages() -> Vec<Message> {
    let source = include_str!("../src/agent/mod.rs");
    let mut out = vec![Message::new(Role::System, agent::system_prompt())];
    let mut taken = 0;
    for (n, chunk) in source.as_bytes().chunks(1_900).enumerate() {
        if taken >= SESSION_OUTPUT_BYTES {
            break;
        }
        let text = String::from_utf8_lossy(chunk).into_owned();
        taken += text.len();
        let id = format!("call_{n}");
        out.push(Message::new(
            Role::User,
            format!("Show me part {n} of src/agent/mod.rs"),
        ));
        out.push(Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCallMessage {
                id: id.clone(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "read_file".into(),
                    arguments:
                        json!({"path": "src/agent/mod.rs", "offset": n * 40 + 1, "limit": 40})
                            .to_string(),
                },
            }],
            tool_call_id: None,
        });
        out.push(Message {
            role: Role::Tool,
            content: Some(json!({"ok": true, "content": text}).to_string()),
            tool_calls: Vec::new(),
            tool_call_id: Some(id),
        });
        out.push(Message::new(Role::Assistant, format!("That is part {n}.")));
    }
    out
}
