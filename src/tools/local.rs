//! [`LocalWorkspace`]: the working directory on this machine. Paths go
//! through the path policy (`path_policy`, ADR 0010), files are opened
//! beneath a descriptor of the root with `openat2(RESOLVE_BENEATH)`
//! (`beneath`), written by temporary file and rename (`atomic`), walked by
//! ripgrep's walker (`walk`), and commands start under `/bin/sh` in their
//! own session, their leftovers swept by the subreaper (`reaper`).
//! `docs/decisions/0026-workspace-seam.md`.

use std::collections::BinaryHeap;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::future::Future;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nix::dir::{Dir, Type as DirType};
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::signal::Signal;
use nix::sys::stat::{FileStat, Mode, SFlag};
use nix::unistd::Pid;
use tokio::net::unix::pipe::Receiver;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::atomic;
use super::beneath;
use super::path_policy::{self, PathError};
use super::probe;
use super::reaper::{CallProcesses, Kept};
use super::sandbox::{CallTemp, Confinement, SandboxSettings};
use super::walk;
use super::workspace::{
    Exit, FileKind, FileReader, Listed, Listing, Opener, PROBE_TIMEOUT, Parents, ProbeError,
    Probed, Processes, Sandbox, ScanError, ScanStep, Served, Shell, SpawnError, Spawned, Stat,
    Visitor, WalkError, Workspace, WriteError,
};

/// The shell every command line runs under, so `;`, `&&`, `cd` and pipes
/// mean what they say.
const SHELL: &str = "/bin/sh";

/// The working directory on this machine.
#[derive(Debug, Clone)]
pub struct LocalWorkspace {
    root: PathBuf,
    /// Whether this workspace's results said that `openat2` is
    /// unavailable; clones say it once between them.
    told: Arc<AtomicBool>,
    /// The kernel sandbox of its commands: what they may never read,
    /// each level's rules as last made.
    sandbox: Arc<Confinement>,
}

impl LocalWorkspace {
    /// The workspace rooted at `root`, taken as it is: every access
    /// resolves its real path afresh, so a root that cannot be resolved
    /// fails each call instead of this one. A sandboxed command may not
    /// read the defaults of [`SandboxSettings::from_env`].
    pub fn new(root: impl Into<PathBuf>) -> LocalWorkspace {
        LocalWorkspace {
            root: root.into(),
            told: Arc::default(),
            sandbox: Arc::new(Confinement::new(SandboxSettings::from_env())),
        }
    }

    /// This workspace with `settings` keeping sandboxed commands from
    /// what they may not read.
    pub fn with_sandbox(mut self, settings: SandboxSettings) -> LocalWorkspace {
        self.sandbox = Arc::new(Confinement::new(settings));
        self
    }
}

impl Workspace for LocalWorkspace {
    fn root(&self) -> &Path {
        &self.root
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        path_policy::resolve(&self.root, path)
    }

    fn redirected(&self, path: &str, real: &Path) -> Option<PathBuf> {
        path_policy::redirected(&self.root, path, real)
    }

    fn real_path(&self, path: &Path) -> io::Result<PathBuf> {
        path.canonicalize()
    }

    fn stat(&self, path: &Path) -> io::Result<Stat> {
        std::fs::metadata(path).map(|m| of_metadata(&m))
    }

    fn lstat(&self, path: &Path) -> io::Result<Stat> {
        std::fs::symlink_metadata(path).map(|m| of_metadata(&m))
    }

    fn opener(&self) -> io::Result<Box<dyn Opener>> {
        Ok(Box::new(beneath::Root::open(&self.root)?))
    }

    fn open_regular(&self, real: &Path) -> io::Result<FileReader> {
        beneath::open_regular(&self.root, real).map(FileReader::new)
    }

    fn list(&self, real: &Path, keep: usize) -> io::Result<Listing> {
        let fd = beneath::open(&self.root, real, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?;
        let mut dir = Dir::from_fd(fd)?;
        // A max-heap of the smallest names seen: memory stays at `keep`
        // whatever the directory holds.
        let mut head: BinaryHeap<Vec<u8>> = BinaryHeap::with_capacity(keep.saturating_add(1));
        let mut total = 0usize;
        for entry in dir.iter() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            total += 1;
            head.push(name.to_vec());
            if head.len() > keep {
                head.pop();
            }
        }
        let entries = head
            .into_sorted_vec()
            .into_iter()
            .map(|name| describe(dir.as_fd(), OsString::from(OsStr::from_bytes(&name))))
            .collect();
        Ok(Listing { entries, total })
    }

    fn write_atomic(
        &self,
        real: &Path,
        data: &[u8],
        mode: Option<u32>,
        parents: Parents,
    ) -> Result<(), WriteError> {
        let (dir, name) = match parents {
            Parents::Create => {
                beneath::create_parent(&self.root, real).map_err(WriteError::Parents)?
            }
            Parents::Existing => beneath::parent(&self.root, real).map_err(WriteError::Write)?,
        };
        atomic::write_atomic(&dir, name, data, mode).map_err(WriteError::Write)
    }

    fn remove_file(&self, real: &Path) -> io::Result<()> {
        let (dir, name) = beneath::parent(&self.root, real)?;
        nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir)
            .map_err(io::Error::from)
    }

    fn remove_empty_dir(&self, real: &Path) -> io::Result<()> {
        let (dir, name) = beneath::parent(&self.root, real)?;
        nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::RemoveDir)
            .map_err(io::Error::from)
    }

    fn read_small(&self, path: &Path, max: u64) -> io::Result<Option<String>> {
        let file = match File::options()
            .read(true)
            .custom_flags(OFlag::O_NONBLOCK.bits())
            .open(path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        let mut bytes = Vec::new();
        file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Err(io::Error::other(format!("larger than {max} bytes")));
        }
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn walk<'v>(
        &self,
        target: &Path,
        cancel: &CancellationToken,
        make: &mut dyn FnMut() -> Visitor<'v>,
    ) -> Result<(), WalkError> {
        let root = self
            .root
            .canonicalize()
            .map_err(|e| WalkError::Root(e.to_string()))?;
        walk::files(&root, target, cancel, make)
    }

    fn spawn(
        &self,
        dir: &Path,
        command: &str,
        env: Vec<(OsString, OsString)>,
        sandbox: Sandbox,
    ) -> Result<Spawned, SpawnError> {
        let mut env = env;
        // The rules and filters are made here, before the fork: the child
        // may only make single system calls.
        let prepared = self
            .sandbox
            .prepare(sandbox, self, &self.root, dir, &mut env)?;
        let dir = beneath::open(&self.root, dir, OFlag::O_PATH | OFlag::O_DIRECTORY)
            .map_err(SpawnError::Directory)?;
        // One pipe for both streams: the kernel keeps the order in which the
        // command wrote, which two pipes read concurrently cannot.
        let (reader, writer) = std::io::pipe().map_err(SpawnError::Start)?;
        let writer_for_stderr = writer.try_clone().map_err(SpawnError::Start)?;
        let mut cmd = Command::new(SHELL);
        cmd.arg("-c")
            .arg(command)
            // A command waiting for input (a pager, `rg` with no path, a
            // password prompt) would otherwise wait until the timeout.
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(writer_for_stderr)
            .env_clear()
            .envs(env)
            .kill_on_drop(true);
        own_session_with_parent_death(cmd.as_std_mut());
        enter(cmd.as_std_mut(), dir);
        let temp = prepared.map(|prepared| prepared.install(cmd.as_std_mut()));
        // Counted as running before the fork, so a sweep of another call can
        // tell our shell from an orphan; dropped on every way out.
        let mut processes = CallProcesses::start();
        let spawned = cmd.spawn();
        // The command holds our copies of the pipe's write end; until they
        // are closed, the read side never sees end-of-file.
        drop(cmd);
        let child = spawned.map_err(|e| not_started(sandbox, e))?;
        if let Some(shell) = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw)
        {
            processes.spawned(shell);
        }
        let output = Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(SpawnError::Start)?;
        Ok(Spawned {
            shell: Box::new(LocalShell(child)),
            output: Box::pin(output),
            processes: Box::new(Sandboxed {
                processes,
                _temp: temp,
            }),
        })
    }

    fn serve(
        &self,
        dir: &Path,
        program: &str,
        args: &[String],
        env: Vec<(OsString, OsString)>,
        sandbox: Sandbox,
    ) -> Result<Served, SpawnError> {
        let mut env = env;
        let prepared = self
            .sandbox
            .prepare(sandbox, self, &self.root, dir, &mut env)?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_clear()
            .envs(env)
            .current_dir(dir)
            .kill_on_drop(true);
        own_session_with_parent_death(cmd.as_std_mut());
        let temp = prepared.map(|prepared| prepared.install(cmd.as_std_mut()));
        let (child, kept) = Kept::spawn(|| cmd.spawn()).map_err(|e| not_started(sandbox, e))?;
        Ok(Served {
            child,
            hold: Box::new((kept, temp)),
        })
    }

    fn probe(
        &self,
        dir: &Path,
        program: &Path,
        args: &[&str],
        env: &[(OsString, OsString)],
        timeout: std::time::Duration,
        output: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<Probed, ProbeError> {
        let dir = beneath::open(&self.root, dir, OFlag::O_PATH | OFlag::O_DIRECTORY)
            .map_err(ProbeError::Directory)?;
        let deadline = Instant::now() + timeout.min(PROBE_TIMEOUT);
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_clear()
            .envs(env.iter().map(|(name, value)| (name, value)));
        own_session_with_parent_death(&mut cmd);
        enter(&mut cmd, dir);
        // A call's like any command's: the sweep kills what it leaves and
        // never takes it for another call's orphan.
        let mut processes = CallProcesses::start();
        let mut child = cmd.spawn().map_err(ProbeError::Start)?;
        if let Ok(pid) = i32::try_from(child.id()) {
            processes.spawned(Pid::from_raw(pid));
        }
        let answer = probe::collect(&mut child, deadline, output);
        if answer.is_err() {
            processes.kill_all();
            // Killed: the wait is immediate, and leaves no zombie.
            let _ = child.wait();
        }
        answer
    }

    fn scan(
        &self,
        dir: &Path,
        max_entries: usize,
        judge: &mut dyn FnMut(&Path, &OsStr, FileKind) -> ScanStep,
    ) -> Result<Option<PathBuf>, ScanError> {
        let top = beneath::open(&self.root, dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY)
            .map_err(ScanError::Read)?;
        let mut pending = vec![(top, dir.to_path_buf())];
        let mut seen = 0usize;
        while let Some((fd, path)) = pending.pop() {
            let mut listing = Dir::from_fd(fd).map_err(|e| ScanError::Read(e.into()))?;
            let handle = listing
                .as_fd()
                .try_clone_to_owned()
                .map_err(ScanError::Read)?;
            for entry in listing.iter() {
                let entry = entry.map_err(|e| ScanError::Read(e.into()))?;
                let name = OsStr::from_bytes(entry.file_name().to_bytes());
                if name == "." || name == ".." {
                    continue;
                }
                seen += 1;
                if seen > max_entries {
                    return Err(ScanError::TooMany(max_entries));
                }
                let kind = match entry.file_type() {
                    Some(DirType::Directory) => FileKind::Dir,
                    Some(DirType::File) => FileKind::File,
                    Some(DirType::Symlink) => FileKind::Symlink,
                    Some(_) => FileKind::Other,
                    None => nix::sys::stat::fstatat(&handle, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                        .map(|st| of_file_stat(&st).kind)
                        .map_err(|e| ScanError::Read(e.into()))?,
                };
                match judge(&path, name, kind) {
                    ScanStep::Found => return Ok(Some(path.join(name))),
                    ScanStep::Pass => {}
                    ScanStep::Enter if kind != FileKind::Dir => {}
                    ScanStep::Enter => {
                        let sub = nix::fcntl::openat(
                            &handle,
                            name,
                            OFlag::O_RDONLY
                                | OFlag::O_DIRECTORY
                                | OFlag::O_NOFOLLOW
                                | OFlag::O_CLOEXEC,
                            Mode::empty(),
                        )
                        .map_err(|e| ScanError::Read(e.into()))?;
                        pending.push((sub, path.join(name)));
                    }
                }
            }
        }
        Ok(None)
    }

    fn take_notice(&self) -> Option<&'static str> {
        (beneath::fell_back() && !self.told.swap(true, Ordering::AcqRel))
            .then_some(beneath::FALLBACK_NOTICE)
    }
}

impl Opener for beneath::Root {
    fn open_regular(&self, real: &Path) -> io::Result<FileReader> {
        beneath::Root::open_regular(self, real).map(FileReader::new)
    }
}

/// A shell started on this machine.
struct LocalShell(tokio::process::Child);

impl Shell for LocalShell {
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<Exit>> + Send + '_>> {
        Box::pin(async move {
            let status = self.0.wait().await?;
            Ok(Exit {
                code: status.code(),
                signal: status.signal(),
            })
        })
    }
}

/// A call's processes and its hold on the temporary folder its sandbox
/// gave it: the processes are swept first (fields drop in order), then
/// the folder is emptied of whatever they left in it.
struct Sandboxed {
    processes: CallProcesses,
    _temp: Option<CallTemp>,
}

impl Processes for Sandboxed {
    fn kill_all(&self) {
        self.processes.kill_all();
    }
}

/// What std's metadata says, as the tools need it.
fn of_metadata(meta: &Metadata) -> Stat {
    let t = meta.file_type();
    let kind = if t.is_file() {
        FileKind::File
    } else if t.is_dir() {
        FileKind::Dir
    } else if t.is_symlink() {
        FileKind::Symlink
    } else {
        FileKind::Other
    };
    Stat {
        kind,
        len: meta.len(),
        mode: meta.mode(),
    }
}

/// What `fstatat` says, as the tools need it.
fn of_file_stat(st: &FileStat) -> Stat {
    let kind = match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => FileKind::File,
        SFlag::S_IFDIR => FileKind::Dir,
        SFlag::S_IFLNK => FileKind::Symlink,
        _ => FileKind::Other,
    };
    Stat {
        kind,
        len: u64::try_from(st.st_size).unwrap_or(0),
        mode: st.st_mode,
    }
}

/// One entry, looked at through the directory's handle, never by path.
fn describe(dir: BorrowedFd<'_>, name: OsString) -> Listed {
    let stat = nix::sys::stat::fstatat(dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| of_file_stat(&st));
    let target = match stat {
        Some(Stat {
            kind: FileKind::Symlink,
            ..
        }) => nix::fcntl::readlinkat(dir, name.as_os_str()).ok(),
        _ => None,
    };
    Listed { name, stat, target }
}

/// Why a process did not start, naming the sandbox it was to run in.
fn not_started(sandbox: Sandbox, e: io::Error) -> SpawnError {
    match sandbox {
        Sandbox::Unconfined => SpawnError::Start(e),
        _ => SpawnError::Start(io::Error::new(
            e.kind(),
            format!("in the {} sandbox: {e}", sandbox.name()),
        )),
    }
}

/// Puts the shell in a new session (so nothing it does reaches
/// dashfloat's terminal or group) and asks the kernel to SIGKILL it if
/// dashfloat dies first, even by SIGKILL.
///
/// The death signal is a backstop for that one case, and reaches only the
/// shell: it fires when the *thread* that forked exits, not the process.
/// `spawn` forks on the thread polling the call — a runtime worker, which
/// lives as long as the runtime (or, on a current-thread runtime, the
/// thread in `block_on`). Were the spawn moved to `spawn_blocking`, the
/// pool thread's exit after its idle keep-alive (10 s) would SIGKILL a
/// command still running; the same after a `block_in_place` on the
/// spawning worker. A [`Workspace::probe`] forks on the thread that then
/// waits for it, which outlives it. What keeps every process from outliving its call, and
/// dashfloat, is the subreaper's sweep ([`CallProcesses`]), on every way
/// out but dashfloat's own SIGKILL.
#[allow(unsafe_code)]
fn own_session_with_parent_death(cmd: &mut std::process::Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is allowed. setsid, prctl and getppid are
    // single system calls; nothing allocates or takes a lock (an Errno
    // becomes an io::Error by value).
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // dashfloat may have died between fork and prctl; then the
            // death signal was never armed and the child must not run.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
}

/// Makes the child start in `dir`, the directory the policy approved and
/// opened beneath the root: by its handle, so no path is walked again
/// between the check and the shell.
#[allow(unsafe_code)]
fn enter(cmd: &mut std::process::Command, dir: OwnedFd) {
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is allowed; fchdir is a single system call on
    // a descriptor the closure owns, and nothing allocates or takes a lock
    // (an Errno becomes an io::Error by value). The descriptor is
    // close-on-exec, so the command does not inherit it.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::fchdir(&dir)?;
            Ok(())
        });
    }
}
