//! End to end: the real `dashfloat` binary in a pseudo-terminal against
//! the scripted server, and (ignored unless `scripts/test` runs them) the
//! agent and the binary against the real local model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod allow_list;
mod auto;
mod cloned;
mod daily;
mod exec;
mod llm;
mod mcp_cli;
mod prime;
mod pty;
mod secrets;
mod sessions;
mod slash;

use std::path::Path;

use support::pty::PtySession;

/// Starts `program args` (dashfloat, or a wrapper that runs it) on a
/// 100×30 pty in `cwd`, with `home` as its HOME and config directory so no
/// personal config leaks in, colours off, and `env` on top.
fn spawn_private(
    program: &Path,
    args: &[&str],
    home: &Path,
    cwd: &Path,
    env: &[(&str, &str)],
) -> PtySession {
    let home = home.to_str().unwrap();
    // A configured window: the scripted servers answer chat requests only,
    // so dashfloat must not ask them for theirs (ADR 0020).
    let mut vars = vec![
        ("HOME", home),
        ("XDG_CONFIG_HOME", home),
        ("NO_COLOR", ""),
        ("DASHFLOAT_CONTEXT_WINDOW", "128000"),
    ];
    vars.extend_from_slice(env);
    PtySession::spawn(program, args, &vars, cwd, 100, 30)
}
