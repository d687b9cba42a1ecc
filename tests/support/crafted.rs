//! Repository metadata a cloned or unpacked project can carry, built for
//! real in a temporary directory: a repository above the project holding
//! a secret, the project's own repository, and layouts of the project's
//! `.git` that git reads differently from a careless reader. Shared by
//! the analyser's table test and the real binary's.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository above the project holding a secret, and the project, a
/// repository of its own with one commit.
///
/// ```text
/// base/parent/.git  secret.txt (committed)
/// base/parent/project/.git  README.md (committed), sub/
/// ```
pub struct Tree {
    _tmp: tempfile::TempDir,
    /// The temporary directory holding both.
    pub base: PathBuf,
    /// The repository above the project.
    pub parent: PathBuf,
    /// The project.
    pub root: PathBuf,
}

impl Tree {
    /// Makes both repositories.
    pub fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let parent = base.join("parent");
        let root = parent.join("project");
        fs::create_dir_all(root.join("sub")).unwrap();
        git(&parent, &["init", "-q", "-b", "main"]);
        fs::write(parent.join("secret.txt"), "PARENT-SECRET\n").unwrap();
        git(&parent, &["add", "secret.txt"]);
        git(&parent, &["commit", "-q", "-m", "secret"]);
        git(&root, &["init", "-q", "-b", "main"]);
        fs::write(root.join("README.md"), "hello\n").unwrap();
        git(&root, &["add", "README.md"]);
        git(&root, &["commit", "-q", "-m", "readme"]);
        Tree {
            _tmp: tmp,
            base,
            parent,
            root,
        }
    }

    /// Where the hostile configuration's monitor leaves its mark.
    pub fn marker(&self) -> PathBuf {
        self.base.join("fsmonitor-ran")
    }

    /// A configuration that runs a program whenever git status reads the
    /// index: it touches [`Tree::marker`].
    pub fn hostile(&self) -> String {
        format!("[core]\n\tfsmonitor = touch {}\n", self.marker().display())
    }

    /// The project's git directory.
    pub fn git_dir(&self) -> PathBuf {
        self.root.join(".git")
    }

    /// Copies the project's git directory's `names` into `to`.
    fn copy_git(&self, names: &[&str], to: &Path) {
        fs::create_dir_all(to).unwrap();
        for name in names {
            let status = Command::new("cp")
                .arg("-a")
                .arg(self.git_dir().join(name))
                .arg(to)
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

/// The environment git runs with here: no person's or system
/// configuration, a fixed identity.
pub fn env() -> Vec<(String, String)> {
    vec![
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_AUTHOR_NAME".into(), "t".into()),
        ("GIT_AUTHOR_EMAIL".into(), "t@example.com".into()),
        ("GIT_COMMITTER_NAME".into(), "t".into()),
        ("GIT_COMMITTER_EMAIL".into(), "t@example.com".into()),
    ]
}

/// Runs git in `dir`, which must succeed.
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(env())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// What git answers in `dir`, or `None` when it answers with an error.
fn git_says(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(env())
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

/// Whether git, run in `dir`, would read a repository outside `root` or
/// run a file system monitor: what a stage there must be asked about.
pub fn git_would_reach_out(root: &Path, dir: &Path) -> bool {
    let common = git_says(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let outside = common.is_none_or(|c| !Path::new(&c).starts_with(root));
    let monitor = git_says(dir, &["config", "--get", "core.fsmonitor"]).is_some();
    outside || monitor
}

/// One crafted layout: how it is made, where the line runs, the line,
/// and whether git then reaches out (checked against git itself).
pub struct Layout {
    /// What it is.
    pub name: &'static str,
    /// Where git runs, from the project root.
    pub dir: &'static str,
    /// The command line the model asks for.
    pub line: &'static str,
    /// Whether git reaches out of the project there.
    pub reaches_out: bool,
    /// Makes it in a fresh [`Tree`].
    pub build: fn(&Tree),
}

/// Every layout: two clean ones, and each way the analyser once read a
/// different repository than git.
pub const LAYOUTS: &[Layout] = &[
    Layout {
        name: "the project's own clean repository",
        dir: ".",
        line: "git status",
        reaches_out: false,
        build: |_| {},
    },
    Layout {
        name: "a gitdir: back to the project's .git",
        dir: "sub",
        line: "git -C sub status",
        reaches_out: false,
        build: |t| fs::write(t.root.join("sub/.git"), "gitdir: ../.git\n").unwrap(),
    },
    Layout {
        // git strips only the line end: `common ` is the one it reads.
        name: "a commondir with a trailing space",
        dir: ".",
        line: "git status",
        reaches_out: true,
        build: |t| {
            for (name, config) in [("common", String::new()), ("common ", t.hostile())] {
                let common = t.git_dir().join(name);
                t.copy_git(&["objects", "refs"], &common);
                fs::write(common.join("config"), config).unwrap();
            }
            fs::write(t.git_dir().join("commondir"), "common \n").unwrap();
        },
    },
    Layout {
        name: "a gitdir: with a trailing space to a hostile copy",
        dir: "sub",
        line: "git -C sub status",
        reaches_out: true,
        build: |t| {
            fs::write(t.root.join("sub/.git"), "gitdir: ../.git \n").unwrap();
            let copy = t.root.join(".git ");
            t.copy_git(&["HEAD", "objects", "refs", "index"], &copy);
            fs::write(copy.join("config"), t.hostile()).unwrap();
        },
    },
    Layout {
        name: "a gitdir: with a trailing space to another repository",
        dir: "sub",
        line: "git -C sub show HEAD:secret.txt",
        reaches_out: true,
        build: |t| {
            fs::write(t.root.join("sub/.git"), "gitdir: ../.git \n").unwrap();
            symlink(t.parent.join(".git"), t.root.join(".git ")).unwrap();
        },
    },
    Layout {
        // git skips only space, tab, LF and CR after `ref:`; it passes
        // over this `.git` to the repository above.
        name: "a HEAD with a vertical tab after ref:",
        dir: ".",
        line: "git show HEAD:secret.txt",
        reaches_out: true,
        build: |t| fs::write(t.git_dir().join("HEAD"), "ref:\x0brefs/heads/main\n").unwrap(),
    },
    Layout {
        // git wants a linked HEAD's target to start with `refs/`.
        name: "a HEAD that is a link",
        dir: ".",
        line: "git show HEAD:secret.txt",
        reaches_out: true,
        build: |t| {
            let head = t.git_dir().join("HEAD");
            fs::rename(&head, t.git_dir().join("HEAD.txt")).unwrap();
            symlink("HEAD.txt", head).unwrap();
        },
    },
    Layout {
        name: "a .git that is a link to another repository",
        dir: ".",
        line: "git show HEAD:secret.txt",
        reaches_out: true,
        build: |t| {
            fs::rename(t.git_dir(), t.root.join("own-git")).unwrap();
            symlink(t.parent.join(".git"), t.git_dir()).unwrap();
        },
    },
];
