//! Previews of mutating calls: what the person approves — every line that
//! would run or land, with only unchanged diff context capped — and the
//! guard that makes the approved bytes the written bytes.

use crate::support::calls::validate;
use dashfloat::bounds::{PREVIEW_MAX_LINES, PREVIEW_REVIEW_MAX_LINES};
use dashfloat::protocol::{FileGuard, PreviewKind};
use dashfloat::tools::{ToolCall, ToolContext, execute_guarded, preview};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::seen;

fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    (dir, ctx)
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    validate(name, &args.to_string()).unwrap()
}

fn kinds(lines: &[dashfloat::protocol::PreviewLine], kind: PreviewKind) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.kind == kind)
        .map(|l| l.text.clone())
        .collect()
}

#[test]
fn an_edit_preview_is_the_located_block_with_context() {
    let (dir, ctx) = ctx();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), &text).unwrap();
    let p = preview(
        &call(
            "edit_file",
            json!({"path": "f.txt", "search_block": "line 10\n", "replace_block": "ten\n"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines[0].text, "edit f.txt at line 10");
    assert_eq!(kinds(&p.lines, PreviewKind::Removed), vec!["line 10"]);
    assert_eq!(kinds(&p.lines, PreviewKind::Added), vec!["ten"]);
    assert_eq!(
        kinds(&p.lines, PreviewKind::Context),
        vec![
            "line 7", "line 8", "line 9", "line 11", "line 12", "line 13"
        ]
    );
    assert!(matches!(p.guard, FileGuard::Content(_)));
}

/// The 1.5B copies the whole function as its block to change its last
/// line: the heading names the line that changes, not the block's first.
#[test]
fn an_edit_preview_names_the_first_line_that_changes() {
    let (dir, ctx) = ctx();
    let text = "def median(values):\n    ordered = sorted(values)\n    return ordered[0]\n";
    std::fs::write(dir.path().join("stats.py"), text).unwrap();
    let p = preview(
        &call(
            "edit_file",
            json!({
                "path": "stats.py",
                "search_block": text,
                "replace_block": text.replace("ordered[0]", "ordered[len(ordered) // 2]"),
            }),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines[0].text, "edit stats.py at line 3");
}

#[test]
fn a_new_file_preview_shows_its_lines_and_guards_absence() {
    let (_dir, ctx) = ctx();
    let p = preview(
        &call(
            "write_file",
            json!({"path": "new.txt", "content": "a\nb\n"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines[0].text, "create new.txt (2 lines)");
    assert_eq!(kinds(&p.lines, PreviewKind::Added), vec!["a", "b"]);
    assert_eq!(p.guard, FileGuard::Absent);
}

#[test]
fn a_replacement_preview_is_a_diff_against_the_file() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("f.txt"), "keep\nold\n").unwrap();
    seen(&ctx, "f.txt");
    let p = preview(
        &call(
            "write_file",
            json!({"path": "f.txt", "content": "keep\nnew\n"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(kinds(&p.lines, PreviewKind::Removed), vec!["old"]);
    assert_eq!(kinds(&p.lines, PreviewKind::Added), vec!["new"]);
}

#[test]
fn a_command_preview_shows_the_command_and_its_directory() {
    let (dir, ctx) = ctx();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let p = preview(
        &call(
            "execute_command",
            json!({"command": "make\nmake test", "cwd": "sub"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines[0].text, "run in sub (time limit 30 s):");
    assert_eq!(
        kinds(&p.lines, PreviewKind::Added),
        vec!["$ make", "$ make test"]
    );
    assert_eq!(p.guard, FileGuard::Unguarded);
}

/// A model that takes "the project" for a folder's name asks to run in
/// `project`: the call could never start, so the person is never asked.
#[test]
fn a_command_whose_directory_is_missing_or_a_file_fails_in_its_preview() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("notes.txt"), "x\n").unwrap();
    let in_dir = |cwd: &str| {
        call(
            "execute_command",
            json!({"command": "python3 test_stats.py", "cwd": cwd}),
        )
    };
    assert_eq!(
        preview(&in_dir("project"), &ctx).unwrap_err().to_string(),
        "cannot run in project: No such file or directory (os error 2); \
         nothing in the project is named project (ignored and build folders aside); list_directory . to see what is there"
    );
    assert_eq!(
        preview(&in_dir("notes.txt"), &ctx).unwrap_err().to_string(),
        "cwd notes.txt is not a directory"
    );
}

#[test]
fn a_command_preview_shows_the_time_limit_asked_for_and_refuses_one_past_the_maximum() {
    let (_dir, mut ctx) = ctx();
    let asked = |secs: u64| {
        call(
            "execute_command",
            json!({"command": "make", "timeout_seconds": secs}),
        )
    };
    let p = preview(&asked(600), &ctx).unwrap();
    assert_eq!(p.lines[0].text, "run in . (time limit 10 min):");
    ctx.exec_timeout_max = std::time::Duration::from_secs(300);
    let refused = preview(&asked(600), &ctx).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "invalid argument \"timeout_seconds\" of execute_command: expected integer 1..=300 \
         (the configured maximum; split the work or narrow it), received 600"
    );
}

#[test]
fn a_long_command_is_previewed_whole() {
    let (_dir, ctx) = ctx();
    let mut command: String = (0..60).map(|i| format!("echo harmless {i}\n")).collect();
    command.push_str("echo EVIL > marker");
    let p = preview(&call("execute_command", json!({"command": command})), &ctx).unwrap();
    assert_eq!(p.lines.len(), 62);
    assert_eq!(p.lines.last().unwrap().text, "$ echo EVIL > marker");
    assert!(p.lines.iter().all(|l| l.kind != PreviewKind::Marker));
}

/// Replacing a file too large to diff still shows every line that lands:
/// `y` must never write content nobody saw.
#[test]
fn replacing_a_file_too_large_to_diff_shows_the_new_content_whole() {
    let (dir, ctx) = ctx();
    let big = std::fs::File::create(dir.path().join("big.log")).unwrap();
    big.set_len(dashfloat::bounds::EDIT_MAX_FILE_BYTES + 1)
        .unwrap();
    seen(&ctx, "big.log");
    let p = preview(
        &call(
            "write_file",
            json!({"path": "big.log", "content": "first\nsecond\necho EVIL\n", "replace_whole_file": true}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(
        kinds(&p.lines, PreviewKind::Added),
        vec!["first", "second", "echo EVIL"]
    );
}

#[test]
fn new_content_is_previewed_whole() {
    let (_dir, ctx) = ctx();
    let content: String = (0..200).map(|i| format!("{i}\n")).collect();
    let p = preview(
        &call("write_file", json!({"path": "big.txt", "content": content})),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines.len(), 201);
    assert_eq!(p.lines.last().unwrap().text, "199");
    assert!(p.lines.iter().all(|l| l.kind != PreviewKind::Marker));
}

/// Shown whole, but not without end: a change longer than a person can
/// review fails in its preview (the model is told to split it), and one at
/// the bound is still put to the person.
#[test]
fn a_change_longer_than_anyone_can_review_fails_in_its_preview() {
    let (_dir, ctx) = ctx();
    let newlines = "\n".repeat(2 * PREVIEW_REVIEW_MAX_LINES);
    let err = preview(
        &call(
            "execute_command",
            json!({"command": format!("true{newlines}")}),
        ),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(err.code(), "execution_failed", "{err}");
    assert!(err.to_string().contains("script file"), "{err}");
    let err = preview(
        &call("write_file", json!({"path": "n.txt", "content": newlines})),
        &ctx,
    )
    .unwrap_err();
    assert!(err.to_string().contains("in parts"), "{err}");

    let at_bound: String = "x\n".repeat(PREVIEW_REVIEW_MAX_LINES - 1);
    let p = preview(
        &call("write_file", json!({"path": "n.txt", "content": at_bound})),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines.len(), PREVIEW_REVIEW_MAX_LINES);
}

/// A diff shows every line it adds or removes; only unchanged context is
/// capped, and what was left out is named.
#[test]
fn a_diff_shows_every_change_and_caps_only_its_context() {
    let (dir, ctx) = ctx();
    // Every fourth line changes: 50 hunks' worth of context in one group.
    let old: String = (0..200).map(|i| format!("line {i}\n")).collect();
    let new: String = (0..200)
        .map(|i| {
            if i % 4 == 0 {
                format!("changed {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    std::fs::write(dir.path().join("f.txt"), &old).unwrap();
    seen(&ctx, "f.txt");
    let p = preview(
        &call("write_file", json!({"path": "f.txt", "content": new})),
        &ctx,
    )
    .unwrap();
    assert_eq!(kinds(&p.lines, PreviewKind::Added).len(), 50);
    assert_eq!(kinds(&p.lines, PreviewKind::Removed).len(), 50);
    assert_eq!(
        kinds(&p.lines, PreviewKind::Added).last().unwrap(),
        "changed 196"
    );
    assert_eq!(
        kinds(&p.lines, PreviewKind::Context).len(),
        PREVIEW_MAX_LINES
    );
    let cut: usize = kinds(&p.lines, PreviewKind::Marker)
        .iter()
        .map(|m| {
            m.strip_prefix("… ")
                .and_then(|m| m.strip_suffix(" unchanged lines not shown"))
                .unwrap_or_else(|| panic!("unexpected marker {m:?}"))
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(cut, 150 - PREVIEW_MAX_LINES);
    // A diff within the cap keeps all its context and no marker.
    let few: String = old.replacen("line 100\n", "changed\n", 1);
    let p = preview(
        &call("write_file", json!({"path": "f.txt", "content": few})),
        &ctx,
    )
    .unwrap();
    assert_eq!(kinds(&p.lines, PreviewKind::Context).len(), 6);
    assert!(p.lines.iter().all(|l| l.kind != PreviewKind::Marker));
}

#[test]
fn an_edit_that_cannot_apply_fails_in_its_preview() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("f.txt"), "x\nx\n").unwrap();
    let err = preview(
        &call(
            "edit_file",
            json!({"path": "f.txt", "search_block": "x", "replace_block": "y"}),
        ),
        &ctx,
    )
    .unwrap_err();
    assert!(err.to_string().contains("matched 2 times"), "{err}");
    let err = preview(
        &call("write_file", json!({"path": "../out.txt", "content": "x"})),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(err.code(), "path_denied");
}

#[tokio::test]
async fn the_guarded_write_lands_only_on_the_previewed_file() {
    let (dir, ctx) = ctx();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "v1\n").unwrap();
    let edit = call(
        "edit_file",
        json!({"path": "f.txt", "search_block": "v1", "replace_block": "v2"}),
    );
    let p = preview(&edit, &ctx).unwrap();
    let result = execute_guarded(&edit, &ctx, CancellationToken::new(), p.guard).await;
    assert!(result.outcome.is_ok(), "{result:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2\n");
    // The same guard no longer matches: the file changed since.
    let again = call(
        "edit_file",
        json!({"path": "f.txt", "search_block": "v2", "replace_block": "v3"}),
    );
    let stale = execute_guarded(&again, &ctx, CancellationToken::new(), p.guard).await;
    let failure = stale.outcome.unwrap_err();
    assert!(failure.to_string().contains("changed after"), "{failure}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2\n");
}

#[tokio::test]
async fn a_file_created_after_a_create_preview_is_not_overwritten() {
    let (dir, ctx) = ctx();
    let write = call("write_file", json!({"path": "n.txt", "content": "model"}));
    let p = preview(&write, &ctx).unwrap();
    std::fs::write(dir.path().join("n.txt"), "person").unwrap();
    let result = execute_guarded(&write, &ctx, CancellationToken::new(), p.guard).await;
    assert!(result.outcome.is_err(), "{result:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n.txt")).unwrap(),
        "person"
    );
}

#[test]
fn summaries_say_what_a_call_does_in_brief() {
    let cases = [
        (
            call(
                "read_file",
                json!({"path": "src/main.rs", "offset": 120, "limit": 61}),
            ),
            "src/main.rs:120-180",
        ),
        (
            call("execute_command", json!({"command": "cargo test"})),
            "cargo test",
        ),
        (
            call("execute_command", json!({"command": "make", "cwd": "sub"})),
            "make (in sub)",
        ),
        (
            call("write_file", json!({"path": "a.md", "content": "x\ny\n"})),
            "a.md (2 lines)",
        ),
        (call("list_directory", json!({})), "."),
    ];
    for (call, expected) in cases {
        assert_eq!(call.summary(), expected);
    }
}

#[test]
/// The 1.5B wrote the file it had just written, byte for byte: there is
/// nothing to approve, so the call fails in its preview and the person is
/// never asked.
fn a_write_that_changes_nothing_is_answered_without_asking() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("same.txt"), "same\n").unwrap();
    seen(&ctx, "same.txt");
    let failure = preview(
        &call(
            "write_file",
            json!({"path": "same.txt", "content": "same\n"}),
        ),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "same.txt already holds exactly this content; nothing was written. To change a line, \
         call edit_file with search_block (the line as it is now) and replace_block (as it should \
         be); to add lines, edit_file with insert_at (\"start\", \"end\" or the line to insert \
         after) and only the new lines as replace_block"
    );
}

#[test]
fn a_preview_names_where_the_bytes_land_when_a_link_leads_elsewhere() {
    let (dir, ctx) = ctx();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink("../.git/config", dir.path().join("docs/notes.md")).unwrap();
    seen(&ctx, "docs/notes.md");
    let write = preview(
        &call(
            "write_file",
            json!({"path": "docs/notes.md", "content": "[user]\n"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(write.lines[0].text, "replace docs/notes.md → .git/config");
    assert_eq!(
        kinds(&write.lines, PreviewKind::Marker),
        vec!["(this changes the repository's own files)"]
    );
    let edit = preview(
        &call(
            "edit_file",
            json!({"path": "docs/notes.md", "search_block": "[core]", "replace_block": "[user]"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(
        edit.lines[0].text,
        "edit docs/notes.md → .git/config at line 1"
    );
    let new = preview(
        &call(
            "write_file",
            json!({"path": "docs/../docs/new.md", "content": "x"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(new.lines[0].text, "create docs/../docs/new.md (1 line)");
    assert!(kinds(&new.lines, PreviewKind::Marker).is_empty());
}

#[test]
fn a_preview_names_the_path_as_given_when_it_lands_there() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    seen(&ctx, "a.txt");
    let absolute = dir.path().canonicalize().unwrap().join("a.txt");
    for path in ["a.txt", "./a.txt", absolute.to_str().unwrap()] {
        let p = preview(
            &call("write_file", json!({"path": path, "content": "new\n"})),
            &ctx,
        )
        .unwrap();
        assert_eq!(p.lines[0].text, format!("replace {path}"));
    }
}

/// An insertion is previewed as the lines it adds, under a heading that
/// names the line they start at.
#[test]
fn an_insertion_is_previewed_at_the_line_it_starts() {
    let (dir, ctx) = ctx();
    std::fs::write(dir.path().join("notes.md"), "one\ntwo\n").unwrap();
    let p = preview(
        &call(
            "edit_file",
            json!({"path": "notes.md", "insert_at": 1, "replace_block": "between"}),
        ),
        &ctx,
    )
    .unwrap();
    assert_eq!(p.lines[0].text, "insert into notes.md at line 2");
    assert_eq!(kinds(&p.lines, PreviewKind::Added), vec!["between"]);
    assert!(kinds(&p.lines, PreviewKind::Removed).is_empty());
}
