//! Everything the screen shows, owned by the UI task.

use std::time::{Duration, Instant};

use crate::protocol::{
    ApprovalPolicy, CallId, Phase, PromptProgress, SessionSummary, Severity, Usage,
};

use super::editor::{Editor, EditorLayout, History};
use super::entry::clean;
use super::mention::Mention;
use super::picker::Picker;
use super::slash::Completion;
use super::theme::Theme;
use super::transcript::{EntryKind, Transcript};

/// The spinner's frames, stepped by the tick while a phase is active.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The input box grows with its content up to this many rows, then scrolls.
pub const INPUT_MAX_ROWS: u16 = 8;

/// How long the turn in flight has been working: the time between the
/// spinner's ticks, not counting a wait for the person's confirmation.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TurnClock {
    last: Option<Instant>,
    worked: Duration,
}

impl TurnClock {
    /// Counts the time since the previous tick when `running`; the first
    /// tick of a turn starts the clock.
    pub fn tick(&mut self, now: Instant, running: bool) {
        if let (Some(last), true) = (self.last, running) {
            self.worked += now.saturating_duration_since(last);
        }
        self.last = Some(now);
    }

    /// The time worked, once the clock has started.
    pub fn worked(&self) -> Option<Duration> {
        self.last.map(|_| self.worked)
    }
}

/// The input box's text columns in a terminal `columns` wide: all but the
/// prompt mark.
fn input_width(columns: u16) -> u16 {
    columns.saturating_sub(2).max(1)
}

/// Facts about the session shown in the header; known at start-up, some
/// corrected when the agent learns better (ADR 0020).
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
    /// Which calls wait for the person; the header warns while a
    /// permissive policy is active, and `/approval` shows it.
    pub approval: ApprovalPolicy,
}

/// The confirmation the person is being asked for, and how much of its
/// preview has been on screen: `y` approves only once every row of it has
/// been drawn, so no one approves what they could not see (ADR 0014).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingConfirm {
    /// The call; the answer echoes it.
    pub id: CallId,
    /// Its place among the episode's confirmations (1-based).
    pub position: usize,
    /// How many there are.
    pub of: usize,
    /// The log entry that holds its preview.
    pub entry: usize,
    /// What of the preview has been drawn; `None` until its first frame.
    seen: Option<Seen>,
}

/// How much of a preview has been drawn, in rows at one width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// The width the rows were wrapped for.
    width: u16,
    /// The preview's rows at that width.
    rows: usize,
    /// How many rows, from the first, have all been on screen.
    through: usize,
}

impl PendingConfirm {
    /// A confirmation whose preview is log entry `entry`, not yet drawn.
    pub fn new(id: CallId, position: usize, of: usize, entry: usize) -> Self {
        Self {
            id,
            position,
            of,
            entry,
            seen: None,
        }
    }

    /// Whether every row of the preview has been on screen.
    pub fn fully_seen(&self) -> bool {
        self.seen.is_some_and(|s| s.through >= s.rows)
    }

    /// The first row not yet on screen (1-based) and the preview's row
    /// count: rows 21 to 62 of 62 are `(21, 62)`; `None` before the first
    /// frame.
    pub fn unseen(&self) -> Option<(usize, usize)> {
        self.seen.map(|s| (s.through + 1, s.rows))
    }

    /// Records what of the preview the frame about to be drawn shows. The
    /// first frame opens the preview at its first row; a width change
    /// moves the rows, so a preview only partly read is shown from its top
    /// and counted again, while one read to its end stays read.
    fn track(&mut self, transcript: &mut Transcript, width: u16) {
        let rows = transcript.entry_rows(self.entry);
        let seen = match self.seen {
            Some(seen) if seen.width == width => seen,
            Some(seen) if seen.through >= seen.rows => Seen {
                width,
                rows: rows.len(),
                through: rows.len(),
            },
            _ => {
                transcript.show_from(rows.start);
                Seen {
                    width,
                    rows: rows.len(),
                    through: 0,
                }
            }
        };
        let shown = transcript.entry_on_screen(self.entry);
        let through = if !shown.is_empty() && shown.start <= seen.through {
            seen.through.max(shown.end)
        } else {
            seen.through
        };
        self.seen = Some(Seen { through, ..seen });
    }
}

/// A one-line message in the help line that replaces the key hints until
/// the next key (e.g. "copied the reply to the clipboard").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// What it says.
    pub text: String,
    /// It speaks of stopping the turn ("interrupting…"), so it goes when
    /// the turn is over, key or no key.
    pub ends_with_turn: bool,
}

impl Hint {
    /// A hint that lasts until the next key.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ends_with_turn: false,
        }
    }

    /// A hint about stopping the turn, gone once it is over.
    pub fn while_stopping(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ends_with_turn: true,
        }
    }
}

/// What has come back of the request in flight, for the status bar while
/// a reply streams. Each step replaces the one before, except that a call
/// being written stays shown until the phase changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Progress {
    /// Nothing yet: the server is being waited for.
    #[default]
    Waiting,
    /// The server is reading the prompt, this far; until the reply starts.
    Reading(PromptProgress),
    /// The reply's text or reasoning is coming in.
    Streaming,
    /// The model is writing a call.
    Writing {
        /// The call's name, cut to a length the status bar can show.
        name: String,
        /// Its arguments' bytes so far.
        bytes: usize,
    },
}

impl Progress {
    /// The server reports how far it has read the prompt.
    pub(super) fn reading(&mut self, progress: PromptProgress) {
        match self {
            Progress::Writing { .. } => {}
            Progress::Waiting | Progress::Reading(_) | Progress::Streaming => {
                *self = Progress::Reading(progress);
            }
        }
    }

    /// Text or reasoning of the reply came in.
    pub(super) fn streaming(&mut self) {
        match self {
            Progress::Writing { .. } => {}
            Progress::Waiting | Progress::Reading(_) | Progress::Streaming => {
                *self = Progress::Streaming;
            }
        }
    }
}

/// How full the context window is, as the header tells it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ContextUse {
    /// Not known yet, or not since another session opened.
    #[default]
    Unknown,
    /// The last usage frame's count.
    Reported(Usage),
    /// The agent's estimate of the next prompt, after a compaction made
    /// the last usage frame stale; until the next one.
    Estimated(u64),
}

/// The UI's whole state.
#[derive(Debug)]
pub struct State {
    /// The facts the status bar shows: model, host, directory, window.
    pub session: SessionInfo,
    /// The styles every part of the screen is drawn with (plain under
    /// `NO_COLOR`).
    pub theme: Theme,
    /// What the agent is doing.
    pub phase: Phase,
    /// The spinner's step.
    pub spinner: usize,
    /// How long the turn in flight has been working, shown beside the
    /// spinner: a long reply or prompt read is seen to progress.
    pub turn_clock: TurnClock,
    /// What has come back of the request in flight.
    pub progress: Progress,
    /// How full the context window is.
    pub context: ContextUse,
    /// Every entry shown in the log, with its scroll position.
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
    /// The confirmation last answered, until its answer is known to have
    /// reached the agent: an answer that could not be delivered puts it
    /// back, or the turn would wait for an answer forever.
    pub answered: Option<PendingConfirm>,
    /// The next list of saved sessions opens the picker (`/resume`
    /// without an id) instead of being listed in the log (`/sessions`).
    pub pick_sessions: bool,
    /// The command popup's selection, following the input.
    pub completion: Completion,
    /// The `@` popup: the project's files and the word completed from
    /// them, following the input.
    pub mention: Mention,
    /// The picker (sessions, or prompts to rewind to), while it is open
    /// over the log.
    pub picker: Option<Picker>,
    /// Esc was pressed on an empty input while idle: another Esc opens
    /// the rewind picker; any other key disarms it.
    pub rewind_armed: bool,
    /// The input box as laid out for the next frame by [`State::prepare`].
    input: EditorLayout,
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
            turn_clock: TurnClock::default(),
            progress: Progress::default(),
            context: ContextUse::default(),
            transcript: Transcript::default(),
            editor: Editor::new(),
            history: History::default(),
            size,
            hint: None,
            quit_armed: false,
            agent_gone: false,
            confirm: None,
            answered: None,
            pick_sessions: false,
            completion: Completion::default(),
            mention: Mention::default(),
            picker: None,
            rewind_armed: false,
            input: Editor::new().layout(input_width(size.0), INPUT_MAX_ROWS, 0),
        }
    }

    /// Takes in what the agent learned about the model after start-up: the
    /// header shows it from the next frame on.
    pub fn learn_session_facts(&mut self, model: Option<String>, context_window: Option<u64>) {
        if let Some(model) = model {
            self.session.model = clean(model);
        }
        if let Some(window) = context_window.filter(|w| *w > 0) {
            self.session.context_window = window;
        }
    }

    /// Shows the saved sessions the agent listed, newest first, as a
    /// notice with what `/resume` needs.
    pub fn show_sessions(&mut self, sessions: Vec<SessionSummary>) {
        let text = if sessions.is_empty() {
            "no saved sessions".to_string()
        } else {
            let rows: Vec<String> = sessions
                .iter()
                .map(|s| format!("{}  {}  {}", s.id, s.directory, s.title))
                .collect();
            format!(
                "saved sessions (resume one with /resume ID):\n{}",
                rows.join("\n")
            )
        };
        self.transcript
            .push(EntryKind::System(Severity::Notice), text);
    }

    /// The input box as the last [`State::prepare`] laid it out: what the
    /// frame draws.
    pub fn input(&self) -> &EditorLayout {
        &self.input
    }

    /// Rows the input box takes (at least one), as last laid out.
    pub fn input_rows(&self) -> u16 {
        let most = self.input_max_rows();
        let rows = self.input.total_rows.clamp(1, usize::from(most));
        u16::try_from(rows).unwrap_or(most)
    }

    /// The rows the input box may take: [`INPUT_MAX_ROWS`], or fewer in a
    /// terminal too short to show them beside the header, the rule and the
    /// help line (the line being typed must stay in sight).
    fn input_max_rows(&self) -> u16 {
        INPUT_MAX_ROWS.min(self.size.1.saturating_sub(3)).max(1)
    }

    /// Rows left for the log: everything but the header, the input box with
    /// its rule, and the help line.
    pub fn log_height(&self) -> u16 {
        self.size.1.saturating_sub(3 + self.input_rows())
    }

    /// Lays out the input box and re-wraps the transcript for the current
    /// size (keeping the preview still waiting for an answer), and
    /// records what of a pending preview the next frame shows;
    /// call right before drawing, which then only reads the state.
    pub fn prepare(&mut self) {
        self.input = self.editor.layout(
            input_width(self.size.0),
            self.input_max_rows(),
            self.input.scroll,
        );
        let height = self.log_height();
        // An answer that could not be sent puts its confirmation back
        // before the next frame (the loop handles that in the same pass),
        // so only the pending one's preview must stay.
        let keep = self.confirm.as_ref().map(|c| c.entry);
        self.transcript
            .prepare(self.size.0, height, &self.theme, keep);
        if let Some(confirm) = &mut self.confirm {
            confirm.track(&mut self.transcript, self.size.0);
        }
    }
}
