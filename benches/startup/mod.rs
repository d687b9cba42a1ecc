//! Start-up (issue 38): process start → first frame (the status bar
//! reading `idle`), the resident set once idle, and a 2,000-token reply's
//! way to the screen — dashfloat started as a person starts it, in a git
//! project of 500 files, against a provider (nothing asked at start) and
//! against a llama-server on this machine (discovery, slot restore and
//! warm-up at start), next to a minimal full-screen ratatui + tokio +
//! crossterm program measured in the same run (STACK.md's floor). The
//! local cases run again with the project overview off (ADR 0048), and
//! the ratios say what it costs.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::ms;
use crate::support::server::{Reply, ScriptedServer, content_chunk, finish_chunk};

/// Set in the environment of this very binary to make it the floor
/// program instead of the benchmarks.
pub const FLOOR_VAR: &str = "DASHFLOAT_BENCH_FLOOR";
/// Names another dashfloat binary whose cases run beside this build's.
const BASELINE_VAR: &str = "DASHFLOAT_BENCH_BASELINE";
/// Runs of each way of starting; the median is reported.
const RUNS: usize = 11;
/// How long a started program is left alone before its memory is read:
/// what start-up spawned (discovery, the warm-up, the project's file
/// list) has ended by then against a server on this machine.
const IDLE_SETTLE: Duration = Duration::from_millis(1500);
/// How long any awaited output may take before the benchmark fails.
const OUTPUT_WAIT: Duration = Duration::from_secs(30);
/// The terminal's size.
const ROWS: u16 = 40;
const COLS: u16 = 120;
/// Tokens in the reply timed after start-up.
const REPLY_TOKENS: usize = 2_000;
/// The reply's last word: on screen, the whole reply has been shown.
const REPLY_END: &str = "reply-complete";
/// Files in the project dashfloat starts in.
const PROJECT_FILES: usize = 500;

/// STACK.md's floor, run as a child of the start-up benchmark: a
/// full-screen ratatui + tokio + crossterm program that enters raw mode and
/// the alternate screen, draws a status bar reading `idle`, and waits for
/// the terminal's input on a thread of its own, as dashfloat does. What
/// dashfloat takes beyond it is dashfloat's own.
pub fn floor() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        crossterm::terminal::enable_raw_mode().unwrap();
        crossterm::execute!(std::io::stdout(), crossterm::terminal::EnterAlternateScreen).unwrap();
        let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout())).unwrap();
        terminal
            .draw(|frame| {
                let bar = ratatui::layout::Rect {
                    height: 1,
                    ..frame.area()
                };
                frame.render_widget(ratatui::widgets::Paragraph::new(" idle"), bar);
            })
            .unwrap();
        let (tx, mut rx) = mpsc::channel(64);
        std::thread::spawn(move || {
            while let Ok(event) = crossterm::event::read() {
                if tx.blocking_send(event).is_err() {
                    return;
                }
            }
        });
        rx.recv().await;
    });
}

/// A program started on a pty. A thread of its own reads what it writes,
/// stamped with the time it came, so the program never waits on the
/// benchmark; the screen is emulated from it as the benchmark looks.
pub struct OnPty {
    started: Instant,
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: std_mpsc::Receiver<(Instant, Vec<u8>)>,
    screen: vt100::Parser,
    /// Held for the child: closing the master hangs its terminal up.
    _master: Box<dyn MasterPty + Send>,
}

impl OnPty {
    /// Starts `program args..` in `dir` on a 120x40 pty, with this
    /// process's environment plus `TERM=xterm-256color` and `env`.
    pub fn spawn(program: &Path, args: &[&str], env: &[(&str, &str)], dir: &Path) -> OnPty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(dir);
        cmd.env("TERM", "xterm-256color");
        for (name, value) in env {
            cmd.env(name, value);
        }
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let (tx, output) = std_mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    return;
                }
            }
        });
        let started = Instant::now();
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        OnPty {
            started,
            child,
            writer,
            output,
            screen: vt100::Parser::new(ROWS, COLS, 0),
            _master: pair.master,
        }
    }

    /// Waits for the output that puts `needle` on the screen; the time
    /// from `since` (the spawn when `None`) until that output came.
    pub fn until_shown(&mut self, needle: &str, since: Option<Instant>) -> Duration {
        let since = since.unwrap_or(self.started);
        loop {
            let Ok((at, bytes)) = self.output.recv_timeout(OUTPUT_WAIT) else {
                panic!(
                    "{needle:?} not on screen within {OUTPUT_WAIT:?}:\n{}",
                    self.screen.screen().contents()
                );
            };
            self.screen.process(&bytes);
            if self.screen.screen().contents().contains(needle) {
                return at.duration_since(since);
            }
        }
    }

    /// Types `bytes`; the moment they were written.
    fn send(&mut self, bytes: &[u8]) -> Instant {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
        Instant::now()
    }

    fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }
}

impl Drop for OnPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The time until the screen shows `needle`, over `runs` starts, sorted.
pub fn times_to_screen(
    runs: usize,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
    needle: &str,
) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| OnPty::spawn(program, args, env, dir).until_shown(needle, None))
        .collect();
    times.sort();
    times
}

/// One way of starting a program that the benchmark measures.
struct Case {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    /// Whether a prompt is typed, and when.
    prompt: Prompt,
}

/// When a [`Case`] types its prompt, whose reply is timed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prompt {
    /// None is typed.
    No,
    /// Once the memory was read: the reply alone is timed, from Enter.
    WhenIdle,
    /// As soon as the first frame shows, as a person who knows what to
    /// ask types: the time from the start, through all that start-up
    /// does before the agent takes the prompt, to the reply on screen.
    AtOnce,
}

/// What one start of a [`Case`] measured.
#[derive(Default, Clone, Copy)]
struct Figures {
    ready: Duration,
    rss_kib: u64,
    anon_kib: u64,
    file_kib: u64,
    threads: u64,
    /// Until the reply's last word is on screen: from Enter
    /// ([`Prompt::WhenIdle`]) or from the start ([`Prompt::AtOnce`]).
    reply: Duration,
}

impl Case {
    fn run(&self, dir: &Path) -> Figures {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut program = OnPty::spawn(&self.program, &args, &env, dir);
        let ready = program.until_shown("idle", None);
        if self.prompt == Prompt::AtOnce {
            program.send(b"go\r");
            let reply = program.until_shown(REPLY_END, None);
            return Figures {
                ready,
                reply,
                ..Figures::default()
            };
        }
        std::thread::sleep(IDLE_SETTLE);
        let pid = program.pid().to_string();
        let mut figures = Figures {
            ready,
            rss_kib: crate::support::status_kib(&pid, "VmRSS:"),
            anon_kib: crate::support::status_kib(&pid, "RssAnon:"),
            file_kib: crate::support::status_kib(&pid, "RssFile:"),
            // A count, read as the sizes are.
            threads: crate::support::status_kib(&pid, "Threads:"),
            reply: Duration::ZERO,
        };
        if self.prompt == Prompt::WhenIdle {
            let sent = program.send(b"go\r");
            figures.reply = program.until_shown(REPLY_END, Some(sent));
        }
        figures
    }
}

/// The median of one figure over the runs.
fn median<T: Ord + Copy>(runs: &[Figures], figure: impl Fn(&Figures) -> T) -> T {
    let mut values: Vec<T> = runs.iter().map(figure).collect();
    values.sort();
    values[values.len() / 2]
}

fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 / 1024.0)
}

/// The ways of starting `bin` measured, named after `label`: with a
/// provider (a key in the environment, so dashfloat restarts itself
/// without it, and none), and with a llama-server on this machine.
fn dashfloat_cases(bin: &Path, label: &str, home: &str, server: &ScriptedServer) -> Vec<Case> {
    let homes = vec![
        ("HOME", home.to_owned()),
        ("XDG_CONFIG_HOME", home.to_owned()),
    ];
    // A remote provider with its window and model configured: nothing is
    // asked at start and the cache is not warmed.
    let provider: Vec<String> = [
        "--base-url",
        "https://api.provider.invalid/v1",
        "--model",
        "bench-model",
        "--context-window",
        "128000",
    ]
    .map(String::from)
    .to_vec();
    // The model named, as the local default names it: the server is asked
    // its window and kind only.
    let local: Vec<String> = ["--base-url", &server.base_url(), "--model", "bench-model"]
        .map(String::from)
        .to_vec();
    vec![
        Case {
            name: format!("{label}, provider, key in env"),
            program: bin.to_path_buf(),
            args: provider.clone(),
            env: [homes.clone(), vec![("OPENAI_API_KEY", "sk-bench".into())]].concat(),
            prompt: Prompt::No,
        },
        Case {
            name: format!("{label}, provider, no key"),
            program: bin.to_path_buf(),
            args: provider,
            env: homes.clone(),
            prompt: Prompt::No,
        },
        Case {
            name: format!("{label}, local llama-server"),
            program: bin.to_path_buf(),
            args: local.clone(),
            env: homes.clone(),
            prompt: Prompt::WhenIdle,
        },
        Case {
            name: format!("{label}, local, prompt at once"),
            program: bin.to_path_buf(),
            args: local,
            env: homes,
            prompt: Prompt::AtOnce,
        },
    ]
}

/// Drops `program`'s pages from the page cache, so that they come back as
/// a cold start reads them (in readahead's chunks) rather than as the
/// build wrote them: how the kernel holds a binary's pages decides how
/// many it maps at each fault, and so the resident set.
fn drop_from_page_cache(program: &Path) {
    let file = std::fs::File::open(program).unwrap();
    nix::fcntl::posix_fadvise(
        &file,
        0,
        0,
        nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .unwrap();
}

/// The benchmark: each case started [`RUNS`] times, the cases taking
/// turns so that a busy spell of the machine falls on all of them.
/// `DASHFLOAT_BENCH_BASELINE=PATH` adds the cases of another dashfloat
/// binary (a build of main, say) to the same run.
pub fn startup() {
    let project = bench_project();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let server = llama_stand_in();
    let mut cases = vec![Case {
        name: "floor: ratatui + tokio + crossterm".into(),
        program: std::env::current_exe().unwrap(),
        args: Vec::new(),
        env: vec![(FLOOR_VAR, "1".into())],
        prompt: Prompt::No,
    }];
    cases.extend(dashfloat_cases(
        &crate::support::dashfloat_bin(),
        "dashfloat",
        &home,
        &server,
    ));
    // The same local starts with the project overview off, from a
    // configuration directory of their own.
    let quiet = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(quiet.path().join("dashfloat")).unwrap();
    std::fs::write(
        quiet.path().join("dashfloat/config.toml"),
        "project_overview = false\n",
    )
    .unwrap();
    let quiet_home = quiet.path().to_str().unwrap().to_owned();
    cases.extend(
        dashfloat_cases(
            &crate::support::dashfloat_bin(),
            NO_OVERVIEW,
            &quiet_home,
            &server,
        )
        .into_iter()
        .filter(|case| case.name.contains("local")),
    );
    if let Some(baseline) = std::env::var_os(BASELINE_VAR) {
        cases.extend(dashfloat_cases(
            Path::new(&baseline),
            "baseline",
            &home,
            &server,
        ));
    }
    // One start of each, not measured, after the binaries' pages were
    // dropped: every program then runs from pages read alike.
    for case in &cases {
        drop_from_page_cache(&case.program);
    }
    for case in &cases {
        case.run(project.path());
    }
    let mut runs: Vec<Vec<Figures>> = vec![Vec::new(); cases.len()];
    for _ in 0..RUNS {
        for (case, figures) in cases.iter().zip(&mut runs) {
            figures.push(case.run(project.path()));
        }
    }
    println!(
        "\nstart-up: process start → first frame (status bar `idle`), resident set {:.1} s later ({COLS}x{ROWS} pty, a git project of {PROJECT_FILES} files, median of {RUNS}; ratios to the floor)",
        IDLE_SETTLE.as_secs_f64()
    );
    let floor = &runs[0];
    let (floor_ready, floor_rss) = (median(floor, |f| f.ready), median(floor, |f| f.rss_kib));
    for (case, figures) in cases.iter().zip(&runs) {
        let ready = median(figures, |f| f.ready);
        let reply = median(figures, |f| f.reply);
        let reply_max = figures.iter().map(|f| f.reply).max().unwrap_or_default();
        if case.prompt == Prompt::AtOnce {
            println!(
                "  {:<38} ready {:>9}   {REPLY_TOKENS} tokens on screen {} after the start (max {})",
                case.name,
                ms(ready),
                ms(reply),
                ms(reply_max),
            );
            continue;
        }
        let rss = median(figures, |f| f.rss_kib);
        println!(
            "  {:<38} ready {:>9} (max {:>9}, {:.2}x)   RSS {} ({:.2}x; anon {}, file {})   threads {}",
            case.name,
            ms(ready),
            ms(figures.iter().map(|f| f.ready).max().unwrap_or_default()),
            ready.as_secs_f64() / floor_ready.as_secs_f64(),
            mb(rss),
            rss as f64 / floor_rss as f64,
            mb(median(figures, |f| f.anon_kib)),
            mb(median(figures, |f| f.file_kib)),
            median(figures, |f| f.threads),
        );
        if case.prompt == Prompt::WhenIdle {
            println!(
                "  {:<38} {REPLY_TOKENS} tokens on screen {} after Enter (max {})",
                "",
                ms(reply),
                ms(reply_max),
            );
        }
    }
    print_overview_cost(&cases, &runs);
    println!("  targets (issue 38): ready ≤ 25 ms, RSS ≤ 9 MB");
}

/// The label of the cases run with the project overview off.
const NO_OVERVIEW: &str = "no overview";

/// What the project overview costs at start: each local case's median
/// with it over the one without it, from the same run.
fn print_overview_cost(cases: &[Case], runs: &[Vec<Figures>]) {
    let median_of = |name: &str, figure: fn(&Figures) -> Duration| {
        let at = cases.iter().position(|case| case.name == name)?;
        Some(median(&runs[at], figure))
    };
    let ready: fn(&Figures) -> Duration = |f| f.ready;
    let reply: fn(&Figures) -> Duration = |f| f.reply;
    for (case, figure, what) in [
        ("local llama-server", ready, "ready"),
        ("local llama-server", reply, "2,000 tokens after Enter"),
        ("local, prompt at once", ready, "ready"),
        (
            "local, prompt at once",
            reply,
            "2,000 tokens from the start",
        ),
    ] {
        let with = median_of(&format!("dashfloat, {case}"), figure);
        let without = median_of(&format!("{NO_OVERVIEW}, {case}"), figure);
        if let (Some(with), Some(without)) = (with, without) {
            println!(
                "  project overview, {case}: {what} {} with it, {} without ({:.2}x)",
                ms(with),
                ms(without),
                with.as_secs_f64() / without.as_secs_f64()
            );
        }
    }
}

/// A project to start in, as a person would: a git work tree of
/// [`PROJECT_FILES`] files in 25 folders, an `AGENTS.md`, a `Cargo.toml`
/// for the overview to read, and a build folder that `.gitignore` leaves
/// out.
fn bench_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::support::crafted::git(root, &["init", "-q"]);
    std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
    std::fs::write(root.join("AGENTS.md"), "Run the tests before you finish.\n").unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bench\"\nversion = \"0.1.0\"\ndescription = \"A project to start in\"\n",
    )
    .unwrap();
    for i in 0..PROJECT_FILES {
        let folder = root.join(format!("src/module_{}", i % 25));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("file_{i}.rs")), "fn main() {}\n").unwrap();
    }
    let build = root.join("target/release");
    std::fs::create_dir_all(&build).unwrap();
    for i in 0..PROJECT_FILES {
        std::fs::write(build.join(format!("out_{i}.o")), "").unwrap();
    }
    dir
}

/// A llama-server stand-in on this machine: `/props` names it llama.cpp
/// with an 8k window, a slot restore is refused (nothing saved yet), the
/// warm-up (`max_tokens: 1`) gets one token, and a prompt gets
/// [`REPLY_TOKENS`] tokens ending in [`REPLY_END`].
fn llama_stand_in() -> ScriptedServer {
    let server = ScriptedServer::start_blocking(Vec::new());
    let frames: Vec<Value> = crate::token_chunks(REPLY_TOKENS)
        .chain([content_chunk(REPLY_END), finish_chunk("stop")])
        .collect();
    let reply = Reply::sse(frames);
    server.respond_with(move |request| {
        if request.path.starts_with("/props") {
            Reply::status(
                200,
                "application/json",
                r#"{"default_generation_settings":{"n_ctx":8192}}"#,
            )
        } else if request.path.starts_with("/slots") {
            Reply::status(
                501,
                "application/json",
                r#"{"error":{"code":501,"message":"This server does not support slots action.","type":"not_supported_error"}}"#,
            )
        } else if request.body["max_tokens"] == 1 {
            Reply::text(&["ok"])
        } else {
            reply.clone()
        }
    });
    server
}
