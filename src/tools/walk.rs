//! The walk `glob` and `grep` share, as the local workspace does it
//! ([`Workspace::walk`](super::Workspace::walk) of
//! [`LocalWorkspace`](super::LocalWorkspace)): ripgrep's `ignore` walker
//! over the project, on as many threads as it picks, honouring
//! `.gitignore`, skipping vendored and build directories, never following
//! a link. Only paths below the root are walked and no ignore file above
//! the root is applied, so what a search finds depends on the project
//! alone. Also the pieces of a search any workspace shares: the skipped
//! directories, the glob syntax, and how a path is shown.
//! `docs/decisions/0024-search-tools.md`, `0026-workspace-seam.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::failure::ToolFailure;
use super::ignore_rules::IgnoreRules;
use super::validate::received;
use super::workspace::{Seen, WalkError};

/// Directories the search tools do not enter, wherever they are, unless
/// the call's `path` names one or a place inside one: version-control
/// metadata, installed dependencies and virtual environments, caches, and
/// build output. What they hold is either not the project's source or
/// generated from it, and they are often the bulk of a tree (ADR 0024).
pub const SEARCH_SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    "vendor",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    "target",
    "dist",
    "build",
    ".next",
    ".gradle",
];

/// Walks the regular files under `target`, a directory the path policy
/// returned for `root` (the real root), handing each to a visitor; `make`
/// makes one visitor per walker thread. Stops between files once `cancel`
/// is cancelled.
///
/// The walk starts at the root and goes straight down to `target`, so the
/// `.gitignore` files on the way apply as git applies them. When one of
/// them ignores `target` itself, or it lies in a skipped directory, the
/// call named it on purpose: it is walked from itself instead, with the
/// ignore files inside it.
pub(crate) fn files<V>(
    root: &Path,
    target: &Path,
    cancel: &CancellationToken,
    mut make: impl FnMut() -> V,
) -> Result<(), WalkError>
where
    V: FnMut(Seen<'_>) + Send,
{
    let target = Arc::new(target.to_path_buf());
    let reached = AtomicBool::new(*target == root);
    for start in [root, target.as_path()] {
        let rules = IgnoreRules::new(root, start).map_err(|e| WalkError::Root(e.to_string()))?;
        let rules = Arc::new(rules);
        walker(start, &target, &rules).build_parallel().run(|| {
            let mut visit = make();
            let (reached, target) = (&reached, &target);
            Box::new(move |entry: Result<DirEntry, ignore::Error>| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                match entry {
                    Ok(entry) => {
                        if entry.path() == target.as_path() {
                            reached.store(true, Ordering::Relaxed);
                        }
                        if entry.file_type().is_some_and(|t| t.is_file()) {
                            visit(Seen::File(entry.path()));
                        }
                    }
                    Err(e) => {
                        if let Some(text) = unreadable(root, &e) {
                            visit(Seen::Unreadable(text));
                        }
                    }
                }
                WalkState::Continue
            })
        });
        let mut visit = make();
        for notice in rules.take_notices() {
            visit(Seen::Unreadable(notice));
        }
        if cancel.is_cancelled() {
            return Err(WalkError::Cancelled);
        }
        if reached.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(())
}

/// The walker from `start`: `rules` (each `.gitignore` and a repository's
/// `.git/info/exclude`, read beneath the root) applied whether or not
/// there is a repository, nothing from above `start` or from the person's
/// global git configuration, hidden files kept, links neither followed
/// nor reported as files.
fn walker(start: &Path, target: &Arc<PathBuf>, rules: &Arc<IgnoreRules>) -> WalkBuilder {
    let target = Arc::clone(target);
    let rules = Arc::clone(rules);
    let mut builder = WalkBuilder::new(start);
    builder
        .standard_filters(false)
        .follow_links(false)
        .threads(0)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let path = entry.path();
            if !admitted(path, is_dir, &target) || rules.ignored(path, is_dir) {
                return false;
            }
            if is_dir {
                rules.enter(path);
            }
            true
        });
    builder
}

/// Whether the walk goes on to `path`: the directories on the way to
/// `target` and `target` itself always, what lies inside `target` unless it
/// is a skipped directory, nothing else.
fn admitted(path: &Path, is_dir: bool, target: &Path) -> bool {
    if target.starts_with(path) {
        return true;
    }
    if !path.starts_with(target) {
        return false;
    }
    !(is_dir
        && path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| SEARCH_SKIPPED_DIRS.contains(&name)))
}

/// A directory the walk could not read, as the model should read it; `None`
/// for what is not about a file of the project (an unreadable or invalid
/// ignore file is skipped quietly, as git does).
fn unreadable(root: &Path, error: &ignore::Error) -> Option<String> {
    match error {
        ignore::Error::WithPath { path, err } => {
            let io = err.io_error()?;
            let relative = path.strip_prefix(root).unwrap_or(path);
            Some(format!("{}: {io}", shown(relative).0))
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            unreadable(root, err)
        }
        _ => None,
    }
}

/// A path relative to the root as the model reads it, and whether that
/// needed U+FFFD for bytes that are not UTF-8.
pub(crate) fn shown(relative: &Path) -> (String, bool) {
    if relative.as_os_str().is_empty() {
        return (".".to_owned(), false);
    }
    match relative.to_str() {
        Some(text) => (text.to_owned(), false),
        None => (relative.to_string_lossy().into_owned(), true),
    }
}

/// A `**`-style glob for `field` of `tool`: `*` and `?` stay within one
/// directory, `**` crosses any number. A leading `./` is dropped. An
/// invalid pattern is an invalid argument saying what is wrong; so is an
/// absolute one, or one starting with `..`, which no path relative to the
/// folder searched could match.
pub(crate) fn glob_matcher(
    tool: &str,
    field: &str,
    pattern: &str,
) -> Result<GlobMatcher, ToolFailure> {
    let mut trimmed = pattern;
    while let Some(rest) = trimmed.strip_prefix("./") {
        trimmed = rest;
    }
    if trimmed.starts_with('/') || trimmed == ".." || trimmed.starts_with("../") {
        return Err(ToolFailure::InvalidArgument {
            tool: tool.to_owned(),
            field: field.to_owned(),
            expected: "a glob pattern relative to the folder searched (`path`, the project by \
                       default), such as `src/**/*.rs`; not an absolute path or one starting with `..`"
                .to_owned(),
            received: received(&serde_json::Value::String(pattern.to_owned())),
        });
    }
    GlobBuilder::new(trimmed)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| ToolFailure::InvalidArgument {
            tool: tool.to_owned(),
            field: field.to_owned(),
            expected: format!(
                "a glob pattern ({}); `*` and `?` match within one directory, `**` any number of \
                 them, `{{a,b}}` either, `[ab]` one of; escape a literal `*`, `?`, `[` or `{{` with `\\`",
                e.kind()
            ),
            received: received(&serde_json::Value::String(pattern.to_owned())),
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_cancelled_walk_stops_between_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..1_000 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        let cancel = CancellationToken::new();
        let visits = AtomicUsize::new(0);
        let walked = files(&root, &root, &cancel, || {
            |_: Seen<'_>| {
                visits.fetch_add(1, Ordering::Relaxed);
                cancel.cancel();
            }
        });
        assert_eq!(walked, Err(WalkError::Cancelled));
        // Each walker thread finishes at most the file it was on.
        assert!(visits.load(Ordering::Relaxed) <= 16, "{visits:?}");
        let never = files(&root, &root, &cancel, || {
            |_: Seen<'_>| panic!("visited after the cancellation")
        });
        assert_eq!(never, Err(WalkError::Cancelled));
    }

    #[test]
    fn only_the_way_to_the_target_and_what_is_inside_it_are_admitted() {
        let target = Path::new("/p/src/lib");
        assert!(admitted(Path::new("/p/src"), true, target), "on the way");
        assert!(admitted(target, true, target), "the target itself");
        assert!(admitted(Path::new("/p/src/lib/a.rs"), false, target));
        assert!(!admitted(Path::new("/p/docs"), true, target), "off the way");
        assert!(!admitted(Path::new("/p/src/main.rs"), false, target));
        assert!(!admitted(Path::new("/p/src/lib/target"), true, target));
        assert!(
            admitted(Path::new("/p/src/lib/target"), false, target),
            "a file named like a skipped directory is kept"
        );
        let vendored = Path::new("/p/node_modules/x");
        assert!(
            admitted(Path::new("/p/node_modules"), true, vendored),
            "a skipped directory the call names is walked"
        );
    }
}
