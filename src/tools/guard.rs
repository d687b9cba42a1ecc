//! The check that makes "what was approved is what lands" true: a preview
//! records what the target file looked like ([`FileGuard`]), and the
//! approved write happens only if the file still looks like that. A file
//! changed in between (by the person, a build, another tool) fails the call
//! with a clear error instead of writing something nobody saw.

use std::io::Read;

use crate::protocol::FileGuard;
use crate::stable_hash::{ContentHash, HashKind, StreamingHash};

use super::Workspace;
use super::failure::ToolFailure;

/// The piece size a file is read in to be hashed, so a large file costs
/// no memory.
const HASH_CHUNK_BYTES: usize = 64 * 1024;

/// The guard for a whole file as it is now (`real`, in `ws`): its hash as
/// this dashfloat makes it, or that there is no file.
pub(crate) fn guard_of(ws: &dyn Workspace, real: &std::path::Path) -> std::io::Result<FileGuard> {
    Ok(match file_hash(ws, real, HashKind::Xxh3)? {
        Some(hash) => FileGuard::Content(hash),
        None => FileGuard::Absent,
    })
}

/// The hash of the file `real` as it is now, by the function `kind`
/// ([`None`]: no file), read in bounded pieces.
pub(crate) fn file_hash(
    ws: &dyn Workspace,
    real: &std::path::Path,
    kind: HashKind,
) -> std::io::Result<Option<ContentHash>> {
    let mut file = match ws.open_regular(real) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut hasher = StreamingHash::new(kind);
    let mut buf = vec![0u8; HASH_CHUNK_BYTES];
    loop {
        match file.read(&mut buf)? {
            0 => break,
            n => hasher.write(&buf[..n]),
        }
    }
    Ok(Some(hasher.finish()))
}

/// Fails unless `now` (the guard of the file as it is now) matches the
/// guard recorded by the preview.
pub(crate) fn check(
    tool: &str,
    path: &str,
    previewed: FileGuard,
    now: FileGuard,
) -> Result<(), ToolFailure> {
    if previewed == FileGuard::Unguarded || previewed == now {
        Ok(())
    } else {
        Err(ToolFailure::ExecutionFailed {
            tool: tool.to_owned(),
            message: format!(
                "{path} changed after the change was previewed and approved; nothing was written. Read it again and redo the change"
            ),
        })
    }
}
