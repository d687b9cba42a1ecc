//! The provider's base URL, handled in one place and with one type,
//! `Url`: whether a configured one is usable, where each request goes
//! under it, the host the status bar shows, whether it names this
//! machine, and what a saved session keeps of it. The configuration
//! holds the text as given (it is what the person wrote); everything that
//! reads it parses it here.

use reqwest::Url;

/// The base URL parsed, when it is one dashfloat can send to: `http` or
/// `https`, with a host.
fn parse(base_url: &str) -> Option<Url> {
    Url::parse(base_url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
}

/// `base_url` as requests will read it (the scheme in lower case, spaces
/// and control characters around it dropped), when it is one dashfloat
/// can send requests to: what is kept is then what is used.
pub fn usable(base_url: &str) -> Option<String> {
    parse(base_url).map(String::from)
}

/// Whether the base URL is plain `http` (the scheme in any case), where
/// no request can need TLS: every request stays on its origin. Anything
/// else, even a URL that will not parse, gets the system's roots.
pub fn plain_http(base_url: &str) -> bool {
    Url::parse(base_url).is_ok_and(|url| url.scheme() == "http")
}

/// The URL of the API's `path` (`/chat/completions`) under the base URL,
/// with the query the base URL may carry (Azure's `?api-version=`) kept
/// after it; a fragment is never sent.
pub fn api(base_url: &str, path: &str) -> String {
    under(base_url, path, |base| base)
}

/// The URL of llama-server's own `path` (`/props`, `/slots`), which it
/// serves at its root beside `/v1`.
pub fn server(base_url: &str, path: &str) -> String {
    under(base_url, path, |base| {
        base.strip_suffix("/v1").unwrap_or(base)
    })
}

/// `path` after the base URL's path as `place` makes it, the query kept.
/// A base URL the configuration refused is never one requests go to; it
/// is joined as text.
fn under(base_url: &str, path: &str, place: impl Fn(&str) -> &str) -> String {
    let Some(mut url) = parse(base_url) else {
        return format!("{base_url}{path}");
    };
    let joined = format!("{}{path}", place(url.path().trim_end_matches('/')));
    url.set_path(&joined);
    url.set_fragment(None);
    url.to_string()
}

/// The host (and port) of the base URL, for the status bar: never the
/// credentials it may carry.
pub fn host(base_url: &str) -> String {
    parse(base_url).map_or_else(String::new, |url| match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    })
}

/// Whether the base URL names this machine: warming its cache costs only
/// idle cycles, where a remote provider would bill for it.
pub fn is_loopback(base_url: &str) -> bool {
    parse(base_url)
        .and_then(|url| url.host_str().map(str::to_owned))
        .is_some_and(|host| {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
}

/// The base URL as a saved session keeps it: without userinfo, query or
/// fragment, where a key may ride.
pub fn kept(base_url: &str) -> String {
    let Some(mut url) = parse(base_url) else {
        return String::new();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string().trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_goes_before_the_base_urls_query() {
        let azure = "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21";
        assert_eq!(
            api(azure, "/chat/completions"),
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            api("http://h/v1/?k=1#top", "/models"),
            "http://h/v1/models?k=1"
        );
        assert_eq!(api("http://h/v1", "/models"), "http://h/v1/models");
        assert_eq!(server("http://h/v1", "/props"), "http://h/props");
        assert_eq!(server("http://h/v1?k=1", "/props"), "http://h/props?k=1");
        assert_eq!(server("http://h/api", "/props"), "http://h/api/props");
        assert_eq!(
            api("http://u:p@h:8080/v1", "/models"),
            "http://u:p@h:8080/v1/models"
        );
    }

    #[test]
    fn the_host_and_what_a_session_keeps_hold_no_credentials() {
        let url = "https://alice:s3cret@api.example.com:8443/v1?key=k#x";
        assert_eq!(host(url), "api.example.com:8443");
        assert_eq!(kept(url), "https://api.example.com:8443/v1");
        assert_eq!(host("http://127.0.0.1:8088/v1"), "127.0.0.1:8088");
        assert_eq!(kept("http://127.0.0.1:8088/v1"), "http://127.0.0.1:8088/v1");
    }

    #[test]
    fn only_a_plain_http_base_url_goes_without_tls_roots() {
        assert!(plain_http("http://127.0.0.1:8088/v1"));
        assert!(plain_http("HTTP://localhost/v1"));
        for not in ["https://api.openai.com/v1", "httpx://x", "", "not a url"] {
            assert!(!plain_http(not), "{not}");
        }
    }

    #[test]
    fn only_http_and_https_with_a_host_are_usable() {
        assert_eq!(
            usable("http://127.0.0.1:8088/v1").as_deref(),
            Some("http://127.0.0.1:8088/v1")
        );
        assert_eq!(
            usable(" HTTPS://api.openai.com/v1\n").as_deref(),
            Some("https://api.openai.com/v1")
        );
        for bad in [
            "ftp://h/v1",
            "127.0.0.1:8088/v1",
            "http://",
            "unix:/tmp/s",
            "",
        ] {
            assert_eq!(usable(bad), None, "{bad}");
        }
    }
}
