//! Test support shared by the integration tests: a scripted
//! OpenAI-compatible server ([`server`]) that checks the conversation
//! invariant ([`pairing`]) on every request, an agent harness ([`agent`]),
//! tool calls validated from arguments text ([`calls`]), tools registered
//! at run time ([`dynamic`]),
//! a pseudo-terminal driver ([`pty`]), the recorded SSE fixtures
//! ([`fixtures`]), saved sessions written for a test ([`sessions`]) and the
//! fixed prefix counted by a real server ([`prefix`]), and the scripted
//! server's other wires ([`wires`]).
//!
//! Each test crate (`tests/<area>/main.rs`) includes it with
//! `#[path = "../support/mod.rs"] mod support;`, as `benches/main.rs` does.
//! Each uses only part of it, hence the `dead_code` allowance here (the one
//! place for it).
#![allow(dead_code)]

pub mod agent;
pub mod calls;
pub mod crafted;
pub mod dynamic;
pub mod fixtures;
pub mod no_landlock;
pub mod pairing;
pub mod prefix;
pub mod pty;
pub mod random;
pub mod server;
pub mod sessions;
pub mod wires;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a test waits for a condition (a pid written, a log line)
/// before it fails: an upper bound for a busy two-core machine, never a
/// pause.
pub const WAIT: Duration = Duration::from_secs(20);

/// An environment for the commands of a test (and the read-only
/// analyser's questions to git): this process's `PATH` and `HOME`, and a
/// git that reads `global` as the person's configuration (`/dev/null` for
/// none), whatever the machine's own holds.
pub fn command_env(global: &Path) -> Vec<(OsString, OsString)> {
    ["PATH", "HOME"]
        .into_iter()
        .map(|name| (name.into(), std::env::var_os(name).unwrap_or_default()))
        .chain([("GIT_CONFIG_GLOBAL".into(), global.into())])
        .collect()
}

/// `env` with `dir` first on its `PATH`.
pub fn path_first(mut env: Vec<(OsString, OsString)>, dir: &Path) -> Vec<(OsString, OsString)> {
    for (name, value) in &mut env {
        if name == "PATH" {
            let mut path = dir.as_os_str().to_owned();
            path.push(":");
            path.push(&*value);
            *value = path;
        }
    }
    env
}

/// A memory field of `/proc/<pid>/status` in KiB (`VmRSS:`, `VmHWM:`);
/// `pid` is a number, or `self` for this process.
pub fn status_kib(pid: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// This process's peak resident set (VmHWM) in KiB.
pub fn peak_rss_kib() -> u64 {
    status_kib("self", "VmHWM:")
}

/// Resets this process's peak resident set, so the next reading of
/// [`peak_rss_kib`] covers only what follows.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Installs rustls' ring provider as the process default (reqwest is built
/// with `rustls-no-provider`). Idempotent; call before building a client.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A reqwest client for talking to the scripted server.
pub fn http_client() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::builder()
        .build()
        .expect("build reqwest client")
}

/// The `dashfloat` binary cargo built for these integration tests.
pub fn dashfloat_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_dashfloat"))
}

/// Waits until a test command has written its shell's pid to `file`
/// (`echo $$ > pid`) and returns it. Panics after `timeout`.
pub fn wait_for_pid(file: &Path, timeout: Duration) -> i32 {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`wait_for_pid`] from async code: the wait runs on a blocking thread,
/// so the runtime keeps driving whatever the test awaits meanwhile.
pub async fn pid_written(file: &Path, timeout: Duration) -> i32 {
    let file = file.to_path_buf();
    tokio::task::spawn_blocking(move || wait_for_pid(&file, timeout))
        .await
        .expect("waiting for a pid panicked")
}

/// Kills a process a test left behind on purpose: one that left its
/// command's group, beyond the tool's reach (ADR 0013).
pub fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// Waits until the session log at `path` reads as `done` says (its writer
/// is a task of its own) and returns its text; after `timeout`, returns
/// what it holds then, for the test's own assertions to report.
pub async fn log_text(path: &Path, timeout: Duration, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if done(&text) || Instant::now() >= deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether a process exists and is not a zombie (the process table as
/// `/proc` shows it).
pub fn process_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// Shell text that waits until the last background job (`$!`) has really
/// left the shell's session (`what` = `"sid"`: its session is its own) or
/// group (`"pg"`), so a test's escapee has escaped before the shell goes
/// on.
pub fn until_left(what: &str) -> String {
    format!(
        r#"until read -r _ _ _ _ pg sid _ < /proc/$!/stat && [ "${what}" = "$!" ]; do sleep 0.01; done"#
    )
}

/// Waits until none of `pids` is a live process; panics naming a survivor
/// after `timeout`.
pub fn assert_all_gone(pids: &[i32], timeout: std::time::Duration) {
    let deadline = std::time::Instant::now() + timeout;
    for &pid in pids {
        while process_alive(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "process {pid} survived"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Every Rust source file under `dir`, found recursively: what the tests
/// that read the crate's own code (its walls, its seam) scan.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
