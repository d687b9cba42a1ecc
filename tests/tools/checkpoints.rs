//! Restoring from checkpoints against real files: through the path
//! policy (a link that now leads out of the project is refused and the
//! file outside untouched), each file whole or not at all, and a report
//! that says which.

use std::path::Path;

use crate::support::calls::validate;
use dashfloat::tools::{Restored, Standing, ToolContext, TurnChanges, execute, restore, survey};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Runs the file tool `tool` with `args` in a turn of `ctx`'s checkpoints;
/// the turn's changes.
async fn changed(ctx: &ToolContext, calls: &[(&str, serde_json::Value)]) -> TurnChanges {
    ctx.checkpoints.lock().begin_turn(true);
    for (tool, args) in calls {
        let call = validate(tool, &args.to_string()).unwrap();
        let result = execute(&call, ctx, CancellationToken::new()).await;
        assert!(result.outcome.is_ok(), "{tool}: {:?}", result.outcome);
    }
    ctx.checkpoints.lock().pop_done().unwrap()
}

fn edit(path: &str, from: &str, to: &str) -> (&'static str, serde_json::Value) {
    (
        "edit_file",
        json!({"path": path, "search_block": from, "replace_block": to}),
    )
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[tokio::test]
async fn a_restore_through_a_link_that_now_leaves_the_project_is_refused() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a.txt"), "inside\n").unwrap();
    std::fs::write(outside.path().join("a.txt"), "outside\n").unwrap();
    let ctx = ToolContext::new(root).unwrap();
    let changes = changed(&ctx, &[edit("sub/a.txt", "inside", "edited")]).await;

    std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
    let surveyed = survey(ctx.workspace.as_ref(), &changes);
    assert!(
        matches!(&surveyed[0].standing, Standing::Unrestorable(why) if why.contains("escapes the working directory")),
        "{:?}",
        surveyed[0].standing
    );
    let (outcomes, back) = restore(ctx.workspace.as_ref(), &surveyed);
    assert!(matches!(&outcomes[0].1, Restored::Left(_)), "{outcomes:?}");
    assert!(back.is_empty());
    assert_eq!(read(outside.path(), "a.txt"), "outside\n");
}

#[tokio::test]
async fn each_file_is_restored_whole_or_left_and_the_report_says_which() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), "a1\n").unwrap();
    std::fs::write(root.join("sub/b.txt"), "b1\n").unwrap();
    std::fs::write(root.join("c.txt"), "c1\n").unwrap();
    let ctx = ToolContext::new(root).unwrap();
    let changes = changed(
        &ctx,
        &[
            edit("a.txt", "a1", "a2"),
            edit("sub/b.txt", "b1", "b2"),
            edit("c.txt", "c1", "c2"),
        ],
    )
    .await;
    let surveyed = survey(ctx.workspace.as_ref(), &changes);
    assert!(surveyed.iter().all(|f| f.standing == Standing::AsLeft));

    // Between the survey and the restore: b's directory becomes a file,
    // and c is changed again.
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub"), "not a directory\n").unwrap();
    std::fs::write(root.join("c.txt"), "c3\n").unwrap();
    let (outcomes, back) = restore(ctx.workspace.as_ref(), &surveyed);
    assert_eq!(
        outcomes[0],
        ("a.txt".to_owned(), Restored::Done("restored"))
    );
    assert!(matches!(&outcomes[1], (p, Restored::Left(_)) if p == "sub/b.txt"));
    assert!(
        matches!(&outcomes[2], (p, Restored::Left(why)) if p == "c.txt" && why.contains("changed while")),
        "{outcomes:?}"
    );
    assert_eq!(read(root, "a.txt"), "a1\n");
    assert_eq!(read(root, "sub"), "not a directory\n");
    assert_eq!(read(root, "c.txt"), "c3\n");
    // Only what was restored can be restored back.
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].path, "a.txt");
    let names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "a temp file was left: {names:?}"
    );
}
