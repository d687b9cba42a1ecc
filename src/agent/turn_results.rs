//! The turn's own tool results as their tools returned them, before any
//! cut: kept while the turn runs, until its first context-exceeded error,
//! so that a window learnt from that error can cut them again by each
//! tool's own cut (`Shown::cut`), notes and all. The conversation holds
//! only their JSON, and a turn's results are never compacted. ADR 0021.

use crate::protocol::CallId;
use crate::tools::ToolResult;

use super::compact::RESULT_CUT_MIN_BYTES;

/// The most bytes (of the JSON the model would read uncut) of one turn's
/// results kept to be cut again: 4 MiB, 64 whole `read_file` results and
/// about 1.2 million tokens at the starting ratio, nine times the 128,000
/// tokens assumed of a provider that states no window. A result past it
/// is not kept, and stays as first sent should the window turn out
/// smaller. ADR 0021.
const TURN_RESULTS_MAX_BYTES: usize = 4 * 1024 * 1024;

/// One result kept.
#[derive(Debug)]
pub(super) struct Kept {
    /// Where its tool message is, counted from the turn's prompt: a
    /// summary takes the place of messages before the prompt only, so
    /// this holds for the whole turn.
    pub(super) offset: usize,
    /// The call it answers.
    pub(super) id: CallId,
    /// The result as its tool returned it.
    pub(super) whole: ToolResult,
    /// The bytes of its JSON, uncut.
    pub(super) size: usize,
}

/// The results of the turn in progress that a cut could shorten.
#[derive(Debug, Default)]
pub(super) struct TurnResults {
    kept: Vec<Kept>,
    /// The sum of their sizes, within [`TURN_RESULTS_MAX_BYTES`].
    bytes: usize,
}

impl TurnResults {
    /// Whether a result whose JSON takes `size` bytes would be kept: a
    /// cut could shorten it (it is over the smallest cut,
    /// [`RESULT_CUT_MIN_BYTES`]) and it fits within
    /// [`TURN_RESULTS_MAX_BYTES`] with those kept. Asked before the copy
    /// is made.
    pub(super) fn would_keep(&self, size: usize) -> bool {
        size > RESULT_CUT_MIN_BYTES && self.bytes + size <= TURN_RESULTS_MAX_BYTES
    }

    /// Keeps `kept`, unless it [would not be kept](Self::would_keep).
    pub(super) fn keep(&mut self, kept: Kept) {
        if self.would_keep(kept.size) {
            self.bytes += kept.size;
            self.kept.push(kept);
        }
    }

    /// The results kept, in the order they joined the conversation.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Kept> {
        self.kept.iter()
    }

    /// Lets go of every result kept: the turn ended, or its one retry at
    /// the wall was planned.
    pub(super) fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolFailure;

    fn kept(size: usize) -> Kept {
        Kept {
            offset: 2,
            id: "c0".to_owned(),
            whole: ToolFailure::ExecutionFailed {
                tool: "read_file".to_owned(),
                message: String::new(),
            }
            .into(),
            size,
        }
    }

    #[test]
    fn only_results_a_cut_could_shorten_are_kept_and_within_the_bound() {
        let mut results = TurnResults::default();
        results.keep(kept(RESULT_CUT_MIN_BYTES));
        assert_eq!(results.iter().count(), 0, "no cut shortens it");
        results.keep(kept(TURN_RESULTS_MAX_BYTES - 1));
        results.keep(kept(RESULT_CUT_MIN_BYTES + 1));
        assert_eq!(results.iter().count(), 1, "past the bound");
        assert_eq!(results.bytes, TURN_RESULTS_MAX_BYTES - 1);
        results.clear();
        assert_eq!(results.iter().count(), 0);
        results.keep(kept(TURN_RESULTS_MAX_BYTES));
        assert_eq!(results.iter().count(), 1, "the bound itself is within");
    }
}
