//! The reading side of [`Workspace::probe`](super::Workspace::probe): a
//! started program's output, handed on piece by piece, and its errors,
//! kept up to [`PROBE_ERRORS_MAX_BYTES`], read together until both end,
//! then its exit, all within one deadline. On any failure the caller
//! kills what the program started.

use std::io::Read;
use std::os::fd::AsFd;
use std::process::Child;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::workspace::{PROBE_ERRORS_MAX_BYTES, ProbeError, Probed};

/// How often the exit is looked for once the output has ended.
const EXIT_POLL: Duration = Duration::from_millis(2);

/// The most read from a pipe at once.
const CHUNK_BYTES: usize = 64 * 1024;

/// Reads `child`'s piped output into `output` and its errors until both
/// end, then waits for it to exit, all before `deadline`.
pub(super) fn collect(
    child: &mut Child,
    deadline: Instant,
    output: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<Probed, ProbeError> {
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ProbeError::Start(std::io::Error::other(
            "its output was not piped",
        )));
    };
    let (mut out, mut err) = (Pipe::new(out), Pipe::new(err));
    let mut errors = Vec::new();
    let mut chunk = vec![0u8; CHUNK_BYTES];
    while out.open || err.open {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::TimedOut);
        }
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let (out_ready, err_ready) = {
            let mut fds: Vec<PollFd<'_>> = [out.pollable(), err.pollable()]
                .into_iter()
                .flatten()
                .collect();
            match poll(&mut fds, timeout) {
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(ProbeError::Read(e.into())),
                Ok(_) => {}
            }
            let mut ready = fds.iter().map(|fd| fd.any().unwrap_or(true));
            let out_ready = out.open && ready.next().unwrap_or(false);
            (out_ready, err.open && ready.next().unwrap_or(false))
        };
        if out_ready
            && let Some(piece) = out.read(&mut chunk)?
            && !output(piece)
        {
            return Err(ProbeError::Stopped);
        }
        if err_ready && let Some(piece) = err.read(&mut chunk)? {
            if errors.len() + piece.len() > PROBE_ERRORS_MAX_BYTES {
                return Err(ProbeError::TooLong);
            }
            errors.extend_from_slice(piece);
        }
    }
    let status = loop {
        if let Some(status) = child.try_wait().map_err(ProbeError::Read)? {
            break status;
        }
        if Instant::now() >= deadline {
            return Err(ProbeError::TimedOut);
        }
        std::thread::sleep(EXIT_POLL);
    };
    Ok(Probed {
        success: status.success(),
        stderr: errors,
    })
}

/// One of the program's pipes, and whether it is still open.
struct Pipe<R> {
    reader: R,
    open: bool,
}

impl<R: Read + AsFd> Pipe<R> {
    fn new(reader: R) -> Self {
        Pipe { reader, open: true }
    }

    /// What to wait on while it is open.
    fn pollable(&self) -> Option<PollFd<'_>> {
        self.open
            .then(|| PollFd::new(self.reader.as_fd(), PollFlags::POLLIN))
    }

    /// One read of what is ready into `chunk`: the bytes read, or `None`
    /// at the end (the pipe is then closed) or when interrupted.
    fn read<'c>(&mut self, chunk: &'c mut [u8]) -> Result<Option<&'c [u8]>, ProbeError> {
        let n = match self.reader.read(chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(None),
            read => read.map_err(ProbeError::Read)?,
        };
        if n == 0 {
            self.open = false;
            return Ok(None);
        }
        Ok(Some(&chunk[..n]))
    }
}
