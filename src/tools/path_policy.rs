//! Confinement of every path a tool touches to the working directory.
//! See `docs/decisions/0010-path-policy.md` for the residual risks.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Most symbolic links one resolution follows before it gives up, as the
/// kernel's `ELOOP` does (Linux `MAXSYMLINKS` is 40). ADR 0010.
const PATH_MAX_LINKS: usize = 40;

/// Why the policy refused a path. The text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path leaves the root lexically, through a symbolic link, or
    /// means the home directory (`~`), which is never inside.
    #[error("path escapes the working directory: {0}")]
    Escapes(String),
    /// The path is the empty string.
    #[error("path is empty; use \".\" for the working directory")]
    Empty,
    /// The path holds a NUL byte, which no file name can contain.
    #[error("path contains a NUL byte: {0:?}")]
    Nul(String),
    /// Following the path's links did not end (a loop, or a chain longer
    /// than [`PATH_MAX_LINKS`]).
    #[error("too many levels of symbolic links: {0}")]
    LinkLoop(String),
    /// A `..` follows a name that does not exist or is not a directory, so
    /// the path names nothing (the kernel fails it with `ENOENT` /
    /// `ENOTDIR`); it is never climbed lexically.
    #[error(
        "path does not resolve: a \"..\" follows a name that does not exist or is not a directory: {0}"
    )]
    Unresolvable(String),
    /// The root itself cannot be resolved (it was removed or is unreadable).
    #[error("the working directory cannot be resolved: {0}")]
    Root(String),
}

/// Resolves `path` (relative to `root`, or absolute inside it) to the real
/// path it names, every symbolic link followed, and refuses it unless that
/// stays inside the real path of `root`. The model's own `..` is read
/// lexically; the rest is walked as the kernel walks it, `lstat` at every
/// step: a name that does not exist yet is kept (a write creates it), but a
/// `..` after such a name, or after a file, names nothing and is refused.
/// Tools then open the returned path beneath the root (`tools::beneath`),
/// so a link that appears after this check is not followed out either.
pub fn resolve(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.contains('\0') {
        return Err(PathError::Nul(path.to_owned()));
    }
    if names_a_home(path) {
        return Err(PathError::Escapes(path.to_owned()));
    }
    let (root_real, relative) = lexical(root, path)?;
    let resolved = walk(&root_real, &relative, path)?;
    if resolved.starts_with(&root_real) {
        Ok(resolved)
    } else {
        Err(PathError::Escapes(path.to_owned()))
    }
}

/// Where `real`, what [`resolve`] returned for `path`, lies relative to the
/// root, when that is not where `path` says on its face (a link led
/// elsewhere): what a preview shows as "given → resolved".
pub(crate) fn redirected(root: &Path, path: &str, real: &Path) -> Option<PathBuf> {
    let (root_real, face) = lexical(root, path).ok()?;
    let landed = real.strip_prefix(&root_real).ok()?;
    (landed != face).then(|| landed.to_path_buf())
}

/// Step 1 and 2 (ADR 0007 §3): the real root, and `path` relative to it by
/// lexical normalisation, then a component-wise prefix check, so
/// `/x/root-evil` is not inside `/x/root`.
fn lexical(root: &Path, path: &str) -> Result<(PathBuf, PathBuf), PathError> {
    let root_error = |e: io::Error| PathError::Root(format!("{}: {e}", root.display()));
    let root_real = root.canonicalize().map_err(root_error)?;
    let root_lexical = normalize(&std::path::absolute(root).map_err(root_error)?);
    let lexical = normalize(&root_lexical.join(path));
    let relative = lexical
        .strip_prefix(&root_lexical)
        .or_else(|_| lexical.strip_prefix(&root_real))
        .map_err(|_| PathError::Escapes(path.to_owned()))?
        .to_path_buf();
    Ok((root_real, relative))
}

/// Whether `path` means a home directory: `~` alone, or a first component
/// starting with `~` followed by more (`~/x`, `~user/x`). Taken literally it
/// would quietly create a directory named `~` in the project. A plain name
/// such as `~backup.txt` is an ordinary file.
fn names_a_home(path: &str) -> bool {
    path == "~" || (path.starts_with('~') && path.contains('/'))
}

/// What the walk stands on: the kernel goes on from a directory only.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// An existing directory: names and `..` go on from here.
    Directory,
    /// A file or other non-directory, or a name that does not exist:
    /// further names are kept (the operation fails or creates them), but a
    /// `..` does not resolve.
    Dead,
}

/// Walks `relative` from `root_real` as the kernel would, following each
/// link (its target's parts walked in its place), and returns the real
/// path reached.
fn walk(root_real: &Path, relative: &Path, path: &str) -> Result<PathBuf, PathError> {
    let mut resolved = root_real.to_path_buf();
    let mut standing = Standing::Directory;
    let mut pending: VecDeque<OsString> = relative
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        match Path::new(&part).components().next() {
            None | Some(Component::CurDir) => continue,
            Some(Component::ParentDir) if standing == Standing::Dead => {
                return Err(PathError::Unresolvable(path.to_owned()));
            }
            Some(Component::ParentDir) => {
                resolved.pop();
                continue;
            }
            Some(Component::RootDir) => {
                resolved = PathBuf::from("/");
                standing = Standing::Directory;
                continue;
            }
            Some(Component::Prefix(_)) | Some(Component::Normal(_)) => {}
        }
        let next = resolved.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                // A link under /proc or /dev (`/proc/self/cwd`, `/dev/fd/3`)
                // means something else to each process: the command that
                // opens the path later is not this one.
                if !resolved.starts_with(root_real)
                    && (resolved.starts_with("/proc") || resolved.starts_with("/dev"))
                {
                    return Err(PathError::Escapes(path.to_owned()));
                }
                links += 1;
                if links > PATH_MAX_LINKS {
                    return Err(PathError::LinkLoop(path.to_owned()));
                }
                let target =
                    std::fs::read_link(&next).map_err(|_| PathError::Escapes(path.to_owned()))?;
                // The target's parts go first; `resolved` stays the link's
                // directory, which is what a relative target is relative to.
                for comp in target.components().rev() {
                    pending.push_front(comp.as_os_str().to_owned());
                }
            }
            Ok(meta) => {
                resolved = next;
                standing = if meta.is_dir() {
                    Standing::Directory
                } else {
                    Standing::Dead
                };
            }
            Err(e) if is_absent(&e) => {
                resolved = next;
                standing = Standing::Dead;
            }
            Err(_) => return Err(PathError::Escapes(path.to_owned())),
        }
    }
    Ok(resolved)
}

/// Whether an lstat error means "nothing here" (the rest is created later)
/// rather than "cannot look" (which the policy treats as a refusal).
fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Lexical normalisation: `.` dropped, `..` pops (never above `/`), no
/// filesystem access.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}
