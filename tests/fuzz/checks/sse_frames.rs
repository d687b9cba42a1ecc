//! The byte stream → frame cutter → SSE events: whatever the bytes and
//! however they are cut into reads, the events up to the first error (and
//! that error: the frame cap's verdict, bad UTF-8), where the reader stops,
//! are those of the same bytes in one read.
use std::time::Duration;

use bytes::Bytes;
use dashfloat::llm::guarded::GuardedBytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;

thread_local! {
    /// One runtime for every input of the process: building one per input
    /// cost more than the parsing it ran.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
}

/// What the parser makes of `chunks`: each event up to the first error,
/// and that error (the stream's reader stops there).
fn events(chunks: Vec<Bytes>, frame_max: usize) -> Vec<String> {
    RUNTIME.with(|rt| {
        rt.block_on(async {
            let reads = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
            let mut events =
                GuardedBytes::new(Box::pin(reads), Duration::from_secs(3600), frame_max)
                    .eventsource();
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

/// Two bytes of frame cap (from 1), one choosing the read sizes, then the
/// stream's bytes.
pub fn run(data: &[u8]) {
    let Some((head, bytes)) = data.split_at_checked(3) else {
        return;
    };
    let frame_max = usize::from(u16::from_le_bytes([head[0], head[1]])).max(1);
    let r = usize::from(head[2]);
    let sizes = [1 + r % 7, 1 + r / 7 % 37, 1 + r];
    let whole = events(vec![Bytes::copy_from_slice(bytes)], frame_max);
    let mut chunks = Vec::new();
    let mut rest = Bytes::copy_from_slice(bytes);
    for n in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        chunks.push(rest.split_to((*n).min(rest.len())));
    }
    let cut = events(chunks, frame_max);
    if let Some(at) = (0..cut.len().max(whole.len())).find(|&i| cut.get(i) != whole.get(i)) {
        let tail = |e: Option<&String>| {
            e.map(|e| {
                e.chars()
                    .rev()
                    .take(160)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect::<String>()
            })
        };
        panic!(
            "event {at} of {} (whole) / {} (cut) differs: whole {:?}, cut {:?}",
            whole.len(),
            cut.len(),
            tail(whole.get(at)),
            tail(cut.get(at))
        );
    }
}
