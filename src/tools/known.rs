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
pub const KNOWN_MAX_FILES: usize = 1024;

/// The real paths of the files the model has read, created or edited since
/// the conversation began, oldest first. Shared by every clone of a
/// [`ToolContext`](super::ToolContext).
#[derive(Debug, Clone, Default)]
pub struct KnownFiles {
    paths: Arc<Mutex<VecDeque<PathBuf>>>,
}

impl KnownFiles {
    /// Remembers that the model has seen `real`'s content.
    pub fn record(&self, real: &Path) {
        let mut paths = self.lock();
        if let Some(at) = paths.iter().position(|p| p == real) {
            paths.remove(at);
        } else if paths.len() == KNOWN_MAX_FILES {
            paths.pop_front();
        }
        paths.push_back(real.to_path_buf());
    }

    /// Whether the model has seen `real`'s content.
    pub fn contains(&self, real: &Path) -> bool {
        self.lock().iter().any(|p| p == real)
    }

    /// Forgets every file: the conversation starts again.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<PathBuf>> {
        // The list is valid after any panic: every change is one call.
        self.paths.lock().unwrap_or_else(PoisonError::into_inner)
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
        assert_eq!(known.lock().len(), KNOWN_MAX_FILES);
    }
}
