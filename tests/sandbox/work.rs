//! Real work inside workspace-write: a crate built and tested, Python's
//! unittest, npm, git reading the repository, and git's own files kept
//! read-only however they are reached; and toolchains in the home at
//! read-only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use dashfloat::tools::Sandbox;

use crate::{Scene, run, run_in};

/// Runs a program unsandboxed, for the test's own set-up; panics on
/// failure.
fn setup(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Where `program` is on this process's `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// The scene's environment with this process's `PATH` in front and
/// `extra` set.
fn env_with(scene: &Scene, extra: &[(&str, OsString)]) -> Vec<(OsString, OsString)> {
    let mut env = scene.env();
    env.retain(|(name, _)| name != "PATH");
    env.push(("PATH".into(), std::env::var_os("PATH").unwrap_or_default()));
    env.extend(extra.iter().map(|(n, v)| (OsString::from(n), v.clone())));
    env
}

#[tokio::test]
async fn cargo_builds_and_tests_a_small_crate() {
    let Some(cargo) = which("cargo") else {
        eprintln!("notice: no cargo on PATH: the cargo case is left out");
        return;
    };
    let scene = Scene::new();
    std::fs::write(
        scene.root.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir(scene.root.join("src")).unwrap();
    std::fs::write(
        scene.root.join("src/lib.rs"),
        "pub fn two() -> u32 { 2 }\n#[test]\nfn it_is_two() { assert_eq!(two(), 2); }\n",
    )
    .unwrap();
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let rustup = std::env::var_os("RUSTUP_HOME")
        .unwrap_or_else(|| real_home.join(".rustup").into_os_string());
    let env = env_with(
        &scene,
        &[
            ("RUSTUP_HOME", rustup),
            (
                "CARGO_HOME",
                scene.root.join(".cargo-home").into_os_string(),
            ),
            (
                "CARGO_TARGET_DIR",
                scene.root.join("target").into_os_string(),
            ),
            ("RUSTUP_TOOLCHAIN", "1.95.0".into()),
        ],
    );
    let ws = scene.workspace();
    let cargo = cargo.display();
    let ran = run_in(
        &ws,
        Sandbox::WorkspaceWrite,
        &scene.root,
        &format!("{cargo} build --offline && {cargo} test --offline"),
        env,
    )
    .await
    .unwrap();
    assert!(ran.ok(), "{}", ran.output);
    assert!(
        ran.output.contains("test it_is_two ... ok"),
        "{}",
        ran.output
    );
}

#[tokio::test]
async fn python_unittest_runs() {
    let scene = Scene::new();
    std::fs::write(
        scene.root.join("test_two.py"),
        "import unittest\n\nclass Two(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(1 + 1, 2)\n",
    )
    .unwrap();
    let ran = run(
        &scene,
        Sandbox::WorkspaceWrite,
        "python3 -m unittest -v 2>&1",
    )
    .await;
    assert!(ran.ok(), "{}", ran.output);
    assert!(ran.output.contains("test_two"), "{}", ran.output);
}

#[tokio::test]
async fn npm_test_runs() {
    if which("npm").is_none() {
        eprintln!("notice: no npm on PATH: the npm case is left out");
        return;
    }
    let scene = Scene::new();
    std::fs::write(
        scene.root.join("package.json"),
        r#"{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node test.js"}}"#,
    )
    .unwrap();
    std::fs::write(
        scene.root.join("test.js"),
        "require('assert').strictEqual(1 + 1, 2); console.log('two ok');\n",
    )
    .unwrap();
    let ran = run_in(
        &scene.workspace(),
        Sandbox::WorkspaceWrite,
        &scene.root,
        "npm test",
        env_with(&scene, &[]),
    )
    .await
    .unwrap();
    assert!(ran.ok(), "{}", ran.output);
    assert!(ran.output.contains("two ok"), "{}", ran.output);
}

/// A repository in the project with one commit and a change.
fn repository(scene: &Scene) {
    setup(&scene.root, "git", &["init", "-q"]);
    setup(
        &scene.root,
        "git",
        &["config", "user.email", "t@example.com"],
    );
    setup(&scene.root, "git", &["config", "user.name", "t"]);
    setup(&scene.root, "git", &["add", "README"]);
    setup(&scene.root, "git", &["commit", "-qm", "first"]);
    std::fs::write(scene.root.join("README"), "changed\n").unwrap();
}

#[tokio::test]
async fn git_reads_the_repository_and_cannot_change_it() {
    let scene = Scene::new();
    repository(&scene);
    let ws = scene.workspace();
    let head = std::fs::read_to_string(scene.root.join(".git/HEAD")).unwrap();
    let status = run(
        &scene,
        Sandbox::WorkspaceWrite,
        "git status --short && git diff",
    )
    .await;
    assert!(status.ok(), "{}", status.output);
    assert!(status.output.contains("+changed"), "{}", status.output);
    for (what, command) in [
        ("a commit", "git commit -qam second"),
        (
            "a planted hook",
            "echo 'echo pwned' > .git/hooks/pre-commit",
        ),
        ("the config", "git config core.fsmonitor 'echo pwned'"),
        ("moving .git away", "mv .git moved"),
        ("removing .git", "rm -rf .git"),
    ] {
        let ran = run(&scene, Sandbox::WorkspaceWrite, command).await;
        assert!(!ran.ok(), "{what} went through:\n{}", ran.output);
    }
    // From inside `.git` itself, where the bind lies above the start.
    let inside = run_in(
        &ws,
        Sandbox::WorkspaceWrite,
        &scene.root.join(".git"),
        "echo pwned > hooks/post-checkout",
        scene.env(),
    )
    .await
    .unwrap();
    assert!(!inside.ok(), "{}", inside.output);
    assert!(!scene.root.join(".git/hooks/pre-commit").exists());
    assert!(!scene.root.join(".git/hooks/post-checkout").exists());
    assert!(scene.root.join(".git/HEAD").exists());
    let config = std::fs::read_to_string(scene.root.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert_eq!(
        std::fs::read_to_string(scene.root.join(".git/HEAD")).unwrap(),
        head
    );
    // The rest of the project stays writable.
    let write = run(
        &scene,
        Sandbox::WorkspaceWrite,
        "echo x > new && git status --short",
    )
    .await;
    assert!(
        write.ok() && write.output.contains("?? new"),
        "{}",
        write.output
    );
}

#[tokio::test]
async fn a_git_folder_named_by_a_dot_git_file_is_kept_read_only_too() {
    let scene = Scene::new();
    setup(
        &scene.root,
        "git",
        &["init", "-q", "--separate-git-dir=metadata"],
    );
    let ran = run(
        &scene,
        Sandbox::WorkspaceWrite,
        "echo pwned > metadata/hooks/pre-commit",
    )
    .await;
    assert!(!ran.ok(), "{}", ran.output);
    let ran = run(
        &scene,
        Sandbox::WorkspaceWrite,
        "echo 'gitdir: elsewhere' > .git",
    )
    .await;
    assert!(!ran.ok(), "{}", ran.output);
    let status = run(&scene, Sandbox::WorkspaceWrite, "git status --short").await;
    assert!(status.ok(), "{}", status.output);
}

#[tokio::test]
async fn toolchains_in_the_home_run_at_read_only() {
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let scene = Scene::new();
    let mut cases = Vec::new();
    let pyenv = real_home.join(".pyenv");
    if pyenv.join("shims/python3").exists() {
        cases.push((
            "python3 -c 'print(6 * 7)'",
            vec![
                (
                    "PATH",
                    format!("{}:/usr/bin:/bin", pyenv.join("shims").display()),
                ),
                ("PYENV_ROOT", pyenv.display().to_string()),
            ],
        ));
    }
    let cargo_bin = real_home.join(".cargo/bin");
    if cargo_bin.join("rustc").exists() {
        cases.push((
            "rustc --version && echo 42",
            vec![
                ("PATH", format!("{}:/usr/bin:/bin", cargo_bin.display())),
                (
                    "RUSTUP_HOME",
                    real_home.join(".rustup").display().to_string(),
                ),
                ("RUSTUP_TOOLCHAIN", "1.95.0".to_owned()),
            ],
        ));
    }
    if cases.is_empty() {
        eprintln!("notice: no pyenv or rustup in the home: nothing to run");
    }
    for (command, vars) in cases {
        let mut env = scene.env();
        for (name, value) in vars {
            env.retain(|(n, _)| n != name);
            env.push((name.into(), value.into()));
        }
        let ran = run_in(
            &scene.workspace(),
            Sandbox::ReadOnly,
            &scene.root,
            command,
            env,
        )
        .await
        .unwrap();
        assert!(
            ran.ok() && ran.output.contains("42"),
            "{command}:\n{}",
            ran.output
        );
    }
}

/// The rules are made once and reused; they follow the home as it
/// changes: a file made in it later is readable at workspace-write, a
/// credential folder made later is not, and the temporary folder is empty
/// again for each command.
#[tokio::test]
async fn reused_rules_follow_the_home_as_it_changes() {
    let scene = Scene::new();
    let ws = scene.workspace();
    let first = run_in(
        &ws,
        Sandbox::WorkspaceWrite,
        &scene.root,
        "echo left > \"$TMPDIR/left\"",
        scene.env(),
    )
    .await
    .unwrap();
    assert!(first.ok(), "{}", first.output);
    std::fs::write(scene.home.join("later.txt"), "later\n").unwrap();
    std::fs::create_dir(scene.home.join(".aws")).unwrap();
    std::fs::write(scene.home.join(".aws/credentials"), "KEY\n").unwrap();
    let later = run_in(
        &ws,
        Sandbox::WorkspaceWrite,
        &scene.root,
        "cat ~/later.txt; cat ~/.aws/credentials; ls -A \"$TMPDIR\"",
        scene.env(),
    )
    .await
    .unwrap();
    assert!(later.output.contains("later\n"), "{}", later.output);
    assert!(!later.output.contains("KEY"), "{}", later.output);
    assert!(!later.output.contains("left"), "{}", later.output);
}

/// A linked worktree (`git worktree add`) reads its repository's shared
/// folder at read-only; the rest of the main checkout stays out of reach.
#[tokio::test]
async fn a_linked_worktree_reads_its_repository_at_read_only() {
    let scene = Scene::new();
    let main = scene.outside.join("main");
    std::fs::create_dir(&main).unwrap();
    std::fs::write(main.join("README"), "main\n").unwrap();
    setup(&main, "git", &["init", "-q"]);
    setup(&main, "git", &["config", "user.email", "t@example.com"]);
    setup(&main, "git", &["config", "user.name", "t"]);
    setup(&main, "git", &["add", "README"]);
    setup(&main, "git", &["commit", "-qm", "first"]);
    setup(&main, "git", &["worktree", "add", "-q", "../linked"]);
    let linked = scene.outside.join("linked");
    let ws = dashfloat::tools::LocalWorkspace::new(&linked).with_sandbox(
        dashfloat::tools::sandbox::SandboxSettings::for_home(Some(&scene.home), None),
    );
    let log = run_in(
        &ws,
        Sandbox::ReadOnly,
        &linked,
        "git log --oneline",
        scene.env(),
    )
    .await
    .unwrap();
    assert!(log.ok() && log.output.contains("first"), "{}", log.output);
    let main_file = run_in(
        &ws,
        Sandbox::ReadOnly,
        &linked,
        "cat ../main/README",
        scene.env(),
    )
    .await
    .unwrap();
    assert!(!main_file.ok(), "{}", main_file.output);
}

/// Started in the home, the project holds the credential folders: the
/// whole work tree can still be listed and read, `git status` included,
/// and the keys' content stays unread at both levels.
#[tokio::test]
async fn a_project_that_is_the_home_is_listed_but_its_keys_stay_unread() {
    let scene = Scene::new();
    setup(&scene.home, "git", &["init", "-q"]);
    let ws = dashfloat::tools::LocalWorkspace::new(&scene.home).with_sandbox(
        dashfloat::tools::sandbox::SandboxSettings::for_home(Some(&scene.home), None),
    );
    for level in [Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
        let ran = run_in(
            &ws,
            level,
            &scene.home,
            "ls -A && git status --short && cat notes.txt && cat .ssh/id_rsa",
            scene.env(),
        )
        .await
        .unwrap();
        assert!(ran.output.contains("notes.txt"), "{}", ran.output);
        assert!(ran.output.contains("?? notes.txt"), "{}", ran.output);
        assert!(ran.output.contains("notes\n"), "{}", ran.output);
        assert!(!ran.output.contains("PRIVATE KEY"), "{}", ran.output);
        assert!(!ran.ok(), "{}", ran.output);
    }
}
