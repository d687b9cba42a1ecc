//! What this kernel lets the sandbox enforce, probed once: Landlock's ABI,
//! whether a seccomp filter installs, and whether a user and mount
//! namespace can be entered with a path bound read-only in it. The two
//! last are tried for real, in a child each, as a command would enter
//! them.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use nix::unistd::Pid;

use super::child::{Entry, Namespace};
use super::filter;
use crate::tools::reaper::CallProcesses;

/// The shell every probe child runs (and exits at once).
const SHELL: &str = "/bin/sh";

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask for the ABI instead of a
/// ruleset.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The Landlock ABI that lets workspace-write keep files outside the
/// project from being truncated (3, Linux 6.2).
pub const WORKSPACE_WRITE_MIN_ABI: i32 = 3;

/// The Landlock ABI that keeps a sandboxed command from signalling
/// processes outside it, dashfloat included (6, Linux 6.12).
pub const SIGNAL_SCOPE_MIN_ABI: i32 = 6;

/// Landlock on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landlock {
    /// Available, with this ABI version.
    Available(i32),
    /// Built in but not enabled at boot (`EOPNOTSUPP`).
    NotEnabled,
    /// Not built into this kernel, or refused by a filter above
    /// dashfloat (`ENOSYS`).
    NotImplemented,
}

impl Landlock {
    /// Asks the kernel.
    #[allow(unsafe_code)]
    fn probe() -> Landlock {
        // SAFETY: landlock_create_ruleset with a null attribute, size 0
        // and the version flag only returns a number; it reads no memory.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        if v > 0 {
            return Landlock::Available(i32::try_from(v).unwrap_or(i32::MAX));
        }
        match nix::errno::Errno::last() {
            nix::errno::Errno::EOPNOTSUPP => Landlock::NotEnabled,
            _ => Landlock::NotImplemented,
        }
    }

    /// The ABI version, 0 without Landlock.
    pub fn abi(self) -> i32 {
        match self {
            Landlock::Available(abi) => abi,
            Landlock::NotEnabled | Landlock::NotImplemented => 0,
        }
    }

    /// Why there is none, for a person: `None` when available.
    fn missing(self) -> Option<&'static str> {
        match self {
            Landlock::Available(_) => None,
            Landlock::NotEnabled => Some("Landlock is disabled in this kernel (boot option lsm=)"),
            Landlock::NotImplemented => Some("this kernel has no Landlock"),
        }
    }
}

/// What the kernel lets the sandbox enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// Landlock: files, TCP ports, signals and abstract sockets.
    pub landlock: Landlock,
    /// Whether the seccomp filters install, or why not: sockets,
    /// namespaces, mounts, `io_uring`.
    pub seccomp: Result<(), String>,
    /// Whether a user and mount namespace with a read-only bind can be
    /// entered, or why not: workspace-write's read-only `.git`.
    pub namespaces: Result<(), String>,
}

impl Support {
    /// Whether the workspace-write level can be entered, or what it
    /// lacks, as a sentence: it is never entered weaker than it says.
    pub fn workspace_write(&self) -> Result<(), String> {
        let mut lacks = Vec::new();
        if let Some(missing) = self.landlock.missing() {
            lacks.push(missing.to_owned());
        } else if self.landlock.abi() < WORKSPACE_WRITE_MIN_ABI {
            lacks.push(format!(
                "Landlock ABI {} cannot stop a truncate outside the project (needs {WORKSPACE_WRITE_MIN_ABI}, Linux 6.2)",
                self.landlock.abi()
            ));
        }
        if let Err(why) = &self.seccomp {
            lacks.push(format!("seccomp filters cannot be installed ({why})"));
        }
        if let Err(why) = &self.namespaces {
            lacks.push(format!(
                "no user and mount namespace to keep .git read-only ({why})"
            ));
        }
        if lacks.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the workspace-write sandbox is unavailable: {}",
                lacks.join("; ")
            ))
        }
    }

    /// What the read-only level does not enforce here, each a short
    /// phrase; empty when it enforces everything.
    pub fn read_only_gaps(&self) -> Vec<String> {
        let mut gaps = Vec::new();
        if let Some(missing) = self.landlock.missing() {
            gaps.push(format!("files are not confined ({missing})"));
        } else if self.landlock.abi() < SIGNAL_SCOPE_MIN_ABI {
            gaps.push(format!(
                "signals to other processes are not stopped (Landlock ABI {} < {SIGNAL_SCOPE_MIN_ABI})",
                self.landlock.abi()
            ));
        }
        if let Err(why) = &self.seccomp {
            gaps.push(format!(
                "the network, sockets and namespaces are not stopped (seccomp: {why})"
            ));
        }
        gaps
    }

    /// The one line to show at start naming what is not enforced, or
    /// `None` when everything is.
    pub fn notice(&self) -> Option<String> {
        let gaps = self.read_only_gaps();
        let write = self.workspace_write().err();
        if gaps.is_empty() && write.is_none() {
            return None;
        }
        let mut parts = Vec::new();
        if !gaps.is_empty() {
            parts.push(format!(
                "kernel sandbox: for command lines that run unasked, {}",
                gaps.join(", ")
            ));
        }
        parts.extend(write);
        Some(parts.join("; "))
    }
}

/// What this kernel supports, probed on first use and kept.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

/// Probes afresh (two short-lived children): for tests, and for
/// [`support`].
pub fn probe() -> Support {
    Support {
        landlock: Landlock::probe(),
        seccomp: probe_seccomp(),
        namespaces: probe_namespaces(),
    }
}

/// Installs the filters in a child, which then runs the shell.
fn probe_seccomp() -> Result<(), String> {
    let filters = filter::programs().map_err(|e| e.to_string())?;
    run(Entry {
        ruleset: None,
        filters,
        namespace: None,
    })
}

/// Enters a user and mount namespace in a child and binds a temporary
/// folder read-only over itself, as workspace-write does with `.git`.
fn probe_namespaces() -> Result<(), String> {
    let temp = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let path = CString::new(temp.path().as_os_str().as_bytes())
        .map_err(|_| "a temporary folder's name holds a NUL".to_owned())?;
    let flags = super::mount_flags(temp.path());
    run(Entry {
        ruleset: None,
        filters: &[],
        namespace: Some(Namespace::for_this_user(vec![(path, flags)], None)),
    })
}

/// Runs the shell with `entry` entered first; whether it ran.
fn run(entry: Entry) -> Result<(), String> {
    let mut cmd = Command::new(SHELL);
    cmd.args(["-c", ":"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    entry.install(&mut cmd);
    // Counted as a call's, so that a command's sweep running meanwhile
    // never takes it for an orphan of its own.
    let mut processes = CallProcesses::start();
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    if let Ok(pid) = i32::try_from(child.id()) {
        processes.spawned(Pid::from_raw(pid));
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the probe's shell ended with {status}"))
    }
}
