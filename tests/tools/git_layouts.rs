//! The analyser on repository metadata a cloned or unpacked project can
//! carry (`support::crafted`): for each layout git itself is asked which
//! repository and which `core.fsmonitor` a git stage would use, and the
//! analyser must agree — it asks whenever git would use a repository
//! outside the project or a configuration that runs a program, and lets a
//! clean one run (ADR 0025).

use std::fs;
use std::path::Path;
use std::time::Duration;

use dashfloat::tools::{Analyser, Verdict};

use dashfloat::bounds::ANALYSER_GIT_DIR_ENTRIES_MAX;

use crate::support;
use support::crafted::{Expect, LAYOUTS, Tree, git_would_reach_out};

#[test]
fn git_and_the_analyser_agree_on_every_crafted_layout() {
    let mut failures = Vec::new();
    for layout in LAYOUTS {
        let tree = Tree::new();
        (layout.build)(&tree);
        let dir = tree.root.join(layout.dir);
        if matches!(layout.expect, Expect::Clean | Expect::ReachesOut) {
            let reaches_out = git_would_reach_out(&tree.root, &dir);
            if reaches_out != (layout.expect == Expect::ReachesOut) {
                failures.push(format!(
                    "{}: git reaches out: {reaches_out}, the layout says {:?}",
                    layout.name, layout.expect
                ));
                continue;
            }
        }
        let analyser = Analyser::new(&tree.root)
            .with_command_env(support::command_env(Path::new("/dev/null")));
        let verdict = analyser.analyse(".", layout.line);
        let asked = matches!(verdict, Verdict::Ask { .. });
        if asked != layout.expect.asks() {
            failures.push(format!("{}: `{}` → {verdict:?}", layout.name, layout.line));
        }
        assert!(!tree.marker().exists(), "{}", layout.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `GIT_CONFIG` makes `git config --list` read only that file, while
/// `git status` reads the repository's: the analyser's question must not
/// see another configuration than the run.
#[test]
fn a_git_config_variable_in_the_environment_hides_nothing() {
    let tree = Tree::new();
    fs::write(tree.git_dir().join("config"), tree.hostile()).unwrap();
    let mut env = support::command_env(Path::new("/dev/null"));
    env.push(("GIT_CONFIG".into(), "/dev/null".into()));
    let analyser = Analyser::new(&tree.root).with_command_env(env);
    match analyser.analyse(".", "git status --short") {
        Verdict::Ask { reason } => assert!(reason.contains("(core.fsmonitor)"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// A repository's own folders are looked through for links up to a
/// bound; past it, git lines ask.
#[test]
fn a_repository_with_more_files_than_are_looked_through_asks() {
    let tree = Tree::new();
    let objects = tree.git_dir().join("objects");
    let already = walked_entries(&tree.git_dir());
    for n in already..ANALYSER_GIT_DIR_ENTRIES_MAX {
        fs::write(objects.join(format!("x{n}")), "").unwrap();
    }
    let analyser =
        Analyser::new(&tree.root).with_command_env(support::command_env(Path::new("/dev/null")));
    assert!(matches!(
        analyser.analyse(".", "git status"),
        Verdict::ReadOnly { .. }
    ));
    fs::write(objects.join("one-more"), "").unwrap();
    match analyser.analyse(".", "git status") {
        Verdict::Ask { reason } => assert!(reason.contains("more than 20000 entries"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// A work tree is looked through for nested repositories and links out
/// up to a bound before a line that reads untracked folders or
/// attributes; past it, such lines ask, and others still run. (The
/// bound is lowered here: the default's 200,000 files took 25 s to make.)
#[test]
fn a_work_tree_with_more_entries_than_are_looked_through_asks() {
    const MAX: usize = 500;
    let tree = Tree::new();
    let build = tree.root.join("target");
    fs::create_dir_all(build.join("deep")).unwrap();
    let already = walked_entries(&tree.root) - walked_entries(&tree.git_dir());
    for n in already..MAX {
        fs::write(build.join("deep").join(format!("f{n}")), "").unwrap();
    }
    let analyser = Analyser::new(&tree.root)
        .with_command_env(support::command_env(Path::new("/dev/null")))
        .with_work_tree_entries(MAX);
    let verdict = analyser.analyse(".", "git status --short");
    assert!(matches!(verdict, Verdict::ReadOnly { .. }), "{verdict:?}");
    fs::write(build.join("one-more"), "").unwrap();
    for line in [
        "git status --short",
        "git status -uno",
        "git log -p -1",
        "git ls-files -o",
    ] {
        match analyser.analyse(".", line) {
            Verdict::Ask { reason } => assert!(
                reason.contains(&format!("the work tree holds more than {MAX} entries")),
                "{line}: {reason}"
            ),
            other => panic!("{line}: {other:?}"),
        }
    }
    for line in ["git ls-files -s", "git branch -v", "git rev-parse HEAD"] {
        let verdict = analyser.analyse(".", line);
        assert!(
            matches!(verdict, Verdict::ReadOnly { .. }),
            "{line}: {verdict:?}"
        );
    }
}

/// A nested repository asks only for the lines that read untracked
/// folders, and a link out only for those that read attributes (`status`
/// among them: `-v` and `attr:` pathspecs); each
/// work tree is looked through once a line.
#[test]
fn what_a_work_tree_holds_asks_only_for_the_lines_that_read_it() {
    let tree = Tree::new();
    fs::create_dir_all(tree.root.join("vendor/lib")).unwrap();
    support::crafted::git(&tree.root.join("vendor/lib"), &["init", "-q"]);
    std::os::unix::fs::symlink(&tree.base, tree.root.join("sub/out")).unwrap();
    let analyser =
        Analyser::new(&tree.root).with_command_env(support::command_env(Path::new("/dev/null")));
    let nested = "is a repository nested in the work tree";
    let linked = "is a link to a folder outside the project";
    for (line, why) in [
        ("git status", Some(nested)),
        ("git status -uall --porcelain", Some(nested)),
        ("git ls-files --others", Some(nested)),
        ("git ls-files -k", Some(nested)),
        ("git log --oneline", Some(linked)),
        ("git show HEAD", Some(linked)),
        ("git diff", Some(linked)),
        ("git blame README.md", Some(linked)),
        ("git status -uno", Some(linked)),
        ("git ls-files", None),
        ("git branch", None),
        ("git rev-parse HEAD", None),
        ("git -C vendor ls-files", None),
    ] {
        match (analyser.analyse(".", line), why) {
            (Verdict::Ask { reason }, Some(why)) => {
                assert!(reason.contains(why), "{line}: {reason}")
            }
            (Verdict::ReadOnly { .. }, None) => {}
            (other, _) => panic!("{line}: {other:?}"),
        }
    }
    // A link to a folder inside the project, or to a file outside, is
    // neither: attributes are read inside, or not at all.
    fs::remove_file(tree.root.join("sub/out")).unwrap();
    std::os::unix::fs::symlink("..", tree.root.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(tree.parent.join("secret.txt"), tree.root.join("sub/file")).unwrap();
    for line in ["git log -p", "git status -uno"] {
        let verdict = analyser.analyse(".", line);
        assert!(
            matches!(verdict, Verdict::ReadOnly { .. }),
            "{line}: {verdict:?}"
        );
    }
}

/// The entries under `dir`, every level.
fn walked_entries(dir: &Path) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            1 + if e.file_type().unwrap().is_dir() {
                walked_entries(&e.path())
            } else {
                0
            }
        })
        .sum()
}

/// Two paths one of which lies outside the repository's work tree make
/// `git diff` compare files as `--no-index` does (a FIFO held it for the
/// whole time limit).
#[test]
fn a_diff_of_a_path_outside_the_work_tree_asks() {
    let tree = Tree::new();
    let sub = tree.root.join("sub");
    support::crafted::git(&sub, &["init", "-q", "-b", "main"]);
    nix::unistd::mkfifo(&tree.root.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let analyser =
        Analyser::new(&tree.root).with_command_env(support::command_env(Path::new("/dev/null")));
    match analyser.analyse("sub", "git diff ../fifo ../README.md") {
        Verdict::Ask { reason } => assert!(reason.contains("outside the repository's work tree")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        analyser.analyse(".", "git diff README.md"),
        Verdict::ReadOnly { .. }
    ));
}

/// A `git` on the commands' `PATH` that notes each run in `count`, after
/// `delay` seconds, then runs the real one: made in `dir`, outside the
/// project.
fn counted_git(
    dir: &Path,
    count: &Path,
    delay: u32,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    fs::create_dir_all(dir).unwrap();
    let script = format!(
        "#!/bin/sh\necho run >> '{}'\nsleep {delay}\nexec '{}' \"$@\"\n",
        count.display(),
        real.trim()
    );
    let git = dir.join("git");
    fs::write(&git, script).unwrap();
    fs::set_permissions(&git, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    support::path_first(support::command_env(Path::new("/dev/null")), dir)
}

/// git is asked once a folder per line, however many stages run there.
#[test]
fn a_line_of_many_git_stages_asks_git_once_a_folder() {
    let tree = Tree::new();
    let count = tree.base.join("runs");
    let env = counted_git(&tree.base.join("bin"), &count, 0);
    let analyser = Analyser::new(&tree.root).with_command_env(env);
    let one = analyser.analyse(".", "git status");
    assert!(matches!(one, Verdict::ReadOnly { .. }), "{one:?}");
    let per_folder = fs::read_to_string(&count).unwrap().lines().count();
    fs::remove_file(&count).unwrap();
    let line = vec!["git status"; 50].join(" && ");
    assert!(matches!(
        analyser.analyse(".", &line),
        Verdict::ReadOnly { .. }
    ));
    assert_eq!(
        fs::read_to_string(&count).unwrap().lines().count(),
        per_folder
    );
}

/// Asking git for one line has one deadline: a git that takes a second
/// an answer, each well within a probe's own 5 s, would hold a line with
/// a 2 s bound for 4 s.
#[test]
fn asking_git_for_one_line_has_one_deadline() {
    let tree = Tree::new();
    let env = counted_git(&tree.base.join("bin"), &tree.base.join("runs"), 1);
    let analyser = Analyser::new(&tree.root)
        .with_command_env(env)
        .with_git_time(Duration::from_secs(2));
    match analyser.analyse(".", "git status") {
        Verdict::Ask { reason } => assert!(reason.contains("did not answer in time"), "{reason}"),
        other => panic!("{other:?}"),
    }
}
