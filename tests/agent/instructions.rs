//! Project instructions (ADR 0023): `AGENTS.md`, or `CLAUDE.md` where a
//! directory has none, from the git root (else the start directory) down
//! to the start directory, capped, in the one system message, named in
//! the log's first line.

use std::fs;
use std::path::Path;
use std::process::Command;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::agent::instructions::{self, Instructions, cut_marker};
use dashfloat::bounds::INSTRUCTIONS_MAX_BYTES;
use dashfloat::protocol::{AgentEvent, Severity};
use dashfloat::tools::LocalWorkspace;

use crate::support;
use support::agent::{setup, start_with};
use support::server::{Reply, ScriptedServer};

/// Writes `text` to `dir/name`, making the directories.
fn put(dir: &Path, name: &str, text: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join(name), text).unwrap();
}

/// Runs git in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").args(args).current_dir(dir).status();
    assert!(
        status.unwrap().success(),
        "git {args:?} in {}",
        dir.display()
    );
}

/// Makes `dir` (and the folders above it) a git repository.
fn git_init(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
}

/// The instructions a session started in `start` reads, git asked with
/// no person's configuration.
fn read(start: &Path) -> Instructions {
    let env = support::command_env(Path::new("/dev/null"));
    instructions::read(&LocalWorkspace::new(start), env)
}

/// The project root a session started in `start` finds.
fn project_root(start: &Path) -> std::path::PathBuf {
    let env = support::command_env(Path::new("/dev/null"));
    instructions::project_root(&LocalWorkspace::new(start), env)
}

/// A git root holding `AGENTS.md`, a directory below it with only a
/// `CLAUDE.md`, and below that the start directory with both; a file
/// above the root that must not be read. Returns (temp dir, start).
fn nested() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().canonicalize().unwrap();
    put(&outside, "AGENTS.md", "OUTSIDE the repository");
    let root = outside.join("repo");
    git_init(&root);
    put(&root, "AGENTS.md", "Root rule: run cargo test.\n");
    put(&root.join("a"), "CLAUDE.md", "Claude rule for a.\n");
    let start = root.join("a").join("b");
    put(&start, "AGENTS.md", "Agents rule for b.\n");
    put(&start, "CLAUDE.md", "IGNORED: b has an AGENTS.md");
    (tmp, start)
}

#[tokio::test]
async fn nested_files_from_the_git_root_go_into_the_one_system_message_and_the_first_line_names_them()
 {
    let (_tmp, start) = nested();
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start_with(setup(&server.base_url(), &start, ApprovalPolicy::Ask));
    let first = h.until(|_| true).await;
    assert_eq!(
        first,
        vec![AgentEvent::System {
            severity: Severity::Notice,
            text: "project instructions loaded: AGENTS.md, a/CLAUDE.md, a/b/AGENTS.md".into(),
        }]
    );
    h.prompt("hi").await;
    h.turn().await;
    let body = &server.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let systems: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(systems.len(), 1, "one system message: {messages:#?}");
    let system = systems[0];
    assert!(system.starts_with("system prompt\n\n# Project instructions\n"));
    let order: Vec<usize> = [
        "## AGENTS.md\n\nRoot rule: run cargo test.",
        "## a/CLAUDE.md\n\nClaude rule for a.",
        "## a/b/AGENTS.md\n\nAgents rule for b.",
    ]
    .iter()
    .map(|section| {
        system
            .find(section)
            .unwrap_or_else(|| panic!("{section} in {system}"))
    })
    .collect();
    assert!(order.is_sorted(), "outermost first: {system}");
    assert!(!system.contains("OUTSIDE"));
    assert!(!system.contains("IGNORED"));
    assert_eq!(messages[1]["role"], "user");
}

#[test]
fn a_linked_worktree_is_a_root_as_a_repository_is() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    git_init(&base.join("main"));
    git(
        &base.join("main"),
        &["commit", "-q", "--allow-empty", "-m", "first"],
    );
    git(
        &base.join("main"),
        &["worktree", "add", "-q", "../worktree"],
    );
    let root = base.join("worktree");
    put(&root, "AGENTS.md", "worktree rule");
    let start = root.join("src");
    fs::create_dir_all(&start).unwrap();
    assert_eq!(project_root(&start), root);
    let found = read(&start);
    assert_eq!(found.files, vec!["AGENTS.md"]);
}

/// A `.git` git does not take (an empty folder, a `gitdir:` to nowhere)
/// makes no root: the folder above stays outside.
#[test]
fn a_git_folder_or_file_git_would_not_use_is_no_root() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    put(&base, "AGENTS.md", "STRAY rule");
    for dotgit in ["dir", "file"] {
        if dotgit == "dir" {
            fs::create_dir_all(base.join(".git")).unwrap();
        } else {
            fs::remove_dir(base.join(".git")).unwrap();
            put(&base, ".git", "gitdir: /elsewhere\n");
        }
        let start = base.join("start");
        put(&start, "AGENTS.md", "start rule");
        assert_eq!(project_root(&start), start, "{dotgit}");
        assert_eq!(read(&start).files, vec!["AGENTS.md"], "{dotgit}");
        assert!(!read(&start).text.contains("STRAY"), "{dotgit}");
    }
}

#[test]
fn without_a_git_root_only_the_start_directory_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().canonicalize().unwrap();
    put(&parent, "AGENTS.md", "PARENT rule");
    let start = parent.join("start");
    put(&start, "CLAUDE.md", "start rule");
    let found = read(&start);
    assert_eq!(found.files, vec!["CLAUDE.md"]);
    assert!(found.text.contains("## CLAUDE.md\n\nstart rule"));
    assert!(!found.text.contains("PARENT"));
    assert!(!found.cut);
}

#[test]
fn no_file_adds_nothing_and_says_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let found = read(&tmp.path().canonicalize().unwrap());
    assert!(found.text.is_empty());
    assert_eq!(found.notice(), None);
}

#[test]
fn instructions_that_fit_the_cap_exactly_are_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let start = tmp.path().canonicalize().unwrap();
    put(&start, "AGENTS.md", &"a".repeat(INSTRUCTIONS_MAX_BYTES));
    let found = read(&start);
    assert!(!found.cut);
    assert!(!found.text.contains(&cut_marker()));
    assert_eq!(
        found.notice().unwrap(),
        "project instructions loaded: AGENTS.md"
    );
}

#[test]
fn the_cap_cuts_what_is_past_32_kib_in_all_with_a_marker() {
    assert_eq!(INSTRUCTIONS_MAX_BYTES, 32 * 1024);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git_init(&root);
    let first = INSTRUCTIONS_MAX_BYTES - 9;
    put(&root, "AGENTS.md", &"r".repeat(first));
    let start = root.join("sub");
    // Nine bytes fit of fourteen: the cut falls inside a two-byte
    // character, which is left out whole.
    put(&start, "AGENTS.md", "ééééééé");
    put(&start.join("deeper"), "AGENTS.md", "NEVER READ");
    let found = read(&start.join("deeper"));
    assert!(found.cut);
    assert_eq!(found.files, vec!["AGENTS.md", "sub/AGENTS.md"]);
    assert_eq!(
        found.notice().unwrap(),
        "project instructions loaded: AGENTS.md, sub/AGENTS.md (cut at 32 KiB: the rest was left out)"
    );
    assert!(found.text.contains("## sub/AGENTS.md\n\néééé\n\n"));
    assert!(found.text.ends_with(&cut_marker()));
    assert!(!found.text.contains("NEVER"));
    assert!(found.text.contains(&format!("\n{}\n", "r".repeat(first))));
    assert_eq!(found.text.matches('é').count(), 4);
}

#[tokio::test]
async fn an_unreadable_file_is_a_notice_and_the_session_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git_init(&root);
    put(&root, "AGENTS.md", "root rule");
    let start = root.join("sub");
    // A directory where the file should be: found, but not readable.
    fs::create_dir_all(start.join("AGENTS.md")).unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["fine"])]).await;
    let mut h = start_with(setup(&server.base_url(), &start, ApprovalPolicy::Ask));
    let events = h
        .until(|e| matches!(e, AgentEvent::System { text, .. } if text.starts_with("cannot read")))
        .await;
    let texts = support::agent::system_texts(&events);
    assert_eq!(texts[0], "project instructions loaded: AGENTS.md");
    assert_eq!(
        texts[1],
        "cannot read the project instructions in sub/AGENTS.md: not a regular file; they were left out"
    );
    h.prompt("hi").await;
    let events = h.turn().await;
    assert_eq!(support::agent::reply_text(&events), "fine");
    let system = server.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("## AGENTS.md\n\nroot rule"));
}

/// A project whose instruction file is a link: to a secret beside the
/// project (relative, at any depth of `../`), to it by its absolute path,
/// to this process's environment, to a device. None is read, each is
/// named in a notice with why, and nothing of it reaches the server.
#[tokio::test]
async fn an_instruction_file_that_leads_out_of_the_project_is_left_out_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    put(&base, "secret.txt", "SECRET-KEY-MATERIAL");
    let root = base.join("repo");
    git_init(&root);
    let depth = "../".repeat(root.components().count());
    let secret = base.join("secret.txt");
    let targets = [
        "../secret.txt".to_owned(),
        format!("{depth}{}", secret.display()),
        secret.display().to_string(),
        "/proc/self/environ".to_owned(),
        "/dev/zero".to_owned(),
    ];
    for target in targets {
        let _ = fs::remove_file(root.join("AGENTS.md"));
        std::os::unix::fs::symlink(&target, root.join("AGENTS.md")).unwrap();
        let found = read(&root);
        assert!(found.files.is_empty(), "{target}: {found:?}");
        assert!(found.text.is_empty(), "{target}");
        let why = found.unreadable[0].to_string();
        assert_eq!(
            why,
            "cannot read the project instructions in AGENTS.md: path escapes the working directory: AGENTS.md; they were left out",
            "{target}"
        );
    }
    // Through the agent: the notice, and a system message without it.
    let server = ScriptedServer::start(vec![Reply::text(&["ok"])]).await;
    let mut h = start_with(setup(&server.base_url(), &root, ApprovalPolicy::Ask));
    let events = h
        .until(|e| matches!(e, AgentEvent::System { text, .. } if text.starts_with("cannot read")))
        .await;
    assert!(support::agent::system_texts(&events)[0].contains("AGENTS.md: path escapes"));
    h.prompt("hi").await;
    h.turn().await;
    let body = server.requests()[0].body.to_string();
    assert!(!body.contains("SECRET") && !body.contains("Project instructions"));
}

/// A link that stays in the project is read where it leads; a FIFO or a
/// device in the project is left out without blocking the start.
#[test]
fn links_inside_are_read_and_special_files_are_left_out_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git_init(&root);
    put(&root.join("docs"), "agents.md", "linked rule");
    std::os::unix::fs::symlink("docs/agents.md", root.join("AGENTS.md")).unwrap();
    let start = root.join("sub");
    fs::create_dir_all(&start).unwrap();
    std::os::unix::fs::symlink("../docs/agents.md", start.join("CLAUDE.md")).unwrap();
    let found = read(&start);
    assert_eq!(found.files, vec!["AGENTS.md", "sub/CLAUDE.md"]);
    assert_eq!(found.text.matches("linked rule").count(), 2);

    fs::remove_file(start.join("CLAUDE.md")).unwrap();
    nix::unistd::mkfifo(&start.join("AGENTS.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let found = read(&start);
    assert_eq!(found.files, vec!["AGENTS.md"]);
    assert_eq!(
        found.unreadable[0].to_string(),
        "cannot read the project instructions in sub/AGENTS.md: not a regular file; they were left out"
    );
}

/// A `git` of the project's own, first on the commands' `PATH` (a
/// `node_modules/.bin` or a virtual environment's `bin` put there), is
/// never run to find the project root: the start directory is the root.
#[test]
fn the_projects_own_git_is_never_run_to_find_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("repo");
    git_init(&root);
    put(&root, "AGENTS.md", "root rule");
    let start = root.join("sub");
    put(&start, "AGENTS.md", "sub rule");
    let bin = start.join("node_modules/.bin");
    let marker = base.join("ran");
    put(
        &bin,
        "git",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    fs::set_permissions(
        bin.join("git"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let env = support::path_first(support::command_env(Path::new("/dev/null")), &bin);
    let ws = LocalWorkspace::new(&start);
    assert_eq!(instructions::project_root(&ws, env.clone()), start);
    assert_eq!(instructions::read(&ws, env).files, vec!["AGENTS.md"]);
    assert!(!marker.exists());
}
