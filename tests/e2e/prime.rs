//! End to end, `dashfloat prime-cache` (ADR 0034): the real binary against
//! the scripted server standing in for llama.cpp. The slot it saves is the
//! one a session started afterwards in the same directory, with the same
//! configuration, restores instead of reading its fixed prefix; a changed
//! `AGENTS.md` names another slot, and the session reads the prefix as
//! before. Either way the session then sends its project overview ahead
//! (ADR 0048), which is no part of the prefix. A server that saves no slot
//! gets a line saying so.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::spawn_private;
use crate::support::dashfloat_bin;
use crate::support::server::{Recorded, Reply, ScriptedServer};

const WAIT: Duration = Duration::from_secs(20);

/// The configuration both the prime and the session get beside the
/// environment they inherit (what `spawn_private` sets, and the warm-up
/// on, as it is by default for a server on this machine): no model, so
/// both ask the server which one it serves.
const ENV: [(&str, &str); 1] = [("DASHFLOAT_WARM_CACHE", "on")];

/// `dashfloat prime-cache` in `project`, as `spawn_private` would start a
/// session there.
fn prime(home: &Path, project: &Path, server: &ScriptedServer) -> Output {
    Command::new(dashfloat_bin())
        .args(["prime-cache", "--base-url", &server.base_url()])
        .current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("NO_COLOR", "")
        .env("DASHFLOAT_CONTEXT_WINDOW", "128000")
        .envs(ENV)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A session in `project`, started and quit once its start-up sent
/// `requests` requests; what the server got.
fn session(home: &Path, project: &Path, server: &ScriptedServer, requests: usize) -> Vec<Recorded> {
    let args = ["--base-url", &server.base_url()];
    let mut session = spawn_private(&dashfloat_bin(), &args, home, project, &ENV);
    session.wait_for("idle", WAIT).unwrap();
    server.wait_requests_blocking(requests, WAIT);
    session.send(b"\x04");
    let status = session.wait_exit(WAIT).expect("dashfloat did not exit");
    assert!(status.success());
    server.requests()
}

/// llama.cpp's `/props`.
fn props() -> Reply {
    Reply::status(
        200,
        "application/json",
        r#"{"default_generation_settings":{"n_ctx":8192}}"#,
    )
}

/// The one model the server serves.
fn models() -> Reply {
    Reply::status(
        200,
        "application/json",
        r#"{"object":"list","data":[{"id":"served-model","object":"model"}]}"#,
    )
}

/// llama.cpp refusing a slot action: with `501`, as a server started
/// without `--slot-save-path` does; with `400`, a file it does not have.
fn refused(status: u16) -> Reply {
    Reply::status(
        status,
        "application/json",
        &json!({"error": {"code": status, "message": "This server does not support slots action.", "type": "not_supported_error"}}).to_string(),
    )
}

fn slot_answer(key: &str) -> Reply {
    Reply::status(
        200,
        "application/json",
        &json!({"id_slot": 0, "filename": "x", key: 1975}).to_string(),
    )
}

fn paths(requests: &[Recorded]) -> Vec<&str> {
    requests.iter().map(|r| r.path.as_str()).collect()
}

fn filename(request: &Recorded) -> &str {
    request.body["filename"].as_str().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The requests of a new session that reads its fixed prefix and saves
/// it: the server's kind and model, the restore it refuses, the warm-up,
/// the save.
const READ_AND_SAVE: [&str; 5] = [
    "/props",
    "/v1/models",
    "/slots/0?action=restore",
    "/v1/chat/completions",
    "/slots/0?action=save",
];

#[test]
fn the_slot_primed_is_the_one_a_session_here_restores_until_agents_md_changes() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let agents = project.path().join("AGENTS.md");
    std::fs::write(&agents, "Answer in French.\n").unwrap();

    let server = ScriptedServer::start_blocking(vec![
        props(),
        models(),
        refused(400),
        Reply::text(&["x"]),
        slot_answer("n_saved"),
    ]);
    let output = prime(home.path(), project.path(), &server);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = server.requests();
    assert_eq!(paths(&requests), READ_AND_SAVE);
    let primed = filename(&requests[4]).to_owned();
    assert_eq!(filename(&requests[2]), primed);
    assert!(
        primed.starts_with("dashfloat-prefix-") && primed.ends_with("-served-model.bin"),
        "{primed}"
    );
    let warm = &requests[3].body;
    assert_eq!(warm["max_tokens"], json!(1));
    assert_eq!(warm["model"], json!("served-model"));
    let system = warm["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Answer in French."), "{system}");
    assert_eq!(
        stdout(&output),
        format!(
            "the server read the fixed prompt in {} s and saved it as {primed} (1975 tokens)\n",
            seconds(&stdout(&output))
        )
    );

    // A session started here restores that slot, and reads only its
    // project overview.
    let server = ScriptedServer::start_blocking(vec![
        props(),
        models(),
        slot_answer("n_restored"),
        Reply::text(&["x"]),
    ]);
    let requests = session(home.path(), project.path(), &server, 4);
    assert_eq!(
        paths(&requests),
        [
            "/props",
            "/v1/models",
            "/slots/0?action=restore",
            "/v1/chat/completions"
        ]
    );
    assert_eq!(filename(&requests[2]), primed);
    assert_overview_sent_ahead(&requests[3], system);

    // Other instructions, another prefix: the session asks for another
    // slot, and when the server has none, reads the prefix and saves it.
    std::fs::write(&agents, "Answer in German.\n").unwrap();
    let server = ScriptedServer::start_blocking(vec![
        props(),
        models(),
        refused(400),
        Reply::text(&["x"]),
        slot_answer("n_saved"),
        Reply::text(&["x"]),
    ]);
    let requests = session(home.path(), project.path(), &server, 6);
    assert_eq!(paths(&requests[..5]), READ_AND_SAVE);
    let changed = filename(&requests[2]);
    assert_ne!(changed, primed);
    assert_eq!(filename(&requests[4]), changed);
    let read = &requests[3].body;
    assert_eq!(read["max_tokens"], json!(1));
    assert_eq!(read["messages"].as_array().unwrap().len(), 1);
    let system = read["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Answer in German."), "{system}");
    assert_overview_sent_ahead(&requests[5], system);
}

/// `request` is the warm-up of a new conversation's opening: the system
/// prompt `system`, then dashfloat's own message with the project overview.
fn assert_overview_sent_ahead(request: &Recorded, system: &str) {
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["max_tokens"], json!(1));
    let messages = request.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["content"], json!(system));
    assert_eq!(messages[1]["role"], json!("user"));
}

/// The seconds the line says reading took (the one figure that varies).
fn seconds(line: &str) -> String {
    line.split(" in ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_owned()
}

#[test]
fn a_server_that_saves_no_slot_gets_a_line_saying_so_and_status_1() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // llama.cpp started without --slot-save-path: it reads the prefix (its
    // cache holds it until the next request) but cannot save it.
    let server = ScriptedServer::start_blocking(vec![
        props(),
        models(),
        refused(501),
        Reply::text(&["x"]),
        refused(501),
    ]);
    let output = prime(home.path(), project.path(), &server);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(paths(&server.requests()), READ_AND_SAVE);
    let line = stdout(&output);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains("did not save it")
            && line.ends_with(": HTTP 501: This server does not support slots action.\n"),
        "{line}"
    );

    // A server that is not llama.cpp saves nothing: nothing is sent.
    let server = ScriptedServer::start_blocking(vec![
        Reply::status(404, "text/plain", "Not Found"),
        models(),
    ]);
    let output = prime(home.path(), project.path(), &server);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(paths(&server.requests()), ["/props", "/v1/models"]);
    let line = stdout(&output);
    assert!(
        line.starts_with("nothing done: the server did not answer as llama.cpp")
            && line.contains("/props"),
        "{line}"
    );
}
