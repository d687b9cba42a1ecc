//! The journal beside a session's snapshot (ADR 0040): a step's save
//! appends what the step changed, not the session; a last record cut
//! short by a crash is left out with a notice and the rest resumes; the
//! journal is folded into the snapshot when the agent quits.

use std::path::Path;

use dashfloat::protocol::{AgentEvent, UiCommand};
use dashfloat::session::{OpenSession, SessionStore};

use crate::sessions::start_saving;
use crate::support;
use support::agent::{AgentHarness, system_texts};
use support::server::{Reply, ScriptedServer};

/// Waits until every save the agent queued is on disk: a listing waits
/// for them (and, the agent idle, ends with a `TurnDone`).
async fn settled(h: &mut AgentHarness) {
    h.send(UiCommand::ListSessions { all: true }).await;
    h.until(|e| matches!(e, AgentEvent::Sessions { .. })).await;
    h.until(|e| *e == AgentEvent::TurnDone).await;
}

/// The one session in `store`.
fn only_id(store: &SessionStore) -> String {
    let listing = store.list(None);
    assert_eq!(listing.sessions.len(), 1, "{listing:?}");
    listing.sessions[0].id.clone()
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// After the first prompt's snapshot, each step adds a record to the
/// journal and leaves the snapshot as it was: what a save writes is the
/// step, however long the session.
#[tokio::test]
async fn a_step_appends_a_record_and_leaves_the_snapshot_alone() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let project = tempfile::tempdir().unwrap();
    let long = "z".repeat(200_000);
    let server = ScriptedServer::start(vec![
        Reply::text(&[&long]),
        Reply::text(&["second"]),
        Reply::text(&["third"]),
    ])
    .await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("one").await;
    h.turn().await;
    settled(&mut h).await;
    let id = only_id(&store);
    let snapshot = std::fs::read(store.path_of(&id)).unwrap();
    let after_one = len(&store.journal_of(&id));
    assert!(after_one > 200_000, "the long reply is in the journal");
    h.prompt("two").await;
    h.turn().await;
    settled(&mut h).await;
    let after_two = len(&store.journal_of(&id));
    assert_eq!(std::fs::read(store.path_of(&id)).unwrap(), snapshot);
    // The second turn's records hold its prompt and reply, not the
    // first turn's long reply again.
    assert!(after_two - after_one < 10_000, "{after_one} → {after_two}");
    let saved = store.load(&id).unwrap();
    assert_eq!(saved.messages.len(), 5);
    assert_eq!(saved.damage, None);

    // Quitting folds the journal into the snapshot.
    h.prompt("three").await;
    h.turn().await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    assert_eq!(len(&store.journal_of(&id)), 0);
    let folded = store.load(&id).unwrap();
    assert_eq!(folded.messages.len(), 7);
    assert_eq!(folded.log[..saved.log.len()], saved.log[..]);
}

/// `kill -9` while the writer appended a record leaves it cut short: the
/// session resumes with everything saved before it, a notice says what
/// was left out, and what is saved next is read after it.
#[tokio::test]
async fn a_last_record_cut_short_is_left_out_with_a_notice_and_the_session_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
    ])
    .await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("first").await;
    h.turn().await;
    h.prompt("second").await;
    h.turn().await;
    settled(&mut h).await;
    let id = only_id(&store);
    // The files as a crash leaves them: copied while the agent runs, the
    // last record cut within.
    let crashed = SessionStore::at(home.path().join("crashed"));
    std::fs::create_dir_all(crashed.dir()).unwrap();
    std::fs::copy(store.path_of(&id), crashed.path_of(&id)).unwrap();
    let journal = std::fs::read(store.journal_of(&id)).unwrap();
    let last_start = journal[..journal.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let cut = last_start + (journal.len() - last_start) / 2;
    std::fs::write(crashed.journal_of(&id), &journal[..cut]).unwrap();
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();

    let whole = store.load(&id).unwrap();
    let recovered = crashed.load(&id).unwrap();
    let damage = recovered.damage.clone().expect("the cut is said");
    assert_eq!(damage.bytes, (cut - last_start) as u64);
    assert_eq!(recovered.seq + 1, whole.seq);
    // The last record was the second turn's end: its reply is lost, its
    // prompt was saved before.
    assert_eq!(
        recovered.messages[..],
        whole.messages[..whole.messages.len() - 1]
    );

    let server = ScriptedServer::start(vec![Reply::text(&["third answer"])]).await;
    let mut h = start_saving(
        &server,
        project.path(),
        &crashed,
        OpenSession::Resume(id.clone()),
    );
    let opened = h
        .until(|e| matches!(e, AgentEvent::SessionOpened { .. }))
        .await;
    h.prompt("third").await;
    let events = h.turn().await;
    let said = system_texts(&opened)
        .into_iter()
        .chain(system_texts(&events))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(said.contains(&id) && said.contains("cut short"), "{said}");
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    let after = crashed.load(&id).unwrap();
    assert_eq!(after.damage, None);
    let texts: Vec<&str> = after
        .messages
        .iter()
        .filter_map(|m| m.content.as_deref())
        .collect();
    assert_eq!(
        texts[1..],
        ["first", "first answer", "second", "third", "third answer"]
    );
}
