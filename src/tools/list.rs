//! `list_directory`: one directory, sorted, bounded. Only the head of the
//! sorted names is kept and stat'ed, so a directory of a million entries
//! costs a bounded heap, not a million stats. `docs/decisions/0012-file-tools.md`.

use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::SFlag;
use serde_json::{Map, Value, json};

use super::beneath;
use super::failure::ToolFailure;
use super::{io_failure, resolve_for};

const TOOL: &str = "list_directory";

/// Most entries one listing stat's and returns: the first by byte order of
/// the name. ADR 0007 §2.
pub const LIST_MAX_ENTRIES: usize = 501;

pub(crate) fn list_directory(root: &Path, path: &str) -> Result<Value, ToolFailure> {
    let real = resolve_for(TOOL, root, path)?;
    let meta = std::fs::metadata(&real).map_err(|e| io_failure(TOOL, path, "list", &e))?;
    if !meta.is_dir() {
        return Err(ToolFailure::ExecutionFailed {
            tool: TOOL.to_owned(),
            message: format!("{path} is not a directory; use read_file for a file"),
        });
    }
    let listed = |e: std::io::Error| io_failure(TOOL, path, "list", &e);
    let fd = beneath::open(root, &real, OFlag::O_RDONLY | OFlag::O_DIRECTORY).map_err(listed)?;
    let mut dir = Dir::from_fd(fd).map_err(|e| listed(e.into()))?;
    // A max-heap of the smallest names seen: memory stays at the cap
    // whatever the directory holds.
    let mut head: BinaryHeap<Vec<u8>> = BinaryHeap::with_capacity(LIST_MAX_ENTRIES + 1);
    let mut total = 0usize;
    for entry in dir.iter() {
        let entry = entry.map_err(|e| listed(e.into()))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        total += 1;
        head.push(name.to_vec());
        if head.len() > LIST_MAX_ENTRIES {
            head.pop();
        }
    }
    let names = head.into_sorted_vec();
    let listed: Vec<Value> = names
        .into_iter()
        .map(|name| describe(dir.as_fd(), name))
        .collect();
    Ok(json!({
        "ok": true,
        "path": path,
        "entries": listed,
        "total": total,
        "truncated": total > LIST_MAX_ENTRIES,
    }))
}

/// One entry: `name` (with `/` for a directory), `kind`, `size` for a file,
/// `target` for a link, `lossy` when the name is not UTF-8. Links are not
/// followed: the listing shows where one points, the path policy decides
/// whether it may be used. Entries are looked at through the directory's
/// handle, never by path.
fn describe(dir: BorrowedFd<'_>, name: Vec<u8>) -> Value {
    let os_name = OsStr::from_bytes(&name);
    let shown = String::from_utf8_lossy(&name).into_owned();
    let lossy = std::str::from_utf8(&name).is_err();
    let mut out = Map::new();
    let kind = nix::sys::stat::fstatat(dir, os_name, AtFlags::AT_SYMLINK_NOFOLLOW).map(|st| {
        (
            SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()),
            st.st_size,
        )
    });
    match kind {
        Ok((SFlag::S_IFDIR, _)) => {
            out.insert("name".into(), json!(format!("{shown}/")));
            out.insert("kind".into(), json!("dir"));
        }
        Ok((SFlag::S_IFLNK, _)) => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("symlink"));
            if let Ok(target) = nix::fcntl::readlinkat(dir, os_name) {
                out.insert(
                    "target".into(),
                    json!(String::from_utf8_lossy(target.as_bytes())),
                );
            }
        }
        Ok((SFlag::S_IFREG, size)) => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("file"));
            out.insert("size".into(), json!(size));
        }
        Ok(_) => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("other"));
        }
        // Removed between the listing and the stat: still listed, honestly.
        Err(_) => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("unknown"));
        }
    }
    if lossy {
        out.insert("lossy".into(), json!(true));
    }
    Value::Object(out)
}
