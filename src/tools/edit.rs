//! `edit_file` and the one `locate` function its preview shares, so the
//! bytes a person approves are the bytes that land.
//! `docs/decisions/0012-file-tools.md`.

use std::io::Read;
use std::ops::Range;
use std::path::PathBuf;

use memchr::memmem::{self, Finder};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, ToolStatus};

use super::checkpoint::FileState;
use super::failure::ToolFailure;
use super::guard::check;
use super::loose::{ending as line_ending, locate_loose, with_line_ends};
use super::preview::{LineChanges, count, diff, first_changed_line, heading, shown};
use super::read::{count_lines, is_continuation};
use super::syntax::{self, SyntaxErrors};
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::{
    Parents, ToolContext, Workspace, WriteError, io_failure, landed, missing_failure, resolve_for,
};
use crate::stable_hash::content_hash;

const TOOL: &str = EditFile::NAME;

/// Largest file `edit_file` rewrites (8 MiB), refused by `stat` before any
/// byte is read. ADR 0007 §2.
pub const EDIT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The most of a file a failed edit shows back (2 KiB): the whole file
/// up to this size, else a window around the nearest match.
pub const EDIT_EXCERPT_MAX_BYTES: usize = 2048;

/// Lines shown before and after the nearest match of a block not found.
const EDIT_EXCERPT_CONTEXT_LINES: usize = 3;

/// The shortest matching prefix (bytes) that places a window: a shorter
/// one, such as a lone `d`, says nothing about where the block belongs.
const EDIT_EXCERPT_MIN_PREFIX: usize = 8;

/// The longest line of the file a failed edit quotes as the one its block
/// most likely meant; a longer one is not quoted.
pub const EDIT_HINT_LINE_MAX_BYTES: usize = 160;

/// The most of the file's and the block's text a failed edit quotes
/// where the two part: enough to show a stray character or a different
/// indent, short of another excerpt.
const EDIT_DIVERGENCE_BYTES: usize = 24;

/// Why a search block does not select exactly one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// An empty block matches everywhere.
    #[error("search_block is empty")]
    Empty,
    /// No exact occurrence.
    #[error("search block not found{}", near_text(.nearest))]
    NotFound {
        /// Where the longest prefix of the block that does occur starts.
        nearest: Option<NearMatch>,
    },
    /// More than one occurrence, overlapping ones included.
    #[error("search block matched {count} times; add surrounding lines until it is unique")]
    Ambiguous {
        /// How many times it occurs without overlapping another counted
        /// occurrence; at least 2 (`aa` in `aaa` is ambiguous all the same).
        count: usize,
    },
}

/// The nearest partial match of a block that was not found: the longest
/// prefix of it that occurs in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NearMatch {
    /// 1-based line where that prefix starts (its first occurrence).
    pub line: usize,
    /// Byte offset in the file where that prefix starts.
    pub offset: usize,
    /// How many bytes of the block matched there.
    pub matched_bytes: usize,
    /// The block's length in bytes.
    pub block_bytes: usize,
}

fn near_text(nearest: &Option<NearMatch>) -> String {
    match nearest {
        Some(n) => format!(
            "; its first {} of {} bytes match at line {} and the text differs after that: \
             read_file around line {} and copy the block exactly (whitespace included)",
            n.matched_bytes, n.block_bytes, n.line, n.line
        ),
        None => "; no part of it occurs in the file: read_file first and copy the block exactly"
            .to_owned(),
    }
}

/// Finds the one exact occurrence of `search` in `haystack` and returns its
/// byte range. Linear time (memchr's `memmem`), so a hostile block cannot
/// make an 8 MiB file cost quadratic time.
pub fn locate(haystack: &[u8], search: &[u8]) -> Result<Range<usize>, LocateError> {
    if search.is_empty() {
        return Err(LocateError::Empty);
    }
    let finder = Finder::new(search);
    let Some(start) = finder.find(haystack) else {
        return Err(LocateError::NotFound {
            nearest: nearest(haystack, search),
        });
    };
    // Any other occurrence, overlapping this one or not, starts after it.
    if finder.find(&haystack[start + 1..]).is_none() {
        return Ok(start..start + search.len());
    }
    Err(LocateError::Ambiguous {
        count: finder.find_iter(haystack).count().max(2),
    })
}

/// The new content: `haystack` with `range` replaced.
pub fn splice(haystack: &[u8], range: Range<usize>, replace: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len() - range.len() + replace.len());
    out.extend_from_slice(&haystack[..range.start]);
    out.extend_from_slice(replace);
    out.extend_from_slice(&haystack[range.end..]);
    out
}

/// The longest prefix of `search` that occurs.
fn nearest(haystack: &[u8], search: &[u8]) -> Option<NearMatch> {
    longest_occurring(haystack, search.len(), |n| &search[..n]).map(|(pos, len)| NearMatch {
        line: line_of(haystack, pos),
        offset: pos,
        matched_bytes: len,
        block_bytes: search.len(),
    })
}

/// The first position and the length of the longest `piece(n)`, for `n`
/// up to `max`, that occurs in `haystack`, by binary search on `n`: each
/// piece must hold every shorter one (a prefix, or an ending, of one
/// text), so that one occurs only if every shorter one does.
fn longest_occurring<'a>(
    haystack: &[u8],
    max: usize,
    piece: impl Fn(usize) -> &'a [u8],
) -> Option<(usize, usize)> {
    let (mut lo, mut hi, mut at) = (0, max, None);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match memmem::find(haystack, piece(mid)) {
            Some(pos) => {
                lo = mid;
                at = Some(pos);
            }
            None => hi = mid - 1,
        }
    }
    at.map(|pos| (pos, lo))
}

fn line_of(haystack: &[u8], pos: usize) -> usize {
    haystack[..pos].iter().filter(|b| **b == b'\n').count() + 1
}

/// An `edit_file` call: replace one unique exact block, or insert text
/// at a place without replacing any.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFile {
    /// The file, as the model gave it.
    pub path: String,
    /// The exact text to find (non-empty); absent when inserting.
    #[serde(default)]
    pub search_block: Option<String>,
    /// Its replacement (differs from `search_block`), or the text to
    /// insert.
    pub replace_block: String,
    /// Where to insert `replace_block` instead of replacing a block.
    #[serde(default)]
    pub insert_at: Option<InsertAt>,
}

/// Where an insertion goes: adding is one small call, never a rewrite of
/// the file (ADR 0046).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum InsertAt {
    /// After the given 1-based line; 0 is before the first.
    AfterLine(u64),
    /// At the start or the end of the file.
    Place(Place),
}

/// The two ends of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// Before the first line.
    Start,
    /// After the last line.
    End,
}

/// What an edit does: the one thing both its preview and its run plan.
#[derive(Debug, Clone, Copy)]
enum Change<'a> {
    /// Replace the one occurrence of the block.
    Replace(&'a [u8]),
    /// Insert at the place.
    Insert(InsertAt),
}

/// What `edit_file` changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EditFileOutput {
    /// The file, as the model gave it.
    pub path: String,
    /// The 1-based line where the block started, or the first inserted
    /// line.
    pub line: usize,
    /// What changed, in a line: lines added and removed, and how many
    /// the file has now.
    pub changed: String,
    /// The file's size afterwards.
    pub bytes: usize,
    /// Said when the block matched only with white space aside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// The syntax errors the edit left in the file (ADR 0047).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syntax_errors: Option<SyntaxErrors>,
}

/// What an edit whose block matched with white space aside tells the
/// model: it landed, and its indentation was made the file's.
pub const LOOSE_NOTE: &str = "search_block matched the file with white space aside; \
replace_block was indented and line-ended as the file is";

impl Shown for EditFileOutput {
    fn status(&self) -> ToolStatus {
        syntax::status(self.syntax_errors.as_ref())
    }
}

impl Tool for EditFile {
    const NAME: &'static str = "edit_file";
    const EFFECT: Effect = Effect::WritesFiles;
    const HIDDEN: &'static [&'static str] = &["insert_at"];
    const SHOWN_REQUIRED: &'static [&'static str] = &["search_block"];
    type Output = EditFileOutput;

    fn description() -> String {
        "Change part of an existing file: replace search_block, text copied exactly from the file \
             (whitespace included) that occurs once in it, with replace_block. If the result says \
             the block was not found, read_file the file and copy the text exactly; if it matched \
             several times, add surrounding lines. Needs the person's approval."
            .to_owned()
    }

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": path_parameter("The file to edit"),
                "search_block": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The exact text to find; it must occur exactly once."
                },
                "replace_block": {
                    "type": "string",
                    "description": "The text that replaces it; must differ from search_block (may be empty to delete)."
                },
                "insert_at": {
                    "anyOf": [{"enum": ["start", "end"]}, {"type": "integer", "minimum": 0}],
                    "description": "Instead of search_block, to add lines and change none: \"start\", \"end\" or the line to insert after."
                }
            },
            "required": ["path", "replace_block"],
            "additionalProperties": false
        })
    }

    /// A schema cannot compare two fields; a no-op edit is a model bug
    /// worth reporting back rather than a write that changes nothing.
    fn check(&self) -> Result<(), ToolFailure> {
        self.change().map(|_| ())
    }

    fn summary(&self) -> String {
        self.path.clone()
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    fn written_path(&self) -> Option<&str> {
        Some(&self.path)
    }

    /// The diff of the located block, built with the `plan` the edit
    /// runs, so the diff is exactly what lands. Its heading names the first
    /// line that changes, not where the block starts: a block copied with
    /// lines of context above its change would otherwise point above it.
    fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
        let ws = ctx.workspace.as_ref();
        let target = read_target(ws, &self.path)?;
        let change = self.change()?;
        let Planned { new, line, .. } = plan(
            &self.path,
            &target.data,
            change,
            self.replace_block.as_bytes(),
        )?;
        let place = (self.path.as_str(), target.real.as_path());
        landed::check(ctx, TOOL, place, (&target.data, &new), false)?;
        let file = shown(ws, &self.path, &target.real);
        let title = match change {
            Change::Replace(_) => format!(
                "edit {file} at line {}",
                first_changed_line(&target.data, &new)
            ),
            Change::Insert(_) => format!("insert into {file} at line {line}"),
        };
        let mut lines = heading(title, ws, &target.real);
        lines.extend(diff(&target.data, &new));
        Ok(Preview {
            lines,
            guard: FileGuard::Content(content_hash(&target.data)),
        })
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        guard: FileGuard,
    ) -> Result<EditFileOutput, ToolFailure> {
        let (call, ctx) = (self.clone(), ctx.clone());
        on_blocking_pool(TOOL, cancel, move || edit_file(&ctx, &call, guard)).await
    }
}

impl EditFile {
    /// What the call asks for: exactly one of a block to replace and a
    /// place to insert at, with something to put there.
    fn change(&self) -> Result<Change<'_>, ToolFailure> {
        let invalid = |field: &str, expected: &str, received: &str| {
            Err(ToolFailure::InvalidArgument {
                tool: TOOL.to_owned(),
                field: field.to_owned(),
                expected: expected.to_owned(),
                received: received.to_owned(),
            })
        };
        match (&self.search_block, self.insert_at) {
            (Some(_), Some(_)) => invalid(
                "insert_at",
                "either search_block (to replace it) or insert_at (to insert), not both",
                "both",
            ),
            (None, None) => invalid(
                "search_block",
                "search_block (the exact text to replace) or insert_at (\"start\", \"end\" or a line number)",
                "missing",
            ),
            (Some(search), None) if *search == self.replace_block => invalid(
                "replace_block",
                "text different from search_block",
                "the same text as search_block",
            ),
            (None, Some(_)) if self.replace_block.is_empty() => {
                invalid("replace_block", "the text to insert", "an empty string")
            }
            (Some(search), None) => Ok(Change::Replace(search.as_bytes())),
            (None, Some(at)) => Ok(Change::Insert(at)),
        }
    }
}

/// The file an edit works on: its resolved path, content and mode.
struct EditTarget {
    /// Where the file really is (what the policy resolved).
    real: PathBuf,
    /// The whole content (at most [`EDIT_MAX_FILE_BYTES`]).
    data: Vec<u8>,
    mode: u32,
}

/// Resolves and reads the file to edit, refusing one over the size cap by
/// `stat` before reading a byte.
fn read_target(ws: &dyn Workspace, path: &str) -> Result<EditTarget, ToolFailure> {
    let real = resolve_for(TOOL, ws, path)?;
    let meta = ws
        .stat(&real)
        .map_err(|e| missing_failure(TOOL, ws, path, "edit", &e))?;
    if !meta.is_file() {
        return Err(failed(format!("{path} is not a regular file")));
    }
    if meta.len > EDIT_MAX_FILE_BYTES {
        return Err(too_big(path, meta.len));
    }
    let file = ws
        .open_regular(&real)
        .map_err(|e| io_failure(TOOL, path, "edit", &e))?;
    // The file may have grown since the stat; the read stays bounded.
    let mut data = Vec::with_capacity(meta.len as usize);
    file.take(EDIT_MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| io_failure(TOOL, path, "edit", &e))?;
    if data.len() as u64 > EDIT_MAX_FILE_BYTES {
        return Err(too_big(path, data.len() as u64));
    }
    Ok(EditTarget {
        real,
        data,
        mode: meta.mode,
    })
}

/// Where the block goes and what the file becomes: the one computation
/// both the preview and the write use.
struct Planned {
    /// The 1-based line where the replaced text starts.
    line: usize,
    /// The file's new content.
    new: Vec<u8>,
    /// The block matched only with white space aside (ADR 0039).
    loose: bool,
}

/// Locates the block in `data` (exactly, else loosely), or the place to
/// insert at, and builds the new content.
fn plan(path: &str, data: &[u8], change: Change, replace: &[u8]) -> Result<Planned, ToolFailure> {
    let search = match change {
        Change::Insert(at) => return insert(path, data, at, replace),
        Change::Replace(search) => search,
    };
    let planned = match locate(data, search) {
        Ok(range) => Planned {
            line: line_of(data, range.start),
            new: splice(data, range, &with_line_ends_of(data, replace)),
            loose: false,
        },
        Err(LocateError::NotFound { nearest }) => match locate_loose(data, search, replace) {
            Some(found) => Planned {
                line: line_of(data, found.range.start),
                new: splice(data, found.range, &found.replace),
                loose: true,
            },
            None => return Err(failed(not_found(path, data, search, replace, nearest))),
        },
        Err(e) => return Err(failed(format!("{path}: {e}"))),
    };
    if planned.new == data {
        return Err(failed(format!(
            "{path} already reads so: the edit changes nothing (its blocks differ only in white space the file does not have)"
        )));
    }
    Ok(planned)
}

/// `data` with `text` inserted at `at` as whole lines: it ends with the
/// file's line ending, and goes on a line of its own after a last line
/// that has none.
fn insert(path: &str, data: &[u8], at: InsertAt, text: &[u8]) -> Result<Planned, ToolFailure> {
    if let Some((repeated, of)) = repeats_the_file(data, text) {
        return Err(failed(format!(
            "{path}: {repeated} of the {of} lines to insert are in the file already, so this \
             would copy them, not change them. To change lines, call edit_file with search_block \
             (the lines as they are, copied from the file) and replace_block (as they should \
             be), without insert_at"
        )));
    }
    let lines = count_lines(data);
    let offset = match at {
        InsertAt::Place(Place::Start) | InsertAt::AfterLine(0) => 0,
        InsertAt::Place(Place::End) => data.len(),
        InsertAt::AfterLine(n) if n > lines => {
            return Err(failed(format!(
                "{path} has {}: insert_at must be a line number from 0 to {lines}, \"start\" or \"end\"",
                count(lines as usize, "line")
            )));
        }
        InsertAt::AfterLine(n) => memchr::memchr_iter(b'\n', data)
            .nth(n as usize - 1)
            .map_or(data.len(), |i| i + 1),
    };
    let eol: &[u8] = line_ending(data.split_inclusive(|&b| b == b'\n')).unwrap_or(b"\n");
    // After a last line with no line ending, the text starts a line.
    let starts = if offset == data.len() && !data.is_empty() && !data.ends_with(b"\n") {
        eol
    } else {
        b""
    };
    let mut lines_in = starts.to_vec();
    lines_in.extend_from_slice(&with_line_ends_of(data, text));
    if !text.ends_with(b"\n") {
        lines_in.extend_from_slice(eol);
    }
    let new = splice(data, offset..offset, &lines_in);
    Ok(Planned {
        line: line_of(&new, offset + starts.len()),
        new,
        loose: false,
    })
}

/// The shortest line, white space aside, that counts when an insertion is
/// compared with the file: shorter ones (`}`, `pass`, `end`) are in every
/// file.
const REPEAT_LINE_MIN_CHARS: usize = 6;

/// How many of the lines `text` would insert the file `data` holds
/// already, and of how many, when that is more than half of two or more
/// (lines of at least [`REPEAT_LINE_MIN_CHARS`], white space aside): a
/// small model asked to change a line inserts the whole changed block
/// beside the old one.
fn repeats_the_file(data: &[u8], text: &[u8]) -> Option<(usize, usize)> {
    let significant = |block: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(block)
            .lines()
            .map(|line| line.trim().to_owned())
            .filter(|line| line.chars().count() >= REPEAT_LINE_MIN_CHARS)
            .collect()
    };
    let inserted = significant(text);
    if inserted.len() < 2 {
        return None;
    }
    let present: std::collections::HashSet<String> = significant(data).into_iter().collect();
    let repeated = inserted
        .iter()
        .filter(|line| present.contains(*line))
        .count();
    (repeated * 2 > inserted.len()).then_some((repeated, inserted.len()))
}

/// `replace` with the line ends of a file whose every line ends `\r\n`
/// (models write bare `\n`): a CRLF file stays CRLF.
fn with_line_ends_of<'a>(data: &[u8], replace: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    const CRLF: &[u8] = b"\r\n";
    if replace.contains(&b'\n') && line_ending(data.split_inclusive(|&b| b == b'\n')) == Some(CRLF)
    {
        std::borrow::Cow::Owned(with_line_ends(replace, CRLF))
    } else {
        std::borrow::Cow::Borrowed(replace)
    }
}

/// What a failed edit says when its block is nowhere in the file: where
/// it parts from the file, what to do instead, and the text to copy it
/// from.
fn not_found(
    path: &str,
    data: &[u8],
    search: &[u8],
    replace: &[u8],
    nearest: Option<NearMatch>,
) -> String {
    let parting = match nearest.filter(|n| n.matched_bytes >= EDIT_EXCERPT_MIN_PREFIX) {
        Some(n) => parting(data, search, n),
        None => ending(data, search).unwrap_or_default(),
    };
    let adding = adding_hint(search, replace)
        .map(|hint| format!("; {hint}"))
        .unwrap_or_default();
    match excerpt(data, nearest, count_lines(search)) {
        Some((first, last, text)) => format!(
            "{path}: search block not found{parting}{adding}; copy search_block exactly \
             from the file's text, lines {first}-{last}:\n{text}"
        ),
        None if !parting.is_empty() => format!(
            "{path}: search block not found{parting}{adding}; read_file around that line \
             and copy the block exactly (whitespace included)"
        ),
        None => format!("{path}: {}{adding}", LocateError::NotFound { nearest }),
    }
}

/// Where a block that was not found parts from the file at its nearest
/// match, with the file's text and the block's from there quoted: a
/// stray `.` or a tab for spaces shows at once, where a whole excerpt
/// leaves a small model to spot it.
fn parting(data: &[u8], search: &[u8], near: NearMatch) -> String {
    // The prefix may end inside a character both texts begin alike.
    let mut matched = near.matched_bytes;
    while matched > 0 && is_continuation(search[matched]) {
        matched -= 1;
    }
    let at = near.offset + matched;
    let file = match quoted_start(&data[at..]) {
        Some(text) => format!("the file has {text} (line {})", line_of(data, at)),
        None => "the file ends".to_owned(),
    };
    let block = quoted_start(&search[matched..]).unwrap_or_default();
    format!(
        "; its first {matched} of {} bytes match from line {}, then {file} where the block has \
         {block}",
        search.len(),
        near.line
    )
}

/// The start of `bytes`, through its first line break and at most
/// [`EDIT_DIVERGENCE_BYTES`] (a character the cut would split is kept
/// whole), as a JSON string so its whitespace shows; `None` when there is
/// nothing.
fn quoted_start(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let mut end = bytes
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |i| i + 1)
        .min(EDIT_DIVERGENCE_BYTES);
    while end < bytes.len() && is_continuation(bytes[end]) {
        end += 1;
    }
    Some(quoted(&bytes[..end]))
}

/// `text` as a JSON string: its indentation and line breaks show, and it
/// is what a `search_block` must hold.
fn quoted(text: &[u8]) -> String {
    Value::from(String::from_utf8_lossy(text)).to_string()
}

/// For a one-line block that was not found and whose start places
/// nothing: the file's line where the block's longest ending occurs (at
/// least [`EDIT_EXCERPT_MIN_PREFIX`] bytes), quoted whole. A block that
/// begins with text the file lacks (`server_port = 8421` for
/// `port = 8421`) is then shown the line it most likely meant. A longer
/// block's ending (`    }` and a line break) places nothing worth saying.
fn ending(data: &[u8], search: &[u8]) -> Option<String> {
    let one_line = search.strip_suffix(b"\n").unwrap_or(search);
    if one_line.contains(&b'\n') {
        return None;
    }
    let (pos, len) = longest_occurring(data, one_line.len(), |n| &one_line[one_line.len() - n..])?;
    if len < EDIT_EXCERPT_MIN_PREFIX {
        return None;
    }
    let start = data[..pos]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let end = data[pos..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(data.len(), |i| pos + i);
    let line = &data[start..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    (line.len() <= EDIT_HINT_LINE_MAX_BYTES).then(|| {
        format!(
            "; its last {len} bytes occur on line {}, which is {}",
            line_of(data, pos),
            quoted(line)
        )
    })
}

/// What to do instead when a block that was not found begins
/// `replace_block`: the model meant to add after text that is not there
/// yet (`def mode(values):` to append a function), so it is told how to
/// insert.
fn adding_hint(search: &[u8], replace: &[u8]) -> Option<&'static str> {
    replace.starts_with(search).then_some(
        "search_block must be text already in the file: to add text, leave search_block out \
         and give insert_at (\"end\", \"start\" or the number of the line to insert after) \
         with only the new text as replace_block",
    )
}

/// The text a block that was not found should have been copied from, with
/// its 1-based first and last line: the whole file when it is at most
/// [`EDIT_EXCERPT_MAX_BYTES`], else the lines around the block's longest
/// prefix that occurs (when one of at least [`EDIT_EXCERPT_MIN_PREFIX`]
/// bytes does), cut to that size. A small model that guessed the block
/// can then correct it without another read.
fn excerpt(
    data: &[u8],
    nearest: Option<NearMatch>,
    block_lines: u64,
) -> Option<(usize, usize, String)> {
    let lines: Vec<&[u8]> = data.split_inclusive(|b| *b == b'\n').collect();
    let (first, last) = if data.len() <= EDIT_EXCERPT_MAX_BYTES {
        (1, lines.len())
    } else {
        let near = nearest.filter(|n| n.matched_bytes >= EDIT_EXCERPT_MIN_PREFIX)?;
        let first = near.line.saturating_sub(EDIT_EXCERPT_CONTEXT_LINES).max(1);
        let last = (near.line + block_lines as usize + EDIT_EXCERPT_CONTEXT_LINES).min(lines.len());
        (first, last)
    };
    let mut text = Vec::new();
    let mut shown = first.saturating_sub(1);
    for line in lines.get(first.checked_sub(1)?..last)? {
        if text.len() + line.len() > EDIT_EXCERPT_MAX_BYTES {
            break;
        }
        text.extend_from_slice(line);
        shown += 1;
    }
    (shown >= first).then(|| (first, shown, String::from_utf8_lossy(&text).into_owned()))
}

fn edit_file(
    ctx: &ToolContext,
    call: &EditFile,
    guard: FileGuard,
) -> Result<EditFileOutput, ToolFailure> {
    let (ws, path) = (ctx.workspace.as_ref(), call.path.as_str());
    let target = read_target(ws, path)?;
    check(
        TOOL,
        path,
        guard,
        FileGuard::Content(content_hash(&target.data)),
    )?;
    let change = call.change()?;
    let Planned { line, new, loose } =
        plan(path, &target.data, change, call.replace_block.as_bytes())?;
    landed::check(ctx, TOOL, (path, &target.real), (&target.data, &new), false)?;
    ctx.checkpoints
        .capture(ws, &target.real, || FileState::File {
            content: target.data.clone(),
            mode: target.mode,
        });
    ws.write_atomic(&target.real, &new, Some(target.mode), Parents::Existing)
        .map_err(|e| match e {
            WriteError::Parents(e) | WriteError::Write(e) => io_failure(TOOL, path, "write", &e),
        })?;
    ctx.checkpoints.landed(ws, &target.real, &new);
    ctx.known.record(&target.real);
    Ok(EditFileOutput {
        path: path.to_owned(),
        line,
        changed: LineChanges::between(&target.data, &new).sentence(count_lines(&new)),
        bytes: new.len(),
        note: loose.then_some(LOOSE_NOTE),
        syntax_errors: syntax::check(path, Some(&target.data), &new),
    })
}

fn too_big(path: &str, size: u64) -> ToolFailure {
    failed(format!(
        "{path} is {size} bytes; edit_file refuses files over {} MiB: use write_file or execute_command (e.g. sed)",
        EDIT_MAX_FILE_BYTES / (1024 * 1024)
    ))
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::ExecutionFailed {
        tool: TOOL.to_owned(),
        message,
    }
}
