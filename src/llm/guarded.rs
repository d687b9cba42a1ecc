//! A byte-stream adapter between the response body and the SSE parser. It
//! enforces three of the stream's bounds before the parser sees a byte —
//! the idle timeout (no data for N seconds: only the bytes of `data` lines
//! restart its clock, so comments and the other lines the parser drops
//! cannot hold a turn open), the frame cap (no single SSE frame larger
//! than N bytes; the parser buffers until a blank line, so a server that
//! never sends one could otherwise grow memory without end) and the
//! reply cap's share of the lines that carry no data (which the parser
//! drops unseen, so nothing else would count them) — and it hands the
//! parser whole lines, cut where a frame ends.
//! eventsource-stream reads its buffer line by line from the start
//! whenever bytes arrive, and copies what follows each line it reads. So:
//! - a read holding hundreds of events is cut at frame ends (a zero-copy
//!   split), and a frame of many lines every [`PIECE_BYTES`] at a line end,
//!   so each copy is short;
//! - a line that comes in many reads is held until it ends, then handed on
//!   joined, so the parser reads it once, not once per read;
//! - bytes that are not UTF-8 are handed on as U+FFFD: the parser would
//!   keep them, and every byte after them, unread until the body ended.
//!   Lines are whole, so the same bytes make the same events however the
//!   reads cut them.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// Past this many bytes, a piece handed on ends at its next line end: the
/// parser copies what follows each line it reads, so a frame of many short
/// lines handed on whole would cost its length times its lines.
pub const PIECE_BYTES: usize = 1024;

/// The start of a data line, as the parser reads it: the field name and
/// the colon after it (a line of the name alone is one too).
const DATA_FIELD: &[u8] = b"data:";
/// A byte-order mark, which the parser skips at the stream's start.
const BOM: &[u8] = "\u{feff}".as_bytes();
/// The most of a line's start [`is_data_line`] looks at.
const LINE_HEAD_BYTES: usize = BOM.len() + DATA_FIELD.len();

/// Why the guarded stream stopped.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// No byte of a data line arrived within the idle timeout.
    #[error("no data for {0:?}")]
    Idle(Duration),
    /// A frame grew past the cap.
    #[error("frame larger than {0} bytes")]
    FrameTooLarge(usize),
    /// The reply's text and the lines without data passed the reply cap.
    #[error("reply larger than {0} bytes")]
    ReplyTooLarge(usize),
    /// The transport failed.
    #[error(transparent)]
    Read(#[from] reqwest::Error),
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// The reply cap (ADR 0007), spent from two places: the stream task
/// spends the reply's text and calls, and [`GuardedBytes`] every line
/// that carries no data (a comment, another field, an empty frame's
/// blank line), which the parser drops unseen. Clones share what was
/// spent.
#[derive(Debug, Clone)]
pub struct ReplyBudget {
    spent: Arc<AtomicUsize>,
    max: usize,
}

impl ReplyBudget {
    /// A budget of `max` bytes, none of them spent.
    pub fn new(max: usize) -> Self {
        Self {
            spent: Arc::default(),
            max,
        }
    }

    /// Spends `n` more bytes; `Err` once more than the cap are spent.
    pub fn spend(&self, n: usize) -> Result<(), GuardError> {
        let before = self.spent.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > self.max {
            return Err(GuardError::ReplyTooLarge(self.max));
        }
        Ok(())
    }
}

/// The response body with the idle timeout, the frame cap and the reply
/// cap applied, cut at frame ends.
pub struct GuardedBytes {
    inner: ByteStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    frame_max: usize,
    frame_len: usize,
    budget: ReplyBudget,
    /// The frame being read has a data line: its blank line is not spent.
    frame_has_data: bool,
    /// No text since the last line end (or the stream's start).
    at_line_start: bool,
    /// The last line end was a CR: a LF right after it is its tail.
    skip_lf: bool,
    /// What is left of the last read, not yet handed on.
    pending: Bytes,
    /// The reads of a line that has not ended yet (at most the cap).
    partial: BytesMut,
    /// A frame ended with a lone CR: an LF is handed on next.
    lf_owed: bool,
    /// No line has ended yet: the first may begin with a byte-order mark.
    first_line: bool,
    /// Nothing has been handed on yet: see [`GuardedBytes::hand_on`].
    nothing_handed_on: bool,
    /// Nothing more is handed on: the stream failed or ended.
    done: bool,
}

impl GuardedBytes {
    /// Wraps a body stream; the lines without data are spent from
    /// `budget`.
    pub fn new(inner: ByteStream, idle: Duration, frame_max: usize, budget: ReplyBudget) -> Self {
        Self {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            frame_max,
            frame_len: 0,
            budget,
            frame_has_data: false,
            at_line_start: true,
            skip_lf: false,
            pending: Bytes::new(),
            partial: BytesMut::new(),
            lf_owed: false,
            first_line: true,
            nothing_handed_on: true,
            done: false,
        }
    }

    /// Splits off the front of `pending` up to and including the first
    /// frame end (a blank line, with any of the SSE line ends: LF, CRLF or a
    /// lone CR); or, when no frame ends in it, up to the first line end
    /// [`PIECE_BYTES`] on, or the last line end; or an unended line. A
    /// frame's length counts every byte up to and including its blank
    /// line, but for the LF of a blank line's CRLF; `Err` once it passes
    /// the cap. A piece holding a byte of a data line (its line end
    /// included) restarts the idle clock; every other line is spent from
    /// the budget, a byte for its line end, as is the blank line of a
    /// frame without data; `Err` once that passes the cap.
    fn next_piece(&mut self) -> Result<Piece, GuardError> {
        let data = &self.pending[..];
        let mut next = 0;
        let mut end = None;
        let mut ends_frame = false;
        // The LF of a blank line's CRLF, which no frame counts.
        let mut uncounted = 0;
        let mut data_read = false;
        // The bytes of the lines that end here and carry no data.
        let mut no_data = 0;
        for at in memchr::memchr2_iter(b'\n', b'\r', data) {
            let line_start = next;
            if at > next {
                // Text since the last line end.
                self.at_line_start = false;
                self.skip_lf = false;
            }
            next = at + 1;
            if data[at] == b'\n' && self.skip_lf {
                // The LF of a CRLF whose CR already ended the line.
                self.skip_lf = false;
                continue;
            }
            self.skip_lf = data[at] == b'\r';
            let first_line = std::mem::take(&mut self.first_line);
            if !self.at_line_start {
                self.at_line_start = true;
                // The line's earlier reads, when it began in one.
                let earlier: &[u8] = if line_start == 0 { &self.partial } else { &[] };
                let text = &data[line_start..at];
                if is_data_line(earlier, text, true, first_line) == Some(true) {
                    data_read = true;
                    self.frame_has_data = true;
                } else {
                    no_data += earlier.len() + text.len() + 1;
                }
                if self.partial.len() + next >= PIECE_BYTES {
                    // A CRLF stays in one piece.
                    if self.skip_lf && data.get(next) == Some(&b'\n') {
                        next += 1;
                        self.skip_lf = false;
                    }
                    end = Some(next);
                    break;
                }
                continue;
            }
            // A line end at a line start: the blank line that ends a frame.
            if !std::mem::take(&mut self.frame_has_data) {
                no_data += 1;
            }
            let mut cut = at + 1;
            if self.skip_lf && data.get(cut) == Some(&b'\n') {
                cut += 1;
                uncounted = 1;
                self.skip_lf = false;
            } else if self.skip_lf {
                // A lone CR, or the read ends on it: the parser would wait
                // for the next byte to tell, so it gets an LF now (a CRLF
                // ends a line as a CR does), and an LF that turns out to
                // follow is dropped.
                self.lf_owed = true;
            }
            end = Some(cut);
            ends_frame = true;
            break;
        }
        let take = match end {
            Some(end) => end,
            // The lines before an unended one go first; the unended one
            // is looked at again, alone, on the next call.
            None if next > 0 => next,
            None => {
                if !data.is_empty() {
                    self.at_line_start = false;
                    self.skip_lf = false;
                    // A long line in many reads: each is progress once
                    // the line is known to be data.
                    data_read =
                        is_data_line(&self.partial, data, false, self.first_line) == Some(true);
                }
                data.len()
            }
        };
        self.frame_len += take - uncounted;
        if self.frame_len > self.frame_max {
            return Err(GuardError::FrameTooLarge(self.frame_max));
        }
        self.budget.spend(no_data)?;
        if data_read {
            self.restart_idle_clock();
        }
        if ends_frame {
            // A new frame starts at a line start; `skip_lf` stays set when
            // a CR ended this read, so an LF that starts the next one is
            // known as that CR's tail (and dropped: the parser had one).
            self.frame_len = 0;
        }
        let bytes = self.pending.split_to(take);
        Ok(if next > 0 {
            Piece::Lines(bytes)
        } else {
            Piece::Unended(bytes)
        })
    }

    /// Puts the idle deadline the idle timeout from now. A timeout too long
    /// for the clock (the config bounds it; a library caller may not) keeps
    /// the first deadline, which tokio put as far off as it goes.
    fn restart_idle_clock(&mut self) {
        if let Some(deadline) = Instant::now().checked_add(self.idle) {
            self.deadline.as_mut().reset(deadline);
        }
    }

    /// `bytes` as the parser is to get them. The first bytes handed on
    /// lose the stream's byte-order mark here, as SSE says: the parser's
    /// own skipping cuts the mark's three bytes at the first and panics.
    /// A line that then still begins with a mark names an unknown field,
    /// which SSE ignores, so its text goes too (its line end stays).
    fn hand_on(&mut self, bytes: Bytes) -> Bytes {
        if bytes.is_empty() || !std::mem::take(&mut self.nothing_handed_on) {
            return bytes;
        }
        let mut bytes = bytes;
        if bytes.starts_with(BOM) {
            bytes = bytes.slice(BOM.len()..);
        }
        if bytes.starts_with(BOM) {
            let end = memchr::memchr2(b'\n', b'\r', &bytes).unwrap_or(bytes.len());
            bytes = bytes.slice(end..);
        }
        bytes
    }

    /// The lines that `piece` ends: the piece itself when its first line
    /// came in one read (no copy), else that line's earlier reads joined
    /// with it.
    fn whole_lines(&mut self, piece: Bytes) -> Bytes {
        if self.partial.is_empty() {
            return piece;
        }
        self.partial.extend_from_slice(&piece);
        self.partial.split().freeze()
    }
}

/// Whether the line whose text so far is `earlier` then `text` is a data
/// line as the parser reads it: its field is `data`, then a colon or the
/// line's end. `None` while the line has not `ended` and is too short to
/// tell. The stream's `first` line may begin with a byte-order mark.
fn is_data_line(earlier: &[u8], text: &[u8], ended: bool, first: bool) -> Option<bool> {
    let mut head = [0; LINE_HEAD_BYTES];
    let from_earlier = earlier.len().min(LINE_HEAD_BYTES);
    head[..from_earlier].copy_from_slice(&earlier[..from_earlier]);
    let from_text = text.len().min(LINE_HEAD_BYTES - from_earlier);
    head[from_earlier..from_earlier + from_text].copy_from_slice(&text[..from_text]);
    let mut head = &head[..from_earlier + from_text];
    if first {
        match head.strip_prefix(BOM) {
            Some(rest) => head = rest,
            None if !ended && BOM.starts_with(head) => return None,
            None => {}
        }
    }
    let field = &DATA_FIELD[..DATA_FIELD.len() - 1];
    if head.starts_with(DATA_FIELD) || ended && head == field {
        Some(true)
    } else if !ended && DATA_FIELD.starts_with(head) {
        None
    } else {
        Some(false)
    }
}

/// `bytes` (whole lines, so no character is cut) as UTF-8: a sequence
/// that is not becomes U+FFFD.
fn utf8(bytes: Bytes) -> Bytes {
    match String::from_utf8_lossy(&bytes) {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(text) => Bytes::from(text),
    }
}

/// What [`GuardedBytes::next_piece`] cut off.
enum Piece {
    /// Whole lines (the first perhaps begun in earlier reads), to hand on.
    Lines(Bytes),
    /// Text of a line that has not ended yet, to hold.
    Unended(Bytes),
}

impl Stream for GuardedBytes {
    type Item = Result<Bytes, GuardError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if std::mem::take(&mut self.lf_owed) {
            return Poll::Ready(Some(Ok(Bytes::from_static(b"\n"))));
        }
        loop {
            while self.pending.is_empty() {
                match self.inner.as_mut().poll_next(cx) {
                    Poll::Ready(Some(Ok(chunk))) => {
                        self.pending = chunk;
                        if self.skip_lf
                            && self.frame_len == 0
                            && self.pending.first() == Some(&b'\n')
                        {
                            // The tail of the CRLF that ended the last
                            // frame: the parser was handed an LF for it
                            // already.
                            self.skip_lf = false;
                            self.pending = self.pending.slice(1..);
                        }
                    }
                    Poll::Ready(Some(Err(e))) => {
                        self.done = true;
                        return Poll::Ready(Some(Err(GuardError::Read(e))));
                    }
                    Poll::Ready(None) => {
                        // The end of the body: what came of an unended
                        // frame is the parser's to judge.
                        self.done = true;
                        let rest = self.partial.split().freeze();
                        let rest = self.hand_on(utf8(rest));
                        return Poll::Ready((!rest.is_empty()).then_some(Ok(rest)));
                    }
                    Poll::Pending => {
                        return match self.deadline.as_mut().poll(cx) {
                            Poll::Ready(()) => {
                                self.done = true;
                                Poll::Ready(Some(Err(GuardError::Idle(self.idle))))
                            }
                            Poll::Pending => Poll::Pending,
                        };
                    }
                }
            }
            match self.next_piece() {
                Ok(Piece::Lines(lines)) => {
                    let lines = utf8(self.whole_lines(lines));
                    return Poll::Ready(Some(Ok(self.hand_on(lines))));
                }
                Ok(Piece::Unended(text)) => self.partial.extend_from_slice(&text),
                Err(e) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
            }
        }
    }
}
