//! The byte stream → frame cutter → SSE events: whatever the bytes and
//! however they are cut into reads, the events (and the frame cap's
//! verdict) are those of the same bytes in one read.
use std::time::Duration;

use bytes::Bytes;
use dashfloat::llm::guarded::GuardedBytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;

/// What the parser makes of `chunks`: each event, or the error it ends on.
fn events(chunks: Vec<Bytes>, frame_max: usize) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let reads = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
        GuardedBytes::new(Box::pin(reads), Duration::from_secs(3600), frame_max)
            .eventsource()
            .map(|event| match event {
                Ok(e) => format!("{:?} {:?} {:?} {:?}", e.event, e.data, e.id, e.retry),
                Err(e) => format!("error: {e}"),
            })
            .collect()
            .await
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
    assert_eq!(events(chunks, frame_max), whole);
}
