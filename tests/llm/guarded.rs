//! The frame cutter in front of the SSE parser: pieces end exactly at frame
//! ends whatever the line ends (LF, CRLF, lone CR) and however the bytes
//! are split across reads; a frame that ends with a lone CR is handed an
//! LF after it, so the parser need not wait for the next byte to see it
//! end; a line that comes in many reads is handed on whole, once, and a
//! frame of many lines in short pieces; the frame cap counts per frame;
//! bytes that are not UTF-8 are handed on as U+FFFD; only data lines
//! restart the idle clock, and the other lines are spent from the reply
//! cap.

use std::time::Duration;

use bytes::Bytes;
use dashfloat::bounds::PIECE_BYTES;
use dashfloat::llm::guarded::{GuardError, GuardedBytes, ReplyBudget};
use futures_util::StreamExt;

/// A reply budget no stream here runs out of.
fn unbounded() -> ReplyBudget {
    ReplyBudget::new(usize::MAX)
}

/// Feeds `reads` through the cutter; the pieces it hands on, each LF it
/// adds after a frame's lone CR joined to that frame's piece, or the
/// error.
async fn cut(reads: Vec<&[u8]>, cap: usize) -> Result<Vec<Vec<u8>>, String> {
    let inner = futures_util::stream::iter(
        reads
            .into_iter()
            .map(|r| Ok::<_, reqwest::Error>(Bytes::copy_from_slice(r)))
            .collect::<Vec<_>>(),
    );
    let mut guarded = GuardedBytes::new(Box::pin(inner), Duration::from_secs(5), cap, unbounded());
    let mut pieces = Vec::new();
    while let Some(piece) = guarded.next().await {
        match piece {
            Ok(p)
                if &p[..] == b"\n"
                    && pieces.last().is_some_and(|l: &Vec<u8>| l.ends_with(b"\r")) =>
            {
                pieces.last_mut().unwrap().push(b'\n');
            }
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
/// What the parser is handed of [`CR`]: an LF after each frame's end.
const CR_HANDED: &[u8] = b"data: one\r\r\ndata: two\r\r\n";

#[tokio::test]
async fn one_read_is_cut_at_each_frame_end_for_every_kind_of_line_end() {
    for (stream, handed, first) in [(LF, LF, 11), (CRLF, CRLF, 13), (CR, CR_HANDED, 12)] {
        let pieces = cut(vec![stream], 1024).await.unwrap();
        assert_eq!(pieces.len(), 2, "{:?}", String::from_utf8_lossy(stream));
        assert_eq!(pieces[0].len(), first);
        assert_eq!(pieces.concat(), handed);
    }
}

#[tokio::test]
async fn frame_ends_split_across_two_or_three_reads_are_found() {
    for (stream, handed) in [(LF, LF), (CRLF, CRLF), (CR, CR_HANDED)] {
        let whole = cut(vec![stream], 1024).await.unwrap();
        let expected: Vec<usize> = frame_ends(&whole, |_| true);
        for i in 1..stream.len() {
            for j in i..stream.len() {
                let reads = vec![&stream[..i], &stream[i..j], &stream[j..]];
                let pieces = cut(reads, 1024).await.unwrap();
                // A CRLF cut between its CR and LF is handed whole too.
                assert_eq!(pieces.concat(), handed);
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
                    assert!(
                        piece_ends.contains(&e),
                        "split {i}/{j} of {:?} missed the frame end at {e}",
                        String::from_utf8_lossy(stream)
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_line_that_comes_a_byte_at_a_time_is_handed_on_whole() {
    for (stream, handed) in [(LF, LF), (CRLF, CRLF), (CR, CR_HANDED)] {
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        let pieces = cut(bytes, 1024).await.unwrap();
        assert_eq!(pieces.concat(), handed);
        // Every piece ends a line: none is text the parser would read
        // again when the rest of its line came.
        for piece in &pieces {
            assert!(
                piece.ends_with(b"\n") || piece.ends_with(b"\r"),
                "{:?}",
                String::from_utf8_lossy(piece)
            );
        }
        assert!(pieces.iter().any(|p| p.starts_with(b"data: one")));
    }
}

#[tokio::test]
async fn a_frame_of_many_lines_is_handed_on_in_short_pieces() {
    let line = b"data: 0123456789\n";
    let mut frame = line.repeat(1_000);
    frame.push(b'\n');
    let pieces = cut(vec![&frame], 64 * 1024).await.unwrap();
    assert_eq!(pieces.concat(), frame);
    assert!(pieces.len() > 10, "{} pieces", pieces.len());
    for piece in &pieces {
        assert!(piece.len() < PIECE_BYTES + line.len(), "{}", piece.len());
        assert!(piece.ends_with(b"\n"));
    }
    // Cut in two reads inside a line, the line is handed on whole still.
    let split = cut(vec![&frame[..5_000], &frame[5_000..]], 64 * 1024)
        .await
        .unwrap();
    assert_eq!(split.concat(), frame);
    assert!(split.iter().all(|p| p.ends_with(b"\n")));
}

#[tokio::test]
async fn the_unended_frame_at_the_end_of_the_body_is_handed_on() {
    let pieces = cut(vec![b"data: one\n\ndata: t", b"w", b"o\n"], 1024)
        .await
        .unwrap();
    assert_eq!(pieces, [&b"data: one\n\n"[..], b"data: two\n"]);
}

#[tokio::test]
async fn the_idle_timeout_fires_while_a_line_is_held() {
    let inner = futures_util::stream::iter(vec![Ok::<_, reqwest::Error>(Bytes::from_static(
        b"data: one\n\ndata: t",
    ))])
    .chain(futures_util::stream::pending());
    let mut guarded = GuardedBytes::new(
        Box::pin(inner),
        Duration::from_millis(50),
        1024,
        unbounded(),
    );
    let first = guarded.next().await.unwrap().unwrap();
    assert_eq!(&first[..], b"data: one\n\n");
    assert!(matches!(
        guarded.next().await,
        Some(Err(GuardError::Idle(_)))
    ));
    assert!(guarded.next().await.is_none());
}

/// Whether a guard with a 45 ms idle timeout reads on to the end of a
/// stream of `first`, then a hundred `each`, then `data: end`, a read
/// every 10 ms (on tokio's paused clock): whether the reads between kept
/// restarting its clock.
async fn keeps_reading(first: &'static [u8], each: &'static [u8]) -> bool {
    let reads = std::iter::once(first)
        .chain(std::iter::repeat_n(each, 100))
        .chain([&b"data: end\n\n"[..]]);
    let inner = futures_util::stream::iter(reads)
        .then(|read| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok::<_, reqwest::Error>(Bytes::from_static(read))
        })
        .chain(futures_util::stream::pending());
    let mut guarded = GuardedBytes::new(
        Box::pin(inner),
        Duration::from_millis(45),
        1024,
        unbounded(),
    );
    while let Some(piece) = guarded.next().await {
        match piece {
            Ok(piece) if piece.ends_with(b"end\n\n") => return true,
            Ok(_) => {}
            Err(GuardError::Idle(_)) => return false,
            Err(e) => panic!("{e}"),
        }
    }
    false
}

/// Only a data line is progress: comments, the other fields and blank
/// lines, which the parser drops (or keeps for an event that never comes
/// without data), do not restart the idle clock. A data line that comes
/// a few bytes a read is progress with each read, once its start says
/// it is one.
#[tokio::test(start_paused = true)]
async fn only_the_bytes_of_data_lines_restart_the_idle_clock() {
    for each in [
        &b"data: x\n\n"[..],
        b"data:x\r\n\r\n",
        b"data\n\n",
        b"event: delta\ndata: x\n\n",
    ] {
        assert!(
            keeps_reading(b"", each).await,
            "{:?}",
            String::from_utf8_lossy(each)
        );
    }
    assert!(keeps_reading(b"data: ", b"x").await);
    for each in [
        &b": ping\n\n"[..],
        b":\r\n\r\n",
        b"event: ping\n\n",
        b"id: 1\n\n",
        b"retry: 1000\n\n",
        b"\n",
        b"datum: x\n\n",
        b"data : x\n\n",
    ] {
        assert!(
            !keeps_reading(b"data: x\n\n", each).await,
            "{:?}",
            String::from_utf8_lossy(each)
        );
    }
    assert!(!keeps_reading(b": ", b"x").await);
}

/// Whether `stream` gets through a guard with `budget` bytes of reply
/// cap, the same in one read and a byte a read.
async fn fits(stream: &'static [u8], budget: usize) -> bool {
    let mut outcomes = Vec::new();
    for reads in [vec![stream], stream.chunks(1).collect()] {
        let inner = futures_util::stream::iter(
            reads
                .into_iter()
                .map(|r| Ok::<_, reqwest::Error>(Bytes::from_static(r))),
        );
        let budget = ReplyBudget::new(budget);
        let mut guarded = GuardedBytes::new(Box::pin(inner), Duration::from_secs(5), 1024, budget);
        let mut fits = true;
        while let Some(piece) = guarded.next().await {
            match piece {
                Ok(_) => {}
                Err(GuardError::ReplyTooLarge(_)) => fits = false,
                Err(e) => panic!("{e}"),
            }
        }
        outcomes.push(fits);
    }
    assert_eq!(
        outcomes[0],
        outcomes[1],
        "{:?}",
        String::from_utf8_lossy(stream)
    );
    outcomes[0]
}

/// Every line that carries no data is spent from the reply cap, a byte
/// for its line end whatever it is, and so is the blank line of a frame
/// without data; a data line and the blank line after it cost nothing.
/// A byte-order mark makes no data line of the stream's first line (the
/// parser skips it there), but does of a later one.
#[tokio::test]
async fn lines_without_data_are_spent_from_the_reply_cap() {
    for (stream, spent) in [
        (&b"data: x\n\n"[..], 0),
        (b"data\r\n\r\n", 0),
        (b"\xEF\xBB\xBFdata: x\n\n", 0),
        (b": ping\n\n", 8),
        (b": ping\r\n\r\n", 8),
        (b":\r\r", 3),
        (b"\n\n\n", 3),
        (b"event: ping\nid: 1\n\n", 19),
        (b"event: delta\ndata: x\n\n", 13),
        (b"data: x\n: ping\n\n", 7),
        (b"datum: x\n\n", 10),
        (b"data: y\n\n\xEF\xBB\xBFdata: x\n\n", 12),
    ] {
        let shown = String::from_utf8_lossy(stream);
        assert!(fits(stream, spent).await, "{shown:?} within {spent}");
        if spent > 0 {
            assert!(
                !fits(stream, spent - 1).await,
                "{shown:?} within {}",
                spent - 1
            );
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
    let mut guarded = GuardedBytes::new(Box::pin(inner), Duration::MAX, 1024, unbounded());
    let piece = guarded.next().await.unwrap().unwrap();
    assert_eq!(&piece[..], b"data: one\n\n");
    assert!(guarded.next().await.is_none());
}

/// The events the SSE parser makes of `reads` through the cutter, then
/// the error that ended them, if any; the stream behind stays open
/// (pending) after the last read unless `closes`.
async fn events(reads: Vec<&'static [u8]>, cap: usize, closes: bool) -> Vec<String> {
    use eventsource_stream::Eventsource;
    let reads = futures_util::stream::iter(
        reads
            .into_iter()
            .map(|r| Ok::<_, reqwest::Error>(Bytes::from_static(r))),
    );
    let inner: std::pin::Pin<Box<dyn futures_util::Stream<Item = _> + Send>> = if closes {
        Box::pin(reads)
    } else {
        Box::pin(reads.chain(futures_util::stream::pending()))
    };
    let mut parsed =
        GuardedBytes::new(inner, Duration::from_secs(3600), cap, unbounded()).eventsource();
    let mut out = Vec::new();
    // A hang here is the failure: the test's bound only turns it into one.
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(20), parsed.next()).await {
        match event {
            Ok(e) => out.push(e.data),
            Err(e) => {
                out.push(format!("error: {e}"));
                break;
            }
        }
        if !closes && out.len() == 1 {
            break;
        }
    }
    out
}

#[tokio::test]
async fn a_frame_ended_by_a_lone_cr_is_an_event_before_the_next_byte_comes() {
    assert_eq!(events(vec![b"data: one\r\r"], 1024, false).await, ["one"]);
    assert_eq!(
        events(vec![b"data: one\r", b"\r"], 1024, false).await,
        ["one"]
    );
}

#[tokio::test]
async fn a_frame_ended_by_a_lone_cr_is_an_event_before_the_error_after_it() {
    let too_large: &[u8] = b"data: 0123456789012345678901234567890123456789\n\n";
    let whole = events(
        vec![b"data: one\r\rdata: 0123456789012345678901234567890123456789\n\n"],
        32,
        true,
    )
    .await;
    assert_eq!(
        whole,
        ["one", "error: Transport error: frame larger than 32 bytes"]
    );
    let split = events(vec![b"data: one\r\r", too_large], 32, true).await;
    assert_eq!(split, whole);
    // A CRLF split after its CR is one line end, not two.
    let crlf = events(vec![b"data: one\r\n\r", b"\ndata: two\r\n\r\n"], 1024, true).await;
    assert_eq!(crlf, ["one", "two"]);
}

/// Bytes that are not UTF-8 are read as U+FFFD: the parser alone would
/// hold them, and everything after them, until the body ended.
#[tokio::test]
async fn bytes_that_are_not_utf8_are_read_as_replacement_characters() {
    let first = events(vec![b"data: \xff\n\n", b"data: two\n\n"], 1024, false).await;
    assert_eq!(first, ["\u{fffd}"]);
    let all = events(vec![b"data: \xff\n\n", b"data: two\n\n"], 1024, true).await;
    assert_eq!(all, ["\u{fffd}", "two"]);
    // A character split across two reads is whole once its line is.
    let split = events(vec![b"data: \xc3", b"\xa9\n\ndata: two\n\n"], 1024, true).await;
    assert_eq!(split, ["é", "two"]);
}

/// A byte-order mark at the stream's start is skipped, however the reads
/// cut it (the parser's own skipping panics on it); a line that still
/// begins with one after that names an unknown field and makes nothing.
#[tokio::test]
async fn a_byte_order_mark_at_the_start_is_skipped() {
    let once = events(vec![b"\xEF\xBB\xBFdata: one\n\n"], 1024, true).await;
    assert_eq!(once, ["one"]);
    let cut = events(vec![b"\xEF", b"\xBB", b"\xBFdata: one\n\n"], 1024, true).await;
    assert_eq!(cut, ["one"]);
    let twice = events(
        vec![b"\xEF\xBB\xBF\xEF\xBB\xBFdata: one\n\ndata: two\n\n"],
        1024,
        true,
    )
    .await;
    assert_eq!(twice, ["two"]);
    let alone = events(vec![b"\xEF\xBB\xBF"], 1024, true).await;
    assert!(alone.is_empty(), "{alone:?}");
}
