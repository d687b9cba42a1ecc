//! Talking to the model: the wire format, the stream task and the
//! transport error taxonomy. Knows nothing of the UI or the agent.

pub mod adapters;
pub mod classify;
pub mod discover;
pub mod guarded;
pub mod slots;
pub mod stream;
pub mod tool_calls;
pub mod wire;
pub mod wires;

use std::sync::Once;

use reqwest::redirect::{Attempt, Policy};

/// Redirects followed for one request, at most, all within the origin of
/// the base URL. reqwest's own default; ADR 0004.
pub const REDIRECT_MAX: usize = 10;

/// Installs the ring crypto provider for rustls, once per process. reqwest
/// is built without a default provider (aws-lc would add a C build), and
/// panics if a client is built before one is installed.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Builds the HTTP client for requests to `base_url`. No total timeout:
/// replies stream for as long as they stream; the connect and idle
/// timeouts bound the silent parts. Redirects are followed only within the
/// base URL's origin: reqwest drops `Authorization` and cookies on a
/// cross-origin hop but would send every custom header on (ADR 0004).
///
/// For a plain `http://` base URL the system's TLS roots are not loaded:
/// every request goes to the base URL's origin, so none can need them, and
/// reading and parsing them (each certificate file of `/etc/ssl/certs`)
/// was the largest part of start-up's work with a local server (ADR 0041).
pub fn build_client(
    connect_timeout: std::time::Duration,
    base_url: &str,
) -> Result<reqwest::Client, reqwest::Error> {
    install_crypto_provider();
    let builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("dashfloat/", env!("CARGO_PKG_VERSION")))
        .redirect(Policy::custom(same_origin_only));
    let builder = if crate::base_url::plain_http(base_url) {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    };
    builder.build()
}

/// Follows a redirect that stays on the first request's scheme, host and
/// port, up to [`REDIRECT_MAX`]; stops at any other, so the redirect
/// itself comes back and is reported (`TransportError::Redirect`).
fn same_origin_only(attempt: Attempt<'_>) -> reqwest::redirect::Action {
    let same_origin = attempt
        .previous()
        .first()
        .is_some_and(|first| first.origin() == attempt.url().origin());
    if !same_origin {
        attempt.stop()
    } else if attempt.previous().len() > REDIRECT_MAX {
        attempt.error(format!("more than {REDIRECT_MAX} redirects"))
    } else {
        attempt.follow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_built_for_either_scheme() {
        for base_url in ["http://127.0.0.1:8088/v1", "https://api.openai.com/v1"] {
            assert!(build_client(std::time::Duration::from_secs(1), base_url).is_ok());
        }
    }
}
