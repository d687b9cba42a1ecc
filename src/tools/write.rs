//! `write_file`: create or replace a whole file, atomically, keeping an
//! existing file's mode. `docs/decisions/0012-file-tools.md`.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, PreviewKind, ToolStatus};

use super::checkpoint::{FileState, state_of};
use super::edit::EDIT_MAX_FILE_BYTES;
use super::failure::ToolFailure;
use super::guard::{check, guard_of};
use super::preview::{LineChanges, count, diff, heading, line, shown};
use super::read::count_lines;
use super::syntax::{self, SyntaxErrors};
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::{Parents, ToolContext, WriteError, io_failure, landed, resolve_for};
use crate::stable_hash::content_hash;

const TOOL: &str = WriteFile::NAME;

/// A `write_file` call: create or replace a whole file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// The file, as the model gave it.
    pub path: String,
    /// The complete new content.
    pub content: String,
    /// The model means to replace most of an existing file: allowed, and
    /// then always put to the person (ADR 0046).
    #[serde(default)]
    pub replace_whole_file: bool,
}

/// The fewest lines a file must have for a write that drops most of them
/// to be refused (20): a shorter file is one a rewrite may well replace,
/// and one a person sees whole in the preview.
pub const WIPE_MIN_LINES: usize = 20;

/// What `write_file` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteFileOutput {
    /// The file, as the model gave it.
    pub path: String,
    /// Whether the file was new.
    pub action: WriteAction,
    /// What changed, in a line: lines added and removed, and how many
    /// the file has now.
    pub changed: String,
    /// Bytes written.
    pub bytes: usize,
    /// The syntax errors the write left in the file (ADR 0047).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syntax_errors: Option<SyntaxErrors>,
}

/// Whether a write made a new file or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteAction {
    /// There was no file.
    Created,
    /// A file was there; its mode was kept.
    Replaced,
}

impl Shown for WriteFileOutput {
    fn status(&self) -> ToolStatus {
        syntax::status(self.syntax_errors.as_ref())
    }
}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const EFFECT: Effect = Effect::WritesFiles;
    const HIDDEN: &'static [&'static str] = &["replace_whole_file"];
    type Output = WriteFileOutput;

    fn description() -> String {
        "Create a new file with `content`. To change or add to an existing file use edit_file: \
             write_file replaces all of it. Needs the person's approval; if rejected, ask what \
             they want instead."
            .to_owned()
    }

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": path_parameter("The file to write"),
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file."
                },
                "replace_whole_file": {
                    "type": "boolean",
                    "default": false,
                    "description": "Only if the person asked to replace the file whole; they are asked."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn summary(&self) -> String {
        format!(
            "{} ({})",
            self.path,
            count(self.content.lines().count(), "line")
        )
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    fn written_path(&self) -> Option<&str> {
        Some(&self.path)
    }

    /// The new file whole, or the diff against the current one.
    fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
        let (ws, path, content) = (ctx.workspace.as_ref(), &self.path, &self.content);
        let real = resolve_for(TOOL, ws, path)?;
        let target = shown(ws, path, &real);
        let (guard, lines) = match current(ctx, path, &real)? {
            None => {
                let mut lines = heading(
                    format!(
                        "create {target} ({})",
                        count(content.lines().count(), "line")
                    ),
                    ws,
                    &real,
                );
                lines.extend(content.lines().map(|l| line(PreviewKind::Added, l)));
                (FileGuard::Absent, lines)
            }
            Some(Current::Text { old, .. }) => {
                // Nothing to approve: the model is told the file is as it
                // wants it, and the person is not asked about a no-op.
                self.landed(ctx, &real, &old)?;
                if old == content.as_bytes() {
                    return Err(unchanged(path));
                }
                let wipe = self.wipe(path, &old)?;
                let mut lines = heading(format!("replace {target}"), ws, &real);
                if let Some(wipe) = wipe {
                    lines.push(line(
                        PreviewKind::Marker,
                        &format!(
                            "(replaces the whole file: deletes {} of its {} lines)",
                            wipe.deleted, wipe.lines
                        ),
                    ));
                }
                lines.extend(diff(&old, content.as_bytes()));
                (FileGuard::Content(content_hash(&old)), lines)
            }
            Some(Current::Large { .. }) => {
                self.wipe_large(path)?;
                let guard = guard_of(ws, &real).map_err(|e| io_failure(TOOL, path, "read", &e))?;
                let mut lines = heading(format!("replace {target}"), ws, &real);
                lines.push(line(
                    PreviewKind::Marker,
                    &format!(
                        "(the current file is over {} MiB: too large to diff, and /undo cannot restore it; it is replaced whole by:)",
                        EDIT_MAX_FILE_BYTES >> 20
                    ),
                ));
                // What lands is shown whole, as for a new file.
                lines.extend(content.lines().map(|l| line(PreviewKind::Added, l)));
                (guard, lines)
            }
        };
        Ok(Preview { lines, guard })
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        guard: FileGuard,
    ) -> Result<WriteFileOutput, ToolFailure> {
        let (call, ctx) = (self.clone(), ctx.clone());
        on_blocking_pool(TOOL, cancel, move || write_file(&ctx, &call, guard)).await
    }
}

fn write_file(
    ctx: &ToolContext,
    call: &WriteFile,
    guard: FileGuard,
) -> Result<WriteFileOutput, ToolFailure> {
    let (ws, known, path, content) = (
        ctx.workspace.as_ref(),
        &ctx.known,
        call.path.as_str(),
        call.content.as_bytes(),
    );
    let real = resolve_for(TOOL, ws, path)?;
    let existing = current(ctx, path, &real)?;
    let changed = match &existing {
        None => format!("added {}", count(count_lines(content) as usize, "line")),
        Some(Current::Text { old, .. }) => {
            call.landed(ctx, &real, old)?;
            if old == content {
                return Err(unchanged(path));
            }
            call.wipe(path, old)?;
            LineChanges::between(old, content).sentence(count_lines(content))
        }
        Some(Current::Large { .. }) => {
            call.wipe_large(path)?;
            format!(
                "replaced a file over {} MiB; the file has {}",
                EDIT_MAX_FILE_BYTES >> 20,
                count(count_lines(content) as usize, "line")
            )
        }
    };
    if guard != FileGuard::Unguarded {
        let now = guard_of(ws, &real).map_err(|e| io_failure(TOOL, path, "read", &e))?;
        check(TOOL, path, guard, now)?;
    }
    let mode = existing.as_ref().map(Current::mode);
    ctx.checkpoints.capture(ws, &real, || match &existing {
        Some(Current::Text { old, mode }) => FileState::File {
            content: old.clone(),
            mode: *mode,
        },
        Some(Current::Large { .. }) => match ws.lstat(&real) {
            Ok(meta) => state_of(ws, &real, &meta),
            Err(_) => FileState::Absent,
        },
        None => FileState::Absent,
    });
    let made_dirs = if existing.is_none() {
        missing_folders(ws, &real)
    } else {
        Vec::new()
    };
    ws.write_atomic(&real, content, mode, Parents::Create)
        .map_err(|e| match e {
            WriteError::Parents(e) => io_failure(TOOL, path, "create the directories of", &e),
            WriteError::Write(e) => io_failure(TOOL, path, "write", &e),
        })?;
    ctx.checkpoints.landed(ws, &real, content);
    if !made_dirs.is_empty() {
        ctx.checkpoints.made_dirs(ws, &real, &made_dirs);
    }
    known.record(&real);
    Ok(WriteFileOutput {
        path: path.to_owned(),
        action: if existing.is_some() {
            WriteAction::Replaced
        } else {
            WriteAction::Created
        },
        changed,
        bytes: content.len(),
        syntax_errors: syntax::check(path, existing.as_ref().and_then(Current::old), content),
    })
}

/// A write of what the file holds already: nothing to approve or write,
/// and the model is told how to change or add lines, which is what it
/// meant (the suite's 1.5B wrote a guide back unchanged three times when
/// asked to add a section at its top, and notes with the typo still in
/// them when asked to fix it).
fn unchanged(path: &str) -> ToolFailure {
    failed(format!(
        "{path} already holds exactly this content; nothing was written. To change a line, call \
         edit_file with search_block (the line as it is now) and replace_block (as it should \
         be); to add lines, edit_file with insert_at (\"start\", \"end\" or the line to \
         insert after) and only the new lines as replace_block"
    ))
}

/// The file a write would replace, as far as the write needs it.
enum Current {
    /// A regular file of at most [`EDIT_MAX_FILE_BYTES`], read whole.
    Text {
        /// Its content.
        old: Vec<u8>,
        /// Its mode, which the write keeps.
        mode: u32,
    },
    /// A regular file too large to read for a diff.
    Large {
        /// Its mode, which the write keeps.
        mode: u32,
    },
}

impl Current {
    fn mode(&self) -> u32 {
        match self {
            Current::Text { mode, .. } | Current::Large { mode } => *mode,
        }
    }

    /// Its content, when it was read.
    fn old(&self) -> Option<&[u8]> {
        match self {
            Current::Text { old, .. } => Some(old),
            Current::Large { .. } => None,
        }
    }
}

/// What is at `real` now: nothing, or a regular file the model has read
/// (anything else, or an unread file, is refused). One read, so a diff
/// shows exactly the bytes a guard describes; the file may have grown
/// since the stat, and the read stays bounded.
fn current(ctx: &ToolContext, path: &str, real: &Path) -> Result<Option<Current>, ToolFailure> {
    let ws = ctx.workspace.as_ref();
    let meta = match ws.lstat(real) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_failure(TOOL, path, "read", &e)),
    };
    if meta.is_dir() {
        return Err(failed(format!(
            "{path} is a directory; give a file path inside it"
        )));
    }
    // The resolved path has no links left; a link here now, a FIFO or a
    // device is not something to replace with a regular file (and opening
    // a FIFO would block until something wrote to it).
    if !meta.is_file() {
        return Err(failed(format!(
            "{path} is not a regular file; it is left as it is"
        )));
    }
    must_know(ctx, path, real)?;
    if meta.len > EDIT_MAX_FILE_BYTES {
        return Ok(Some(Current::Large { mode: meta.mode }));
    }
    let mut old = Vec::new();
    ws.open_regular(real)
        .and_then(|file| file.take(EDIT_MAX_FILE_BYTES + 1).read_to_end(&mut old))
        .map_err(|e| io_failure(TOOL, path, "read", &e))?;
    if old.len() as u64 > EDIT_MAX_FILE_BYTES {
        return Err(failed(format!(
            "{path} grew while it was read; make the call again"
        )));
    }
    Ok(Some(Current::Text {
        old,
        mode: meta.mode,
    }))
}

/// A write that would delete most of a file of [`WIPE_MIN_LINES`] or more.
struct Wipe {
    /// The file's lines now.
    lines: usize,
    /// How many of them the write deletes.
    deleted: usize,
}

impl WriteFile {
    /// Refuses a write that would delete most of `old`, unless the call
    /// says it means to (`replace_whole_file`); what the write deletes when
    /// it may. A small model asked to add a section writes the file anew
    /// with only the section (ADR 0046).
    fn wipe(&self, path: &str, old: &[u8]) -> Result<Option<Wipe>, ToolFailure> {
        let lines = count_lines(old) as usize;
        if lines < WIPE_MIN_LINES {
            return Ok(None);
        }
        let changes = LineChanges::between(old, self.content.as_bytes());
        if changes.kept * 2 >= lines {
            return Ok(None);
        }
        let wipe = Wipe {
            lines,
            deleted: lines - changes.kept,
        };
        if self.replace_whole_file {
            return Ok(Some(wipe));
        }
        Err(failed(format!(
            "refused: {path} has {lines} lines and this content keeps only {} of them, so the \
             write would delete {}. To add text, call edit_file with insert_at (\"start\", \"end\" \
             or the line number to insert after) and only the new lines as replace_block; to \
             change part of the file, edit_file with a search_block. Only if the person asked to \
             replace the whole file, call write_file again with replace_whole_file: true (they \
             will be asked)",
            changes.kept, wipe.deleted
        )))
    }

    /// Refuses a write that undoes or rewrites the change this turn made
    /// to the file, unless the call says it means to replace it whole.
    fn landed(&self, ctx: &ToolContext, real: &Path, old: &[u8]) -> Result<(), ToolFailure> {
        if self.replace_whole_file {
            return Ok(());
        }
        let new = self.content.as_bytes();
        landed::check(ctx, TOOL, (&self.path, real), (old, new), true)
    }

    /// The same rule for a file too large to compare: replacing it is
    /// always replacing it whole.
    fn wipe_large(&self, path: &str) -> Result<(), ToolFailure> {
        if self.replace_whole_file {
            return Ok(());
        }
        Err(failed(format!(
            "refused: {path} is over {} MiB and write_file would replace all of it. To change \
             part of it use edit_file; only if the person asked to replace it whole, call \
             write_file again with replace_whole_file: true (they will be asked)",
            EDIT_MAX_FILE_BYTES >> 20
        )))
    }
}

/// Refuses to replace a file whose content the model has not seen: it
/// would be writing blind, and a small model asked to add a line writes
/// the file anew with only that line (ADR 0030).
fn must_know(ctx: &ToolContext, path: &str, real: &Path) -> Result<(), ToolFailure> {
    if ctx.known.contains(real) {
        return Ok(());
    }
    Err(failed(format!(
        "{path} already exists and you have not read it; write_file would replace all of it. \
         To add to it, call edit_file with insert_at \"end\" (or \"start\") and the new text as \
         replace_block; to change part of it, read_file it first, then use edit_file"
    )))
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: TOOL.to_owned(),
        message,
    }
}

/// The folders above `real`, up to the root, that do not exist yet:
/// those writing it makes, deepest first.
fn missing_folders(ws: &dyn super::Workspace, real: &Path) -> Vec<PathBuf> {
    real.ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(ws.root()) && *dir != ws.root())
        .take_while(
            |dir| matches!(ws.lstat(dir), Err(e) if e.kind() == std::io::ErrorKind::NotFound),
        )
        .map(Path::to_path_buf)
        .collect()
}
