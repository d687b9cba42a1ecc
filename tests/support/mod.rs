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
