//! The byte stream → frame cutter → SSE events: whatever the bytes and
//! however they are cut into reads, the events up to the first error (and
//! that error: the frame cap's verdict, or the reply cap's on the lines
//! without data), where the reader stops, are those of the same bytes in
//! one read. And the cutter changes no event: for UTF-8 bytes, the events
//! are the parser's own, up to where a cap stops them.
use std::fmt::Display;
use std::pin::pin;
use std::time::Duration;

use bytes::Bytes;
use dashfloat::llm::guarded::{GuardedBytes, ReplyBudget};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

thread_local! {
    /// One runtime for every input of the process: building one per input
    /// cost more than the parsing it ran.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
}

/// The reads of a body that arrives as `chunks`.
fn reads(chunks: Vec<Bytes>) -> impl Stream<Item = Result<Bytes, reqwest::Error>> + Send {
    futures_util::stream::iter(chunks.into_iter().map(Ok))
}

/// Each event of the stream `events` makes (inside the runtime) up to the
/// first error, and that error (the stream's reader stops there).
fn collect<E: Display, S: Stream<Item = Result<Event, EventStreamError<E>>>>(
    events: impl FnOnce() -> S,
) -> Vec<String> {
    RUNTIME.with(|rt| {
        rt.block_on(async {
            let mut events = pin!(events());
            let mut out = Vec::new();
            while let Some(event) = events.next().await {
                match event {
                    Ok(e) => out.push(format!(
                        "{:?} {:?} {:?} {:?}",
                        e.event, e.data, e.id, e.retry
                    )),
                    Err(e) => {
                        out.push(format!("error: {e}"));
                        break;
                    }
                }
            }
            out
        })
    })
}

/// What the parser makes of `chunks` through the cutter, with a frame cap
/// and a reply cap.
fn events(chunks: Vec<Bytes>, frame_max: usize, reply_max: usize) -> Vec<String> {
    collect(|| {
        GuardedBytes::new(
            Box::pin(reads(chunks)),
            Duration::from_secs(3600),
            frame_max,
            ReplyBudget::new(reply_max),
        )
        .eventsource()
    })
}

/// Panics unless `a` and `b`, the events of the same bytes made two ways
/// (`what` says which), are the same, naming the first that differs.
fn same(a: &[String], b: &[String], what: &str) {
    let Some(at) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) else {
        return;
    };
    let tail = |e: Option<&String>| {
        e.map(|e| {
            let chars: Vec<char> = e.chars().collect();
            chars[chars.len().saturating_sub(160)..]
                .iter()
                .collect::<String>()
        })
    };
    panic!(
        "{what}: event {at} of {} / {} differs: {:?} / {:?}",
        a.len(),
        b.len(),
        tail(a.get(at)),
        tail(b.get(at))
    );
}

/// The stream as SSE reads it from its start: a byte-order mark there is
/// skipped, and a first line that still begins with one names an unknown
/// field, which is ignored (the parser alone panics on either).
fn spec_start(bytes: &[u8]) -> &[u8] {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    if !bytes.starts_with(BOM) {
        return bytes;
    }
    let end = bytes.iter().position(|b| matches!(b, b'\n' | b'\r'));
    &bytes[end.unwrap_or(bytes.len())..]
}

/// Two bytes of cap (from 1: the frame cap, then alone the reply cap),
/// one choosing the read sizes, then the stream's bytes.
pub fn run(data: &[u8]) {
    let Some((head, bytes)) = data.split_at_checked(3) else {
        return;
    };
    let cap = usize::from(u16::from_le_bytes([head[0], head[1]])).max(1);
    let r = usize::from(head[2]);
    let sizes = [1 + r % 7, 1 + r / 7 % 37, 1 + r];
    let one_read = || vec![Bytes::copy_from_slice(bytes)];
    let whole = events(one_read(), cap, usize::MAX);
    let mut chunks = Vec::new();
    let mut rest = Bytes::copy_from_slice(bytes);
    for n in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        chunks.push(rest.split_to((*n).min(rest.len())));
    }
    let cut = events(chunks.clone(), cap, usize::MAX);
    same(&whole, &cut, "in one read / in many");
    let charged = events(one_read(), usize::MAX, cap);
    let charged_cut = events(chunks, usize::MAX, cap);
    same(&charged, &charged_cut, "charged in one read / in many");
    if std::str::from_utf8(bytes).is_err() {
        return;
    }
    // Without a cap, the cutter changes no event of the parser's own but
    // one, on purpose: a frame whose last line end is a lone CR ends at
    // once, where the parser alone waits for the next byte to tell it from
    // a CRLF, and so never yields it at the body's end. An LF after such a
    // CR is what the cutter hands on.
    let uncapped = events(one_read(), usize::MAX, usize::MAX);
    let mut body = spec_start(bytes).to_vec();
    if body.ends_with(b"\r") {
        body.push(b'\n');
    }
    let alone = collect(|| reads(vec![Bytes::from(body)]).eventsource());
    same(&uncapped, &alone, "through the cutter / the parser alone");
    // The caps only stop the events: the frame cap at a frame longer than
    // it, the reply cap where the lines without data pass it (no line is
    // charged more than its bytes).
    for (capped, stop) in [
        (&whole, "frame larger than"),
        (&charged, "reply larger than"),
    ] {
        match capped.split_last() {
            Some((last, before)) if last.starts_with("error: ") && last.contains(stop) => {
                assert!(
                    bytes.len() > cap,
                    "a cap of {cap} stopped {} bytes",
                    bytes.len()
                );
                same(
                    before,
                    &uncapped[..before.len().min(uncapped.len())],
                    "capped / uncapped",
                );
            }
            _ => same(capped, &uncapped, "capped / uncapped"),
        }
    }
}
