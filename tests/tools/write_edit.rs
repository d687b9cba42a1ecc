//! write_file and edit_file: atomic replacement, mode kept, links out
//! refused, no temp files left, the edit protocol and its size bound.

use std::os::unix::fs::PermissionsExt;

use dashfloat::tools::{LocateError, NearMatch, locate, splice};

use dashfloat::bounds::EDIT_MAX_FILE_BYTES;
use serde_json::json;

use crate::support::calls::validate;
use dashfloat::bounds::{EDIT_EXCERPT_MAX_BYTES, EDIT_HINT_LINE_MAX_BYTES};
use dashfloat::tools::{ToolContext, execute};
use tokio_util::sync::CancellationToken;

use crate::{json_of, names, run, run_after_reading};

#[tokio::test]
async fn write_creates_parents_and_reports_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let v = run(
        dir.path(),
        "write_file",
        json!({"path":"a/b/c.txt","content":"one\ntwo"}),
    )
    .await;
    assert_eq!(
        v,
        json!({"ok":true,"path":"a/b/c.txt","action":"created","changed":"added 2 lines","bytes":7})
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "one\ntwo"
    );
    let v = run_after_reading(
        dir.path(),
        "a/b/c.txt",
        "write_file",
        json!({"path":"a/b/c.txt","content":""}),
    )
    .await;
    assert_eq!(v["action"], "replaced");
    assert_eq!(v["changed"], "removed 2 lines; the file has 0 lines");
    assert_eq!(names(&dir.path().join("a/b")), vec!["c.txt"]);
}

#[tokio::test]
async fn write_preserves_an_existing_files_mode() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("run.sh");
    std::fs::write(&f, "old").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o750)).unwrap();
    run_after_reading(
        dir.path(),
        "run.sh",
        "write_file",
        json!({"path":"run.sh","content":"new"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    run(
        dir.path(),
        "edit_file",
        json!({"path":"run.sh","search_block":"new","replace_block":"newer"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "newer");
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
        0o600
    );
}

#[tokio::test]
async fn write_replaces_only_a_file_the_conversation_has_seen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "line 1\nline 2\n").unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let run = async |tool: &str, args: serde_json::Value| {
        let call = validate(tool, &args.to_string()).unwrap();
        json_of(execute(&call, &ctx, CancellationToken::new()).await)
    };
    let blind = json!({"path":"keep.txt","content":"line 3\n"});
    let v = run("write_file", blind.clone()).await;
    assert_eq!(v["code"], "execution_failed");
    assert_eq!(
        v["error"],
        "keep.txt already exists and you have not read it; write_file would replace all of it. \
         To add to it, call edit_file with insert_at \"end\" (or \"start\") and the new text as \
         replace_block; to change part of it, read_file it first, then use edit_file"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "line 1\nline 2\n"
    );
    // A file the model created, or edited, it has seen.
    run("write_file", json!({"path":"new.txt","content":"a\n"})).await;
    let v = run("write_file", json!({"path":"new.txt","content":"b\n"})).await;
    assert_eq!(v["action"], "replaced", "{v}");
    // After a read the same call lands; after the conversation is cleared
    // it needs another.
    run("read_file", json!({"path":"keep.txt"})).await;
    assert_eq!(run("write_file", blind.clone()).await["action"], "replaced");
    ctx.known.clear();
    let v = run("write_file", json!({"path":"keep.txt","content":"again\n"})).await;
    assert_eq!(v["code"], "execution_failed");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "line 3\n"
    );
}

/// The refusal of a blind write says how to insert instead; the insert
/// it describes adds to the file without reading it.
#[tokio::test]
async fn a_blind_write_is_told_how_to_insert_and_the_insert_lands() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let run = async |tool: &str, args: serde_json::Value| {
        let call = validate(tool, &args.to_string()).unwrap();
        json_of(execute(&call, &ctx, CancellationToken::new()).await)
    };
    std::fs::write(dir.path().join("f.txt"), "requests==2.31.0").unwrap();
    let v = run(
        "write_file",
        json!({"path": "f.txt", "content": "pytest>=7\n"}),
    )
    .await;
    assert!(
        v["error"].as_str().unwrap().contains("insert_at \"end\""),
        "{v}"
    );
    let v = run(
        "edit_file",
        json!({"path": "f.txt", "insert_at": "end", "replace_block": "pytest>=7"}),
    )
    .await;
    assert_eq!(
        v,
        json!({"ok": true, "path": "f.txt", "line": 2,
               "changed": "added 1 line; the file has 2 lines", "bytes": 27})
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "requests==2.31.0\npytest>=7\n"
    );
}

#[tokio::test]
async fn write_refuses_a_preplaced_symlink_leading_out_and_leaves_its_target_alone() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("out.txt")).unwrap();
    let v = run(
        dir.path(),
        "write_file",
        json!({"path":"out.txt","content":"pwned"}),
    )
    .await;
    assert_eq!(v["code"], "path_denied");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(names(dir.path()), vec!["out.txt"]);
}

#[tokio::test]
async fn write_through_a_link_inside_replaces_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.txt"), "old").unwrap();
    std::os::unix::fs::symlink("real.txt", dir.path().join("alias.txt")).unwrap();
    run_after_reading(
        dir.path(),
        "alias.txt",
        "write_file",
        json!({"path":"alias.txt","content":"new"}),
    )
    .await;
    assert!(
        std::fs::symlink_metadata(dir.path().join("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real.txt")).unwrap(),
        "new"
    );
}

#[tokio::test]
async fn a_failed_write_leaves_no_temp_file_and_the_target_unchanged() {
    // Tests run as root, so a read-only directory does not stop the write.
    // These failures happen before a temp file exists; the failure after it
    // (a rename refused) is the unit test in src/tools/atomic.rs.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/keep"), "k").unwrap();
    let v = run(dir.path(), "write_file", json!({"path":"d","content":"x"})).await;
    assert_eq!(v["code"], "execution_failed");
    std::fs::write(dir.path().join("file"), "f").unwrap();
    let v = run(
        dir.path(),
        "write_file",
        json!({"path":"file/under","content":"x"}),
    )
    .await;
    assert_eq!(v["code"], "execution_failed");
    assert_eq!(names(dir.path()), vec!["d", "file"]);
    assert_eq!(names(&dir.path().join("d")), vec!["keep"]);
}

#[tokio::test]
async fn write_in_a_read_only_directory_fails_cleanly_when_not_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o500)).unwrap();
    let v = run(dir.path(), "write_file", json!({"path":"x","content":"x"})).await;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    if std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap()
    {
        // Root ignores the mode bits: the write lands, and still no temp.
        assert_eq!(v["ok"], true);
        assert_eq!(names(dir.path()), vec!["x"]);
    } else {
        assert_eq!(v["code"], "execution_failed");
        assert!(names(dir.path()).is_empty());
    }
}

#[tokio::test]
async fn edit_replaces_the_unique_block_and_reports_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n").unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"a.rs","search_block":"fn b() {}","replace_block":"fn b() {\n    1\n}"}),
    )
    .await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["line"], 2);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn a() {}\nfn b() {\n    1\n}\nfn c() {}\n"
    );
    assert_eq!(names(dir.path()), vec!["a.rs"]);
}

#[tokio::test]
async fn edit_rejects_a_block_that_matches_twice_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), "x = 1\nx = 1\n").unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"a","search_block":"x = 1","replace_block":"x = 2"}),
    )
    .await;
    assert_eq!(
        v["error"],
        "a: search block matched 2 times; add surrounding lines until it is unique"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a")).unwrap(),
        "x = 1\nx = 1\n"
    );
}

#[tokio::test]
async fn a_missing_block_in_a_small_file_is_answered_with_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"a.py","search_block":"def g():","replace_block":"def h():"}),
    )
    .await;
    assert_eq!(
        v["error"],
        "a.py: search block not found; copy search_block exactly from the file's text, \
         lines 1-2:\ndef f():\n    return 1\n"
    );
}

/// The error of an edit of `path` that searches for `search`.
async fn edit_error(root: &std::path::Path, path: &str, search: &str) -> String {
    let v = run(
        root,
        "edit_file",
        json!({"path": path, "search_block": search, "replace_block": "x"}),
    )
    .await;
    v["error"].as_str().unwrap().to_owned()
}

/// The 1.5B copied a line from the person's sentence with its full stop
/// and sent it three times against the whole file: the error now says
/// where the block parts from the file and what each has there.
#[tokio::test]
async fn a_missing_block_says_where_it_parts_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = "def median(v):\n\treturn v[m] + v[m - 1] / 2\n";
    std::fs::write(dir.path().join("a.py"), file).unwrap();
    let error = |search: &'static str| edit_error(dir.path(), "a.py", search);
    let tail = format!("; copy search_block exactly from the file's text, lines 1-2:\n{file}");
    assert_eq!(
        error("v[m] + v[m - 1] / 2.").await,
        format!(
            "a.py: search block not found; its first 19 of 20 bytes match from line 2, then the \
             file has \"\\n\" (line 2) where the block has \".\"{tail}"
        )
    );
    // A different indent shows as the escapes of each.
    assert_eq!(
        error("def median(v):\n    return").await,
        format!(
            "a.py: search block not found; its first 15 of 25 bytes match from line 1, then the \
             file has \"\\treturn v[m] + v[m - 1] \" (line 2) where the block has \
             \"    return\"{tail}"
        )
    );
    // A block that runs past the end of the file says so.
    assert_eq!(
        error("v[m - 1] / 2\nprint(1)").await,
        format!(
            "a.py: search block not found; its first 13 of 21 bytes match from line 2, then the \
             file ends where the block has \"print(1)\"{tail}"
        )
    );
    // `é` and `è` share their first byte: both quotes start at it, and a
    // quote cut at 24 bytes keeps its last character whole.
    let line = format!("total_café = {}\n", "é".repeat(30));
    std::fs::write(dir.path().join("a.py"), &line).unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"a.py","search_block":"total_cafè = 1","replace_block":"x"}),
    )
    .await;
    let quoted = format!("é = {}", "é".repeat(10));
    assert_eq!(
        v["error"],
        format!(
            "a.py: search block not found; its first 9 of 15 bytes match from line 1, then the \
             file has \"{quoted}\" (line 1) where the block has \"è = 1\"; copy search_block \
             exactly from the file's text, lines 1-1:\n{line}"
        )
    );
}

/// The 1.5B searched config.toml for `server_port = 8421` on every seed,
/// where the file has `port = 8421`: a one-line block whose start places
/// nothing is shown the line its longest ending is on. A longer block is
/// not: its ending is too common to place it.
#[tokio::test]
async fn a_missing_one_line_block_is_shown_the_line_its_ending_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = "[server]\nhost = \"127.0.0.1\"\nport = 8421\r\n\n[db]\nname = \"x\"\n";
    std::fs::write(dir.path().join("config.toml"), file).unwrap();
    let error = |search: &'static str| edit_error(dir.path(), "config.toml", search);
    let tail = format!("; copy search_block exactly from the file's text, lines 1-6:\n{file}");
    for block in ["server_port = 8421", "server_port = 8421\n"] {
        assert_eq!(
            error(block).await,
            format!(
                "config.toml: search block not found; its last 11 bytes occur on line 3, which \
                 is \"port = 8421\"{tail}"
            ),
            "{block:?}"
        );
    }
    // A line longer than a hint quotes: the hint is not given.
    let long_line = format!("port = 8421 {}\n", "#".repeat(EDIT_HINT_LINE_MAX_BYTES));
    std::fs::write(dir.path().join("long.toml"), &long_line).unwrap();
    let long = edit_error(dir.path(), "long.toml", "server_port = 8421 ").await;
    assert!(!long.contains("occur on line"), "{long}");
    // Too short an ending, or a block of two lines: the excerpt alone.
    for block in ["x_name = \"q\"", "[srv]\nport = 8421"] {
        assert_eq!(
            error(block).await,
            format!("config.toml: search block not found{tail}"),
            "{block:?}"
        );
    }
}

/// A file over the excerpt's size whose nearest line is longer than it
/// (minified code) gets no excerpt, but still where the block parts.
#[tokio::test]
async fn a_missing_block_in_a_long_line_says_where_it_parts_without_an_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("var config={{{}}};\n", "\"k\":1,".repeat(600));
    std::fs::write(dir.path().join("min.js"), &line).unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"min.js","search_block":"var config={\"k\":2","replace_block":"x"}),
    )
    .await;
    assert_eq!(
        v["error"],
        "min.js: search block not found; its first 16 of 17 bytes match from line 1, then the \
         file has \"1,\\\"k\\\":1,\\\"k\\\":1,\\\"k\\\":1,\\\"k\\\":\" (line 1) where the block has \
         \"2\"; read_file around that line and copy the block exactly (whitespace included)"
    );
}

/// Every file and block of a shared stem (long enough to place a
/// parting point) and up to three characters from an alphabet with
/// two-byte characters and a line break: each edit lands or fails, and a
/// failure never quotes a character cut in two.
#[tokio::test]
async fn no_parting_point_cuts_a_character() {
    // `é` and `è` share their first byte.
    let alphabet = ["a", "é", "è", "\n"];
    let texts: Vec<String> = (1..=3u32)
        .flat_map(|len| {
            (0..4usize.pow(len)).map(move |n| {
                (0..len)
                    .map(|i| alphabet[n / 4usize.pow(i) % 4])
                    .collect::<String>()
            })
        })
        .collect();
    let stem = "ab\ncd\nef";
    let dir = tempfile::tempdir().unwrap();
    let mut parted = 0;
    for file in &texts {
        for search in &texts {
            let (file, search) = (format!("{stem}{file}"), format!("{stem}{search}"));
            std::fs::write(dir.path().join("f"), &file).unwrap();
            let v = run(
                dir.path(),
                "edit_file",
                json!({"path":"f","search_block":search,"replace_block":"Z"}),
            )
            .await;
            let error = v["error"].as_str().unwrap_or_default();
            assert!(
                v["ok"] == true || error.starts_with("f: search block"),
                "{file:?} {search:?}: {v}"
            );
            assert!(!error.contains('\u{fffd}'), "{file:?} {search:?}: {error}");
            parted += usize::from(error.contains(" match from line "));
        }
    }
    assert!(parted > 5000, "{parted}");
}

/// The 1.5B searched for the function it meant to add, to append it:
/// the error says a block must already be there, and names the file's
/// last line to search for instead.
#[tokio::test]
async fn a_missing_block_that_begins_the_replacement_is_answered_with_how_to_add() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n\n").unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"a.py","search_block":"def g():","replace_block":"def g():\n    return 2\n"}),
    )
    .await;
    assert_eq!(
        v["error"],
        "a.py: search block not found; search_block must be text already in the file: to add \
         text, leave search_block out and give insert_at (\"end\", \"start\" or the number of \
         the line to insert after) with only the new text as replace_block; copy search_block \
         exactly from the file's text, lines 1-3:\ndef f():\n    return 1\n\n"
    );
}

#[tokio::test]
async fn a_missing_block_in_a_large_file_is_answered_with_the_lines_around_its_nearest_match() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=400).map(|n| format!("value_{n} = {n}\n")).collect();
    assert!(text.len() > EDIT_EXCERPT_MAX_BYTES);
    std::fs::write(dir.path().join("big.py"), &text).unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"big.py","search_block":"value_200 = 2000\n","replace_block":"x"}),
    )
    .await;
    let expected: String = (197..=204).map(|n| format!("value_{n} = {n}\n")).collect();
    assert_eq!(
        v["error"],
        format!(
            "big.py: search block not found; its first 15 of 17 bytes match from line 200, then \
             the file has \"\\n\" (line 200) where the block has \"0\\n\"; copy search_block \
             exactly from the file's text, lines 197-204:\n{expected}"
        )
    );
    // A match of a few bytes places nothing: the error says to read.
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"big.py","search_block":"valid = 1","replace_block":"x"}),
    )
    .await;
    let error = v["error"].as_str().unwrap();
    assert!(
        error.starts_with("big.py: search block not found; its first 3 of 9 bytes match at line 1"),
        "{error}"
    );
}

#[test]
fn locate_counts_overlapping_matches() {
    assert_eq!(
        locate(b"aaa", b"aa"),
        Err(LocateError::Ambiguous { count: 2 })
    );
    // The count is of occurrences that do not overlap one another.
    assert_eq!(
        locate(b"aaaa", b"aa"),
        Err(LocateError::Ambiguous { count: 2 })
    );
    assert_eq!(
        locate(b"ab ab ab", b"ab"),
        Err(LocateError::Ambiguous { count: 3 })
    );
    assert_eq!(locate(b"abcabd", b"abd"), Ok(3..6));
    assert_eq!(locate(b"abc", b""), Err(LocateError::Empty));
    assert_eq!(
        locate(b"l1\nhello wor", b"hello world"),
        Err(LocateError::NotFound {
            nearest: Some(NearMatch {
                line: 2,
                offset: 3,
                matched_bytes: 9,
                block_bytes: 11
            })
        })
    );
    assert_eq!(
        locate(b"abc", b"xyz"),
        Err(LocateError::NotFound { nearest: None })
    );
}

#[test]
fn locate_and_splice_give_exactly_the_previewed_bytes() {
    let file = b"keep\nold\nkeep\n";
    let range = locate(file, b"old").unwrap();
    assert_eq!(splice(file, range, b"new"), b"keep\nnew\nkeep\n");
}

#[test]
fn locate_is_linear_on_a_hostile_block() {
    // Naive search would be 4M x 4K comparisons here.
    let hay = vec![b'a'; 4 << 20];
    let mut needle = vec![b'a'; 4096];
    needle.push(b'b');
    assert!(matches!(
        locate(&hay, &needle),
        Err(LocateError::NotFound { .. })
    ));
}

#[tokio::test]
async fn edit_size_bound_at_below_and_above() {
    let dir = tempfile::tempdir().unwrap();
    for (size, ok) in [
        (EDIT_MAX_FILE_BYTES - 1, true),
        (EDIT_MAX_FILE_BYTES, true),
        (EDIT_MAX_FILE_BYTES + 1, false),
    ] {
        let mut data = vec![b'.'; size as usize];
        data[0] = b'X';
        std::fs::write(dir.path().join("big"), &data).unwrap();
        let v = run(
            dir.path(),
            "edit_file",
            json!({"path":"big","search_block":"X","replace_block":"Y"}),
        )
        .await;
        assert_eq!(v["ok"], ok, "{size}: {v}");
        if !ok {
            assert!(
                v["error"]
                    .as_str()
                    .unwrap()
                    .contains("refuses files over 8 MiB")
            );
            assert_eq!(std::fs::read(dir.path().join("big")).unwrap()[0], b'X');
        }
    }
}

#[tokio::test]
async fn edit_of_a_missing_file_is_an_execution_failure() {
    let dir = tempfile::tempdir().unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path":"nope","search_block":"a","replace_block":"b"}),
    )
    .await;
    assert_eq!(v["code"], "execution_failed");
}

/// `n` numbered lines.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A write over a file of WIPE_MIN_LINES or more that keeps fewer than
/// half its lines is refused, whoever would approve it, and says how many
/// it would delete and how to add instead; a shorter file, or a write that
/// keeps half, lands. `replace_whole_file` lets it land.
#[tokio::test]
async fn a_write_that_deletes_most_of_a_file_is_refused_unless_said_on_purpose() {
    use dashfloat::bounds::WIPE_MIN_LINES;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (WIPE_MIN_LINES - 1, String::from("new\n"), true),
        (WIPE_MIN_LINES, String::from("new\n"), false),
        // Keeps exactly half: lands.
        (WIPE_MIN_LINES, numbered(WIPE_MIN_LINES / 2), true),
        // Keeps one fewer than half.
        (WIPE_MIN_LINES, numbered(WIPE_MIN_LINES / 2 - 1), false),
        // Everything kept, a section added on top: lands.
        (80, format!("# New\n\n{}", numbered(80)), true),
    ];
    for (lines, content, lands) in cases {
        std::fs::write(dir.path().join("f.md"), numbered(lines)).unwrap();
        let v = run_after_reading(
            dir.path(),
            "f.md",
            "write_file",
            json!({"path": "f.md", "content": content}),
        )
        .await;
        assert_eq!(v["ok"], lands, "{lines} lines, {content:?}: {v}");
        let now = std::fs::read_to_string(dir.path().join("f.md")).unwrap();
        if lands {
            assert_eq!(now, content);
        } else {
            assert_eq!(now, numbered(lines));
            let kept = content.lines().filter(|l| l.starts_with("line")).count();
            assert_eq!(
                v["error"]
                    .as_str()
                    .unwrap()
                    .split(". To add")
                    .next()
                    .unwrap(),
                format!(
                    "refused: f.md has {lines} lines and this content keeps only {kept} of them, \
                     so the write would delete {}",
                    lines - kept
                )
            );
        }
    }
    std::fs::write(dir.path().join("f.md"), numbered(40)).unwrap();
    let v = run_after_reading(
        dir.path(),
        "f.md",
        "write_file",
        json!({"path": "f.md", "content": "new\n", "replace_whole_file": true}),
    )
    .await;
    assert_eq!(
        v["changed"], "added 1 line and removed 40; the file has 1 line",
        "{v}"
    );
}

/// `insert_at` adds whole lines at the start, the end or after a line,
/// with the file's line endings, and says where and what changed; a line
/// past the end, both modes, neither, or nothing to insert is refused.
#[tokio::test]
async fn insert_at_adds_lines_without_a_search_block() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.txt");
    let cases = [
        ("a\nb\n", json!("start"), "new", "new\na\nb\n", 1),
        ("a\nb\n", json!(0), "new\n", "new\na\nb\n", 1),
        ("a\nb\n", json!(1), "new", "a\nnew\nb\n", 2),
        ("a\nb\n", json!(2), "x\ny", "a\nb\nx\ny\n", 3),
        ("a\nb\n", json!("end"), "new", "a\nb\nnew\n", 3),
        ("a\nb", json!("end"), "new", "a\nb\nnew\n", 3),
        ("a\nb", json!(2), "new", "a\nb\nnew\n", 3),
        (
            "a\r\nb\r\n",
            json!("end"),
            "x\ny",
            "a\r\nb\r\nx\r\ny\r\n",
            3,
        ),
        ("", json!("end"), "only", "only\n", 1),
    ];
    for (before, at, text, after, line) in cases {
        std::fs::write(&f, before).unwrap();
        let v = run(
            dir.path(),
            "edit_file",
            json!({"path": "f.txt", "insert_at": at, "replace_block": text}),
        )
        .await;
        assert_eq!(v["ok"], true, "{before:?} {at}: {v}");
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            after,
            "{before:?} {at}"
        );
        assert_eq!(v["line"], line, "{before:?} {at}");
        let added = text.lines().count();
        assert!(
            v["changed"]
                .as_str()
                .unwrap()
                .starts_with(&format!("added {added} line")),
            "{v}"
        );
    }
    std::fs::write(&f, "a\nb\n").unwrap();
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path": "f.txt", "insert_at": 3, "replace_block": "x"}),
    )
    .await;
    assert_eq!(
        v["error"],
        "f.txt has 2 lines: insert_at must be a line number from 0 to 2, \"start\" or \"end\""
    );
    for (args, field, received) in [
        (
            json!({"path": "f.txt", "insert_at": "end", "search_block": "a", "replace_block": "x"}),
            "insert_at",
            "both",
        ),
        (
            json!({"path": "f.txt", "replace_block": "x"}),
            "search_block",
            "missing",
        ),
        (
            json!({"path": "f.txt", "insert_at": "end", "replace_block": ""}),
            "replace_block",
            "an empty string",
        ),
    ] {
        let failure = validate("edit_file", &args.to_string()).unwrap_err();
        let v = json_of(failure.into());
        assert_eq!(
            (v["field"].as_str(), v["received"].as_str()),
            (Some(field), Some(received)),
            "{args}"
        );
    }
    // "12" is not 12, and "middle" no place.
    for at in [json!("12"), json!("middle"), json!(-1)] {
        let args = json!({"path": "f.txt", "insert_at": at, "replace_block": "x"});
        let v = json_of(validate("edit_file", &args.to_string()).unwrap_err().into());
        assert_eq!(v["field"], "insert_at", "{at}: {v}");
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "a\nb\n");
}

/// An insertion whose lines are mostly in the file already is refused,
/// saying how to change lines instead: a small model asked to change a
/// line inserts the whole changed block beside the old one. Short lines
/// (`}`, `pass`) and a block of one line never count.
#[tokio::test]
async fn an_insertion_that_mostly_repeats_the_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config.toml");
    let config = "[server]\nhost = \"127.0.0.1\"\nport = 8421\n\n[database]\nname = \"stock.db\"\n";
    std::fs::write(&f, config).unwrap();
    let changed =
        "[server]\nhost = \"127.0.0.1\"\nport = 9000\n\n[database]\nname = \"stock.db\"\n";
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path": "config.toml", "insert_at": "start", "replace_block": changed}),
    )
    .await;
    assert_eq!(
        v["error"],
        "config.toml: 4 of the 5 lines to insert are in the file already, so this would copy \
         them, not change them. To change lines, call edit_file with search_block (the lines as \
         they are, copied from the file) and replace_block (as they should be), without insert_at"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), config);
    for (text, after) in [
        // Half, not more: a new function beside one like it.
        ("[server]\nretries = 3\n", "[server]\nretries = 3\n"),
        // One line, even one the file has.
        ("name = \"stock.db\"", "name = \"stock.db\"\n"),
        // Short lines are in every file.
        ("[extra]\nkey = 1\n}\n}\n", "[extra]\nkey = 1\n}\n}\n"),
    ] {
        std::fs::write(&f, config).unwrap();
        let v = run(
            dir.path(),
            "edit_file",
            json!({"path": "config.toml", "insert_at": "end", "replace_block": text}),
        )
        .await;
        assert_eq!(v["ok"], true, "{text:?}: {v}");
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            format!("{config}{after}")
        );
    }
}

/// A write of what the file holds already is refused whether or not the
/// person was asked first (a preview), and says how to add lines.
#[tokio::test]
async fn a_write_that_changes_nothing_is_refused_when_run_unasked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let v = run_after_reading(
        dir.path(),
        "notes.txt",
        "write_file",
        json!({"path": "notes.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("notes.txt already holds exactly this content; nothing was written. To change a line, call edit_file with search_block"),
        "{v}"
    );
}
