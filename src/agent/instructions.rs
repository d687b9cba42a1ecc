//! Project instructions: `AGENTS.md` (or, in a directory without one,
//! `CLAUDE.md`) in each directory from the project root down to the start
//! directory, read once when the session starts and appended to the
//! system prompt under a heading naming each file. The project root is
//! the nearest directory holding `.git` (a directory or a worktree's
//! file), else the start directory. At most
//! [`INSTRUCTIONS_MAX_BYTES`] of them are read in all.
//! `docs/decisions/0023-slash-commands-and-project-instructions.md`.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The most bytes of instruction files read in all (the files' text, not
/// the headings); what is past it is left out and [`cut_marker`] says so.
/// ADR 0023.
pub const INSTRUCTIONS_MAX_BYTES: usize = 32 * 1024;

/// The file names looked for in each directory, in order: the first one
/// found is that directory's instructions.
pub const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The line that ends the instructions when the cap cut them.
pub fn cut_marker() -> String {
    format!(
        "[the rest of the project instructions was left out: they exceed {} KiB]",
        INSTRUCTIONS_MAX_BYTES / 1024
    )
}

/// A file that was found but could not be read; it is left out and the
/// session goes on.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the project instructions in {file}: {source}; they were left out")]
pub struct Unreadable {
    /// The file, relative to the project root.
    pub file: String,
    /// Why.
    pub source: io::Error,
}

/// What was read at session start.
#[derive(Debug, Default)]
pub struct Instructions {
    /// The section appended to the system prompt; empty when no file was
    /// found.
    pub text: String,
    /// The files read, relative to the project root, outermost first.
    pub files: Vec<String>,
    /// Whether the cap cut them.
    pub cut: bool,
    /// The files that could not be read.
    pub unreadable: Vec<Unreadable>,
}

impl Instructions {
    /// The log's notice naming the files read, and whether the cap cut
    /// them; `None` when none was read.
    pub fn notice(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let cut = if self.cut {
            format!(
                " (cut at {} KiB: the rest was left out)",
                INSTRUCTIONS_MAX_BYTES / 1024
            )
        } else {
            String::new()
        };
        Some(format!(
            "project instructions loaded: {}{cut}",
            self.files.join(", ")
        ))
    }
}

/// The project root for `start`: the nearest directory, `start` itself or
/// above, that holds `.git`; `start` when none does.
pub fn project_root(start: &Path) -> &Path {
    start
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(start)
}

/// Reads the instructions for a session started in `start` (a real,
/// absolute path). Blocking: run it off the async threads.
pub fn read(start: &Path) -> Instructions {
    let root = project_root(start);
    let mut dirs: Vec<&Path> = start
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .collect();
    dirs.reverse();
    let mut found = Instructions::default();
    let mut sections = Vec::new();
    let mut left = INSTRUCTIONS_MAX_BYTES;
    for dir in dirs {
        let Some((path, opened)) = open_first(dir) else {
            continue;
        };
        let file = relative(root, &path);
        let mut bytes = Vec::new();
        // One byte more than fits tells a file that fits exactly from one
        // that does not.
        let read = opened.and_then(|f| f.take(left as u64 + 1).read_to_end(&mut bytes));
        if let Err(source) = read {
            found.unreadable.push(Unreadable { file, source });
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let kept = text.floor_char_boundary(left);
        found.cut = kept < text.len();
        left -= kept;
        if kept > 0 {
            sections.push(format!("## {file}\n\n{}", text[..kept].trim_end()));
            found.files.push(file);
        }
        if found.cut {
            sections.push(cut_marker());
            break;
        }
    }
    if !sections.is_empty() {
        found.text = format!(
            "\n\n# Project instructions\n\nThe project gives these instructions (outermost directory first; a nearer one wins where they differ).\n\n{}",
            sections.join("\n\n")
        );
    }
    found
}

/// The first of [`FILE_NAMES`] in `dir` that exists, opened (or why it
/// could not be). Only a regular file is opened: a FIFO would block the
/// read forever, a device never end.
fn open_first(dir: &Path) -> Option<(PathBuf, io::Result<File>)> {
    FILE_NAMES.iter().find_map(|name| {
        let path = dir.join(name);
        let opened = match std::fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => Err(e),
            Ok(meta) if !meta.is_file() => Err(io::Error::other("not a regular file")),
            Ok(_) => File::open(&path),
        };
        Some((path, opened))
    })
}

/// `path` relative to `root`, as the notice and the headings name it.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
