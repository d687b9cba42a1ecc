//! The escape ADR 0010 closes, through every tool: a link whose target
//! walks into a missing directory (or a file used as one) and climbs back
//! out with `..` onto a link to outside. Each tool must refuse it and leave
//! outside alone.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use dashfloat::tools::{ToolContext, execute, validate};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// `root/` with `esc -> ../outside`, `docs/`, a file `f.txt`; `outside/`
/// next to it holding `secret.txt` and a directory `sub/`.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::fs::write(root.join("f.txt"), "f\n").unwrap();
    symlink(&outside, root.join("esc")).unwrap();
    Tree {
        _dir: dir,
        root,
        outside,
    }
}

impl Tree {
    /// Plants `root/docs/<name>` pointing at `target`.
    fn link(&self, name: &str, target: &str) {
        symlink(target, self.root.join("docs").join(name)).unwrap();
    }

    async fn run(&self, tool: &str, args: Value) -> Value {
        let ctx = ToolContext::new(&self.root).unwrap();
        let result = execute(
            &validate(tool, &args.to_string()).unwrap(),
            &ctx,
            CancellationToken::new(),
        )
        .await;
        serde_json::to_value(result).unwrap()
    }

    fn outside_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn denied(v: &Value) {
    assert_eq!(v["code"], "path_denied", "{v}");
    assert!(!v.to_string().contains("secret\\n"), "{v}");
}

#[tokio::test]
async fn read_file_does_not_follow_a_link_back_out_of_a_missing_directory() {
    let t = tree();
    t.link("l", "nonexistent/../../esc/secret.txt");
    denied(&t.run("read_file", json!({"path": "docs/l"})).await);
}

#[tokio::test]
async fn read_file_does_not_follow_a_link_back_out_of_a_file() {
    let t = tree();
    t.link("l", "../f.txt/x/../../esc/secret.txt");
    denied(&t.run("read_file", json!({"path": "docs/l"})).await);
}

#[tokio::test]
async fn write_file_does_not_plant_a_file_outside() {
    let t = tree();
    t.link("lnew", "nonexistent/../../esc/planted.txt");
    denied(
        &t.run(
            "write_file",
            json!({"path": "docs/lnew", "content": "planted"}),
        )
        .await,
    );
    assert_eq!(t.outside_names(), vec!["secret.txt", "sub"]);
}

#[tokio::test]
async fn edit_file_does_not_change_a_file_outside() {
    let t = tree();
    t.link("l", "nonexistent/../../esc/secret.txt");
    denied(
        &t.run(
            "edit_file",
            json!({"path": "docs/l", "search_block": "secret", "replace_block": "owned"}),
        )
        .await,
    );
    assert_eq!(
        std::fs::read_to_string(t.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn list_directory_does_not_list_outside() {
    let t = tree();
    t.link("d", "nonexistent/../../esc");
    let v = t.run("list_directory", json!({"path": "docs/d"})).await;
    denied(&v);
    assert!(!v.to_string().contains("secret.txt"), "{v}");
}

#[tokio::test]
async fn execute_command_does_not_run_outside() {
    let t = tree();
    t.link("d", "nonexistent/../../esc/sub");
    let v = t
        .run(
            "execute_command",
            json!({"command": "touch planted", "cwd": "docs/d"}),
        )
        .await;
    denied(&v);
    assert_eq!(t.outside_names(), vec!["secret.txt", "sub"]);
    assert!(!t.outside.join("sub/planted").exists());
}

#[tokio::test]
async fn a_command_runs_in_the_directory_the_policy_approved() {
    let t = tree();
    std::fs::create_dir(t.root.join("docs/inner")).unwrap();
    let v = t
        .run(
            "execute_command",
            json!({"command": "pwd -P", "cwd": "docs/inner"}),
        )
        .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(
        v["output"].as_str().unwrap().trim_end(),
        t.root.join("docs/inner").to_str().unwrap()
    );
}
