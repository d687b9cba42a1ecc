//! The lock that keeps two dashfloat processes from writing one session:
//! an exclusive `flock` on `<id>.lock` beside the session file, held while
//! the session is open and released when the process ends, however it
//! ends. The lock file holds the holder's pid, for the refusal's message.
//! It is never removed: removing it could let two processes lock two
//! different files of one name. ADR 0022.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::SessionError;

/// The lock file's mode: the owner's only.
const LOCK_MODE: u32 = 0o600;
/// The most bytes of a lock file read for its holder's pid (a pid has at
/// most 10 digits). ADR 0022.
const HOLDER_MAX_BYTES: u64 = 32;

/// A session locked by this process; dropping it releases the lock.
#[derive(Debug)]
pub struct SessionLock {
    _lock: Flock<File>,
}

impl SessionLock {
    /// Locks `path` (creating it), without waiting: a session another
    /// process holds is refused at once.
    pub(super) fn acquire(path: &Path, id: &str) -> Result<SessionLock, SessionError> {
        let failed = |source| SessionError::Lock {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(LOCK_MODE)
            .open(path)
            .map_err(failed)?;
        let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((mut file, Errno::EWOULDBLOCK)) => {
                return Err(SessionError::Locked {
                    id: id.to_string(),
                    holder: holder(&mut file),
                });
            }
            Err((_, errno)) => return Err(failed(std::io::Error::from(errno))),
        };
        lock.set_len(0)
            .and_then(|()| lock.rewind())
            .and_then(|()| write!(*lock, "{}", std::process::id()))
            .map_err(failed)?;
        Ok(SessionLock { _lock: lock })
    }
}

/// The pid a lock file names, if it names one.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.take(HOLDER_MAX_BYTES).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::{Seek, Write};

    use super::*;

    /// Only the first `HOLDER_MAX_BYTES` are read: what follows them,
    /// however much, is never looked at.
    #[test]
    fn the_holder_is_read_from_the_first_bytes_only() {
        let mut file = tempfile::tempfile().unwrap();
        let pid = "12345";
        let padding = " ".repeat(HOLDER_MAX_BYTES as usize - pid.len());
        write!(file, "{pid}{padding}9{}", "9".repeat(1 << 20)).unwrap();
        file.rewind().unwrap();
        assert_eq!(holder(&mut file), Some(12345));
    }
}
