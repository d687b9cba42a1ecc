//! Everything the screen shows, owned by the UI task.

use crate::protocol::{CallId, Phase, Usage};

use super::editor::{Editor, History};
use super::entry::clean;
use super::theme::Theme;
use super::transcript::Transcript;

/// The spinner's frames, stepped by the tick while a phase is active.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The input box grows with its content up to this many rows, then scrolls.
pub const INPUT_MAX_ROWS: u16 = 8;

/// Facts about the session shown in the header; fixed at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Model name.
    pub model: String,
    /// Provider host (and port).
    pub host: String,
    /// Working directory, as shown (home abbreviated to `~`).
    pub cwd: String,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// A warning shown in the header while a permissive approval policy is
    /// active (e.g. "approve-all"); `None` for the default.
    pub approval_warning: Option<String>,
}

/// The confirmation the person is being asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingConfirm {
    /// The call; the answer echoes it.
    pub id: CallId,
    /// Its place among the episode's confirmations (1-based).
    pub position: usize,
    /// How many there are.
    pub of: usize,
}

/// A one-line message in the help line that replaces the key hints until
/// the next key (e.g. "press Ctrl+C again to quit").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint(pub String);

/// The UI's whole state.
#[derive(Debug)]
pub struct State {
    /// Header facts.
    pub session: SessionInfo,
    /// Colours.
    pub theme: Theme,
    /// What the agent is doing.
    pub phase: Phase,
    /// The spinner's step.
    pub spinner: usize,
    /// The last usage frame.
    pub usage: Option<Usage>,
    /// The log.
    pub transcript: Transcript,
    /// The prompt being typed.
    pub editor: Editor,
    /// Earlier prompts.
    pub history: History,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// A transient message for the help line.
    pub hint: Option<Hint>,
    /// Set by the first Ctrl+C while busy: a second one quits at once.
    pub quit_armed: bool,
    /// The agent's channel closed: prompts can no longer be answered.
    pub agent_gone: bool,
    /// The confirmation waiting for y / Esc, if any.
    pub confirm: Option<PendingConfirm>,
}

impl State {
    /// A fresh state for a terminal of `size`. The header's facts are kept
    /// without control characters, like the log's text.
    pub fn new(session: SessionInfo, theme: Theme, size: (u16, u16)) -> Self {
        let session = SessionInfo {
            model: clean(session.model),
            host: clean(session.host),
            cwd: clean(session.cwd),
            ..session
        };
        Self {
            session,
            theme,
            phase: Phase::Idle,
            spinner: 0,
            usage: None,
            transcript: Transcript::default(),
            editor: Editor::new(),
            history: History::default(),
            size,
            hint: None,
            quit_armed: false,
            agent_gone: false,
            confirm: None,
        }
    }

    /// Rows the input box needs for its content (at least one).
    pub fn input_rows(&self) -> u16 {
        let width = self.size.0.saturating_sub(2).max(1);
        let rows = self.editor.layout(width, INPUT_MAX_ROWS).total_rows;
        (rows.max(1) as u16).min(INPUT_MAX_ROWS)
    }

    /// Rows left for the log: everything but the header, the input box with
    /// its rule, and the help line.
    pub fn log_height(&self) -> u16 {
        self.size.1.saturating_sub(3 + self.input_rows())
    }

    /// Re-wraps the transcript for the current size; call before drawing.
    pub fn prepare(&mut self) {
        let height = self.log_height();
        self.transcript.prepare(self.size.0, height, &self.theme);
    }
}
