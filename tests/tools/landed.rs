//! A turn's own change is kept: once a write or edit of a file landed in
//! a turn, a call that puts the file back, rewrites most of it or changes
//! nothing is refused with a result that says the change is made; the
//! next turn, and a call that says it means to replace the file, may.

use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::calls::validate;
use crate::{json_of, seen};
use dashfloat::tools::{ToolContext, execute, preview};

/// A project holding `name` with `content`, read in a turn just begun.
fn project(name: &str, content: &str) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), content).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    ctx.checkpoints.lock().begin_turn(true);
    seen(&ctx, name);
    (dir, ctx)
}

async fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    let call = validate(tool, &args.to_string()).unwrap();
    json_of(execute(&call, ctx, CancellationToken::new()).await)
}

fn text(root: &Path, name: &str) -> String {
    std::fs::read_to_string(root.join(name)).unwrap()
}

/// The 1.5B appended the line, wrote the same file again, and, told how
/// to add lines, kept going until the line was gone.
#[tokio::test]
async fn writing_the_turns_own_change_again_says_it_is_made() {
    let (dir, ctx) = project("requirements.txt", "requests==2.31.0\n");
    let args = json!({"path": "requirements.txt", "content": "requests==2.31.0\npytest>=7\n"});
    let v = call(&ctx, "write_file", args.clone()).await;
    assert_eq!(v["ok"], true, "{v}");
    let v = call(&ctx, "write_file", args).await;
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(
        v["error"],
        "requirements.txt already holds exactly this content, which your change earlier in this \
         turn put there; nothing was written. The change is made: answer the person now, saying \
         what you changed"
    );
    assert_eq!(
        text(dir.path(), "requirements.txt"),
        "requests==2.31.0\npytest>=7\n"
    );
}

#[tokio::test]
async fn putting_the_file_back_in_the_same_turn_is_refused_by_write_and_edit() {
    let (dir, ctx) = project("requirements.txt", "requests==2.31.0\n");
    let v = call(
        &ctx,
        "edit_file",
        json!({"path": "requirements.txt", "insert_at": "end", "replace_block": "pytest>=7\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    let back = json!({"path": "requirements.txt", "content": "requests==2.31.0\n"});
    let v = call(&ctx, "write_file", back.clone()).await;
    assert_eq!(v["ok"], false, "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "refused: this would put requirements.txt back as it was before your change earlier \
             in this turn, undoing it"
        ),
        "{error}"
    );
    let v = call(
        &ctx,
        "edit_file",
        json!({"path": "requirements.txt", "search_block": "pytest>=7\n", "replace_block": ""}),
    )
    .await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(v["error"].as_str().unwrap().contains("undoing it"), "{v}");
    // The person is asked about a preview, which is refused the same way.
    let write = validate("write_file", &back.to_string()).unwrap();
    let refused = preview(&write, &ctx).unwrap_err();
    assert!(refused.to_string().contains("undoing it"), "{refused}");
    assert_eq!(
        text(dir.path(), "requirements.txt"),
        "requests==2.31.0\npytest>=7\n"
    );

    // Meant, it lands (the agent asks the person first, ADR 0046).
    let meant = json!({"path": "requirements.txt", "content": "requests==2.31.0\n", "replace_whole_file": true});
    let v = call(&ctx, "write_file", meant).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(text(dir.path(), "requirements.txt"), "requests==2.31.0\n");
}

#[tokio::test]
async fn the_next_turn_may_put_the_file_back() {
    let (dir, ctx) = project("notes.txt", "one\n");
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "notes.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    ctx.checkpoints.lock().begin_turn(true);
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "notes.txt", "content": "one\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(text(dir.path(), "notes.txt"), "one\n");
}

/// The 1.5B fixed a typo in a ten-line module with edit_file, then wrote
/// an unrelated class over it: under the wipe guard's twenty lines, but
/// the turn had already made its change.
#[tokio::test]
async fn rewriting_most_of_a_file_the_turn_changed_is_refused_at_any_size() {
    let module = "def total(items):\n    return sum(items)\n\n\ndef report(items):\n    return f\"Totl: {total(items)}\"\n";
    let (dir, ctx) = project("report.py", module);
    let v = call(
        &ctx,
        "edit_file",
        json!({"path": "report.py", "search_block": "Totl", "replace_block": "Total"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "report.py", "content": "class Item:\n    pass\n"}),
    )
    .await;
    assert_eq!(v["ok"], false, "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "refused: you changed report.py earlier in this turn, and this content keeps only 0 \
             of its 6 lines"
        ),
        "{error}"
    );
    assert!(text(dir.path(), "report.py").contains("Total: "));
    // A write that keeps most of it, adding to the change, lands.
    let more = format!(
        "{}\n\ndef count(items):\n    return len(items)\n",
        text(dir.path(), "report.py")
    );
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "report.py", "content": more}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
}

/// A file the turn created is its own to rewrite.
#[tokio::test]
async fn a_file_the_turn_created_may_be_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    ctx.checkpoints.lock().begin_turn(true);
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "new.py", "content": "a = 1\nb = 2\nc = 3\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "new.py", "content": "x = 1\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(text(dir.path(), "new.py"), "x = 1\n");
}
