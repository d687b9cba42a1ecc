//! The check that makes "what was approved is what lands" true: a preview
//! records what the target file looked like ([`FileGuard`]), and the
//! approved write happens only if the file still looks like that. A file
//! changed in between (by the person, a build, another tool) fails the call
//! with a clear error instead of writing something nobody saw.

use std::hash::Hasher;
use std::io::Read;

use crate::protocol::FileGuard;

use super::Workspace;
use super::failure::ToolFailure;

/// The piece size both hashing paths feed the hasher, so hashing bytes in
/// memory and hashing a file as it is read give the same value.
const HASH_CHUNK_BYTES: usize = 64 * 1024;

/// A stable hash of file content (SipHash with fixed keys: stable within
/// and across runs of the same build, which is all a guard needs).
pub(crate) fn content_hash(data: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    for chunk in data.chunks(HASH_CHUNK_BYTES) {
        hasher.write(chunk);
    }
    hasher.finish()
}

/// The guard for a whole file as it is now (`real`, in `ws`), hashed in
/// bounded pieces so a large file costs no memory.
pub(crate) fn guard_of(ws: &dyn Workspace, real: &std::path::Path) -> std::io::Result<FileGuard> {
    let mut file = match ws.open_regular(real) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileGuard::Absent),
        Err(e) => return Err(e),
    };
    let mut hasher = std::hash::DefaultHasher::new();
    let mut buf = vec![0u8; HASH_CHUNK_BYTES];
    loop {
        // Fill whole pieces (a read may return fewer bytes) so the pieces
        // match `content_hash`'s.
        let mut filled = 0;
        while filled < buf.len() {
            match file.read(&mut buf[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        if filled == 0 {
            break;
        }
        hasher.write(&buf[..filled]);
        if filled < buf.len() {
            break;
        }
    }
    Ok(FileGuard::Content(hasher.finish()))
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
