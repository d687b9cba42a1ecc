//! The numbers the actor hands out, none twice in a run: episodes (whose
//! made-up call ids carry theirs), preview tasks, restore confirmations.

use crate::protocol::CallId;

/// What was handed out so far, counted.
#[derive(Debug, Default)]
pub(super) struct Tickets {
    episodes: u64,
    previews: u64,
    restores: u64,
}

impl Tickets {
    /// The number the next episode gets.
    pub(super) fn upcoming_episode(&self) -> u64 {
        self.episodes + 1
    }

    /// Hands out the next episode's number.
    pub(super) fn next_episode(&mut self) -> u64 {
        self.episodes += 1;
        self.episodes
    }

    /// A resumed session's made-up ids reach `past`: the episodes from now
    /// on are numbered after it, so no id repeats one of its.
    pub(super) fn episodes_past(&mut self, past: u64) {
        self.episodes = self.episodes.max(past);
    }

    /// Hands out the next preview task's ticket: a late result of a task
    /// no longer waited for is told apart by it.
    pub(super) fn next_preview(&mut self) -> u64 {
        self.previews += 1;
        self.previews
    }

    /// Hands out the next restore confirmation's id.
    pub(super) fn next_restore(&mut self) -> CallId {
        self.restores += 1;
        format!("restore-{}", self.restores)
    }
}
