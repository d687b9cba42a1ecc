//! `write_file`: create or replace a whole file, atomically, keeping an
//! existing file's mode. `docs/decisions/0012-file-tools.md`.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, PreviewKind};

use super::checkpoint::{FileState, state_of};
use super::edit::{EDIT_MAX_FILE_BYTES, last_line};
use super::failure::ToolFailure;
use super::guard::{check, guard_of};
use super::preview::{count, diff, heading, line, shown};
use super::read::{count_lines, short_text};
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::{Parents, ToolContext, WriteError, io_failure, resolve_for};
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
}

/// What `write_file` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteFileOutput {
    /// The file, as the model gave it.
    pub path: String,
    /// Whether the file was new.
    pub action: WriteAction,
    /// Bytes written.
    pub bytes: usize,
    /// Lines written.
    pub lines: u64,
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

impl Shown for WriteFileOutput {}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const EFFECT: Effect = Effect::WritesFiles;
    type Output = WriteFileOutput;

    fn description() -> String {
        "Create a new file, or replace everything in a file, with `content`. To change part of an \
             existing file use edit_file instead: write_file would drop the rest of it. Needs the \
             person's approval; if rejected, ask what they want instead."
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
        let meta = match ws.lstat(&real) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_failure(TOOL, path, "read", &e)),
        };
        // Only a regular file is opened: opening a FIFO would block the
        // preview until something wrote to it.
        if let Some(meta) = &meta
            && !meta.is_file()
        {
            return Err(failed(format!(
                "{path} is not a regular file; it is left as it is"
            )));
        }
        if meta.is_some() {
            must_know(ctx, path, &real)?;
        }
        let target = shown(ws, path, &real);
        let (guard, lines) = match meta {
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
            Some(meta) if meta.len <= EDIT_MAX_FILE_BYTES => {
                // One read: the diff shows exactly the bytes the guard
                // describes. The file may have grown since the stat; the
                // read stays bounded.
                let mut old = Vec::new();
                ws.open_regular(&real)
                    .and_then(|file| file.take(EDIT_MAX_FILE_BYTES + 1).read_to_end(&mut old))
                    .map_err(|e| io_failure(TOOL, path, "read", &e))?;
                if old.len() as u64 > EDIT_MAX_FILE_BYTES {
                    return Err(failed(format!(
                        "{path} grew while it was read; make the call again"
                    )));
                }
                // Nothing to approve: the model is told the file is as it
                // wants it, and the person is not asked about a no-op.
                if old == content.as_bytes() {
                    return Err(failed(format!(
                        "{path} already holds exactly this content; nothing was written"
                    )));
                }
                let mut lines = heading(format!("replace {target}"), ws, &real);
                lines.extend(diff(&old, content.as_bytes()));
                (FileGuard::Content(content_hash(&old)), lines)
            }
            Some(_) => {
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
        on_blocking_pool(TOOL, cancel, move || {
            write_file(&ctx, &call.path, &call.content, guard)
        })
        .await
    }
}

fn write_file(
    ctx: &ToolContext,
    path: &str,
    content: &str,
    guard: FileGuard,
) -> Result<WriteFileOutput, ToolFailure> {
    let (ws, known) = (ctx.workspace.as_ref(), &ctx.known);
    let real = resolve_for(TOOL, ws, path)?;
    let existing = match ws.lstat(&real) {
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
        must_know(ctx, path, &real)?;
    }
    if guard != FileGuard::Unguarded {
        let now = guard_of(ws, &real).map_err(|e| io_failure(TOOL, path, "read", &e))?;
        check(TOOL, path, guard, now)?;
    }
    let mode = existing.as_ref().map(|m| m.mode);
    ctx.checkpoints.capture(ws, &real, || match &existing {
        Some(meta) => state_of(ws, &real, meta),
        None => FileState::Absent,
    });
    let made_dirs = if existing.is_none() {
        missing_folders(ws, &real)
    } else {
        Vec::new()
    };
    ws.write_atomic(&real, content.as_bytes(), mode, Parents::Create)
        .map_err(|e| match e {
            WriteError::Parents(e) => io_failure(TOOL, path, "create the directories of", &e),
            WriteError::Write(e) => io_failure(TOOL, path, "write", &e),
        })?;
    ctx.checkpoints.landed(ws, &real, content.as_bytes());
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
        bytes: content.len(),
        lines: count_lines(content.as_bytes()),
    })
}

/// Refuses to replace a file whose content the model has not seen: it
/// would be writing blind, and a small model asked to add a line writes
/// the file anew with only that line (ADR 0030). The refusal names the
/// file's last line when an edit can add after it.
fn must_know(ctx: &ToolContext, path: &str, real: &Path) -> Result<(), ToolFailure> {
    if ctx.known.contains(real) {
        return Ok(());
    }
    let append = short_text(ctx.workspace.as_ref(), real, APPEND_HINT_MAX_BYTES)
        .and_then(|text| last_line(text.as_bytes()))
        .map(|line| {
            format!(
                " To add to its end, call edit_file with search_block {line} (its last line) and \
                 replace_block that line followed by the new text."
            )
        })
        .unwrap_or_default();
    Err(failed(format!(
        "{path} already exists and you have not read it; write_file would replace all of it.\
         {append} To change part of it, use edit_file; to replace it, read_file it first, then \
         write its complete new content"
    )))
}

/// Largest file whose last line a refusal offers (64 KiB): enough for the
/// files a person asks to add a line or a function to, and little to read
/// for a hint.
const APPEND_HINT_MAX_BYTES: u64 = 64 * 1024;

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
