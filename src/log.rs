//! The session log: timestamped lines in a file, off by default
//! (`--log PATH`). Nothing is ever logged to the screen. A task of its own
//! does the writing, so no other task waits on the disk; when it falls
//! behind, lines are dropped rather than queued without bound. The API key
//! and request bodies are never logged, every line has the credentials of
//! any URL in it redacted, whoever wrote it, and no control character is
//! logged (a log followed with `tail -f` is a terminal too). ADR 0016.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::safe_text::strip_controls;
use crate::secret::redact_userinfo;

/// Lines waiting for the writer at most.
const LOG_QUEUE: usize = 1024;
/// The most bytes of one line's text; the rest is cut (a line may quote
/// what the model wrote, up to a reply's 4 MiB), so the queue holds at
/// most about 8 MiB.
pub const LOG_LINE_MAX_BYTES: usize = 8 * 1024;

/// A handle for writing log lines; cheap to clone, does nothing when the
/// log is off.
#[derive(Debug, Clone, Default)]
pub struct Log {
    tx: Option<mpsc::Sender<String>>,
}

impl Log {
    /// A log that writes nothing.
    pub fn off() -> Self {
        Self::default()
    }

    /// Opens (appending, creating) `path` and starts the writer task. Must
    /// be called inside a tokio runtime.
    pub fn to_file(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let (tx, mut rx) = mpsc::channel::<String>(LOG_QUEUE);
        tokio::spawn(async move {
            let mut file = tokio::fs::File::from_std(file);
            while let Some(line) = rx.recv().await {
                if file.write_all(line.as_bytes()).await.is_err() {
                    // A full disk or a revoked file ends logging, nothing else.
                    break;
                }
            }
            let _ = file.flush().await;
        });
        Ok(Self { tx: Some(tx) })
    }

    /// Logs one line, URL credentials redacted, cut at
    /// [`LOG_LINE_MAX_BYTES`]; `text` is only built when the log is on.
    pub fn line(&self, text: impl FnOnce() -> String) {
        if let Some(tx) = &self.tx {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            // Cut after redacting: a cut URL could hide its credentials
            // from the redaction.
            let text = strip_controls(&redact_userinfo(&text())).replace('\n', " ");
            let kept = &text[..text.floor_char_boundary(LOG_LINE_MAX_BYTES)];
            let more = if kept.len() < text.len() {
                " […]"
            } else {
                ""
            };
            let line = format!(
                "{}.{:03} {kept}{more}\n",
                now.as_secs(),
                now.subsec_millis()
            );
            let _ = tx.try_send(line);
        }
    }
}
