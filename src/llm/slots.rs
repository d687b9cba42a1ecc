//! llama.cpp's saved slots: the server writes what it has read of a
//! conversation (its KV cache) to a file, and reads it back later, so a
//! resumed session is not read again token by token. Only a server started
//! with `--slot-save-path` allows it; any refusal is an answer, never a
//! failure of the session. ADR 0034.

use std::time::Duration;

use serde::Deserialize;

use super::classify;
use super::stream::{Endpoint, read_bounded};
use crate::protocol::TransportError;

/// The longest a save or a restore may take. A slot of an 8k window of the
/// default model is about 230 MB; the server writes or reads it in a second
/// or two, and quitting waits for the save (ADR 0034).
pub const SLOT_ACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of the server's answer read.
pub const SLOT_REPLY_MAX_BYTES: usize = 16 * 1024;
/// The most of a refusal's body that is not llama.cpp's JSON shown in the
/// log.
pub const REFUSAL_SHOWN_MAX_BYTES: usize = 200;
/// The slot used: `scripts/local-model` starts the server with one.
const SLOT_ID: u32 = 0;
/// How often an action is sent when the server closed the connection
/// without answering: llama-server closes a connection after a streamed
/// reply, and one taken from the pool right after it (the save that
/// follows a warm-up) is already closed. Nothing was done, so it is sent
/// once more, on a new connection.
const SENDS_MAX: u32 = 2;

/// What is done with the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotAction {
    /// Write what the slot holds to the file.
    Save,
    /// Read the file into the slot.
    Restore,
}

impl SlotAction {
    fn name(self) -> &'static str {
        match self {
            Self::Save => "save",
            Self::Restore => "restore",
        }
    }
}

/// Why the server did not save or restore.
#[derive(Debug, thiserror::Error)]
pub enum SlotError {
    /// The request did not get through.
    #[error("{0}")]
    Transport(String),
    /// The server refused: not started with `--slot-save-path`, no such
    /// file, a file of another model.
    #[error("HTTP {status}: {message}")]
    Refused {
        /// The status.
        status: u16,
        /// The server's message, if it gave one.
        message: String,
    },
    /// No answer within [`SLOT_ACTION_TIMEOUT`].
    #[error("no answer within {}s", SLOT_ACTION_TIMEOUT.as_secs())]
    Timeout,
    /// An answer that is not llama.cpp's.
    #[error("unreadable answer: {0}")]
    Unreadable(String),
}

/// llama.cpp's answer, the part used: tokens written or read.
#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(alias = "n_restored")]
    n_saved: u64,
}

/// The file a session's slot is saved under on the server: the session's
/// id (or what else owns the slot) and the model, so that a session
/// resumed with another model never gets a cache the model did not write.
/// Only characters every file system takes.
pub fn file_name(owner: &str, model: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("dashfloat-{}-{}.bin", safe(owner), safe(model))
}

/// The file the slot holding only the fixed prefix of a new session is
/// saved under: a hash of the warm-up request that read it (system prompt,
/// project instructions, tools, model), so a changed prefix gets a file of
/// its own. The hash is FNV-1a, the same in every build; a collision would
/// cost only time, as llama.cpp reuses no token that differs.
pub fn prefix_file_name(request: &[u8], model: &str) -> String {
    let hash = request.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    file_name(&format!("prefix-{hash:016x}"), model)
}

/// Asks the server to save its slot to `file`, or to restore it from
/// `file`; the tokens written or read.
pub async fn act(endpoint: &Endpoint, action: SlotAction, file: &str) -> Result<u64, SlotError> {
    let url = crate::base_url::server(&endpoint.context.base_url, &format!("/slots/{SLOT_ID}"));
    let joined = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{joined}action={}", action.name());
    let body = serde_json::json!({ "filename": file });
    let exchange = async {
        let mut sent = 1;
        let response = loop {
            let request = endpoint.authorised(endpoint.client.post(&url).json(&body));
            match request.send().await {
                Ok(response) => break response,
                Err(e)
                    if sent < SENDS_MAX
                        && matches!(
                            classify::connect_error(&e, &endpoint.context),
                            TransportError::ClosedUnanswered { .. }
                        ) =>
                {
                    sent += 1;
                }
                Err(e) => return Err(SlotError::Transport(e.without_url().to_string())),
            }
        };
        let status = response.status();
        let text = read_bounded(response, SLOT_ACTION_TIMEOUT, SLOT_REPLY_MAX_BYTES).await;
        if !status.is_success() {
            return Err(SlotError::Refused {
                status: status.as_u16(),
                message: refusal_message(&text),
            });
        }
        let answer: Answer =
            serde_json::from_slice(&text).map_err(|e| SlotError::Unreadable(e.to_string()))?;
        Ok(answer.n_saved)
    };
    tokio::time::timeout(SLOT_ACTION_TIMEOUT, exchange)
        .await
        .map_err(|_| SlotError::Timeout)?
}

/// llama.cpp's `{"error": {"message": …}}`, else the body's start.
fn refusal_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    match parsed.as_ref().and_then(|v| v["error"]["message"].as_str()) {
        Some(message) => message.to_string(),
        None => {
            String::from_utf8_lossy(&body[..body.len().min(REFUSAL_SHOWN_MAX_BYTES)]).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_only_portable_characters() {
        assert_eq!(
            file_name("20261202-000000-bbbbbb", "qwen2.5-coder-1.5b"),
            "dashfloat-20261202-000000-bbbbbb-qwen2.5-coder-1.5b.bin"
        );
        assert_eq!(
            file_name("20261202-000000-bbbbbb", "org/model:q4 K"),
            "dashfloat-20261202-000000-bbbbbb-org_model_q4_K.bin"
        );
    }

    #[test]
    fn a_prefix_file_changes_with_any_byte_of_the_request() {
        let one = prefix_file_name(b"{\"messages\":[]}", "m");
        assert_eq!(one, prefix_file_name(b"{\"messages\":[]}", "m"));
        assert!(one.starts_with("dashfloat-prefix-") && one.ends_with("-m.bin"));
        assert_ne!(one, prefix_file_name(b"{\"messages\":[ ]}", "m"));
        assert_ne!(one, prefix_file_name(b"{\"messages\":[]}", "n"));
    }

    #[test]
    fn a_refusal_says_what_the_server_said() {
        let body = br#"{"error":{"code":501,"message":"This server does not support slots action.","type":"not_supported_error"}}"#;
        assert_eq!(
            refusal_message(body),
            "This server does not support slots action."
        );
        assert_eq!(refusal_message(b"Not Found"), "Not Found");
    }
}
