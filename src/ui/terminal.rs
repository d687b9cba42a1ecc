//! The terminal guard: enters the full-screen mode once and restores the
//! terminal on every way out — drop (normal exit and errors), a panic on
//! the UI's thread (a hook that restores first, then prints), and the
//! signals the UI loop turns into a normal exit (ADR 0002). A panic on any
//! other thread leaves the screen to the UI: its task's failure becomes a
//! chat entry, and the hook keeps the report for stderr after the restore.

use std::cell::Cell;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::safe_text::strip_controls;

/// Panic reports kept while the UI holds the screen (later ones are
/// counted, not kept). ADR 0002.
pub const PANICS_KEPT: usize = 8;

/// Whether a UI holds the screen (some thread's [`ScreenClaim`] lives).
static SCREEN_HELD: AtomicBool = AtomicBool::new(false);
/// Reports of panics on other threads while the screen was held, and how
/// many more there were.
static KEPT_PANICS: Mutex<(Vec<String>, usize)> = Mutex::new((Vec::new(), 0));

thread_local! {
    /// Whether this thread is the one that drives the screen.
    static UI_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as the one that owns the screen, for the panic
/// hook: only a panic there (the UI loop runs inside `block_on`, so always
/// on this thread; tasks run on the runtime's workers) may restore the
/// terminal. Dropping it prints what panicked elsewhere meanwhile.
#[derive(Debug)]
pub struct ScreenClaim {
    _private: (),
}

impl ScreenClaim {
    /// Claims the screen for the calling thread.
    pub fn claim() -> Self {
        UI_THREAD.with(|ui| ui.set(true));
        SCREEN_HELD.store(true, Ordering::SeqCst);
        Self { _private: () }
    }
}

impl Drop for ScreenClaim {
    fn drop(&mut self) {
        SCREEN_HELD.store(false, Ordering::SeqCst);
        UI_THREAD.with(|ui| ui.set(false));
        let (reports, more) = take_kept_panics();
        let mut err = io::stderr();
        for report in reports {
            let _ = writeln!(err, "dashfloat: {}", strip_controls(&report));
        }
        if more > 0 {
            let _ = writeln!(err, "dashfloat: and {more} more panics");
        }
    }
}

/// Takes the panic reports kept while the screen was held, and the count
/// of those not kept.
pub fn take_kept_panics() -> (Vec<String>, usize) {
    let mut kept = KEPT_PANICS.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::take(&mut *kept)
}

/// Holds the terminal in full-screen mode while alive.
#[derive(Debug)]
pub struct TerminalGuard {
    /// Dropped after the restore, so kept panic reports print on the
    /// normal screen.
    _claim: ScreenClaim,
}

impl TerminalGuard {
    /// Enters raw mode, the alternate screen, bracketed paste, mouse capture
    /// and the kitty keyboard protocol, and installs the panic hook.
    ///
    /// The keyboard flags are pushed without asking the terminal first: the
    /// query waits for an answer that some terminals never send, and a
    /// terminal that does not know the sequence ignores it.
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        let guard = Self {
            _claim: ScreenClaim::claim(),
        };
        enter_screen()?;
        Ok(guard)
    }

    /// Gives the terminal back and stops the process until the shell
    /// continues it (Ctrl+Z, SIGTSTP), then takes the screen again, to be
    /// drawn afresh: while stopped, the shell has a usable terminal.
    /// Whether it stopped: not when no shell could continue it.
    pub fn suspend(&self) -> io::Result<bool> {
        if !under_job_control() {
            return Ok(false);
        }
        restore();
        // SIGSTOP, since the UI catches SIGTSTP to get here; the shell
        // sees the job stopped either way.
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP).map_err(io::Error::from)?;
        enable_raw_mode()?;
        enter_screen()?;
        Ok(true)
    }
}

/// Whether a shell can continue this process once it stops: its parent
/// is in the same session and in another process group, as a shell with
/// job control runs a job. Started by tmux, ssh or a terminal emulator
/// directly, or by a shell without job control, nothing could `fg` it,
/// and a stopped process would hang its terminal for good.
fn under_job_control() -> bool {
    use nix::unistd::{getpgid, getpgrp, getppid, getsid};
    let parent = getppid();
    match (getsid(Some(parent)), getsid(None), getpgid(Some(parent))) {
        (Ok(parent_session), Ok(session), Ok(parent_group)) => {
            parent_session == session && parent_group != getpgrp()
        }
        _ => false,
    }
}

/// Enters the alternate screen, bracketed paste, mouse capture, focus
/// reporting and the kitty keyboard protocol (raw mode is the caller's).
fn enter_screen() -> io::Result<()> {
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture,
        EnableFocusChange,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
    )
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back: every mode entered is left. Safe to call more
/// than once and when nothing was entered.
pub fn restore() {
    let mut out = io::stdout();
    let _ = execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show,
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Installs the hook that decides what a panic does to the screen: on the
/// UI's thread, or with no UI holding the screen, the process is going
/// down, so the terminal is restored first and the report printed; on any
/// other thread the report is kept, to be printed after the UI restores
/// the terminal, and nothing touches the screen. A report can carry model
/// or server bytes, so it is printed without control characters (ADR 0002).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(move |info| {
        if SCREEN_HELD.load(Ordering::SeqCst) && !UI_THREAD.with(Cell::get) {
            let thread = std::thread::current();
            let report = format!("thread '{}' {info}", thread.name().unwrap_or("<unnamed>"));
            let mut kept = KEPT_PANICS.lock().unwrap_or_else(|e| e.into_inner());
            if kept.0.len() < PANICS_KEPT {
                kept.0.push(report);
            } else {
                kept.1 += 1;
            }
            return;
        }
        restore();
        let thread = std::thread::current();
        let _ = writeln!(
            io::stderr(),
            "thread '{}' {}\n{}",
            thread.name().unwrap_or("<unnamed>"),
            strip_controls(&info.to_string()),
            strip_controls(&std::backtrace::Backtrace::capture().to_string())
        );
    }));
}

/// Notices the terminal going away without a signal: after a hang-up
/// (the emulator or the ssh connection closed, no SIGHUP sent to us) every
/// read of the tty returns end of file, and crossterm's reader retries it
/// forever instead of reporting it. The tty then polls as hung up, which
/// is what this waits for.
#[derive(Debug)]
pub struct HangupWatch(AsyncFd<std::fs::File>);

impl HangupWatch {
    /// Watches the terminal the UI reads: stdin when it is one, else
    /// `/dev/tty` (crossterm's choice). Made before the terminal is used,
    /// so a hang-up at any later moment is seen: once it has happened,
    /// neither is recognisable as a terminal any more.
    pub fn new() -> io::Result<Self> {
        let stdin = io::stdin();
        let tty = if stdin.is_terminal() {
            std::fs::File::from(stdin.as_fd().try_clone_to_owned()?)
        } else {
            std::fs::File::open("/dev/tty")?
        };
        // Deprecated because an inner value could close or swap its fd
        // while registered (tokio#8587); a `File` we own cannot, and the
        // replacement is `unsafe` for that one promise.
        #[allow(deprecated)]
        let fd = AsyncFd::with_interest(tty, Interest::READABLE)?;
        Ok(Self(fd))
    }

    /// Resolves once the terminal has hung up (or the runtime that watches
    /// it is going away). Input waiting to be read wakes it for a moment
    /// and is left to crossterm.
    pub async fn hung_up(&self) {
        loop {
            let Ok(mut guard) = self.0.readable().await else {
                return;
            };
            let ready = guard.ready();
            if ready.is_read_closed() || ready.is_error() {
                return;
            }
            guard.clear_ready();
        }
    }
}

/// Puts `text` on the clipboard with OSC 52, which terminals (and tmux
/// with `set-clipboard on`) honour even over ssh.
pub fn copy_to_clipboard(out: &mut impl Write, text: &str) -> io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    send_raw(out, &format!("\x1b]52;c;{encoded}\x07"))
}

/// Writes `bytes` to the terminal as they are, between frames: the bell
/// or a notification's escape sequence.
pub fn send_raw(out: &mut impl Write, bytes: &str) -> io::Result<()> {
    out.write_all(bytes.as_bytes())?;
    out.flush()
}
