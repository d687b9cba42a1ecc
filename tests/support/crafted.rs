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

    /// Runs git in `dir`, which must succeed, and gives what it printed,
    /// trimmed.
    pub fn git_out(&self, dir: &Path, args: &[&str]) -> String {
        git_says(dir, args).unwrap_or_else(|| panic!("git {args:?} in {}", dir.display()))
    }

    /// A configuration key of the project's repository set to `value`.
    pub fn config(&self, key: &str, value: &str) {
        git(&self.root, &["config", key, value]);
    }

    /// Writes the project's index as holding `names`, each the empty
    /// file, in git's version 2 format with no checksum (which git
    /// accepts): what an unpacked archive can carry, and git's own
    /// commands never write.
    pub fn write_index(&self, names: &[&[u8]]) {
        let empty = self.git_out(&self.root, &["hash-object", "-w", "/dev/null"]);
        let oid: Vec<u8> = (0..empty.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&empty[i..i + 2], 16).unwrap())
            .collect();
        let mut names = names.to_vec();
        names.sort();
        let mut index = b"DIRC".to_vec();
        index.extend_from_slice(&2u32.to_be_bytes());
        index.extend_from_slice(&(names.len() as u32).to_be_bytes());
        for name in names {
            let mut entry = vec![0u8; 24];
            entry.extend_from_slice(&0o100644u32.to_be_bytes());
            entry.extend_from_slice(&[0u8; 12]);
            entry.extend_from_slice(&oid);
            entry.extend_from_slice(&(name.len() as u16).to_be_bytes());
            entry.extend_from_slice(name);
            let pad = 8 - entry.len() % 8;
            entry.extend(std::iter::repeat_n(0u8, pad));
            index.extend_from_slice(&entry);
        }
        index.extend_from_slice(&[0u8; 20]);
        fs::write(self.git_dir().join("index"), index).unwrap();
    }

    /// Makes `name` in the project's git directory a link to the secret
    /// above the project (its folder made first).
    pub fn link_secret(&self, name: &str) {
        let at = self.git_dir().join(name);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(self.parent.join("secret.txt"), at).unwrap();
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

/// What git answers in `dir` to `input` on its standard input, which
/// must succeed: for `mktree` and `hash-object --stdin`, which build
/// objects git's own porcelain would not.
pub fn git_with_input(dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?} in {}", dir.display());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
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

/// What a layout comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// git uses the project's own clean repository: the line runs
    /// unasked (checked against git's own answer).
    Clean,
    /// git would use a repository outside the project, or a
    /// configuration that runs a program, as git's own answer shows: the
    /// line asks.
    ReachesOut,
    /// The repository's content makes git read outside the project or run
    /// a program, which git's answer about the repository does not show:
    /// the line asks.
    Crafted,
}

impl Expect {
    /// Whether the line must be asked about.
    pub fn asks(self) -> bool {
        matches!(self, Expect::ReachesOut | Expect::Crafted)
    }
}

/// One crafted layout: how it is made, where the line runs, the line,
/// and what it comes to.
pub struct Layout {
    /// What it is.
    pub name: &'static str,
    /// Where git runs, from the project root.
    pub dir: &'static str,
    /// The command line the model asks for.
    pub line: &'static str,
    /// What it comes to.
    pub expect: Expect,
    /// Makes it in a fresh [`Tree`].
    pub build: fn(&Tree),
}

/// Every layout: two clean ones, each way the analyser once read a
/// different repository than git, and each way a repository's own files
/// once made an unasked git line read outside or run a program.
pub const LAYOUTS: &[Layout] = &[
    Layout {
        name: "the project's own clean repository",
        dir: ".",
        line: "git status",
        expect: Expect::Clean,
        build: |_| {},
    },
    Layout {
        name: "a gitdir: back to the project's .git",
        dir: "sub",
        line: "git -C sub status",
        expect: Expect::Clean,
        build: |t| fs::write(t.root.join("sub/.git"), "gitdir: ../.git\n").unwrap(),
    },
    Layout {
        // git strips only the line end: `common ` is the one it reads.
        name: "a commondir with a trailing space",
        dir: ".",
        line: "git status",
        expect: Expect::ReachesOut,
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
        expect: Expect::ReachesOut,
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
        expect: Expect::ReachesOut,
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
        expect: Expect::ReachesOut,
        build: |t| fs::write(t.git_dir().join("HEAD"), "ref:\x0brefs/heads/main\n").unwrap(),
    },
    Layout {
        // git wants a linked HEAD's target to start with `refs/`.
        name: "a HEAD that is a link",
        dir: ".",
        line: "git show HEAD:secret.txt",
        expect: Expect::ReachesOut,
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
        expect: Expect::ReachesOut,
        build: |t| {
            fs::rename(t.git_dir(), t.root.join("own-git")).unwrap();
            symlink(t.parent.join(".git"), t.git_dir()).unwrap();
        },
    },
    Layout {
        // git checks a name only when it adds it; `git diff` reads what
        // the index names.
        name: "an index naming ../secret.txt and an absolute path",
        dir: ".",
        line: "git diff",
        expect: Expect::Crafted,
        build: |t| {
            let absolute = t.parent.join("secret.txt");
            let absolute = absolute.as_os_str().as_encoded_bytes();
            t.write_index(&[b"../secret.txt", absolute, b"README.md"]);
        },
    },
    Layout {
        name: "a BISECT_START linked out of the project",
        dir: ".",
        line: "git status",
        expect: Expect::Crafted,
        build: |t| {
            fs::write(t.git_dir().join("BISECT_LOG"), "").unwrap();
            t.link_secret("BISECT_START");
        },
    },
    Layout {
        name: "a grafts file linked out of the project",
        dir: ".",
        line: "git log --oneline",
        expect: Expect::Crafted,
        build: |t| t.link_secret("info/grafts"),
    },
    Layout {
        name: "an index linked to another repository's",
        dir: ".",
        line: "git ls-files -s",
        expect: Expect::Crafted,
        build: |t| {
            fs::remove_file(t.git_dir().join("index")).unwrap();
            symlink(t.parent.join(".git/index"), t.git_dir().join("index")).unwrap();
        },
    },
    Layout {
        name: "a .git linked to a folder of the project holding a link out",
        dir: ".",
        line: "git status",
        expect: Expect::Crafted,
        build: |t| {
            fs::rename(t.git_dir(), t.root.join("meta")).unwrap();
            symlink("meta", t.git_dir()).unwrap();
            fs::write(t.root.join("meta/BISECT_LOG"), "").unwrap();
            symlink(
                t.parent.join("secret.txt"),
                t.root.join("meta/BISECT_START"),
            )
            .unwrap();
        },
    },
    Layout {
        // git would hold until its time is up.
        name: "a grafts file that is a FIFO",
        dir: ".",
        line: "git log --oneline",
        expect: Expect::Crafted,
        build: |t| {
            fs::create_dir_all(t.git_dir().join("info")).unwrap();
            let fifo = t.git_dir().join("info/grafts");
            nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        },
    },
    Layout {
        // The submodule's configuration is in a blob, where nobody looks,
        // and its `ignore = none` overrides the run's own setting.
        name: ".gitmodules in HEAD but not in the work tree, its repository monitored",
        dir: ".",
        line: "git status --short",
        expect: Expect::Crafted,
        build: |t| {
            let sm = t.root.join("sm");
            fs::create_dir_all(&sm).unwrap();
            git(&sm, &["init", "-q", "-b", "main"]);
            fs::write(sm.join("f"), "a\n").unwrap();
            git(&sm, &["add", "f"]);
            git(&sm, &["commit", "-q", "-m", "one"]);
            let head = t.git_out(&sm, &["rev-parse", "HEAD"]);
            fs::write(sm.join(".git/config"), t.hostile()).unwrap();
            let modules = "[submodule \"sm\"]\n\tpath = sm\n\turl = ./sm\n\tignore = none\n";
            fs::write(t.root.join(".gitmodules"), modules).unwrap();
            git(&t.root, &["add", ".gitmodules"]);
            let gitlink = format!("160000,{head},sm");
            git(&t.root, &["update-index", "--add", "--cacheinfo", &gitlink]);
            git(&t.root, &["commit", "-q", "-m", "sm"]);
            fs::remove_file(t.root.join(".gitmodules")).unwrap();
            fs::write(sm.join("f"), "dirty\n").unwrap();
        },
    },
    Layout {
        // `git log -m` merges again to show a merge, with the driver the
        // repository names.
        name: "a merge driver named in the repository's config",
        dir: ".",
        line: "git log -m -p -1",
        expect: Expect::Crafted,
        build: |t| {
            fs::write(t.root.join("f"), "base\n").unwrap();
            fs::write(t.root.join(".gitattributes"), "f merge=evil\n").unwrap();
            git(&t.root, &["add", "f", ".gitattributes"]);
            git(&t.root, &["commit", "-q", "-m", "base"]);
            git(&t.root, &["checkout", "-q", "-b", "side"]);
            fs::write(t.root.join("f"), "side\n").unwrap();
            git(&t.root, &["commit", "-q", "-a", "-m", "side"]);
            git(&t.root, &["checkout", "-q", "main"]);
            fs::write(t.root.join("f"), "main\n").unwrap();
            git(&t.root, &["commit", "-q", "-a", "-m", "main"]);
            git(
                &t.root,
                &["merge", "-q", "side", "-m", "merged", "-s", "ours"],
            );
            let driver = format!("touch {}; false", t.marker().display());
            t.config("merge.evil.driver", &driver);
            t.config("log.diffMerges", "remerge");
        },
    },
    Layout {
        // A gitlink without `.gitmodules` to another repository, its
        // summary asked for: the run's own configuration turns it off,
        // and its folder's `.git` asks before that.
        name: "a planted gitlink to another repository with its summary on",
        dir: ".",
        line: "git status",
        expect: Expect::Crafted,
        build: |t| {
            git(
                &t.parent,
                &[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    "PARENT-SECRET subject",
                ],
            );
            let head = t.git_out(&t.parent, &["rev-parse", "HEAD~1"]);
            let sm = t.root.join("sm");
            fs::create_dir_all(&sm).unwrap();
            fs::write(
                sm.join(".git"),
                format!("gitdir: {}\n", t.parent.join(".git").display()),
            )
            .unwrap();
            let gitlink = format!("160000,{head},sm");
            git(&t.root, &["update-index", "--add", "--cacheinfo", &gitlink]);
            git(&t.root, &["commit", "-q", "-m", "add sm"]);
            t.config("status.submoduleSummary", "true");
        },
    },
    Layout {
        // git compares a gitlink with the repository its folder's `.git`
        // names, before `diff.ignoreSubmodules` applies: `ls-files -m`
        // lists the gitlink when that repository's `HEAD` is not the
        // commit the index names, an oracle on another repository.
        name: "a gitlink whose folder's .git names the repository above",
        dir: ".",
        line: "git ls-files -m",
        expect: Expect::Crafted,
        build: |t| {
            let guess = "160000,1111111111111111111111111111111111111111,guess";
            git(&t.root, &["update-index", "--add", "--cacheinfo", guess]);
            git(&t.root, &["commit", "-q", "-m", "gitlink"]);
            fs::create_dir_all(t.root.join("guess")).unwrap();
            let gitdir = format!("gitdir: {}\n", t.parent.join(".git").display());
            fs::write(t.root.join("guess/.git"), gitdir).unwrap();
        },
    },
    Layout {
        // The gitlink's `.git` names a git directory planted in the
        // project, which is not the repository's own, so its
        // configuration is never listed: it includes a file outside, and
        // git's error quotes that file's first line.
        name: "a gitlink whose .git names a planted git directory including a file outside",
        dir: ".",
        line: "git status --porcelain",
        expect: Expect::Crafted,
        build: |t| {
            let planted = t.root.join("planted.git");
            t.copy_git(&["HEAD", "objects", "refs"], &planted);
            let include = format!(
                "[include]\n\tpath = {}\n",
                t.parent.join("secret.txt").display()
            );
            fs::write(planted.join("config"), include).unwrap();
            let gitlink = "160000,1111111111111111111111111111111111111111,gl";
            git(&t.root, &["update-index", "--add", "--cacheinfo", gitlink]);
            git(&t.root, &["commit", "-q", "-m", "gitlink"]);
            fs::create_dir_all(t.root.join("gl")).unwrap();
            fs::write(t.root.join("gl/.git"), "gitdir: ../planted.git\n").unwrap();
        },
    },
    Layout {
        // The index holds a file where the work tree has a folder whose
        // `.git` names the repository above: git resolves that folder as
        // a gitlink to compare the entry (`check_removed`), whatever the
        // entry's mode, and `git diff` printed the other repository's
        // `HEAD` as `Subproject commit …`.
        name: "a file entry whose path is now a folder whose .git names the repository above",
        dir: ".",
        line: "git diff",
        expect: Expect::Crafted,
        build: |t| {
            fs::write(t.root.join("sub1"), "a file\n").unwrap();
            git(&t.root, &["add", "sub1"]);
            git(&t.root, &["commit", "-q", "-m", "sub1"]);
            fs::remove_file(t.root.join("sub1")).unwrap();
            fs::create_dir_all(t.root.join("sub1")).unwrap();
            let gitdir = format!("gitdir: {}\n", t.parent.join(".git").display());
            fs::write(t.root.join("sub1/.git"), gitdir).unwrap();
        },
    },
    Layout {
        // `HEAD` holds `lnk/x`; the index has `lnk` as a link to a folder
        // outside. `git status -v` shows the staged removal of `lnk/x`
        // and reads its attributes, from `lnk/.gitattributes` outside: an
        // outside `x binary` made it "Binary files … differ", and an
        // `attr:` pathspec turned the outside file into an oracle.
        name: "a folder of HEAD staged as a link to a folder outside",
        dir: ".",
        line: "git status -v -uno",
        expect: Expect::Crafted,
        build: |t| {
            fs::create_dir_all(t.root.join("lnk")).unwrap();
            fs::write(t.root.join("lnk/x"), "text\n").unwrap();
            git(&t.root, &["add", "lnk/x"]);
            git(&t.root, &["commit", "-q", "-m", "lnk"]);
            let outside = t.parent.join("attrs");
            fs::create_dir_all(&outside).unwrap();
            fs::write(outside.join(".gitattributes"), "x binary\n").unwrap();
            git(&t.root, &["rm", "-q", "-r", "--cached", "lnk"]);
            fs::remove_dir_all(t.root.join("lnk")).unwrap();
            std::os::unix::fs::symlink(&outside, t.root.join("lnk")).unwrap();
            git(&t.root, &["add", "lnk"]);
        },
    },
    Layout {
        // A commit's tree holds `d/.git/x`, which git never adds but
        // `mktree` builds and a fetch without fsck keeps; the work tree's
        // `d/.git` is a link to a folder outside. Showing the commit, git
        // reads `d/.git/.gitattributes` there.
        name: "a history path beneath a nested .git that is a link to a folder outside",
        dir: ".",
        line: "git log -p -1",
        expect: Expect::Crafted,
        build: |t| {
            let outside = t.base.join("attrs");
            fs::create_dir_all(&outside).unwrap();
            fs::write(outside.join(".gitattributes"), "x binary\n").unwrap();
            let blob = git_with_input(&t.root, &["hash-object", "-w", "--stdin"], "text\n");
            let inner = git_with_input(&t.root, &["mktree"], &format!("100644 blob {blob}\tx\n"));
            let dotgit = git_with_input(
                &t.root,
                &["mktree"],
                &format!("040000 tree {inner}\t.git\n"),
            );
            let top = git_with_input(&t.root, &["mktree"], &format!("040000 tree {dotgit}\td\n"));
            let commit = git_with_input(
                &t.root,
                &["commit-tree", &top, "-p", "HEAD", "-m", "d/.git/x"],
                "",
            );
            git(&t.root, &["update-ref", "HEAD", &commit]);
            fs::create_dir_all(t.root.join("d")).unwrap();
            symlink(&outside, t.root.join("d/.git")).unwrap();
        },
    },
    Layout {
        // git asks of each untracked folder whether it holds a
        // repository, and opens where its `.git` leads: which paths
        // outside hold a repository shows in what it lists.
        name: "an untracked folder whose .git names the repository above",
        dir: ".",
        line: "git status --porcelain -uall",
        expect: Expect::Crafted,
        build: |t| {
            fs::create_dir_all(t.root.join("nest")).unwrap();
            let gitdir = format!("gitdir: {}\n", t.parent.join(".git").display());
            fs::write(t.root.join("nest/.git"), gitdir).unwrap();
        },
    },
    Layout {
        // git reads the `.gitattributes` of each folder of a path it
        // shows, opening only the last part without following a link:
        // for the history's `lnk/x` it read `lnk/.gitattributes` outside.
        name: "a tracked link to a folder outside, the history holding a file beneath it",
        dir: ".",
        line: "git log -p -3 --format=%s",
        expect: Expect::Crafted,
        build: |t| {
            link_out_over_history(t);
            git(&t.root, &["add", "lnk"]);
            git(&t.root, &["commit", "-q", "-m", "link"]);
        },
    },
    Layout {
        // The same through a link the index does not hold.
        name: "an untracked link to a folder outside, the history holding a file beneath it",
        dir: ".",
        line: "git diff HEAD~2 --stat",
        expect: Expect::Crafted,
        build: link_out_over_history,
    },
    Layout {
        // git ls-files lists the link as the index has it and reads
        // nothing through it.
        name: "a tracked link to a folder outside, for git ls-files",
        dir: ".",
        line: "git ls-files --stage",
        expect: Expect::Clean,
        build: |t| {
            link_out_over_history(t);
            git(&t.root, &["add", "lnk"]);
        },
    },
    Layout {
        // `ls-files -m` and `--eol` read a file through a linked folder,
        // which `git diff` would not: an equality oracle on a file
        // beside the project.
        name: "an index entry beneath a folder linked out of the project",
        dir: ".",
        line: "git ls-files -m --eol",
        expect: Expect::Crafted,
        build: |t| {
            let guess = t.git_out(&t.parent, &["rev-parse", "HEAD:secret.txt"]);
            let entry = format!("100644,{guess},link/secret.txt");
            git(&t.root, &["update-index", "--add", "--cacheinfo", &entry]);
            symlink(&t.parent, t.root.join("link")).unwrap();
        },
    },
    Layout {
        // git joins each listed table's name to the folder unchecked.
        name: "a reftable list naming another repository's table",
        dir: ".",
        line: "git branch -a",
        expect: Expect::Crafted,
        build: |t| {
            let other = t.base.join("other");
            fs::create_dir_all(&other).unwrap();
            git(
                &other,
                &["init", "-q", "-b", "main", "--ref-format=reftable"],
            );
            git(&other, &["commit", "-q", "--allow-empty", "-m", "other"]);
            git(&other, &["branch", "PARENT-SECRET-branch"]);
            fs::remove_dir_all(t.git_dir()).unwrap();
            git(
                &t.root,
                &["init", "-q", "-b", "main", "--ref-format=reftable"],
            );
            git(&t.root, &["commit", "-q", "--allow-empty", "-m", "own"]);
            let theirs = fs::read_to_string(other.join(".git/reftable/tables.list")).unwrap();
            let table = theirs.lines().last().unwrap();
            let list = t.git_dir().join("reftable/tables.list");
            let mut ours = fs::read_to_string(&list).unwrap();
            ours.push_str(&format!("../../../other/.git/reftable/{table}\n"));
            fs::write(list, ours).unwrap();
        },
    },
];

/// History with `lnk/x` changed twice and then removed, and `lnk` in the
/// work tree a link (untracked) to a folder beside the project whose
/// `.gitattributes` marks `x` binary and names a diff driver.
fn link_out_over_history(t: &Tree) {
    let outside = t.base.join("outdir");
    fs::create_dir_all(&outside).unwrap();
    fs::write(
        outside.join(".gitattributes"),
        "x binary diff=PARENT-SECRET\n",
    )
    .unwrap();
    let lnk = t.root.join("lnk");
    fs::create_dir_all(&lnk).unwrap();
    for text in ["one\n", "two\n"] {
        fs::write(lnk.join("x"), text).unwrap();
        git(&t.root, &["add", "lnk"]);
        git(&t.root, &["commit", "-q", "-m", text.trim_end()]);
    }
    git(&t.root, &["rm", "-rq", "lnk"]);
    git(&t.root, &["commit", "-q", "-m", "removed"]);
    symlink(&outside, &lnk).unwrap();
}
