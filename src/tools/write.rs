//! `write_file`: create or replace a whole file, atomically, keeping an
//! existing file's mode. `docs/decisions/0012-file-tools.md`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::protocol::FileGuard;

use super::atomic::write_atomic;
use super::beneath;
use super::failure::ToolFailure;
use super::guard::{check, guard_of};
use super::read::count_lines;
use super::{io_failure, resolve_for};

const TOOL: &str = "write_file";

pub(crate) fn write_file(
    root: &Path,
    path: &str,
    content: &str,
    guard: FileGuard,
) -> Result<Value, ToolFailure> {
    let real = resolve_for(TOOL, root, path)?;
    let existing = match std::fs::symlink_metadata(&real) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_failure(TOOL, path, "write", &e)),
    };
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(failed(format!(
                "{path} is a directory; give a file path inside it"
            )));
        }
        // The resolved path has no links left; a link here now, a FIFO or a
        // device is not something to replace with a regular file.
        if !meta.is_file() {
            return Err(failed(format!(
                "{path} is not a regular file; it is left as it is"
            )));
        }
    }
    if guard != FileGuard::Unguarded {
        let now = guard_of(root, &real).map_err(|e| io_failure(TOOL, path, "read", &e))?;
        check(TOOL, path, guard, now)?;
    }
    let (dir, name) = beneath::create_parent(root, &real)
        .map_err(|e| io_failure(TOOL, path, "create the directories of", &e))?;
    let mode = existing.as_ref().map(|m| m.permissions().mode());
    write_atomic(&dir, name, content.as_bytes(), mode)
        .map_err(|e| io_failure(TOOL, path, "write", &e))?;
    Ok(json!({
        "ok": true,
        "path": path,
        "action": if existing.is_some() { "replaced" } else { "created" },
        "bytes": content.len(),
        "lines": count_lines(content.as_bytes()),
    }))
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: TOOL.to_owned(),
        message,
    }
}
