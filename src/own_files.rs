//! dashfloat's own small files in its configuration directory — saved
//! sessions (ADR 0022) and remembered approvals (ADR 0044): a directory
//! only the owner may enter, a file replaced atomically, a file read
//! within a bound and without blocking. Imports nothing of the crate.

use std::fs::{DirBuilder, File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of dashfloat's directories: the owner's only.
pub const DIR_MODE: u32 = 0o700;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read, or is no regular file.
    #[error("{0}")]
    Io(io::Error),
    /// The file is larger than the bound it is read within.
    #[error("it holds {0} bytes, more than is ever written there")]
    TooLarge(u64),
}

/// Makes `dir` (and its parents) if missing, and makes it the owner's
/// only.
pub fn make_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .and_then(|()| std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE)))
}

/// Writes `bytes` to `path` through a temporary file (0600, its name
/// starting with `prefix`) in `dir`: write, fsync, rename over the old
/// file, fsync the directory so the rename itself survives a crash. A
/// reader sees the old content or the new, never half.
pub fn write_atomically(dir: &Path, path: &Path, bytes: &[u8], prefix: &str) -> io::Result<()> {
    let mut temp = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    File::open(dir).and_then(|d| d.sync_all())
}

/// The bytes of the regular file `path`, `None` when there is none;
/// refused past `max` bytes (a file growing while read is cut there).
/// Opened without blocking, so a FIFO in its place cannot hang the read.
pub fn read_bounded(path: &Path, max: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path);
    let file = match file {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        other => other.map_err(ReadError::Io)?,
    };
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::Io(io::Error::other("not a regular file")));
    }
    let bytes = meta.len();
    if bytes > max {
        return Err(ReadError::TooLarge(bytes));
    }
    let mut read = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
    file.take(max)
        .read_to_end(&mut read)
        .map_err(ReadError::Io)?;
    Ok(Some(read))
}
