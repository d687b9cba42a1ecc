//! `list_directory`: one directory, sorted, bounded. Only the head of the
//! sorted names is kept and stat'ed, so a directory of a million entries
//! costs a bounded heap, not a million stats. `docs/decisions/0012-file-tools.md`.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::SFlag;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::FileGuard;

use super::beneath;
use super::failure::ToolFailure;
use super::tool::{Effect, Shown, Tool, on_blocking_pool};
use super::{ToolContext, io_failure, resolve_for};

const TOOL: &str = ListDirectory::NAME;

/// Most entries one listing stat's and returns: the first by byte order of
/// the name. ADR 0007 §2.
pub const LIST_MAX_ENTRIES: usize = 501;

/// A `list_directory` call: one directory's entries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDirectory {
    /// The directory, as the model gave it.
    #[serde(default = "default_path")]
    pub path: String,
}

fn default_path() -> String {
    ".".to_owned()
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
            "List one directory: names sorted bytewise, directories end with `/`, files have sizes, \
             symbolic links show their target. At most {LIST_MAX_ENTRIES} entries (the first by name); \
             `truncated` and `total` say when there are more: use execute_command with find or ls \
             and a filter for the rest. Names that are not UTF-8 are shown lossily and flagged."
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

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<ListDirectoryOutput, ToolFailure> {
        let (path, root) = (self.path.clone(), ctx.root.clone());
        on_blocking_pool(TOOL, cancel, move || list_directory(&root, &path)).await
    }
}

fn list_directory(root: &Path, path: &str) -> Result<ListDirectoryOutput, ToolFailure> {
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
    let entries = names
        .into_iter()
        .map(|name| describe(dir.as_fd(), name))
        .collect();
    Ok(ListDirectoryOutput {
        path: path.to_owned(),
        entries,
        total,
        truncated: total > LIST_MAX_ENTRIES,
    })
}

/// One entry, looked at through the directory's handle, never by path.
fn describe(dir: BorrowedFd<'_>, name: Vec<u8>) -> Entry {
    let os_name = OsStr::from_bytes(&name);
    let shown = String::from_utf8_lossy(&name).into_owned();
    let mut entry = Entry {
        lossy: std::str::from_utf8(&name).is_err(),
        name: shown,
        kind: EntryKind::Unknown,
        size: None,
        target: None,
    };
    let kind = nix::sys::stat::fstatat(dir, os_name, AtFlags::AT_SYMLINK_NOFOLLOW).map(|st| {
        (
            SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()),
            st.st_size,
        )
    });
    match kind {
        Ok((SFlag::S_IFDIR, _)) => {
            entry.name.push('/');
            entry.kind = EntryKind::Dir;
        }
        Ok((SFlag::S_IFLNK, _)) => {
            entry.kind = EntryKind::Symlink;
            entry.target = nix::fcntl::readlinkat(dir, os_name)
                .ok()
                .map(|target| String::from_utf8_lossy(target.as_bytes()).into_owned());
        }
        Ok((SFlag::S_IFREG, size)) => {
            entry.kind = EntryKind::File;
            entry.size = Some(size);
        }
        Ok(_) => entry.kind = EntryKind::Other,
        // Removed between the listing and the stat: still listed, honestly.
        Err(_) => {}
    }
    entry
}
