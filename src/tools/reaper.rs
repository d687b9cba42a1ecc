//! What a command leaves behind. The process that runs commands is a child
//! subreaper, so nothing a command starts can leave its descendants —
//! `setsid`, `setpgrp` and double forks included: an orphan comes back to
//! us instead of to init. At the end of each call (and once more before
//! dashfloat exits) the call's processes are found in `/proc`, SIGKILLed
//! and reaped. `docs/decisions/0013-command-runner.md`.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, Once};

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::{Pid, getpid};

/// Rounds of "find the call's processes, kill the ones not yet signalled"
/// at most. A round ends when every process found has been sent SIGKILL,
/// and a signalled process forks no more, so only children forked between
/// a scan and its kills need another round; the cap bounds a fork storm.
/// ADR 0013.
const SWEEP_ROUNDS_MAX: usize = 64;

/// Whether the subreaper attribute has been asked for.
static SUBREAPER: Once = Once::new();

/// The calls now running, the shells they spawned, and the servers
/// dashfloat keeps running beside them.
struct Running {
    calls: usize,
    shells: Vec<Pid>,
    /// MCP servers (ADR 0045), each the leader of a session of its own:
    /// no call's sweep takes them, or anything left in their sessions,
    /// for a call's orphans.
    kept: Vec<Pid>,
}

/// Shared by every call's sweep, to tell its own orphans from another
/// call's shell.
static RUNNING: Mutex<Running> = Mutex::new(Running {
    calls: 0,
    shells: Vec::new(),
    kept: Vec::new(),
});

fn running() -> MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// One process as `/proc/<pid>/stat` shows it.
struct Proc {
    pid: Pid,
    parent: Pid,
    session: Pid,
    zombie: bool,
}

/// A call's hold on the processes it starts: taken before the shell is
/// spawned, it kills and reaps them on [`CallProcesses::kill_all`] and
/// again when dropped, however the call ends (exit, timeout, cancel, or
/// its future dropped mid-run).
///
/// Which processes are the call's: its shell and every orphan that came
/// back to this process (our child, yet no call's shell), and everything
/// under them. While other calls run too, an orphan is this call's only if it
/// is still in the shell's session (a `setpgrp` or a double fork); one that
/// also left the session cannot be told apart and is killed when the last
/// of the overlapping calls ends. So this process must start no children
/// of its own beside the commands' shells (dashfloat starts none).
pub(super) struct CallProcesses {
    shell: Option<Pid>,
}

impl CallProcesses {
    /// Counts a call as running; makes this process a subreaper first.
    pub(super) fn start() -> Self {
        SUBREAPER.call_once(|| {
            // Linux ≥ 3.4. Without it (a seccomp filter forbidding prctl)
            // orphans go to init and only the tree under the shell is
            // found; nothing else changes.
            let _ = nix::sys::prctl::set_child_subreaper(true);
        });
        running().calls += 1;
        Self { shell: None }
    }

    /// Records the call's shell.
    pub(super) fn spawned(&mut self, shell: Pid) {
        self.shell = Some(shell);
        running().shells.push(shell);
    }

    /// Kills every process of the call and reaps those already dead. The
    /// shell is tokio's to reap; it is killed but never waited for here.
    pub(super) fn kill_all(&self) {
        // Held for the whole sweep: a call starting meanwhile waits to be
        // counted, so a shell forked while we sweep is never taken for an
        // orphan of ours.
        let running = running();
        let alone = running.calls == 1;
        let me = getpid();
        let shell = self.shell;
        let others = |pid: Pid| Some(pid) != shell && running.shells.contains(&pid);
        let kept = |p: &Proc| running.kept.contains(&p.pid) || running.kept.contains(&p.session);
        sweep(shell, |p| {
            if p.parent != me || kept(p) {
                false
            } else if Some(p.pid) == shell {
                true
            } else {
                !others(p.pid) && (alone || shell.is_some_and(|s| p.session == s))
            }
        });
    }
}

impl Drop for CallProcesses {
    fn drop(&mut self) {
        // Also reaps what `kill_all` killed and what has died since.
        self.kill_all();
        let mut running = running();
        running.calls = running.calls.saturating_sub(1);
        if let Some(shell) = self.shell {
            running.shells.retain(|&s| s != shell);
        }
    }
}

/// A process dashfloat keeps running beside the calls (an MCP server,
/// started in a session of its own): until it is dropped, no call's
/// sweep kills it or what it started in its session. It is killed when
/// dashfloat exits, as everything is ([`kill_all_commands`]).
pub(crate) struct Kept(Pid);

impl Kept {
    /// Starts a process with `spawn` (one that makes itself the leader
    /// of its own session) and keeps it out of every sweep; no sweep runs
    /// between the fork and the keeping, so none finds it unkept.
    pub(crate) fn spawn(
        spawn: impl FnOnce() -> std::io::Result<tokio::process::Child>,
    ) -> std::io::Result<(tokio::process::Child, Kept)> {
        let mut running = running();
        let child = spawn()?;
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw)
            .ok_or_else(|| std::io::Error::other("the server ended as it started"))?;
        running.kept.push(pid);
        Ok((child, Kept(pid)))
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        running().kept.retain(|&p| p != self.0);
    }
}

/// Kills every descendant of this process: the last act before exit, for
/// whatever a call's own sweep could not reach (a call still running when
/// the runtime stopped, a process that was still forking). One still dying
/// when we exit goes to init to be reaped.
pub fn kill_all_commands() {
    let me = getpid();
    sweep(None, |p| p.parent == me);
}

/// Finds the processes under the roots `is_root` picks among this
/// process's children, SIGKILLs them round by round until none is left
/// unsignalled, and reaps the zombies among our children (except
/// `shell`). Without a readable `/proc`, falls back to the shell's group.
fn sweep(shell: Option<Pid>, is_root: impl Fn(&Proc) -> bool) {
    let me = getpid();
    let mut signalled = HashSet::new();
    for _ in 0..SWEEP_ROUNDS_MAX {
        let Some(table) = process_table() else {
            if let Some(shell) = shell {
                // ESRCH (nobody left in the group) is the normal case.
                let _ = killpg(shell, Signal::SIGKILL);
            }
            return;
        };
        let mut fresh = false;
        for p in descendants(&table, &is_root) {
            if p.zombie {
                if p.parent == me && Some(p.pid) != shell {
                    let _ = waitpid(p.pid, Some(WaitPidFlag::WNOHANG));
                }
            } else if signalled.insert(p.pid) {
                // ESRCH: it died since the scan.
                let _ = kill(p.pid, Signal::SIGKILL);
                fresh = true;
            }
        }
        if !fresh {
            return;
        }
    }
}

/// The roots and everything under them.
fn descendants(table: &[Proc], is_root: impl Fn(&Proc) -> bool) -> Vec<&Proc> {
    let mut children: HashMap<Pid, Vec<&Proc>> = HashMap::new();
    for p in table {
        children.entry(p.parent).or_default().push(p);
    }
    let mut found: Vec<&Proc> = table.iter().filter(|p| is_root(p)).collect();
    let mut next = 0;
    while let Some(p) = found.get(next) {
        next += 1;
        if let Some(kids) = children.get(&p.pid) {
            found.extend(kids.iter().copied());
        }
    }
    found
}

/// Every process `/proc` lists; `None` when `/proc` cannot be read.
fn process_table() -> Option<Vec<Proc>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name();
                let pid = name.to_str()?.parse::<i32>().ok()?;
                // Gone since the listing: skipped.
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                parse_stat(Pid::from_raw(pid), &stat)
            })
            .collect(),
    )
}

/// State, parent and session from a `stat` line. The command name is in
/// parentheses and may hold spaces and parentheses itself, so the fields
/// are read after the last `)`.
fn parse_stat(pid: Pid, stat: &str) -> Option<Proc> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let _group = fields.next()?;
    let session = fields.next()?.parse().ok()?;
    Some(Proc {
        pid,
        parent: Pid::from_raw(parent),
        session: Pid::from_raw(session),
        zombie: state == "Z",
    })
}
