//! The kernel sandbox (issue 39, ADR 0043) through the real
//! `LocalWorkspace` spawn: the attack table, each case refused with a
//! control showing the same action works unsandboxed, as root and as an
//! unprivileged user; real work inside workspace-write; and the probe
//! when the kernel lacks Landlock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attacks;
#[path = "../support/no_landlock.rs"]
mod no_landlock;
mod probe;
mod work;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dashfloat::tools::sandbox::SandboxSettings;
use dashfloat::tools::{LocalWorkspace, Sandbox, SpawnError, Workspace};
use tokio::io::AsyncReadExt;

/// How long one sandboxed command may take before the test fails it.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// How a command ended and what it printed.
#[derive(Debug)]
struct Ran {
    /// Its exit code; `None` when a signal ended it.
    code: Option<i32>,
    /// stdout and stderr together.
    output: String,
}

impl Ran {
    /// Whether it exited 0.
    fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// A project and a home of its own, beside a folder outside both.
struct Scene {
    _dir: tempfile::TempDir,
    /// The project: the workspace's root.
    root: PathBuf,
    /// The person's home (a fake one, with a fake key).
    home: PathBuf,
    /// Outside the project and the home.
    outside: PathBuf,
}

impl Scene {
    /// A fresh scene in a temporary folder; `~/.ssh/id_rsa` and
    /// `~/notes.txt` in its home, `outside/target` beside.
    fn new() -> Scene {
        let dir = tempfile::Builder::new()
            .prefix("sandbox-test-")
            .tempdir()
            .unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        let home = base.join("home");
        let outside = base.join("outside");
        for d in [&root, &home.join(".ssh"), &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
        std::fs::write(home.join("notes.txt"), "notes\n").unwrap();
        std::fs::write(outside.join("target"), "target\n").unwrap();
        std::fs::write(root.join("README"), "readme\n").unwrap();
        Scene {
            _dir: dir,
            root,
            home,
            outside,
        }
    }

    /// The workspace at the project, denying this home's credentials.
    fn workspace(&self) -> LocalWorkspace {
        LocalWorkspace::new(&self.root).with_sandbox(SandboxSettings::for_home(
            Some(&self.home),
            Some(&self.home.join(".config/dashfloat")),
        ))
    }

    /// The environment commands run with: a plain `PATH`, this home.
    fn env(&self) -> Vec<(OsString, OsString)> {
        vec![
            ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
            ("HOME".into(), self.home.clone().into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ]
    }
}

/// Runs `command` in `dir` through the workspace's spawn at `level` with
/// `env`, to its end (everything it started killed after).
async fn run_in(
    ws: &LocalWorkspace,
    level: Sandbox,
    dir: &Path,
    command: &str,
    env: Vec<(OsString, OsString)>,
) -> Result<Ran, SpawnError> {
    let mut spawned = ws.spawn(dir, command, env, level)?;
    let mut pipe = spawned.output;
    let reading = tokio::spawn(async move {
        let mut output = Vec::new();
        let _ = pipe.read_to_end(&mut output).await;
        output
    });
    let exit = tokio::time::timeout(COMMAND_LIMIT, spawned.shell.wait())
        .await
        .unwrap_or_else(|_| panic!("{command}: still running after {COMMAND_LIMIT:?}"));
    // What the command left running holds the pipe: killed, it lets go.
    spawned.processes.kill_all();
    let output = tokio::time::timeout(Duration::from_secs(5), reading)
        .await
        .unwrap_or_else(|_| panic!("{command}: its output never ended"))
        .unwrap();
    Ok(Ran {
        code: exit.unwrap().code,
        output: String::from_utf8_lossy(&output).into_owned(),
    })
}

/// [`run_in`] at the project's root with the scene's environment.
async fn run(scene: &Scene, level: Sandbox, command: &str) -> Ran {
    run_in(&scene.workspace(), level, &scene.root, command, scene.env())
        .await
        .unwrap_or_else(|e| panic!("{command} at {}: {e}", level.name()))
}

/// Whether this test runs as root.
fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Runs `command` (this test binary again, in a child set up otherwise),
/// prints what it wrote and requires it to succeed: its stdout and
/// stderr, for the marker the child prints when it is done.
fn child_output(command: &mut std::process::Command) -> String {
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{text}");
    assert!(output.status.success(), "{text}");
    text
}
