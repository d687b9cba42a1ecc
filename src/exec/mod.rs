//! `dashfloat exec`: one turn without the full screen. A headless driver
//! takes the UI task's place and speaks the same protocol to the same
//! agent: it waits for the agent's start-up, sends the prompt, prints
//! what happens ([`output`]: text for a person, or the JSON lines of
//! [`schema`]), cancels the turn on SIGINT, SIGTERM, SIGHUP or
//! `--timeout`, and returns the exit status. ADR 0028.

pub mod output;
pub mod schema;
pub mod tally;

use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::protocol::{AgentEvent, ApprovalPolicy, Severity, UiCommand};
use crate::safe_text::strip_controls;

use output::Output;
use schema::{Line, TurnStatus};
use tally::Tally;

/// Exit status: the model answered.
pub const EXIT_ANSWERED: u8 = 0;
/// Exit status: the model or a tool failed the turn (stream or endpoint
/// failure, the step limit, an error that ended the turn).
pub const EXIT_FAILED: u8 = 1;
/// Exit status: bad usage or configuration; no prompt was sent.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: `--timeout` ran out (as `timeout(1)` exits).
pub const EXIT_TIMED_OUT: u8 = 124;
/// Exit status: a signal interrupted the turn (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;
/// The largest prompt read from stdin.
pub const PROMPT_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// How long the agent gets, after being told to cancel or quit, to end
/// the turn (killing its commands) and save the session. Past it the
/// driver stops waiting; the process then kills what is left.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// Start-up notices kept to print after `turn_start`; more are counted.
pub const STARTUP_NOTES_MAX: usize = 64;

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
    /// The prompt to send.
    pub prompt: String,
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

/// Runs one turn: returns the exit status.
pub async fn run(
    setup: ExecSetup,
    commands: mpsc::Sender<UiCommand>,
    mut events: mpsc::Receiver<AgentEvent>,
) -> u8 {
    let mut signals = Signals::new();
    let deadline = setup.timeout.map(|t| setup.started + t);
    let mut out = Output::new(setup.json);
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    let mut left_out = 0usize;
    let mut note = |severity: Severity, text: String| {
        if severity == Severity::Error {
            errors.push(text);
        } else if notes.len() < STARTUP_NOTES_MAX {
            notes.push(text);
        } else {
            left_out += 1;
        }
    };
    for (severity, text) in setup.notes {
        note(severity, text);
    }
    // Start-up: the agent opens the session, reads the project's
    // instructions and asks the server what it was not told, before it
    // reads a command. A cancel while idle is answered at once with
    // `TurnDone`, so that answer marks the end of start-up.
    let _ = commands.send(UiCommand::Cancel).await;
    let mut model = setup.model;
    let mut session = None;
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Some(AgentEvent::TurnDone) => break,
                Some(AgentEvent::System { severity, text }) => note(severity, text),
                Some(AgentEvent::SessionId(id)) => session = id,
                Some(AgentEvent::SessionFacts { model: Some(m), .. }) => model = m,
                Some(_) => {}
                None => {
                    note(Severity::Error, "the agent stopped during start-up".into());
                    break;
                }
            },
            () = signals.next() => return EXIT_INTERRUPTED,
            () = until(deadline) => return EXIT_TIMED_OUT,
        }
    }
    // Whatever the full screen would show as an error at start-up (a
    // config problem, a session that cannot be resumed) stops a headless
    // run before its prompt: stdout stays empty, stderr says why.
    if !errors.is_empty() {
        let mut err = std::io::stderr().lock();
        for text in &errors {
            let _ = writeln!(err, "dashfloat: {}", strip_controls(text));
        }
        let _ = writeln!(err, "dashfloat: no prompt was sent");
        let _ = commands.send(UiCommand::Quit).await;
        return EXIT_USAGE;
    }
    out.print(&Line::TurnStart {
        model,
        session,
        approval: setup.approval.name(),
    });
    for text in notes {
        out.print(&Line::Notice {
            severity: schema::Loudness::Notice,
            text,
        });
    }
    if left_out > 0 {
        out.print(&Line::Notice {
            severity: schema::Loudness::Notice,
            text: format!("{left_out} more start-up notices were left out"),
        });
    }

    let _ = commands
        .send(UiCommand::Prompt { text: setup.prompt })
        .await;
    let mut tally = Tally::default();
    let mut stop: Option<(Stop, Instant)> = None;
    let grace = |stop: &Option<(Stop, Instant)>| stop.map(|(_, at)| at + STOP_GRACE);
    let mut agent_gone = false;
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Some(AgentEvent::TurnDone) => break,
                Some(ev) => {
                    if let Some(line) = tally.see(ev) {
                        out.print(&line);
                    }
                }
                None => {
                    agent_gone = true;
                    break;
                }
            },
            // A second signal while stopping: stop waiting.
            () = signals.next() => {
                if stop.is_some() {
                    break;
                }
                stop = Some((Stop::Interrupted, Instant::now()));
                let _ = commands.send(UiCommand::Cancel).await;
            }
            () = until(deadline), if stop.is_none() => {
                stop = Some((Stop::TimedOut, Instant::now()));
                let _ = commands.send(UiCommand::Cancel).await;
            }
            () = until(grace(&stop)) => break,
        }
    }
    if agent_gone {
        out.print(&Line::Notice {
            severity: schema::Loudness::Error,
            text: "the agent stopped before the turn was over".into(),
        });
    }
    let status = match stop {
        Some((Stop::Interrupted, _)) => TurnStatus::Interrupted,
        Some((Stop::TimedOut, _)) => TurnStatus::TimedOut,
        None if agent_gone => TurnStatus::Failed,
        None => tally.status(),
    };
    // The agent saves the session after it says the turn is done: what
    // it says while doing so (a failed save) still comes before the end.
    quit(&commands, &mut events, &mut tally, &mut out).await;
    let elapsed = setup.started.elapsed();
    out.print(&Line::TurnEnd {
        status,
        exit_code: status.exit_code(),
        steps: tally.steps,
        tool_calls: tally.tool_calls,
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    status.exit_code()
}

/// Tells the agent to quit and prints what it still says until it has
/// (within [`STOP_GRACE`]).
async fn quit(
    commands: &mpsc::Sender<UiCommand>,
    events: &mut mpsc::Receiver<AgentEvent>,
    tally: &mut Tally,
    out: &mut Output,
) {
    let _ = commands.send(UiCommand::Quit).await;
    let give_up = Instant::now() + STOP_GRACE;
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Some(ev @ AgentEvent::System { .. }) => {
                    if let Some(line) = tally.see(ev) {
                        out.print(&line);
                    }
                }
                Some(_) => {}
                None => return,
            },
            () = tokio::time::sleep_until(give_up) => return,
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
