//! The tools against real files in temporary directories and real
//! processes under `/bin/sh`: the path policy, each tool, validation,
//! previews, and the result bytes the model reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod analyser;
mod checkpoints;
mod confinement;
mod env;
mod exec;
mod git_layouts;
mod landed;
mod list;
mod locate;
mod loose;
mod memory;
mod path_fuzz;
mod path_policy;
mod preview;
mod read;
mod registry;
mod results;
mod seam;
mod search;
mod syntax;
mod validation;
mod write_edit;

use std::fmt::Display;
use std::path::{Path, PathBuf};

use dashfloat::tools::{ToolContext, ToolResult, execute};
use serde_json::Value;
use support::calls::validate;
use tokio_util::sync::CancellationToken;

use support::random::{Rng, env_or};

/// A result as the model reads it.
fn json_of(result: ToolResult) -> Value {
    serde_json::to_value(result).unwrap()
}

/// Validates `args` for `tool` and runs it with the tools rooted at `root`;
/// the result as the model reads it.
async fn run(root: &Path, tool: &str, args: impl Display) -> Value {
    let ctx = ToolContext::new(root).unwrap();
    let call = validate(tool, &args.to_string()).unwrap();
    json_of(execute(&call, &ctx, CancellationToken::new()).await)
}

/// Like [`run`], after the model has read `read` in the same
/// conversation (with the same context): what `write_file` asks before it
/// replaces a file.
async fn run_after_reading(root: &Path, read: &str, tool: &str, args: impl Display) -> Value {
    let ctx = ToolContext::new(root).unwrap();
    let read = validate(
        "read_file",
        &serde_json::json!({ "path": read }).to_string(),
    )
    .unwrap();
    let v = json_of(execute(&read, &ctx, CancellationToken::new()).await);
    assert_eq!(v["ok"], true, "{v}");
    let call = validate(tool, &args.to_string()).unwrap();
    json_of(execute(&call, &ctx, CancellationToken::new()).await)
}

/// Marks `path` as read in `ctx`'s conversation, for tests of what comes
/// after the read (previews of a replacement).
fn seen(ctx: &ToolContext, path: &str) {
    ctx.known.record(&ctx.workspace.resolve(path).unwrap());
}

/// Writes each `(path, content)` under `root`, making directories.
fn plant(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

use support::names;

/// A tempdir holding `root/` (the working directory) and `outside/` next
/// to it, with `outside/secret.txt`; both paths canonical.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        Tree {
            _dir: dir,
            root,
            outside,
        }
    }
}
