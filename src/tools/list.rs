//! `list_directory`: one directory, sorted, bounded. Only the head of the
//! sorted names is kept and stat'ed, so a directory of a million entries
//! costs a bounded heap, not a million stats. `docs/decisions/0012-file-tools.md`.

use std::collections::BinaryHeap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Map, Value, json};

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
    let entries = std::fs::read_dir(&real).map_err(|e| io_failure(TOOL, path, "list", &e))?;
    // A max-heap of the smallest names seen: memory stays at the cap
    // whatever the directory holds.
    let mut head: BinaryHeap<Vec<u8>> = BinaryHeap::with_capacity(LIST_MAX_ENTRIES + 1);
    let mut total = 0usize;
    for entry in entries {
        let entry = entry.map_err(|e| io_failure(TOOL, path, "list", &e))?;
        total += 1;
        head.push(entry.file_name().as_bytes().to_vec());
        if head.len() > LIST_MAX_ENTRIES {
            head.pop();
        }
    }
    let names = head.into_sorted_vec();
    let listed: Vec<Value> = names
        .into_iter()
        .map(|name| describe(&real, name))
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
/// whether it may be used.
fn describe(dir: &Path, name: Vec<u8>) -> Value {
    let os_name = <OsString as std::os::unix::ffi::OsStringExt>::from_vec(name);
    let shown = String::from_utf8_lossy(os_name.as_bytes()).into_owned();
    let lossy = std::str::from_utf8(os_name.as_bytes()).is_err();
    let full = dir.join(&os_name);
    let mut out = Map::new();
    match std::fs::symlink_metadata(&full) {
        Ok(meta) if meta.is_dir() => {
            out.insert("name".into(), json!(format!("{shown}/")));
            out.insert("kind".into(), json!("dir"));
        }
        Ok(meta) if meta.file_type().is_symlink() => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("symlink"));
            if let Ok(target) = std::fs::read_link(&full) {
                out.insert(
                    "target".into(),
                    json!(String::from_utf8_lossy(target.as_os_str().as_bytes())),
                );
            }
        }
        Ok(meta) if meta.is_file() => {
            out.insert("name".into(), json!(shown));
            out.insert("kind".into(), json!("file"));
            out.insert("size".into(), json!(meta.len()));
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
