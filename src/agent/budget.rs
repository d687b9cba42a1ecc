//! The context budget: how many prompt tokens the next request will take,
//! how much of the window stays free for the reply, and the marks at which
//! the conversation is compacted. Counts are estimates calibrated from the
//! provider's own usage reports; the provider's word, when it comes, wins.
//! ADR 0021.

/// Bytes of request per prompt token assumed until the provider reports
/// usage: typical of English text, code and JSON with BPE tokenisers.
/// ADR 0021.
pub const BYTES_PER_TOKEN_START: f64 = 3.5;
/// The fewest bytes per token a usage report may calibrate to (text in
/// scripts that take a token per character or two). ADR 0021.
const BYTES_PER_TOKEN_MIN: f64 = 1.5;
/// The most bytes per token a usage report may calibrate to: past it the
/// report is implausible (a server that counts only the uncached part).
/// ADR 0021.
const BYTES_PER_TOKEN_MAX: f64 = 8.0;
/// Without a `max_output` setting, the reply is reserved this fraction of
/// the window (1/8). ADR 0021.
const OUTPUT_RESERVE_DIVISOR: u64 = 8;
/// The smallest reply reserve without a `max_output` setting, in tokens.
/// ADR 0021.
const OUTPUT_RESERVE_MIN: u64 = 512;
/// The reply reserve never takes more than this fraction of the window
/// (1/2), whatever `max_output` says, so a prompt always has room.
/// ADR 0021.
const OUTPUT_RESERVE_MAX_DIVISOR: u64 = 2;
/// The share of the window past which the conversation is compacted
/// before the next request, unless `compact_at` says otherwise. ADR 0021.
pub const DEFAULT_COMPACT_AT: f64 = 0.8;
/// The lowest `compact_at` accepted: lower would compact at every step.
/// ADR 0021.
pub const COMPACT_AT_MIN: f64 = 0.3;
/// The highest `compact_at` accepted: higher leaves no room to compact
/// before the wall. ADR 0021.
pub const COMPACT_AT_MAX: f64 = 0.95;
/// Pruning goes down to this fraction of the window (1/2) in one go, so
/// the prefix then stays unchanged for many steps. ADR 0021.
const PRUNE_TARGET_DIVISOR: u64 = 2;
/// The turns kept verbatim after a summary fit in this fraction (1/2) of
/// the prompt budget. ADR 0021.
const KEEP_DIVISOR: u64 = 2;

/// The largest window taken, in tokens: the largest any model publishes
/// (10M). A window stated larger is wrong, and would let the conversation
/// grow without ever being compacted. ADR 0021.
const CONTEXT_WINDOW_MAX: u64 = 10_000_000;

/// A usage report: the request's size and what the provider counted.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Anchor {
    bytes: usize,
    tokens: u64,
}

/// The budget of one conversation with one model.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    window: u64,
    max_output: Option<u64>,
    compact_at: f64,
    bytes_per_token: f64,
    anchor: Option<Anchor>,
}

impl Budget {
    /// A budget for `window` tokens (at most [`CONTEXT_WINDOW_MAX`]),
    /// reserving `max_output` for the reply
    /// (or the default share), compacting past `compact_at` of the window
    /// (clamped to [`COMPACT_AT_MIN`] ..= [`COMPACT_AT_MAX`]).
    pub fn new(window: u64, max_output: Option<u64>, compact_at: f64) -> Self {
        let compact_at = if compact_at.is_finite() {
            compact_at.clamp(COMPACT_AT_MIN, COMPACT_AT_MAX)
        } else {
            DEFAULT_COMPACT_AT
        };
        Self {
            window: window.clamp(1, CONTEXT_WINDOW_MAX),
            max_output,
            compact_at,
            bytes_per_token: BYTES_PER_TOKEN_START,
            anchor: None,
        }
    }

    /// The window in tokens.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Takes the window the server stated (discovery, or a
    /// context-exceeded message), at most [`CONTEXT_WINDOW_MAX`]. Zero is
    /// no answer.
    pub fn set_window(&mut self, window: u64) {
        if window > 0 {
            self.window = window.min(CONTEXT_WINDOW_MAX);
        }
    }

    /// Tokens kept free for the reply.
    pub fn reserve(&self) -> u64 {
        let wanted = self
            .max_output
            .unwrap_or((self.window / OUTPUT_RESERVE_DIVISOR).max(OUTPUT_RESERVE_MIN));
        wanted.min(self.window / OUTPUT_RESERVE_MAX_DIVISOR)
    }

    /// Prompt tokens a request may hold: the window less the reserve.
    pub fn usable(&self) -> u64 {
        self.window - self.reserve()
    }

    /// Past this estimate the conversation is compacted before the next
    /// request: `compact_at` of the window, and never past what is usable.
    pub fn threshold(&self) -> u64 {
        let share = (self.window as f64 * self.compact_at) as u64;
        share.min(self.usable())
    }

    /// What pruning aims for: half the window (never above the threshold).
    pub fn prune_target(&self) -> u64 {
        (self.window / PRUNE_TARGET_DIVISOR).min(self.threshold())
    }

    /// The most tokens of recent turns a summary keeps verbatim.
    pub fn keep(&self) -> u64 {
        self.usable() / KEEP_DIVISOR
    }

    /// Tokens `bytes` of request are estimated to take.
    pub fn tokens(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.bytes_per_token).ceil() as u64
    }

    /// Bytes that are estimated to take `tokens`.
    pub fn bytes(&self, tokens: u64) -> usize {
        (tokens as f64 * self.bytes_per_token) as usize
    }

    /// The prompt tokens of a request of `bytes`: the last reported count
    /// plus the bytes added (or less the bytes removed) since, at the
    /// calibrated ratio; before any report, the bytes at that ratio.
    pub fn estimate(&self, bytes: usize) -> u64 {
        match self.anchor {
            Some(anchor) => {
                let delta = (bytes as f64 - anchor.bytes as f64) / self.bytes_per_token;
                (anchor.tokens as f64 + delta).max(0.0).ceil() as u64
            }
            None => self.tokens(bytes),
        }
    }

    /// The conversation was replaced (a new or resumed session): the last
    /// report no longer describes it, so the estimate starts again from
    /// its bytes at the calibrated ratio.
    pub fn forget_report(&mut self) {
        self.anchor = None;
    }

    /// The provider counted `prompt_tokens` for a request of `bytes`: the
    /// new anchor of the estimate, and the ratio, within
    /// [`BYTES_PER_TOKEN_MIN`] ..= [`BYTES_PER_TOKEN_MAX`]. A zero count
    /// says nothing.
    pub fn report(&mut self, bytes: usize, prompt_tokens: u64) {
        if prompt_tokens == 0 || bytes == 0 {
            return;
        }
        self.bytes_per_token =
            (bytes as f64 / prompt_tokens as f64).clamp(BYTES_PER_TOKEN_MIN, BYTES_PER_TOKEN_MAX);
        self.anchor = Some(Anchor {
            bytes,
            tokens: prompt_tokens,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_any_report_the_estimate_is_bytes_at_the_starting_ratio() {
        let budget = Budget::new(8192, None, DEFAULT_COMPACT_AT);
        assert_eq!(budget.bytes_per_token, BYTES_PER_TOKEN_START);
        assert_eq!(budget.estimate(3500), 1000);
        assert_eq!(budget.estimate(0), 0);
    }

    #[test]
    fn a_replaced_conversation_is_estimated_from_its_bytes_at_the_calibrated_ratio() {
        let mut budget = Budget::new(8192, None, DEFAULT_COMPACT_AT);
        budget.report(40_000, 10_000);
        assert_eq!(budget.estimate(4_000), 1_000, "anchored: 36 KB fewer");
        budget.report(10_000, 2_000);
        budget.forget_report();
        assert_eq!(budget.bytes_per_token, 5.0, "the ratio stays");
        assert_eq!(budget.estimate(50_000), 10_000);
    }

    #[test]
    fn a_report_calibrates_the_ratio_and_anchors_the_estimate() {
        let mut budget = Budget::new(8192, None, DEFAULT_COMPACT_AT);
        budget.report(10_000, 2_500);
        assert_eq!(budget.bytes_per_token, 4.0);
        assert_eq!(budget.estimate(10_000), 2_500);
        assert_eq!(budget.estimate(10_400), 2_600, "bytes added since count");
        assert_eq!(budget.estimate(9_600), 2_400, "bytes removed since count");
        assert_eq!(budget.estimate(0), 0, "never below zero");
    }

    #[test]
    fn the_ratio_is_clamped_to_its_bounds() {
        let mut budget = Budget::new(8192, None, DEFAULT_COMPACT_AT);
        budget.report(10_000, 12);
        assert_eq!(budget.bytes_per_token, BYTES_PER_TOKEN_MAX);
        budget.report(1_000, 1_000);
        assert_eq!(budget.bytes_per_token, BYTES_PER_TOKEN_MIN);
        budget.report(1_000, 0);
        assert_eq!(
            budget.bytes_per_token, BYTES_PER_TOKEN_MIN,
            "no count, no change"
        );
        assert_eq!(budget.estimate(1_000), 1_000);
    }

    #[test]
    fn the_reserve_is_an_eighth_of_the_window_at_least_512_at_most_half() {
        assert_eq!(Budget::new(128_000, None, 0.8).reserve(), 16_000);
        assert_eq!(Budget::new(2_000, None, 0.8).reserve(), OUTPUT_RESERVE_MIN);
        assert_eq!(Budget::new(800, None, 0.8).reserve(), 400);
        assert_eq!(Budget::new(8_192, Some(100_000), 0.8).reserve(), 4_096);
        assert_eq!(Budget::new(8_192, Some(1_000), 0.8).reserve(), 1_000);
    }

    #[test]
    fn the_threshold_is_compact_at_of_the_window_within_what_is_usable() {
        let budget = Budget::new(10_000, Some(1_000), 0.8);
        assert_eq!(budget.usable(), 9_000);
        assert_eq!(budget.threshold(), 8_000);
        assert_eq!(budget.prune_target(), 5_000);
        assert_eq!(budget.keep(), 4_500);
        let tight = Budget::new(10_000, Some(4_000), 0.8);
        assert_eq!(tight.threshold(), 6_000, "the reserve wins");
        assert_eq!(tight.prune_target(), 5_000);
    }

    #[test]
    fn compact_at_is_clamped_to_its_bounds() {
        assert_eq!(Budget::new(1_000, Some(0), 0.01).threshold(), 300);
        assert_eq!(Budget::new(1_000, Some(0), 1.5).threshold(), 950);
        assert_eq!(Budget::new(1_000, Some(0), f64::NAN).threshold(), 800);
    }

    #[test]
    fn a_window_of_zero_is_no_answer() {
        let mut budget = Budget::new(8_192, None, 0.8);
        budget.set_window(0);
        assert_eq!(budget.window(), 8_192);
        budget.set_window(2_000);
        assert_eq!(budget.window(), 2_000);
        budget.set_window(u64::MAX);
        assert_eq!(budget.window(), CONTEXT_WINDOW_MAX);
        assert_eq!(
            Budget::new(u64::MAX, None, 0.8).window(),
            CONTEXT_WINDOW_MAX
        );
    }
}
