//! Everything the screen shows, owned by the UI task.

use std::time::{Duration, Instant};

use crate::protocol::{
    ApprovalMode, Phase, Price, PromptProgress, SessionSummary, Severity, Usage,
};

use super::editor::{Editor, EditorLayout, History};
use super::entry::clean;
use super::mention::Mention;
use super::mode::Mode;
use super::notify::Notify;
use super::slash::{Completion, CustomCommands};
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
    /// Which calls wait for the person and the sandbox its commands run
    /// in; the header shows both (warning while a permissive policy is
    /// active), and `/approval` too.
    pub approval: ApprovalMode,
    /// The prices the config gives, by model: the header and `/status`
    /// show the session's cost at the model in use's (ADR 0052).
    pub prices: std::collections::BTreeMap<String, Price>,
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

/// The UI's whole state. The UI's own modules read and change its fields;
/// from outside, what the screen shows is read through its methods, and
/// changed by messages to [`super::update::update`] (the log can also be
/// scrolled directly).
#[derive(Debug)]
pub struct State {
    /// The facts the status bar shows: model, host, directory, window.
    pub(super) session: SessionInfo,
    /// The styles every part of the screen is drawn with (plain under
    /// `NO_COLOR`).
    pub(super) theme: Theme,
    /// What the agent is doing, as it last said, or as a key that started
    /// something expects it to say.
    pub(super) phase: Phase,
    /// The spinner's step.
    pub(super) spinner: usize,
    /// How long the turn in flight has been working, shown beside the
    /// spinner: a long reply or prompt read is seen to progress.
    pub(super) turn_clock: TurnClock,
    /// What has come back of the request in flight.
    pub(super) progress: Progress,
    /// How full the context window is.
    pub(super) context: ContextUse,
    /// The session's token counts over every request.
    pub(super) totals: Usage,
    /// Every entry shown in the log, with its scroll position.
    pub(super) transcript: Transcript,
    /// The prompt being typed.
    pub(super) editor: Editor,
    /// Earlier prompts.
    pub(super) history: History,
    /// Terminal size (columns, rows).
    pub(super) size: (u16, u16),
    /// A transient message for the help line.
    pub(super) hint: Option<Hint>,
    /// What has the keys: the input box, a picker, a call's question.
    /// Changed only through its transitions (`ui::mode`).
    pub(super) mode: Mode,
    /// The command popup's selection, following the input.
    pub(super) completion: Completion,
    /// Whether the terminal has focus, as focus reporting last said;
    /// taken to have it until told otherwise.
    pub(super) focused: bool,
    /// How the person is told that a turn ended or a call waits while the
    /// terminal has no focus (ADR 0056).
    pub notify: Notify,
    /// The custom commands the agent found (ADR 0053).
    pub(super) commands: CustomCommands,
    /// The command files last said to be left out, each said once.
    pub(super) command_problems: Vec<String>,
    /// The `@` popup: the project's files and the word completed from
    /// them, following the input.
    pub(super) mention: Mention,
    /// Set by the first Ctrl+C while busy: a second one quits at once.
    pub(super) quit_armed: bool,
    /// Esc was pressed on an empty input while idle: another Esc opens
    /// the rewind picker; any other key disarms it.
    pub(super) rewind_armed: bool,
    /// The next list of saved sessions opens the picker (`/resume`
    /// without an id) instead of being listed in the log (`/sessions`).
    pub(super) pick_sessions: bool,
    /// The agent's channel closed: prompts can no longer be answered.
    pub(super) agent_gone: bool,
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
            totals: Usage::default(),
            transcript: Transcript::default(),
            editor: Editor::new(),
            history: History::default(),
            size,
            hint: None,
            mode: Mode::default(),
            completion: Completion::default(),
            focused: true,
            notify: Notify::default(),
            commands: CustomCommands::default(),
            command_problems: Vec::new(),
            mention: Mention::default(),
            quit_armed: false,
            rewind_armed: false,
            pick_sessions: false,
            agent_gone: false,
            input: Editor::new().layout(input_width(size.0), INPUT_MAX_ROWS, 0),
        }
    }

    /// The facts the header shows, as corrected since start-up.
    pub fn session(&self) -> &SessionInfo {
        &self.session
    }

    /// The session's cost so far in US dollars, at the price the config
    /// gives the model in use; `None` without one.
    pub(super) fn cost(&self) -> Option<f64> {
        let price = self.session.prices.get(&self.session.model)?;
        Some(price.cost(&self.totals))
    }

    /// What `/status` says: the session's tokens and their cost.
    pub(super) fn status_text(&self) -> String {
        let t = &self.totals;
        let cost = match self.cost() {
            Some(cost) => format!("cost ${cost:.4}"),
            None => format!(
                "cost unknown: give [prices.\"{}\"] in config.toml",
                self.session.model
            ),
        };
        format!(
            "session: {} prompt tokens ({} read from the provider's cache), {} reply tokens; {cost}",
            t.prompt_tokens, t.cached_tokens, t.completion_tokens
        )
    }

    /// What the agent is doing, as the status bar says.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// What has come back of the request in flight.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Every entry the log holds, and where it is scrolled to.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The log, to scroll it as no key does (to a given row), or as a
    /// harness does in place of keys.
    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    /// The input box's text and cursor.
    pub fn editor(&self) -> &Editor {
        &self.editor
    }

    /// The terminal's size as last told (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        self.size
    }

    /// The help line's message in place of the key hints, if one is up.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_ref().map(|hint| hint.text.as_str())
    }

    /// What has the keys: the input box, a picker, a call's question.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// The command popup, following the input.
    pub fn completion(&self) -> &Completion {
        &self.completion
    }

    /// The custom commands the popup offers besides the built-ins.
    pub fn commands(&self) -> &CustomCommands {
        &self.commands
    }

    /// The `@` popup of the project's paths, following the input.
    pub fn mention(&self) -> &Mention {
        &self.mention
    }

    /// Whether the next list of saved sessions opens the picker.
    pub fn picks_sessions(&self) -> bool {
        self.pick_sessions
    }

    /// Takes in what the agent learned about the model after start-up: the
    /// header shows it from the next frame on.
    pub(super) fn learn_session_facts(
        &mut self,
        model: Option<String>,
        context_window: Option<u64>,
    ) {
        if let Some(model) = model {
            self.session.model = clean(model);
        }
        if let Some(window) = context_window.filter(|w| *w > 0) {
            self.session.context_window = window;
        }
    }

    /// Shows the saved sessions the agent listed, newest first, as a
    /// notice with what `/resume` needs.
    pub(super) fn show_sessions(&mut self, sessions: Vec<SessionSummary>) {
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
    pub(super) fn input(&self) -> &EditorLayout {
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
        let keep = self.mode.confirmation().map(|c| c.entry);
        self.transcript
            .prepare(self.size.0, height, &self.theme, keep);
        self.mode.track_preview(&mut self.transcript, self.size.0);
    }
}
