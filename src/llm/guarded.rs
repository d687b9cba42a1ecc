//! A byte-stream adapter that enforces two of the stream's bounds before the
//! SSE parser sees a byte: the idle timeout (no bytes for N seconds) and the
//! frame cap (no single SSE frame larger than N bytes). The SSE parser
//! buffers until a blank line, so without the cap a server that never sends
//! one could grow memory without end.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// Why the guarded stream stopped.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// No bytes arrived within the idle timeout.
    #[error("no bytes for {0:?}")]
    Idle(Duration),
    /// A frame grew past the cap.
    #[error("frame larger than {0} bytes")]
    FrameTooLarge(usize),
    /// The transport failed.
    #[error(transparent)]
    Read(#[from] reqwest::Error),
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send>>;

/// The response body with the idle timeout and frame cap applied.
pub struct GuardedBytes {
    inner: ByteStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    frame_max: usize,
    frame_len: usize,
    after_newline: bool,
    failed: bool,
}

impl GuardedBytes {
    /// Wraps a body stream.
    pub fn new(inner: ByteStream, idle: Duration, frame_max: usize) -> Self {
        Self {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            frame_max,
            frame_len: 0,
            after_newline: false,
            failed: false,
        }
    }

    /// Counts bytes since the last blank line (`\r` is ignored so CRLF
    /// framing counts like LF framing); false once a frame passes the cap.
    fn count(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            match b {
                b'\n' if self.after_newline => self.frame_len = 0,
                b'\n' => self.after_newline = true,
                b'\r' => {}
                _ => {
                    self.after_newline = false;
                    self.frame_len += 1;
                    if self.frame_len > self.frame_max {
                        return false;
                    }
                }
            }
        }
        true
    }
}

impl Stream for GuardedBytes {
    type Item = Result<bytes::Bytes, GuardError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                let idle = self.idle;
                self.deadline.as_mut().reset(Instant::now() + idle);
                if self.count(&chunk) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.failed = true;
                    Poll::Ready(Some(Err(GuardError::FrameTooLarge(self.frame_max))))
                }
            }
            Poll::Ready(Some(Err(e))) => {
                self.failed = true;
                Poll::Ready(Some(Err(GuardError::Read(e))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    self.failed = true;
                    Poll::Ready(Some(Err(GuardError::Idle(self.idle))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}
