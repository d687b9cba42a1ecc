//! Turns what went wrong with a request — a reqwest error, an HTTP status
//! and body — into the [`TransportError`] taxonomy (ADR 0004). Pure where it
//! can be, so each row is testable without a network.

use std::error::Error as _;
use std::time::Duration;

use crate::protocol::TransportError;
use crate::secret::redact_userinfo;

use super::wire::{ErrorBody, ErrorField};
use super::wires::Wire;

/// The most of an error body kept for the message.
pub const ERROR_BODY_MAX_BYTES: usize = 64 * 1024;
/// The longest `Retry-After` taken at its word (a day); a longer one is
/// read as this. Far above `RETRY_WAIT_MAX`, so it is only ever reported.
/// ADR 0004.
pub const RETRY_AFTER_MAX: Duration = Duration::from_secs(24 * 60 * 60);
/// The most of an error message shown in the chat.
const MESSAGE_MAX_CHARS: usize = 400;

/// What a request was for, to name in the messages.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The base URL, with any credentials it carries (the request needs
    /// them; messages show [`RequestContext::shown_url`]).
    pub base_url: String,
    /// The model asked for.
    pub model: String,
    /// The key's environment variable.
    pub key_var: String,
    /// The request timeout in force.
    pub request_timeout: Duration,
    /// The API the requests speak.
    pub wire: Wire,
}

impl RequestContext {
    /// The base URL as messages show it: credentials redacted.
    pub fn shown_url(&self) -> String {
        redact_userinfo(&self.base_url).into_owned()
    }
}

/// Classifies a failure to connect or to receive the response headers.
pub fn connect_error(err: &reqwest::Error, ctx: &RequestContext) -> TransportError {
    let url = ctx.shown_url();
    if err.is_timeout() {
        return TransportError::ConnectTimeout {
            url,
            after: ctx.request_timeout,
        };
    }
    let detail = redact_userinfo(&error_chain(err)).into_owned();
    let mut source: Option<&(dyn std::error::Error + 'static)> = err.source();
    while let Some(cause) = source {
        if cause.downcast_ref::<rustls::Error>().is_some() {
            return TransportError::Tls { url, detail };
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io_kind_within(io, std::io::ErrorKind::ConnectionRefused) {
                return TransportError::ConnectionRefused { url };
            }
            if rustls_within(io) {
                return TransportError::Tls { url, detail };
            }
        }
        source = cause.source();
    }
    // hyper-util reports resolver failures only in words.
    let lower = detail.to_lowercase();
    if lower.contains("dns error") || lower.contains("failed to lookup address") {
        TransportError::Dns { url, detail }
    } else if lower.contains("connection closed before message completed") {
        TransportError::ClosedUnanswered { url }
    } else {
        TransportError::Connect { url, detail }
    }
}

/// Classifies a non-success status with (the start of) its body.
pub fn status_error(
    status: u16,
    retry_after: Option<Duration>,
    body: &[u8],
    ctx: &RequestContext,
) -> TransportError {
    let message = body_message(body);
    match status {
        400 | 404 | 422 if images_refused(&message) => {
            TransportError::ImagesRefused { status, message }
        }
        401 | 403 => TransportError::Unauthorized {
            status,
            key_var: ctx.key_var.clone(),
            message,
        },
        404 => TransportError::NotFound {
            url: ctx.wire.url(&ctx.shown_url()),
            model: ctx.model.clone(),
            message,
        },
        400 | 413 | 422 if context_exceeded(body) => TransportError::ContextExceeded {
            window: learned_window(&message),
            message,
        },
        // Only chat servers may lack native tools; the other wires' APIs
        // always have them, and their 400s about tools are about pairing.
        400 | 422 if ctx.wire == Wire::Chat && tools_refused(&message) => {
            TransportError::ToolsRefused { status, message }
        }
        400 | 413 | 422 => TransportError::BadRequest { message },
        429 => TransportError::RateLimited {
            retry_after,
            message,
        },
        500..=599 => TransportError::Server {
            status,
            retry_after,
            message,
        },
        _ => TransportError::Status { status, message },
    }
}

/// What an error sent inside the stream (`frame`, a chunk with an `error`
/// field) says: the context window exceeded, which the agent recovers
/// from by compacting, or any other failure, with the provider's message.
pub fn in_stream_error(frame: &[u8]) -> TransportError {
    let message = body_message(frame);
    if context_exceeded(frame) {
        TransportError::ContextExceeded {
            window: learned_window(&message),
            message,
        }
    } else {
        TransportError::InStream { message }
    }
}

/// Whether a refusal says the model takes no images: it names images
/// and says they are not taken. llama.cpp without a vision projector:
/// "image input is not supported - hint: … provide the mmproj"; OpenAI:
/// "Invalid content type. image_url is only supported by certain
/// models."; OpenRouter (a 404): "No endpoints found that support image
/// input"; others "does not support images" or "vision". Both are
/// needed, so an ordinary 400 (a temperature "not supported", "invalid
/// image data") is not taken for one; and one about the image itself
/// ("You uploaded an unsupported image", "image format not supported")
/// is a bad file, not a model that cannot see.
fn images_refused(message: &str) -> bool {
    let text = message.to_lowercase();
    IMAGE_WORDS.iter().any(|w| text.contains(w))
        && NOT_TAKEN_WORDS.iter().any(|w| text.contains(w))
        && !BAD_IMAGE_WORDS.iter().any(|w| text.contains(w))
}

/// How a refusal of one image's file, not of images, says so,
/// lower-cased.
const BAD_IMAGE_WORDS: &[&str] = &[
    "unsupported image",
    "format",
    "invalid image",
    "corrupt",
    "too large",
    "dimensions",
];

/// What a refusal of images names, lower-cased.
const IMAGE_WORDS: &[&str] = &["image", "vision", "multimodal"];

/// How a refusal of images says they are not taken, lower-cased.
const NOT_TAKEN_WORDS: &[&str] = &[
    "not supported",
    "does not support",
    "doesn't support",
    "only supported",
    "no endpoints found that support",
];

/// Whether a refusal is about the request's tools: its `tools` field
/// ("Unrecognized request argument supplied: tools", "does not support
/// tools"), the `tool` role or a message's `tool_calls`. Any 400 naming
/// them counts: offering the tools in the prompt works on every server,
/// so a false positive costs only the API's native calls.
fn tools_refused(message: &str) -> bool {
    let text = message.to_lowercase();
    TOOLS_REFUSED_WORDS.iter().any(|w| text.contains(w))
}

const TOOLS_REFUSED_WORDS: &[&str] = &["tool", "function call", "functions"];

/// Whether an error body says the request exceeds the model's context
/// window, in any of the shapes the providers use: llama.cpp's
/// `exceed_context_size_error`, OpenAI's `context_length_exceeded`, and the
/// words of llama.cpp, vLLM and OpenRouter.
fn context_exceeded(body: &[u8]) -> bool {
    if let Ok(ErrorBody {
        error: ErrorField::Object(e),
    }) = serde_json::from_slice::<ErrorBody>(body)
        && (e.kind.as_str() == Some("exceed_context_size_error")
            || e.code.as_str() == Some("context_length_exceeded"))
    {
        return true;
    }
    let text = String::from_utf8_lossy(body).to_lowercase();
    CONTEXT_EXCEEDED_WORDS.iter().any(|w| text.contains(w))
}

/// What the providers' context-exceeded messages say, lower-cased
/// (Anthropic's: "prompt is too long: 208000 tokens > 200000 maximum",
/// and "input length and `max_tokens` exceed context limit: 199759 + 8192
/// > 200000").
const CONTEXT_EXCEEDED_WORDS: [&str; 4] = [
    "exceeds the available context size",
    "maximum context length is",
    "prompt is too long",
    "exceed context limit",
];

/// The true context window, where a context-exceeded message states it:
/// llama.cpp's "exceeds the available context size (8192 tokens)",
/// OpenAI's and vLLM's "maximum context length is 8192 tokens", or
/// Anthropic's "… tokens > 200000 maximum" and "… + 8192 > 200000".
pub fn learned_window(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    [
        "available context size (",
        "maximum context length is ",
        " > ",
    ]
    .iter()
    .find_map(|marker| {
        let start = lower.find(marker)? + marker.len();
        let digits: String = lower[start..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok().filter(|n| *n > 0)
    })
}

/// Whether a failure before any token may be retried: 429, 503 and
/// Anthropic's 529 (overloaded) only, as each means "not now" and nothing
/// was generated yet.
pub fn retry_delay(err: &TransportError) -> Option<Option<Duration>> {
    match err {
        TransportError::RateLimited { retry_after, .. } => Some(*retry_after),
        TransportError::ClosedUnanswered { .. } => Some(None),
        TransportError::Server {
            status: 503 | 529,
            retry_after,
            ..
        } => Some(*retry_after),
        _ => None,
    }
}

/// Parses a `Retry-After` header given in seconds (the HTTP-date form is
/// rare for APIs and is treated as absent). A value past
/// [`RETRY_AFTER_MAX`] reads as that maximum: a server's number must not
/// overflow a `Duration`, and anything that long is reported, not waited
/// for.
pub fn parse_retry_after(value: Option<&str>) -> Option<Duration> {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s.min(RETRY_AFTER_MAX.as_secs_f64())).ok())
}

/// The provider's message from an error body: the `error.message` of a JSON
/// body, or the body's text, shortened.
pub fn body_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            error: ErrorField::Object(e),
        }) => e.message,
        Ok(ErrorBody {
            error: ErrorField::Text(t),
        }) => t,
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    excerpt(&text)
}

/// A one-line, bounded excerpt of some text for a chat entry.
pub fn excerpt(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(empty body)".to_string();
    }
    match flat.char_indices().nth(MESSAGE_MAX_CHARS) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// io errors nest (hyper wraps the TLS stream's io error in another), and
/// `io::Error::source` skips the wrapped error, so the nesting is walked by
/// hand.
fn io_kind_within(io: &std::io::Error, kind: std::io::ErrorKind) -> bool {
    io.kind() == kind
        || io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<std::io::Error>())
            .is_some_and(|inner| io_kind_within(inner, kind))
}

fn rustls_within(io: &std::io::Error) -> bool {
    io.get_ref().is_some_and(|inner| {
        inner.is::<rustls::Error>()
            || inner
                .downcast_ref::<std::io::Error>()
                .is_some_and(rustls_within)
    })
}

fn error_chain(err: &reqwest::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
