//! The frame cutter in front of the SSE parser: pieces end exactly at frame
//! ends whatever the line ends (LF, CRLF, lone CR) and however the bytes
//! are split across reads; the frame cap counts per frame.

use std::time::Duration;

use bytes::Bytes;
use dashfloat::llm::guarded::{GuardError, GuardedBytes};
use futures_util::StreamExt;

/// Feeds `reads` through the cutter; the pieces it hands on, or the error.
async fn cut(reads: Vec<&[u8]>, cap: usize) -> Result<Vec<Vec<u8>>, String> {
    let inner = futures_util::stream::iter(
        reads
            .into_iter()
            .map(|r| Ok::<_, reqwest::Error>(Bytes::copy_from_slice(r)))
            .collect::<Vec<_>>(),
    );
    let mut guarded = GuardedBytes::new(Box::pin(inner), Duration::from_secs(5), cap);
    let mut pieces = Vec::new();
    while let Some(piece) = guarded.next().await {
        match piece {
            Ok(p) => pieces.push(p.to_vec()),
            Err(GuardError::FrameTooLarge(n)) => return Err(format!("too large {n}")),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(pieces)
}

/// The frame ends found: where pieces that end a frame stop, as offsets
/// into the whole stream.
fn frame_ends(pieces: &[Vec<u8>], frames_end_at: impl Fn(&[u8]) -> bool) -> Vec<usize> {
    let mut at = 0;
    let mut ends = Vec::new();
    for p in pieces {
        at += p.len();
        if frames_end_at(p) {
            ends.push(at);
        }
    }
    ends
}

const LF: &[u8] = b"data: one\n\ndata: two\n\n";
const CRLF: &[u8] = b"data: one\r\n\r\ndata: two\r\n\r\n";
const CR: &[u8] = b"data: one\r\rdata: two\r\r";

#[tokio::test]
async fn one_read_is_cut_at_each_frame_end_for_every_kind_of_line_end() {
    for (stream, first) in [(LF, 11), (CRLF, 13), (CR, 11)] {
        let pieces = cut(vec![stream], 1024).await.unwrap();
        assert_eq!(pieces.len(), 2, "{:?}", String::from_utf8_lossy(stream));
        assert_eq!(pieces[0].len(), first);
        assert_eq!(pieces.concat(), stream);
    }
}

#[tokio::test]
async fn frame_ends_split_across_two_or_three_reads_are_found() {
    for stream in [LF, CRLF, CR] {
        let whole = cut(vec![stream], 1024).await.unwrap();
        let expected: Vec<usize> = frame_ends(&whole, |_| true);
        for i in 1..stream.len() {
            for j in i..stream.len() {
                let reads = vec![&stream[..i], &stream[i..j], &stream[j..]];
                let pieces = cut(reads, 1024).await.unwrap();
                assert_eq!(pieces.concat(), stream);
                // Every frame end of the whole stream is a piece end here.
                let mut at = 0;
                let piece_ends: Vec<usize> = pieces
                    .iter()
                    .map(|p| {
                        at += p.len();
                        at
                    })
                    .collect();
                for &e in &expected {
                    // A CR that ends a read ends the frame there; the LF of
                    // its CRLF then starts the next piece.
                    let cr_cut = stream[e - 1] == b'\n'
                        && stream[e - 2] == b'\r'
                        && piece_ends.contains(&(e - 1));
                    assert!(
                        piece_ends.contains(&e) || cr_cut,
                        "split {i}/{j} of {:?} missed the frame end at {e}",
                        String::from_utf8_lossy(stream)
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn the_cap_counts_each_frame_so_a_long_stream_of_small_frames_passes() {
    for frame in [&b"data: x\n\n"[..], b"data: x\r\n\r\n", b"data: x\r\r"] {
        let stream = frame.repeat(10_000);
        let pieces = cut(vec![&stream], 64).await.unwrap();
        assert_eq!(pieces.len(), 10_000);
    }
}

#[tokio::test]
async fn a_frame_one_byte_over_the_cap_is_refused_even_when_split() {
    let frame = b"data: 0123456789\n\n"; // 18 bytes
    assert!(cut(vec![frame], 18).await.is_ok());
    assert!(cut(vec![frame], 17).await.is_err());
    assert!(cut(vec![&frame[..9], &frame[9..]], 17).await.is_err());
}

#[tokio::test]
async fn an_idle_timeout_too_long_for_the_clock_does_not_overflow() {
    // Instant::now() + Duration::MAX once panicked on the first read.
    let inner = futures_util::stream::iter(vec![Ok::<_, reqwest::Error>(Bytes::from_static(
        b"data: one\n\n",
    ))]);
    let mut guarded = GuardedBytes::new(Box::pin(inner), Duration::MAX, 1024);
    let piece = guarded.next().await.unwrap().unwrap();
    assert_eq!(&piece[..], b"data: one\n\n");
    assert!(guarded.next().await.is_none());
}
