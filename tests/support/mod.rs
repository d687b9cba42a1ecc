//! Test support shared by the integration tests: a scripted
//! OpenAI-compatible server ([`server`]), a pseudo-terminal driver
//! ([`pty`]) and the recorded SSE fixtures ([`fixtures`]).
//!
//! Include it with `mod support;` from a test crate. Each crate uses only
//! part of it, hence the `dead_code` allowance here (the one place for it).
#![allow(dead_code)]

pub mod agent;
pub mod fixtures;
pub mod pty;
pub mod server;

use std::path::PathBuf;

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
pub fn wait_for_pid(file: &std::path::Path, timeout: std::time::Duration) -> i32 {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no pid in {}",
            file.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
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
