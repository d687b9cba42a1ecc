//! `dashfloat exec`: one turn without the full screen. A headless driver
//! takes the UI task's place and speaks the same protocol to the same
//! agent: it waits for the agent's start-up, sends the prompt, prints
//! what happens ([`output`]: text for a person, or the JSON lines of
//! [`schema`]), cancels the turn on SIGINT, SIGTERM, SIGHUP or
//! `--timeout`, and returns the exit status. ADR 0028.

pub mod command;
pub mod output;
pub mod schema;
pub mod tally;

use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::protocol::{AgentEvent, ApprovalPolicy, PROMPT_MAX_BYTES, Severity, UiCommand};
use crate::safe_text::strip_controls;

use output::Output;
use schema::{Line, TurnStatus};
use tally::Tally;

/// Exit status: the model answered.
pub(crate) const EXIT_ANSWERED: u8 = 0;
/// Exit status: the model or a tool failed the turn (stream or endpoint
/// failure, the step limit, an error that ended the turn).
pub(crate) const EXIT_FAILED: u8 = 1;
/// Exit status: bad usage or configuration; no prompt was sent.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: `--timeout` ran out (as `timeout(1)` exits).
pub(crate) const EXIT_TIMED_OUT: u8 = 124;
/// Exit status: a signal interrupted the turn (128 + SIGINT).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;
/// How long the agent gets, after being told to cancel or quit, to end
/// the turn (killing its commands) and save the session. Past it the
/// driver stops waiting; the process then kills what is left.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Start-up notices kept to print after `turn_start`; more are counted.
const STARTUP_NOTES_MAX: usize = 64;

/// Why `dashfloat exec` cannot start: each exits with [`EXIT_USAGE`].
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// No prompt argument, and stdin is a terminal.
    #[error("no prompt: give one as an argument, or pipe it to stdin (`-` reads stdin)")]
    NoPrompt,
    /// The prompt is empty or only white space.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// The prompt on stdin is larger than [`PROMPT_MAX_BYTES`].
    #[error("the prompt on stdin is larger than {} MiB", PROMPT_MAX_BYTES >> 20)]
    PromptTooLarge,
    /// The prompt on stdin is not UTF-8.
    #[error("the prompt on stdin is not UTF-8 text")]
    PromptNotText,
    /// Stdin could not be read.
    #[error("cannot read the prompt from stdin: {0}")]
    Stdin(std::io::Error),
    /// `--resume` without an id: the picker needs the full screen.
    #[error(
        "dashfloat exec cannot show the session picker: give --resume an ID, or use --continue"
    )]
    Picker,
}

/// What the headless driver is given.
#[derive(Debug)]
pub struct ExecSetup {
    /// The prompt to send: the person's words, or a project's custom
    /// command's ([`command::command_prompt`]).
    pub prompt: UiCommand,
    /// `--json`.
    pub json: bool,
    /// `--timeout`: how long the whole run may take.
    pub timeout: Option<Duration>,
    /// The model configured (the agent may report another it discovered).
    pub model: String,
    /// The approval policy in force.
    pub approval: ApprovalPolicy,
    /// Start-up problems and notices from the configuration; an error among
    /// them means no prompt is sent.
    pub notes: Vec<(Severity, String)>,
    /// When the run started, for `elapsed_ms` and `--timeout`.
    pub started: Instant,
}

/// The prompt: `arg` unless it is absent or `-`, else all of stdin (which
/// must not be a terminal), without its trailing line ends.
pub fn read_prompt(arg: Option<String>) -> Result<String, ExecError> {
    let text = match arg {
        Some(text) if text != "-" => text,
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err(ExecError::NoPrompt);
            }
            let mut bytes = Vec::new();
            stdin
                .lock()
                .take(PROMPT_MAX_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(ExecError::Stdin)?;
            if bytes.len() as u64 > PROMPT_MAX_BYTES {
                return Err(ExecError::PromptTooLarge);
            }
            let mut text = String::from_utf8(bytes).map_err(|_| ExecError::PromptNotText)?;
            text.truncate(text.trim_end_matches(['\n', '\r']).len());
            text
        }
    };
    if text.trim().is_empty() {
        return Err(ExecError::EmptyPrompt);
    }
    Ok(text)
}

/// Why the driver stopped the turn itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Interrupted,
    TimedOut,
}

/// The signals that interrupt a run: SIGINT, SIGTERM and SIGHUP. One that
/// cannot be listened for keeps its default action.
struct Signals([Option<Signal>; 3]);

impl Signals {
    fn new() -> Self {
        Self([
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
            signal(SignalKind::hangup()).ok(),
        ])
    }

    /// The next of them to arrive.
    async fn next(&mut self) {
        let [int, term, hup] = &mut self.0;
        tokio::select! {
            Some(()) = next_signal(int) => {}
            Some(()) = next_signal(term) => {}
            Some(()) = next_signal(hup) => {}
            else => std::future::pending().await,
        }
    }
}

async fn next_signal(signal: &mut Option<Signal>) -> Option<()> {
    match signal {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}

/// What start-up left to say: kept back so `turn_start` comes first.
#[derive(Debug, Default)]
struct StartUp {
    /// The model, as discovered if the server said.
    model: String,
    /// The id the session is saved under.
    session: Option<String>,
    /// Errors: any of them means no prompt is sent.
    errors: Vec<String>,
    /// Notices, at most [`STARTUP_NOTES_MAX`].
    notes: Vec<String>,
    /// Notices beyond those.
    left_out: usize,
}

impl StartUp {
    fn note(&mut self, severity: Severity, text: String) {
        if severity == Severity::Error {
            self.errors.push(text);
        } else if self.notes.len() < STARTUP_NOTES_MAX {
            self.notes.push(text);
        } else {
            self.left_out += 1;
        }
    }
}

/// The headless driver: the agent's other end.
struct Driver {
    commands: mpsc::Sender<UiCommand>,
    events: mpsc::Receiver<AgentEvent>,
    signals: Signals,
    /// When `--timeout` runs out.
    deadline: Option<Instant>,
    out: Output,
    tally: Tally,
}

/// Runs one turn: returns the exit status.
pub async fn run(
    setup: ExecSetup,
    commands: mpsc::Sender<UiCommand>,
    events: mpsc::Receiver<AgentEvent>,
) -> u8 {
    let mut driver = Driver {
        commands,
        events,
        signals: Signals::new(),
        deadline: setup.timeout.map(|t| setup.started + t),
        out: Output::new(setup.json),
        tally: Tally::default(),
    };
    let mut start_up = StartUp {
        model: setup.model,
        ..StartUp::default()
    };
    for (severity, text) in setup.notes {
        start_up.note(severity, text);
    }
    if let Err(status) = driver.start_up(&mut start_up).await {
        return status;
    }
    // Whatever the full screen would show as an error at start-up (a
    // config problem, a session that cannot be resumed) stops a headless
    // run before its prompt: stdout stays empty, stderr says why.
    if !start_up.errors.is_empty() {
        let mut err = std::io::stderr().lock();
        for text in &start_up.errors {
            let _ = writeln!(err, "dashfloat: {}", strip_controls(text));
        }
        let _ = writeln!(err, "dashfloat: no prompt was sent");
        let _ = driver.commands.send(UiCommand::Quit).await;
        return EXIT_USAGE;
    }
    driver.out.print(&Line::TurnStart {
        model: start_up.model,
        session: start_up.session,
        approval: setup.approval.name(),
    });
    let notice = |text| Line::Notice {
        severity: schema::Loudness::Notice,
        text,
    };
    for text in start_up.notes {
        driver.out.print(&notice(text));
    }
    if start_up.left_out > 0 {
        let text = format!("{} more start-up notices were left out", start_up.left_out);
        driver.out.print(&notice(text));
    }
    let status = driver.turn(setup.prompt).await;
    // The agent saves the session after it says the turn is done: what
    // it says while doing so (a failed save) still comes before the end.
    driver.quit().await;
    let elapsed = setup.started.elapsed();
    driver.out.print(&Line::TurnEnd {
        status,
        exit_code: status.exit_code(),
        steps: driver.tally.steps,
        tool_calls: driver.tally.tool_calls,
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    status.exit_code()
}

impl Driver {
    /// Waits for the agent's start-up: it opens the session, reads the
    /// project's instructions and asks the server what it was not told
    /// before it reads a command, and answers a cancel while idle at once
    /// with `TurnDone`, which so marks the end of start-up. A signal or
    /// the timeout meanwhile ends the run with its status.
    async fn start_up(&mut self, start_up: &mut StartUp) -> Result<(), u8> {
        let _ = self.commands.send(UiCommand::Cancel).await;
        loop {
            tokio::select! {
                ev = self.events.recv() => match ev {
                    Some(AgentEvent::TurnDone) => return Ok(()),
                    Some(AgentEvent::System { severity, text }) => start_up.note(severity, text),
                    Some(AgentEvent::SessionId(id)) => start_up.session = id,
                    Some(AgentEvent::SessionFacts { model: Some(m), .. }) => start_up.model = m,
                    Some(_) => {}
                    None => {
                        start_up.note(Severity::Error, "the agent stopped during start-up".into());
                        return Ok(());
                    }
                },
                () = self.signals.next() => return Err(EXIT_INTERRUPTED),
                () = until(self.deadline) => return Err(EXIT_TIMED_OUT),
            }
        }
    }

    /// Sends the prompt and prints the turn until the agent says it is
    /// done; a signal or the timeout cancels it first. Returns how it
    /// ended.
    async fn turn(&mut self, prompt: UiCommand) -> TurnStatus {
        let _ = self.commands.send(prompt).await;
        let mut stop: Option<(Stop, Instant)> = None;
        let grace = |stop: &Option<(Stop, Instant)>| stop.map(|(_, at)| at + STOP_GRACE);
        loop {
            tokio::select! {
                ev = self.events.recv() => match ev {
                    Some(AgentEvent::TurnDone) => {
                        if let Some(line) = self.tally.take_usage() {
                            self.out.print(&line);
                        }
                        break;
                    }
                    Some(ev) => {
                        if let Some(line) = self.tally.see(ev) {
                            self.out.print(&line);
                        }
                    }
                    None => {
                        self.out.print(&Line::Notice {
                            severity: schema::Loudness::Error,
                            text: "the agent stopped before the turn was over".into(),
                        });
                        if stop.is_none() {
                            return TurnStatus::Failed;
                        }
                        break;
                    }
                },
                // A second signal while stopping: stop waiting.
                () = self.signals.next() => {
                    if stop.is_some() {
                        break;
                    }
                    stop = Some((Stop::Interrupted, Instant::now()));
                    let _ = self.commands.send(UiCommand::Cancel).await;
                }
                () = until(self.deadline), if stop.is_none() => {
                    stop = Some((Stop::TimedOut, Instant::now()));
                    let _ = self.commands.send(UiCommand::Cancel).await;
                }
                () = until(grace(&stop)) => break,
            }
        }
        match stop {
            Some((Stop::Interrupted, _)) => TurnStatus::Interrupted,
            Some((Stop::TimedOut, _)) => TurnStatus::TimedOut,
            None => self.tally.status(),
        }
    }

    /// Tells the agent to quit and prints what it still says until it has
    /// (within [`STOP_GRACE`]).
    async fn quit(&mut self) {
        let _ = self.commands.send(UiCommand::Quit).await;
        let give_up = Instant::now() + STOP_GRACE;
        loop {
            tokio::select! {
                ev = self.events.recv() => match ev {
                    Some(ev @ AgentEvent::System { .. }) => {
                        if let Some(line) = self.tally.see(ev) {
                            self.out.print(&line);
                        }
                    }
                    Some(_) => {}
                    None => return,
                },
                () = tokio::time::sleep_until(give_up) => return,
            }
        }
    }
}

/// Waits until `deadline`; forever when there is none.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
