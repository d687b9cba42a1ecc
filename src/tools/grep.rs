//! `grep`: a regular-expression search of the project's files, line by
//! line, with ripgrep's own matcher (`grep-regex`) and searcher
//! (`grep-searcher`) over the walk `glob` shares (`Workspace::walk`). Memory is
//! bounded by the output, never by the tree or a file: each file is
//! streamed through a line buffer that may not grow past
//! [`GREP_MAX_LINE_BYTES`], a file keeps at most `max_results` of its
//! matches, and only the head of the sorted matches is kept, in a bounded
//! heap. `docs/decisions/0024-search-tools.md`.

use std::borrow::Cow;
use std::collections::{BTreeSet, BinaryHeap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use globset::{Candidate, GlobMatcher};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, ToolStatus};

use super::failure::ToolFailure;
use super::preview::count;
use super::read::short_text;
use super::result::head;
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::validate::received;
use super::walk;
use super::{
    KnownFiles, Opener, Seen, Stat, ToolContext, Visitor, WalkError, Workspace, cannot_search,
    has_wildcard, io_failure, locate, search_place,
};

const TOOL: &str = Grep::NAME;

/// Matching lines one call returns when `max_results` is not given: enough
/// to see where a name is used, few enough that a common word does not
/// flood the context. ADR 0024.
pub const GREP_DEFAULT_MAX_RESULTS: usize = 200;
/// Largest `max_results` the schema accepts: about 500 KB of lines at most,
/// which the context window's cut (ADR 0021) may shorten further. ADR 0024.
const GREP_MAX_RESULTS: usize = 2_000;
/// Characters of a matching line shown; the rest is replaced by a marker
/// giving its size. Minified code and data files have lines of megabytes,
/// of which the model needs the neighbourhood, which read_file gives.
/// ADR 0024.
pub const GREP_LINE_MAX_CHARS: usize = 200;
/// Longest line searched (1 MiB): the most the searcher's line buffer may
/// hold, so one huge line cannot take the memory a whole file would. A file
/// is searched up to such a line and listed in `unsearched`. ADR 0024.
pub const GREP_MAX_LINE_BYTES: usize = 1024 * 1024;
/// Largest file whose whole text a grep of that one file that matched
/// nothing returns instead (2 KiB): a small model that searched a short
/// config for a key it spelled wrong (`server_port` for `port`) answered
/// from a guess, though the answer was in a file it could have read whole
/// for a few hundred tokens. ADR 0024.
pub const GREP_WHOLE_FILE_MAX_BYTES: u64 = 2 * 1024;
/// Most memory a compiled pattern may take (16 MiB), for its program and
/// again for each thread's lazy DFA cache, instead of the regex crate's
/// defaults of 100 MiB and 1,000 MiB: a pattern larger than that is refused
/// as an invalid argument. ADR 0024.
const GREP_REGEX_MAX_BYTES: usize = 16 * 1024 * 1024;
/// Most lines of the whole project a grep that matched nothing in the
/// file or folder it named shows instead: enough to show where a name is
/// defined and used. ADR 0049.
pub const GREP_WIDENED_MAX_RESULTS: usize = 20;
/// Most files listed in `unsearched`; a last entry counts the rest.
/// ADR 0024.
pub const GREP_UNSEARCHED_MAX_LISTED: usize = 20;

/// A `grep` call: a regular expression searched for in files.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grep {
    /// The regular expression, as the model gave it.
    pub pattern: String,
    /// The file or directory searched, as the model gave it.
    #[serde(default = "super::here")]
    pub path: String,
    /// The glob a file's name (or, with a `/`, its path) must match.
    #[serde(default = "default_include")]
    pub include: String,
    /// Whether case is ignored.
    #[serde(default)]
    pub ignore_case: bool,
    /// Most matching lines to return.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
}

fn default_include() -> String {
    "*".to_owned()
}

fn default_max_results() -> usize {
    GREP_DEFAULT_MAX_RESULTS
}

/// The head of the sorted matching lines, and what the search covered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrepOutput {
    /// The pattern, as the model gave it.
    pub pattern: String,
    /// The file or directory searched, as the model gave it; `.` when
    /// nothing matched there and the whole project was searched.
    pub path: String,
    /// When nothing matched in the file or folder the call named: that it
    /// was searched first, and the matches are the whole project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched_first: Option<String>,
    /// The first matching lines, sorted by path then line, one per line
    /// as `path:line:text`, the path relative to the working directory;
    /// a closing marker when the context window's cut shortened them.
    pub matches: String,
    /// When the matches shown are in documentation and in code both:
    /// which are documentation, so a changelog line is not taken for the
    /// definition it mentions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation: Option<String>,
    /// When nothing matched: what to try next, so a small model looks
    /// again instead of answering from a guess.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// When nothing matched in the one file searched, and it is a short
    /// text ([`GREP_WHOLE_FILE_MAX_BYTES`]): the whole of it, so the
    /// answer is in this result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Matching lines in `matches`.
    pub shown: usize,
    /// Matching lines found in all. Exact, except that a file listed in
    /// `unsearched` was searched only up to where it stopped.
    pub total: u64,
    /// More lines matched than are shown.
    pub truncated: bool,
    /// Files searched (binary ones included).
    pub files_searched: u64,
    /// Files skipped as binary (a NUL byte): none of their lines is shown
    /// or counted.
    #[serde(skip_serializing_if = "is_zero")]
    pub binary_skipped: u64,
    /// Files not searched to their end, as `path: why` (a line longer
    /// than [`GREP_MAX_LINE_BYTES`], an I/O error), and directories that
    /// could not be read; at most [`GREP_UNSEARCHED_MAX_LISTED`], then a
    /// count of the rest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsearched: Vec<String>,
    /// A path or a line is not UTF-8; U+FFFD replaced what is not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
}

/// The most documentation files a grep's `documentation` note names; the
/// rest are counted.
const DOCUMENTATION_FILES_NAMED: usize = 5;

/// Whether `path` (relative, `/`-separated) is documentation rather than
/// code or configuration: prose by its extension, a changelog, readme or
/// licence by its name, or anything under a `docs` or `doc` folder.
fn is_documentation(path: &str) -> bool {
    const PROSE: [&str; 7] = ["md", "markdown", "rst", "adoc", "asciidoc", "org", "rdoc"];
    const NAMES: [&str; 10] = [
        "CHANGELOG",
        "CHANGES",
        "HISTORY",
        "NEWS",
        "README",
        "AUTHORS",
        "CONTRIBUTING",
        "LICENSE",
        "COPYING",
        "NOTICE",
    ];
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    let prose = name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| PROSE.contains(&ext.to_ascii_lowercase().as_str()));
    let upper = name.to_ascii_uppercase();
    prose
        || NAMES.iter().any(|n| upper.starts_with(n))
        || parts.iter().any(|dir| matches!(*dir, "docs" | "doc"))
}

/// The `documentation` note of matches in `paths` (one per match shown),
/// when some are in documentation and some are not.
fn documentation_note<'a>(paths: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut docs: Vec<(&str, usize)> = Vec::new();
    let mut code = 0;
    for path in paths {
        if !is_documentation(path) {
            code += 1;
        } else if let Some(last) = docs.last_mut().filter(|(p, _)| *p == path) {
            last.1 += 1;
        } else {
            docs.push((path, 1));
        }
    }
    if docs.is_empty() || code == 0 {
        return None;
    }
    let in_docs: usize = docs.iter().map(|(_, n)| n).sum();
    let mut named: Vec<String> = docs
        .iter()
        .take(DOCUMENTATION_FILES_NAMED)
        .map(|(path, n)| format!("{path} ({n})"))
        .collect();
    if docs.len() > DOCUMENTATION_FILES_NAMED {
        named.push(format!(
            "{} more files",
            docs.len() - DOCUMENTATION_FILES_NAMED
        ));
    }
    Some(format!(
        "{in_docs} of the matches are in documentation, not code: {}; the rest ({code}) are in code or configuration, where a definition or a setting is",
        named.join(", ")
    ))
}

/// What to try when nothing matched in `path`: `whole_file` when the
/// file's text is in `content`; `widened` when the whole project was
/// searched too, and matched nothing either.
fn no_match(files_searched: u64, path: &str, whole_file: bool, widened: bool) -> String {
    let given = if whole_file {
        format!("no line matched in {path} (its whole text is in content)")
    } else {
        format!("no line matched in {path}")
    };
    match (widened, whole_file) {
        (true, true) => format!(
            "{given}, nor anywhere else in the project: if the answer is not in content, say you did not find it rather than guess"
        ),
        (true, false) => format!(
            "{given}, nor anywhere else in the project: try a shorter pattern or ignore_case; if it is not in the project, say you did not find it rather than guess"
        ),
        (false, _) if files_searched == 0 => "no file was searched: path and include matched none, or .gitignore skips every file there; list_directory to see the names, read_file to read one"
            .to_owned(),
        (false, _) => "no line matched: try a shorter pattern or ignore_case, or read_file the file; if it is not in the project, say you did not find it rather than guess"
            .to_owned(),
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Shown for GrepOutput {
    fn status(&self) -> ToolStatus {
        ToolStatus::ok_unless_empty(self.total == 0, || {
            format!(
                "no matches in {}",
                count(self.files_searched as usize, "file")
            )
        })
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.matches)
    }

    /// Keeps the whole lines that fit and says how to see the rest.
    /// ADR 0021.
    fn cut(&mut self, max_bytes: usize) -> bool {
        if self.matches.len() <= max_bytes {
            return false;
        }
        let kept = head(&self.matches, max_bytes);
        let lines = kept.matches('\n').count() + usize::from(!kept.ends_with('\n'));
        let separator = if kept.is_empty() || kept.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        self.matches = format!(
            "{kept}{separator}[cut to fit the model's context window: showed {lines} of {} matching \
             lines; narrow with path, include or a more specific pattern]",
            self.total
        );
        self.shown = lines;
        self.truncated = true;
        true
    }
}

impl Tool for Grep {
    const NAME: &'static str = "grep";
    const EFFECT: Effect = Effect::Reads;
    type Output = GrepOutput;

    fn description() -> String {
        "Search file contents for a regular expression, e.g. `load_settings` (escape ( ) [ ] \
             { } . * + ? | ^ $ \\ with \\ to match them literally). Returns the matching lines as \
             `path:line:text`; `truncated` says more matched. Narrow it with `path` (a file or \
             folder) or `include` (a glob on file names). Skips binary and .gitignored files \
             and build folders such as target and node_modules."
            .to_owned()
    }

    fn parameters() -> Value {
        let mut path = path_parameter("The file or directory to search");
        path["default"] = json!(".");
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The regular expression, e.g. `load_settings` or `TODO|FIXME`."
                },
                "path": path,
                "include": {
                    "type": "string",
                    "minLength": 1,
                    "default": "*",
                    "description": "Only files whose name matches this glob, or whose path does when it holds a `/`."
                },
                "ignore_case": {
                    "type": "boolean",
                    "default": false,
                    "description": "Match regardless of case."
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": GREP_MAX_RESULTS,
                    "default": GREP_DEFAULT_MAX_RESULTS,
                    "description": "Most matching lines to return."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> Result<(), ToolFailure> {
        self.matcher()?;
        Include::new(&self.include).map(drop)
    }

    fn summary(&self) -> String {
        let mut summary = self.pattern.clone();
        if self.path != "." {
            summary.push_str(&format!(" in {}", self.path));
        }
        if self.include != "*" {
            summary.push_str(&format!(" ({})", self.include));
        }
        if self.ignore_case {
            summary.push_str(" (any case)");
        }
        summary
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<GrepOutput, ToolFailure> {
        let (call, ws, stop) = (self.clone(), Arc::clone(&ctx.workspace), cancel.clone());
        let known = ctx.known.clone();
        on_blocking_pool(TOOL, cancel, move || {
            grep(ws.as_ref(), &known, &call, &stop)
        })
        .await
    }
}

impl Grep {
    /// The pattern compiled as ripgrep compiles it for a line-by-line
    /// search with `--crlf`: it can never match a line end, `$` matches
    /// before a `\r\n` as before a `\n`, and a NUL (which marks a file
    /// binary) is refused.
    fn matcher(&self) -> Result<RegexMatcher, ToolFailure> {
        RegexMatcherBuilder::new()
            .case_insensitive(self.ignore_case)
            .multi_line(true)
            .crlf(true)
            .ban_byte(Some(0))
            .size_limit(GREP_REGEX_MAX_BYTES)
            .dfa_size_limit(GREP_REGEX_MAX_BYTES)
            .build(&self.pattern)
            .map_err(|e| {
                let text = e.to_string();
                let detail = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("invalid")
                    .trim()
                    .trim_start_matches("error: ");
                ToolFailure::InvalidArgument {
                    tool: TOOL.to_owned(),
                    field: "pattern".to_owned(),
                    expected: format!(
                        "a regular expression ({detail}); Rust regex syntax: escape ( ) [ ] {{ }} . * + ? | ^ $ \\ \
                         with \\ to match them literally; no look-around or backreferences; it matches \
                         within one line, so no \\n"
                    ),
                    received: received(&Value::String(self.pattern.clone())),
                }
            })
    }
}

/// The `include` filter: a glob on the file's name, or, when it holds a
/// `/`, on its path relative to the searched directory or to the root.
#[derive(Clone)]
struct Include {
    glob: GlobMatcher,
    by_name: bool,
}

impl Include {
    fn new(pattern: &str) -> Result<Include, ToolFailure> {
        Ok(Include {
            glob: walk::glob_matcher(TOOL, "include", pattern)?,
            by_name: !pattern.contains('/'),
        })
    }

    fn admits(&self, path: &Path, in_target: &Path, in_root: &Path) -> bool {
        if self.by_name {
            return path
                .file_name()
                .is_some_and(|name| self.glob.is_match(Path::new(name)));
        }
        self.glob.is_match_candidate(&Candidate::new(in_target))
            || (in_root != in_target && self.glob.is_match_candidate(&Candidate::new(in_root)))
    }
}

/// One matching line kept: its file relative to the root, its number and
/// its text as shown. Ordered by path, then line.
type Hit = (PathBuf, u64, String);

/// What the walker's threads found, shared.
struct Found {
    /// The smallest hits, at most `max_results`: a max-heap, so the largest
    /// is dropped first.
    head: BinaryHeap<Hit>,
    /// Matching lines found.
    total: u64,
    /// Files skipped as binary.
    binary: u64,
    /// The first unsearched files by name, `path: why`.
    unsearched: BTreeSet<String>,
    /// Unsearched files in all.
    unsearched_total: usize,
    /// A path or line needed U+FFFD.
    lossy: bool,
}

impl Found {
    fn unsearched(&mut self, entry: String) {
        self.unsearched_total += 1;
        self.unsearched.insert(entry);
        if self.unsearched.len() > GREP_UNSEARCHED_MAX_LISTED {
            self.unsearched.pop_last();
        }
    }
}

/// A search in progress: what every thread shares.
struct Search<'a> {
    root: &'a Path,
    target: &'a Path,
    opener: Box<dyn Opener>,
    matcher: RegexMatcher,
    include: Include,
    max: usize,
    searched: Option<PathBuf>,
    files: AtomicU64,
    found: Mutex<Found>,
}

impl Search<'_> {
    /// A searcher as ripgrep's for one thread: lines that end `\n` or
    /// `\r\n`, line numbers, a file with a NUL byte dropped as binary,
    /// the line buffer capped, no memory maps (a file truncated under one
    /// would crash the process).
    fn searcher() -> Searcher {
        SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .heap_limit(Some(GREP_MAX_LINE_BYTES))
            .memory_map(MmapChoice::never())
            .build()
    }

    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Searches one regular file, opened beneath the root without
    /// following a link, and adds what it held.
    fn file(&self, searcher: &mut Searcher, path: &Path) {
        let in_root = path.strip_prefix(self.root).unwrap_or(path);
        let in_target = path.strip_prefix(self.target).unwrap_or(in_root);
        let searched = self
            .searched
            .as_deref()
            .is_some_and(|p| path.starts_with(p));
        if searched || !self.include.admits(path, in_target, in_root) {
            return;
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        let file = match self.opener.open_regular(path) {
            Ok(file) => file,
            Err(e) => {
                let name = walk::shown(in_root).0;
                self.found().unsearched(format!("{name}: cannot open: {e}"));
                return;
            }
        };
        let mut sink = FileMatches {
            keep: self.max,
            lines: Vec::new(),
            count: 0,
            binary: false,
            lossy: false,
        };
        let outcome = searcher.search_reader(&self.matcher, file, &mut sink);
        if !sink.binary && outcome.is_ok() && sink.count == 0 {
            // The common case takes no lock.
            return;
        }
        let mut found = self.found();
        if sink.binary {
            found.binary += 1;
            return;
        }
        let (name, lossy_name) = walk::shown(in_root);
        if let Err(e) = outcome {
            found.unsearched(format!("{name}: {}", stopped(&e)));
        }
        if sink.count == 0 {
            return;
        }
        found.total += sink.count;
        found.lossy |= sink.lossy || lossy_name;
        for (line, text) in sink.lines {
            let later = found
                .head
                .peek()
                .is_some_and(|last| (in_root, line) >= (last.0.as_path(), last.1));
            if found.head.len() >= self.max && later {
                // This file's next lines sort after this one: none fits.
                break;
            }
            found.head.push((in_root.to_path_buf(), line, text));
            if found.head.len() > self.max {
                found.head.pop();
            }
        }
    }
}

/// Why a search stopped before the end of a file, as the model reads it.
fn stopped(e: &io::Error) -> String {
    // The searcher's own words for a line past the heap limit are
    // "configured allocation limit (N) exceeded".
    if e.to_string().contains("allocation limit") {
        format!(
            "a line longer than {} MiB; searched up to it",
            GREP_MAX_LINE_BYTES / (1024 * 1024)
        )
    } else {
        format!("read failed: {e}")
    }
}

/// The matches of one file, kept until the file is known not to be binary.
struct FileMatches {
    /// Most lines kept: a file's later lines sort after its earlier ones,
    /// so no more than `max_results` of them can be shown.
    keep: usize,
    /// Line number and text as shown.
    lines: Vec<(u64, String)>,
    /// Matching lines, kept or not.
    count: u64,
    /// A NUL byte was found: the file is dropped.
    binary: bool,
    /// A line needed U+FFFD.
    lossy: bool,
}

impl Sink for FileMatches {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        if self.lines.len() < self.keep {
            let (text, lossy) = line_text(mat.bytes());
            self.lossy |= lossy;
            self.lines.push((mat.line_number().unwrap_or(0), text));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A matching line as shown: without its line ending, at most
/// [`GREP_LINE_MAX_CHARS`] characters, then `…(+N bytes)` for the rest;
/// bytes that are not UTF-8 become U+FFFD (and the flag says so). Reads no
/// more of the line than it shows.
fn line_text(line: &[u8]) -> (String, bool) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut text = String::new();
    let (mut chars, mut used, mut lossy) = (0, 0, false);
    'chunks: for chunk in line.utf8_chunks() {
        for c in chunk.valid().chars() {
            if chars == GREP_LINE_MAX_CHARS {
                break 'chunks;
            }
            text.push(c);
            chars += 1;
            used += c.len_utf8();
        }
        if !chunk.invalid().is_empty() {
            if chars == GREP_LINE_MAX_CHARS {
                break;
            }
            text.push(char::REPLACEMENT_CHARACTER);
            chars += 1;
            used += chunk.invalid().len();
            lossy = true;
        }
    }
    if used < line.len() {
        text.push_str(&format!("…(+{} bytes)", line.len() - used));
    }
    (text, lossy)
}

/// What one search found, and how many files it searched.
struct Searched {
    found: Found,
    files: u64,
}

impl Searched {
    /// The kept matching lines, sorted by path then line, and each path
    /// as shown.
    fn lines(self) -> (Found, Vec<(String, u64, String)>) {
        let mut found = self.found;
        let hits = std::mem::take(&mut found.head).into_sorted_vec();
        let shown = hits
            .into_iter()
            .map(|(path, line, text)| (walk::shown(&path).0, line, text))
            .collect();
        (found, shown)
    }
}

/// What a grep looks for: the call's pattern and include, compiled, how
/// many lines it keeps, and the file or folder it leaves out (searched
/// already).
#[derive(Clone)]
struct Wanted {
    matcher: RegexMatcher,
    include: Include,
    max: usize,
    searched: Option<PathBuf>,
}

/// Searches `target` (a file or a directory, as `meta` says; `path` as
/// the call named it) for what is `wanted`.
fn search(
    ws: &dyn Workspace,
    root: &Path,
    (target, path): (&Path, &str),
    meta: &Stat,
    wanted: Wanted,
    cancel: &CancellationToken,
) -> Result<Searched, ToolFailure> {
    let opener = ws
        .opener()
        .map_err(|e| io_failure(TOOL, ".", "search", &e))?;
    let search = Search {
        root,
        target,
        opener,
        matcher: wanted.matcher,
        include: wanted.include,
        max: wanted.max,
        searched: wanted.searched,
        files: AtomicU64::new(0),
        found: Mutex::new(Found {
            head: BinaryHeap::new(),
            total: 0,
            binary: 0,
            unsearched: BTreeSet::new(),
            unsearched_total: 0,
            lossy: false,
        }),
    };
    if meta.is_file() {
        search.file(&mut Search::searcher(), target);
    } else if meta.is_dir() {
        let walked = ws.walk(target, cancel, &mut || {
            let mut searcher = Search::searcher();
            let search = &search;
            Box::new(move |seen: Seen<'_>| match seen {
                Seen::File(path) => search.file(&mut searcher, path),
                Seen::Unreadable(entry) => search.found().unsearched(entry),
            }) as Visitor<'_>
        });
        match walked {
            Ok(()) => {}
            Err(WalkError::Cancelled) => {
                return Err(ToolFailure::Cancelled {
                    tool: TOOL.to_owned(),
                    output: None,
                });
            }
            Err(e @ WalkError::Root(_)) => return Err(cannot_search(TOOL, &e)),
        }
    } else {
        return Err(ToolFailure::ExecutionFailed {
            tool: TOOL.to_owned(),
            message: format!("{path} is neither a regular file nor a directory"),
        });
    }
    Ok(Searched {
        files: search.files.load(Ordering::Relaxed),
        found: search
            .found
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner),
    })
}

/// Lines as `matches` shows them: `path:line:text`, one per line.
fn joined(lines: &[(String, u64, String)]) -> String {
    lines
        .iter()
        .map(|(path, line, text)| format!("{path}:{line}:{text}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn grep(
    ws: &dyn Workspace,
    known: &KnownFiles,
    call: &Grep,
    cancel: &CancellationToken,
) -> Result<GrepOutput, ToolFailure> {
    let wanted = Wanted {
        matcher: call.matcher()?,
        include: Include::new(&call.include)?,
        max: call.max_results,
        searched: None,
    };
    // Nothing at the path: the whole project is searched, as for a miss,
    // and says so even when it matches nothing (ADR 0049).
    if absent(ws, &call.path) {
        let root_real = ws
            .real_path(ws.root())
            .map_err(|e| io_failure(TOOL, ".", "search", &e))?;
        let why = format!(
            "{} does not exist, so the whole project was searched{}",
            call.path,
            locate::hint(ws, &call.path)
        );
        let mut out = project_wide(ws, &root_real, call, wanted, why, cancel)?;
        if out.total == 0 {
            out.next = Some(no_match(out.files_searched, &call.path, false, true));
        }
        return Ok(out);
    }
    let (root_real, target, meta) = search_place(TOOL, ws, &call.path)?;
    let searched = search(
        ws,
        &root_real,
        (&target, &call.path),
        &meta,
        wanted.clone(),
        cancel,
    )?;
    let files_searched = searched.files;
    let (found, hits) = searched.lines();
    // Nothing in the file or folder the call named: the whole project is
    // searched, and what it finds is the result, so a model that looked in
    // the wrong place reads where the pattern is (ADR 0049).
    // A named file skipped as binary, or not searched to its end, was not
    // a miss.
    let skipped = meta.is_file() && (found.binary > 0 || found.unsearched_total > 0);
    let widened = hits.is_empty() && target != root_real && !skipped;
    if widened {
        let why = format!(
            "no line matched in {}, so the whole project was searched",
            call.path
        );
        let wanted = Wanted {
            searched: Some(target.clone()),
            ..wanted
        };
        let mut out = project_wide(ws, &root_real, call, wanted, why, cancel)?;
        if out.total > 0 {
            out.files_searched += files_searched;
            return Ok(out);
        }
    }
    let one_file_whole =
        meta.is_file() && files_searched == 1 && found.binary == 0 && found.unsearched_total == 0;
    let mut out = output(call, &call.path, found, &hits);
    out.files_searched = files_searched;
    if hits.is_empty() {
        // The model has then seen the file, as a read would have shown it.
        out.content = one_file_whole
            .then(|| short_text(ws, &target, GREP_WHOLE_FILE_MAX_BYTES))
            .flatten()
            .inspect(|_| known.record(&target));
        out.next = Some(no_match(
            files_searched,
            &call.path,
            out.content.is_some(),
            widened,
        ));
    }
    Ok(out)
}

/// Whether nothing is at `path`, a name in the project without a
/// wildcard: a place to look that is not there, not a pattern.
fn absent(ws: &dyn Workspace, path: &str) -> bool {
    !has_wildcard(path)
        && ws.resolve(path).is_ok_and(
            |real| matches!(ws.lstat(&real), Err(e) if e.kind() == std::io::ErrorKind::NotFound),
        )
}

/// The whole project searched for what `call` looked for elsewhere
/// (`wanted.searched`, when that was searched already), its matches cut
/// to [`GREP_WIDENED_MAX_RESULTS`]; `why` says where it looked first.
fn project_wide(
    ws: &dyn Workspace,
    root_real: &Path,
    call: &Grep,
    wanted: Wanted,
    why: String,
    cancel: &CancellationToken,
) -> Result<GrepOutput, ToolFailure> {
    let root_meta = ws
        .stat(root_real)
        .map_err(|e| io_failure(TOOL, ".", "search", &e))?;
    let wanted = Wanted {
        max: wanted.max.min(GREP_WIDENED_MAX_RESULTS),
        ..wanted
    };
    let whole = search(ws, root_real, (root_real, "."), &root_meta, wanted, cancel)?;
    let files = whole.files;
    let (found, hits) = whole.lines();
    let mut out = output(call, ".", found, &hits);
    out.searched_first = Some(why);
    out.files_searched = files;
    Ok(out)
}

/// The result of a search of `path` that found `found`, its kept lines
/// `hits`: no advice, no content, no files counted yet.
fn output(call: &Grep, path: &str, found: Found, hits: &[(String, u64, String)]) -> GrepOutput {
    let mut unsearched: Vec<String> = found.unsearched.into_iter().collect();
    if found.unsearched_total > unsearched.len() {
        unsearched.push(format!(
            "… and {} more",
            found.unsearched_total - unsearched.len()
        ));
    }
    GrepOutput {
        pattern: call.pattern.clone(),
        path: path.to_owned(),
        searched_first: None,
        matches: joined(hits),
        documentation: documentation_note(hits.iter().map(|(path, ..)| path.as_str())),
        next: None,
        content: None,
        shown: hits.len(),
        total: found.total,
        truncated: found.total > hits.len() as u64,
        files_searched: 0,
        binary_skipped: found.binary,
        unsearched,
        lossy: found.lossy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_shown_without_its_ending_and_cut_with_its_size() {
        assert_eq!(line_text(b"abc\r\n"), ("abc".to_owned(), false));
        let long = "é".repeat(GREP_LINE_MAX_CHARS + 5);
        let (text, lossy) = line_text(long.as_bytes());
        assert!(!lossy);
        assert_eq!(
            text,
            format!("{}…(+10 bytes)", "é".repeat(GREP_LINE_MAX_CHARS))
        );
        assert_eq!(line_text(b"a\xffb\n"), ("a\u{FFFD}b".to_owned(), true));
    }
}
