//! An `edit_file` block whose lines are in the file with other white space
//! (ADR 0039): found, re-indented as the file is, told to the model; and
//! left a failure when the place is not one, the indentation is uneven,
//! or the search would cost too much.

use crate::support::calls::validate;
use dashfloat::bounds::{LOOSE_COMPARISONS_MAX, LOOSE_NOTE};
use dashfloat::protocol::PreviewKind;
use dashfloat::tools::{LooseMatch, ToolContext, locate_loose, preview};
use serde_json::json;

use crate::run;

const PY: &str = "def f(x):\n    if x:\n        return 1\n    return 2\n";

/// The file after `search` is replaced by `replace` loosely.
fn replaced(file: &str, search: &str, replace: &str) -> Option<String> {
    let LooseMatch { range, replace } =
        locate_loose(file.as_bytes(), search.as_bytes(), replace.as_bytes())?;
    let mut out = file.as_bytes()[..range.start].to_vec();
    out.extend_from_slice(&replace);
    out.extend_from_slice(&file.as_bytes()[range.end..]);
    Some(String::from_utf8(out).unwrap())
}

#[test]
fn a_block_that_lost_its_indentation_is_indented_as_the_file() {
    assert_eq!(
        replaced(
            PY,
            "if x:\n    return 1\n",
            "if x:\n    return 3\n\n    log(x)\n"
        )
        .as_deref(),
        Some("def f(x):\n    if x:\n        return 3\n\n        log(x)\n    return 2\n")
    );
    // Without its last line break the block ends where the line's text
    // does, and the file's break stays.
    assert_eq!(
        replaced(PY, "return 2", "return 4").as_deref(),
        Some("def f(x):\n    if x:\n        return 1\n    return 4\n")
    );
}

#[test]
fn a_block_indented_more_than_the_file_loses_the_difference() {
    let file = "a:\n  b: 1\n  c: 2\n";
    assert_eq!(
        replaced(file, "    b: 1\n    c: 2\n", "    b: 1\n    c: 3\n").as_deref(),
        Some("a:\n  b: 1\n  c: 3\n")
    );
}

#[test]
fn trailing_spaces_and_line_endings_aside() {
    let file = "one  \r\ntwo\r\nthree\r\n";
    assert_eq!(
        replaced(file, "one\ntwo  \n", "uno\ndos\n").as_deref(),
        Some("uno\r\ndos\r\nthree\r\n"),
        "the file's \\r\\n kept"
    );
    // The replacement's own endings become the file's, either way; a
    // last line with no ending does not count.
    assert_eq!(
        replaced(file, "one\ntwo\n", "uno\r\ndos\n").as_deref(),
        Some("uno\r\ndos\r\nthree\r\n")
    );
    assert_eq!(
        replaced("a\r\nb\r\nc", "b\nc", "B\nC").as_deref(),
        Some("a\r\nB\r\nC")
    );
    assert_eq!(
        replaced("a\nb \nc\n", "b\n", "B\r\nBB\r\n").as_deref(),
        Some("a\nB\nBB\nc\n")
    );
}

#[test]
fn no_loose_match_when_the_place_is_not_one() {
    let twice = "    x = 1\n    y = 2\n\n\tx = 1\n";
    let blank = "a\n\n  \nb\n";
    let cases = [
        (PY, "if y:\n    return 1\n", "different text"),
        (twice, "x = 1\n", "two places"),
        (PY, "if x:\n        return 1\n", "uneven indentation"),
        (blank, "\n \n", "blank lines only"),
        (PY, "return", "part of a line"),
    ];
    for (file, search, why) in cases {
        assert_eq!(
            locate_loose(file.as_bytes(), search.as_bytes(), b"z\n"),
            None,
            "{why}"
        );
    }
}

#[test]
fn a_search_that_would_cost_the_product_of_two_long_texts_stops() {
    // Each start before the place compares the block's 101 lines.
    let block = format!("{}b\n", "a\n".repeat(100));
    let file = |starts: usize| format!("{}    b\n", "    a\n".repeat(starts + 100));
    let found =
        |starts: usize| locate_loose(file(starts).as_bytes(), block.as_bytes(), b"c\n").is_some();
    assert!(found(1_000));
    assert!(!found(2 * LOOSE_COMPARISONS_MAX / 100));
}

#[tokio::test]
async fn the_edit_lands_says_so_and_is_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.py"), PY).unwrap();
    let args = json!({
        "path": "f.py",
        "search_block": "if x:\n    return 1\n",
        "replace_block": "if x:\n    return 3\n",
    });
    let ctx = ToolContext::new(dir.path()).unwrap();
    let shown = preview(&validate("edit_file", &args.to_string()).unwrap(), &ctx).unwrap();
    let added: Vec<&str> = shown
        .lines
        .iter()
        .filter(|l| l.kind == PreviewKind::Added)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(added, ["        return 3"]);
    assert_eq!(shown.lines[0].text, "edit f.py at line 3");
    let v = run(dir.path(), "edit_file", &args).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["line"], 2);
    assert_eq!(v["note"], LOOSE_NOTE);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.py")).unwrap(),
        "def f(x):\n    if x:\n        return 3\n    return 2\n"
    );
    // An exact block says nothing of white space.
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path": "f.py", "search_block": "return 2", "replace_block": "return 5"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert!(v.get("note").is_none(), "{v}");
}

/// A CRLF file stays CRLF when an exact block is replaced by lines the
/// model wrote with bare `\n`; an edit whose loose match changes nothing
/// fails instead of asking to approve an empty diff.
#[tokio::test]
async fn a_crlf_file_stays_crlf_and_an_edit_that_changes_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.py"), "a = 1\r\nb = 2\r\n").unwrap();
    let args =
        json!({"path": "config.py", "search_block": "a = 1", "replace_block": "a = 1\nc = 3"});
    let v = run(dir.path(), "edit_file", &args).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.py")).unwrap(),
        "a = 1\r\nc = 3\r\nb = 2\r\n"
    );
    std::fs::write(dir.path().join("f.txt"), "foo\n").unwrap();
    let args = json!({"path": "f.txt", "search_block": "foo  \n", "replace_block": "foo\n"});
    let v = run(dir.path(), "edit_file", &args).await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("already reads so"),
        "{v}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "foo\n"
    );
}
