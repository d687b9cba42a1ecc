//! The git the commands will run, as the analyser asks it questions:
//! through [`Workspace::probe`] (its own session, bounded in time, swept
//! like a command), with the commands' environment, and never in a way
//! that starts a pager or a file system monitor. ADR 0025.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::git_repo::GitRefusal;
use super::paths::Place;
use super::program::{self, Found};
use crate::tools::{PROBE_TIMEOUT, ProbeError, Probed, Workspace};

/// Options before every git subcommand the analyser runs: no pager, and
/// no file system monitor, which reading the index would start.
const GIT_QUIET: [&str; 3] = ["--no-pager", "-c", "core.fsmonitor=false"];

/// The most git may print in answer to one of the analyser's questions
/// (1 MiB; a person's configuration is a few KiB), unless the answer is
/// read piece by piece ([`Git::stream`]).
const GIT_ANSWER_MAX_BYTES: usize = 1024 * 1024;

/// The git a stage would run, with the environment it would run with.
pub(super) struct Git<'a> {
    ws: &'a dyn Workspace,
    program: PathBuf,
    env: &'a [(OsString, OsString)],
    /// When every answer must be in by.
    deadline: Instant,
}

impl<'a> Git<'a> {
    /// The git `/bin/sh` in `dir` finds on `env`'s `PATH`, when an
    /// absolute entry outside the project holds it: the project's own
    /// program never runs unasked, not even to answer a question.
    pub(super) fn find(
        ws: &'a dyn Workspace,
        dir: &Path,
        env: &'a [(OsString, OsString)],
        deadline: Instant,
    ) -> Option<Git<'a>> {
        match program::find(ws, dir, "git", env)? {
            Found::Absolute(program) if !program::in_project(ws, &program) => Some(Git {
                ws,
                program,
                env,
                deadline,
            }),
            Found::Absolute(_) | Found::Relative(_) => None,
        }
    }

    /// The git a stage at `place` would run; the program check refused
    /// one the project holds before this.
    pub(super) fn of(
        place: &Place<'a>,
        env: &'a [(OsString, OsString)],
    ) -> Result<Git<'a>, GitRefusal> {
        Git::find(place.ws, &place.dir, env, place.line.deadline).ok_or(GitRefusal::NoGit)
    }

    /// The workspace git runs in.
    pub(super) fn workspace(&self) -> &'a dyn Workspace {
        self.ws
    }

    /// What `git args` in `dir` printed, when it succeeded.
    pub(super) fn answer(&self, dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitRefusal> {
        let (ended, printed) = self.run(dir, args)?;
        if ended.success {
            Ok(printed)
        } else {
            Err(GitRefusal::Refused(ended.first_error_line()))
        }
    }

    /// Runs `git args` in `dir`: how it ended, and what it printed.
    pub(super) fn run(&self, dir: &Path, args: &[&str]) -> Result<(Probed, Vec<u8>), GitRefusal> {
        let mut printed = Vec::new();
        let ended = self.stream(dir, args, &mut |piece| {
            printed.extend_from_slice(piece);
            printed.len() <= GIT_ANSWER_MAX_BYTES
        });
        match ended {
            Ok(ended) => Ok((ended, printed)),
            Err(ProbeError::Stopped) => Err(GitRefusal::Unasked(format!(
                "git printed more than {} KiB",
                GIT_ANSWER_MAX_BYTES / 1024
            ))),
            Err(e) => Err(GitRefusal::Unasked(e.to_string())),
        }
    }

    /// Runs `git args` in `dir`, handing what it prints to `output` piece
    /// by piece.
    pub(super) fn stream(
        &self,
        dir: &Path,
        args: &[&str],
        output: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<Probed, ProbeError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::TimedOut);
        }
        let args: Vec<&str> = GIT_QUIET.iter().chain(args).copied().collect();
        self.ws.probe(
            dir,
            &self.program,
            &args,
            self.env,
            left.min(PROBE_TIMEOUT),
            output,
        )
    }
}
