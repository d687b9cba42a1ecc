//! Checkpoints against the scripted server and real files: `/undo` puts
//! back what a turn's file tools changed (content, mode, a created file
//! removed), refuses a file changed since unless asked again, `/redo`
//! re-applies, a rewind drops the conversation from a prompt on and
//! offers to undo its files, and all of it survives `--continue`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::EDIT_MAX_FILE_BYTES;
use dashfloat::llm::wire::Message;
use dashfloat::protocol::{AgentEvent, Decision, PreviewKind, UiCommand};
use dashfloat::session::{OpenSession, SessionSetup, SessionStore};
use dashfloat::tools::{Analyser, FileState};
use serde_json::json;

use crate::support;
use support::agent::{AgentHarness, reply_text, setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// An agent in `root` that applies file changes unasked, saving into
/// `store` when one is given.
fn start(
    server: &ScriptedServer,
    root: &Path,
    store: Option<(&SessionStore, OpenSession)>,
) -> AgentHarness {
    let mut s = setup(&server.base_url(), root, ApprovalPolicy::AutoEdit);
    s.sessions = store.map(|(store, open)| SessionSetup {
        store: store.clone(),
        open,
        save: true,
        directory: "/projects/demo".to_string(),
        base_url: server.base_url(),
    });
    start_with(s)
}

fn edit(id: &str, path: &str, search: &str, replace: &str) -> (String, String, String) {
    let args = json!({"path": path, "search_block": search, "replace_block": replace});
    (id.to_owned(), "edit_file".to_owned(), args.to_string())
}

fn write(id: &str, path: &str, content: &str) -> (String, String, String) {
    let args = json!({"path": path, "content": content});
    (id.to_owned(), "write_file".to_owned(), args.to_string())
}

fn run(id: &str, command: &str) -> (String, String, String) {
    let args = json!({ "command": command });
    (
        id.to_owned(),
        "execute_command".to_owned(),
        args.to_string(),
    )
}

/// Asks for a file that a command makes, and approves the command.
async fn make_a_file(h: &mut AgentHarness) {
    h.prompt("make a file").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Approve).await;
    h.turn().await;
}

/// What `/undo` and rewind say when a command ran in what they revert.
const COMMANDS_NOT_UNDONE: &str = "the commands run since that turn are not undone";

/// Every notice among `events`, one per line.
fn notice_of(events: &[AgentEvent]) -> String {
    system_texts(events).join("\n")
}

/// One reply making `calls`, then one answering in words.
fn turn_of(calls: &[(String, String, String)]) -> Vec<Reply> {
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.as_str()))
        .collect();
    vec![Reply::tool_calls(&calls), Reply::text(&["done"])]
}

/// The text of file `name` in `dir`.
fn text(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Sends `command`, approves every restore it asks about, and returns the
/// events until the turn is over.
async fn restore(
    h: &mut AgentHarness,
    command: UiCommand,
    answers: &[Decision],
) -> Vec<AgentEvent> {
    h.send(command).await;
    let mut events = Vec::new();
    for answer in answers {
        let (id, seen) = h.next_confirm().await;
        events.extend(seen);
        h.decide(&id, answer.clone()).await;
    }
    events.extend(h.turn().await);
    events
}

/// The prompts the agent offers to rewind to.
async fn prompts_listed(h: &mut AgentHarness) -> Vec<String> {
    h.send(UiCommand::ListPrompts).await;
    h.turn()
        .await
        .into_iter()
        .find_map(|event| match event {
            AgentEvent::Prompts { list } => Some(list),
            _ => None,
        })
        .unwrap_or_default()
}

/// The texts of every confirmation's preview in `events`, added and
/// removed lines marked `+` and `-`.
fn previews(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Confirm(req) => Some(
                req.preview
                    .iter()
                    .map(|l| {
                        let sign = match l.kind {
                            PreviewKind::Added => "+",
                            PreviewKind::Removed => "-",
                            _ => "",
                        };
                        format!("{sign}{}", l.text)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        })
        .collect()
}

/// The messages of the last request the server received.
fn last_sent(server: &ScriptedServer) -> Vec<Message> {
    let requests = server.requests();
    let body = &requests.last().expect("a request").body;
    serde_json::from_value(body["messages"].clone()).unwrap()
}

/// A project of three files: text (0644), a script (0755) and bytes that
/// are not UTF-8 (0600).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(p.join("run.sh"), "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(p.join("run.sh"), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(p.join("data.bin"), b"\xff\xfe\x00key=1\n\x80").unwrap();
    std::fs::set_permissions(p.join("data.bin"), PermissionsExt::from_mode(0o600)).unwrap();
    dir
}

fn snapshot(root: &Path) -> Vec<(String, Vec<u8>, u32)> {
    let mut files: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap(), mode(&path))
        })
        .collect();
    files.sort();
    files
}

/// The turn every test starts from: three edits and a new file.
fn three_edits_and_a_new_file() -> Vec<Reply> {
    turn_of(&[
        edit("e1", "notes.txt", "beta", "gamma"),
        edit("e2", "run.sh", "echo old", "echo new"),
        edit("e3", "data.bin", "key=1", "key=2"),
        write("w1", "new.txt", "fresh\n"),
    ])
}

#[tokio::test]
async fn undo_restores_a_turns_files_byte_for_byte_and_removes_what_it_created() {
    let dir = project();
    let before = snapshot(dir.path());
    let mut replies = three_edits_and_a_new_file();
    replies.push(Reply::text(&["noted"]));
    let server = ScriptedServer::start(replies).await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("change them").await;
    h.turn().await;
    let after = snapshot(dir.path());
    assert_ne!(after, before);

    let events = restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    let shown = previews(&events);
    assert_eq!(shown.len(), 1, "{shown:?}");
    for expected in [
        "restore notes.txt",
        "-gamma",
        "+beta",
        "restore run.sh",
        "remove new.txt",
    ] {
        assert!(shown[0].contains(expected), "{expected} in {}", shown[0]);
    }
    assert_eq!(
        snapshot(dir.path()),
        before,
        "content and modes as before, new.txt gone"
    );
    let notice = notice_of(&events);
    assert!(notice.contains("restored notes.txt"), "{notice}");
    assert!(notice.contains("removed new.txt"), "{notice}");
    assert!(
        !notice.contains("not undone"),
        "no command ran, so none is said to be left: {notice}"
    );

    // The model is told what was undone, before the next prompt.
    h.prompt("what now?").await;
    h.turn().await;
    // The note and the prompt go as one user message.
    let sent = last_sent(&server);
    let note = sent.last().unwrap().content.clone().unwrap_or_default();
    assert!(note.starts_with("[dashfloat] The person undid"), "{note}");
    assert!(note.contains("removed new.txt"), "{note}");
    assert!(note.ends_with("\n\nwhat now?"), "{note}");
}

#[tokio::test]
async fn redo_reapplies_what_undo_reverted_and_another_undo_steps_further_back() {
    let dir = project();
    let before = snapshot(dir.path());
    let mut replies = three_edits_and_a_new_file();
    replies.extend(turn_of(&[edit("e4", "notes.txt", "alpha", "omega")]));
    let server = ScriptedServer::start(replies).await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("change them").await;
    h.turn().await;
    let after_first = snapshot(dir.path());
    h.prompt("and the first line").await;
    h.turn().await;
    let after_second = snapshot(dir.path());

    restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    assert_eq!(snapshot(dir.path()), after_first);
    restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    assert_eq!(snapshot(dir.path()), before);
    restore(&mut h, UiCommand::Redo, &[Decision::Approve]).await;
    assert_eq!(snapshot(dir.path()), after_first);
    restore(&mut h, UiCommand::Redo, &[Decision::Approve]).await;
    assert_eq!(snapshot(dir.path()), after_second);
    let events = restore(&mut h, UiCommand::Redo, &[]).await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.starts_with("nothing to redo")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_file_changed_since_the_turn_is_refused_unless_approved_on_its_own() {
    let dir = project();
    let server = ScriptedServer::start(turn_of(&[
        edit("e1", "notes.txt", "beta", "gamma"),
        edit("e2", "run.sh", "echo old", "echo new"),
    ]))
    .await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("change them").await;
    h.turn().await;
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho mine\n").unwrap();

    // The unchanged file first; the changed one is asked about on its own
    // and kept when declined.
    let events = restore(
        &mut h,
        UiCommand::Undo,
        &[Decision::Approve, Decision::Reject],
    )
    .await;
    let shown = previews(&events);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].contains("restore notes.txt") && !shown[0].contains("run.sh"));
    assert!(shown[1].contains("changed after that turn") && shown[1].contains("restore run.sh"));
    assert!(shown[1].contains("-echo mine"), "{}", shown[1]);
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\nbeta\n");
    assert_eq!(text(dir.path(), "run.sh"), "#!/bin/sh\necho mine\n");
    let notice = notice_of(&events);
    assert!(notice.contains("run.sh: left as it is"), "{notice}");
}

/// Words sent instead of an answer to a restore decline it and what is
/// still to be asked, as Esc does, and are the next prompt.
#[tokio::test]
async fn words_sent_instead_of_a_restore_answer_decline_it_and_are_the_next_prompt() {
    let dir = project();
    let mut replies = turn_of(&[
        edit("e1", "notes.txt", "beta", "gamma"),
        edit("e2", "run.sh", "echo old", "echo new"),
    ]);
    replies.push(Reply::text(&["keeping them"]));
    let server = ScriptedServer::start(replies).await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("change them").await;
    h.turn().await;
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho mine\n").unwrap();
    h.send(UiCommand::Undo).await;
    let (id, _) = h.next_confirm().await;
    h.decide(
        &id,
        Decision::Redirect("leave the files, explain instead".into()),
    )
    .await;
    let events = h.turn().await;
    let notice = notice_of(&events);
    assert!(
        notice.contains("notes.txt: left as it is") && notice.contains("run.sh: left as it is"),
        "{notice}"
    );
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\ngamma\n");
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "keeping them");
    let last = last_sent(&server).pop().unwrap();
    assert_eq!(
        last.content.as_deref(),
        Some("leave the files, explain instead")
    );
}

/// Words sent instead of an answer start a turn of their own: rewinding
/// to them undoes what the model did after them.
#[tokio::test]
async fn words_sent_instead_of_an_answer_are_a_prompt_rewind_returns_to() {
    let dir = project();
    let asked = run("c1", "true");
    let edited = edit("e1", "notes.txt", "beta", "gamma");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(&asked.0, &asked.1, &asked.2)]),
        Reply::tool_calls(&[(&edited.0, &edited.1, &edited.2)]),
        Reply::text(&["done"]),
    ])
    .await;
    // Auto-edit: the command asks, the edit does not.
    let mut h = start(&server, dir.path(), None);
    h.prompt("first").await;
    let (id, _) = h.next_confirm().await;
    let words = "edit the notes instead";
    h.decide(&id, Decision::Redirect(words.into())).await;
    h.turn().await;
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\ngamma\n");
    assert_eq!(prompts_listed(&mut h).await, ["first", words]);
    let events = restore(
        &mut h,
        UiCommand::Rewind { prompt: 1 },
        &[Decision::Approve],
    )
    .await;
    assert!(
        events.contains(&AgentEvent::Rewound { text: words.into() }),
        "{events:?}"
    );
    let shown = previews(&events);
    assert!(shown[0].contains("restore notes.txt"), "{shown:?}");
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn a_changed_file_is_overwritten_only_with_its_own_approval() {
    let dir = project();
    let server = ScriptedServer::start(turn_of(&[edit("e1", "notes.txt", "beta", "gamma")])).await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("change it").await;
    h.turn().await;
    std::fs::write(dir.path().join("notes.txt"), "by hand\n").unwrap();
    let events = restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    let shown = previews(&events);
    assert_eq!(shown.len(), 1);
    assert!(
        shown[0].contains("y overwrites those changes"),
        "{}",
        shown[0]
    );
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\nbeta\n");
}

/// Four prompts answered in words, the second and third each writing a
/// file of their own.
fn four_turns() -> Vec<Reply> {
    let mut replies = vec![Reply::text(&["one"])];
    replies.extend(turn_of(&[write("w2", "two.txt", "2\n")]));
    replies.extend(turn_of(&[edit("e3", "notes.txt", "alpha", "three")]));
    replies.push(Reply::text(&["four"]));
    replies.push(Reply::text(&["again"]));
    replies
}

async fn four_prompts(h: &mut AgentHarness) {
    for prompt in ["first", "second", "third", "fourth"] {
        h.prompt(prompt).await;
        h.turn().await;
    }
}

#[tokio::test]
async fn rewinding_to_the_second_of_four_prompts_sends_the_conversation_before_it() {
    let dir = project();
    let server = ScriptedServer::start(four_turns()).await;
    let mut h = start(&server, dir.path(), None);
    four_prompts(&mut h).await;

    assert_eq!(
        prompts_listed(&mut h).await,
        ["first", "second", "third", "fourth"]
    );
    // Conversation only: the files stay as the turns left them.
    let events = restore(&mut h, UiCommand::Rewind { prompt: 1 }, &[Decision::Reject]).await;
    assert!(
        events.contains(&AgentEvent::Rewound {
            text: "second".into()
        }),
        "{events:?}"
    );
    let shown = previews(&events);
    assert!(
        shown[0].contains("y undo files too · n conversation only"),
        "{shown:?}"
    );
    assert!(shown[0].contains("remove two.txt") && shown[0].contains("restore notes.txt"));
    assert!(dir.path().join("two.txt").exists());

    h.prompt("second, edited").await;
    h.turn().await;
    let sent: Vec<(String, String)> = last_sent(&server)
        .into_iter()
        .map(|m| (format!("{:?}", m.role), m.content.unwrap_or_default()))
        .collect();
    let expected = [
        ("System", "system prompt"),
        ("User", "first"),
        ("Assistant", "one"),
        ("User", "second, edited"),
    ]
    .map(|(r, c)| (r.to_owned(), c.to_owned()));
    assert_eq!(sent, expected);
}

#[tokio::test]
async fn a_rewind_can_undo_the_files_its_dropped_turns_changed() {
    let dir = project();
    let before = snapshot(dir.path());
    let server = ScriptedServer::start(four_turns()).await;
    let mut h = start(&server, dir.path(), None);
    four_prompts(&mut h).await;
    restore(
        &mut h,
        UiCommand::Rewind { prompt: 1 },
        &[Decision::Approve],
    )
    .await;
    assert_eq!(snapshot(dir.path()), before);
    // What the rewind undid, `/redo` re-applies.
    restore(&mut h, UiCommand::Redo, &[Decision::Approve]).await;
    assert_eq!(text(dir.path(), "two.txt"), "2\n");
    assert_eq!(text(dir.path(), "notes.txt"), "three\nbeta\n");
}

/// Words that begin as dashfloat's notes do are no prompt to rewind to,
/// and take no rewind point: the points stay in step with the prompts
/// listed, so a rewind undoes the files of the turns it drops, no more.
#[tokio::test]
async fn words_that_look_like_a_note_do_not_shift_the_rewind_points() {
    let dir = project();
    let server = ScriptedServer::start(four_turns()).await;
    let mut h = start(&server, dir.path(), None);
    for prompt in ["first", "[dashfloat] second", "third", "fourth"] {
        h.prompt(prompt).await;
        h.turn().await;
    }
    assert_eq!(prompts_listed(&mut h).await, ["first", "third", "fourth"]);
    let events = restore(
        &mut h,
        UiCommand::Rewind { prompt: 1 },
        &[Decision::Approve],
    )
    .await;
    let shown = previews(&events);
    assert!(shown[0].contains("restore notes.txt"), "{shown:?}");
    assert!(!shown[0].contains("two.txt"), "{shown:?}");
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\nbeta\n");
    assert_eq!(text(dir.path(), "two.txt"), "2\n");
}

/// A saved session of one turn that edits three of `dir`'s files and
/// makes a new one, ended as a quit ends it.
async fn save_a_turn_of_edits(store: &SessionStore, dir: &Path) {
    let server = ScriptedServer::start(three_edits_and_a_new_file()).await;
    let mut h = start(&server, dir, Some((store, OpenSession::New)));
    h.prompt("change them").await;
    h.turn().await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
}

#[tokio::test]
async fn undo_works_after_continue() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let dir = project();
    let before = snapshot(dir.path());
    save_a_turn_of_edits(&store, dir.path()).await;

    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start(&server, dir.path(), Some((&store, OpenSession::Continue)));
    h.until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    assert_eq!(snapshot(dir.path()), before);
}

/// A session saved in another project and resumed here (`--resume
/// --all`) leaves what its turns changed behind: those paths name the
/// other project's files.
#[tokio::test]
async fn a_session_resumed_in_another_project_has_nothing_to_undo_there() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let dir = project();
    save_a_turn_of_edits(&store, dir.path()).await;
    let id = store.list(None).sessions[0].id.clone();

    let other = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = setup(&server.base_url(), other.path(), ApprovalPolicy::AutoEdit);
    s.sessions = Some(SessionSetup {
        store: store.clone(),
        open: OpenSession::Resume(id),
        save: true,
        directory: "/projects/other".to_string(),
        base_url: server.base_url(),
    });
    let mut h = start_with(s);
    let opened = h
        .until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    let events = restore(&mut h, UiCommand::Undo, &[]).await;
    assert!(previews(&events).is_empty());
    let said = notice_of(&opened) + &notice_of(&events);
    assert!(said.contains("saved in /projects/demo"), "{said}");
    assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
}

/// Files created in new folders are undone with them (the second file in
/// a folder the first made too); a folder that was there before stays,
/// even empty, and `/redo` makes them again.
#[tokio::test]
async fn undoing_a_created_file_removes_the_folders_made_for_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let server = ScriptedServer::start(turn_of(&[
        write("w1", "new/deep/x.rs", "x\n"),
        write("w2", "logs/a.txt", "a\n"),
        write("w3", "new/deep/y.rs", "y\n"),
    ]))
    .await;
    let mut h = start(&server, dir.path(), None);
    h.prompt("make them").await;
    h.turn().await;
    assert!(dir.path().join("new/deep/x.rs").exists());
    restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    assert!(!dir.path().join("new").exists());
    assert!(dir.path().join("logs").is_dir());
    assert!(!dir.path().join("logs/a.txt").exists());
    restore(&mut h, UiCommand::Redo, &[Decision::Approve]).await;
    assert_eq!(text(dir.path(), "new/deep/x.rs"), "x\n");
    restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    assert!(!dir.path().join("new").exists());
}

#[tokio::test]
async fn a_file_over_the_edit_bound_is_not_restorable_and_the_confirmation_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let big = vec![b'x'; usize::try_from(EDIT_MAX_FILE_BYTES).unwrap() + 1];
    std::fs::write(dir.path().join("big.log"), &big).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("r1", "read_file", &[r#"{"path":"big.log","limit":1}"#]),
        Reply::tool_calls(&[(
            "w1",
            "write_file",
            r#"{"path":"big.log","content":"small\n","replace_whole_file":true}"#,
        )]),
        Reply::text(&["replaced"]),
    ])
    .await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.sessions = None;
    let mut h = start_with(s);
    h.prompt("shrink it").await;
    let (id, events) = h.next_confirm().await;
    let shown = previews(&events).join("\n");
    assert!(shown.contains("/undo cannot restore it"), "{shown}");
    let markers = events.iter().any(|e| match e {
        AgentEvent::Confirm(req) => req.preview.iter().any(|l| l.kind == PreviewKind::Marker),
        _ => false,
    });
    assert!(markers);
    h.decide(&id, Decision::Approve).await;
    h.turn().await;

    // Nothing can be put back, so nothing is asked: the notice says why.
    let events = restore(&mut h, UiCommand::Undo, &[]).await;
    assert!(previews(&events).is_empty());
    let notice = notice_of(&events);
    assert!(
        notice.contains("big.log: left as it is — not restorable (over 8 MiB)"),
        "{notice}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("big.log")).unwrap(),
        b"small\n"
    );
    // The turn is spent: the next /undo steps past it.
    let events = restore(&mut h, UiCommand::Undo, &[]).await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.starts_with("nothing to undo")),
        "{events:?}"
    );
}

/// `/undo` says commands are not undone when one ran since the turn it
/// reverts, whether in that turn or a later one, and only then: a line the
/// read-only analyser let through changed nothing, so it is not counted.
#[tokio::test]
async fn undo_says_commands_are_not_undone_only_after_one_ran() {
    let dir = project();
    let mut replies = turn_of(&[edit("e1", "notes.txt", "beta", "gamma")]);
    replies.extend(turn_of(&[
        edit("e2", "run.sh", "echo old", "echo new"),
        run("c1", "cat run.sh"),
    ]));
    replies.extend(turn_of(&[run("c2", "echo made > made.txt")]));
    let server = ScriptedServer::start(replies).await;
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::AutoEdit);
    s.read_only = Some(
        Analyser::new(s.tools.root.clone())
            .with_command_env(support::command_env(Path::new("/dev/null"))),
    );
    let mut h = start_with(s);
    h.prompt("change notes").await;
    h.turn().await;
    h.prompt("change run.sh").await;
    h.turn().await;

    let events = restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    let notice = notice_of(&events);
    assert!(notice.contains("restored run.sh"), "{notice}");
    assert!(!notice.contains("not undone"), "only cat ran: {notice}");

    make_a_file(&mut h).await;
    assert_eq!(text(dir.path(), "made.txt"), "made\n");
    let events = restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    let notice = notice_of(&events);
    assert!(notice.contains("restored notes.txt"), "{notice}");
    assert!(
        notice.contains(COMMANDS_NOT_UNDONE),
        "a later turn ran one: {notice}"
    );
    assert_eq!(text(dir.path(), "made.txt"), "made\n");
}

/// A rewind reverts every turn from the prompt on, so it warns about a
/// command any of them ran, even one in a turn that changed no file.
#[tokio::test]
async fn a_rewind_says_the_commands_of_its_dropped_turns_are_not_undone() {
    let dir = project();
    let mut replies = turn_of(&[run("c1", "echo made > made.txt")]);
    replies.extend(turn_of(&[edit("e1", "notes.txt", "beta", "gamma")]));
    let server = ScriptedServer::start(replies).await;
    let mut h = start(&server, dir.path(), None);
    make_a_file(&mut h).await;
    h.prompt("change notes").await;
    h.turn().await;

    let events = restore(
        &mut h,
        UiCommand::Rewind { prompt: 0 },
        &[Decision::Approve],
    )
    .await;
    let notice = notice_of(&events);
    assert!(notice.contains("restored notes.txt"), "{notice}");
    assert!(notice.contains(COMMANDS_NOT_UNDONE), "{notice}");
    assert_eq!(text(dir.path(), "made.txt"), "made\n");
}

/// With no file to restore, the rewind's own notice says it.
#[tokio::test]
async fn a_rewind_of_turns_that_only_ran_commands_says_they_are_not_undone() {
    let dir = project();
    let server = ScriptedServer::start(turn_of(&[run("c1", "echo made > made.txt")])).await;
    let mut h = start(&server, dir.path(), None);
    make_a_file(&mut h).await;

    let events = restore(&mut h, UiCommand::Rewind { prompt: 0 }, &[]).await;
    let notice = notice_of(&events);
    assert!(notice.contains("rewound to prompt 1"), "{notice}");
    assert!(notice.contains(COMMANDS_NOT_UNDONE), "{notice}");
}

/// The id of the session saved in `tests/fixtures/session-checkpoints.json`.
const FIXTURE_ID: &str = "20261202-120000-c0ffee";

/// The text of `tests/fixtures/session-checkpoints.json`.
fn fixture_text() -> String {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session-checkpoints.json");
    std::fs::read_to_string(fixture).unwrap()
}

/// A store in a fresh home whose one session, [`FIXTURE_ID`], is `text`.
fn store_holding(text: &str) -> (tempfile::TempDir, SessionStore) {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    std::fs::create_dir_all(store.dir()).unwrap();
    std::fs::write(store.path_of(FIXTURE_ID), text).unwrap();
    (home, store)
}

#[test]
fn a_session_file_with_checkpoints_loads_as_written() {
    let (_home, store) = store_holding(&fixture_text());
    let saved = store.load(FIXTURE_ID).unwrap();
    let undone = &saved.checkpoints.undone[0].files;
    assert_eq!(undone.len(), 4);
    assert_eq!(
        undone[1].before,
        FileState::File {
            content: b"\x89PNG\r\n\x1a\n\x00\xff".to_vec(),
            mode: 0o600
        }
    );
    assert_eq!(undone[2].before, FileState::Absent);
    assert!(matches!(&undone[3].before, FileState::NotKept { why } if why == "over 8 MiB"));
    // A note is not a prompt: one prompt, one turn.
    assert_eq!(saved.checkpoints.prompt_turns, [1]);
    // Saved before commands were kept: any turn may have run one.
    assert!(saved.checkpoints.commands_since(1));
}

#[test]
fn a_session_saved_before_checkpoints_may_have_run_any_command() {
    let mut file: serde_json::Value = serde_json::from_str(&fixture_text()).unwrap();
    file.as_object_mut().unwrap().remove("checkpoints");
    let (_home, store) = store_holding(&file.to_string());
    let saved = store.load(FIXTURE_ID).unwrap();
    assert!(saved.checkpoints.done.is_empty());
    assert!(saved.checkpoints.commands_since(1));
}

#[tokio::test]
async fn counts_at_their_top_in_a_session_file_stay_there_instead_of_overflowing() {
    let mut file: serde_json::Value = serde_json::from_str(&fixture_text()).unwrap();
    let top = u64::MAX - 1;
    file["usage"] = json!({"prompt_tokens": top, "completion_tokens": top, "total_tokens": top});
    file["checkpoints"]["turn"] = json!(u64::MAX);
    let (_home, store) = store_holding(&file.to_string());

    let dir = project();
    let server = ScriptedServer::start(turn_of(&[edit("e1", "notes.txt", "beta", "gamma")])).await;
    let mut h = start(
        &server,
        dir.path(),
        Some((&store, OpenSession::Resume(FIXTURE_ID.to_string()))),
    );
    h.prompt("change it").await;
    let events = h.turn().await;
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::TurnDone)),
        "{events:?}"
    );
    assert_eq!(text(dir.path(), "notes.txt"), "alpha\ngamma\n");
    // The turn's last save follows TurnDone.
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    let saved = store.load(FIXTURE_ID).unwrap();
    assert_eq!(saved.usage.total_tokens, u64::MAX);
    assert_eq!(saved.checkpoints.turn, u64::MAX);
}

/// `tests/fixtures/session-v1-checkpoints.json`: the session file the
/// dashfloat of schema 1 wrote for [`save_a_turn_of_edits`] in
/// [`project`] (its checkpoints' hashes are `DefaultHasher`'s,
/// SipHash-1-3 with keys 0 and 0).
const V1_FIXTURE: &str = "session-v1-checkpoints.json";
/// Its session's id.
const V1_FIXTURE_ID: &str = "20261205-070318-ef333a";

/// A session saved before the hash of checkpoints had a fixed
/// specification still finds its files as the turn left them, and its
/// `/undo` restores them, asking once: its hashes are read as what they
/// are, SipHash-1-3, and compared as such (ADR 0040).
#[tokio::test]
async fn a_session_saved_by_schema_1_still_undoes_its_turn() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(V1_FIXTURE);
    let (_home, store) = store_holding(&std::fs::read_to_string(fixture).unwrap());
    std::fs::rename(store.path_of(FIXTURE_ID), store.path_of(V1_FIXTURE_ID)).unwrap();
    let dir = project();
    let before = snapshot(dir.path());
    // The files as the fixture's turn left them.
    std::fs::write(dir.path().join("notes.txt"), "alpha\ngamma\n").unwrap();
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho new\n").unwrap();
    std::fs::write(dir.path().join("data.bin"), b"\xff\xfe\x00key=2\n\x80").unwrap();
    std::fs::write(dir.path().join("new.txt"), "fresh\n").unwrap();

    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start(&server, dir.path(), Some((&store, OpenSession::Continue)));
    h.until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    let events = restore(&mut h, UiCommand::Undo, &[Decision::Approve]).await;
    let shown = previews(&events);
    assert!(
        shown.iter().all(|p| !p.contains("changed after that turn")),
        "{shown:?}"
    );
    assert_eq!(snapshot(dir.path()), before);
}

/// What a checkpoint records of the content its turn left is that
/// content's XXH3-64, marked as such in the session file: a value a
/// published specification fixes, where `DefaultHasher`'s may change with
/// any release of Rust, and every file would then read as changed since
/// its turn (ADR 0040).
#[tokio::test]
async fn a_checkpoint_keeps_the_xxh3_of_what_its_turn_left() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let dir = project();
    let server = ScriptedServer::start(turn_of(&[write("w1", "hello.txt", "hello world\n")])).await;
    let mut h = start(&server, dir.path(), Some((&store, OpenSession::New)));
    h.prompt("write it").await;
    h.turn().await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    let id = store.list(None).sessions[0].id.clone();
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.path_of(&id)).unwrap()).unwrap();
    // XXH3-64 of `hello world\n`, seed 0.
    assert_eq!(
        file["checkpoints"]["done"][0]["files"][0]["after"],
        json!({ "xxh3": 0xd42f_7ed4_b73c_6bde_u64 })
    );
}
