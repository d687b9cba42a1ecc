//! `list_directory`: one directory, sorted, bounded. Only the head of the
//! sorted names is kept and stat'ed, so a directory of a million entries
//! costs a bounded heap, not a million stats. `docs/decisions/0012-file-tools.md`.

use std::borrow::Cow;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, ToolStatus};

use super::failure::ToolFailure;
use super::tool::{Effect, Shown, Tool, on_blocking_pool};
use super::{FileKind, Listed, ToolContext, Workspace, io_failure, missing_failure, resolve_for};

const TOOL: &str = ListDirectory::NAME;

/// Most entries one listing stat's and returns: the first by byte order of
/// the name. ADR 0007 §2.
pub const LIST_MAX_ENTRIES: usize = 501;

/// A `list_directory` call: one directory's entries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDirectory {
    /// The directory, as the model gave it.
    #[serde(default = "super::here")]
    pub path: String,
}

/// The head of a directory's sorted names, and how many there are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListDirectoryOutput {
    /// The directory, as the model gave it.
    pub path: String,
    /// The first [`LIST_MAX_ENTRIES`] entries by byte order of the name.
    pub entries: Vec<Entry>,
    /// Entries in the directory.
    pub total: usize,
    /// There are more entries than listed.
    pub truncated: bool,
    /// Says outright that the directory is empty: the 1.5B read an empty
    /// `entries` as "the directory does not exist".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
}

/// One entry of a listing. Links are not followed: the listing shows where
/// one points, the path policy decides whether it may be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The name, lossy when it is not UTF-8, with `/` for a directory.
    pub name: String,
    /// What the entry is.
    pub kind: EntryKind,
    /// A regular file's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// Where a link points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The name is not UTF-8; `name` replaced what is not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
}

/// What kind of file an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A regular file.
    File,
    /// A FIFO, socket or device.
    Other,
    /// Removed between the listing and the stat: still listed, honestly.
    Unknown,
}

impl Shown for ListDirectoryOutput {
    fn status(&self) -> ToolStatus {
        ToolStatus::ok_unless_empty(self.total == 0, || "empty directory".into())
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(
            self.entries
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// Keeps the first entries that fit; `truncated` and `total` say the
    /// rest exist. ADR 0021.
    fn cut(&mut self, max_bytes: usize) -> bool {
        let mut size = 0;
        let keep = self
            .entries
            .iter()
            .take_while(|e| {
                size += e.name.len() + LIST_ENTRY_OVERHEAD_BYTES;
                size <= max_bytes
            })
            .count();
        if keep == self.entries.len() {
            return false;
        }
        self.entries.truncate(keep);
        self.truncated = true;
        true
    }
}

/// What one entry costs beyond its name in the JSON the model reads
/// (`{"name":…,"kind":"file","size":1234}`), for [`Shown::cut`].
const LIST_ENTRY_OVERHEAD_BYTES: usize = 40;

impl Tool for ListDirectory {
    const NAME: &'static str = "list_directory";
    const EFFECT: Effect = Effect::Reads;
    type Output = ListDirectoryOutput;

    fn description() -> String {
        format!(
            "List the files and folders in one folder (folders end with `/`); `.` is the project \
             itself. At most {LIST_MAX_ENTRIES} entries; `truncated` says there are more."
        )
    }

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "default": ".",
                    "description": "The directory to list, relative to the working directory (or absolute inside it)."
                }
            },
            "additionalProperties": false
        })
    }

    fn summary(&self) -> String {
        self.path.clone()
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<ListDirectoryOutput, ToolFailure> {
        let (path, ws) = (self.path.clone(), Arc::clone(&ctx.workspace));
        on_blocking_pool(TOOL, cancel, move || list_directory(ws.as_ref(), &path)).await
    }
}

fn list_directory(ws: &dyn Workspace, path: &str) -> Result<ListDirectoryOutput, ToolFailure> {
    let real = resolve_for(TOOL, ws, path)?;
    let meta = ws
        .stat(&real)
        .map_err(|e| missing_failure(TOOL, ws, path, "list", &e))?;
    if !meta.is_dir() {
        return Err(ToolFailure::ExecutionFailed {
            tool: TOOL.to_owned(),
            message: format!("{path} is not a directory; use read_file for a file"),
        });
    }
    let listing = ws
        .list(&real, LIST_MAX_ENTRIES)
        .map_err(|e| io_failure(TOOL, path, "list", &e))?;
    Ok(ListDirectoryOutput {
        path: path.to_owned(),
        entries: listing.entries.into_iter().map(entry).collect(),
        total: listing.total,
        truncated: listing.total > LIST_MAX_ENTRIES,
        note: (listing.total == 0).then_some(EMPTY_DIRECTORY_NOTE),
    })
}

/// What the model reads of a directory with nothing in it.
const EMPTY_DIRECTORY_NOTE: &str = "the directory exists and is empty";

/// One listed name as the model reads it.
fn entry(listed: Listed) -> Entry {
    let name = listed.name.as_bytes();
    let mut entry = Entry {
        lossy: std::str::from_utf8(name).is_err(),
        name: String::from_utf8_lossy(name).into_owned(),
        kind: EntryKind::Unknown,
        size: None,
        target: None,
    };
    match listed.stat.map(|stat| (stat.kind, stat.len)) {
        Some((FileKind::Dir, _)) => {
            entry.name.push('/');
            entry.kind = EntryKind::Dir;
        }
        Some((FileKind::Symlink, _)) => {
            entry.kind = EntryKind::Symlink;
            entry.target = listed
                .target
                .map(|target| String::from_utf8_lossy(target.as_bytes()).into_owned());
        }
        Some((FileKind::File, size)) => {
            entry.kind = EntryKind::File;
            entry.size = Some(i64::try_from(size).unwrap_or(i64::MAX));
        }
        Some((FileKind::Other, _)) => entry.kind = EntryKind::Other,
        // Removed between the listing and the look: still listed, honestly.
        None => {}
    }
    entry
}
