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
//! before each fork ([`Confinement::prepare`]); the levels are
//! [`Sandbox`](super::Sandbox)'s.

mod child;
mod filter;
mod grants;
mod repository;
mod settings;
mod support;

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
use grants::{Grants, Listed};

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

/// A sandboxed command's entry, made before the fork, and its hold on the
/// temporary folder it is given.
pub(crate) struct Prepared {
    temp: CallTemp,
    entry: Entry,
}

impl Prepared {
    /// Makes `cmd`'s child enter the level after the hooks registered
    /// before (its session, its directory), and hands back the command's
    /// hold on its temporary folder, for the caller to keep until the
    /// command's processes are gone (dropping it empties the folder).
    pub(crate) fn install(self, cmd: &mut std::process::Command) -> CallTemp {
        self.entry.install(cmd);
        self.temp
    }
}

/// A command's hold on its level's temporary folder: when the last
/// command holding it ends, everything in it is removed, so each command
/// finds it empty (its processes are gone by then: the caller drops this
/// after them).
pub(crate) struct CallTemp {
    shared: Arc<SharedTemp>,
}

impl Drop for CallTemp {
    fn drop(&mut self) {
        let mut users = self.shared.users.lock().unwrap_or_else(|e| e.into_inner());
        *users = users.saturating_sub(1);
        if *users == 0 {
            empty(self.shared.dir.path());
        }
    }
}

/// The folder a level's rules grant for temporary files, `TMPDIR` to
/// every command at that level (mode 0700: this user's only), and how
/// many commands hold it now. Making and removing a folder per command
/// costs milliseconds on a busy disk; looking into an empty one, a few
/// microseconds.
#[derive(Debug)]
struct SharedTemp {
    dir: TempDir,
    users: Mutex<usize>,
}

impl SharedTemp {
    /// Counts one more command holding it.
    fn hold(self: &Arc<Self>) -> CallTemp {
        *self.users.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        CallTemp {
            shared: Arc::clone(self),
        }
    }
}

/// Removes everything in `dir` (links themselves, never what they point
/// to); what cannot be removed stays.
fn empty(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
    }
}

/// The sandbox of one workspace: what its commands may not read, and each
/// level's rules as last made, reused while what they were made from is
/// unchanged. Making them lists folders and opens a few hundred paths
/// (about a millisecond); reusing them costs a few `stat`s.
#[derive(Debug)]
pub(crate) struct Confinement {
    settings: SandboxSettings,
    built: Mutex<Vec<Built>>,
}

/// One level's rules, and what they were made from.
#[derive(Debug)]
struct Built {
    level: Sandbox,
    /// The environment's values the rules depend on, the project root's
    /// inode, a linked worktree's git folders.
    key: Vec<OsString>,
    /// The folders listed to take denied paths out.
    listed: Vec<Listed>,
    /// The Landlock ruleset's descriptor, shared by every child entering
    /// it (`None` without Landlock).
    ruleset: Option<Arc<OwnedFd>>,
    /// The folder the rules grant for temporary files.
    temp: Arc<SharedTemp>,
}

/// The variables whose values a level's rules are made from.
const KEY_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "RUSTUP_HOME",
];

impl Confinement {
    /// The sandbox keeping commands from what `settings` denies.
    pub(crate) fn new(settings: SandboxSettings) -> Confinement {
        Confinement {
            settings,
            built: Mutex::new(Vec::new()),
        }
    }

    /// What a command started in `dir` (a real path beneath the
    /// workspace's `root`) with `env` needs to enter `level`: `None` for
    /// [`Sandbox::Unconfined`]. Points `TMPDIR` in `env` at the level's
    /// temporary folder, emptied after the command.
    pub(crate) fn prepare(
        &self,
        level: Sandbox,
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
            support
                .workspace_write()
                .map_err(SandboxError::Unavailable)?;
        }
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let metadata = repository::find(ws, &root, dir, env);
        let mut key: Vec<OsString> = KEY_VARS
            .iter()
            .map(|name| {
                env.iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        let root_id = nix::sys::stat::stat(&root).map_or(0, |st| st.st_ino);
        key.push(root_id.to_string().into());
        key.extend(metadata.linked.iter().map(|p| p.clone().into_os_string()));
        let (ruleset, temp) = {
            let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
            built.retain(|b| {
                b.level != level || (b.key == key && b.listed.iter().all(Listed::unchanged))
            });
            let current = match built.iter().position(|b| b.level == level) {
                Some(at) => &built[at],
                None => {
                    built.push(self.build(level, &root, env, &metadata, key, support)?);
                    &built[built.len() - 1]
                }
            };
            (current.ruleset.clone(), current.temp.hold())
        };
        env.retain(|(name, _)| name != "TMPDIR");
        env.push(("TMPDIR".into(), temp.shared.dir.path().into()));
        let namespace = match level {
            Sandbox::WorkspaceWrite => {
                if metadata.dot_git_is_link {
                    return Err(SandboxError::GitLink);
                }
                let read_only = metadata
                    .inside
                    .iter()
                    .map(|path| Ok((c_path(path)?, mount_flags(path))))
                    .collect::<Result<Vec<_>, SandboxError>>()?;
                Some(Namespace::for_this_user(read_only, Some(c_path(dir)?)))
            }
            _ => None,
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

    /// Makes `level`'s rules and the folder they grant for temporary
    /// files.
    fn build(
        &self,
        level: Sandbox,
        root: &Path,
        env: &[(OsString, OsString)],
        metadata: &repository::Metadata,
        key: Vec<OsString>,
        support: &Support,
    ) -> Result<Built, SandboxError> {
        let temp = tempfile::Builder::new()
            .prefix("dashfloat-sandbox-")
            .tempdir()
            .map_err(SandboxError::TempDir)?;
        let grants = match level {
            Sandbox::WorkspaceWrite => Grants::workspace_write(root, temp.path()),
            _ => Grants::read_only(root, temp.path(), env, &metadata.linked),
        };
        let (ruleset, listed) = match support.landlock {
            Landlock::Available(_) => grants.ruleset(&self.settings.denied_real())?,
            Landlock::NotEnabled | Landlock::NotImplemented => (None, Vec::new()),
        };
        Ok(Built {
            level,
            key,
            listed,
            ruleset: ruleset.map(Arc::new),
            temp: Arc::new(SharedTemp {
                dir: temp,
                users: Mutex::new(0),
            }),
        })
    }
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
