//! End to end, the daily-driver features with the real binary in a
//! pseudo-terminal (issue 43): a custom command file with arguments
//! expanded into the prompt the model gets, `/init` asking approval for
//! the AGENTS.md the model writes, the cache figures a scripted llama.cpp
//! `timings` object gives, in the status bar and `/status`, a notification
//! written only while the terminal has no focus, a `pre_tool_use` hook
//! denying a command, and an `@` image shown and sent as a data URL.

use std::path::Path;

use serde_json::json;

use crate::sessions::{WAIT, contents, quit, spawn};
use crate::support::server::{
    Reply, ScriptedServer, content_chunk, finish_chunk, role_chunk, usage_chunk,
};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_command_file_is_offered_and_its_arguments_reach_the_model() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".dashfloat/commands/review.md"),
        "---\ndescription: Review a file for one concern\nargument-hint: FILE CONCERN\n---\nReview $1, looking only at $2.",
    );
    // Codex's prompts, as Codex keeps them, work unchanged.
    write(
        &home.path().join(".codex/prompts/ticket.md"),
        "Open ticket $ID for $ARGUMENTS",
    );
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["reviewed"]),
        Reply::text(&["ticketed"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"/rev");
    session
        .wait_for(
            "Review a file for one concern (project: .dashfloat/commands)",
            WAIT,
        )
        .unwrap();
    session.send(b"\t");
    session.send(b"src/lib.rs \"error handling\"\r");
    session.wait_for("reviewed", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"/prompts:ticket ID=DF-7 the login bug\r");
    session.wait_for("ticketed", WAIT).unwrap();
    quit(&mut session);

    let requests = server.requests();
    // The first prompt goes after the project's overview.
    let first = contents(&requests[0].body).last().unwrap().clone();
    assert!(
        first.ends_with("\n\nReview src/lib.rs, looking only at error handling."),
        "{first}"
    );
    assert_eq!(
        contents(&requests[1].body).last().unwrap(),
        "Open ticket DF-7 for ID=DF-7 the login bug"
    );
}

#[test]
fn init_asks_before_the_agents_file_is_written() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let guide = "# Agents\\n\\nRun `make test`.\\n";
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call(
            "call_1",
            "write_file",
            &[&format!(r#"{{"path":"AGENTS.md","content":"{guide}"}}"#)],
        ),
        Reply::text(&["AGENTS.md is written"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"/init\r");
    session.wait_for("y approve", WAIT).unwrap();
    assert!(!project.path().join("AGENTS.md").exists());
    session.send(b"y");
    session.wait_for("AGENTS.md is written", WAIT).unwrap();
    quit(&mut session);
    assert_eq!(
        std::fs::read_to_string(project.path().join("AGENTS.md")).unwrap(),
        "# Agents\n\nRun `make test`.\n"
    );
    let prompt = contents(&server.requests()[0].body).last().unwrap().clone();
    assert!(
        prompt.ends_with(dashfloat::commands::INIT_PROMPT),
        "{prompt}"
    );
}

#[test]
fn the_cache_figures_of_llama_cpps_timings_are_shown() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut usage = usage_chunk(1_200, 3);
    usage["usage"]
        .as_object_mut()
        .unwrap()
        .remove("prompt_tokens_details");
    usage["timings"]["cache_n"] = json!(1_100);
    let server = ScriptedServer::start_blocking(vec![Reply::sse([
        role_chunk(),
        content_chunk("warm"),
        finish_chunk("stop"),
        usage,
    ])]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"hello\r");
    session.wait_for("1.1k cached", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"/status\r");
    session
        .wait_for(
            "1200 prompt tokens (1100 read from the provider's cache)",
            WAIT,
        )
        .unwrap();
    quit(&mut session);
}

/// How many times `needle` is in the bytes the binary wrote so far.
fn written(session: &crate::support::pty::PtySession, needle: &[u8]) -> usize {
    session
        .raw_output()
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn a_notification_is_written_only_while_the_terminal_has_no_focus() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![
        Reply::text(&["first"]),
        Reply::text(&["second"]),
        Reply::text(&["third"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &["--notify", "osc9"]);
    session.wait_for("idle", WAIT).unwrap();
    // Focus reporting is asked for, so the terminal says when it changes.
    assert_eq!(written(&session, b"\x1b[?1004h"), 1);
    let told = b"\x1b]9;dashfloat: the turn is done\x07";
    session.send(b"one\r");
    session.wait_for("first", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    assert_eq!(written(&session, told), 0, "focused: nothing");
    // The person looks away (the terminal reports focus lost: CSI O).
    session.send(b"\x1b[O");
    session.send(b"two\r");
    session.wait_for_raw(told, WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    // Back (CSI I): nothing more.
    session.send(b"\x1b[I");
    session.send(b"three\r");
    session.wait_for("third", WAIT).unwrap();
    session.wait_for("idle", WAIT).unwrap();
    quit(&mut session);
    assert_eq!(written(&session, told), 1);
    // Focus reporting is switched off again on the way out.
    assert_eq!(written(&session, b"\x1b[?1004l"), 1);
}

#[test]
fn by_default_the_bell_rings() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["done"])]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    assert_eq!(written(&session, b"\x07"), 0);
    session.send(b"\x1b[O");
    session.send(b"go\r");
    session.wait_for_raw(b"\x07", WAIT).unwrap();
    quit(&mut session);
}

#[test]
fn a_pre_tool_use_hook_denies_a_command_on_screen_and_the_model_reads_why() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &home.path().join("dashfloat/config.toml"),
        "[[hooks]]\nevent = \"pre_tool_use\"\ntools = [\"execute_command\"]\ncommand = \"echo 'no commands on Fridays' >&2; exit 2\"\n",
    );
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool_call("call_1", "execute_command", &[r#"{"command":"touch ran"}"#]),
        Reply::text(&["I will not run it"]),
    ]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"make a file\r");
    let screen = session.wait_for("I will not run it", WAIT).unwrap();
    assert!(screen.contains("no commands on Fridays"), "{screen}");
    assert!(!screen.contains("y approve"), "never asked:\n{screen}");
    quit(&mut session);
    assert!(!project.path().join("ran").exists());
    let requests = server.requests();
    let result = contents(&requests[1].body).last().unwrap().clone();
    assert!(
        result.contains("a hook denied this call: no commands on Fridays"),
        "{result}"
    );
}

#[test]
fn an_image_named_with_an_at_is_a_line_in_the_log_and_a_data_url_in_the_request() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // A 1×1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(project.path().join("shot.png"), png).unwrap();
    let server = ScriptedServer::start_blocking(vec![Reply::text(&["a single pixel"])]);
    let mut session = spawn(home.path(), project.path(), &server, &[]);
    session.wait_for("idle", WAIT).unwrap();
    session.send(b"what is in @shot.png\r");
    let screen = session.wait_for("a single pixel", WAIT).unwrap();
    assert!(
        screen.contains(&format!("image shot.png ({} bytes)", png.len())),
        "{screen}"
    );
    quit(&mut session);
    let body = &server.requests()[0].body;
    let prompt = body["messages"].as_array().unwrap().last().unwrap();
    let url = prompt["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|part| part["image_url"]["url"].as_str())
        .unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
}
