//! The reading side of [`Workspace::probe`](super::Workspace::probe): a
//! started program's output and errors, read together until both end,
//! then its exit, all within one deadline and each stream within
//! [`PROBE_OUTPUT_MAX_BYTES`]. On any failure the caller kills what the
//! program started.

use std::io::Read;
use std::os::fd::AsFd;
use std::process::Child;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::workspace::{PROBE_OUTPUT_MAX_BYTES, ProbeError, Probed};

/// How often the exit is looked for once the output has ended.
const EXIT_POLL: Duration = Duration::from_millis(2);

/// Reads `child`'s piped output and errors until both end, then waits for
/// it to exit, all before `deadline`.
pub(super) fn collect(child: &mut Child, deadline: Instant) -> Result<Probed, ProbeError> {
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ProbeError::Start(std::io::Error::other(
            "its output was not piped",
        )));
    };
    let (mut out, mut err) = (Stream::new(out), Stream::new(err));
    while out.open || err.open {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::TimedOut);
        }
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let (out_ready, err_ready) = {
            let mut fds = Vec::with_capacity(2);
            for stream in [out.pollable(), err.pollable()].into_iter().flatten() {
                fds.push(stream);
            }
            match poll(&mut fds, timeout) {
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(ProbeError::Read(e.into())),
                Ok(_) => {}
            }
            let mut ready = fds.iter().map(|fd| fd.any().unwrap_or(true));
            let out_ready = out.open && ready.next().unwrap_or(false);
            (out_ready, err.open && ready.next().unwrap_or(false))
        };
        if out_ready {
            out.read()?;
        }
        if err_ready {
            err.read()?;
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
        stdout: out.bytes,
        stderr: err.bytes,
    })
}

/// One of the program's pipes and what it has given.
struct Stream<R> {
    reader: R,
    bytes: Vec<u8>,
    open: bool,
}

impl<R: Read + AsFd> Stream<R> {
    fn new(reader: R) -> Self {
        Stream {
            reader,
            bytes: Vec::new(),
            open: true,
        }
    }

    /// What to wait on while it is open.
    fn pollable(&self) -> Option<PollFd<'_>> {
        self.open
            .then(|| PollFd::new(self.reader.as_fd(), PollFlags::POLLIN))
    }

    /// One read of what is ready: the end, or more bytes within the bound.
    fn read(&mut self) -> Result<(), ProbeError> {
        let mut chunk = [0u8; 8192];
        let n = match self.reader.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
            read => read.map_err(ProbeError::Read)?,
        };
        if n == 0 {
            self.open = false;
        } else if self.bytes.len() + n > PROBE_OUTPUT_MAX_BYTES {
            return Err(ProbeError::TooLong);
        } else {
            self.bytes.extend_from_slice(&chunk[..n]);
        }
        Ok(())
    }
}
