//! Atomic replacement of a file: write an exclusive temp file in the
//! target's own directory, then rename it over the target. A reader sees the
//! old or the new content, never half; a crash leaves at worst a stray temp.
//! Hand-made rather than `tempfile`'s, because every step is relative to a
//! directory handle opened beneath the root, which `tempfile` cannot do.
//! ADR 0007 §2, recorded in `docs/decisions/0012-file-tools.md`.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::PermissionsExt;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use nix::unistd::UnlinkatFlags;

/// Attempts at a fresh random temp name before giving up; a collision of
/// 64 random bits means something is creating names on purpose.
const TEMP_NAME_ATTEMPTS: usize = 8;
/// Permission bits kept from the file being replaced. Set-id and sticky
/// bits are dropped, as the kernel drops them when an unprivileged writer
/// modifies a file. ADR 0012.
const PRESERVED_MODE_BITS: u32 = 0o777;
/// Mode a new file is created with, before the umask (as `open(2)` does for
/// a plain create).
const NEW_FILE_MODE: u32 = 0o666;
/// Mode of the temp file while it holds partial content of a file whose
/// final mode is set before the rename.
const PRIVATE_TEMP_MODE: u32 = 0o600;

/// Removes the temp file unless the rename consumed it, so no failure path
/// leaves one behind.
struct TempGuard<'a> {
    dir: BorrowedFd<'a>,
    name: Option<OsString>,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = nix::unistd::unlinkat(self.dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// Writes `data` to the file `name` in the directory `dir` atomically.
/// `mode` is the existing file's mode to keep (`None` for a new file).
/// Everything happens relative to `dir`, a handle the caller opened
/// beneath the root, so no path is walked again.
pub(crate) fn write_atomic(
    dir: impl AsFd,
    name: &OsStr,
    data: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let dir = dir.as_fd();
    let (mut file, temp) = create_temp(dir, mode.map_or(NEW_FILE_MODE, |_| PRIVATE_TEMP_MODE))?;
    let mut guard = TempGuard {
        dir,
        name: Some(temp.clone()),
    };
    file.write_all(data)?;
    if let Some(mode) = mode {
        file.set_permissions(Permissions::from_mode(mode & PRESERVED_MODE_BITS))?;
    }
    // Without the flush to disk, a crash after the rename can leave an
    // empty file where the old content was.
    file.sync_all()?;
    drop(file);
    nix::fcntl::renameat(dir, temp.as_os_str(), dir, name)?;
    guard.name = None;
    Ok(())
}

/// O_CREAT|O_EXCL with a random name: a link pre-placed at the name makes
/// the open fail instead of being followed, and the name cannot be guessed
/// to be pre-placed in the first place.
fn create_temp(dir: BorrowedFd<'_>, mode: u32) -> io::Result<(File, OsString)> {
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let temp = OsString::from(format!(".dashfloat-{:016x}.tmp", random_u64()?));
        match nix::fcntl::openat(
            dir,
            temp.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        ) {
            Ok(fd) => return Ok((File::from(fd), temp)),
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a fresh temporary file next to the target",
    ))
}

/// 64 bits from the kernel's CSPRNG.
fn random_u64() -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(u64::from_ne_bytes(bytes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn open_dir(dir: &std::path::Path) -> std::os::fd::OwnedFd {
        nix::fcntl::open(dir, OFlag::O_PATH | OFlag::O_DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn a_rename_that_fails_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("occupied");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "k").unwrap();
        // rename(2) of a file over a non-empty directory fails after the
        // temp was created and written.
        assert!(write_atomic(open_dir(dir.path()), OsStr::new("occupied"), b"data", None).is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("occupied")]);
    }

    #[test]
    fn a_new_file_gets_the_umask_mode_and_no_temp_remains() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new");
        write_atomic(open_dir(dir.path()), OsStr::new("new"), b"data", None).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"data");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
