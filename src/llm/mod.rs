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

use std::sync::Once;

use reqwest::redirect::{Attempt, Policy};

/// Redirects followed for one request, at most, all within the origin of
/// the base URL. reqwest's own default; ADR 0004.
pub const REDIRECT_MAX: usize = 10;

/// The URL of the API's `path` (`/chat/completions`) under the base URL,
/// with the query the base URL may carry (Azure's `?api-version=`) kept
/// after it.
pub fn api_url(base_url: &str, path: &str) -> String {
    let (head, query) = split_query(base_url);
    format!("{head}{path}{query}")
}

/// The URL of llama-server's own `path` (`/props`, `/slots`), which it
/// serves at its root beside `/v1`.
pub fn server_url(base_url: &str, path: &str) -> String {
    let (head, query) = split_query(base_url);
    let root = head.strip_suffix("/v1").unwrap_or(head);
    format!("{root}{path}{query}")
}

/// The base URL's path part and its query (with its `?`, or empty); a
/// fragment is never sent.
fn split_query(base_url: &str) -> (&str, &str) {
    let sent = base_url.split('#').next().unwrap_or(base_url);
    let (head, query) = sent.split_at(sent.find('?').unwrap_or(sent.len()));
    (head.trim_end_matches('/'), query)
}

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
    let builder = if plain_http(base_url) {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    };
    builder.build()
}

/// Whether `base_url` is plain `http://` (the scheme in any case), where
/// no request can need TLS. Anything else, even a URL that will not
/// parse, gets the system's roots.
fn plain_http(base_url: &str) -> bool {
    base_url
        .get(.."http://".len())
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
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
    fn a_path_goes_before_the_base_urls_query() {
        let azure = "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21";
        assert_eq!(
            api_url(azure, "/chat/completions"),
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            api_url("http://h/v1/?k=1#top", "/models"),
            "http://h/v1/models?k=1"
        );
        assert_eq!(api_url("http://h/v1", "/models"), "http://h/v1/models");
        assert_eq!(server_url("http://h/v1", "/props"), "http://h/props");
        assert_eq!(
            server_url("http://h/v1?k=1", "/props"),
            "http://h/props?k=1"
        );
        assert_eq!(server_url("http://h/api", "/props"), "http://h/api/props");
    }

    #[test]
    fn only_a_plain_http_base_url_goes_without_tls_roots() {
        assert!(plain_http("http://127.0.0.1:8088/v1"));
        assert!(plain_http("HTTP://localhost/v1"));
        assert!(!plain_http("https://api.openai.com/v1"));
        assert!(!plain_http("http:/x"));
        assert!(!plain_http("httpx://x"));
        assert!(!plain_http(""));
        assert!(!plain_http("http:/é"));
    }

    #[test]
    fn a_client_is_built_for_either_scheme() {
        for base_url in ["http://127.0.0.1:8088/v1", "https://api.openai.com/v1"] {
            assert!(build_client(std::time::Duration::from_secs(1), base_url).is_ok());
        }
    }
}
