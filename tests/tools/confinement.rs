//! The escape ADR 0010 closes, through every tool: a link whose target
//! walks into a missing directory (or a file used as one) and climbs back
//! out with `..` onto a link to outside. Each tool must refuse it and leave
//! outside alone.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use crate::{Tree, names};

/// The [`Tree`] with `root/esc -> ../outside`, `root/docs/`, a file
/// `root/f.txt`, and a directory `outside/sub/`.
fn tree() -> Tree {
    let t = Tree::new();
    std::fs::create_dir_all(t.root.join("docs")).unwrap();
    std::fs::create_dir_all(t.outside.join("sub")).unwrap();
    std::fs::write(t.root.join("f.txt"), "f\n").unwrap();
    symlink(&t.outside, t.root.join("esc")).unwrap();
    t
}

impl Tree {
    /// Plants `root/docs/<name>` pointing at `target`.
    fn link(&self, name: &str, target: &str) {
        symlink(target, self.root.join("docs").join(name)).unwrap();
    }

    async fn run(&self, tool: &str, args: Value) -> Value {
        crate::run(&self.root, tool, args).await
    }

    fn outside_names(&self) -> Vec<String> {
        names(&self.outside)
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
