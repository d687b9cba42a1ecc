//! `glob`: the project's files whose path matches a `**`-style pattern,
//! sorted, bounded. The walk is `walk::files` (ripgrep's `ignore`); only
//! the head of the sorted matches is kept, in a bounded heap, so a tree of
//! any size costs time, not memory. `docs/decisions/0024-search-tools.md`.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use globset::Candidate;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, ToolStatus};

use super::failure::ToolFailure;
use super::tool::{Effect, Shown, Tool, on_blocking_pool, path_parameter};
use super::walk;
use super::{Seen, ToolContext, Visitor, WalkError, Workspace, cannot_search, search_place};

const TOOL: &str = Glob::NAME;

/// Paths one call returns when `max_results` is not given. Enough for any
/// directory a person would look through; past it the model is better
/// served by a narrower pattern. ADR 0024.
pub const GLOB_DEFAULT_MAX_RESULTS: usize = 1_000;
/// Largest `max_results` the schema accepts: about 500 KB of paths, which
/// the context window's cut (ADR 0021) may shorten further. ADR 0024.
const GLOB_MAX_RESULTS: usize = 10_000;

/// What one path costs beyond its text in the JSON the model reads (quotes
/// and a comma), for [`Shown::cut`].
const GLOB_ENTRY_OVERHEAD_BYTES: usize = 3;

/// A `glob` call: the files whose path matches a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Glob {
    /// The pattern, as the model gave it.
    pub pattern: String,
    /// The directory searched, as the model gave it.
    #[serde(default = "super::here")]
    pub path: String,
    /// Most paths to return.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
}

fn default_max_results() -> usize {
    GLOB_DEFAULT_MAX_RESULTS
}

/// The head of the sorted matching paths, and how many matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GlobOutput {
    /// The pattern, as the model gave it.
    pub pattern: String,
    /// The directory searched, as the model gave it.
    pub path: String,
    /// The first matching files, relative to the working directory, sorted
    /// by path (directory by directory).
    pub files: Vec<String>,
    /// Files that matched.
    pub total: usize,
    /// More files matched than are listed.
    pub truncated: bool,
    /// A path is not UTF-8; U+FFFD replaced what is not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
}

impl Shown for GlobOutput {
    fn status(&self) -> ToolStatus {
        ToolStatus::ok_unless_empty(self.total == 0, || "nothing matches".into())
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(self.files.join("\n"))
    }

    /// Keeps the first paths that fit; `truncated` and `total` say the rest
    /// exist. ADR 0021.
    fn cut(&mut self, max_bytes: usize) -> bool {
        let mut size = 0;
        let keep = self
            .files
            .iter()
            .take_while(|f| {
                size += f.len() + GLOB_ENTRY_OVERHEAD_BYTES;
                size <= max_bytes
            })
            .count();
        if keep == self.files.len() {
            return false;
        }
        self.files.truncate(keep);
        self.truncated = true;
        true
    }
}

impl Tool for Glob {
    const NAME: &'static str = "glob";
    const EFFECT: Effect = Effect::Reads;
    type Output = GlobOutput;

    fn description() -> String {
        "Find files by name: `pattern` is a glob such as `**/test_*` (at any depth) or `docs/*.md`. \
             Returns the matching files' paths, sorted; `truncated` says more matched. Skips \
             .gitignored files and build folders such as target and node_modules."
            .to_owned()
    }

    fn parameters() -> Value {
        let mut path = path_parameter("The directory to search");
        path["default"] = json!(".");
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The glob, e.g. `**/*.md` or `docs/**/intro*`."
                },
                "path": path,
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": GLOB_MAX_RESULTS,
                    "default": GLOB_DEFAULT_MAX_RESULTS,
                    "description": "Most paths to return."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> Result<(), ToolFailure> {
        walk::glob_matcher(TOOL, "pattern", &self.pattern).map(drop)
    }

    fn summary(&self) -> String {
        if self.path == "." {
            self.pattern.clone()
        } else {
            format!("{} in {}", self.pattern, self.path)
        }
    }

    fn place_mut(&mut self) -> &mut String {
        &mut self.path
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        _guard: FileGuard,
    ) -> Result<GlobOutput, ToolFailure> {
        let (call, ws, stop) = (self.clone(), Arc::clone(&ctx.workspace), cancel.clone());
        on_blocking_pool(TOOL, cancel, move || glob(ws.as_ref(), &call, &stop)).await
    }
}

/// The head of the matches seen so far, shared by the walker's threads.
struct Found {
    /// The smallest matching paths (relative to the root), at most
    /// `max_results` of them: a max-heap, so the largest is dropped first.
    head: BinaryHeap<PathBuf>,
    /// Matches seen.
    total: usize,
}

fn glob(
    ws: &dyn Workspace,
    call: &Glob,
    cancel: &CancellationToken,
) -> Result<GlobOutput, ToolFailure> {
    let matcher = walk::glob_matcher(TOOL, "pattern", &call.pattern)?;
    let (root_real, target, meta) = search_place(TOOL, ws, &call.path)?;
    if !meta.is_dir() {
        return Err(ToolFailure::ExecutionFailed {
            tool: TOOL.to_owned(),
            message: format!(
                "{} is not a directory; glob looks for files inside a directory (read_file reads a file)",
                call.path
            ),
        });
    }
    let max = call.max_results;
    let found = Mutex::new(Found {
        head: BinaryHeap::with_capacity(max.min(GLOB_DEFAULT_MAX_RESULTS) + 1),
        total: 0,
    });
    let walked = ws.walk(&target, cancel, &mut || {
        Box::new(|seen: Seen<'_>| {
            let Seen::File(path) = seen else { return };
            let in_root = path.strip_prefix(&root_real).unwrap_or(path);
            let in_target = path.strip_prefix(&target).unwrap_or(path);
            if !(matcher.is_match_candidate(&Candidate::new(in_target))
                || (in_root != in_target && matcher.is_match_candidate(&Candidate::new(in_root))))
            {
                return;
            }
            let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
            found.total += 1;
            if found.head.len() < max || found.head.peek().is_some_and(|last| in_root < last) {
                found.head.push(in_root.to_path_buf());
                if found.head.len() > max {
                    found.head.pop();
                }
            }
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
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut lossy = false;
    let files = found
        .head
        .into_sorted_vec()
        .into_iter()
        .map(|relative| {
            let (text, bad) = walk::shown(&relative);
            lossy |= bad;
            text
        })
        .collect();
    Ok(GlobOutput {
        pattern: call.pattern.clone(),
        path: call.path.clone(),
        files,
        total: found.total,
        truncated: found.total > max,
        lossy,
    })
}
