//! Which program a stage's command word runs: the first executable of that
//! name on the commands' `PATH`, as `/bin/sh` finds it. One found in the
//! project — through a `PATH` holding `.`, an empty or relative entry, or
//! a project folder — is the project's own code, which never runs
//! unasked. ADR 0025.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::Refusal;
use super::paths::Place;
use crate::tools::Workspace;

/// The search path `/bin/sh` (dash) uses when `PATH` is unset.
const SHELL_DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Commands the shell runs itself, whatever `PATH` holds.
const SHELL_BUILTINS: &[&str] = &["echo", "pwd"];

/// Where a command word leads on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Found {
    /// An absolute `PATH` entry holds it: its path there.
    Absolute(PathBuf),
    /// A relative (or empty) `PATH` entry holds it: its path from the
    /// stage's directory.
    Relative(PathBuf),
}

/// The program `/bin/sh` in `dir` runs for `name` with `env`'s `PATH`:
/// the first entry holding an executable regular file of that name;
/// `None` when none does (the command then fails to start).
pub(super) fn find(
    ws: &dyn Workspace,
    dir: &Path,
    name: &str,
    env: &[(OsString, OsString)],
) -> Option<Found> {
    let path = env
        .iter()
        .rev()
        .find(|(n, _)| n == "PATH")
        .map_or(OsStr::new(SHELL_DEFAULT_PATH), |(_, v)| v.as_os_str());
    path.as_bytes().split(|&b| b == b':').find_map(|entry| {
        let entry = Path::new(OsStr::from_bytes(entry));
        let candidate = dir.join(entry).join(name);
        let executable = ws
            .stat(&candidate)
            .is_ok_and(|meta| meta.is_file() && meta.mode & 0o111 != 0);
        executable.then(|| {
            if entry.is_absolute() {
                Found::Absolute(candidate)
            } else {
                Found::Relative(candidate)
            }
        })
    })
}

/// Refuses a stage whose command word would run a program of the
/// project's, or one found through a relative `PATH` entry.
pub(super) fn check(
    place: &Place,
    name: &str,
    env: &[(OsString, OsString)],
) -> Result<(), Refusal> {
    if SHELL_BUILTINS.contains(&name) {
        return Ok(());
    }
    let ws = place.ws;
    let refused = |path: &Path, why: &'static str| Refusal::Program {
        cmd: name.to_owned(),
        path: path.display().to_string(),
        why,
    };
    match find(ws, &place.dir, name, env) {
        None => Ok(()),
        Some(Found::Relative(path)) => Err(refused(&path, "found through a relative PATH entry")),
        Some(Found::Absolute(path)) if in_project(ws, &path) => {
            Err(refused(&path, "a program in the project"))
        }
        Some(Found::Absolute(_)) => Ok(()),
    }
}

/// Whether `path`, a program found on `PATH`, lies in the project (where
/// a link leads, or as named when it leads nowhere).
pub(super) fn in_project(ws: &dyn Workspace, path: &Path) -> bool {
    ws.real_path(ws.root()).is_ok_and(|root| {
        ws.real_path(path)
            .map_or(path.starts_with(&root), |real| real.starts_with(&root))
    })
}
