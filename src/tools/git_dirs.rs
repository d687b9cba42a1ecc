//! Which paths of the project are a repository's own files, which the
//! approval policy always asks about before a write (ADR 0014) and the
//! read-only analyser will not let git be pointed at unchecked (ADR 0025).
//! Policy, decided on what any [`Workspace`] can look at.

use std::ffi::OsStr;
use std::path::Path;

use super::Workspace;

/// Whether `real`, a path the workspace resolved, lies in (or is) a
/// repository's own files in the project: a `.git` (ASCII case ignored,
/// erring strict), or a directory that looks like a repository's under
/// another name ([`looks_like_git_dir`], as `git init --separate-git-dir`
/// or a bare `x.git` leave one). Judged as the folder will be once `real`
/// is written: the write that completes a repository's directory (its
/// `HEAD` last) counts too.
pub fn in_git(ws: &dyn Workspace, real: &Path) -> bool {
    let Ok(root) = ws.real_path(ws.root()) else {
        return false;
    };
    let Ok(rel) = real.strip_prefix(&root) else {
        return false;
    };
    rel.components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        || real
            .ancestors()
            .take_while(|dir| dir.starts_with(&root))
            .any(|dir| {
                let written = real
                    .strip_prefix(dir)
                    .ok()
                    .and_then(|rest| rest.components().next())
                    .map(|part| part.as_os_str());
                git_dir_with(ws, dir, written)
            })
}

/// Whether git could take `dir` itself as a repository's directory (as it
/// takes a bare one): a `HEAD` beside `objects`, `refs` or `commondir`.
/// Errs towards yes: what looks like one is treated as one.
pub(crate) fn looks_like_git_dir(ws: &dyn Workspace, dir: &Path) -> bool {
    git_dir_with(ws, dir, None)
}

/// [`looks_like_git_dir`], with the entry `written` of `dir` counted as
/// there.
fn git_dir_with(ws: &dyn Workspace, dir: &Path, written: Option<&OsStr>) -> bool {
    let exists =
        |name: &str| written == Some(OsStr::new(name)) || ws.lstat(&dir.join(name)).is_ok();
    exists("HEAD") && (exists("objects") || exists("refs") || exists("commondir"))
}
