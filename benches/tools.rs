//! Benchmarks of the tool catalogue: what a call costs, and that reading a
//! window of a huge file keeps memory flat. Plain `main`, prints a table.
//! Run with `cargo bench --bench tools`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use dashfloat::tools::{ToolCall, ToolContext, execute, validate};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Peak resident set (VmHWM) in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resets the peak so the next reading covers only what follows.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn call(tool: &str, args: Value) -> ToolCall {
    validate(tool, &args.to_string()).unwrap()
}

/// Runs `f` `n` times; returns (mean, min).
fn time(n: u32, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut total = Duration::ZERO;
    let mut min = Duration::MAX;
    for _ in 0..n {
        let start = Instant::now();
        f();
        let took = start.elapsed();
        total += took;
        min = min.min(took);
    }
    (total / n, min)
}

fn row(name: &str, n: u32, (mean, min): (Duration, Duration), note: &str) {
    println!(
        "| {name:<44} | {n:>5} | {:>10.3} | {:>10.3} | {note}",
        mean.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let run = |c: &ToolCall| -> Value {
        serde_json::to_value(rt.block_on(execute(c, &ctx, CancellationToken::new()))).unwrap()
    };

    println!(
        "| benchmark                                    |  runs |  mean (ms) |   min (ms) | note"
    );
    println!(
        "|----------------------------------------------|-------|------------|------------|-----"
    );

    // read_file of a 64 KiB file.
    let line = format!("{}\n", "r".repeat(63));
    std::fs::write(dir.path().join("64k.txt"), line.repeat(1024)).unwrap();
    let c = call("read_file", json!({"path": "64k.txt"}));
    assert_eq!(run(&c)["lines"], 1024);
    row(
        "read_file 64 KiB file (whole)",
        200,
        time(200, || drop(run(&c))),
        "",
    );

    // read_file of a 2,000-line window in the middle of a 1 GiB file.
    // 32-byte lines, so a 2,000-line window (62.5 KiB) fits the byte cap.
    let short = format!("{}\n", "g".repeat(31));
    let gib_lines: u64 = (1 << 30) / 32;
    let start = Instant::now();
    {
        let mut f = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(dir.path().join("1g.txt")).unwrap(),
        );
        let block = short.repeat(32 * 1024);
        for _ in 0..(1 << 30) / block.len() {
            f.write_all(block.as_bytes()).unwrap();
        }
        f.flush().unwrap();
    }
    let made = start.elapsed();
    let c = call(
        "read_file",
        json!({"path": "1g.txt", "offset": gib_lines / 2, "limit": 2000}),
    );
    reset_peak_rss();
    let before = peak_rss_kib();
    let result = run(&c);
    assert_eq!(result["lines"], 2000);
    let timing = time(3, || drop(run(&c)));
    let after = peak_rss_kib();
    row(
        "read_file 2,000 lines mid 1 GiB file",
        3,
        timing,
        &format!(
            "peak RSS {} KiB -> {} KiB (+{} KiB); file made in {:.1}s",
            before,
            after,
            after.saturating_sub(before),
            made.as_secs_f64()
        ),
    );
    std::fs::remove_file(dir.path().join("1g.txt")).unwrap();

    // edit_file on a 1 MiB file, alternating so every edit is real.
    let mut content = line.repeat(16 * 1024);
    content.replace_range(512 * 1024..512 * 1024 + 6, "MARK_A");
    std::fs::write(dir.path().join("1m.txt"), &content).unwrap();
    let a_to_b = call(
        "edit_file",
        json!({"path": "1m.txt", "search_block": "MARK_A", "replace_block": "MARK_B"}),
    );
    let b_to_a = call(
        "edit_file",
        json!({"path": "1m.txt", "search_block": "MARK_B", "replace_block": "MARK_A"}),
    );
    let mut flip = false;
    row(
        "edit_file 1 MiB file (locate + atomic write)",
        50,
        time(50, || {
            flip = !flip;
            let v = run(if flip { &a_to_b } else { &b_to_a });
            assert_eq!(v["ok"], true);
        }),
        "includes fsync",
    );

    // list_directory of 10,000 entries.
    std::fs::create_dir(dir.path().join("many")).unwrap();
    for i in 0..10_000 {
        std::fs::write(dir.path().join(format!("many/file-{i:05}.txt")), "").unwrap();
    }
    let c = call("list_directory", json!({"path": "many"}));
    assert_eq!(run(&c)["total"], 10_000);
    row(
        "list_directory 10,000 entries (501 stat'ed)",
        50,
        time(50, || drop(run(&c))),
        "",
    );

    // execute_command("true") against a bare sh -c true spawn + wait.
    let c = call("execute_command", json!({"command": "true"}));
    assert_eq!(run(&c)["exit_code"], 0);
    let bare = time(200, || {
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("true")
            .status()
            .unwrap();
        assert!(status.success());
    });
    let ours = time(200, || drop(run(&c)));
    row("baseline: std Command sh -c true", 200, bare, "");
    row(
        "execute_command(\"true\")",
        200,
        ours,
        &format!(
            "{:.2}x the baseline (mean)",
            ours.0.as_secs_f64() / bare.0.as_secs_f64()
        ),
    );
}
