//! The kernel sandbox a command runs in when nobody approved it (issue
//! 39, `docs/decisions/0043-kernel-sandbox.md`), entered in the child
//! between fork and exec, in-process: Landlock for files (and TCP ports,
//! signals and abstract sockets where its ABI has them), seccomp for what
//! Landlock cannot refuse (sockets, namespaces, mounts, `io_uring`), a
//! user and mount namespace to keep the repository's metadata read-only
//! in workspace-write, and every capability dropped.
//!
//! [`support`] says once what this kernel enforces, and
//! [`Support::notice`] the line to show at start when something is not.
//! [`LocalWorkspace`](super::LocalWorkspace) prepares a level's entry
//! before each fork ([`prepare`]); the levels are
//! [`Sandbox`](super::Sandbox)'s.

mod child;
mod filter;
mod grants;
mod repository;
mod settings;
mod support;

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::mount::MsFlags;
use nix::sys::statvfs::FsFlags;
use tempfile::TempDir;

pub use filter::FilterError;
pub use settings::{HOME_CREDENTIALS, SYSTEM_SECRETS, SandboxSettings};
pub use support::{
    Landlock, SIGNAL_SCOPE_MIN_ABI, Support, WORKSPACE_WRITE_MIN_ABI, probe, support,
};

use super::{Sandbox, Workspace};
use child::{Entry, Namespace};
use grants::Grants;

/// Why a command could not be given its sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce the level (workspace-write); says what
    /// it lacks.
    #[error("{0}")]
    Unavailable(String),
    /// The command's temporary folder could not be made.
    #[error("cannot make the command's temporary folder: {0}")]
    TempDir(io::Error),
    /// The Landlock rules could not be made.
    #[error("cannot make the sandbox's Landlock rules: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The seccomp filters could not be built.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The project's `.git` is a link, which a bind mount cannot keep
    /// from being changed.
    #[error(
        "the project's .git is a symbolic link, which the workspace-write sandbox cannot keep read-only"
    )]
    GitLink,
    /// A path holds a NUL byte and cannot be handed to the kernel.
    #[error("the sandbox cannot name {0}: it holds a NUL byte")]
    Nul(PathBuf),
}

/// A sandboxed command's entry, made before the fork, and the temporary
/// folder it is given.
pub(crate) struct Prepared {
    temp: TempDir,
    entry: Entry,
}

impl Prepared {
    /// Makes `cmd`'s child enter the level after the hooks registered
    /// before (its session, its directory), and hands back the temporary
    /// folder, for the caller to keep until the command's processes are
    /// gone (dropping it removes it with whatever the command left).
    pub(crate) fn install(self, cmd: &mut std::process::Command) -> TempDir {
        self.entry.install(cmd);
        self.temp
    }
}

/// What a command started in `dir` (a real path beneath the workspace's
/// real `root`) with `env` needs to enter `level`: `None` for
/// [`Sandbox::Unconfined`]. Makes the command's temporary folder and
/// points `TMPDIR` in `env` at it.
pub(crate) fn prepare(
    level: Sandbox,
    settings: &SandboxSettings,
    ws: &dyn Workspace,
    root: &Path,
    dir: &Path,
    env: &mut Vec<(OsString, OsString)>,
) -> Result<Option<Prepared>, SandboxError> {
    if level == Sandbox::Unconfined {
        return Ok(None);
    }
    let support = support();
    if level == Sandbox::WorkspaceWrite {
        support.workspace_write().map_err(SandboxError::Unavailable)?;
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let temp = tempfile::Builder::new()
        .prefix("dashfloat-sandbox-")
        .tempdir()
        .map_err(SandboxError::TempDir)?;
    env.retain(|(name, _)| name != "TMPDIR");
    env.push(("TMPDIR".into(), temp.path().into()));
    let metadata = repository::find(ws, &root, dir, env);
    let (grants, namespace) = match level {
        Sandbox::WorkspaceWrite => {
            if metadata.dot_git_is_link {
                return Err(SandboxError::GitLink);
            }
            let read_only = metadata
                .inside
                .iter()
                .map(|path| Ok((c_path(path)?, mount_flags(path))))
                .collect::<Result<Vec<_>, SandboxError>>()?;
            let namespace = Namespace::for_this_user(read_only, Some(c_path(dir)?));
            (Grants::workspace_write(&root, temp.path()), Some(namespace))
        }
        _ => (
            Grants::read_only(&root, temp.path(), env, &metadata.linked),
            None,
        ),
    };
    let ruleset = match support.landlock {
        Landlock::Available(_) => grants.ruleset(&settings.denied_real())?,
        Landlock::NotEnabled | Landlock::NotImplemented => None,
    };
    let filters = match support.seccomp {
        Ok(()) => filter::programs()?,
        Err(_) => &[],
    };
    Ok(Some(Prepared {
        temp,
        entry: Entry {
            ruleset,
            filters,
            namespace,
        },
    }))
}

/// `path` as the kernel takes it.
fn c_path(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::Nul(path.to_path_buf()))
}

/// The flags of the mount `path` lies on that a read-only remount in a
/// user namespace must keep (the kernel refuses to clear them there).
fn mount_flags(path: &Path) -> MsFlags {
    let Ok(stat) = nix::sys::statvfs::statvfs(path) else {
        return MsFlags::empty();
    };
    let flags = stat.flags();
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(st, _)| flags.contains(*st))
    .fold(MsFlags::empty(), |acc, (_, ms)| acc | ms)
}
