//! The seam between the tools and the machine they act on: every file and
//! process access of the tools and of the read-only analyser goes through
//! one [`Workspace`], as the seed's tools act through `workspace.Workspace`.
//! [`LocalWorkspace`](super::LocalWorkspace) is this machine's working
//! directory, [`MemoryWorkspace`](super::MemoryWorkspace) a project held
//! in memory; a container or remote workspace implements the same trait,
//! and no tool changes. `docs/decisions/0026-workspace-seam.md`.
//!
//! The types are the seam's own — a [`FileReader`], a [`Shell`] and its
//! [`Exit`], output as an `AsyncRead`, [`Stat`], [`Listing`] — so that no
//! implementation must produce a `std::fs::File` or a tokio child. Paths
//! are the workspace's own: the real paths [`Workspace::resolve`]
//! returns, beneath [`Workspace::root`].

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use tokio::io::AsyncRead;
use tokio_util::sync::CancellationToken;

use super::PathError;

/// What a tool can do to the working directory and its processes: resolve
/// a model's path under the path policy, look at and open files beneath
/// the root, list a directory, write a file atomically, walk the project's
/// files, and start a command. Implementations confine every path to the
/// root as the local one does (ADR 0010), or say in their ADR why not.
pub trait Workspace: Send + Sync + fmt::Debug {
    /// The working directory, as given when the workspace was made.
    fn root(&self) -> &Path;

    /// The path `path` (as the model gave it: relative to the root, or
    /// absolute inside it) really names, every link followed, or why the
    /// path policy refuses it (ADR 0010).
    fn resolve(&self, path: &str) -> Result<PathBuf, PathError>;

    /// Where `real`, what [`Workspace::resolve`] returned for `path`, lies
    /// relative to the root when a link led somewhere other than `path`
    /// says on its face: what a preview shows as "given → resolved".
    fn redirected(&self, path: &str, real: &Path) -> Option<PathBuf>;

    /// The real path of `path`, every link followed (`realpath`).
    fn real_path(&self, path: &Path) -> io::Result<PathBuf>;

    /// What `path` is, following a final link (`stat`).
    fn stat(&self, path: &Path) -> io::Result<Stat>;

    /// What `path` is, a final link itself (`lstat`).
    fn lstat(&self, path: &Path) -> io::Result<Stat>;

    /// A handle that opens files beneath the root, held for a search that
    /// opens many.
    fn opener(&self) -> io::Result<Box<dyn Opener>>;

    /// Opens `real`, a path [`Workspace::resolve`] returned, for reading,
    /// and only if it is a regular file (never a link, never blocking on a
    /// FIFO).
    fn open_regular(&self, real: &Path) -> io::Result<FileReader> {
        self.opener()?.open_regular(real)
    }

    /// The directory `real` (a resolved path): the `keep` smallest names,
    /// in byte order, each looked at without following a link, and how
    /// many names it holds. Memory stays at `keep` whatever it holds.
    fn list(&self, real: &Path, keep: usize) -> io::Result<Listing>;

    /// Replaces or creates the file `real` (a resolved path) with `data`
    /// atomically: a temporary file beside it, flushed to disk, renamed
    /// into place. `mode` is the existing file's mode to keep (`None` for a
    /// new file, which gets the umask's). With [`Parents::Create`] the
    /// missing directories above it are made first.
    fn write_atomic(
        &self,
        real: &Path,
        data: &[u8],
        mode: Option<u32>,
        parents: Parents,
    ) -> Result<(), WriteError>;

    /// Removes the file `real` (a resolved path; not a directory), as
    /// `/undo` does to a file a turn created.
    fn remove_file(&self, real: &Path) -> io::Result<()>;

    /// Removes the folder `real` (a resolved path) when it is empty, as
    /// `/undo` does to a folder a turn made for a file it created.
    fn remove_empty_dir(&self, real: &Path) -> io::Result<()>;

    /// A small regular file's text (bytes that are not UTF-8 replaced),
    /// `None` when it does not exist, an error when it is larger than `max`
    /// bytes or not a regular file. Opened without blocking. For the
    /// analyser's reading of git's files, which may lie outside the root
    /// (a linked worktree's git directory, the global configuration).
    fn read_small(&self, path: &Path, max: u64) -> io::Result<Option<String>>;

    /// Walks the project's regular files under `target` (a resolved
    /// directory) as `docs/decisions/0024-search-tools.md` says —
    /// `.gitignore` honoured, [`SEARCH_SKIPPED_DIRS`](super::SEARCH_SKIPPED_DIRS)
    /// skipped unless `target` is in one, no link followed — handing each
    /// to a visitor; `make` makes one visitor per walker thread. Stops
    /// between files once `cancel` is cancelled.
    fn walk<'v>(
        &self,
        target: &Path,
        cancel: &CancellationToken,
        make: &mut dyn FnMut() -> Visitor<'v>,
    ) -> Result<(), WalkError>;

    /// Starts `/bin/sh -c command` in `dir` (a resolved directory), in its
    /// own session, with exactly `env` as its environment, no input, its
    /// output and errors on one pipe, and what `sandbox` allows it. The
    /// caller waits and reads, and kills everything the command started
    /// through [`Spawned::processes`] (ADR 0013).
    fn spawn(
        &self,
        dir: &Path,
        command: &str,
        env: Vec<(OsString, OsString)>,
        sandbox: Sandbox,
    ) -> Result<Spawned, SpawnError>;

    /// Runs `program` (a path: what the commands' `PATH` finds) with
    /// `args` in `dir` (a resolved directory), with exactly `env` and no
    /// input, handing its output to `output` piece by piece as it comes
    /// (which returns false to stop it), within `timeout` (at most
    /// [`PROBE_TIMEOUT`]); everything it started is killed and reaped as
    /// a command's is. For the questions the policy asks of the program
    /// that will run: which repository and which configuration git would
    /// use (ADR 0025).
    fn probe(
        &self,
        dir: &Path,
        program: &Path,
        args: &[&str],
        env: &[(OsString, OsString)],
        timeout: std::time::Duration,
        output: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<Probed, ProbeError>;

    /// Starts a long-running server (an MCP server's `command` with
    /// `args`, ADR 0045) in `dir` with exactly `env`, in `sandbox`, its
    /// standard streams piped. It runs in a session of its own, dies with
    /// dashfloat, and no command's sweep kills it; the caller kills it by
    /// dropping what is returned. A workspace that runs no processes
    /// refuses.
    fn serve(
        &self,
        dir: &Path,
        program: &str,
        args: &[String],
        env: Vec<(OsString, OsString)>,
        sandbox: Sandbox,
    ) -> Result<Served, SpawnError> {
        let _ = (dir, program, args, env, sandbox);
        Err(SpawnError::Start(io::Error::new(
            io::ErrorKind::Unsupported,
            "this workspace starts no servers",
        )))
    }

    /// The first entry under `dir` (a resolved directory) that `judge`
    /// finds, or `None`: `judge` is given each entry's folder, name and
    /// own type (a link is never followed) and says whether it is the one
    /// looked for, a folder to look into, or neither. An error once more
    /// than `max_entries` were looked at. For the analyser's looks through
    /// a repository's own files and its work tree, where git follows
    /// links (ADR 0025).
    fn scan(
        &self,
        dir: &Path,
        max_entries: usize,
        judge: &mut dyn FnMut(&Path, &OsStr, FileKind) -> ScanStep,
    ) -> Result<Option<PathBuf>, ScanError>;

    /// A notice about the workspace's confinement for the next tool
    /// result, given once (the local one: `openat2` is unavailable).
    fn take_notice(&self) -> Option<&'static str>;
}

/// Opens files beneath a workspace's root through one held handle.
pub trait Opener: Send + Sync {
    /// [`Workspace::open_regular`] through this handle.
    fn open_regular(&self, real: &Path) -> io::Result<FileReader>;
}

/// A file a workspace opened for reading: its bytes, read as they are
/// wanted.
pub struct FileReader(Box<dyn Read + Send>);

impl FileReader {
    /// A reader of a file's bytes.
    pub fn new(reader: impl Read + Send + 'static) -> Self {
        FileReader(Box::new(reader))
    }
}

impl Read for FileReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

/// What a command [`Workspace::spawn`] starts may reach: the kernel
/// sandbox's level (issue 39, `docs/decisions/0043-kernel-sandbox.md`).
/// A cheap value the policy passes; the workspace works out what each
/// level grants from its own root. A confined level also gives the
/// command a temporary folder (`TMPDIR`), this user's only, emptied of
/// whatever the command left when the call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// Everything the person can: a command the person approved.
    Unconfined,
    /// Reads only the project, the system's own directories, the
    /// toolchains on `PATH` and git's global configuration; writes only
    /// its temporary folder; no network. For the lines the read-only
    /// analyser clears (ADR 0025). Where the kernel lacks a part, the rest
    /// still applies and the start-up notice names what is not enforced.
    ReadOnly,
    /// Reads everything but the credential locations; writes only the
    /// project (its repository's metadata kept read-only) and its
    /// temporary folder; no network, no Unix sockets. Never weaker than
    /// that: where the kernel cannot enforce it all, the spawn fails with
    /// [`SpawnError::Sandbox`].
    WorkspaceWrite,
}

impl Sandbox {
    /// The level's name as the person reads it.
    pub fn name(self) -> &'static str {
        match self {
            Sandbox::Unconfined => "off",
            Sandbox::ReadOnly => "read-only",
            Sandbox::WorkspaceWrite => "workspace-write",
        }
    }
}

/// What a file is, as the tools need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Its type.
    pub kind: FileKind,
    /// Its size in bytes.
    pub len: u64,
    /// Its mode (`st_mode`: type and permission bits).
    pub mode: u32,
}

impl Stat {
    /// Whether it is a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }

    /// Whether it is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }
}

/// The type of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only [`Workspace::lstat`] and listings see one).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// A bounded listing of one directory ([`Workspace::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The smallest names, in byte order, with what each is.
    pub entries: Vec<Listed>,
    /// How many names the directory holds (`.` and `..` not counted).
    pub total: usize,
}

/// One name of a [`Listing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The name as the directory holds it.
    pub name: OsString,
    /// What it is, a link not followed; `None` when it was removed between
    /// the listing and the look.
    pub stat: Option<Stat>,
    /// Where a link points.
    pub target: Option<OsString>,
}

/// Whether [`Workspace::write_atomic`] makes the directories above the
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// Make the missing ones, as `mkdir -p` does.
    Create,
    /// They must exist.
    Existing,
}

/// Which step of [`Workspace::write_atomic`] failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The directories above the file could not be made.
    #[error("{0}")]
    Parents(io::Error),
    /// The file could not be written (or its directory opened).
    #[error("{0}")]
    Write(io::Error),
}

/// A command [`Workspace::spawn`] started.
pub struct Spawned {
    /// The shell; killed if dropped.
    pub shell: Box<dyn Shell>,
    /// Its output and errors, in the order it wrote them.
    pub output: Pin<Box<dyn AsyncRead + Send>>,
    /// Every process the command started, the shell's group or not.
    pub processes: Box<dyn Processes>,
}

/// A server [`Workspace::serve`] started: its process (killed when
/// dropped), kept out of the commands' sweeps while this lives.
pub struct Served {
    /// The process, its stdin, stdout and stderr piped.
    pub child: tokio::process::Child,
    /// What keeps it running beside the commands, and its sandbox's
    /// temporary folder.
    pub hold: Box<dyn Send + Sync>,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("pid", &self.child.id())
            .finish()
    }
}

/// The shell a [`Workspace::spawn`] started, killed when dropped.
pub trait Shell: Send {
    /// Waits for it to end; dropping the wait is harmless, and a later
    /// one waits on.
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<Exit>> + Send + '_>>;
}

/// How a command's shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

/// A call's hold on the processes its command started: [`kill_all`]
/// kills them and reaps the dead, and dropping it does the same again,
/// however the call ends (exit, timeout, cancel, its future dropped).
///
/// [`kill_all`]: Processes::kill_all
pub trait Processes: Send + Sync {
    /// Kills every process the command started and reaps those already
    /// dead; the shell itself is the [`Spawned::child`]'s to reap.
    fn kill_all(&self);
}

/// Which step of [`Workspace::spawn`] failed.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The directory to run in could not be entered.
    #[error("{0}")]
    Directory(io::Error),
    /// The shell could not be started.
    #[error("{0}")]
    Start(io::Error),
    /// The sandbox the level asks for cannot be entered here.
    #[error(transparent)]
    Sandbox(#[from] super::sandbox::SandboxError),
}

/// The longest a [`Workspace::probe`] may take (5 s): git answers in a
/// few milliseconds, and lists even a very large index within a second;
/// one reading a FIFO its configuration names never does.
pub(crate) const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most a [`Workspace::probe`] may print on its errors (64 KiB): git
/// says what went wrong in a line.
pub(crate) const PROBE_ERRORS_MAX_BYTES: usize = 64 * 1024;

/// How a program run by [`Workspace::probe`] ended, and what it printed
/// on its errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its errors.
    pub stderr: Vec<u8>,
}

impl Probed {
    /// The first line of its errors, for a reason the person reads.
    pub fn first_error_line(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim()
            .to_owned()
    }
}

/// Why a [`Workspace::probe`] gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The directory to run in could not be entered.
    #[error("cannot enter the directory: {0}")]
    Directory(io::Error),
    /// The program could not be started.
    #[error("cannot start it: {0}")]
    Start(io::Error),
    /// Its output could not be read.
    #[error("cannot read its output: {0}")]
    Read(io::Error),
    /// It did not end within its time.
    #[error("it did not answer in time")]
    TimedOut,
    /// Its output's reader had enough and stopped it.
    #[error("its answer was cut short")]
    Stopped,
    /// It printed more than [`PROBE_ERRORS_MAX_BYTES`] on its errors.
    #[error("it printed more than {} KiB of errors", PROBE_ERRORS_MAX_BYTES / 1024)]
    TooLong,
}

/// What [`Workspace::scan`] does with an entry it meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStep {
    /// Stop: this is the entry looked for.
    Found,
    /// Look into it, when it is a folder.
    Enter,
    /// Go on past it.
    Pass,
}

/// Why [`Workspace::scan`] gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The directory holds more entries than were to be looked at.
    #[error("it holds more than {0} entries")]
    TooMany(usize),
    /// A directory could not be read.
    #[error("{0}")]
    Read(io::Error),
}

/// What a walk hands a visitor.
#[derive(Debug)]
pub enum Seen<'a> {
    /// A regular file, by its real path beneath the root.
    File(&'a Path),
    /// A directory that could not be read, as `path: error` with the path
    /// relative to the root.
    Unreadable(String),
}

/// One walker thread's visitor ([`Workspace::walk`]).
pub type Visitor<'v> = Box<dyn FnMut(Seen<'_>) + Send + 'v>;

/// Why a walk ended early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    /// The call was cancelled while the walk ran; it stopped between files.
    #[error("the search was cancelled")]
    Cancelled,
    /// The working directory could not be resolved to start the walk.
    #[error("the working directory cannot be resolved: {0}")]
    Root(String),
}
