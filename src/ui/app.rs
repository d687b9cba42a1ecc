//! The UI task's loop: one `select!` over the terminal's events, the
//! agent's events, the spinner tick (only while a phase is active) and the
//! next frame's deadline. It draws only when something changed, at most
//! once per [`FRAME_INTERVAL`], so a burst of tokens costs one frame.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

use crate::protocol::{AgentEvent, Severity, UiCommand};

use super::input;
use super::state::{Hint, SessionInfo, State};
use super::terminal::{HangupWatch, TerminalGuard, copy_to_clipboard};
use super::theme::Theme;
use super::transcript::EntryKind;
use super::update::{Effect, Msg, SendFailure, update};
use super::view::view;

/// The shortest time between two frames (~60 per second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// The spinner's step.
pub const TICK_INTERVAL: Duration = Duration::from_millis(80);
/// Agent events applied before a frame may be drawn; bounds the time one
/// burst can hold the loop away from the keyboard.
pub const EVENTS_PER_BATCH: usize = 4096;
/// What the UI task is given at start.
#[derive(Debug)]
pub struct UiSetup {
    /// Header facts.
    pub session: SessionInfo,
    /// Whether colours are off (`NO_COLOR`).
    pub no_color: bool,
    /// Entries to show first (config problems).
    pub notes: Vec<(Severity, String)>,
    /// The first list of sessions the agent sends opens the picker
    /// (`--resume` without an id).
    pub pick_sessions: bool,
    /// Told once the first frame is on screen: what can wait for it (the
    /// agent's own start-up) does.
    pub first_frame: oneshot::Sender<()>,
}

/// Runs the UI until the person quits, the agent goes away for good, or a
/// terminating signal arrives. Returns the transcript as plain text, for
/// the terminal's scrollback.
pub async fn run(
    setup: UiSetup,
    commands: mpsc::Sender<UiCommand>,
    mut events: mpsc::Receiver<AgentEvent>,
) -> io::Result<String> {
    // Signals first: one arriving between the first frame and this point
    // would otherwise kill the process with the terminal still raw. In raw
    // mode Ctrl+C and Ctrl+\ are keys, so SIGINT and SIGQUIT come only from
    // `kill`; each quits like SIGTERM, so the terminal is restored and no
    // command is left running.
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut quit_signal = signal(SignalKind::quit()).ok();
    // SIGTSTP (Ctrl+Z is a key in raw mode, so it comes only from `kill`)
    // would stop the process with the terminal still raw: the screen is
    // given back first.
    let mut stop_signal = signal(SignalKind::from_raw(nix::libc::SIGTSTP)).ok();
    let hangup = HangupWatch::new()?;
    let guard = TerminalGuard::enter()?;
    // Starts crossterm's event reader now, which installs its SIGWINCH
    // handler: a resize between reading the size below and the reader's
    // lazy start would otherwise be lost and leave a stale frame.
    let _ = crossterm::event::poll(Duration::ZERO);
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let size = terminal.size()?;
    let mut state = State::new(
        setup.session,
        Theme::new(setup.no_color),
        (size.width, size.height),
    );
    state.pick_sessions = setup.pick_sessions;
    for (severity, text) in setup.notes {
        state.transcript.push(EntryKind::System(severity), text);
    }
    draw(&mut terminal, &mut state)?;
    let _ = setup.first_frame.send(());

    let mut input = input::spawn_reader()?;
    let mut tick = tokio::time::interval(TICK_INTERVAL);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_frame = Instant::now();
    let mut dirty = false;
    let mut agent_open = true;

    loop {
        let msgs: Vec<Msg> = tokio::select! {
            ev = input.recv() => match ev {
                Some(Ok(ev)) => terminal_msg(ev).into_iter().collect(),
                // The terminal is gone: nothing more can be read or shown.
                Some(Err(_)) | None => break,
            },
            // A hang-up crossterm keeps to itself (see HangupWatch): quit
            // as after SIGHUP — the agent kills what runs, the transcript
            // is kept.
            () = hangup.hung_up() => break,
            ev = events.recv(), if agent_open => match ev {
                Some(first) => {
                    let mut batch = vec![Msg::Agent(first)];
                    while batch.len() < EVENTS_PER_BATCH {
                        match events.try_recv() {
                            Ok(ev) => batch.push(Msg::Agent(ev)),
                            Err(_) => break,
                        }
                    }
                    batch
                }
                None => {
                    agent_open = false;
                    vec![Msg::AgentGone]
                }
            },
            // The time now, not the tick's: the first tick after an idle
            // spell is one scheduled back then, and the turn's clock
            // would count the whole spell.
            _ = tick.tick(), if state.phase.is_active() => vec![Msg::Tick(std::time::Instant::now())],
            _ = tokio::time::sleep_until(last_frame + FRAME_INTERVAL), if dirty => {
                // A terminal that cannot be written to is gone (EIO after a
                // hang-up): quit as after one, not as a failure.
                if draw(&mut terminal, &mut state).is_err() {
                    break;
                }
                last_frame = Instant::now();
                dirty = false;
                continue;
            }
            Some(()) = next_signal(&mut term) => break,
            Some(()) = next_signal(&mut hup) => break,
            Some(()) = next_signal(&mut int) => break,
            Some(()) = next_signal(&mut quit_signal) => break,
            Some(()) = next_signal(&mut stop_signal) => {
                if suspend(&guard, &mut terminal, &mut state).is_err() {
                    break;
                }
                continue;
            }
        };
        let mut quit = false;
        let mut msgs = VecDeque::from(msgs);
        while let Some(msg) = msgs.pop_front() {
            let outcome = update(&mut state, msg);
            dirty |= outcome.changed;
            for effect in outcome.effects {
                // As for a frame: a failed write means the terminal is gone.
                match effect {
                    Effect::Send(cmd) => msgs.extend(send(&commands, cmd)),
                    Effect::Copy(text) => {
                        quit |= copy_to_clipboard(terminal.backend_mut(), &text).is_err();
                    }
                    Effect::Redraw => quit |= clear(&mut terminal).is_err(),
                    Effect::Suspend => quit |= suspend(&guard, &mut terminal, &mut state).is_err(),
                    Effect::Quit => quit = true,
                }
            }
        }
        if quit {
            break;
        }
    }
    let _ = commands.try_send(UiCommand::Quit);
    drop(terminal);
    drop(guard);
    Ok(state.transcript.plain_text())
}

fn draw(
    terminal: &mut Terminal<CrosstermBackend<io::Stdout>>,
    state: &mut State,
) -> io::Result<()> {
    state.prepare();
    terminal.draw(|frame| view(state, frame))?;
    Ok(())
}

/// Ctrl+Z: the terminal is the shell's until the process is continued;
/// then the whole screen is drawn again, for the size it has then. With
/// no shell to continue it, a hint says so instead.
fn suspend(
    guard: &TerminalGuard,
    terminal: &mut Terminal<CrosstermBackend<io::Stdout>>,
    state: &mut State,
) -> io::Result<()> {
    if !guard.suspend()? {
        state.hint = Some(Hint::new(
            "no shell here can resume dashfloat after Ctrl+Z, so it goes on",
        ));
        return draw(terminal, state);
    }
    clear(terminal)?;
    let size = terminal.size()?;
    update(state, Msg::Resize(size.width, size.height));
    draw(terminal, state)
}

/// Clears the screen and forgets what was drawn, so the next frame draws
/// every cell. Not `Terminal::clear`: that asks the terminal where its
/// cursor is, the answer goes to the input thread instead, and the
/// question fails after two seconds, which ended the UI.
fn clear(terminal: &mut Terminal<CrosstermBackend<io::Stdout>>) -> io::Result<()> {
    let backend = terminal.backend_mut();
    backend.clear_region(ClearType::All)?;
    Backend::flush(backend)?;
    // The buffer drawn next is blank after a frame; the one shown is
    // blanked here and becomes it, so both are blank.
    terminal.swap_buffers();
    Ok(())
}

fn terminal_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Resize(w, h) => Some(Msg::Resize(w, h)),
        Event::FocusGained | Event::FocusLost => None,
    }
}

/// Sends a command without waiting: the UI must never block on the agent.
/// The queue only fills if the agent stopped reading; a command that could
/// not be sent comes back as the message that tells the person.
fn send(commands: &mpsc::Sender<UiCommand>, cmd: UiCommand) -> Option<Msg> {
    match commands.try_send(cmd) {
        Ok(()) => None,
        Err(mpsc::error::TrySendError::Full(cmd)) => Some(Msg::Undelivered(cmd, SendFailure::Full)),
        Err(mpsc::error::TrySendError::Closed(cmd)) => {
            Some(Msg::Undelivered(cmd, SendFailure::Closed))
        }
    }
}

async fn next_signal(signal: &mut Option<Signal>) -> Option<()> {
    match signal {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}
