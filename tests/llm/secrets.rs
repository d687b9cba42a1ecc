//! Credentials on the way to the provider: the key and header values never
//! print, credentials in the base URL never show in an error entry or the
//! log, and custom headers never follow a redirect to another origin.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::REDIRECT_MAX;
use dashfloat::llm::stream::Endpoint;
use dashfloat::protocol::TransportError;

use crate::support::server::{Reply, ScriptedServer};
use crate::support::{self, WAIT, free_port, log_text};
use crate::{content, failure, run};

const KEY: &str = "sk-key-marker";
const HEADER_VALUE: &str = "header-credential-marker";

fn endpoint(base_url: &str) -> Endpoint {
    crate::endpoint(base_url, KEY, ("X-Api-Key", HEADER_VALUE))
}

/// `http://user:pw-marker@127.0.0.1:PORT/v1` for a base URL like
/// `http://127.0.0.1:PORT/v1`.
fn with_credentials(base_url: &str) -> String {
    base_url.replacen("http://", "http://alice:pw-marker@", 1)
}

#[test]
fn the_endpoint_debug_output_shows_no_key_and_no_header_value() {
    let shown = format!("{:?}", endpoint("http://127.0.0.1:9/v1"));
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!shown.contains(HEADER_VALUE), "{shown}");
    assert!(shown.contains("X-Api-Key"), "{shown}");
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_nothing_follows_it() {
    let elsewhere = ScriptedServer::start(vec![Reply::text(&["you followed me"])]).await;
    let target = elsewhere.url("/v1/chat/completions");
    let server = ScriptedServer::start(vec![Reply::raw(
        307,
        &[("Location", target.as_str()), ("Content-Length", "0")],
        vec![],
    )])
    .await;
    let events = run(endpoint(&server.base_url())).await;
    assert!(
        elsewhere.requests().is_empty(),
        "the request followed the redirect with {:?}",
        elsewhere.requests()[0].headers
    );
    let text = failure(&events).to_string();
    assert!(text.contains("redirect"), "{text}");
    assert!(text.contains(&target), "{text}");
}

#[tokio::test]
async fn a_redirect_to_another_scheme_or_port_of_the_same_host_is_refused_too() {
    let port = free_port();
    let server = ScriptedServer::start(vec![Reply::raw(
        308,
        &[
            (
                "Location",
                &format!("http://127.0.0.1:{port}/v1/chat/completions"),
            ),
            ("Content-Length", "0"),
        ],
        vec![],
    )])
    .await;
    let err = failure(&run(endpoint(&server.base_url())).await);
    assert!(err.to_string().contains("redirect"), "{err}");
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_with_the_headers() {
    let server = ScriptedServer::start(vec![]).await;
    let moved = server.url("/v2/chat/completions");
    server.push_reply(Reply::raw(
        307,
        &[("Location", moved.as_str()), ("Content-Length", "0")],
        vec![],
    ));
    server.push_reply(Reply::text(&["moved here"]));
    let events = run(endpoint(&server.base_url())).await;
    assert_eq!(content(&events), "moved here");
    let requests = server.requests();
    assert_eq!(requests[1].path, "/v2/chat/completions");
    assert_eq!(requests[1].header("x-api-key"), Some(HEADER_VALUE));
}

/// Same-origin redirects are followed up to `REDIRECT_MAX` and no further:
/// a server bouncing the request around is an error, not a loop.
#[tokio::test]
async fn same_origin_redirects_stop_after_their_bound() {
    for (redirects, followed) in [(REDIRECT_MAX, true), (REDIRECT_MAX + 1, false)] {
        let server = ScriptedServer::start(vec![]).await;
        for hop in 0..redirects {
            let next = server.url(&format!("/hop{hop}/chat/completions"));
            server.push_reply(Reply::raw(
                307,
                &[("Location", next.as_str()), ("Content-Length", "0")],
                vec![],
            ));
        }
        server.push_reply(Reply::text(&["arrived"]));
        let events = run(endpoint(&server.base_url())).await;
        if followed {
            assert_eq!(content(&events), "arrived");
        } else {
            let err = failure(&events).to_string();
            assert!(
                err.contains(&format!("more than {REDIRECT_MAX} redirects")),
                "{err}"
            );
        }
    }
}

#[tokio::test]
async fn credentials_in_the_base_url_do_not_show_in_error_messages() {
    let refused = with_credentials(&format!("http://127.0.0.1:{}/v1", free_port()));
    let err = failure(&run(endpoint(&refused)).await);
    assert!(
        matches!(err, TransportError::ConnectionRefused { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        !text.contains("pw-marker") && !text.contains("alice"),
        "{text}"
    );
    assert!(text.contains("http://[redacted]@127.0.0.1"), "{text}");

    let server = ScriptedServer::start(vec![Reply::status(
        404,
        "application/json",
        r#"{"error":{"message":"no such model"}}"#,
    )])
    .await;
    let err = failure(&run(endpoint(&with_credentials(&server.base_url()))).await);
    assert!(matches!(err, TransportError::NotFound { .. }), "{err:?}");
    assert!(!err.to_string().contains("pw-marker"), "{err}");
}

#[tokio::test]
async fn credentials_in_the_base_url_do_not_reach_the_chat_or_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("session.log");
    let base_url = with_credentials(&format!("http://127.0.0.1:{}/v1", free_port()));
    let mut setup = support::agent::setup(&base_url, dir.path(), ApprovalPolicy::Ask);
    setup.log = dashfloat::log::Log::to_file(&log_path).unwrap();
    let mut h = support::agent::start_with(setup);
    h.prompt("anyone there?").await;
    let events = h.turn().await;
    let entries = support::agent::system_texts(&events);
    assert!(
        entries.iter().any(|t| t.contains("connection refused")),
        "{entries:?}"
    );
    for entry in &entries {
        assert!(!entry.contains("pw-marker"), "{entry}");
    }
    drop(h);
    let log = log_text(&log_path, WAIT, |t| t.contains("connection refused")).await;
    assert!(log.contains("connection refused"), "{log}");
    assert!(!log.contains("pw-marker"), "{log}");
}

#[tokio::test]
async fn the_log_redacts_a_url_with_credentials_whoever_wrote_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.log");
    let log = dashfloat::log::Log::to_file(&path).unwrap();
    log.line(|| "proxy at http://bob:pw-marker@proxy:3128 said no; done".into());
    let text = log_text(&path, WAIT, |t| t.contains("done")).await;
    assert!(
        text.contains("http://[redacted]@proxy:3128 said no"),
        "{text}"
    );
    assert!(!text.contains("pw-marker"), "{text}");
}

#[tokio::test]
async fn a_long_line_is_cut_after_its_credentials_are_redacted() {
    use dashfloat::bounds::LOG_LINE_MAX_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.log");
    let log = dashfloat::log::Log::to_file(&path).unwrap();
    // The URL straddles the cut: cutting first would keep
    // "http://bob:pw-mark", with no '@' left for the redaction to find.
    let pad = "é".repeat((LOG_LINE_MAX_BYTES - "http://bob:pw-mark".len()) / 2);
    log.line(|| {
        format!(
            "{pad}http://bob:pw-marker@proxy:3128 {}",
            "x".repeat(1 << 20)
        )
    });
    log.line(|| "done".into());
    let text = log_text(&path, WAIT, |t| t.contains("done")).await;
    let first = text.lines().next().unwrap();
    assert!(!first.contains("pw-mark"), "{first}");
    assert!(first.contains("http://[redacted]@"), "{first}");
    assert!(first.ends_with(" […]"), "{}", &first[first.len() - 40..]);
    assert!(
        first.len() < LOG_LINE_MAX_BYTES + 64,
        "{} bytes",
        first.len()
    );
}

#[test]
fn the_one_redaction_helper_finds_every_url_with_credentials() {
    use dashfloat::secret::{redact_userinfo, strip_userinfo};
    assert_eq!(
        redact_userinfo("a http://u:p@h/x and https://tok@g.io, 'ftp://x:y@z'"),
        "a http://[redacted]@h/x and https://[redacted]@g.io, 'ftp://[redacted]@z'"
    );
    // A password with an unescaped '@': the host follows the last one.
    assert_eq!(
        redact_userinfo("http://u:p@ss@h:1/v1"),
        "http://[redacted]@h:1/v1"
    );
    assert_eq!(strip_userinfo("http://u:p@h:1/v1"), "http://h:1/v1");
    for plain in [
        "http://h/a@b",
        "me@example.com",
        "http://h/?q=a@b",
        "no url",
    ] {
        assert_eq!(redact_userinfo(plain), plain);
    }
}
