//! `read_file`: a bounded window of lines. Memory is bounded by the output,
//! never by the file: large files are streamed and only the window is kept.
//! Bounds from ADR 0007 §2, recorded in `docs/decisions/0012-file-tools.md`.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, ToolStatus};

use super::failure::ToolFailure;
use super::preview::count;
use super::result::head;
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::{KnownFiles, ToolContext, Workspace, io_failure, missing_failure, resolve_for};

const TOOL: &str = ReadFile::NAME;

/// The line `read_file` starts at when `offset` is not given (1-based).
/// ADR 0007 §1.
const READ_DEFAULT_OFFSET: u64 = 1;
/// Lines asked for when `limit` is not given. ADR 0007 §1.
const READ_DEFAULT_LIMIT: u64 = 2_000;
/// Largest `limit` the schema accepts. ADR 0007 §1.
const READ_MAX_LIMIT: u64 = 10_000;
/// Most lines one call returns, whatever `limit` asked. ADR 0007 §2.
pub const READ_MAX_LINES: u64 = 2_000;
/// Most bytes of content one call returns (64 KiB). ADR 0007 §2.
pub const READ_MAX_BYTES: usize = 64 * 1024;
/// Files above this size (256 KiB) are streamed: only the window is kept
/// and the total line count is not learned unless the window reaches the
/// end. ADR 0007 §2.
pub const READ_STREAM_THRESHOLD_BYTES: u64 = 256 * 1024;
/// Bytes at the start of a file searched for a NUL to call it binary
/// (8 KiB). ADR 0012.
pub const READ_BINARY_PROBE_BYTES: usize = 8 * 1024;
/// Read buffer size: large enough that skipping lines is a memory scan.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// A `read_file` call: a window of lines of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    /// The file, as the model gave it.
    pub path: String,
    /// First line, 1-based.
    #[serde(default = "default_offset")]
    pub offset: u64,
    /// How many lines were asked for.
    #[serde(default = "default_limit")]
    pub limit: u64,
}

fn default_offset() -> u64 {
    READ_DEFAULT_OFFSET
}

fn default_limit() -> u64 {
    READ_DEFAULT_LIMIT
}

/// The window `read_file` returns and where it sits in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadFileOutput {
    /// The file, as the model gave it.
    pub path: String,
    /// The lines, with a closing marker when more follows.
    pub content: String,
    /// The first line shown, 1-based.
    pub offset: u64,
    /// Lines shown (a line cut by the byte cap counts).
    pub lines: u64,
    /// Lines in the file, when the read learned it.
    pub total_lines: Option<u64>,
    /// The file's size.
    pub total_bytes: u64,
    /// Something follows the window.
    pub truncated: bool,
    /// Bytes that are not UTF-8 were replaced by U+FFFD.
    pub lossy: bool,
    /// Why the window is empty, when the offset is past the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Shown for ReadFileOutput {
    fn status(&self) -> ToolStatus {
        match (&self.note, self.content.is_empty()) {
            (Some(note), _) => ToolStatus::Empty(note.clone()),
            (None, true) if self.total_bytes == 0 => ToolStatus::Empty("empty file".into()),
            // Just past the last line: the window reached the end, so the
            // count is known; the offset says it all the same.
            (None, true) => {
                let total = self.total_lines.unwrap_or(self.offset.saturating_sub(1));
                ToolStatus::Empty(format!("the file has {}", count(total as usize, "line")))
            }
            (None, false) => ToolStatus::Ok,
        }
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.content)
    }

    /// Keeps the whole lines that fit and names the offset to read on
    /// from. ADR 0021.
    fn cut(&mut self, max_bytes: usize) -> bool {
        if self.content.len() <= max_bytes {
            return false;
        }
        let kept = head(&self.content, max_bytes);
        let whole = kept.matches('\n').count() as u64;
        let lines = whole + u64::from(!kept.is_empty() && !kept.ends_with('\n'));
        let marker = format!(
            "[cut to fit the model's context window: showed {lines} lines from line {}; \
             read on with offset={} and a smaller limit]",
            self.offset,
            self.offset + whole
        );
        let separator = if kept.is_empty() || kept.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        self.content = format!("{kept}{separator}{marker}");
        self.lines = lines;
        self.truncated = true;
        true
    }
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const EFFECT: Effect = Effect::Reads;
    type Output = ReadFileOutput;

    fn description() -> String {
        format!(
            "Read a text file. Leave offset and limit out to read it whole (up to {READ_MAX_LINES} \
             lines or {} KiB; when more follows, `truncated` is true and the last line says which \
             offset to continue from). If the file is not found, list_directory its folder for the \
             right name.",
            READ_MAX_BYTES / 1024
        )
    }

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": path_parameter("The file to read"),
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "First line to return, 1-based; leave it out to start at the top."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": READ_MAX_LIMIT,
                    "default": READ_DEFAULT_LIMIT,
                    "description": "How many lines to return; leave it out to read the whole file."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    /// The path, with the window only when one was asked for: a whole
    /// file's row reads `notes.txt`, not `notes.txt:1-2000`.
    fn summary(&self) -> String {
        if self.offset == 1 && self.limit == READ_DEFAULT_LIMIT {
            return self.path.clone();
        }
        format!(
            "{}:{}-{}",
            self.path,
            self.offset,
            self.offset.saturating_add(self.limit).saturating_sub(1)
        )
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<ReadFileOutput, ToolFailure> {
        let (call, ws, known) = (self.clone(), Arc::clone(&ctx.workspace), ctx.known.clone());
        on_blocking_pool(TOOL, cancel, move || {
            read_file(ws.as_ref(), &known, &call.path, call.offset, call.limit)
        })
        .await
    }
}

/// The lines taken from a reader.
struct Window {
    content: Vec<u8>,
    /// Lines that were skipped before the window (fewer than asked when the
    /// file ended first).
    skipped: u64,
    /// Lines in the window (a cut last line counts).
    lines: u64,
    /// The byte cap cut the window, possibly mid-line.
    cut_by_bytes: bool,
    /// Something follows the window.
    more_after: bool,
}

fn read_file(
    ws: &dyn Workspace,
    known: &KnownFiles,
    path: &str,
    offset: u64,
    limit: u64,
) -> Result<ReadFileOutput, ToolFailure> {
    let real = resolve_for(TOOL, ws, path)?;
    let meta = ws
        .stat(&real)
        .map_err(|e| missing_failure(TOOL, ws, path, "read", &e))?;
    if meta.is_dir() {
        return Err(failed(format!(
            "{path} is a directory; use list_directory to see what it holds"
        )));
    }
    // Opening a FIFO would block until a writer appears; a device could be
    // endless. Only regular files are read.
    if !meta.is_file() {
        return Err(failed(format!("{path} is not a regular file")));
    }
    // Beneath the root and O_NOFOLLOW: the resolved path has no links
    // left, so one appearing now is a swap after the policy check.
    let mut file = ws
        .open_regular(&real)
        .map_err(|e| io_failure(TOOL, path, "read", &e))?;
    let size = meta.len;
    let probe = probe(&mut file).map_err(|e| io_failure(TOOL, path, "read", &e))?;
    if probe.contains(&0) {
        return Err(failed(format!(
            "{path} looks binary (a NUL byte in its first {} KiB, {size} bytes in all); it is not shown. \
             Use execute_command with a tool that understands the format (e.g. `file`, `xxd | head`)",
            READ_BINARY_PROBE_BYTES / 1024
        )));
    }
    let want = limit.min(READ_MAX_LINES);
    let (window, total_lines) = if size <= READ_STREAM_THRESHOLD_BYTES {
        // The bound is the threshold, not the stat size: the file may have
        // grown since.
        let mut data = probe;
        file.take(READ_STREAM_THRESHOLD_BYTES - data.len() as u64)
            .read_to_end(&mut data)
            .map_err(|e| io_failure(TOOL, path, "read", &e))?;
        let window = take_window(&mut data.as_slice(), offset, want)
            .map_err(|e| io_failure(TOOL, path, "read", &e))?;
        (window, Some(count_lines(&data)))
    } else {
        let mut reader =
            BufReader::with_capacity(READ_BUFFER_BYTES, Cursor::new(probe).chain(file));
        let window = take_window(&mut reader, offset, want)
            .map_err(|e| io_failure(TOOL, path, "read", &e))?;
        let total = (!window.more_after).then_some(window.skipped + window.lines);
        (window, total)
    };
    known.record(&real);
    Ok(render(path, offset, size, window, total_lines))
}

/// The text of the regular file `real` (opened as every read is, beneath
/// the root) when it is at most `max` bytes, UTF-8 and free of NUL;
/// `None` otherwise, or when it cannot be read.
pub(super) fn short_text(ws: &dyn Workspace, real: &Path, max: u64) -> Option<String> {
    let mut bytes = Vec::new();
    ws.open_regular(real)
        .ok()?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > max || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: TOOL.to_owned(),
        message,
    }
}

fn render(
    path: &str,
    offset: u64,
    size: u64,
    mut window: Window,
    total_lines: Option<u64>,
) -> ReadFileOutput {
    if window.cut_by_bytes {
        trim_partial_char(&mut window.content);
    }
    let (text, lossy) = match String::from_utf8(window.content) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let mut content = text;
    let truncated = window.cut_by_bytes || window.more_after;
    let total_text = match total_lines {
        Some(n) => format!("{n} lines"),
        None => "more lines follow".to_owned(),
    };
    let first = offset;
    let last = offset + window.lines.saturating_sub(1);
    if truncated {
        if !content.is_empty() && !content.ends_with('\n') {
            content.push('\n');
        }
        let cap = READ_MAX_BYTES / 1024;
        let how = if window.cut_by_bytes && window.lines <= 1 {
            // offset={last} would show the same bytes again.
            format!(
                "line {last} alone is longer than the {cap} KiB cap; read the rest of it with \
                 execute_command, e.g. sed -n '{last}p' {path} | cut -b {}-{}",
                READ_MAX_BYTES + 1,
                2 * READ_MAX_BYTES
            )
        } else if window.cut_by_bytes {
            format!("cut at the {cap} KiB cap inside line {last}; continue with offset={last}")
        } else {
            format!("continue with offset={}", last + 1)
        };
        content.push_str(&format!(
            "[truncated: showed lines {first}-{last} of {total_text}, {size} bytes in all; {how}]"
        ));
    }
    let note = (window.lines == 0 && window.skipped + 1 < offset).then(|| {
        format!(
            "offset {offset} is past the end of the file ({})",
            count(window.skipped as usize, "line")
        )
    });
    ReadFileOutput {
        path: path.to_owned(),
        content,
        offset,
        lines: window.lines,
        total_lines,
        total_bytes: size,
        truncated,
        lossy,
        note,
    }
}

/// Skips `offset - 1` lines and keeps the next `want` lines, at most
/// [`READ_MAX_BYTES`] of them, holding nothing but the kept bytes.
fn take_window(reader: &mut impl BufRead, offset: u64, want: u64) -> std::io::Result<Window> {
    let mut skipped = 0;
    // Bytes of a line were skipped but not its newline (yet).
    let mut mid_line = false;
    while skipped + 1 < offset {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            // A last line without a newline is a line too.
            skipped += u64::from(mid_line);
            break;
        }
        let needed = offset - 1 - skipped;
        // Counting is a vectorised scan; only the chunk holding the window's
        // start is walked byte by byte.
        let newlines = buf.iter().filter(|b| **b == b'\n').count() as u64;
        let used = if newlines < needed {
            skipped += newlines;
            buf.len()
        } else {
            let mut seen = 0;
            let mut end = buf.len();
            for (i, b) in buf.iter().enumerate() {
                if *b == b'\n' {
                    seen += 1;
                    if seen == needed {
                        end = i + 1;
                        break;
                    }
                }
            }
            skipped += needed;
            end
        };
        mid_line = buf[..used].last().is_some_and(|b| *b != b'\n');
        reader.consume(used);
    }
    let mut content = Vec::new();
    let mut lines = 0;
    let mut in_line = false;
    let mut cut_by_bytes = false;
    while lines < want {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let (chunk, ends_line) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let room = READ_MAX_BYTES - content.len();
        // The cap fell exactly on a line end: the window is whole lines,
        // and the next call continues at the next line.
        if room == 0 && !in_line {
            break;
        }
        if chunk.len() > room {
            content.extend_from_slice(&chunk[..room]);
            reader.consume(room);
            cut_by_bytes = true;
            in_line = true;
            break;
        }
        content.extend_from_slice(chunk);
        let used = chunk.len();
        reader.consume(used);
        if ends_line {
            lines += 1;
            in_line = false;
        } else {
            in_line = true;
        }
    }
    if in_line {
        lines += 1;
    }
    let more_after = !reader.fill_buf()?.is_empty();
    Ok(Window {
        content,
        skipped,
        lines,
        cut_by_bytes,
        more_after,
    })
}

/// Lines as a person counts them: a last line without `\n` still counts.
pub(crate) fn count_lines(data: &[u8]) -> u64 {
    let newlines = data.iter().filter(|b| **b == b'\n').count() as u64;
    newlines + u64::from(data.last().is_some_and(|b| *b != b'\n'))
}

/// Whether `byte` continues a UTF-8 character rather than starting one: a
/// byte cut there splits the character.
pub(crate) fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// The byte cap may split a UTF-8 sequence; drop the incomplete tail so the
/// cut alone does not mark the content lossy.
pub(crate) fn trim_partial_char(bytes: &mut Vec<u8>) {
    bytes.truncate(whole_chars_len(bytes));
}

/// The length of `bytes` without a UTF-8 sequence cut short at its end.
pub(crate) fn whole_chars_len(bytes: &[u8]) -> usize {
    let tail_start = bytes.len().saturating_sub(3);
    for i in (tail_start..bytes.len()).rev() {
        let b = bytes[i];
        if is_continuation(b) {
            continue;
        }
        let len = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if i + len > bytes.len() {
            i
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

/// The first [`READ_BINARY_PROBE_BYTES`] of `file`: a NUL among them
/// makes it binary, which `read_file` does not show.
fn probe(file: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut probe = Vec::with_capacity(READ_BINARY_PROBE_BYTES);
    file.by_ref()
        .take(READ_BINARY_PROBE_BYTES as u64)
        .read_to_end(&mut probe)?;
    Ok(probe)
}

/// Whether `read_file` would show `real`, a path the workspace resolved:
/// a regular file that opens and does not look binary.
pub fn shows_as_text(ws: &dyn Workspace, real: &Path) -> bool {
    ws.open_regular(real)
        .and_then(|mut file| probe(&mut file))
        .is_ok_and(|probe| !probe.contains(&0))
}
