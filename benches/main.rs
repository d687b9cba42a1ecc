//! dashfloat's performance figures (issue 2): start-up — process start →
//! first frame and the resident set when idle, with a provider and with a
//! local server, against a minimal full-screen program (issue 38) —, frame
//! time over a 100,000-line transcript while tokens stream, markdown render
//! time of a 10 KB reply, throughput of the SSE → agent → UI-state path,
//! resident memory idle and after a 100,000-line transcript, and CPU while
//! idle, the save time of one step of a session of 10, 1,000 and 10,000
//! messages, and `--continue` of a 10,000-message session to its first
//! frame, and the first frame with three MCP servers configured. Each
//! figure is printed with
//! a baseline measured in the same run, as a ratio where one makes sense.
//! Also the parse of one large SSE frame that comes in small reads.
//!
//! Run with `cargo bench --bench dashfloat-bench` (release build);
//! `cargo bench --bench dashfloat-bench startup` runs one figure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod startup;
#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use dashfloat::agent::{self, ApprovalPolicy};
use dashfloat::bounds::JOURNAL_COMPACT_MIN_BYTES;
use dashfloat::llm::stream;
use dashfloat::llm::wire::{FunctionCall, Message, Role, ToolCallMessage};
use dashfloat::log::Log;
use dashfloat::protocol::{AgentEvent, UiCommand};
use dashfloat::protocol::{LogItem, ReplyEnd, ToolStatus};
use dashfloat::session::{
    JournalFile, SessionLog, SessionRecord, SessionStore, StepRecord, Tail, check_conversation_from,
};
use dashfloat::tools::{Analyser, Verdict};
use dashfloat::ui::markdown::{code_blocks, render_streaming};
use dashfloat::ui::state::{SessionInfo, State};
use dashfloat::ui::theme::Theme;
use dashfloat::ui::update::{Msg, update};
use dashfloat::ui::view::view;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use support::pty::PtySession;
use support::server::{Reply, ScriptedServer, Step, content_chunk, sse_frame};
use tokio::sync::mpsc;

const TRANSCRIPT_LINES: usize = 100_000;

/// The reply `tests/ui/markdown.rs` snapshots: every construct the renderer
/// knows.
const MARKDOWN_DOCUMENT: &str = include_str!("../tests/fixtures/markdown-document.md");

fn main() {
    // Started by the start-up figure as its floor program.
    if std::env::var_os(startup::FLOOR_VAR).is_some() {
        startup::floor();
        return;
    }
    // As the binary's `main` does: the figures are the shipped allocator's.
    dashfloat::memory::give_large_buffers_own_pages();
    // `cargo bench` passes `--bench`; a filter argument selects one figure.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    println!("dashfloat benchmarks (release build; figures vary ±20% on a busy machine)\n");
    if want("startup") {
        startup::startup();
    }
    if want("frame_time") {
        frame_time();
    }
    if want("markdown") {
        markdown();
    }
    if want("throughput") {
        throughput();
    }
    if want("large_frame") {
        large_frame();
    }
    if want("memory") {
        memory_and_idle_cpu();
    }
    if want("session_save") {
        session_save();
    }
    if want("continue") {
        continue_first_frame();
    }
    if want("analyse_git") {
        analyse_git();
    }
    if want("mcp") {
        mcp_first_frame();
    }
}

/// The first frame with three MCP servers configured (the Python SDK's
/// server over stdio, installed by `scripts/mcp-servers`), against none,
/// in the same run: the servers start after the first frame, so the
/// difference is reading their tables. Interleaved, so a busy moment of
/// the machine weighs on both alike.
fn mcp_first_frame() {
    let install = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mcp-servers"),
    )
    .output()
    .unwrap();
    assert!(
        install.status.success(),
        "scripts/mcp-servers install failed"
    );
    let out = String::from_utf8(install.stdout).unwrap();
    let python = out
        .lines()
        .find_map(|l| l.strip_prefix("python="))
        .unwrap()
        .to_owned();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/servers/sdk_server.py");
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with");
    let without = dir.path().join("without");
    std::fs::create_dir_all(with.join("dashfloat")).unwrap();
    std::fs::create_dir_all(without.join("dashfloat")).unwrap();
    let tables: String = ["one", "two", "three"]
        .iter()
        .map(|name| {
            format!(
                "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{:?}, \"--transport\", \"stdio\"]\n",
                python,
                script.to_string_lossy()
            )
        })
        .collect();
    std::fs::write(with.join("dashfloat/config.toml"), tables).unwrap();
    let server = ScriptedServer::start_blocking(vec![]);
    let url = server.base_url();
    let runs = 15;
    let (mut three, mut none) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for (home, times) in [(&with, &mut three), (&without, &mut none)] {
            let home = home.to_str().unwrap();
            let env = [("HOME", home), ("XDG_CONFIG_HOME", home)];
            times.extend(startup::times_to_screen(
                1,
                &support::dashfloat_bin(),
                &["--base-url", &url, "--no-save"],
                &env,
                dir.path(),
                "idle",
            ));
        }
    }
    three.sort();
    none.sort();
    let (a, b) = (percentile(&three, 0.5), percentile(&none, 0.5));
    println!("\nfirst frame with three MCP servers configured ({runs} runs each, interleaved)");
    println!(
        "  median {}  p90 {}   | none: median {}  p90 {}   difference {:+.2} ms   target ≤ +5 ms",
        ms(a),
        ms(percentile(&three, 0.9)),
        ms(b),
        ms(percentile(&none, 0.9)),
        (a.as_secs_f64() - b.as_secs_f64()) * 1e3
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn session() -> SessionInfo {
    SessionInfo {
        model: "bench-model".into(),
        host: "127.0.0.1:8088".into(),
        cwd: "~/project".into(),
        context_window: 128_000,
        approval: dashfloat::protocol::ApprovalMode {
            policy: dashfloat::protocol::ApprovalPolicy::Ask,
            sandbox: "off".into(),
        },
        prices: Default::default(),
    }
}

/// A state whose transcript holds `lines` lines of markdown replies.
fn state_with_transcript(lines: usize) -> State {
    let mut state = State::new(session(), Theme::new(false), (120, 40));
    let reply: String = (0..100)
        .map(|i| match i % 10 {
            0 => "## A heading\n".to_string(),
            5 => "- a list item with `code` in it\n".to_string(),
            _ => format!("Line {i} of a reply with **bold** text and a [link](https://x.y).\n"),
        })
        .collect();
    while state.transcript().total_lines() < lines {
        update(
            &mut state,
            Msg::Agent(AgentEvent::AssistantDelta(reply.clone())),
        );
        update(
            &mut state,
            Msg::Agent(AgentEvent::AssistantEnd(
                dashfloat::protocol::ReplyEnd::Complete,
            )),
        );
        state.prepare();
    }
    state
}

/// Per-frame time (prepare + draw to a terminal backend writing escape
/// codes to a sink) with one token appended before each frame.
fn frame_times(state: &mut State, frames: usize) -> Vec<Duration> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::sink())).unwrap();
    terminal
        .resize(ratatui::layout::Rect::new(0, 0, 120, 40))
        .unwrap();
    update(
        state,
        Msg::Agent(AgentEvent::Phase(dashfloat::protocol::Phase::Streaming)),
    );
    let mut times = Vec::with_capacity(frames);
    for i in 0..frames {
        let token = if i % 12 == 11 { " word\n" } else { " word" };
        update(state, Msg::Agent(AgentEvent::AssistantDelta(token.into())));
        let t = Instant::now();
        state.prepare();
        terminal.draw(|f| view(state, f)).unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    times
}

fn frame_time() {
    let build = Instant::now();
    let mut big = state_with_transcript(TRANSCRIPT_LINES);
    let built = build.elapsed();
    let mut small = state_with_transcript(0);
    let frames = 2000;
    let big_times = frame_times(&mut big, frames);
    let small_times = frame_times(&mut small, frames);
    println!(
        "\nframe time while tokens stream ({frames} frames, 120x40; transcript of {} lines built in {})",
        big.transcript().total_lines(),
        ms(built)
    );
    println!(
        "  100k-line transcript: p50 {}  p99 {}  max {}   | empty transcript: p50 {}  p99 {}   p99 ratio {:.2}x   target p99 ≤ 4 ms",
        ms(percentile(&big_times, 0.5)),
        ms(percentile(&big_times, 0.99)),
        ms(*big_times.last().unwrap()),
        ms(percentile(&small_times, 0.5)),
        ms(percentile(&small_times, 0.99)),
        percentile(&big_times, 0.99).as_secs_f64() / percentile(&small_times, 0.99).as_secs_f64()
    );
}

/// Render time of a 10 KB reply (the markdown test document repeated),
/// as a streaming reply is rendered each frame, against the parse alone
/// (`code_blocks` runs the same pulldown-cmark parse and keeps only the
/// code).
fn markdown() {
    let mut text = String::new();
    while text.len() < 10_000 {
        text.push_str(MARKDOWN_DOCUMENT);
    }
    let theme = Theme::new(false);
    let runs = 200;
    let mut render: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let out = render_streaming(std::hint::black_box(&text), 100, &theme);
            let took = t.elapsed();
            assert!(!out.lines.is_empty());
            took
        })
        .collect();
    let mut parse: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let blocks = code_blocks(std::hint::black_box(&text));
            let took = t.elapsed();
            assert!(!blocks.is_empty());
            took
        })
        .collect();
    render.sort();
    parse.sort();
    let (r, p) = (percentile(&render, 0.5), percentile(&parse, 0.5));
    println!(
        "\nmarkdown render of a {} KB reply at 100 columns ({runs} runs)",
        text.len() / 1000
    );
    println!(
        "  render_streaming median {}  p90 {}   | the markdown parse alone: median {}   ratio {:.1}x",
        ms(r),
        ms(percentile(&render, 0.9)),
        ms(p),
        r.as_secs_f64() / p.as_secs_f64()
    );
}

/// `tokens` one-token content chunks, four bytes each, a line of 16.
fn token_chunks(tokens: usize) -> impl Iterator<Item = serde_json::Value> {
    (0..tokens).map(|i| content_chunk(if i % 16 == 15 { "tok\n" } else { "tok " }))
}

/// A reply of `tokens` one-token content chunks, sent in 64 KiB writes.
fn token_reply(tokens: usize) -> Reply {
    let mut body = Vec::new();
    for chunk in token_chunks(tokens) {
        body.extend_from_slice(&sse_frame(&chunk));
    }
    body.extend_from_slice(&sse_frame(&support::server::finish_chunk("stop")));
    body.extend_from_slice(b"data: [DONE]\n\n");
    let steps = body
        .chunks(64 * 1024)
        .map(|c| Step::Send(c.to_vec()))
        .collect();
    Reply::sse_steps(steps)
}

/// Repetitions of the throughput measurement; the median is reported.
const THROUGHPUT_RUNS: usize = 5;

fn throughput() {
    // 500,000 tokens stay under the 4 MiB reply cap (4 bytes each).
    let tokens = 500_000;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = ScriptedServer::start_blocking(vec![token_reply(tokens); 2 * THROUGHPUT_RUNS]);
    let url = server.base_url();
    let mut runs: Vec<[Duration; 3]> = (0..THROUGHPUT_RUNS)
        .map(|_| throughput_once(&rt, &url, tokens))
        .collect();
    let mut median = |i: usize| {
        runs.sort_by_key(|r| r[i]);
        runs[runs.len() / 2][i]
    };
    let (json_floor, stream_only, full) = (median(0), median(1), median(2));
    let rate = |d: Duration| tokens as f64 / d.as_secs_f64();
    println!(
        "\nthroughput, SSE parse → agent → UI state ({tokens} one-token chunks over loopback, median of {THROUGHPUT_RUNS})"
    );
    println!(
        "  full path {:.0} tokens/s   | stream task alone {:.0} tokens/s (full/alone {:.2})   | serde_json decoding the chunks alone {:.0} tokens/s (full/decode {:.2})   target ≥ 1,000,000 tokens/s",
        rate(full),
        rate(stream_only),
        rate(full) / rate(stream_only),
        rate(json_floor),
        rate(full) / rate(json_floor)
    );
}

/// One measurement: the JSON-decoding floor, the stream task alone, and
/// the whole path.
fn throughput_once(rt: &tokio::runtime::Runtime, url: &str, tokens: usize) -> [Duration; 3] {
    // Floor: decoding the same chunk JSON with serde_json and nothing else.
    let frame = serde_json::to_string(&content_chunk("tok ")).unwrap();
    let t = Instant::now();
    let mut decoded = 0usize;
    for _ in 0..tokens {
        let v: dashfloat::llm::wire::ChatChunk =
            serde_json::from_str(std::hint::black_box(&frame)).unwrap();
        decoded += v.choices.len();
    }
    let json_floor = t.elapsed();
    assert_eq!(decoded, tokens);

    // Baseline: the stream task alone, its events drained and dropped.
    let stream_only = rt.block_on(async {
        let (tx, mut rx) = mpsc::channel(256);
        let t = Instant::now();
        tokio::spawn(stream::run(
            support::agent::endpoint(url),
            br#"{"messages":[]}"#.to_vec(),
            dashfloat::llm::stream::EpisodeSetup::native(
                dashfloat::llm::tool_calls::MadeUpIds::calls(0),
            ),
            tx,
        ));
        let mut text_bytes = 0usize;
        while let Some(ev) = rx.recv().await {
            if let dashfloat::protocol::StreamEvent::Content(text) = ev {
                text_bytes += text.len();
            }
        }
        assert_eq!(text_bytes, tokens * 4);
        t.elapsed()
    });

    // The whole path: stream task → agent → UI state.
    let full = rt.block_on(async {
        let (commands, command_rx) = mpsc::channel(8);
        let (event_tx, mut events) = mpsc::channel(1024);
        let dir = tempfile::tempdir().unwrap();
        let setup = support::agent::setup(url, dir.path(), ApprovalPolicy::Ask);
        tokio::spawn(agent::run(setup, command_rx, event_tx));
        let mut state = State::new(session(), Theme::new(false), (120, 40));
        let t = Instant::now();
        commands
            .send(UiCommand::Prompt { text: "go".into() })
            .await
            .unwrap();
        while let Some(ev) = events.recv().await {
            let done = ev == AgentEvent::TurnDone;
            update(&mut state, Msg::Agent(ev));
            if done {
                break;
            }
        }
        let elapsed = t.elapsed();
        assert_eq!(
            state.transcript().last_reply().map(str::len),
            Some(tokens * 4)
        );
        elapsed
    });
    [json_floor, stream_only, full]
}

/// The events the SSE parser makes of `reads`, through the frame cutter.
fn parse_reads(rt: &tokio::runtime::Runtime, reads: Vec<bytes::Bytes>) -> usize {
    use eventsource_stream::Eventsource;
    use futures_util::StreamExt;
    let inner = futures_util::stream::iter(reads.into_iter().map(Ok::<_, reqwest::Error>));
    rt.block_on(async {
        let guarded = dashfloat::llm::guarded::GuardedBytes::new(
            Box::pin(inner),
            Duration::from_secs(60),
            dashfloat::bounds::FRAME_MAX_BYTES,
            dashfloat::llm::guarded::ReplyBudget::new(dashfloat::bounds::REPLY_MAX_BYTES),
        );
        let events = guarded.eventsource();
        events
            .filter(|e| std::future::ready(e.is_ok()))
            .count()
            .await
    })
}

/// Frames just under the cap — one line of 1 MiB (a delta as a model that
/// writes a whole file in one chunk sends), and 1 MiB of short lines —
/// each parsed from 1 KiB reads and from one read, against the long line
/// in one read.
fn large_frame() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let one_line = bytes::Bytes::from(sse_frame(&content_chunk(
        &"x".repeat(dashfloat::bounds::FRAME_MAX_BYTES - 1024),
    )));
    let mut short_lines = b"data: x\n".repeat((dashfloat::bounds::FRAME_MAX_BYTES - 1024) / 8);
    short_lines.push(b'\n');
    let short_lines = bytes::Bytes::from(short_lines);
    let runs = 5;
    let time = |body: &bytes::Bytes, read: usize| {
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let reads: Vec<bytes::Bytes> = (0..body.len())
                    .step_by(read)
                    .map(|at| body.slice(at..body.len().min(at + read)))
                    .collect();
                let t = Instant::now();
                assert_eq!(parse_reads(&rt, reads), 1);
                t.elapsed()
            })
            .collect();
        times.sort();
        percentile(&times, 0.5)
    };
    let timed = [("one line", &one_line), ("short lines", &short_lines)]
        .map(|(name, body)| (name, time(body, 1024), time(body, body.len())));
    let baseline = timed[0].2;
    println!(
        "
an SSE frame of {} KiB through the frame cutter and the parser (median of {runs}; ratio to one line in one read, {})",
        one_line.len() >> 10,
        ms(baseline)
    );
    for (name, small, whole) in timed {
        println!(
            "  {name:<11}  in 1 KiB reads {} ({:.2}x)   in one read {} ({:.2}x)   target ≤ 4x",
            ms(small),
            small.as_secs_f64() / baseline.as_secs_f64(),
            ms(whole),
            whole.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}

/// User + system CPU time of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn memory_and_idle_cpu() {
    let lines = TRANSCRIPT_LINES;
    let mut reply = String::new();
    for i in 0..lines {
        reply.push_str(&format!("line {i}\n"));
    }
    // One content frame per 1,000 lines keeps the script small.
    let frames: Vec<_> = reply
        .split_inclusive('\n')
        .collect::<Vec<_>>()
        .chunks(1000)
        .map(|c| content_chunk(&c.concat()))
        .chain([support::server::finish_chunk("stop")])
        .collect();
    let server = ScriptedServer::start_blocking(vec![Reply::sse(frames)]);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let session = PtySession::spawn(
        &support::dashfloat_bin(),
        &["--base-url", &server.base_url()],
        &[("HOME", home), ("XDG_CONFIG_HOME", home)],
        dir.path(),
        120,
        40,
    );
    session.wait_for("idle", Duration::from_secs(10)).unwrap();
    let pid = session.pid().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let idle_rss = support::status_kib(&pid.to_string(), "VmRSS:");
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(10));
    let idle_ticks = cpu_ticks(pid) - before;

    session.send(b"print a lot\r");
    session
        .wait_for(&format!("line {}", lines - 1), Duration::from_secs(60))
        .unwrap();
    session.wait_for("idle", Duration::from_secs(60)).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let big_rss = support::status_kib(&pid.to_string(), "VmRSS:");
    let peak = support::status_kib(&pid.to_string(), "VmHWM:");
    session.send(b"\x04");
    let transcript_kb = reply.len() / 1024;
    println!("\nmemory and idle CPU (release binary in a 120x40 pty)");
    println!(
        "  RSS idle after start: {:.1} MB   target ≤ 15 MB",
        idle_rss as f64 / 1024.0
    );
    println!(
        "  RSS after a {lines}-line transcript ({transcript_kb} KiB of text): {:.1} MB (peak {:.1} MB), {:.1} bytes of RSS per byte of text",
        big_rss as f64 / 1024.0,
        peak as f64 / 1024.0,
        (big_rss.saturating_sub(idle_rss) * 1024) as f64 / reply.len() as f64
    );
    println!(
        "  CPU while idle for 10 s: {} clock ticks ({} ms)   target ~0",
        idle_ticks,
        idle_ticks * 10
    );
}

/// A session of `messages` messages whose texts are `text_bytes` long:
/// prompts, replies that call `read_file`, the results (JSON objects, as
/// tools answer, so that the warm-up of a resumed session passes the
/// scripted server's pairing check), in turn; the log has a row for each.
fn bench_session(messages: usize, text_bytes: usize) -> (Vec<Message>, Vec<LogItem>) {
    let text = "x".repeat(text_bytes);
    let result = serde_json::json!({ "content": text }).to_string();
    let mut out = vec![Message::new(Role::System, "system prompt")];
    let mut log = Vec::new();
    let mut i = 0;
    while out.len() < messages {
        let id = format!("call_{i}");
        match i % 3 {
            0 => {
                out.push(Message::new(Role::User, text.clone()));
                log.push(LogItem::User(text.clone()));
            }
            1 => {
                out.push(Message {
                    role: Role::Assistant,
                    content: Some(text.clone()),
                    tool_calls: vec![ToolCallMessage {
                        id: id.clone(),
                        kind: "function".into(),
                        function: FunctionCall {
                            name: "read_file".into(),
                            arguments: r#"{"path":"src/main.rs"}"#.into(),
                        },
                    }],
                    tool_call_id: None,
                    carried: Vec::new(),
                    images: Vec::new(),
                });
                log.push(LogItem::Tool {
                    id: id.clone(),
                    name: "read_file".into(),
                    summary: "src/main.rs".into(),
                    outcome: Some((ToolStatus::Ok, "fn main() {}".into())),
                });
            }
            _ => {
                out.push(Message {
                    role: Role::Tool,
                    content: Some(result.clone()),
                    tool_calls: Vec::new(),
                    tool_call_id: Some(format!("call_{}", i - 1)),
                    carried: Vec::new(),
                    images: Vec::new(),
                });
                log.push(LogItem::Assistant {
                    text: format!("reply {i}"),
                    reasoning: String::new(),
                    end: ReplyEnd::Complete,
                });
            }
        }
        i += 1;
    }
    // End on an answer the first frame shows, in one word: the terminal
    // diff moves the cursor over blank cells instead of writing them, so
    // the spaces of a phrase never reach the pty.
    out.push(Message::new(Role::Assistant, "the-last-answer"));
    log.push(LogItem::Assistant {
        text: "the-last-answer".into(),
        reasoning: String::new(),
        end: ReplyEnd::Complete,
    });
    (out, log)
}

fn record<'a>(
    id: &'a str,
    directory: &'a str,
    messages: &'a [Message],
    log: &'a [LogItem],
) -> SessionRecord<'a> {
    SessionRecord {
        id,
        seq: 0,
        created: 1,
        updated: dashfloat::session::now_secs(),
        directory,
        model: "bench-model",
        base_url: "http://127.0.0.1:8088/v1",
        wire: dashfloat::llm::wires::Wire::Chat,
        title: "bench",
        usage: Default::default(),
        last_usage: None,
        messages,
        pending: &[],
        log,
        log_first: 0,
        checkpoints: &NO_CHECKPOINTS,
    }
}

/// A session without checkpoints.
static NO_CHECKPOINTS: std::sync::LazyLock<dashfloat::tools::CheckpointLog> =
    std::sync::LazyLock::new(Default::default);

/// The sessions the save of a step is measured at, in messages: the cost
/// of saving one step must not grow with the session (issue 38).
const SAVE_SIZES: [usize; 3] = [10, 1_000, 10_000];

/// The log the agent would hold beside `messages`: its newest items within
/// the log's bounds.
fn bounded_log(log: &[LogItem]) -> &[LogItem] {
    &log[log.len().saturating_sub(dashfloat::bounds::LOG_ITEMS_MAX)..]
}

/// One step of the bench session: a message of 2,500 bytes and its log
/// row join it; the agent's part of saving it (check the conversation
/// from where it changed, encode the record), timed, and the record.
fn bench_step(seq: u64, messages: &mut Vec<Message>, log: &mut SessionLog) -> (Duration, Vec<u8>) {
    let at = messages.len();
    messages.push(Message::new(Role::User, "x".repeat(2_500)));
    log.push(LogItem::User(format!("step {seq}")));
    let t = Instant::now();
    check_conversation_from(messages, &[], at).unwrap();
    let line = StepRecord {
        seq,
        updated: seq,
        model: "bench-model",
        base_url: "http://127.0.0.1:8088/v1",
        wire: dashfloat::llm::wires::Wire::Chat,
        directory: "/p",
        usage: Default::default(),
        last_usage: None,
        tail: Some(Tail {
            at,
            messages: &messages[at..],
            pending: &[],
        }),
        log,
        checkpoints: &[],
    }
    .encode()
    .unwrap();
    log.saved_all();
    (t.elapsed(), line)
}

/// One step's save at each of [`SAVE_SIZES`] (issue 38), [`bench_step`]:
/// - the agent's part (what `Agent::save` does before it hands the record
///   to the writer);
/// - the writer's part: append the record to the journal and fsync it;
/// - folding the journal into the snapshot, which comes once the journal
///   is as large as the snapshot (at least 1 MiB): timed with a journal of
///   that size, and spread over the steps whose records made it;
/// - as the baseline, the whole-file save every step took before the
///   journal: encode the whole session, write, fsync, rename, fsync the
///   directory.
///
/// Each figure is the median of its runs, and its ratio to the
/// 10-message session's.
fn session_save() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::at(dir.path().join("sessions"));
    println!("\nsession save: one step of a session of N messages of 2,500 bytes");
    let mut base: Option<[Duration; 4]> = None;
    for (n, size) in SAVE_SIZES.into_iter().enumerate() {
        let id = format!("20261201-000000-aaaaa{n}");
        let (mut messages, log) = bench_session(size, 2_500);
        let items = bounded_log(&log).to_vec();
        let lock = store.lock(&id).unwrap();
        let mut wholes: Vec<Duration> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let bytes = record(&id, "/p", &messages, &items).encode().unwrap();
                store.write(&id, &bytes).unwrap();
                t.elapsed()
            })
            .collect();
        wholes.sort();
        let snapshot = record(&id, "/p", &messages, &items).encode().unwrap();
        let mut log = SessionLog::saved(items, 0);
        let mut journal = JournalFile::begin(&store, &id, &snapshot, Log::off()).unwrap();
        let runs = 50;
        let (mut agent, mut writer) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        for seq in 1..=runs as u64 {
            let (took, line) = bench_step(seq, &mut messages, &mut log);
            agent.push(took);
            let t = Instant::now();
            journal.append(&line).unwrap();
            writer.push(t.elapsed());
        }
        // The journal as large as folding lets it grow, its records
        // written without the fsyncs (which are not what is timed), then
        // folded as the writer does when it opens a session.
        drop(journal);
        let fold_at = JOURNAL_COMPACT_MIN_BYTES.max(snapshot.len() as u64);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(store.journal_of(&id))
            .unwrap();
        let (mut seq, mut written) = (runs as u64, 0);
        while file.metadata().unwrap().len() < fold_at {
            seq += 1;
            file.write_all(&bench_step(seq, &mut messages, &mut log).1)
                .unwrap();
            written += 1;
        }
        drop(file);
        let t = Instant::now();
        JournalFile::open(&store, &id, Log::off()).unwrap();
        let folding = t.elapsed();
        drop(lock);
        agent.sort();
        writer.sort();
        let per_step = folding / (written + runs as u32);
        let figures = [
            percentile(&agent, 0.5),
            percentile(&writer, 0.5),
            per_step,
            percentile(&wholes, 0.5),
        ];
        let base = *base.get_or_insert(figures);
        let ratio = |i: usize| figures[i].as_secs_f64() / base[i].as_secs_f64();
        println!(
            "  {:>6} messages ({:.2} MiB): agent {:.1} µs ({:.2}x)   writer append + fsync {} (p90 {}, {:.2}x)   folding {} every {} steps: {:.1} µs a step ({:.2}x)   | before: whole-file save {} ({:.1}x)",
            size,
            snapshot.len() as f64 / 1_048_576.0,
            figures[0].as_secs_f64() * 1e6,
            ratio(0),
            ms(figures[1]),
            ms(percentile(&writer, 0.9)),
            ratio(1),
            ms(folding),
            written + runs as u32,
            figures[2].as_secs_f64() * 1e6,
            ratio(2),
            ms(figures[3]),
            ratio(3),
        );
    }
}

/// `dashfloat --continue` of a 10,000-message session until its last
/// answer is on screen, against a fresh start in the same directory.
fn continue_first_frame() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::at(dir.path().join("dashfloat/sessions"));
    let here = dir.path().canonicalize().unwrap();
    let (messages, log) = bench_session(10_000, 200);
    let id = "20261201-000000-aaaaaa";
    let bytes = record(id, &here.to_string_lossy(), &messages, &log)
        .encode()
        .unwrap();
    store.write(id, &bytes).unwrap();
    let server = ScriptedServer::start_blocking(vec![]);
    let url = server.base_url();
    let runs = 10;
    let home = dir.path().to_str().unwrap();
    let env = [("HOME", home), ("XDG_CONFIG_HOME", home)];
    let resumed = startup::times_to_screen(
        runs,
        &support::dashfloat_bin(),
        &["--base-url", &url, "--continue"],
        &env,
        dir.path(),
        "the-last-answer",
    );
    let fresh = startup::times_to_screen(
        runs,
        &support::dashfloat_bin(),
        &["--base-url", &url],
        &env,
        dir.path(),
        "idle",
    );
    println!(
        "\n--continue of a {}-message session ({:.1} MiB) to the frame showing its last answer ({runs} runs)",
        messages.len(),
        bytes.len() as f64 / 1_048_576.0
    );
    println!(
        "  median {}  p90 {}   | a new session's first frame: median {}   target ≤ 50 ms",
        ms(percentile(&resumed, 0.5)),
        ms(percentile(&resumed, 0.9)),
        ms(percentile(&fresh, 0.5)),
    );
}

/// What the read-only analyser's questions to git cost: `git status`
/// analysed in a real repository (git run twice, to name the repository
/// and list its configuration), against running `git status` itself, and
/// `ls` analysed, which asks git nothing.
fn analyse_git() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    support::crafted::git(&root, &["init", "-q"]);
    support::crafted::git(&root, &["add", "README.md"]);
    support::crafted::git(&root, &["commit", "-q", "-m", "readme"]);
    let analyser =
        Analyser::new(&root).with_command_env(support::command_env(Path::new("/dev/null")));
    let runs = 50;
    let time = |f: &dyn Fn()| {
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect();
        times.sort();
        percentile(&times, 0.5)
    };
    let analysed = time(&|| {
        let verdict = analyser.analyse(".", "git status");
        assert!(matches!(verdict, Verdict::ReadOnly { .. }), "{verdict:?}");
    });
    let plain = time(&|| {
        assert!(matches!(
            analyser.analyse(".", "ls -la"),
            Verdict::ReadOnly { .. }
        ));
    });
    let git_status = time(&|| {
        let out = std::process::Command::new("git")
            .arg("status")
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success());
    });
    println!("read-only analysis ({runs} runs, median)");
    println!(
        "  `git status` analysed {}   | `ls -la` analysed {}   | baseline `git status` run: {}   ratio {:.1}x",
        ms(analysed),
        ms(plain),
        ms(git_status),
        analysed.as_secs_f64() / git_status.as_secs_f64()
    );
}
