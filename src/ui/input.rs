//! The terminal's events, read on a thread of their own. After a hang-up
//! every read of the tty returns end of file, and crossterm's reader
//! retries it forever instead of reporting it; polled on the UI's thread
//! (as `EventStream` does) that froze the UI with a CPU spinning. Here only
//! this thread spins, until [`super::terminal::HangupWatch`] has ended the
//! UI and the process exits (ADR 0002).

use std::io;

use crossterm::event::Event;
use tokio::sync::mpsc;

/// Terminal events queued for the UI; the reader waits while it is full.
/// A person types far slower than the UI reads. ADR 0002.
const INPUT_QUEUE: usize = 64;

/// Starts the reader thread; its events (or the error that ended it)
/// arrive on the returned channel, which closes when the thread ends.
pub fn spawn_reader() -> io::Result<mpsc::Receiver<io::Result<Event>>> {
    let (tx, rx) = mpsc::channel(INPUT_QUEUE);
    std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || {
            loop {
                let event = crossterm::event::read();
                let failed = event.is_err();
                if tx.blocking_send(event).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok(rx)
}
