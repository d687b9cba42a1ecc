//! The cost of entering the kernel sandbox per command (issue 39, ADR
//! 0043): `true` run through the workspace's spawn unsandboxed, at
//! read-only and at workspace-write, the levels in turn in one run; each
//! level's mean, median and minimum, its ratio to the unsandboxed median,
//! and what entering it adds, in wall-clock time and in processor time
//! (this process's and the command's, which a busy machine does not
//! inflate). The target is under 2 ms a command. Plain `main`,
//! prints a table. Run with `cargo bench --bench sandbox`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use dashfloat::tools::sandbox::{SandboxSettings, support};
use dashfloat::tools::{LocalWorkspace, Sandbox, Workspace};
use tokio::io::AsyncReadExt;

/// Runs per level.
const RUNS: u32 = 200;

/// Runs `true` once at `level` to its end, everything it left killed.
async fn once(ws: &LocalWorkspace, root: &Path, env: &[(OsString, OsString)], level: Sandbox) {
    let mut spawned = ws.spawn(root, "true", env.to_vec(), level).unwrap();
    let mut sink = Vec::new();
    spawned.output.read_to_end(&mut sink).await.unwrap();
    let exit = spawned.shell.wait().await.unwrap();
    assert_eq!(exit.code, Some(0), "true at {}", level.name());
    spawned.processes.kill_all();
}

/// The processor time this process and its waited-for children used,
/// user and system: what a command costs whatever else runs.
#[allow(unsafe_code)]
fn cpu_time() -> Duration {
    let mut total = Duration::ZERO;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage fills the zeroed struct it is given, which
        // lives on this frame.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        for t in [usage.ru_utime, usage.ru_stime] {
            total += Duration::from_secs(t.tv_sec.unsigned_abs())
                + Duration::from_micros(t.tv_usec.unsigned_abs());
        }
    }
    total
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let support = support();
    println!(
        "kernel: Landlock {:?}, seccomp {:?}, namespaces {:?}",
        support.landlock, support.seccomp, support.namespaces
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    // The person's own home and PATH: the read-only level grants the
    // toolchains on it, workspace-write lists the home around its
    // credentials, as they would for a real command.
    let ws = LocalWorkspace::new(&root).with_sandbox(SandboxSettings::from_env());
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let levels: Vec<Sandbox> = [
        Sandbox::Unconfined,
        Sandbox::ReadOnly,
        Sandbox::WorkspaceWrite,
    ]
    .into_iter()
    .filter(|&level| {
        let available = level != Sandbox::WorkspaceWrite || support.workspace_write().is_ok();
        if !available {
            println!("{}: unavailable here", level.name());
        }
        available
    })
    .collect();
    // Each level's rules made once (as a session does), then the levels
    // taken in turn run after run, so that a busy machine weighs on each
    // alike.
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(RUNS as usize); levels.len()];
    let mut cpu = vec![Duration::ZERO; levels.len()];
    let mut first = Vec::with_capacity(levels.len());
    for &level in &levels {
        let start = Instant::now();
        rt.block_on(once(&ws, &root, &env, level));
        first.push(start.elapsed());
    }
    for _ in 0..RUNS {
        for (at, &level) in levels.iter().enumerate() {
            let (start, used) = (Instant::now(), cpu_time());
            rt.block_on(once(&ws, &root, &env, level));
            times[at].push(start.elapsed());
            cpu[at] += cpu_time().saturating_sub(used);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = |t: &mut Vec<Duration>| {
        t.sort();
        t[t.len() / 2]
    };
    let mut base = None;
    println!(
        "| level | runs | mean ms | median ms | min ms | × unsandboxed (median) | added ms (median) | CPU ms | added CPU ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let base_cpu = cpu[0] / RUNS;
    for (at, level) in levels.iter().enumerate() {
        let t = &mut times[at];
        let mean = t.iter().sum::<Duration>() / RUNS;
        let med = median(t);
        let min = t[0];
        let base = *base.get_or_insert(med);
        let cpu = cpu[at] / RUNS;
        println!(
            "| {} | {RUNS} | {:.3} | {:.3} | {:.3} | {:.2} | {:+.3} | {:.3} | {:+.3} |",
            level.name(),
            ms(mean),
            ms(med),
            ms(min),
            med.as_secs_f64() / base.as_secs_f64(),
            ms(med) - ms(base),
            ms(cpu),
            ms(cpu) - ms(base_cpu),
        );
    }
    for (level, took) in levels.iter().zip(first) {
        println!(
            "first command at {} (its rules made): {:.3} ms",
            level.name(),
            ms(took)
        );
    }
}
