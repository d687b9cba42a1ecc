//! Project instructions: `AGENTS.md` (or, in a directory without one,
//! `CLAUDE.md`) in each directory from the project root down to the start
//! directory, read once when the session starts and appended to the
//! system prompt under a heading naming each file. The project root is
//! the top of the work tree git finds from the start directory (the
//! git that commands run, asked as the read-only analyser asks it), else
//! the start directory. Each file is read as `read_file` reads one,
//! with the project root as the root: through the path policy and
//! beneath the root, a link that leads out of it, a FIFO or a device
//! left out with a notice. At most [`INSTRUCTIONS_MAX_BYTES`] of them
//! are read in all.
//! `docs/decisions/0023-slash-commands-and-project-instructions.md`.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::tools::{ANALYSER_RUN_ENV, LocalWorkspace, Workspace, with_settings, work_tree};

/// The most bytes of instruction files read in all (the files' text, not
/// the headings); what is past it is left out and [`cut_marker`] says so.
/// ADR 0023.
pub const INSTRUCTIONS_MAX_BYTES: usize = 32 * 1024;

/// The file names looked for in each directory, in order: the first one
/// found is that directory's instructions.
const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The line that ends the instructions when the cap cut them.
pub fn cut_marker() -> String {
    format!(
        "[the rest of the project instructions was left out: they exceed {} KiB]",
        INSTRUCTIONS_MAX_BYTES / 1024
    )
}

/// A file that was found but not read; it is left out and the session
/// goes on.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the project instructions in {file}: {why}; they were left out")]
pub struct Unreadable {
    /// The file, relative to the project root.
    pub file: String,
    /// Why: the path policy's refusal, or the open's or read's error.
    pub why: String,
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

/// The project root for a session started in `ws`'s root: the top of the
/// work tree git finds there, asked with `env` (the commands' environment)
/// as the read-only analyser asks it, when that is the start directory or
/// above it; else the start directory. Both as real paths.
pub fn project_root(ws: &dyn Workspace, env: Vec<(OsString, OsString)>) -> PathBuf {
    let start = start(ws);
    let env = with_settings(env, ANALYSER_RUN_ENV);
    work_tree(ws, &start, &env)
        .filter(|top| start.starts_with(top))
        .unwrap_or(start)
}

/// Reads the instructions for a session started in `ws`'s root, from its
/// [`project_root`] down, each file beneath the project root. `env` is
/// the commands' environment, with which git is asked. Blocking: run it
/// off the async threads.
pub fn read(ws: &dyn Workspace, env: Vec<(OsString, OsString)>) -> Instructions {
    let root = project_root(ws, env);
    read_beneath(&root, &start(ws))
}

/// The start directory's real path.
fn start(ws: &dyn Workspace) -> PathBuf {
    ws.real_path(ws.root())
        .unwrap_or_else(|_| ws.root().to_path_buf())
}

/// [`read`] for a project root `root` (`start` or above it).
fn read_beneath(root: &Path, start: &Path) -> Instructions {
    let ws = LocalWorkspace::new(root);
    let mut dirs: Vec<&Path> = start
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .collect();
    dirs.reverse();
    let mut found = Instructions::default();
    let mut sections = Vec::new();
    let mut left = INSTRUCTIONS_MAX_BYTES;
    for dir in dirs {
        let Some((file, text)) = read_first(&ws, root, dir, left, &mut found.unreadable) else {
            continue;
        };
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

/// The first of [`FILE_NAMES`] in `dir` that exists, by its name relative
/// to `root`, and at most `left` bytes of its text and one more (which
/// tells a file that fits exactly from one that does not). A file the
/// path policy refuses, or that is not a regular file (a FIFO would block
/// the read forever, a device never end), goes to `unreadable` and ends
/// the look in `dir`.
fn read_first(
    ws: &LocalWorkspace,
    root: &Path,
    dir: &Path,
    left: usize,
    unreadable: &mut Vec<Unreadable>,
) -> Option<(String, String)> {
    for name in FILE_NAMES {
        let file = relative(root, &dir.join(name));
        let refused = |why: String| Unreadable {
            file: file.clone(),
            why,
        };
        if ws.lstat(&dir.join(name)).is_err() {
            continue;
        }
        let real = match ws.resolve(&file) {
            Ok(real) => real,
            Err(e) => {
                unreadable.push(refused(e.to_string()));
                return None;
            }
        };
        let mut bytes = Vec::new();
        let read = ws
            .open_regular(&real)
            .and_then(|f| f.take(left as u64 + 1).read_to_end(&mut bytes));
        if let Err(e) = read {
            unreadable.push(refused(e.to_string()));
            return None;
        }
        return Some((file, String::from_utf8_lossy(&bytes).into_owned()));
    }
    None
}

/// `path` relative to `root`, as the notice and the headings name it.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
