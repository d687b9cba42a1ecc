//! The overview's reads: each file through the workspace (the path policy,
//! beneath the root, a regular file only, never blocking on a FIFO), at
//! most [`FILE_MAX_BYTES`] of it, and at most [`LOOKS_MAX`] files looked
//! for per overview. A file that cannot be read is a fact left out, never
//! an error.

use std::cell::Cell;
use std::io::Read;

use crate::tools::Workspace;

/// The most bytes read of one file (64 KiB): a manifest, a version module
/// or a README's opening is far smaller. A manifest longer than this is
/// not parsed, and its facts are left out.
pub(super) const FILE_MAX_BYTES: u64 = 64 * 1024;

/// The most files one overview looks for, found or not (32): the
/// manifests, a README, a Makefile, a test file, and the version modules
/// a Python package may state its version in. What would need more is
/// left out.
pub(super) const LOOKS_MAX: usize = 32;

/// Reads the project's small files for one overview, counting the looks.
pub(super) struct Reader<'a> {
    ws: &'a dyn Workspace,
    left: Cell<usize>,
}

impl<'a> Reader<'a> {
    /// A reader of `ws`'s files, with [`LOOKS_MAX`] looks to make.
    pub(super) fn new(ws: &'a dyn Workspace) -> Self {
        Reader {
            ws,
            left: Cell::new(LOOKS_MAX),
        }
    }

    /// The first [`FILE_MAX_BYTES`] of `path` (relative to the root) as
    /// text, bytes that are not UTF-8 replaced; `None` when it is not a
    /// regular file, cannot be read, or the looks are used up.
    pub(super) fn head(&self, path: &str) -> Option<String> {
        self.read(path).map(|(text, _)| text)
    }

    /// `path`'s text as [`Reader::head`] reads it, but only when the whole
    /// file fits: a manifest to parse.
    pub(super) fn whole(&self, path: &str) -> Option<String> {
        self.read(path)
            .filter(|(_, cut)| !cut)
            .map(|(text, _)| text)
    }

    /// The text and whether the file was longer.
    fn read(&self, path: &str) -> Option<(String, bool)> {
        let left = self.left.get().checked_sub(1)?;
        self.left.set(left);
        let real = self.ws.resolve(path).ok()?;
        let mut bytes = Vec::new();
        self.ws
            .open_regular(&real)
            .ok()?
            .take(FILE_MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        let cut = bytes.len() as u64 > FILE_MAX_BYTES;
        bytes.truncate(FILE_MAX_BYTES as usize);
        Some((String::from_utf8_lossy(&bytes).into_owned(), cut))
    }
}
