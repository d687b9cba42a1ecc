//! The files whose content the model has seen in this conversation, so
//! `write_file` can refuse to replace a file the model never read: a small
//! model asked to add a line writes the file anew with only that line.
//! `docs/decisions/0030-read-before-replace.md`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Most files remembered; past it the oldest is forgotten, and replacing
/// it needs another read. A conversation that reads more files than this
/// has compacted most of them away.
const KNOWN_MAX_FILES: usize = 1024;

/// The real paths of the files the model has read, created or edited since
/// the conversation began, oldest first, each with the turn it was last
/// seen in. Shared by every clone of a [`ToolContext`](super::ToolContext).
#[derive(Debug, Clone, Default)]
pub struct KnownFiles {
    inner: Arc<Mutex<Known>>,
}

#[derive(Debug, Default)]
struct Known {
    paths: VecDeque<(PathBuf, u64)>,
    turn: u64,
}

impl KnownFiles {
    /// Remembers that the model has seen `real`'s content in this turn.
    pub fn record(&self, real: &Path) {
        let mut known = self.lock();
        let turn = known.turn;
        if let Some(at) = known.paths.iter().position(|(p, _)| p == real) {
            known.paths.remove(at);
        } else if known.paths.len() == KNOWN_MAX_FILES {
            known.paths.pop_front();
        }
        known.paths.push_back((real.to_path_buf(), turn));
    }

    /// Whether the model has seen `real`'s content.
    pub fn contains(&self, real: &Path) -> bool {
        self.lock().paths.iter().any(|(p, _)| p == real)
    }

    /// A turn begins: what is seen from now on belongs to it.
    pub fn begin_turn(&self) {
        let mut known = self.lock();
        known.turn = known.turn.saturating_add(1);
    }

    /// Forgets the files seen before this turn: compaction pruned or
    /// summarised what the model saw of them, and this turn is kept whole.
    pub fn forget_earlier_turns(&self) {
        let mut known = self.lock();
        let turn = known.turn;
        known.paths.retain(|(_, seen)| *seen == turn);
    }

    /// Forgets every file: the conversation starts again.
    pub fn clear(&self) {
        self.lock().paths.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        // The list is valid after any panic: every change is one call.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_path_is_known_until_cleared() {
        let known = KnownFiles::default();
        let shared = known.clone();
        known.record(Path::new("/p/a"));
        assert!(shared.contains(Path::new("/p/a")));
        assert!(!shared.contains(Path::new("/p/b")));
        shared.clear();
        assert!(!known.contains(Path::new("/p/a")));
    }

    #[test]
    fn past_the_bound_the_least_recently_seen_file_is_forgotten() {
        let known = KnownFiles::default();
        for n in 0..KNOWN_MAX_FILES {
            known.record(&PathBuf::from(format!("/p/{n}")));
        }
        // Seeing the oldest again makes it the newest.
        known.record(Path::new("/p/0"));
        known.record(Path::new("/p/new"));
        assert!(known.contains(Path::new("/p/0")));
        assert!(!known.contains(Path::new("/p/1")));
        assert!(known.contains(Path::new("/p/new")));
        assert_eq!(known.lock().paths.len(), KNOWN_MAX_FILES);
    }

    #[test]
    fn compaction_forgets_what_earlier_turns_saw() {
        let known = KnownFiles::default();
        known.record(Path::new("/p/old"));
        known.record(Path::new("/p/again"));
        known.begin_turn();
        known.record(Path::new("/p/new"));
        known.record(Path::new("/p/again"));
        known.forget_earlier_turns();
        assert!(!known.contains(Path::new("/p/old")));
        assert!(known.contains(Path::new("/p/new")));
        assert!(known.contains(Path::new("/p/again")));
    }
}
