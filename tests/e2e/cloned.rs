//! A cloned or unpacked repository against the real binary: `dashfloat
//! exec` under `--approval ask` (nobody can say `y`), against the
//! scripted server, in projects that carry crafted metadata
//! (`support::crafted`). Nothing outside the project reaches the server,
//! and nothing runs that was not shown to only read inside it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::support::crafted::{LAYOUTS, Tree, git, git_with_input};
use crate::support::dashfloat_bin;
use crate::support::server::{Reply, ScriptedServer};

/// The user the unprivileged run becomes when this test runs as root.
const NOBODY: &str = "65534";

/// `dashfloat exec PROMPT` in `project`, `home` its home and config
/// directory, saving nothing; as `nobody` when `unprivileged`.
fn exec(home: &Path, project: &Path, server: &ScriptedServer, unprivileged: bool) -> Output {
    // An empty configuration of the person's own, as git finds one.
    let global = home.join("gitconfig");
    std::fs::write(&global, "").unwrap();
    let mut command = if unprivileged {
        as_nobody(dashfloat_bin())
    } else {
        Command::new(dashfloat_bin())
    };
    command
        .arg("exec")
        .args(["--base-url", &server.base_url(), "--model", "scripted"])
        .args(["--no-save", "--approval", "ask", "look around"])
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_GLOBAL", &global)
        .env("DASHFLOAT_CONTEXT_WINDOW", "128000")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DASHFLOAT_APPROVAL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A script that asks to run `line`, then answers.
fn run_line(line: &str) -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "c1",
            "execute_command",
            &[&json!({ "command": line }).to_string()],
        ),
        Reply::text(&["done"]),
    ]
}

/// Everything the server was sent, as one text.
fn sent(server: &ScriptedServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect()
}

/// The tool results the server was sent, for a failure's message.
fn results(server: &ScriptedServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn an_instruction_file_linked_out_of_the_project_is_never_sent() {
    let tree = Tree::new();
    std::fs::write(tree.base.join("id_rsa"), "PRIVATE-KEY-MATERIAL\n").unwrap();
    let depth = "../".repeat(tree.root.components().count());
    let targets = [
        "../../id_rsa".to_owned(),
        format!("{depth}{}", tree.base.join("id_rsa").display()),
        "/proc/self/environ".to_owned(),
    ];
    for target in targets {
        let _ = std::fs::remove_file(tree.root.join("AGENTS.md"));
        std::os::unix::fs::symlink(&target, tree.root.join("AGENTS.md")).unwrap();
        let server = ScriptedServer::start_blocking(vec![Reply::text(&["ok"])]);
        let output = exec(&tree.base, &tree.root, &server, false);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{target}: {stderr}");
        let sent = sent(&server);
        assert!(!sent.contains("PRIVATE-KEY"), "{target}");
        assert!(!sent.contains("Project instructions"), "{target}");
        assert!(!sent.contains("XDG_CONFIG_HOME"), "{target}");
        assert!(
            stderr.contains("AGENTS.md: path escapes the working directory"),
            "{target}: {stderr}"
        );
    }
}

#[test]
fn crafted_git_metadata_runs_nothing_and_shows_nothing_from_outside() {
    for layout in LAYOUTS {
        let tree = Tree::new();
        (layout.build)(&tree);
        let server = ScriptedServer::start_blocking(run_line(layout.line));
        let output = exec(&tree.base, &tree.root, &server, false);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{}: {stderr}", layout.name);
        assert!(!tree.marker().exists(), "{}: the monitor ran", layout.name);
        let (sent, results) = (sent(&server), results(&server));
        assert!(
            !sent.contains("PARENT-SECRET"),
            "{}: {results:?}",
            layout.name
        );
        // The clean layouts still run unasked.
        assert_eq!(
            sent.contains("no one can approve this call"),
            layout.expect.asks(),
            "{}: {results:?}",
            layout.name
        );
    }
}

/// git passes over a `.git` whose `refs` it may not search (`access`
/// with `X_OK`, which root always passes) and reads the repository above:
/// run as an unprivileged owner of both, `git show HEAD:secret.txt` must
/// still not run unasked.
#[test]
fn refs_git_may_not_search_send_it_nowhere_as_an_unprivileged_user() {
    let tree = Tree::new();
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", &format!("{NOBODY}:{NOBODY}")])
            .arg(&tree.base)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let refs = tree.git_dir().join("refs");
    std::fs::set_permissions(&refs, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let server = ScriptedServer::start_blocking(run_line("git show HEAD:secret.txt"));
    let output = exec(&tree.base, &tree.root, &server, true);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let (sent, results) = (sent(&server), results(&server));
    assert!(!sent.contains("PARENT-SECRET"), "{results:?}");
    assert!(sent.contains("no one can approve this call"), "{results:?}");
    // What git itself shows that user there: the repository above's file.
    let shown = as_nobody("git")
        .args(["show", "HEAD:secret.txt"])
        .current_dir(&tree.root)
        .env("HOME", &tree.base)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout), "PARENT-SECRET\n");
}

/// A commit whose tree holds a folder named `..` (git never adds one;
/// `mktree` builds it and a fetch without fsck keeps it) names `../x`:
/// showing it, git looked up `../.gitattributes`, above the project. The
/// analysed line runs unasked and reads attributes from `HEAD`'s tree
/// (`attr.tree`), so nothing above the project is opened or shown.
#[test]
fn a_history_path_through_dot_dot_reads_no_attributes_outside() {
    let tree = Tree::new();
    std::fs::write(tree.parent.join(".gitattributes"), "x binary\n").unwrap();
    let root = &tree.root;
    let blob = git_with_input(root, &["hash-object", "-w", "--stdin"], "text\n");
    let inner = git_with_input(root, &["mktree"], &format!("100644 blob {blob}\tx\n"));
    let top = git_with_input(root, &["mktree"], &format!("040000 tree {inner}\t..\n"));
    let args = ["commit-tree", top.as_str(), "-p", "HEAD", "-m", "dot-dot"];
    let commit = git_with_input(root, &args, "");
    git(root, &["update-ref", "HEAD", &commit]);
    let server = ScriptedServer::start_blocking(run_line("git log -p -1"));
    let output = exec(&tree.base, root, &server, false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let (sent, results) = (sent(&server), results(&server));
    assert!(
        !sent.contains("no one can approve this call"),
        "{results:?}"
    );
    assert!(sent.contains("+text"), "{results:?}");
    assert!(!sent.contains("Binary files"), "{results:?}");
    assert!(!sent.contains("gitattributes"), "{results:?}");
    // On an unborn branch, git would drop an attribute tree named by
    // `HEAD`; the empty tree holds.
    git(root, &["branch", "dotdot", &commit]);
    git(root, &["symbolic-ref", "HEAD", "refs/heads/unborn"]);
    let server = ScriptedServer::start_blocking(run_line("git show dotdot"));
    let output = exec(&tree.base, root, &server, false);
    assert_eq!(output.status.code(), Some(0));
    let unborn = self::sent(&server);
    assert!(unborn.contains("+text"), "{unborn}");
    assert!(!unborn.contains("Binary files"), "{unborn}");
    assert!(!unborn.contains("gitattributes"), "{unborn}");
}

/// `program`, run as [`NOBODY`] when this test runs as root.
fn as_nobody(program: impl AsRef<std::ffi::OsStr>) -> Command {
    if !is_root() {
        return Command::new(program);
    }
    let mut setpriv = Command::new("setpriv");
    setpriv
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
        ])
        .arg(program);
    setpriv
}

/// Whether this test runs as root (`/proc/self` belongs to the effective
/// user).
fn is_root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0
}
