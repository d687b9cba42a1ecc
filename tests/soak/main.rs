//! The soak: the real agent — its actor, stream and tool tasks, sessions on
//! disk, real files and `/bin/sh` — against the scripted server for many
//! turns, every reply drawn from a seeded mix of faults: disconnects mid
//! reply and mid call, 429/500/503, garbage frames, stalls, huge replies,
//! parallel and malformed calls; the person's side drawn from the same
//! seed: Esc while streaming, confirming and executing, Ctrl+C's cancel,
//! confirmations answered either way, `/compact` now and then (and Esc
//! during it). It checks
//!
//! - on every request, that every call has its answer in order (the
//!   scripted server's pairing check);
//! - after every turn, that the session file loads, is valid, and holds
//!   the conversation the last request carried;
//! - at the end, that memory in use and open descriptors, read every
//!   tenth of the run, were no higher in its second half than in its
//!   first, that no child process is left, and that no temporary file
//!   remains.
//!
//! `SOAK_TURNS` (default 150, as CI runs it; 1000 by hand) and
//! `SOAK_SEED` choose the run, `SOAK_WIRE` the wire (chat by default;
//! `responses` or `anthropic`: the scripted server speaks it); a failure
//! prints the seed. ADR 0036.
//!
//! [`kills`] kills the real binary at random moments instead, and checks
//! what each kill left (ADR 0040).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod kills;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::llm::wire::{Message, Messages};
use dashfloat::llm::wires::Wire;
use dashfloat::protocol::{AgentEvent, Decision, Severity, UiCommand};
use dashfloat::session::{OpenSession, SessionSetup, SessionStore, check_conversation};
use serde_json::{Value, json};

use support::agent::{AgentHarness, setup, start_with};
use support::random::{Rng, env_or};
use support::server::{
    Recorded, Reply, ScriptedServer, Step, content_chunk, finish_chunk, role_chunk,
    tool_call_chunk, usage_chunk,
};

/// The run CI does.
const DEFAULT_TURNS: usize = 150;
const DEFAULT_SEED: u64 = 0x50a4_0000_2026_1202;
/// Silence after which the person presses Esc: a stalled reply.
const STALL: Duration = Duration::from_millis(1500);
/// Slack on the memory compared across the run: the memory in use follows
/// what the session holds at that moment (its file went from 20 KB to 7 MB
/// and back in one 1,000-turn run, within the log's and the window's
/// bounds), and what the allocator keeps after `malloc_trim` varies with
/// how the heap was cut up.
const RSS_SLACK_KIB: u64 = 16 * 1024;

/// The calls the mix makes: each (tool, arguments).
const CALLS: [(&str, &str); 9] = [
    ("read_file", r#"{"path":"notes.txt"}"#),
    ("list_directory", r#"{"path":"."}"#),
    ("grep", r#"{"pattern":"line"}"#),
    ("glob", r#"{"pattern":"*.txt"}"#),
    ("execute_command", r#"{"command":"echo soak; ls"}"#),
    ("execute_command", r#"{"command":"sleep 0.2; echo slept"}"#),
    ("write_file", r#"{"path":"out.txt","content":"written\n"}"#),
    (
        "edit_file",
        r#"{"path":"notes.txt","search_block":"line 1\n","replace_block":"line one\n"}"#,
    ),
    (
        "edit_file",
        r#"{"path":"notes.txt","search_block":"line one\n","replace_block":"line 1\n"}"#,
    ),
];

/// Calls no tool can run: bad JSON, an unknown tool, a missing field.
const MALFORMED: [(&str, &str); 3] = [
    ("read_file", r#"{"path": "#),
    ("delete_everything", r#"{}"#),
    ("edit_file", r#"{"path":"notes.txt"}"#),
];

/// Prints the seed if the run fails, so it can be repeated.
struct SeedOnFailure(u64, usize);

impl Drop for SeedOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "soak failed: SOAK_SEED={} SOAK_TURNS={} reproduces it",
                self.0, self.1
            );
        }
    }
}

fn text_frames(rng: &mut Rng, words: usize) -> Vec<Value> {
    let mut out = vec![role_chunk()];
    for i in 0..words {
        let word = match rng.below(6) {
            0 => "**bold** ".to_owned(),
            1 => "`code` ".to_owned(),
            2 => "\n\n- item ".to_owned(),
            3 => "naïve 日本 ".to_owned(),
            _ => format!("word{i} "),
        };
        out.push(content_chunk(&word));
    }
    out.push(finish_chunk("stop"));
    out.push(usage_chunk(100, words as u64));
    out
}

fn call_frames(calls: &[(&str, &str)], episode: u64) -> Vec<Value> {
    let mut out = vec![role_chunk()];
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = format!("soak_{episode}_{i}");
        let (head, tail) = args.split_at(args.len() / 2);
        out.push(tool_call_chunk(i as u32, Some(&id), Some(name), head));
        out.push(tool_call_chunk(i as u32, None, None, tail));
    }
    out.push(finish_chunk("tool_calls"));
    out.push(usage_chunk(100, 10));
    out
}

/// Whether a request body offers tools: a turn's request, not a summary's.
fn offers_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// A reply of `pieces` × 64 KiB of text: from one megabyte to past what
/// one reply may hold (4 MiB, at 64 pieces).
fn huge(pieces: usize) -> Reply {
    let mut out = vec![role_chunk()];
    let piece = "x".repeat(64 * 1024);
    out.extend((0..pieces).map(|_| content_chunk(&piece)));
    out.push(finish_chunk("stop"));
    Reply::sse(out)
}

/// The server's side of the mix: a reply for each request. The first two
/// are the largest replies of the run, one just under the reply bound and
/// one past it, so the memory they leave with the allocator is there
/// before the measuring starts.
fn reply_for(rng: &mut Rng, request: &Recorded, episode: u64) -> Reply {
    match episode {
        1 => return huge(63),
        2 => return huge(72),
        _ => {}
    }
    if !offers_tools(&request.body) {
        // The summary of a compaction (or a request that asks for words).
        return match rng.below(10) {
            0 => Reply::status(503, "text/plain", "busy"),
            1 => Reply::sse(text_frames(rng, 8)).cut_after(3),
            _ => Reply::sse(text_frames(rng, 12)),
        };
    }
    let answer_now = request.body["tool_choice"] == "none";
    let roll = rng.below(100);
    match roll {
        _ if answer_now => Reply::sse(text_frames(rng, 6)),
        0..=29 => {
            let words = 1 + rng.below(40);
            Reply::sse(text_frames(rng, words))
        }
        30..=54 => Reply::sse(call_frames(&[rng.pick(&CALLS)], episode)),
        55..=61 => {
            let calls: Vec<_> = (0..2 + rng.below(2)).map(|_| rng.pick(&CALLS)).collect();
            Reply::sse(call_frames(&calls, episode))
        }
        62..=66 => Reply::sse(call_frames(&[rng.pick(&MALFORMED)], episode)),
        67..=70 => {
            let sent = 2 + rng.below(20);
            Reply::sse(text_frames(rng, 30)).cut_after(sent)
        }
        71..=73 => Reply::sse(call_frames(&[rng.pick(&CALLS)], episode)).cut_after(2),
        74..=76 => {
            let (status, why) = rng.pick(&[(429, "slow down"), (500, "oops"), (503, "busy")]);
            Reply::status(
                status,
                "application/json",
                &json!({"error": why}).to_string(),
            )
            .with_header("Retry-After", "0")
        }
        77..=80 => Reply::raw(
            200,
            &[("Content-Type", "text/event-stream")],
            vec![
                Step::Send(b"data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n".to_vec()),
                Step::Send(b"data: not json at all\n\n".to_vec()),
                Step::Send(b"\xff\xfe garbage without a blank line".to_vec()),
            ],
        ),
        81..=83 => {
            let sent = 2 + rng.below(4);
            Reply::sse(text_frames(rng, 10)).hang_after(sent)
        }
        84 => huge(16 + rng.below(56)),
        _ => Reply::sse(text_frames(rng, 5)),
    }
}

/// What a run went through, counted, so a run that met no fault fails.
#[derive(Debug, Default)]
struct Tally {
    escapes: usize,
    approved: usize,
    rejected: usize,
    tool_results: usize,
    errors: usize,
    compactions: usize,
}

impl Tally {
    fn see(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolResult { .. } => self.tool_results += 1,
            AgentEvent::System {
                severity: Severity::Error,
                ..
            } => self.errors += 1,
            AgentEvent::Compacted { .. } => self.compactions += 1,
            _ => {}
        }
    }
}

/// How the person meets one turn: answers confirmations either way,
/// presses Esc at random moments and after a stall. Returns the events.
async fn play_turn(h: &mut AgentHarness, rng: &mut Rng, tally: &mut Tally) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let mut cancelled = false;
    loop {
        let event = match tokio::time::timeout(STALL, h.events.recv()).await {
            Ok(Some(event)) => event,
            Ok(None) => panic!("the agent hung up; events so far: {events:#?}"),
            Err(_) => {
                // Nothing for a while: a stalled reply, or a command that
                // runs; Esc, as a person would.
                h.send(UiCommand::Cancel).await;
                tally.escapes += 1;
                cancelled = true;
                continue;
            }
        };
        tally.see(&event);
        let done = event == AgentEvent::TurnDone;
        match &event {
            AgentEvent::Confirm(request) => match rng.below(10) {
                0..=5 => {
                    h.decide(&request.id, Decision::Approve).await;
                    tally.approved += 1;
                }
                6..=8 => {
                    h.decide(&request.id, Decision::Reject).await;
                    tally.rejected += 1;
                }
                _ => {
                    h.send(UiCommand::Cancel).await;
                    tally.escapes += 1;
                }
            },
            AgentEvent::AssistantDelta(_) | AgentEvent::ToolCall { .. }
                if !cancelled && rng.chance(60) =>
            {
                h.send(UiCommand::Cancel).await;
                tally.escapes += 1;
                cancelled = true;
            }
            _ => {}
        }
        events.push(event);
        if done {
            return events;
        }
    }
}

/// Waits until the agent is idle and has saved, and takes every event
/// before: it reads the next command only after the save that follows a
/// turn, and answers a listing with the sessions, then (once idle) a
/// `TurnDone`. An Esc that arrived after its turn had ended is answered
/// with a `TurnDone` of its own; it is taken here too.
async fn settled(h: &mut AgentHarness) {
    h.send(UiCommand::ListSessions { all: true }).await;
    h.until(|e| matches!(e, AgentEvent::Sessions { .. })).await;
    h.until(|e| *e == AgentEvent::TurnDone).await;
}

/// The messages of the turn's last request that offered tools, if no
/// request without tools (a summary) came after it.
fn last_conversation(requests: &[Recorded]) -> Option<Vec<Message>> {
    let chats: Vec<&Recorded> = requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    let last = chats.last()?;
    if !offers_tools(&last.body) {
        return None;
    }
    let mut messages: Vec<Message> = serde_json::from_value(last.body["messages"].clone()).ok()?;
    if last.body["tool_choice"] == "none" {
        // The ask to answer is sent with that request only.
        messages.pop();
    }
    Some(messages)
}

/// `messages` as a request sends them: user messages in a row as one.
fn as_sent(messages: &[Message]) -> Vec<Message> {
    serde_json::from_value(serde_json::to_value(Messages::from(messages)).unwrap()).unwrap()
}

// The one unsafe block of the tests: a glibc call with no pointer.
#[allow(unsafe_code)]
unsafe extern "C" {
    /// glibc's: returns the free memory of every arena to the system.
    fn malloc_trim(pad: usize) -> i32;
}

/// This process's resident memory once freed memory is handed back: the
/// memory still in use, not the allocator's high-water mark (a huge reply
/// read once leaves its pages with the allocator otherwise).
fn live_rss_kib() -> u64 {
    // SAFETY: malloc_trim takes no pointer and only releases free pages.
    #[allow(unsafe_code)]
    unsafe {
        malloc_trim(0);
    }
    support::status_kib("self", "VmRSS:")
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// This process's children (the commands' shells), by pid.
fn children() -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid …`; comm may hold spaces.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                == Some(me.as_str())
        })
        .collect()
}

/// Names in `dir` that no finished write leaves behind.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp") || name.starts_with(".session-"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_under_random_faults_lose_nothing() {
    // As the binary's `main` does, so the memory measured is the
    // binary's.
    dashfloat::memory::give_large_buffers_own_pages();
    let turns: usize = env_or("SOAK_TURNS", DEFAULT_TURNS);
    let seed: u64 = env_or("SOAK_SEED", DEFAULT_SEED);
    let _guard = SeedOnFailure(seed, turns);
    let mut rng = Rng(seed);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let notes: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    std::fs::write(project.path().join("notes.txt"), notes).unwrap();
    let store = SessionStore::at(home.path().join("sessions"));

    // `SOAK_WIRE` (chat, responses or anthropic) runs the same soak on
    // another wire (ADR 0052).
    let wire = std::env::var("SOAK_WIRE")
        .ok()
        .and_then(|name| <Wire as clap::ValueEnum>::from_str(&name, true).ok())
        .unwrap_or_default();
    let server = ScriptedServer::speaking(wire, Vec::new()).await;
    let server_rng = Arc::new(Mutex::new(Rng(seed ^ 0x5e4e_4e4e)));
    let episodes = Arc::new(Mutex::new(0u64));
    server.respond_with(move |request| {
        let episode = {
            let mut n = episodes.lock().unwrap();
            *n += 1;
            *n
        };
        reply_for(&mut server_rng.lock().unwrap(), request, episode)
    });
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.context.wire = wire;
    }
    s.sessions = Some(SessionSetup {
        store: store.clone(),
        open: OpenSession::New,
        save: true,
        directory: project.path().display().to_string(),
        base_url: server.base_url(),
    });
    // Small enough that the conversation is compacted again and again.
    s.context_window = 12_000;
    s.tools.exec_timeout = Duration::from_secs(5);
    let mut h = start_with(s);

    let mut tally = Tally::default();
    let mut curve = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    let started = std::time::Instant::now();
    for turn in 1..=turns {
        if rng.chance(25) {
            h.send(UiCommand::Compact { focus: None }).await;
            if rng.chance(3) {
                h.send(UiCommand::Cancel).await;
            }
            settled(&mut h).await;
        }
        h.prompt(&format!("turn {turn}: do something with notes.txt"))
            .await;
        play_turn(&mut h, &mut rng, &mut tally).await;
        settled(&mut h).await;
        let requests = server.take_requests();

        let listing = store.list(None);
        let id = &listing.sessions.first().expect("the session is saved").id;
        let saved = store
            .load(id)
            .unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        check_conversation(&saved.messages).unwrap();
        if let Some(sent) = last_conversation(&requests) {
            let saved = as_sent(&saved.messages);
            assert!(
                saved.len() >= sent.len() && saved[..sent.len()] == sent[..],
                "turn {turn}: the saved conversation does not hold the last request's"
            );
        }
        if turn % (turns / 10).max(1) == 0 || turn == turns {
            curve.push((turn, live_rss_kib(), open_fds()));
            sizes.push(std::fs::metadata(store.path_of(id)).unwrap().len());
        }
    }
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();

    println!("| turn | RSS in use (KiB) | open fds | session file (bytes) |");
    println!("| --- | --- | --- | --- |");
    for ((turn, rss, fds), size) in curve.iter().zip(&sizes) {
        println!("| {turn} | {rss} | {fds} | {size} |");
    }
    println!("{turns} turns in {:.0} s", started.elapsed().as_secs_f64());
    println!("{tally:?}");
    // The mix reached the agent: each kind of event happened.
    assert!(
        tally.escapes > 0 && tally.approved > 0 && tally.rejected > 0,
        "{tally:?}"
    );
    assert!(tally.tool_results > 0 && tally.errors > 0, "{tally:?}");
    // Flat from a tenth of the run on: the second half never needs more
    // than the first did. Memory in use moves with what the session holds
    // (a long reply in the log, a conversation before its compaction), so
    // a leak shows as a second half above the first, not as one reading.
    let half = |later: bool| {
        curve
            .iter()
            .filter(|(turn, ..)| (*turn > turns / 2) == later)
            .fold((0, 0), |(rss, fds), &(_, r, f)| (rss.max(r), fds.max(f)))
    };
    let ((rss_first, fds_first), (rss_second, fds_second)) = (half(false), half(true));
    assert!(
        rss_second <= rss_first + RSS_SLACK_KIB,
        "memory in use grew from at most {rss_first} KiB to {rss_second} KiB: {curve:?}"
    );
    assert!(
        fds_second <= fds_first && open_fds() <= fds_first,
        "open descriptors grew: {curve:?}"
    );
    assert_eq!(children(), Vec::<String>::new(), "child processes left");
    assert_eq!(temporaries(store.dir()), Vec::<String>::new());
    assert_eq!(temporaries(project.path()), Vec::<String>::new());
}
