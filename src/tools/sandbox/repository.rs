//! The repository metadata a sandboxed command may read but never write:
//! its hooks and configuration would later run outside the sandbox, in
//! the person's own git. Found by hand, at every spawn and within its
//! time budget, the way git finds it: the project's `.git` (a folder, or
//! a file whose `gitdir:` line names the folder, relative to the file's
//! own), a git folder's `commondir`, `GIT_DIR` and `GIT_COMMON_DIR` in
//! the command's environment, and the project itself when it is a bare
//! repository (ADR 0043).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::tools::Workspace;
use crate::tools::git_dirs::looks_like_git_dir;

/// The most of a `.git` file or a `commondir` read (4 KiB: one path).
const LINK_FILE_MAX_BYTES: u64 = 4096;

/// The repository's own files as the sandbox sees them.
#[derive(Debug, Default)]
pub(super) struct Metadata {
    /// In the project: kept read-only by a bind mount.
    pub(super) inside: Vec<PathBuf>,
    /// Outside it, the git folder and shared folder of a linked worktree
    /// (`git worktree add`), each checked to name the project's `.git`
    /// back: git reads them, nothing writes them. Any other git folder
    /// outside the project is left out, so a crafted `.git` file cannot
    /// widen what a read-only command reads.
    pub(super) linked: Vec<PathBuf>,
    /// The project's `.git` is a link: a bind mount would cover where it
    /// points, and the link itself could be pointed elsewhere.
    pub(super) dot_git_is_link: bool,
}

/// The metadata of the repository a command in `dir` (beneath `root`,
/// both real paths) would use, with `env` its environment.
pub(super) fn find(
    ws: &dyn Workspace,
    root: &Path,
    dir: &Path,
    env: &[(OsString, OsString)],
) -> Metadata {
    let mut metadata = Metadata::default();
    let mut found = Vec::new();
    let dot_git = root.join(".git");
    let mut linked_git_dir = None;
    match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.file_type().is_symlink() => metadata.dot_git_is_link = true,
        Ok(meta) if meta.is_file() => {
            found.push(dot_git.clone());
            linked_git_dir = link_file(ws, &dot_git, "gitdir: ");
            found.extend(linked_git_dir.clone());
        }
        Ok(_) => found.push(dot_git.clone()),
        Err(_) => {}
    }
    if looks_like_git_dir(ws, root) {
        found.push(root.to_path_buf());
    }
    for name in ["GIT_DIR", "GIT_COMMON_DIR"] {
        if let Some((_, value)) = env.iter().rev().find(|(n, _)| n == name) {
            found.push(dir.join(value));
        }
    }
    // Each git folder's shared one (a linked worktree's main repository).
    let common: Vec<PathBuf> = found
        .iter()
        .filter_map(|git_dir| link_file(ws, &git_dir.join("commondir"), ""))
        .collect();
    found.extend(common);
    for path in found {
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if real.starts_with(root) && !metadata.inside.contains(&real) {
            metadata.inside.push(real);
        }
    }
    if let Some(git_dir) = linked_git_dir.and_then(|g| g.canonicalize().ok())
        && !git_dir.starts_with(root)
        && let Some(common) = linked_worktree_common(ws, &dot_git, &git_dir)
    {
        metadata.linked.push(git_dir);
        if !common.starts_with(root) {
            metadata.linked.push(common);
        }
    }
    metadata
}

/// The shared folder of `git_dir` when it is a linked worktree's made for
/// `dot_git`, as `git worktree add` leaves one: `<common>/worktrees/<name>`,
/// whose `gitdir` file names `dot_git` back.
fn linked_worktree_common(ws: &dyn Workspace, dot_git: &Path, git_dir: &Path) -> Option<PathBuf> {
    let common = link_file(ws, &git_dir.join("commondir"), "")?
        .canonicalize()
        .ok()?;
    if git_dir.parent() != Some(common.join("worktrees").as_path()) {
        return None;
    }
    let back = link_file(ws, &git_dir.join("gitdir"), "")?.canonicalize().ok()?;
    (back == dot_git.canonicalize().ok()?).then_some(common)
}

/// The path a one-line file names after `prefix`, relative to the file's
/// folder, its line end stripped as git strips it; `None` when there is
/// no such regular file (never blocking on a FIFO) or line.
fn link_file(ws: &dyn Workspace, file: &Path, prefix: &str) -> Option<PathBuf> {
    let text = ws.read_small(file, LINK_FILE_MAX_BYTES).ok()??;
    let named = text
        .trim_end_matches(['\n', '\r'])
        .strip_prefix(prefix)?;
    (!named.is_empty()).then(|| file.parent().unwrap_or(file).join(named))
}
