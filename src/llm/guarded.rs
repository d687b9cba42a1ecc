//! A byte-stream adapter between the response body and the SSE parser. It
//! enforces two of the stream's bounds before the parser sees a byte — the
//! idle timeout (no bytes for N seconds) and the frame cap (no single SSE
//! frame larger than N bytes; the parser buffers until a blank line, so a
//! server that never sends one could otherwise grow memory without end) —
//! and it hands the parser one frame at a time. eventsource-stream shifts
//! its buffer after every event, so a network read holding hundreds of
//! events would cost time quadratic in its size; cut at frame ends (a
//! zero-copy split), each shift moves only the few bytes after one event.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
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

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// The response body with the idle timeout and frame cap applied, cut at
/// frame ends.
pub struct GuardedBytes {
    inner: ByteStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    frame_max: usize,
    frame_len: usize,
    carry: Carry,
    /// What is left of the last read, not yet handed on.
    pending: Bytes,
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
            carry: Carry::None,
            pending: Bytes::new(),
            failed: false,
        }
    }

    /// Splits off the front of `pending` up to and including the first
    /// frame end (a blank line: `\n\n`, or `\n\r\n` with CRLF line ends),
    /// or all of it when no frame ends in it. A frame's length counts every
    /// byte up to and including its blank line; `Err` once it passes the cap.
    fn next_piece(&mut self) -> Result<Bytes, GuardError> {
        let data = &self.pending[..];
        // A frame end may straddle two reads.
        let mut end = match (self.carry, data) {
            (Carry::Lf, [b'\n', ..]) | (Carry::LfCr, [b'\n', ..]) => Some(1),
            (Carry::Lf, [b'\r', b'\n', ..]) => Some(2),
            _ => None,
        };
        if end.is_none() {
            end = memchr::memchr_iter(b'\n', data).find_map(|nl| match &data[nl + 1..] {
                [b'\n', ..] => Some(nl + 2),
                [b'\r', b'\n', ..] => Some(nl + 3),
                _ => None,
            });
        }
        let take = end.unwrap_or(data.len());
        self.frame_len += take;
        if self.frame_len > self.frame_max {
            return Err(GuardError::FrameTooLarge(self.frame_max));
        }
        if end.is_some() {
            self.frame_len = 0;
            self.carry = Carry::None;
        } else if data.ends_with(b"\n") {
            self.carry = Carry::Lf;
        } else if data.ends_with(b"\n\r") {
            self.carry = Carry::LfCr;
        } else if !data.is_empty() {
            self.carry = Carry::None;
        }
        Ok(self.pending.split_to(take))
    }
}

/// How the bytes before the current read ended, for a frame end split
/// across two reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carry {
    None,
    Lf,
    LfCr,
}

impl Stream for GuardedBytes {
    type Item = Result<Bytes, GuardError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        if self.pending.is_empty() {
            match self.inner.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    let idle = self.idle;
                    self.deadline.as_mut().reset(Instant::now() + idle);
                    self.pending = chunk;
                }
                Poll::Ready(Some(Err(e))) => {
                    self.failed = true;
                    return Poll::Ready(Some(Err(GuardError::Read(e))));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    return match self.deadline.as_mut().poll(cx) {
                        Poll::Ready(()) => {
                            self.failed = true;
                            Poll::Ready(Some(Err(GuardError::Idle(self.idle))))
                        }
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
        let piece = self.next_piece();
        if piece.is_err() {
            self.failed = true;
        }
        Poll::Ready(Some(piece))
    }
}
