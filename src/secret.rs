//! Credentials held in memory, and keeping them off the screen and out of
//! logs: a wrapper whose `Debug` prints `[redacted]`, and the one helper
//! that takes the userinfo (`user:password@`) out of URLs before a URL is
//! shown or logged. Imports nothing from the crate, so every module may use
//! it. ADRs 0005 (the key) and 0016 (the log).

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// What is shown in place of a credential.
const REDACTED: &str = "[redacted]";
/// What is shown in place of a URL's userinfo.
const REDACTED_USERINFO: &str = "[redacted]@";

/// A credential: an API key, a header value, a variable handed to commands.
/// `Debug` never prints it and it has no `Display`; [`Secret::expose`] is
/// the one way to read it, at the place it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret<T = String>(T);

impl<T> Secret<T> {
    /// Wraps a credential.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The credential itself, for the request or the command it is for.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

/// `text` with the userinfo of every URL in it replaced by `[redacted]@`:
/// `http://alice:pw@host/v1` becomes `http://[redacted]@host/v1`. For every
/// URL that is shown or logged.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    replace_userinfo(text, REDACTED_USERINFO)
}

/// `url` without the userinfo of the URLs in it (`http://host/v1`), where
/// even the marker would be noise, e.g. the host in the status bar.
pub fn strip_userinfo(url: &str) -> Cow<'_, str> {
    replace_userinfo(url, "")
}

/// Whether `text` holds a URL with userinfo, i.e. a credential.
pub fn has_userinfo(text: &str) -> bool {
    find_userinfo(text, 0).is_some()
}

fn replace_userinfo<'a>(text: &'a str, with: &str) -> Cow<'a, str> {
    let mut out = String::new();
    let mut done = 0;
    while let Some(range) = find_userinfo(text, done) {
        out.push_str(&text[done..range.start]);
        out.push_str(with);
        done = range.end;
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// The userinfo of the first URL at or after `from` that has one: from
/// just after `://` up to and including the authority's last `@` (a
/// password may hold an unescaped `@`; the host cannot). The authority
/// ends at `/`, `?`, `#`, white space or a quote, so URLs inside messages
/// and log lines are found too.
fn find_userinfo(text: &str, mut from: usize) -> Option<Range<usize>> {
    while let Some(at) = text[from..].find("://") {
        let start = from + at + 3;
        let has_scheme = text[..from + at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        let rest = &text[start..];
        let authority_len = rest
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '`' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(rest.len());
        if has_scheme && let Some(end) = rest[..authority_len].rfind('@') {
            return Some(start..start + end + 1);
        }
        from = start;
    }
    None
}
