//! Start-up, before anything else runs: the API key and the other
//! credentials must not stay in dashfloat's process image, where any
//! command it runs could read them from `/proc/$PPID/environ` (the
//! environment as the process was started, which `remove_var` does not
//! touch) or `/proc/$PPID/cmdline` (`--header` values).
//!
//! When the environment holds a credential, or argv a `--header` (or a
//! `--base-url` with credentials), dashfloat re-executes itself
//! (`/proc/self/exe`, same pid) without them, handing them over in an
//! in-memory file (memfd) whose descriptor number travels in
//! [`HANDOVER_FD_VAR`]. The new image reads it, closes it at once and keeps
//! the values in memory only. It then marks itself undumpable, so another
//! process of the same (non-root) user cannot read its memory or files
//! under `/proc` either. ADR 0005.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::process::Command;

use clap::Parser;
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::config::Cli;
use crate::secret::{Secret, has_userinfo};
use crate::tools::is_secret_var;

/// The variable that tells the re-executed dashfloat which descriptor
/// holds the handover. It holds only a number.
pub const HANDOVER_FD_VAR: &str = "DASHFLOAT_HANDOVER_FD";
/// The largest handover read: four times Linux's usual `ARG_MAX` (2 MiB),
/// which bounds the environment and argv it is taken from. ADR 0005.
const HANDOVER_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// The memfd's name, as `/proc/self/fd/N` shows it (`/memfd:NAME`).
const MEMFD_NAME: &str = "dashfloat-handover";
/// The program that re-executes: this very binary, even if its file was
/// replaced or removed since it started.
const SELF_EXE: &str = "/proc/self/exe";
/// The environment variable behind `--base-url`, the one flag whose
/// variable may hold a credential (a URL with userinfo).
const BASE_URL_VAR: &str = "OPENAI_BASE_URL";

/// Why the credentials could not be kept out of the process image, or
/// could not be taken back. Each becomes a chat entry; dashfloat runs on.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The in-memory file could not be made or filled.
    #[error("cannot write the hand-over file: {0}")]
    Write(std::io::Error),
    /// The handover would exceed [`HANDOVER_MAX_BYTES`].
    #[error("the credentials to hand over exceed {HANDOVER_MAX_BYTES} bytes")]
    TooLarge,
    /// `execve` of `/proc/self/exe` failed (no `/proc`, a seccomp policy...).
    #[error("cannot re-execute {SELF_EXE}: {0}")]
    Exec(std::io::Error),
    /// [`HANDOVER_FD_VAR`] does not name our hand-over file.
    #[error("{HANDOVER_FD_VAR}={0:?} does not name dashfloat's hand-over file")]
    NotHandover(String),
    /// The hand-over file could not be read.
    #[error("cannot read the hand-over file: {0}")]
    Read(std::io::Error),
    /// The hand-over file is not in the format this binary writes.
    #[error("the hand-over file is malformed")]
    Malformed,
    /// `PR_SET_DUMPABLE` failed: same-user processes may read our memory.
    #[error("cannot make the process undumpable: {0}")]
    Undumpable(nix::Error),
}

/// What start-up took out of the process image, kept in memory, and what
/// went wrong doing so.
#[derive(Debug, Default)]
pub struct Launch {
    /// Credentials removed from the environment, with their values.
    vars: Vec<(OsString, Secret<OsString>)>,
    /// Arguments removed from argv (`--header` and its value...), in order.
    args: Vec<Secret<OsString>>,
    /// What could not be protected, for the chat.
    pub problems: Vec<LaunchError>,
}

impl Launch {
    /// Hides the credentials, then returns what was hidden. Call it first
    /// in `main`, while the process has one thread. If this process was
    /// started by the person and holds credentials, it re-executes itself
    /// and does not return (unless that fails: then it carries on as it is
    /// and says so in `problems`). `key_var` names the configured key
    /// variable; it is only called in that first process.
    pub fn conceal(key_var: impl FnOnce() -> String) -> Launch {
        let taken = match std::env::var_os(HANDOVER_FD_VAR) {
            Some(fd) => receive(&fd),
            None => reexec_without_credentials(&key_var()).map(|()| Launch::default()),
        };
        let mut launch = taken.unwrap_or_else(|e| Launch {
            problems: vec![e],
            ..Launch::default()
        });
        if let Err(e) = nix::sys::prctl::set_dumpable(false) {
            launch.problems.push(LaunchError::Undumpable(e));
        }
        launch
    }

    /// The command line as the person gave it: argv with the arguments
    /// handed over put back right after the program's name, where they
    /// belong to dashfloat itself and not to a subcommand (and
    /// `--base-url` from its variable when that was handed over instead).
    pub fn cli(&self) -> Cli {
        let mut given = std::env::args_os();
        let argv = given
            .next()
            .into_iter()
            .chain(self.args.iter().map(|a| a.expose().clone()))
            .chain(given);
        let mut cli = Cli::parse_from(argv);
        if cli.base_url.is_none() {
            cli.base_url = self.var(BASE_URL_VAR);
        }
        cli
    }

    /// A variable as the person's environment had it: handed over, or
    /// still in the environment. `None` when unset or not UTF-8.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name).and_then(|v| v.into_string().ok())
    }

    /// [`Launch::var`] for values that need not be UTF-8.
    fn var_os(&self, name: &str) -> Option<OsString> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.expose().clone())
            .or_else(|| std::env::var_os(name))
    }

    /// The variables named in `names` that are set, with their values, for
    /// commands (`[exec] pass_env`).
    pub fn pass_env(&self, names: &[String]) -> Vec<(OsString, Secret<OsString>)> {
        names
            .iter()
            .filter_map(|name| Some((OsString::from(name), Secret::new(self.var_os(name)?))))
            .collect()
    }
}

/// Re-executes this binary without the credentials in its environment and
/// argv, when there are any. Returns `Ok` when there were none; otherwise
/// returns only on failure.
fn reexec_without_credentials(key_var: &str) -> Result<(), LaunchError> {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, value)| is_secret_var(name, value) || name == key_var)
        .collect();
    let mut argv = std::env::args_os();
    let argv0 = argv.next().unwrap_or_else(|| OsString::from("dashfloat"));
    let (kept, removed) = split_args(argv.collect());
    if vars.is_empty() && removed.is_empty() {
        return Ok(());
    }
    let bundle = encode(&vars, &removed);
    if bundle.len() as u64 > HANDOVER_MAX_BYTES {
        return Err(LaunchError::TooLarge);
    }
    // No MFD_CLOEXEC: the descriptor must survive the exec.
    let mut file = File::from(
        memfd_create(MEMFD_NAME, MFdFlags::empty())
            .map_err(|e| LaunchError::Write(std::io::Error::from(e)))?,
    );
    file.write_all(&bundle).map_err(LaunchError::Write)?;
    let mut command = Command::new(SELF_EXE);
    command
        .arg0(&argv0)
        .args(&kept)
        .env(HANDOVER_FD_VAR, file.as_raw_fd().to_string());
    for (name, _) in &vars {
        command.env_remove(name);
    }
    // Only returns if the exec failed; `file` is closed on the way out.
    Err(LaunchError::Exec(command.exec()))
}

/// Splits argv (without argv0) into what may stay visible and what must
/// not: each `--header` with its value, and a `--base-url` that carries
/// credentials. Both spellings, `--flag value` and `--flag=value`.
/// Everything after `--` is no flag of dashfloat's (it is the server's
/// command line of `dashfloat mcp add NAME -- COMMAND ARGS`) and stays
/// where it is.
fn split_args(args: Vec<OsString>) -> (Vec<OsString>, Vec<OsString>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            kept.push(arg);
            kept.extend(args);
            break;
        }
        let text = arg.to_string_lossy();
        if let Some((flag, value)) = text.split_once('=')
            && hides(flag, value)
        {
            removed.push(arg);
        } else if matches!(text.as_ref(), "--header" | "--base-url") {
            let value = args.next();
            let hide = value
                .as_ref()
                .is_some_and(|v| hides(&text, &v.to_string_lossy()));
            let pieces = std::iter::once(arg).chain(value);
            if hide {
                removed.extend(pieces);
            } else {
                kept.extend(pieces);
            }
        } else {
            kept.push(arg);
        }
    }
    (kept, removed)
}

/// Whether `flag value` must not stay in argv.
fn hides(flag: &str, value: &str) -> bool {
    match flag {
        "--header" => true,
        "--base-url" => has_userinfo(value),
        _ => false,
    }
}

/// The hand-over format: one NUL-terminated record each, `V` NAME `=`
/// VALUE for a variable and `A` ARG for an argument. Neither the
/// environment nor argv can hold a NUL, and a name cannot hold `=`.
fn encode(vars: &[(OsString, OsString)], args: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in vars {
        out.push(b'V');
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    for arg in args {
        out.push(b'A');
        out.extend_from_slice(arg.as_bytes());
        out.push(0);
    }
    out
}

/// Reads the handover named by `fd_var` and closes its descriptor, so no
/// command inherits it.
fn receive(fd_var: &OsStr) -> Result<Launch, LaunchError> {
    let fd_text = fd_var.to_string_lossy().into_owned();
    let fd: RawFd = fd_text
        .parse()
        .map_err(|_| LaunchError::NotHandover(fd_text.clone()))?;
    let link = format!("/proc/self/fd/{fd}");
    let target = std::fs::read_link(&link).map_err(LaunchError::Read)?;
    if !target
        .as_os_str()
        .as_bytes()
        .starts_with(format!("/memfd:{MEMFD_NAME}").as_bytes())
    {
        return Err(LaunchError::NotHandover(fd_text));
    }
    // A fresh open of the same memfd (offset 0); the inherited descriptor
    // is closed at once.
    let file = File::open(&link).map_err(LaunchError::Read);
    let _ = nix::unistd::close(fd);
    let mut bundle = Vec::new();
    file?
        .take(HANDOVER_MAX_BYTES + 1)
        .read_to_end(&mut bundle)
        .map_err(LaunchError::Read)?;
    if bundle.len() as u64 > HANDOVER_MAX_BYTES {
        return Err(LaunchError::TooLarge);
    }
    let launch = decode(bundle)?;
    name_the_process();
    Ok(launch)
}

fn decode(bundle: Vec<u8>) -> Result<Launch, LaunchError> {
    let mut launch = Launch::default();
    let Some(body) = bundle.strip_suffix(&[0]) else {
        return if bundle.is_empty() {
            Ok(launch)
        } else {
            Err(LaunchError::Malformed)
        };
    };
    for record in body.split(|b| *b == 0) {
        match record.split_first() {
            Some((b'V', var)) => {
                let at = var
                    .iter()
                    .position(|b| *b == b'=')
                    .ok_or(LaunchError::Malformed)?;
                launch.vars.push((
                    OsString::from_vec(var[..at].to_vec()),
                    Secret::new(OsString::from_vec(var[at + 1..].to_vec())),
                ));
            }
            Some((b'A', arg)) => launch
                .args
                .push(Secret::new(OsString::from_vec(arg.to_vec()))),
            _ => return Err(LaunchError::Malformed),
        }
    }
    Ok(launch)
}

/// Executing `/proc/self/exe` names the process `exe` in `ps` and
/// `pgrep`; give it back its binary's name. Cosmetic, so failures pass.
fn name_the_process() {
    let name = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.as_bytes().to_vec()))
        .and_then(|name| CString::new(name).ok());
    if let Some(name) = name {
        let _ = nix::sys::prctl::set_name(&name);
    }
}
