//! The repository a git stage would use, as the git that will run answers
//! it: `git rev-parse` in the stage's directory, with the commands'
//! environment, names the work tree, the git directory and the shared
//! one. The analyser never finds a repository by hand, so it cannot read
//! a `.git` file, a `commondir` or a `HEAD` differently from git. What it
//! adds is refusal: a work tree above the project, a `.git` git passed
//! over, a git directory outside the project, borrowed objects,
//! submodules, a hook the allowed subcommands can run, and then the
//! configuration ([`git_config`](super::git_config)). ADR 0025.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::git_config;
use super::git_probe::Git;
use super::paths::Place;
use crate::tools::git_dirs::looks_like_git_dir;
use crate::tools::{FileKind, PROBE_TIMEOUT, ScanError, ScanStep, Workspace};

use super::ANALYSER_GIT_DIR_ENTRIES_MAX;

/// The most bytes of a worktree's `gitdir` back-link read.
const BACK_LINK_MAX_BYTES: u64 = 4096;

/// The longest index name looked at (64 KiB; Linux paths are at most
/// 4 KiB).
const INDEX_NAME_MAX_BYTES: usize = 64 * 1024;

/// The longest reftable list read (64 KiB: a table name a line, and git
/// keeps a few).
const REFTABLE_LIST_MAX_BYTES: u64 = 64 * 1024;

/// Why a git stage's repository is not one the analyser can vouch for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum GitRefusal {
    /// `git` is not on the commands' `PATH`.
    #[error("git is not on the PATH commands run with")]
    NoGit,
    /// No `.git` between the stage's directory and the project root: git
    /// would look above the project.
    #[error("no repository in the project here, so git would look for one above it")]
    NoRepository,
    /// git answered with an error: no repository it would use, a
    /// configuration it cannot read, an owner it distrusts.
    #[error("git does not vouch for a repository here ({0})")]
    Refused(String),
    /// git could not be asked.
    #[error("git could not be asked which repository it would use: {0}")]
    Unasked(String),
    /// git's answer is not one the analyser reads: more or fewer lines, a
    /// path that is not absolute.
    #[error("git's answer about the repository is not understood: {0:?}")]
    Unusual(String),
    /// git would use a work tree above the project.
    #[error("git would use the repository at {0}, above the project")]
    Above(String),
    /// A `.git` between the stage's directory and the work tree git chose:
    /// git passed over it.
    #[error("`{0}` is not a repository git would use, so git reads the one above it")]
    NotARepository(String),
    /// A git directory outside the project that is not this work tree's
    /// registered linked worktree: git would read another repository.
    #[error("`{0}` leads to a repository outside the project, so git would read its files")]
    Elsewhere(String),
    /// A bare repository, or a directory below the work tree that looks
    /// like one.
    #[error("`{0}` looks like a bare repository, whose configuration is not checked")]
    Bare(String),
    /// The repository takes objects or refs from elsewhere (alternates,
    /// or `objects`, `refs`, `packed-refs` leading out of it): git would
    /// show another repository's files.
    #[error(
        "`{0}` takes objects or refs from outside the repository, so git would show another's files"
    )]
    Borrowed(String),
    /// git status and diff run git in submodules.
    #[error("the repository has submodules, whose configuration is not checked")]
    Submodules,
    /// A link, FIFO, socket or device among the repository's own files,
    /// which git would follow or block on.
    #[error(
        "`{0}`, among the repository's own files, is a link or a special file, which git would follow"
    )]
    Special(String),
    /// More files in the repository's own folders than are looked at.
    #[error(
        "the repository's own folders hold more than {0} entries, more than are looked through"
    )]
    Crowded(usize),
    /// An index entry git would never have added, or one beneath a linked
    /// folder, which it reads anyway.
    #[error(
        "the index names `{0}`, a path git would read outside the work tree, through a link or in its metadata"
    )]
    IndexName(String),
    /// An entry of the index whose path in the work tree is a folder
    /// holding a `.git`: git status, diff and ls-files -m open the
    /// repository it names (its configuration, what that includes,
    /// `HEAD`, refs) to compare the entry — a gitlink, or a file whose
    /// path became a repository's folder — before any setting that keeps
    /// git out of submodules applies.
    #[error(
        "the index names `{0}`, whose folder holds a `.git`, so git would open the repository it names, whose configuration is not checked"
    )]
    NestedRepository(String),
    /// A `.git` below the top of the work tree: git status and ls-files
    /// -o ask of each untracked folder whether it holds a repository, and
    /// look where its `.git` leads (`HEAD`, `objects`, `refs`), which may
    /// be outside the project.
    #[error(
        "`{0}` is a repository nested in the work tree, and git looks where it leads to tell whether it is one"
    )]
    Nested(String),
    /// A link in the work tree to a folder outside the project: git
    /// reads the `.gitattributes` of each folder of a path it shows, and
    /// for a path of the history beneath the link, reads through it.
    #[error(
        "`{0}` is a link to a folder outside the project, through which git would read attributes for the history's paths beneath it"
    )]
    LinkedOut(String),
    /// More entries in the work tree than are looked through.
    #[error("the work tree holds more than {0} entries, more than are looked through")]
    CrowdedWorkTree(usize),
    /// git status and diff can write the index, which runs this hook.
    #[error("the repository has a post-index-change hook, which git status and git diff can run")]
    Hook,
    /// A configuration key that runs, reads or writes what the analysis
    /// does not see.
    #[error("{file} {what} ({key})")]
    Key {
        /// Which configuration, as git names its origin.
        file: String,
        /// The key, as git lists it.
        key: String,
        /// What the key does.
        what: &'static str,
    },
}

/// A repository as git finds it from a stage's directory, every path real.
struct Repository {
    /// The top of the work tree.
    worktree: PathBuf,
    /// The git directory (a linked worktree's own).
    git_dir: PathBuf,
    /// Where the shared configuration, hooks and objects are.
    common_dir: PathBuf,
}

/// Checks the repository a git stage at `place` would use, with the
/// commands' environment `env`, the configuration git would read there,
/// the repository's own files and its index, and gives the top of its
/// work tree. Once a folder per line: later stages there get the same
/// answer.
pub(super) fn check(place: &Place, env: &[(OsString, OsString)]) -> Result<PathBuf, GitRefusal> {
    if let Some(known) = place.line.repos.borrow().get(&place.dir) {
        return known.clone();
    }
    let answer = check_afresh(place, env);
    place
        .line
        .repos
        .borrow_mut()
        .insert(place.dir.clone(), answer.clone());
    answer
}

/// [`check`], asking git.
fn check_afresh(place: &Place, env: &[(OsString, OsString)]) -> Result<PathBuf, GitRefusal> {
    let ws = place.ws;
    let root = real(ws, ws.root())?;
    // Nothing git could take in the project: no need to ask it.
    if !place
        .dir
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .any(|d| ws.lstat(&d.join(".git")).is_ok() || looks_like_git_dir(ws, d))
    {
        return Err(GitRefusal::NoRepository);
    }
    let git = Git::of(place, env)?;
    let repo = ask(&git, &place.dir)?;
    if !repo.worktree.starts_with(&root) {
        return Err(GitRefusal::Above(repo.worktree.display().to_string()));
    }
    for dir in place
        .dir
        .ancestors()
        .take_while(|d| *d != repo.worktree && d.starts_with(&repo.worktree))
    {
        let dotgit = dir.join(".git");
        if ws.lstat(&dotgit).is_ok() {
            return Err(GitRefusal::NotARepository(dotgit.display().to_string()));
        }
        if looks_like_git_dir(ws, dir) {
            return Err(GitRefusal::Bare(dir.display().to_string()));
        }
    }
    let dotgit = repo.worktree.join(".git");
    let in_project = repo.common_dir.starts_with(&root) && repo.git_dir.starts_with(&root);
    if !in_project && !is_linked_worktree(ws, &dotgit, &repo.git_dir, &repo.common_dir) {
        return Err(GitRefusal::Elsewhere(dotgit.display().to_string()));
    }
    if borrows(ws, &repo.common_dir) {
        return Err(GitRefusal::Borrowed(dotgit.display().to_string()));
    }
    if ws.lstat(&repo.worktree.join(".gitmodules")).is_ok()
        || ws.lstat(&repo.common_dir.join("modules")).is_ok()
    {
        return Err(GitRefusal::Submodules);
    }
    if ws
        .lstat(&repo.common_dir.join("hooks").join("post-index-change"))
        .is_ok()
    {
        return Err(GitRefusal::Hook);
    }
    git_config::check(&git, &place.dir)?;
    // A linked worktree's shared files are the person's own repository's.
    if in_project {
        for dir in [&repo.git_dir, &repo.common_dir] {
            metadata_is_plain(ws, dir)?;
        }
        reftables_are_plain(ws, &repo.common_dir)?;
    }
    index_is_plain(&git, &repo.worktree)?;
    let head_modules = ["rev-parse", "-q", "--verify", "HEAD:.gitmodules"];
    if git.run(&repo.worktree, &head_modules)?.0.success {
        return Err(GitRefusal::Submodules);
    }
    Ok(repo.worktree)
}

/// What a git stage reads of the work tree besides the files the index
/// names, which a look through the work tree must vouch for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reads {
    /// Untracked folders (`status`, `ls-files -o`): git asks of each
    /// whether it holds a repository, and looks where a `.git` there
    /// leads.
    pub untracked: bool,
    /// The `.gitattributes` of every folder of each path it shows, the
    /// history's too (`log`, `show`, `diff`, `blame`), opened through a
    /// linked folder (git refuses only a linked last part).
    pub attributes: bool,
}

/// What a look through a work tree found: the first entry of each kind
/// a stage may not meet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct WorkTree {
    /// A `.git` below the top, of any kind (file, folder or link).
    nested: Option<PathBuf>,
    /// A link to a folder outside the project.
    linked_out: Option<PathBuf>,
}

/// Refuses a stage that `reads` what the work tree at `worktree` (git's
/// top, a real path) holds and may not be met: for untracked folders, a
/// repository nested in it; for attributes, a link to a folder outside
/// the project. The work tree is looked through once a line, up to the
/// line's bound
/// ([`ANALYSER_WORK_TREE_ENTRIES_MAX`](super::ANALYSER_WORK_TREE_ENTRIES_MAX)
/// unless the analyser was given another).
pub(super) fn check_work_tree(
    place: &Place,
    worktree: &Path,
    reads: Reads,
) -> Result<(), GitRefusal> {
    if !reads.untracked && !reads.attributes {
        return Ok(());
    }
    let known = place.line.work_trees.borrow().get(worktree).cloned();
    let found = match known {
        Some(found) => found,
        None => {
            let found = look_through(place.ws, worktree, place.line.work_tree_entries);
            place
                .line
                .work_trees
                .borrow_mut()
                .insert(worktree.to_path_buf(), found.clone());
            found
        }
    }?;
    // From the top, as git names paths.
    let shown = |path: &Path| {
        path.strip_prefix(worktree)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    match (&found.nested, &found.linked_out) {
        (Some(dotgit), _) if reads.untracked => Err(GitRefusal::Nested(shown(dotgit))),
        (_, Some(link)) if reads.attributes => Err(GitRefusal::LinkedOut(shown(link))),
        _ => Ok(()),
    }
}

/// Looks through the work tree at `worktree` for what [`WorkTree`]
/// holds, never into the top's `.git` (looked through apart) or through
/// a link. A `.git` below the top is looked into like any folder, and a
/// `.git` that is a link judged like any link: a history can hold paths
/// beneath one (`d/.git/lnk/x`, which git never adds but reads), whose
/// `.gitattributes` git then opens there.
fn look_through(ws: &dyn Workspace, worktree: &Path, max: usize) -> Result<WorkTree, GitRefusal> {
    let root = real(ws, ws.root())?;
    let leads_out = |link: &Path| {
        ws.stat(link).is_ok_and(|meta| meta.is_dir())
            && ws
                .real_path(link)
                .is_ok_and(|real| !real.starts_with(&root))
    };
    let mut found = WorkTree::default();
    let judge = &mut |folder: &Path, name: &OsStr, kind| {
        if name == ".git" && folder == worktree {
            return ScanStep::Pass;
        }
        if name == ".git" && found.nested.is_none() {
            found.nested = Some(folder.join(name));
        }
        if kind == FileKind::Dir {
            return ScanStep::Enter;
        } else if kind == FileKind::Symlink
            && found.linked_out.is_none()
            && leads_out(&folder.join(name))
        {
            found.linked_out = Some(folder.join(name));
        }
        if found.nested.is_some() && found.linked_out.is_some() {
            ScanStep::Found
        } else {
            ScanStep::Pass
        }
    };
    match ws.scan(worktree, max, judge) {
        Ok(_) => Ok(found),
        Err(ScanError::TooMany(max)) => Err(GitRefusal::CrowdedWorkTree(max)),
        Err(ScanError::Read(e)) => Err(GitRefusal::Unasked(format!("{}: {e}", worktree.display()))),
    }
}

/// Refuses a reftable list naming a table by a path: git joins each name
/// to the `reftable` folder unchecked, and read another repository's
/// branches through `../`.
fn reftables_are_plain(ws: &dyn Workspace, common_dir: &Path) -> Result<(), GitRefusal> {
    let list = common_dir.join("reftable").join("tables.list");
    let text = ws
        .read_small(&list, REFTABLE_LIST_MAX_BYTES)
        .map_err(|e| GitRefusal::Unasked(format!("{}: {e}", list.display())))?;
    match text
        .as_deref()
        .unwrap_or_default()
        .lines()
        .find(|name| name.is_empty() || name.starts_with('.') || name.contains('/'))
    {
        Some(name) => Err(GitRefusal::Special(format!(
            "{} names {name:?}",
            list.display()
        ))),
        None => Ok(()),
    }
}

/// Refuses a repository directory holding a link, a FIFO, a socket or a
/// device: git never makes one there, and it follows them (a linked
/// `BISECT_START` printed a file of anywhere into `git status`).
fn metadata_is_plain(ws: &dyn Workspace, dir: &Path) -> Result<(), GitRefusal> {
    let special = &mut |_: &Path, _: &OsStr, kind| match kind {
        FileKind::Dir => ScanStep::Enter,
        FileKind::File => ScanStep::Pass,
        FileKind::Symlink | FileKind::Other => ScanStep::Found,
    };
    match ws.scan(dir, ANALYSER_GIT_DIR_ENTRIES_MAX, special) {
        Ok(None) => Ok(()),
        Ok(Some(found)) => Err(GitRefusal::Special(found.display().to_string())),
        Err(ScanError::TooMany(max)) => Err(GitRefusal::Crowded(max)),
        Err(ScanError::Read(e)) => Err(GitRefusal::Unasked(format!("{}: {e}", dir.display()))),
    }
}

/// Refuses an index naming a path git would never add (`../x`, `/etc/x`,
/// a `.git` part: git checks names only when it adds them, and `git diff`
/// reads what the index names), `.gitmodules` (submodules, whose
/// configuration is elsewhere), or a gitlink whose folder holds a `.git`
/// (a repository git opens). The entries are read as git lists them, with
/// their modes, piece by piece, never held whole.
fn index_is_plain(git: &Git<'_>, worktree: &Path) -> Result<(), GitRefusal> {
    let mut names = IndexEntries {
        ws: git.workspace(),
        worktree,
        partial: Vec::new(),
        plain_dirs: HashSet::new(),
        refused: None,
    };
    let answer = git.stream(worktree, &["ls-files", "--stage", "-z"], &mut |piece| {
        names.take(piece)
    });
    if let Some(refused) = names.refused {
        return Err(refused);
    }
    let answer = answer.map_err(|e| GitRefusal::Unasked(e.to_string()))?;
    if !answer.success {
        return Err(GitRefusal::Refused(answer.first_error_line()));
    }
    names.finish()
}

/// The index's entries as `git ls-files --stage -z` gives them (`MODE
/// OID STAGE<TAB>NAME`), checked one by one.
struct IndexEntries<'a> {
    ws: &'a dyn Workspace,
    worktree: &'a Path,
    /// The start of an entry cut by a piece's end.
    partial: Vec<u8>,
    /// Leading folders of names already seen not to be links.
    plain_dirs: HashSet<Vec<u8>>,
    refused: Option<GitRefusal>,
}

impl IndexEntries<'_> {
    /// Checks the entries `piece` ends; false once one is refused.
    fn take(&mut self, piece: &[u8]) -> bool {
        let mut rest = piece;
        while let Some(end) = rest.iter().position(|&b| b == 0) {
            self.partial.extend_from_slice(&rest[..end]);
            let entry = std::mem::take(&mut self.partial);
            if let Some(refused) = self.refuse(&entry) {
                self.refused = Some(refused);
                return false;
            }
            rest = &rest[end + 1..];
        }
        if self.partial.len() + rest.len() > INDEX_NAME_MAX_BYTES {
            self.refused = Some(GitRefusal::IndexName(
                String::from_utf8_lossy(&self.partial).into_owned(),
            ));
            return false;
        }
        self.partial.extend_from_slice(rest);
        true
    }

    /// Why one entry is refused, if it is.
    fn refuse(&mut self, entry: &[u8]) -> Option<GitRefusal> {
        let Some(name) = entry_name(entry) else {
            return Some(GitRefusal::Unusual(
                String::from_utf8_lossy(entry).into_owned(),
            ));
        };
        refuse_index_name(name)
            .or_else(|| self.through_a_link(name))
            .or_else(|| self.nested_repository(name))
    }

    /// Refuses an entry, whatever its mode, whose path in the work tree
    /// holds a `.git` of any kind (file, folder or link): git opens the
    /// repository it names to compare the entry — a gitlink's
    /// (`ce_compare_gitlink`), and a file's whose path is now a folder
    /// (`check_removed`, `index_path` resolve it as a gitlink).
    fn nested_repository(&self, name: &[u8]) -> Option<GitRefusal> {
        let dotgit = self.worktree.join(OsStr::from_bytes(name)).join(".git");
        self.ws
            .lstat(&dotgit)
            .is_ok()
            .then(|| GitRefusal::NestedRepository(String::from_utf8_lossy(name).into_owned()))
    }

    /// Refuses a name beneath a folder of the work tree that is a link:
    /// `git ls-files -m` and `--eol` read the file through it, out of the
    /// work tree. Each folder is looked at once.
    fn through_a_link(&mut self, name: &[u8]) -> Option<GitRefusal> {
        let folders = name
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .map(|(at, _)| &name[..at]);
        for folder in folders {
            if self.plain_dirs.contains(folder) {
                continue;
            }
            let path = self.worktree.join(OsStr::from_bytes(folder));
            if self
                .ws
                .lstat(&path)
                .is_ok_and(|meta| meta.kind == FileKind::Symlink)
            {
                return Some(GitRefusal::IndexName(
                    String::from_utf8_lossy(name).into_owned(),
                ));
            }
            self.plain_dirs.insert(folder.to_vec());
        }
        None
    }

    /// Whether the listing ended on a name's end.
    fn finish(self) -> Result<(), GitRefusal> {
        if self.partial.is_empty() {
            Ok(())
        } else {
            Err(GitRefusal::Unusual(
                String::from_utf8_lossy(&self.partial).into_owned(),
            ))
        }
    }
}

/// The name of an entry as `ls-files --stage -z` gives it (`MODE OID
/// STAGE<TAB>NAME`); `None` when it has no tab.
fn entry_name(entry: &[u8]) -> Option<&[u8]> {
    let tab = entry.iter().position(|&b| b == b'\t')?;
    Some(&entry[tab + 1..])
}

/// Why an index name is refused, if it is: one git's own check of a
/// path it adds (`verify_path`) would reject, or `.gitmodules`.
fn refuse_index_name(name: &[u8]) -> Option<GitRefusal> {
    let shown = || String::from_utf8_lossy(name).into_owned();
    if name == b".gitmodules" {
        return Some(GitRefusal::Submodules);
    }
    let odd = name.first() == Some(&b'/')
        || name.split(|&b| b == b'/').any(|part| {
            part.is_empty() || part == b"." || part == b".." || part.eq_ignore_ascii_case(b".git")
        });
    odd.then(|| GitRefusal::IndexName(shown()))
}

/// The top of the work tree git finds from `dir` (a resolved directory),
/// with the commands' environment `env`: what the project's instructions
/// are read beneath (ADR 0023). `None` when there is none, or git cannot
/// be asked.
pub fn work_tree(ws: &dyn Workspace, dir: &Path, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    // Without a `.git` above, git finds no work tree: no need to ask it.
    if !dir.ancestors().any(|d| ws.lstat(&d.join(".git")).is_ok()) {
        return None;
    }
    let git = Git::find(ws, dir, env, Instant::now() + PROBE_TIMEOUT)?;
    ask(&git, dir).ok().map(|repo| repo.worktree)
}

/// Asks git in `dir` for the work tree, the git directory and the shared
/// one.
fn ask(git: &Git<'_>, dir: &Path) -> Result<Repository, GitRefusal> {
    let answer = git.answer(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--is-bare-repository",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
        ],
    )?;
    let unusual = || GitRefusal::Unusual(String::from_utf8_lossy(&answer).into_owned());
    let text = answer.strip_suffix(b"\n").ok_or_else(unusual)?;
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let [bare, worktree, git_dir, common_dir] = lines.as_slice() else {
        return Err(unusual());
    };
    if *bare != b"false" {
        return Err(GitRefusal::Bare(dir.display().to_string()));
    }
    let path = |bytes: &[u8]| {
        let path = Path::new(OsStr::from_bytes(bytes));
        if !path.is_absolute() {
            return Err(unusual());
        }
        real(git.workspace(), path)
    };
    Ok(Repository {
        worktree: path(worktree)?,
        git_dir: path(git_dir)?,
        common_dir: path(common_dir)?,
    })
}

/// `path`'s real path, or why it has none.
fn real(ws: &dyn Workspace, path: &Path) -> Result<PathBuf, GitRefusal> {
    ws.real_path(path)
        .map_err(|e| GitRefusal::Unasked(format!("{}: {e}", path.display())))
}

/// Whether the repository at `common_dir` takes objects or refs from
/// elsewhere: an alternates file, or `objects`, `refs` or `packed-refs`
/// leading out of it (a link further in is found by
/// [`metadata_is_plain`], where the repository is the project's).
fn borrows(ws: &dyn Workspace, common_dir: &Path) -> bool {
    let leads_out = |name: &str| {
        ws.real_path(&common_dir.join(name))
            .is_ok_and(|real| !real.starts_with(common_dir))
    };
    ws.lstat(&common_dir.join("objects/info/alternates"))
        .is_ok()
        || ["objects", "refs", "packed-refs"]
            .into_iter()
            .any(leads_out)
}

/// Whether `git_dir` is a linked worktree of `common_dir` made for
/// `dotgit`, as `git worktree add` leaves one: `<common>/worktrees/<name>`,
/// whose `gitdir` file names `dotgit` back (absolute, or relative to it),
/// its line end stripped as git strips it and nothing more.
fn is_linked_worktree(
    ws: &dyn Workspace,
    dotgit: &Path,
    git_dir: &Path,
    common_dir: &Path,
) -> bool {
    let real = |path: &Path| ws.real_path(path).ok();
    git_dir.parent() == Some(common_dir.join("worktrees").as_path())
        && ws
            .read_small(&git_dir.join("gitdir"), BACK_LINK_MAX_BYTES)
            .ok()
            .flatten()
            .is_some_and(|back| {
                let back = real(&git_dir.join(back.trim_end_matches(['\n', '\r'])));
                back.is_some() && back == real(dotgit)
            })
}
