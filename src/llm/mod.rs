//! Talking to the model: the wire format, the stream task and the
//! transport error taxonomy. Knows nothing of the UI or the agent.

pub mod classify;
pub mod guarded;
pub mod stream;
pub mod tool_calls;
pub mod wire;

use std::sync::Once;

/// Installs the ring crypto provider for rustls, once per process. reqwest
/// is built without a default provider (aws-lc would add a C build), and
/// panics if a client is built before one is installed.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Builds the HTTP client. No total timeout: replies stream for as long as
/// they stream; the connect and idle timeouts bound the silent parts.
pub fn build_client(
    connect_timeout: std::time::Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    install_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("dashfloat/", env!("CARGO_PKG_VERSION")))
        .build()
}
