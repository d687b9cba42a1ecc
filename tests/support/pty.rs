//! A pseudo-terminal driver for end-to-end tests of the real binary.
//!
//! [`PtySession::spawn`] starts a program on a fresh pty (portable-pty). A
//! reader thread copies everything the program writes into a byte log and a
//! `vt100::Parser`, so a test can look at the screen the way a person would,
//! and at the raw escape sequences when the screen cannot tell (e.g. whether
//! the program left the alternate screen or disabled bracketed paste).
//!
//! Terminal queries are answered the way a real terminal answers them, so a
//! program that asks never hangs: `ESC[6n` (cursor position) gets
//! `ESC[row;colR` with the emulated cursor, `ESC[5n` gets `ESC[0n`, primary
//! device attributes (`ESC[c` / `ESC[0c`) get `ESC[?1;2c`, and OSC 10/11
//! colour queries get a black/white answer. The kitty keyboard query
//! `ESC[?u` is deliberately left unanswered, which tells crossterm the
//! enhancement is unsupported (it decides on the device-attributes reply).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};

/// Scrollback lines kept by the emulated terminal.
pub const SCROLLBACK: usize = 1000;

/// How often the `wait_*` helpers look again.
const POLL: Duration = Duration::from_millis(15);

/// `termios.c_lflag` bits (from `<termios.h>`); the crate's `nix` is built
/// without its `term` feature, so they are spelled out here.
#[cfg(target_os = "linux")]
const ICANON: u32 = 0o000002;
#[cfg(target_os = "linux")]
const ECHO: u32 = 0o000010;
#[cfg(not(target_os = "linux"))]
const ICANON: u32 = 0x100;
#[cfg(not(target_os = "linux"))]
const ECHO: u32 = 0x8;

/// Answers the terminal queries a program may send (see the module docs).
#[derive(Default)]
pub struct Responder {
    pending: Vec<Vec<u8>>,
    answered: usize,
}

impl vt100::Callbacks for Responder {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied();
        let answer = match (i1, i2, c, first) {
            (None, None, 'n', Some(6)) => {
                let (row, col) = screen.cursor_position();
                Some(format!("\x1b[{};{}R", row + 1, col + 1))
            }
            (None, None, 'n', Some(5)) => Some("\x1b[0n".to_owned()),
            (None, None, 'c', None | Some(0)) => Some("\x1b[?1;2c".to_owned()),
            _ => None,
        };
        if let Some(answer) = answer {
            self.pending.push(answer.into_bytes());
            self.answered += 1;
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        let answer = match params {
            [b"10", b"?"] => Some("\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
            [b"11", b"?"] => Some("\x1b]11;rgb:0000/0000/0000\x1b\\"),
            _ => None,
        };
        if let Some(answer) = answer {
            self.pending.push(answer.as_bytes().to_vec());
            self.answered += 1;
        }
    }
}

type Parser = vt100::Parser<Responder>;
type Writer = Box<dyn Write + Send>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A program running on a pseudo-terminal, with an emulated screen.
pub struct PtySession {
    parser: Arc<Mutex<Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Writer>>,
    eof: Arc<AtomicBool>,
    /// Set by [`PtySession::hang_up`]: the reader closes its end of the
    /// master after its next read.
    hanging_up: Arc<AtomicBool>,
    /// `None` after a hang-up.
    master: Option<Box<dyn MasterPty + Send>>,
    child: Box<dyn Child + Send + Sync>,
    exit: Option<ExitStatus>,
    reader: Option<JoinHandle<()>>,
}

impl PtySession {
    /// Starts `program args..` in `cwd` on a `cols`×`rows` pty with the
    /// current environment minus `COLUMNS`/`LINES`, plus
    /// `TERM=xterm-256color`, plus `env` (which may override `TERM`).
    /// Panics if the pty or the process cannot be created.
    pub fn spawn(
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
        cols: u16,
        rows: u16,
    ) -> PtySession {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_remove("COLUMNS");
        cmd.env_remove("LINES");
        cmd.env("TERM", "xterm-256color");
        // A scripted server answers the requests a test expects, not a
        // warm-up ahead of them; a test of the warm-up turns it back on.
        cmd.env("DASHFLOAT_WARM_CACHE", "off");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .unwrap_or_else(|e| panic!("spawn {} on a pty: {e}", program.display()));
        // Only the child holds the slave now, so the reader sees EOF when it
        // (and anything it left holding the tty) is gone.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer: Arc<Mutex<Writer>> =
            Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            rows,
            cols,
            SCROLLBACK,
            Responder::default(),
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let eof = Arc::new(AtomicBool::new(false));
        let hanging_up = Arc::new(AtomicBool::new(false));

        let thread = {
            let (parser, raw, writer, eof, hanging_up) = (
                Arc::clone(&parser),
                Arc::clone(&raw),
                Arc::clone(&writer),
                Arc::clone(&eof),
                Arc::clone(&hanging_up),
            );
            std::thread::Builder::new()
                .name("pty-reader".into())
                .spawn(move || {
                    let mut buf = [0u8; 8192];
                    while !hanging_up.load(Ordering::SeqCst) {
                        let n = match reader.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => n,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            // EIO: the slave side closed.
                            Err(_) => break,
                        };
                        lock(&raw).extend_from_slice(&buf[..n]);
                        let answers = {
                            let mut parser = lock(&parser);
                            parser.process(&buf[..n]);
                            std::mem::take(&mut parser.callbacks_mut().pending)
                        };
                        if !answers.is_empty() {
                            let mut w = lock(&writer);
                            for a in answers {
                                let _ = w.write_all(&a);
                            }
                            let _ = w.flush();
                        }
                    }
                    eof.store(true, Ordering::SeqCst);
                })
                .expect("spawn pty reader thread")
        };

        PtySession {
            parser,
            raw,
            writer,
            eof,
            hanging_up,
            master: Some(pair.master),
            child,
            exit: None,
            reader: Some(thread),
        }
    }

    /// Writes bytes to the program as typed input, e.g. `b"hello\r"`,
    /// `b"\x1b"` (Esc), `b"\x03"` (Ctrl+C), `b"\x04"` (Ctrl+D). Panics if
    /// the write fails.
    pub fn send(&self, bytes: &[u8]) {
        let mut w = lock(&self.writer);
        w.write_all(bytes).expect("write to pty");
        w.flush().expect("flush pty");
    }

    /// Sends `text` as a bracketed paste (`ESC[200~ .. ESC[201~`).
    pub fn paste(&self, text: &str) {
        let mut bytes = b"\x1b[200~".to_vec();
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(b"\x1b[201~");
        self.send(&bytes);
    }

    /// The visible screen as text (rows joined by `\n`, trailing blanks
    /// trimmed), as vt100 sees it.
    pub fn screen_text(&self) -> String {
        lock(&self.parser).screen().contents()
    }

    /// Runs `f` on the emulated screen (cells, colours, cursor, modes).
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        f(lock(&self.parser).screen())
    }

    /// Polls the screen until it contains `needle`; `Ok(screen)` then.
    /// `Err` carries a message with the last screen, for the test's panic.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> Result<String, String> {
        self.wait_until(timeout, |screen| screen.contains(needle))
            .map_err(|screen| {
                format!("timed out after {timeout:?} waiting for {needle:?}; screen:\n{screen}")
            })
    }

    /// Polls the screen until it no longer contains `needle`.
    pub fn wait_gone(&self, needle: &str, timeout: Duration) -> Result<String, String> {
        self.wait_until(timeout, |screen| !screen.contains(needle))
            .map_err(|screen| {
                format!(
                    "timed out after {timeout:?} waiting for {needle:?} to go; screen:\n{screen}"
                )
            })
    }

    /// Polls until `pred(screen_text)` holds; `Err` has the last screen.
    pub fn wait_until(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen_text();
            if pred(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= deadline {
                return Err(screen);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Polls the raw output until it contains `needle` bytes.
    pub fn wait_for_raw(&self, needle: &[u8], timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            if contains(&lock(&self.raw), needle) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "timed out after {timeout:?} waiting for raw output {:?}; screen:\n{}",
                    String::from_utf8_lossy(needle),
                    self.screen_text()
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits for the program to exit and returns its status; on timeout
    /// kills it and returns `None`. After an exit it also waits (up to 2 s)
    /// for the reader to drain the last output, so `raw_output` and the
    /// screen are complete.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        if let Some(status) = &self.exit {
            return Some(status.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.exit = Some(status.clone());
                    self.drain(Duration::from_secs(2));
                    return Some(status);
                }
                Ok(None) => {}
                Err(e) => panic!("waiting for pty child: {e}"),
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Whether the program is still running.
    pub fn is_running(&mut self) -> bool {
        self.exit.is_none() && matches!(self.child.try_wait(), Ok(None))
    }

    /// The child's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    fn drain(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.eof.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if self.eof.load(Ordering::SeqCst)
            && let Some(t) = self.reader.take()
        {
            let _ = t.join();
        }
    }

    /// Closes the master side of the pty, as a terminal emulator that
    /// goes away does: the program's tty is hung up (its reads return end
    /// of file) and only the session leader gets SIGHUP. Every copy of the
    /// master is closed: ours; the writer, which portable-pty closes by
    /// typing a newline and the EOF character (Ctrl+D) into the program;
    /// and the reader thread's, which lets go after its next read, so the
    /// program must write once more (a spinner, or its redraw after those
    /// two keys). `Err` if the reader still holds on after `timeout`.
    pub fn hang_up(&mut self, timeout: Duration) -> Result<(), String> {
        self.hanging_up.store(true, Ordering::SeqCst);
        *lock(&self.writer) = Box::new(std::io::sink());
        self.master = None;
        let deadline = Instant::now() + timeout;
        while !self.eof.load(Ordering::SeqCst) {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the reader still holds the master after {timeout:?}; screen:\n{}",
                    self.screen_text()
                ));
            }
            std::thread::sleep(POLL);
        }
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
        Ok(())
    }

    /// Whether vt100 thinks the alternate screen is active.
    pub fn alternate_screen(&self) -> bool {
        lock(&self.parser).screen().alternate_screen()
    }

    /// Every byte the program wrote so far.
    pub fn raw_output(&self) -> Vec<u8> {
        lock(&self.raw).clone()
    }

    /// Whether the raw output contains `needle`.
    pub fn raw_contains(&self, needle: &[u8]) -> bool {
        contains(&lock(&self.raw), needle)
    }

    /// How many terminal queries (cursor position, device attributes,
    /// colours) were answered.
    pub fn queries_answered(&self) -> usize {
        lock(&self.parser).callbacks().answered
    }

    /// Whether the pty's line discipline is cooked (`ICANON` and `ECHO`
    /// both set), e.g. after the program exited; `None` if the termios
    /// cannot be read.
    pub fn termios_is_cooked(&self) -> Option<bool> {
        let flags = self.termios_lflag()?;
        Some(flags & ICANON != 0 && flags & ECHO != 0)
    }

    /// The pty's raw `c_lflag` bits.
    pub fn termios_lflag(&self) -> Option<u32> {
        let termios = self.master.as_ref()?.get_termios()?;
        Some(termios.local_flags.bits())
    }

    /// Resizes the pty (the program gets SIGWINCH) and the emulated screen.
    /// Panics after a hang-up.
    pub fn resize(&self, cols: u16, rows: u16) {
        lock(&self.parser).screen_mut().set_size(rows, cols);
        self.master
            .as_ref()
            .expect("a pty that was not hung up")
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize pty");
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if self.exit.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}
