//! The turn: what the agent is doing for the person, as one state, and
//! which of the person's commands each state takes. Every other part of
//! the actor reads the state through these methods and changes it only by
//! its transitions.
//!
//! | state        | left by                                   | Esc                     | y / n / words            |
//! | ------------ | ----------------------------------------- | ----------------------- | ------------------------ |
//! | `Idle`       | a prompt, `/compact`, `/undo`, `/redo`, a rewind | says idle          | words are a prompt       |
//! | `Streaming`  | the stream's last event                   | the reply is interrupted | words are refused as busy |
//! | `Running`    | the round's last result                   | the round is cancelled  | the waiting call's answer |
//! | `Compacting` | the summary's last event                  | the summary is dropped  | words are refused as busy |
//! | `Restoring`  | the last file's answer                    | what is left is kept    | the restore's answer     |
//! | `Hooking`    | the hooks' last end                       | the hooks are killed    | words are refused as busy |
//!
//! A state is entered only from `Idle`, and its work ends by taking it
//! back to `Idle` ([`Turn::end_streaming`] and its siblings) before the
//! next state is entered: a reply's round is entered after its episode
//! ended, a retry's episode after its compaction ended. So no two of an
//! episode, a round, a compaction and a restore are ever in flight
//! together. A command that changes the conversation or the files is
//! taken only while idle ([`Turn::admit`]), and so is a trust (`/mcp
//! trust`, `/hooks trust`: the model may be changing the file); `/model`,
//! `/approval` and the lists are taken in any state. Stream events come only while streaming,
//! summary events only while compacting, the hooks' ends only while
//! hooking (their receivers live in those states); a tool result that
//! arrives for no round in flight is dropped.

use crate::hooks::StopReason;
use crate::protocol::StreamEvent;

use super::compact::Compaction;
use super::episode::Episode;
use super::hooks::{HookEnds, Hooking};
use super::looking::Name;
use super::restoring::Restoring;
use super::round::Round;
use super::turn_results::TurnResults;

/// What the agent is doing for the person.
#[derive(Default)]
pub(super) enum Turn {
    /// Nothing: the next prompt or command is taken.
    #[default]
    Idle,
    /// A model reply is streaming in.
    Streaming(Episode),
    /// The calls of a reply (or the files a prompt named) are confirmed
    /// and run.
    Running(Round),
    /// The conversation is being summarised, asked for or to fit.
    Compacting(Compaction),
    /// A `/undo`, `/redo` or rewind waits for the person.
    Restoring(Restoring),
    /// The prompt's `user_prompt_submit` hooks, or the turn's `stop`
    /// hooks, run; the turn goes on when they have ended (ADR 0054).
    Hooking(Hooking),
}

/// An event of the turn's request in flight; `None` when its task ended
/// without a last event.
pub(super) enum ServerEvent {
    /// Of the model's reply.
    Reply(Option<StreamEvent>),
    /// Of the summary.
    Summary(Option<StreamEvent>),
    /// The hooks the turn waited for ended.
    Hooks(HookEnds),
}

/// Something the person asked for that changes the conversation or the
/// files, and so is taken only while nothing else runs.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wanted {
    /// A prompt.
    Prompt,
    /// `/compact`.
    Compact,
    /// `/clear`.
    NewSession,
    /// `/resume` or the picker.
    Resume,
    /// `/undo`, `/redo` or a rewind: what the notice says must wait.
    Restore(&'static str),
    /// `/mcp trust` or `/hooks trust` (named): it trusts the file as it
    /// is on disk, which the model may be rewriting during a turn.
    Trust(&'static str),
}

impl Wanted {
    /// The notice that says it was not taken, and what to do instead.
    fn busy_notice(self) -> String {
        match self {
            Wanted::Prompt => "the agent is still busy; that prompt was not sent \
                               (↑ in the input brings it back)"
                .into(),
            Wanted::Compact => {
                "the agent is busy; /compact waits until the turn is over (Esc stops it)".into()
            }
            Wanted::NewSession => {
                "the agent is busy; interrupt it (Esc) before starting a new session".into()
            }
            Wanted::Resume => {
                "the agent is busy; interrupt it (Esc) before resuming a session".into()
            }
            Wanted::Restore(what) => {
                format!("the agent is busy; interrupt it (Esc) before you {what}")
            }
            Wanted::Trust(command) => format!(
                "the agent is busy; {command} waits until the turn is over, \
                 so that what it trusts is the file the turn left"
            ),
        }
    }
}

impl Turn {
    /// Whether `wanted` is taken now: `Err` holds the notice saying why
    /// not.
    pub(super) fn admit(&self, wanted: Wanted) -> Result<(), String> {
        match self {
            Turn::Idle => Ok(()),
            Turn::Streaming(_)
            | Turn::Running(_)
            | Turn::Compacting(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => Err(wanted.busy_notice()),
        }
    }

    /// Whether nothing runs.
    pub(super) fn is_idle(&self) -> bool {
        matches!(self, Turn::Idle)
    }

    /// Whether a request of the turn is being answered by the server: the
    /// reply of an episode, or a summary.
    pub(super) fn server_busy(&self) -> bool {
        match self {
            Turn::Streaming(_) | Turn::Compacting(_) => true,
            Turn::Idle | Turn::Running(_) | Turn::Restoring(_) | Turn::Hooking(_) => false,
        }
    }

    /// The next event of the request in flight: the reply's while
    /// streaming, the summary's while compacting; pending in any other
    /// state, so no such event is ever handled in one.
    pub(super) async fn next_server_event(&mut self) -> ServerEvent {
        match self {
            Turn::Streaming(episode) => ServerEvent::Reply(episode.next_event().await),
            Turn::Compacting(compaction) => ServerEvent::Summary(compaction.next_event().await),
            Turn::Hooking(hooking) => ServerEvent::Hooks(hooking.ended().await),
            Turn::Idle | Turn::Running(_) | Turn::Restoring(_) => std::future::pending().await,
        }
    }

    /// Idle → streaming.
    pub(super) fn stream(&mut self, episode: Episode) {
        self.enter(Turn::Streaming(episode));
    }

    /// Idle → running a round.
    pub(super) fn run(&mut self, round: Round) {
        self.enter(Turn::Running(round));
    }

    /// Idle → compacting.
    pub(super) fn compact(&mut self, compaction: Compaction) {
        self.enter(Turn::Compacting(compaction));
    }

    /// Idle → restoring.
    pub(super) fn restore(&mut self, restoring: Restoring) {
        self.enter(Turn::Restoring(restoring));
    }

    /// Idle → hooking.
    pub(super) fn hook(&mut self, hooking: Hooking) {
        self.enter(Turn::Hooking(hooking));
    }

    /// Enters `next` from idle. Entering from any other state would leave
    /// that state's work unanswered: a bug, caught by the tests, and in a
    /// release build the work in flight is kept and `next` dropped.
    fn enter(&mut self, next: Turn) {
        match self {
            Turn::Idle => *self = next,
            Turn::Streaming(_)
            | Turn::Running(_)
            | Turn::Compacting(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => {
                debug_assert!(false, "a turn state was entered while another ran");
            }
        }
    }

    /// The episode in flight.
    pub(super) fn episode_mut(&mut self) -> Option<&mut Episode> {
        match self {
            Turn::Streaming(episode) => Some(episode),
            Turn::Idle
            | Turn::Running(_)
            | Turn::Compacting(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => None,
        }
    }

    /// Streaming → idle: the episode, to be ended.
    pub(super) fn end_streaming(&mut self) -> Option<Episode> {
        match std::mem::take(self) {
            Turn::Streaming(episode) => Some(episode),
            other => self.keep(other),
        }
    }

    /// The round in flight.
    pub(super) fn round(&self) -> Option<&Round> {
        match self {
            Turn::Running(round) => Some(round),
            Turn::Idle
            | Turn::Streaming(_)
            | Turn::Compacting(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => None,
        }
    }

    /// The round in flight, to change.
    pub(super) fn round_mut(&mut self) -> Option<&mut Round> {
        match self {
            Turn::Running(round) => Some(round),
            Turn::Idle
            | Turn::Streaming(_)
            | Turn::Compacting(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => None,
        }
    }

    /// Running → idle: the round, every call answered.
    pub(super) fn end_running(&mut self) -> Option<Round> {
        match std::mem::take(self) {
            Turn::Running(round) => Some(round),
            other => self.keep(other),
        }
    }

    /// The summary in flight.
    pub(super) fn compaction_mut(&mut self) -> Option<&mut Compaction> {
        match self {
            Turn::Compacting(compaction) => Some(compaction),
            Turn::Idle
            | Turn::Streaming(_)
            | Turn::Running(_)
            | Turn::Restoring(_)
            | Turn::Hooking(_) => None,
        }
    }

    /// Compacting → idle: the summary, to be used or dropped.
    pub(super) fn end_compacting(&mut self) -> Option<Compaction> {
        match std::mem::take(self) {
            Turn::Compacting(compaction) => Some(compaction),
            other => self.keep(other),
        }
    }

    /// The restore waiting for the person.
    pub(super) fn restoring(&self) -> Option<&Restoring> {
        match self {
            Turn::Restoring(restoring) => Some(restoring),
            Turn::Idle
            | Turn::Streaming(_)
            | Turn::Running(_)
            | Turn::Compacting(_)
            | Turn::Hooking(_) => None,
        }
    }

    /// Restoring → idle: the restore, to go on with or finish.
    pub(super) fn end_restoring(&mut self) -> Option<Restoring> {
        match std::mem::take(self) {
            Turn::Restoring(restoring) => Some(restoring),
            other => self.keep(other),
        }
    }

    /// Hooking → idle: the hooks, ended or to be stopped.
    pub(super) fn end_hooking(&mut self) -> Option<Hooking> {
        match std::mem::take(self) {
            Turn::Hooking(hooking) => Some(hooking),
            other => self.keep(other),
        }
    }

    /// Puts back a state that was taken to be ended as another: it stays.
    fn keep<T>(&mut self, state: Turn) -> Option<T> {
        *self = state;
        None
    }
}

/// How far the turn for the person's latest words has gone: what limits
/// and shapes its requests. Starts afresh with each prompt.
#[derive(Debug, Default)]
pub(super) struct Progress {
    /// Model replies received in this turn; a request the server refused
    /// and that is sent again (too long, or its tools refused) is none.
    pub(super) steps: u32,
    /// The next request asks for an answer, not a call: the model
    /// repeated a call that gave it nothing new (ADR 0015).
    pub(super) answer_now: bool,
    /// This turn already compacted and retried after the provider said a
    /// request did not fit: the next such error is shown.
    pub(super) wall_retried: bool,
    /// What the turn's searches found.
    pub(super) searches: Searches,
    /// The turn's prompt asks to change or run something (ADR 0049).
    pub(super) asks_to_act: bool,
    /// The turn's prompt only asks a question: no file is written in it
    /// (ADR 0049).
    pub(super) only_asks: bool,
    /// The model was asked once this turn to act rather than advise.
    pub(super) nudged: bool,
    /// The names the prompt asks about that no tool result has shown yet
    /// (ADR 0049).
    pub(super) unseen: Vec<Name>,
    /// The model was asked once this turn to look for a name its answer
    /// gave.
    pub(super) looked: bool,
    /// How the turn is ending, for its `stop` hooks; `None` for a turn
    /// no prompt started (or one a hook blocked), which runs none.
    pub(super) stop: Option<StopReason>,
    /// The turn's results as their tools returned them, until its first
    /// context-exceeded error, to be cut again to the window it teaches.
    pub(super) results: TurnResults,
}

impl Progress {
    /// The turn of a prompt is ending as `reason` says, unless it already
    /// ended otherwise.
    pub(super) fn ending(&mut self, reason: StopReason) {
        if let Some(stop) = &mut self.stop
            && *stop == StopReason::Complete
        {
            *stop = reason;
        }
    }
}

/// What the searches (`grep`, `glob`) of a turn have found so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Searches {
    /// The turn has made none.
    #[default]
    None,
    /// Every one found nothing.
    NothingFound,
    /// At least one found something.
    Found,
}

impl Searches {
    /// Counts in a result: `found` is what a search's result says
    /// (`None` for any other result).
    pub(super) fn record(&mut self, found: Option<bool>) {
        *self = match (*self, found) {
            (_, Some(true)) | (Searches::Found, _) => Searches::Found,
            (_, Some(false)) => Searches::NothingFound,
            (state, None) => state,
        };
    }
}
