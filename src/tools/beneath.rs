//! The second wall behind the path policy: a path the policy approved is
//! opened relative to a descriptor of the working directory with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, so a link swapped in
//! after the check, or a bug in the policy, makes the kernel refuse instead
//! of following it out. Where `openat2` is unavailable (Linux < 5.6
//! answers `ENOSYS`; an older container seccomp profile answers `EPERM`),
//! the checked path is opened as it is, and each workspace's next tool
//! result says so, once. `docs/decisions/0010-path-policy.md`.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;

/// Mode a directory is created with, before the umask (as `mkdir -p`).
const NEW_DIR_MODE: u32 = 0o777;

/// Whether a path was opened without `openat2`'s check: a fact about this
/// process's kernel, which every workspace's notice reports.
static FELL_BACK: AtomicBool = AtomicBool::new(false);

/// What a tool result says once when `openat2` is unavailable.
pub(crate) const FALLBACK_NOTICE: &str = "openat2 is unavailable here (Linux < 5.6, or blocked by a seccomp filter): paths are confined by the path check alone, without the kernel's second check";

/// Whether `openat2` can be called at all, asked once: a seccomp filter
/// may refuse the system call with `EPERM`, which a real open never gives
/// for a plain `O_PATH` of a directory we already hold.
static OPENAT2: OnceLock<bool> = OnceLock::new();

fn openat2_available(dir: impl AsFd) -> bool {
    *OPENAT2.get_or_init(|| {
        let probe = OpenHow::new().flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC);
        !matches!(
            nix::fcntl::openat2(dir.as_fd(), ".", probe),
            Err(Errno::ENOSYS | Errno::EPERM)
        )
    })
}

/// The working directory, held open: what every approved path is opened
/// beneath. A search holds one for all the files it opens.
pub(crate) struct Root {
    fd: OwnedFd,
    /// Its real path, the prefix of every path the policy returns.
    real: std::path::PathBuf,
}

impl Root {
    /// Opens the working directory `root` (`O_PATH`).
    pub(crate) fn open(root: &Path) -> io::Result<Root> {
        let real = root.canonicalize()?;
        let fd = nix::fcntl::open(
            &real,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root { fd, real })
    }

    /// `real` relative to the root; a path outside is a policy bug and
    /// opens nothing.
    fn relative<'a>(&self, real: &'a Path) -> io::Result<&'a Path> {
        real.strip_prefix(&self.real).map_err(|_| left_the_root())
    }
}

/// Opens `real`, a path the policy returned for `root`, beneath `root`.
pub(crate) fn open(root: &Path, real: &Path, flags: OFlag) -> io::Result<OwnedFd> {
    let root = Root::open(root)?;
    open_at(&root.fd, root.relative(real)?, flags, Mode::empty())
}

/// Opens `real` for reading, and only if it is a regular file: never a
/// link (`O_NOFOLLOW`), never blocking on a FIFO swapped in after the
/// caller's checks (`O_NONBLOCK`, which a regular file ignores).
pub(crate) fn open_regular(root: &Path, real: &Path) -> io::Result<File> {
    Root::open(root)?.open_regular(real)
}

impl Root {
    /// [`open_regular`] beneath this held root.
    pub(crate) fn open_regular(&self, real: &Path) -> io::Result<File> {
        let fd = open_at(
            &self.fd,
            self.relative(real)?,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(file)
    }
}

/// The directory holding `real` (opened beneath `root`, as a handle to
/// create and rename in) and `real`'s name in it.
pub(crate) fn parent<'a>(root: &Path, real: &'a Path) -> io::Result<(OwnedFd, &'a OsStr)> {
    let (dir, name) = split(real)?;
    Ok((open(root, dir, OFlag::O_PATH | OFlag::O_DIRECTORY)?, name))
}

/// [`parent`], creating the directories that are missing one name at a
/// time, each opened beneath the one before.
pub(crate) fn create_parent<'a>(root: &Path, real: &'a Path) -> io::Result<(OwnedFd, &'a OsStr)> {
    let (parent, name) = split(real)?;
    let root = Root::open(root)?;
    let mut dir = root.fd.try_clone()?;
    for comp in root.relative(parent)?.components() {
        let Component::Normal(name) = comp else {
            return Err(left_the_root());
        };
        match nix::sys::stat::mkdirat(&dir, name, Mode::from_bits_truncate(NEW_DIR_MODE)) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = open_at(
            &dir,
            Path::new(name),
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )?;
    }
    Ok((dir, name))
}

/// A path's directory and name.
fn split(real: &Path) -> io::Result<(&Path, &OsStr)> {
    real.parent()
        .zip(real.file_name())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))
}

/// Whether a path was opened by the fallback, without the kernel's
/// check.
pub(crate) fn fell_back() -> bool {
    FELL_BACK.load(Ordering::Acquire)
}

/// `openat2` beneath `dir`; the plain `openat` of the checked path where
/// `openat2` is unavailable.
fn open_at(dir: impl AsFd, rel: &Path, flags: OFlag, mode: Mode) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    if !openat2_available(dir.as_fd()) {
        return open_checked(dir, rel, flags, mode);
    }
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .mode(mode)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    match nix::fcntl::openat2(dir.as_fd(), rel, how) {
        Ok(fd) => Ok(fd),
        Err(Errno::ENOSYS) => open_checked(dir, rel, flags, mode),
        // The walk would have left `dir`.
        Err(Errno::EXDEV) => Err(left_the_root()),
        Err(e) => Err(e.into()),
    }
}

/// The fallback: the path the policy checked, opened as it is.
fn open_checked(dir: impl AsFd, rel: &Path, flags: OFlag, mode: Mode) -> io::Result<OwnedFd> {
    FELL_BACK.store(true, Ordering::Release);
    Ok(nix::fcntl::openat(
        dir.as_fd(),
        rel,
        flags | OFlag::O_CLOEXEC,
        mode,
    )?)
}

/// What the kernel's refusal means to the person and the model.
fn left_the_root() -> io::Error {
    io::Error::other(
        "the path led outside the working directory when it was opened (a link changed after the path check); nothing was done",
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Read;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    use super::*;
    use crate::tools::resolve;

    /// `root/d/secret` (inside) and `outside/secret`, next to each other.
    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("d/secret"), "inside").unwrap();
        std::fs::write(outside.join("secret"), "outside").unwrap();
        (dir, root, outside)
    }

    /// After the policy approved `d/...`, `d` becomes a link to outside.
    fn swap(root: &Path, outside: &Path) {
        std::fs::rename(root.join("d"), root.join("d.old")).unwrap();
        symlink(outside, root.join("d")).unwrap();
    }

    fn refused(result: io::Result<impl std::fmt::Debug>) {
        let err = result.unwrap_err();
        assert!(
            err.to_string()
                .contains("led outside the working directory"),
            "{err}"
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_check_is_not_followed() {
        let (_dir, root, outside) = tree();
        let real = resolve(&root, "d/secret").unwrap();
        swap(&root, &outside);
        // Opening the checked path by name walks the new link out...
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "outside");
        // ...opening it beneath the root does not.
        refused(open_regular(&root, &real));
        refused(open(
            &root,
            &root.join("d"),
            OFlag::O_PATH | OFlag::O_DIRECTORY,
        ));
    }

    #[test]
    fn no_directory_is_created_and_no_parent_opened_through_a_swapped_link() {
        let (_dir, root, outside) = tree();
        let real = resolve(&root, "d/new/deeper/file").unwrap();
        let existing = resolve(&root, "d/secret").unwrap();
        swap(&root, &outside);
        assert!(create_parent(&root, &real).is_err());
        assert!(!outside.join("new").exists());
        refused(parent(&root, &existing));
    }

    #[test]
    fn missing_directories_are_created_beneath_the_root() {
        let (_dir, root, _outside) = tree();
        let real = root.join("a/b/c.txt");
        let (dir, name) = create_parent(&root, &real).unwrap();
        assert_eq!(name, "c.txt");
        assert!(root.join("a/b").is_dir());
        let st = nix::sys::stat::fstat(&dir).unwrap();
        let want = std::fs::metadata(root.join("a/b")).unwrap();
        assert_eq!(st.st_ino, std::os::unix::fs::MetadataExt::ino(&want));
    }

    #[test]
    fn a_path_the_policy_did_not_return_opens_nothing() {
        let (_dir, root, outside) = tree();
        refused(open_regular(&root, &outside.join("secret")));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_dir, root, _outside) = tree();
        let fifo = root.join("pipe");
        nix::unistd::mkfifo(&fifo, Mode::S_IRWXU).unwrap();
        let err = open_regular(&root, &fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn the_fallback_opens_the_checked_path_and_marks_that_it_did() {
        let (_dir, root, _outside) = tree();
        let root_fd = Root::open(&root).unwrap().fd;
        let fd = open_checked(
            &root_fd,
            Path::new("d/secret"),
            OFlag::O_RDONLY,
            Mode::empty(),
        )
        .unwrap();
        let mut text = String::new();
        File::from(fd).read_to_string(&mut text).unwrap();
        assert_eq!(text, "inside");
        assert!(fell_back());
    }
}
