//! read_file: the window, both caps at/below/above, streaming of large
//! files, binary and non-UTF-8 files.

use std::io::Write;

use dashfloat::bounds::{
    READ_BINARY_PROBE_BYTES, READ_MAX_BYTES, READ_MAX_LINES, READ_STREAM_THRESHOLD_BYTES,
};
use serde_json::Value;

fn lines(n: u64) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

async fn read(dir: &tempfile::TempDir, args: &str) -> Value {
    crate::run(dir.path(), "read_file", args).await
}

fn with_file(name: &str, content: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), content).unwrap();
    dir
}

#[tokio::test]
async fn a_small_file_is_returned_whole_with_its_totals() {
    let dir = with_file("a.txt", b"one\ntwo\nthree");
    let v = read(&dir, r#"{"path":"a.txt"}"#).await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["content"], "one\ntwo\nthree");
    assert_eq!(v["lines"], 3);
    assert_eq!(v["total_lines"], 3);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["lossy"], false);
}

#[tokio::test]
async fn offset_and_limit_select_a_window_and_the_marker_says_where_to_continue() {
    let dir = with_file("a.txt", lines(10).as_bytes());
    let v = read(&dir, r#"{"path":"a.txt","offset":3,"limit":2}"#).await;
    assert_eq!(
        v["content"],
        "line 3\nline 4\n[truncated: showed lines 3-4 of 10 lines, 71 bytes in all; continue with offset=5]"
    );
    assert_eq!(v["lines"], 2);
    assert_eq!(v["truncated"], true);
}

#[tokio::test]
async fn a_window_reaching_the_end_is_not_truncated() {
    let dir = with_file("a.txt", lines(10).as_bytes());
    let v = read(&dir, r#"{"path":"a.txt","offset":9,"limit":2}"#).await;
    assert_eq!(v["content"], "line 9\nline 10\n");
    assert_eq!(v["truncated"], false);
}

#[tokio::test]
async fn an_offset_past_the_end_says_so() {
    let dir = with_file("a.txt", lines(3).as_bytes());
    let v = read(&dir, r#"{"path":"a.txt","offset":10}"#).await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["content"], "");
    assert_eq!(v["note"], "offset 10 is past the end of the file (3 lines)");
}

#[tokio::test]
async fn the_line_cap_at_below_and_above() {
    for (n, truncated) in [
        (READ_MAX_LINES - 1, false),
        (READ_MAX_LINES, false),
        (READ_MAX_LINES + 1, true),
    ] {
        let dir = with_file("a.txt", lines(n).as_bytes());
        let v = read(&dir, r#"{"path":"a.txt","limit":10000}"#).await;
        assert_eq!(v["lines"], n.min(READ_MAX_LINES), "{n}");
        assert_eq!(v["truncated"], truncated, "{n}");
        assert_eq!(v["total_lines"], n);
    }
}

#[tokio::test]
async fn the_byte_cap_at_below_and_above() {
    // 64-byte lines: the cap falls exactly on a line end.
    let line = format!("{}\n", "x".repeat(63));
    let per_cap = (READ_MAX_BYTES / 64) as u64;
    for (n, truncated) in [(per_cap - 1, false), (per_cap, false), (per_cap + 1, true)] {
        let dir = with_file("a.txt", line.repeat(n as usize).as_bytes());
        let v = read(&dir, r#"{"path":"a.txt","limit":10000}"#).await;
        assert_eq!(v["truncated"], truncated, "{n}");
        let content = v["content"].as_str().unwrap();
        let body = content.split("[truncated").next().unwrap();
        assert!(body.len() <= READ_MAX_BYTES, "{n}");
        assert_eq!(v["lines"], n.min(per_cap), "{n}");
    }
}

#[tokio::test]
async fn a_line_longer_than_the_byte_cap_is_cut_and_marked() {
    let dir = with_file(
        "a.txt",
        format!("{}\nnext\n", "y".repeat(READ_MAX_BYTES * 2)).as_bytes(),
    );
    let v = read(&dir, r#"{"path":"a.txt"}"#).await;
    assert_eq!(v["truncated"], true);
    let content = v["content"].as_str().unwrap();
    assert!(content.starts_with(&"y".repeat(READ_MAX_BYTES)));
    // offset=1 would show the same bytes again: the marker says how to
    // read the rest of the line instead.
    assert!(
        content.contains(
            "line 1 alone is longer than the 64 KiB cap; read the rest of it with \
             execute_command, e.g. sed -n '1p' a.txt | cut -b 65537-131072"
        ),
        "{content}"
    );
    assert!(!content.contains("offset="), "{content}");
    // A line cut after others: the next read starts at it.
    let dir = with_file(
        "b.txt",
        format!("first\n{}\n", "y".repeat(READ_MAX_BYTES * 2)).as_bytes(),
    );
    let v = read(&dir, r#"{"path":"b.txt"}"#).await;
    let content = v["content"].as_str().unwrap();
    assert!(
        content.contains("cut at the 64 KiB cap inside line 2; continue with offset=2"),
        "{content}"
    );
}

#[tokio::test]
async fn a_cut_inside_a_utf8_character_is_not_reported_lossy() {
    // "é" is two bytes; an odd prefix puts the cap inside one.
    let text = format!("a{}", "é".repeat(READ_MAX_BYTES));
    let dir = with_file("a.txt", text.as_bytes());
    let v = read(&dir, r#"{"path":"a.txt"}"#).await;
    assert_eq!(v["lossy"], false);
    assert!(!v["content"].as_str().unwrap().contains('\u{FFFD}'));
}

#[tokio::test]
async fn a_nul_byte_in_the_first_block_means_binary() {
    let mut data = b"ELF".to_vec();
    data.push(0);
    data.extend_from_slice(&[b'a'; 100]);
    let dir = with_file("bin", &data);
    let v = read(&dir, r#"{"path":"bin"}"#).await;
    assert_eq!(v["code"], "execution_failed");
    assert!(v["error"].as_str().unwrap().contains("looks binary"));
}

#[tokio::test]
async fn a_nul_byte_past_the_first_block_is_not_probed() {
    let mut data = vec![b'a'; READ_BINARY_PROBE_BYTES];
    data.push(0);
    let dir = with_file("late", &data);
    assert_eq!(read(&dir, r#"{"path":"late"}"#).await["ok"], true);
}

#[tokio::test]
async fn non_utf8_text_is_shown_lossily_and_flagged() {
    let dir = with_file("latin1.txt", b"caf\xe9\n");
    let v = read(&dir, r#"{"path":"latin1.txt"}"#).await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["content"], "caf\u{FFFD}\n");
    assert_eq!(v["lossy"], true);
}

#[tokio::test]
async fn a_file_above_the_stream_threshold_is_windowed_without_a_total() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = std::fs::File::create(dir.path().join("big.txt")).unwrap();
    let mut n = 0u64;
    let mut written = 0u64;
    while written <= READ_STREAM_THRESHOLD_BYTES * 2 {
        n += 1;
        let l = format!("line {n}\n");
        written += l.len() as u64;
        f.write_all(l.as_bytes()).unwrap();
    }
    drop(f);
    let v = read(&dir, r#"{"path":"big.txt","offset":1000,"limit":3}"#).await;
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .starts_with("line 1000\nline 1001\nline 1002\n[truncated")
    );
    assert!(v["content"].as_str().unwrap().contains("more lines follow"));
    assert_eq!(v["total_lines"], Value::Null);
    assert_eq!(v["total_bytes"], written);
    // A window that reaches the end learns the total after all.
    let v = read(&dir, &format!(r#"{{"path":"big.txt","offset":{}}}"#, n - 1)).await;
    assert_eq!(v["content"], format!("line {}\nline {n}\n", n - 1));
    assert_eq!(v["total_lines"], n);
    assert_eq!(v["truncated"], false);
}

#[tokio::test]
async fn a_directory_points_to_list_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let v = read(&dir, r#"{"path":"d"}"#).await;
    assert!(v["error"].as_str().unwrap().contains("use list_directory"));
}

#[tokio::test]
async fn a_fifo_is_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&dir.path().join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let v = read(&dir, r#"{"path":"pipe"}"#).await;
    assert!(v["error"].as_str().unwrap().contains("not a regular file"));
}

#[tokio::test]
async fn a_missing_file_says_how_to_recover() {
    let dir = tempfile::tempdir().unwrap();
    let v = read(&dir, r#"{"path":"nope.txt"}"#).await;
    assert_eq!(v["code"], "execution_failed");
    assert!(v["error"].as_str().unwrap().ends_with(
        "; nothing in the project is named nope.txt (ignored and build folders aside); list_directory . to see what is there"
    ));
}

#[tokio::test]
async fn a_read_through_a_link_out_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("p")).unwrap();
    assert_eq!(read(&dir, r#"{"path":"p"}"#).await["code"], "path_denied");
}

#[tokio::test]
async fn a_last_line_without_a_newline_counts_past_the_stream_threshold() {
    // One line, four times the threshold, no newline at all.
    let one_line = vec![b'a'; 4 * READ_STREAM_THRESHOLD_BYTES as usize];
    let dir = with_file("one.txt", &one_line);
    let v = read(&dir, r#"{"path":"one.txt","offset":2}"#).await;
    assert_eq!(v["content"], "");
    assert_eq!(v["total_lines"], 1);
    assert_eq!(v.get("note"), None, "offset 2 is just after the one line");
    let v = read(&dir, r#"{"path":"one.txt","offset":3}"#).await;
    assert_eq!(v["note"], "offset 3 is past the end of the file (1 line)");

    let mut tail = lines(1).repeat(READ_STREAM_THRESHOLD_BYTES as usize / 7 + 1);
    tail.push_str("tail");
    let n = count(&tail);
    let dir = with_file("tail.txt", tail.as_bytes());
    let v = read(
        &dir,
        &format!(r#"{{"path":"tail.txt","offset":{}}}"#, n + 5),
    )
    .await;
    assert_eq!(
        v["note"],
        format!("offset {} is past the end of the file ({n} lines)", n + 5)
    );
}

#[tokio::test]
async fn a_last_line_without_a_newline_counts_in_the_past_the_end_note() {
    let dir = with_file("a.txt", b"a\nb");
    let v = read(&dir, r#"{"path":"a.txt","offset":5}"#).await;
    assert_eq!(v["total_lines"], 2);
    assert_eq!(v["note"], "offset 5 is past the end of the file (2 lines)");
}

/// Lines as a person counts them.
fn count(text: &str) -> u64 {
    text.lines().count() as u64
}
