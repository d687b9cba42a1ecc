//! The ignore rules a walk applies: each `.gitignore` of the directories
//! it enters, and a repository's `.git/info/exclude`, read as `read_file`
//! reads a file — beneath the root with `openat2`, never through a link,
//! never blocking on a FIFO, at most [`IGNORE_FILE_MAX_BYTES`] — and
//! matched with ripgrep's gitignore matcher. Nothing above the walk's
//! start is read, and a linked worktree's `.git` file is not followed: a
//! project cannot make a search read, or hang on, a file elsewhere.
//! `docs/decisions/0024-search-tools.md`.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::beneath::Root;

/// The largest ignore file applied (1 MiB); a larger one is left out with
/// a notice.
const IGNORE_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// Notices about ignore files left out, at most, per walk.
const NOTICES_MAX: usize = 16;

/// The rules of one walk from `base` down: what each directory entered
/// holds, kept for the directories that hold any.
pub(crate) struct IgnoreRules {
    opener: Root,
    /// The real root, which every path is beneath.
    root: PathBuf,
    /// Where the walk starts: rules of directories above it do not apply.
    base: PathBuf,
    gitignores: RwLock<HashMap<PathBuf, Arc<Gitignore>>>,
    excludes: RwLock<HashMap<PathBuf, Arc<Gitignore>>>,
    left_out: Mutex<LeftOut>,
}

/// The ignore files left out, as the walk reports them.
#[derive(Default)]
struct LeftOut {
    notices: Vec<String>,
    more: usize,
}

impl IgnoreRules {
    /// The rules for a walk of `base`, a directory beneath the real root
    /// `root`, with `base`'s own read already.
    pub(crate) fn new(root: &Path, base: &Path) -> std::io::Result<IgnoreRules> {
        let rules = IgnoreRules {
            opener: Root::open(root)?,
            root: root.to_path_buf(),
            base: base.to_path_buf(),
            gitignores: RwLock::default(),
            excludes: RwLock::default(),
            left_out: Mutex::default(),
        };
        rules.enter(base);
        Ok(rules)
    }

    /// Reads the rules `dir` holds, before the walk goes into it.
    pub(crate) fn enter(&self, dir: &Path) {
        if let Some(rules) = self.read(dir, &dir.join(".gitignore")) {
            write(&self.gitignores).insert(dir.to_path_buf(), rules);
        }
        let dotgit = dir.join(".git");
        let is_git_dir = std::fs::symlink_metadata(&dotgit).is_ok_and(|m| m.is_dir());
        if is_git_dir && let Some(rules) = self.read(dir, &dotgit.join("info").join("exclude")) {
            write(&self.excludes).insert(dir.to_path_buf(), rules);
        }
    }

    /// Whether the rules ignore `path`, a directory or not: the nearest
    /// `.gitignore` with a matching line decides (its last one), then a
    /// repository's exclude file.
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for rules in [&self.gitignores, &self.excludes] {
            let rules = read(rules);
            if rules.is_empty() {
                continue;
            }
            let decided = path
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(&self.base))
                .filter_map(|dir| rules.get(dir))
                .map(|gi| gi.matched(path, is_dir))
                .find(|m| !m.is_none());
            if let Some(decided) = decided {
                return decided.is_ignore();
            }
        }
        false
    }

    /// What was left out and why, each as `path: why` relative to the
    /// root, for the walk to report.
    pub(crate) fn take_notices(&self) -> Vec<String> {
        let mut left = self.left_out.lock().unwrap_or_else(PoisonError::into_inner);
        let mut notices = std::mem::take(&mut left.notices);
        if left.more > 0 {
            notices.push(format!("… and {} more ignore files left out", left.more));
            left.more = 0;
        }
        notices
    }

    /// The rules in `file`, matched from `dir`; `None` when it does not
    /// exist or holds none, and when it cannot be read beneath the root
    /// as a regular file within the cap (then with a notice).
    fn read(&self, dir: &Path, file: &Path) -> Option<Arc<Gitignore>> {
        let mut bytes = Vec::new();
        let read = self
            .opener
            .open_regular(file)
            .and_then(|f| f.take(IGNORE_FILE_MAX_BYTES + 1).read_to_end(&mut bytes));
        match read {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                self.leave_out(file, &why_not_read(&e));
                return None;
            }
            Ok(_) if bytes.len() as u64 > IGNORE_FILE_MAX_BYTES => {
                self.leave_out(file, "larger than 1 MiB");
                return None;
            }
            Ok(_) => {}
        }
        let mut builder = GitignoreBuilder::new(dir);
        for line in String::from_utf8_lossy(&bytes).lines() {
            // A line that is not a valid glob is skipped, as git skips it.
            let _ = builder.add_line(Some(file.to_path_buf()), line);
        }
        builder
            .build()
            .ok()
            .filter(|gi| !gi.is_empty())
            .map(Arc::new)
    }

    fn leave_out(&self, file: &Path, why: &str) {
        let mut left = self.left_out.lock().unwrap_or_else(PoisonError::into_inner);
        if left.notices.len() < NOTICES_MAX {
            let shown = file.strip_prefix(&self.root).unwrap_or(file);
            left.notices.push(format!(
                "{}: not applied ({why}); ignore files are read only as regular files in the project",
                shown.display()
            ));
        } else {
            left.more += 1;
        }
    }
}

/// Why an ignore file was not read, as the model reads it.
fn why_not_read(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) if code == nix::errno::Errno::ELOOP as i32 => "a symbolic link".to_owned(),
        _ if e.kind() == std::io::ErrorKind::InvalidInput => "not a regular file".to_owned(),
        _ => e.to_string(),
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
