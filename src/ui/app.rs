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
use ratatui::layout::Size;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

use crate::protocol::{AgentEvent, Severity, UiCommand};

use super::input;
use super::notify::Notify;
use super::state::{Hint, SessionInfo, State};
use super::terminal::{HangupWatch, TerminalGuard, copy_to_clipboard, send_raw};
use super::theme::Theme;
use super::transcript::EntryKind;
use super::update::{Effect, Msg, SendFailure, update};
use super::view::view;

/// The shortest time between two frames (~60 per second).
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// The spinner's step.
const TICK_INTERVAL: Duration = Duration::from_millis(80);
/// Agent events applied before a frame may be drawn; bounds the time one
/// burst can hold the loop away from the keyboard.
const EVENTS_PER_BATCH: usize = 4096;
/// What the UI task is given at start.
#[derive(Debug)]
pub struct UiSetup {
    /// Header facts.
    pub session: SessionInfo,
    /// Whether colours are off (`NO_COLOR`).
    pub no_color: bool,
    /// Entries to show first (config problems).
    pub notes: Vec<(Severity, String)>,
    /// How the person is told that a turn ended or a call waits while
    /// the terminal has no focus.
    pub notify: Notify,
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
    // would otherwise kill the process with the terminal still raw.
    let mut signals = Signals::install();
    let hangup = HangupWatch::new()?;
    let mut screen = Screen::enter()?;
    let (mut state, first_frame) = first_state(setup, screen.terminal.size()?);
    screen.draw(&mut state)?;
    let _ = first_frame.send(());

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
                Some(first) => agent_batch(first, &mut events),
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
                if screen.draw(&mut state).is_err() {
                    break;
                }
                last_frame = Instant::now();
                dirty = false;
                continue;
            }
            caught = signals.next() => match caught {
                Caught::End => break,
                Caught::Stop => {
                    if screen.suspend(&mut state).is_err() {
                        break;
                    }
                    continue;
                }
            },
        };
        let (changed, quit) = apply_all(&mut state, msgs, &commands, &mut screen);
        dirty |= changed;
        if quit {
            break;
        }
    }
    let _ = commands.try_send(UiCommand::Quit);
    // The terminal restored before the transcript is handed back to be
    // printed on the normal screen.
    drop(screen);
    Ok(state.transcript.plain_text())
}

/// The state of the first frame: the header's facts, the notes to show
/// first, and whether the agent's first list of sessions opens the picker;
/// with whom to tell once that frame is on screen.
fn first_state(setup: UiSetup, size: Size) -> (State, oneshot::Sender<()>) {
    let mut state = State::new(
        setup.session,
        Theme::new(setup.no_color),
        (size.width, size.height),
    );
    state.pick_sessions = setup.pick_sessions;
    state.notify = setup.notify;
    for (severity, text) in setup.notes {
        state.transcript.push(EntryKind::System(severity), text);
    }
    (state, setup.first_frame)
}

/// The agent's events that are waiting, `first` first, up to
/// [`EVENTS_PER_BATCH`]: applied before the next frame, so a burst of
/// tokens costs one.
fn agent_batch(first: AgentEvent, events: &mut mpsc::Receiver<AgentEvent>) -> Vec<Msg> {
    let mut batch = vec![Msg::Agent(first)];
    while batch.len() < EVENTS_PER_BATCH {
        match events.try_recv() {
            Ok(ev) => batch.push(Msg::Agent(ev)),
            Err(_) => break,
        }
    }
    batch
}

/// Applies `msgs` in order, and carries out their effects: a command the
/// agent could not take comes back as a message, applied next. Whether
/// the screen changed, and whether to quit (asked for, or the terminal
/// could not be written to: it is gone, as when a frame fails).
fn apply_all(
    state: &mut State,
    msgs: Vec<Msg>,
    commands: &mpsc::Sender<UiCommand>,
    screen: &mut Screen,
) -> (bool, bool) {
    let (mut changed, mut quit) = (false, false);
    let mut msgs = VecDeque::from(msgs);
    while let Some(msg) = msgs.pop_front() {
        let outcome = update(state, msg);
        changed |= outcome.changed;
        for effect in outcome.effects {
            match effect {
                Effect::Send(cmd) => msgs.extend(send(commands, cmd)),
                Effect::Copy(text) => {
                    quit |= copy_to_clipboard(screen.terminal.backend_mut(), &text).is_err();
                }
                Effect::Notify(bytes) => {
                    quit |= send_raw(screen.terminal.backend_mut(), &bytes).is_err();
                }
                Effect::Redraw => quit |= screen.clear().is_err(),
                Effect::Suspend => quit |= screen.suspend(state).is_err(),
                Effect::Quit => quit = true,
            }
        }
    }
    (changed, quit)
}

/// The terminal while the UI holds it: drawn on, cleared, and given to
/// the shell while suspended.
struct Screen {
    /// Declared first, so dropped first: the guard restores the terminal
    /// after the last write.
    terminal: Terminal<CrosstermBackend<io::Stdout>>,
    guard: TerminalGuard,
}

impl Screen {
    /// Takes the terminal into full-screen mode.
    fn enter() -> io::Result<Self> {
        let guard = TerminalGuard::enter()?;
        // Starts crossterm's event reader now, which installs its SIGWINCH
        // handler: a resize between reading the size and the reader's
        // lazy start would otherwise be lost and leave a stale frame.
        let _ = crossterm::event::poll(Duration::ZERO);
        let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        Ok(Self { terminal, guard })
    }

    fn draw(&mut self, state: &mut State) -> io::Result<()> {
        state.prepare();
        self.terminal.draw(|frame| view(state, frame))?;
        Ok(())
    }

    /// Ctrl+Z: the terminal is the shell's until the process is continued;
    /// then the whole screen is drawn again, for the size it has then. With
    /// no shell to continue it, a hint says so instead.
    fn suspend(&mut self, state: &mut State) -> io::Result<()> {
        if !self.guard.suspend()? {
            state.hint = Some(Hint::new(
                "no shell here can resume dashfloat after Ctrl+Z, so it goes on",
            ));
            return self.draw(state);
        }
        self.clear()?;
        let size = self.terminal.size()?;
        update(state, Msg::Resize(size.width, size.height));
        self.draw(state)
    }

    /// Clears the screen and forgets what was drawn, so the next frame draws
    /// every cell. Not `Terminal::clear`: that asks the terminal where its
    /// cursor is, the answer goes to the input thread instead, and the
    /// question fails after two seconds, which ended the UI.
    fn clear(&mut self) -> io::Result<()> {
        let backend = self.terminal.backend_mut();
        backend.clear_region(ClearType::All)?;
        Backend::flush(backend)?;
        // The buffer drawn next is blank after a frame; the one shown is
        // blanked here and becomes it, so both are blank.
        self.terminal.swap_buffers();
        Ok(())
    }
}

/// A signal the loop acts on.
enum Caught {
    /// Quit, restoring the terminal.
    End,
    /// Give the terminal back and stop until continued.
    Stop,
}

/// The signals the UI catches, each where it could be installed. In raw
/// mode Ctrl+C and Ctrl+\ are keys, so SIGINT and SIGQUIT come only from
/// `kill`; each quits like SIGTERM and SIGHUP, so the terminal is
/// restored and no command is left running. SIGTSTP (Ctrl+Z is a key too)
/// would stop the process with the terminal still raw: the screen is
/// given back first.
struct Signals {
    term: Option<Signal>,
    hup: Option<Signal>,
    int: Option<Signal>,
    quit: Option<Signal>,
    stop: Option<Signal>,
}

impl Signals {
    fn install() -> Self {
        let catch = |kind| signal(kind).ok();
        Self {
            term: catch(SignalKind::terminate()),
            hup: catch(SignalKind::hangup()),
            int: catch(SignalKind::interrupt()),
            quit: catch(SignalKind::quit()),
            stop: catch(SignalKind::from_raw(nix::libc::SIGTSTP)),
        }
    }

    /// The next signal caught; never, with none installed.
    async fn next(&mut self) -> Caught {
        tokio::select! {
            Some(()) = next_signal(&mut self.term) => Caught::End,
            Some(()) = next_signal(&mut self.hup) => Caught::End,
            Some(()) = next_signal(&mut self.int) => Caught::End,
            Some(()) = next_signal(&mut self.quit) => Caught::End,
            Some(()) = next_signal(&mut self.stop) => Caught::Stop,
            else => std::future::pending().await,
        }
    }
}

fn terminal_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Resize(w, h) => Some(Msg::Resize(w, h)),
        Event::FocusGained => Some(Msg::Focus(true)),
        Event::FocusLost => Some(Msg::Focus(false)),
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
