//! End to end: the real `dashfloat` binary in a pseudo-terminal, talking to
//! the scripted server. A person's view: type, see the reply, quit, and get
//! the terminal back as it was.

use std::path::Path;
use std::time::Duration;

use crate::spawn_private;
use crate::support;
use support::dashfloat_bin;
use support::pty::PtySession;
use support::server::{Reply, ScriptedServer};

const WAIT: Duration = Duration::from_secs(20);

/// Starts dashfloat in `dir` against `base_url`, with a private HOME so no
/// personal config leaks in.
fn spawn(dir: &Path, base_url: &str) -> PtySession {
    spawn_as(&dashfloat_bin(), &[], dir, base_url)
}

/// Starts `program wrapper_args.. --base-url ..` the way [`spawn`] starts
/// dashfloat (the program being dashfloat or a wrapper that runs it).
fn spawn_as(program: &Path, wrapper_args: &[&str], dir: &Path, base_url: &str) -> PtySession {
    let mut args = wrapper_args.to_vec();
    args.extend(["--base-url", base_url, "--model", "scripted"]);
    spawn_private(program, &args, dir, dir, &[("OPENAI_API_KEY", "sk-e2e")])
}

fn assert_terminal_restored(session: &PtySession) {
    assert!(!session.alternate_screen(), "still on the alternate screen");
    for (seq, what) in [
        (&b"\x1b[?1049l"[..], "leave alternate screen"),
        (b"\x1b[?2004l", "bracketed paste off"),
        (b"\x1b[?1000l", "mouse capture off"),
    ] {
        assert!(session.raw_contains(seq), "never sent: {what}");
    }
    assert_eq!(session.termios_is_cooked(), Some(true), "raw mode left on");
}

#[test]
fn type_a_prompt_see_the_reply_quit_and_get_the_terminal_back() {
    let server = ScriptedServer::start_blocking(vec![Reply::text(&[
        "Hello ",
        "from the **scripted** model.",
    ])]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    assert!(session.alternate_screen());

    session.send(b"say hello");
    session.wait_for("say hello", WAIT).unwrap();
    session.send(b"\r");
    session.wait_for("from the scripted model.", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();

    let req = &server.requests()[0];
    assert_eq!(req.header("authorization"), Some("Bearer sk-e2e"));
    assert_eq!(req.body["messages"][1]["content"], "say hello");

    session.send(b"\x04");
    let status = session.wait_exit(WAIT).expect("dashfloat did not exit");
    assert!(status.success());
    assert_terminal_restored(&session);
    // The transcript was printed to the normal screen for the scrollback.
    let screen = session.screen_text();
    assert!(screen.contains("› say hello"), "{screen}");
    assert!(
        screen.contains("Hello from the **scripted** model."),
        "{screen}"
    );
}

#[test]
fn esc_interrupts_a_streaming_reply_and_the_next_prompt_works() {
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["partial answer"]).hang_after(2),
        Reply::text(&["second reply"]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"first\r");
    session.wait_for("partial answer", WAIT).unwrap();
    session.wait_for("streaming", WAIT).unwrap();
    session.send(b"\x1b");
    session.wait_for("[interrupted]", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"again\r");
    session.wait_for("second reply", WAIT).unwrap();
    session.send(b"\x03");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
}

#[test]
fn a_refused_connection_is_explained_and_ctrl_c_quits() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &format!("http://127.0.0.1:{port}/v1"));
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"anyone there?\r");
    session.wait_for("connection refused", WAIT).unwrap();
    session.send(b"\x03");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
}

fn signal_restores_the_terminal(signal: nix::sys::signal::Signal) {
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    let pid = session.pid().unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    session
        .wait_exit(WAIT)
        .unwrap_or_else(|| panic!("no exit after {signal}"));
    assert_terminal_restored(&session);
}

/// A command that starts two escapees — one in a session of its own, one
/// in a group of its own — writes their pids to `pid2` and `pid3` and its
/// shell's to `pid` (last), and waits.
fn escaping_reply() -> Reply {
    let command = format!(
        "setsid sleep 313 & {}; echo $! > pid2; perl -e 'setpgrp; sleep 313' & {}; echo $! > pid3; echo $$ > pid; sleep 313",
        support::until_left("sid"),
        support::until_left("pg")
    );
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::tool_call("x1", "execute_command", &[&args])
}

/// Approves the escaping command and returns the pids of its shell and
/// its two escapees once all three run.
fn run_escapees(session: &mut PtySession, dir: &Path) -> Vec<i32> {
    session.send(b"start the escapees\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.send(b"y");
    let shell = support::wait_for_pid(&dir.join("pid"), WAIT);
    let escapees = ["pid2", "pid3"].map(|f| support::wait_for_pid(&dir.join(f), WAIT));
    for pid in escapees {
        assert!(support::process_alive(pid), "escapee {pid} is not running");
    }
    vec![shell, escapees[0], escapees[1]]
}

fn a_signal_during_a_command_with_escapees_quits_cleanly(signal: nix::sys::signal::Signal) {
    let server = ScriptedServer::start_blocking(vec![escaping_reply()]);
    let (mut session, dir) = spawn_in_project(&server);
    let pids = run_escapees(&mut session, dir.path());
    let pid = session.pid().unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    session
        .wait_exit(WAIT)
        .unwrap_or_else(|| panic!("no exit after {signal}"));
    assert_terminal_restored(&session);
    support::assert_all_gone(&pids, WAIT);
}

#[test]
fn sigint_during_a_command_restores_the_terminal_and_leaves_no_process() {
    a_signal_during_a_command_with_escapees_quits_cleanly(nix::sys::signal::Signal::SIGINT);
}

#[test]
fn sigquit_during_a_command_restores_the_terminal_and_leaves_no_process() {
    a_signal_during_a_command_with_escapees_quits_cleanly(nix::sys::signal::Signal::SIGQUIT);
}

#[test]
fn sigterm_during_a_command_restores_the_terminal_and_leaves_no_process() {
    a_signal_during_a_command_with_escapees_quits_cleanly(nix::sys::signal::Signal::SIGTERM);
}

/// Kills a process when dropped, so a test that fails does not leave a
/// spinning dashfloat behind.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// The one child process of `parent`.
fn only_child(parent: i32) -> i32 {
    let parent = parent.to_string();
    let children: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit(')').next().unwrap().split_whitespace().nth(1) == Some(parent.as_str())
            })
        })
        .collect();
    assert_eq!(children.len(), 1, "children of {parent}: {children:?}");
    children[0]
}

/// Starts dashfloat under a shell that leads the pty's session and ignores
/// SIGHUP, so when the terminal goes dashfloat (its child in the foreground
/// group) gets no signal, only end of file on every read. Returns the
/// session and dashfloat's pid, killed when the guard drops.
fn spawn_without_sighup(dir: &Path, base_url: &str) -> (PtySession, KillOnDrop) {
    let bin = dashfloat_bin();
    let session = spawn_as(
        Path::new("/bin/sh"),
        &[
            "-c",
            "trap '' HUP; \"$0\" \"$@\"; exit $?",
            bin.to_str().unwrap(),
        ],
        dir,
        base_url,
    );
    session.wait_for("idle", WAIT).unwrap();
    let dashfloat = only_child(session.pid().unwrap() as i32);
    (session, KillOnDrop(dashfloat))
}

#[test]
fn an_idle_dashfloat_whose_terminal_hangs_up_without_sighup_exits() {
    // It used to spin on the end of file at 70% CPU, forever.
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let (mut session, dashfloat) = spawn_without_sighup(dir.path(), &server.base_url());
    session.hang_up(WAIT).unwrap();
    support::assert_all_gone(&[dashfloat.0], WAIT);
    // Quitting as after SIGHUP, not failing on the tty it can no longer
    // write the transcript to.
    let status = session.wait_exit(WAIT).expect("the shell did not exit");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_terminal_that_hangs_up_without_sighup_ends_dashfloat_and_its_command() {
    let server = ScriptedServer::start_blocking(vec![escaping_reply()]);
    let dir = tempfile::tempdir().unwrap();
    let (mut session, dashfloat) = spawn_without_sighup(dir.path(), &server.base_url());
    let pids = run_escapees(&mut session, dir.path());
    // The spinner keeps dashfloat writing, which lets the reader let go.
    session.wait_for("executing", WAIT).unwrap();
    session.hang_up(WAIT).unwrap();
    support::assert_all_gone(&[dashfloat.0], WAIT);
    support::assert_all_gone(&pids, WAIT);
    let status = session.wait_exit(WAIT).expect("the shell did not exit");
    assert!(status.success(), "{status:?}");
}

#[test]
fn sigterm_restores_the_terminal() {
    signal_restores_the_terminal(nix::sys::signal::Signal::SIGTERM);
}

#[test]
fn sighup_restores_the_terminal() {
    signal_restores_the_terminal(nix::sys::signal::Signal::SIGHUP);
}

/// Polls `done` until it holds, for at most [`WAIT`].
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + WAIT;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the process `pid` is stopped (state `T` in `/proc`).
fn stopped(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(stat.rsplit_once(") ")?.1.starts_with('T')))
        .unwrap_or(false)
}

/// A shell with job control, in little: runs its arguments as a job in a
/// process group of its own, in the terminal's foreground, and waits for
/// it to end.
const JOB_SHELL: &str = "import os, signal, sys
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))";

/// Ctrl+Z gives the terminal back and stops dashfloat, as a full-screen
/// program does; continued, it takes the screen again and draws it whole.
/// SIGTSTP sent with `kill` does the same.
#[test]
fn ctrl_z_or_sigtstp_gives_the_terminal_back_until_continued() {
    use nix::sys::signal::{Signal, kill};
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let bin = dashfloat_bin();
    let mut session = spawn_as(
        Path::new("python3"),
        &["-c", JOB_SHELL, bin.to_str().unwrap()],
        dir.path(),
        &server.base_url(),
    );
    session.wait_for("idle", WAIT).unwrap();
    let pid = only_child(session.pid().unwrap() as i32);
    for by_key in [true, false] {
        if by_key {
            session.send(b"\x1a");
        } else {
            kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTSTP).unwrap();
        }
        eventually("stopped", || stopped(pid));
        eventually("the terminal given back", || !session.alternate_screen());
        assert_eq!(session.termios_is_cooked(), Some(true), "raw mode left on");
        kill(nix::unistd::Pid::from_raw(pid), Signal::SIGCONT).unwrap();
        eventually("the screen taken again", || {
            session.alternate_screen() && session.screen_text().contains("idle")
        });
        assert_eq!(session.termios_is_cooked(), Some(false));
    }
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

/// Started with no shell that could continue it (here the pty's session
/// leader itself, as under tmux or ssh), Ctrl+Z does not stop dashfloat,
/// which would hang the terminal for good: a hint says why.
#[test]
fn ctrl_z_with_no_shell_to_resume_it_goes_on() {
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"\x1a");
    session.wait_for("no shell here can resume", WAIT).unwrap();
    assert!(!stopped(session.pid().unwrap() as i32));
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

/// Ctrl+L draws the screen again and the session goes on (it once asked
/// the terminal for its cursor, missed the answer, and quit).
#[test]
fn ctrl_l_redraws_and_the_session_goes_on() {
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"\x0c");
    session.send(b"still here");
    session.wait_for("still here", WAIT).unwrap();
    assert!(session.is_running());
    session.send(b"\x15\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

#[test]
fn a_resize_redraws_for_the_new_size() {
    let server = ScriptedServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.resize(60, 20);
    session
        .wait_until(WAIT, |screen| {
            screen.lines().any(|l| l.trim_end() == "─".repeat(60))
        })
        .unwrap();
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

fn edit_reply() -> Reply {
    Reply::tool_call(
        "e1",
        "edit_file",
        &[r#"{"path": "greet.txt", "search_block": "hello", "replace_block": "goodbye"}"#],
    )
}

fn spawn_in_project(server: &ScriptedServer) -> (PtySession, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("greet.txt"), "hello world\n").unwrap();
    let session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    (session, dir)
}

#[test]
fn y_approves_an_edit_and_it_lands() {
    let server = ScriptedServer::start_blocking(vec![edit_reply(), Reply::text(&["Edited."])]);
    let (mut session, dir) = spawn_in_project(&server);
    session.send(b"change the greeting\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    let screen = session.wait_for("+ goodbye world", WAIT).unwrap();
    assert!(screen.contains("- hello world"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.txt")).unwrap(),
        "hello world\n"
    );
    session.send(b"y");
    session.wait_for("Edited.", WAIT).unwrap();
    assert!(session.screen_text().contains("→ ok"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.txt")).unwrap(),
        "goodbye world\n"
    );
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
}

#[test]
fn esc_rejects_an_edit_and_the_file_is_unchanged() {
    let server =
        ScriptedServer::start_blocking(vec![edit_reply(), Reply::text(&["Left it alone."])]);
    let (mut session, dir) = spawn_in_project(&server);
    session.send(b"change the greeting\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.send(b"\x1b");
    session.wait_for("→ rejected", WAIT).unwrap();
    session.wait_for("Left it alone.", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.txt")).unwrap(),
        "hello world\n"
    );
    let result = &server.requests()[1].body["messages"][3]["content"];
    assert!(
        result.as_str().unwrap().contains("\"rejected\":true"),
        "{result}"
    );
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

/// Typing at a confirmation: `y` and `n` in the words are letters, and
/// Enter sends the words to the model instead of an answer.
#[test]
fn words_typed_at_a_confirmation_reject_the_edit_and_reach_the_model() {
    let server =
        ScriptedServer::start_blocking(vec![edit_reply(), Reply::text(&["Saying hi instead."])]);
    let (mut session, dir) = spawn_in_project(&server);
    session.send(b"change the greeting\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.send(b"say hi, not goodbye, nor anything");
    session.wait_for("nor anything", WAIT).unwrap();
    assert!(session.screen_text().contains("Confirm (1 of 1)"));
    session.send(b"\r");
    session.wait_for("Saying hi instead.", WAIT).unwrap();
    assert!(session.screen_text().contains("→ rejected"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.txt")).unwrap(),
        "hello world\n"
    );
    let sent = &server.requests()[1].body["messages"];
    assert_eq!(sent[4]["role"], "user", "{sent}");
    assert_eq!(sent[4]["content"], "say hi, not goodbye, nor anything");
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

/// A dashfloat whose approved `sleep 30` is running: the server (kept
/// alive), the session, the project and the command's shell pid.
fn a_command_running() -> (ScriptedServer, PtySession, tempfile::TempDir, i32) {
    let server = ScriptedServer::start_blocking(vec![Reply::tool_call(
        "x1",
        "execute_command",
        &[r#"{"command": "echo $$ > pid; sleep 30"}"#],
    )]);
    let (session, dir) = spawn_in_project(&server);
    session.send(b"wait a while\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.send(b"y");
    session.wait_for("executing", WAIT).unwrap();
    let pid = support::wait_for_pid(&dir.path().join("pid"), WAIT);
    (server, session, dir, pid)
}

#[test]
fn esc_interrupts_a_running_command() {
    let (_server, mut session, _dir, pid) = a_command_running();
    session.send(b"\x1b");
    session.wait_for("→ cancelled", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    assert!(!support::process_alive(pid), "the command survived Esc");
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

#[test]
fn ctrl_c_twice_quits_while_a_command_runs_and_kills_it() {
    let (_server, mut session, _dir, pid) = a_command_running();
    // The screen keeps answering while the command runs.
    session.send(b"typing meanwhile");
    session.wait_for("typing meanwhile", WAIT).unwrap();
    session.send(b"\x03");
    session.send(b"\x03");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
    assert!(
        !support::process_alive(pid),
        "the command outlived dashfloat"
    );
}

#[test]
fn escape_sequences_in_a_reply_never_reach_the_terminal() {
    // A title change, a clipboard write, a cursor-position query (whose
    // answer the terminal would type into dashfloat) and a screen clear.
    let server = ScriptedServer::start_blocking(vec![Reply::text(&[
        "safe \x1b]2;PWNED\x07",
        "\x1b]52;c;ZXZpbA==\x07\x1b[6n\x1b[2J text",
    ])]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"hi\r");
    session.wait_for("safe ]2;PWNED", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    let answered = session.queries_answered();
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
    for seq in [&b"\x1b]2;"[..], b"\x1b]52;", b"\x1b[2J"] {
        assert!(
            !session.raw_contains(seq),
            "{:?} reached the terminal",
            String::from_utf8_lossy(seq)
        );
    }
    assert_eq!(session.queries_answered(), answered, "a query was sent");
    // The printed transcript still shows the text around the sequences.
    let screen = session.screen_text();
    assert!(screen.contains("safe ]2;PWNED"), "{screen}");
    assert!(screen.contains("[2J text"), "{screen}");
}

#[test]
fn y_runs_a_long_command_only_after_its_end_has_been_on_screen() {
    let mut command: String = (1..=60).map(|i| format!("echo harmless {i}\\n")).collect();
    command.push_str("echo EVIL > marker");
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call(
            "x1",
            "execute_command",
            &[&format!(r#"{{"command": "{command}"}}"#)],
        ),
        Reply::text(&["Ran it."]),
    ]);
    let (mut session, dir) = spawn_in_project(&server);
    let marker = dir.path().join("marker");
    session.send(b"run the script\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    let screen = session.wait_for("echo harmless", WAIT).unwrap();
    assert!(!screen.contains("EVIL"), "{screen}");
    session.send(b"y");
    // Either the hint or the command's outcome: the latter is the defect.
    session
        .wait_until(WAIT, |s| {
            s.contains("not approved yet") || s.contains("Ran it.")
        })
        .unwrap();
    assert!(
        !marker.exists(),
        "y ran a command whose end was never shown"
    );
    session.wait_for("preview lines 1–26 of 63", WAIT).unwrap();
    // PgDn until the last line has been drawn.
    session.send(b"\x1b[6~");
    session.wait_for("preview lines 25–50 of 63", WAIT).unwrap();
    session.send(b"\x1b[6~");
    session.wait_for("echo EVIL > marker", WAIT).unwrap();
    session.send(b"y");
    session.wait_for("Ran it.", WAIT).unwrap();
    assert!(marker.exists(), "the approved command did not run");
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
}

#[test]
fn a_server_value_that_once_panicked_a_task_is_an_entry_under_a_running_ui() {
    // Retry-After: 1e20 panicked the stream task, and the panic hook then
    // left the alternate screen and raw mode while the UI kept running.
    let server = ScriptedServer::start_blocking(vec![
        Reply::status(429, "text/plain", "later").with_header("Retry-After", "1e20"),
        Reply::text(&["still here"]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"first\r");
    session.wait_for("rate limited", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    assert!(
        session.alternate_screen(),
        "the screen was restored under the UI"
    );
    assert_eq!(
        session.termios_is_cooked(),
        Some(false),
        "raw mode was left"
    );
    session.send(b"again\r");
    session.wait_for("still here", WAIT).unwrap();
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
}

#[test]
fn esc_esc_rewinds_to_a_chosen_prompt_which_is_edited_and_sent_again() {
    let server = ScriptedServer::start_blocking(vec![
        edit_reply(),
        Reply::text(&["Edited."]),
        Reply::text(&["second reply"]),
        // A question: a request to change answered in words alone would
        // be asked to act (ADR 0049), and this test is of the rewind.
        Reply::text(&["after the rewind, shall I go on?"]),
    ]);
    let (mut session, dir) = spawn_in_project(&server);
    session.send(b"change the greeting\r");
    session.wait_for("Confirm (1 of 1)", WAIT).unwrap();
    session.wait_for("+ goodbye world", WAIT).unwrap();
    session.send(b"y");
    session.wait_for("Edited.", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"and then?\r");
    session.wait_for("second reply", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();

    session.send(b"\x1b");
    session.wait_for("Esc again to rewind", WAIT).unwrap();
    session.send(b"\x1b");
    session.wait_for("Rewind to a prompt", WAIT).unwrap();
    // Newest first: down to the first prompt, and take it.
    session.send(b"\x1b[B");
    session
        .wait_for("›   1  change the greeting", WAIT)
        .unwrap();
    session.send(b"\r");
    // The edit its turn made is offered for undoing; n keeps the file.
    session
        .wait_for("y undo files too · n conversation only", WAIT)
        .unwrap();
    session.send(b"n");
    session.wait_for("greet.txt: left as it is", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.txt")).unwrap(),
        "goodbye world\n"
    );
    // The prompt is back in the input box, to be edited and sent.
    session.wait_for("› change the greeting", WAIT).unwrap();
    session.send(b" politely\r");
    session.wait_for("after the rewind", WAIT).unwrap();
    let requests = server.requests();
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let sent: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    // The rewind keeps the project overview the first prompt went out
    // with (ADR 0048): the edited words follow the same one.
    let first = requests[0].body["messages"][1]["content"].as_str().unwrap();
    let overview = first.strip_suffix("\n\nchange the greeting").unwrap();
    assert!(overview.starts_with(dashfloat::overview::OVERVIEW_OPENING));
    let again = format!("{overview}\n\nchange the greeting politely");
    assert_eq!(sent[1], ("user", again.as_str()));
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).expect("no exit").success());
    assert_terminal_restored(&session);
}

#[test]
fn at_completes_a_project_path_and_the_named_file_is_read_first() {
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["It greets."])]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("lib/greeting.txt"), "hello there\n").unwrap();
    let mut session = spawn(dir.path(), &server.base_url());
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"what does @gre");
    session.wait_for("@lib/greeting.txt", WAIT).unwrap();
    session.send(b"\t");
    session
        .wait_for("what does @lib/greeting.txt", WAIT)
        .unwrap();
    session.send(b"say?\r");
    session.wait_for("It greets.", WAIT).unwrap();
    let sent = &server.requests()[0].body["messages"];
    // The project overview goes first in the same message (ADR 0048).
    let words = sent[1]["content"].as_str().unwrap();
    assert!(
        words.starts_with(dashfloat::overview::OVERVIEW_OPENING)
            && words.ends_with("</project_overview>\n\nwhat does @lib/greeting.txt say?"),
        "{words}"
    );
    assert_eq!(sent[2]["tool_calls"][0]["function"]["name"], "read_file");
    assert!(
        sent[3]["content"]
            .as_str()
            .is_some_and(|c| c.contains("hello there")),
        "{sent}"
    );
    session.send(b"\x04");
    assert!(session.wait_exit(WAIT).is_some_and(|s| s.success()));
}
