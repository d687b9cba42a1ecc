//! What a sandboxed command's process does between fork and exec: enter
//! a user and mount namespace with the repository's metadata bound
//! read-only (workspace-write), drop every capability, set
//! `no_new_privs`, enter the Landlock domain and install the seccomp
//! filters. Everything it needs is made before the fork ([`Entry`]);
//! after it only single system calls run, on memory already there.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use nix::sys::stat::Mode;
use seccompiler::BpfProgram;

/// What the child does to enter a level, made before the fork.
pub(super) struct Entry {
    /// The Landlock ruleset to restrict itself with, when the kernel has
    /// Landlock.
    pub(super) ruleset: Option<OwnedFd>,
    /// The seccomp programs to install, in order (none when the kernel
    /// refused seccomp at the probe).
    pub(super) filters: &'static [BpfProgram],
    /// The namespaces to enter first (workspace-write).
    pub(super) namespace: Option<Namespace>,
}

/// A user and mount namespace of the command's own, in which paths are
/// bound read-only over themselves.
pub(super) struct Namespace {
    /// `/proc/self/uid_map`'s line: the effective user mapped to itself.
    pub(super) uid_map: Vec<u8>,
    /// `/proc/self/gid_map`'s line: the effective group mapped to itself.
    pub(super) gid_map: Vec<u8>,
    /// Each path to bind read-only over itself, with the flags its mount
    /// has (`nosuid`, `nodev`, …), which a remount in a user namespace
    /// must keep.
    pub(super) read_only: Vec<(CString, MsFlags)>,
    /// The directory to run in, entered again by path inside the
    /// namespace; `None` keeps the one entered before (the probe).
    pub(super) cwd: Option<CString>,
}

impl Namespace {
    /// The maps for this process's effective user and group.
    pub(super) fn for_this_user(read_only: Vec<(CString, MsFlags)>, cwd: Option<CString>) -> Self {
        let uid = nix::unistd::geteuid();
        let gid = nix::unistd::getegid();
        Namespace {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            read_only,
            cwd,
        }
    }
}

impl Entry {
    /// Makes `cmd`'s child enter the level after the hooks registered
    /// before this one (its own session, its directory).
    #[allow(unsafe_code)]
    pub(super) fn install(self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before exec, where
        // only async-signal-safe work is allowed. Every step below is a
        // single system call (unshare, open, write, close, mount, chdir,
        // stat, prctl, capset, landlock_restrict_self, seccomp) on memory
        // made before the fork (the maps, the C strings, the BPF programs,
        // the ruleset's descriptor); nothing allocates or takes a lock, and
        // an Errno becomes an io::Error by value.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
    }

    /// Enters the level, in the child.
    fn enter(&self) -> io::Result<()> {
        if let Some(namespace) = &self.namespace {
            namespace.enter()?;
        }
        drop_capabilities()?;
        nix::sys::prctl::set_no_new_privs()?;
        if let Some(ruleset) = &self.ruleset {
            restrict_self(ruleset)?;
        }
        for filter in self.filters {
            seccompiler::apply_filter(filter).map_err(|e| match e {
                seccompiler::Error::Seccomp(e) | seccompiler::Error::Prctl(e) => e,
                _ => io::Error::from(Errno::EINVAL),
            })?;
        }
        Ok(())
    }
}

impl Namespace {
    /// Enters the namespaces and binds the paths read-only, in the child.
    pub(super) fn enter(&self) -> io::Result<()> {
        let before = match self.cwd {
            Some(_) => Some(nix::sys::stat::stat(c".")?),
            None => None,
        };
        nix::sched::unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)?;
        // Kernels before 3.19 have no setgroups file; the maps then need
        // none.
        match write_file(c"/proc/self/setgroups", b"deny") {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
        write_file(c"/proc/self/uid_map", &self.uid_map)?;
        write_file(c"/proc/self/gid_map", &self.gid_map)?;
        for (path, flags) in &self.read_only {
            let path = path.as_c_str();
            nix::mount::mount(
                Some(path),
                path,
                None::<&CStr>,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None::<&CStr>,
            )?;
            nix::mount::mount(
                None::<&CStr>,
                path,
                None::<&CStr>,
                MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | *flags,
                None::<&CStr>,
            )?;
        }
        // A working directory inside a bound path would still be the one
        // beneath the mount: enter it again by path, and make sure it is
        // the directory the policy opened.
        if let (Some(cwd), Some(before)) = (&self.cwd, before) {
            nix::unistd::chdir(cwd.as_c_str())?;
            let after = nix::sys::stat::stat(c".")?;
            if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) {
                return Err(Errno::EXDEV.into());
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to the file at `path` in one write.
fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), Errno> {
    let fd = nix::fcntl::open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty())?;
    let written = nix::unistd::write(&fd, bytes)?;
    if written == bytes.len() {
        Ok(())
    } else {
        Err(Errno::EIO)
    }
}

/// The header `capset` takes: version 3 (64-bit sets), this thread.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// One half of the 64-bit capability sets `capset` takes.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Empties the bounding set (when this process may: root, or anyone in
/// its own user namespace), the ambient set, and the effective, permitted
/// and inheritable sets: nothing the command or a program it runs does —
/// root's exec, a set-user-ID file, file capabilities — gives a
/// capability back.
#[allow(unsafe_code)]
fn drop_capabilities() -> io::Result<()> {
    const NONE: libc::c_ulong = 0;
    for cap in 0..64 as libc::c_ulong {
        // SAFETY: prctl with integer arguments only, each as wide as the
        // kernel reads it.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, NONE, NONE, NONE) };
        if rc != 0 {
            match Errno::last() {
                // Past the kernel's last capability.
                Errno::EINVAL => break,
                // Without CAP_SETPCAP nothing is held that the bounding
                // set would let back: the sets below are emptied, and
                // `no_new_privs` keeps exec from adding any.
                Errno::EPERM => break,
                e => return Err(e.into()),
            }
        }
    }
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            NONE,
            NONE,
            NONE,
        )
    };
    // Kernels before 4.3 have no ambient set.
    if rc != 0 && Errno::last() != Errno::EINVAL {
        return Err(Errno::last().into());
    }
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let empty = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads the header and two data structs, both alive on
    // this stack frame and laid out as the kernel's.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &header as *const CapHeader,
            empty.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(Errno::last().into());
    }
    Ok(())
}

/// `landlock_restrict_self(ruleset, 0)`: this thread, and all it starts,
/// enter the ruleset's domain for good.
#[allow(unsafe_code)]
fn restrict_self(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: a system call with a descriptor this closure owns and a
    // flags word.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            ruleset.as_raw_fd(),
            0u32,
        )
    };
    if rc != 0 {
        return Err(Errno::last().into());
    }
    Ok(())
}
