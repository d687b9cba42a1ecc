//! The terminal guard: enters the full-screen mode once and restores the
//! terminal on every way out — drop (normal exit and errors), a panic (a
//! hook that restores first, then prints), and the signals the UI loop
//! turns into a normal exit (ADR 0002).

use std::io::{self, Write};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Holds the terminal in full-screen mode while alive.
#[derive(Debug)]
pub struct TerminalGuard {
    _private: (),
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
        let guard = Self { _private: () };
        execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
        )?;
        Ok(guard)
    }
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
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show,
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Puts `text` on the clipboard with OSC 52, which terminals (and tmux
/// with `set-clipboard on`) honour even over ssh.
pub fn copy_to_clipboard(out: &mut impl Write, text: &str) -> io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}
