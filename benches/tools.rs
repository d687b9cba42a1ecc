//! Benchmarks of the tool catalogue: what a call costs, that reading a
//! window of a huge file keeps memory flat, and glob and grep against
//! `rg` (or `grep -rn` where it is not installed) and `find`, run in the
//! same process one after the other, and what the syntax check after an
//! edit costs it (ADR 0047). Plain `main`, prints a table.
//! Run with `cargo bench --bench tools`; `cargo bench --bench tools
//! syntax` runs the syntax-check rows alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dashfloat::tools::{Checkpoints, Parents, ToolCall, ToolContext, execute, state_of};
use serde_json::{Value, json};
use support::calls::validate;
use support::{peak_rss_kib, reset_peak_rss};
use tokio_util::sync::CancellationToken;

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

/// Whether `rg` is on the `PATH`.
fn has_rg() -> bool {
    Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A source file of about `lines` lines in `language` (`py` or `rs`): a
/// run of small functions, with a `MARK_A` comment in its middle for an
/// edit to flip.
fn source(language: &str, lines: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.lines().count() < lines {
        if i == lines / 16 {
            out.push_str(if language == "py" {
                "# MARK_A\n"
            } else {
                "// MARK_A\n"
            });
        }
        out.push_str(&if language == "py" {
            format!(
                "def function_{i}(alpha, beta=None):\n    \"\"\"Doc {i}.\"\"\"\n    total = alpha + {i} * (beta or 1)\n    for k in range({}):\n        total += k ** 2 if k % 2 else -k\n    return {{'value': total, 'name': \"f{i}\"}}\n\n\n",
                i % 7
            )
        } else {
            format!(
                "/// Doc {i}.\npub fn function_{i}(alpha: u64, beta: Option<u64>) -> u64 {{\n    let mut total = alpha + {i} * beta.unwrap_or(1);\n    for k in 0..{} {{\n        total += if k % 2 == 0 {{ k * k }} else {{ k }};\n    }}\n    total\n}}\n\n",
                i % 7
            )
        });
        i += 1;
    }
    out
}

/// What the syntax check adds to an edit (ADR 0047): `edit_file` on a
/// Python and a Rust file of about 200 and 5,000 lines, flipping a
/// comment, against the same edit of the same text in a `.txt` file,
/// which is not checked; then of the file with an error at its top the
/// edit did not make, which parses the old content too.
fn syntax_checks(dir: &Path, run: &dyn Fn(&ToolCall) -> Value) {
    for (language, broken) in [("py", "def broken(:\n"), ("rs", "fn broken( {}\n")] {
        for lines in [200, 5_000] {
            let text = source(language, lines);
            let runs = if lines > 1_000 { 30 } else { 100 };
            let edit = |name: &str, content: &str| {
                std::fs::write(dir.join(name), content).unwrap();
                let flip = |from: &str, to: &str| {
                    call(
                        "edit_file",
                        json!({"path": name, "search_block": from, "replace_block": to}),
                    )
                };
                let (a_to_b, b_to_a) = (flip("MARK_A", "MARK_B"), flip("MARK_B", "MARK_A"));
                let mut flipped = false;
                time(runs, || {
                    flipped = !flipped;
                    let v = run(if flipped { &a_to_b } else { &b_to_a });
                    assert_eq!(v["ok"], true, "{v}");
                    assert!(v.get("syntax_errors").is_none(), "{v}");
                })
            };
            let plain = edit(&format!("{language}-{lines}.txt"), &text);
            let checked = edit(&format!("{language}-{lines}.{language}"), &text);
            let both = edit(
                &format!("{language}-{lines}-broken.{language}"),
                &format!("{broken}{text}"),
            );
            let kib = text.len() as f64 / 1024.0;
            let over = |t: (Duration, Duration)| {
                format!(
                    "+{:.2} ms over the .txt (mean)",
                    (t.0.as_secs_f64() - plain.0.as_secs_f64()) * 1e3
                )
            };
            row(
                &format!("edit_file {lines}-line .txt, {kib:.0} KiB (no check)"),
                runs,
                plain,
                "includes fsync",
            );
            row(
                &format!("edit_file {lines}-line .{language} (one parse)"),
                runs,
                checked,
                &over(checked),
            );
            row(
                &format!("edit_file {lines}-line .{language} broken before (two)"),
                runs,
                both,
                &over(both),
            );
        }
    }
}

/// Runs `argv` in `dir`, its output discarded; "nothing found" (exit 1)
/// is a success.
fn external(dir: &Path, argv: &[String]) {
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some_and(|c| c <= 1), "{argv:?}: {status}");
}

/// Times `ours` and each reference command in `dir`, `n` runs each after
/// one to warm the page cache, and prints a row per command and ours with
/// its ratio to each (means).
fn versus(name: &str, n: u32, dir: &Path, references: &[Vec<String>], mut ours: impl FnMut()) {
    ours();
    let theirs: Vec<(String, (Duration, Duration))> = references
        .iter()
        .map(|argv| {
            external(dir, argv);
            (argv.join(" "), time(n, || external(dir, argv)))
        })
        .collect();
    let mine = time(n, ours);
    let mut ratios = Vec::new();
    for (command, timing) in &theirs {
        row(&format!("  {command}"), n, *timing, "");
        ratios.push(format!(
            "{:.2}x {}",
            mine.0.as_secs_f64() / timing.0.as_secs_f64(),
            command.split(' ').next().unwrap_or_default()
        ));
    }
    row(name, n, mine, &ratios.join(", "));
}

/// Writes a tree of 100 directories of 10 directories of 100 small files
/// (100,000 files, half `.rs`, one in a hundred holding `needle`).
fn generate_tree(dir: &Path) {
    for a in 0..100 {
        for b in 0..10 {
            let sub = dir.join(format!("d{a:02}/e{b}"));
            std::fs::create_dir_all(&sub).unwrap();
            for c in 0..100 {
                let i = (a * 10 + b) * 100 + c;
                let ext = if i % 2 == 0 { "rs" } else { "txt" };
                let word = if i % 100 == 7 { "needle" } else { "hay" };
                std::fs::write(
                    sub.join(format!("f{c:03}.{ext}")),
                    format!("// file {i}\nfn f{i}() {{}}\nlet {word} = {i};\n"),
                )
                .unwrap();
            }
        }
    }
}

fn main() {
    // As the binary's `main` does: the figures are the shipped allocator's.
    dashfloat::memory::give_large_buffers_own_pages();
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

    syntax_checks(dir.path(), &run);
    if std::env::args().skip(1).any(|a| a == "syntax") {
        return;
    }

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

    // grep of the same 1 GiB file, which holds no match: streamed.
    let c = call("grep", json!({"pattern": "needle", "path": "1g.txt"}));
    reset_peak_rss();
    let before = peak_rss_kib();
    assert_eq!(run(&c)["total"], 0);
    let timing = time(3, || drop(run(&c)));
    let after = peak_rss_kib();
    row(
        "grep 1 GiB file (no match)",
        3,
        timing,
        &format!(
            "peak RSS {} KiB -> {} KiB (+{} KiB)",
            before,
            after,
            after.saturating_sub(before)
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

    // A checkpoint per mutation (ADR 0035): keeping a file's prior state
    // before write_file replaces it (the worst case: the file is read
    // again; edit_file already holds it) and hashing what landed, against
    // the atomic write itself with its fsync, each in a turn of its own.
    let ws = ctx.workspace.as_ref();
    for (label, bytes) in [
        ("4 KiB", 4 << 10),
        ("64 KiB", 64 << 10),
        ("1 MiB", 1 << 20),
        ("8 MiB", 8 << 20),
    ] {
        let real = dir.path().join(format!("checkpointed-{label}"));
        let data = vec![b'c'; bytes];
        std::fs::write(&real, &data).unwrap();
        let runs = if bytes > 1 << 20 { 10 } else { 50 };
        let write = time(runs, || {
            ws.write_atomic(&real, &data, Some(0o644), Parents::Existing)
                .unwrap();
        });
        let checkpoints = Checkpoints::default();
        let keep = time(runs, || {
            checkpoints.lock().begin_turn(true);
            let meta = ws.lstat(&real).unwrap();
            checkpoints.capture(ws, &real, || state_of(ws, &real, &meta));
            checkpoints.landed(ws, &real, &data);
        });
        row(
            &format!("atomic write {label} (the write a checkpoint guards)"),
            runs,
            write,
            "includes fsync",
        );
        row(
            &format!("checkpoint of a {label} file (read, keep, hash)"),
            runs,
            keep,
            &format!(
                "{:.2}x the write",
                keep.0.as_secs_f64() / write.0.as_secs_f64()
            ),
        );
    }

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

    // glob and grep against rg (or grep -rn) and find: over this
    // repository, then over a generated 100,000-file tree.
    let rg = has_rg();
    let grep_reference = |pattern: &str| -> Vec<Vec<String>> {
        let argv: &[&str] = if rg {
            &["rg", "-n", "--hidden", "-g", "!.git", pattern, "."]
        } else {
            &["grep", "-rnI", "-E", pattern, "."]
        };
        vec![argv.iter().map(|a| a.to_string()).collect()]
    };
    let glob_references = |name: &str| -> Vec<Vec<String>> {
        let mut commands = vec![vec!["find", ".", "-type", "f", "-name", name]];
        if rg {
            commands.push(vec!["rg", "--files", "--hidden", "-g", "!.git", "-g", name]);
        }
        commands
            .into_iter()
            .map(|argv| argv.into_iter().map(str::to_owned).collect())
            .collect()
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo_ctx = ToolContext::new(repo).unwrap();
    let run_in = |ctx: &ToolContext, c: &ToolCall| -> Value {
        serde_json::to_value(rt.block_on(execute(c, ctx, CancellationToken::new()))).unwrap()
    };
    let pattern = r"fn \w+\(";
    let c = call("grep", json!({"pattern": pattern}));
    let found = run_in(&repo_ctx, &c);
    assert!(found["total"].as_u64().unwrap() > 100, "{found}");
    versus(
        &format!(
            "grep this repository ({} files, {} lines match)",
            found["files_searched"], found["total"]
        ),
        20,
        repo,
        &grep_reference(pattern),
        || drop(run_in(&repo_ctx, &c)),
    );
    let c = call("glob", json!({"pattern": "**/*.rs"}));
    let found = run_in(&repo_ctx, &c);
    versus(
        &format!("glob **/*.rs this repository ({} files)", found["total"]),
        20,
        repo,
        &glob_references("*.rs"),
        || drop(run_in(&repo_ctx, &c)),
    );

    let tree = tempfile::tempdir().unwrap();
    let start = Instant::now();
    generate_tree(tree.path());
    let made = start.elapsed();
    let tree_ctx = ToolContext::new(tree.path()).unwrap();
    let c = call("grep", json!({"pattern": "needle"}));
    reset_peak_rss();
    let before = peak_rss_kib();
    let found = run_in(&tree_ctx, &c);
    let after = peak_rss_kib();
    assert_eq!(found["files_searched"], 100_000);
    assert_eq!(found["total"], 1_000);
    println!(
        "| (100,000-file tree made in {:.1}s; one grep of it: peak RSS {} KiB -> {} KiB, +{} KiB)",
        made.as_secs_f64(),
        before,
        after,
        after.saturating_sub(before)
    );
    versus(
        "grep 100,000-file tree (1,000 lines match)",
        5,
        tree.path(),
        &grep_reference("needle"),
        || drop(run_in(&tree_ctx, &c)),
    );
    let c = call("glob", json!({"pattern": "**/*.rs"}));
    assert_eq!(run_in(&tree_ctx, &c)["total"], 50_000);
    versus(
        "glob **/*.rs 100,000-file tree (50,000 match)",
        5,
        tree.path(),
        &glob_references("*.rs"),
        || drop(run_in(&tree_ctx, &c)),
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
