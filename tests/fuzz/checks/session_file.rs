//! The session files' loader: any bytes in a session's snapshot, or in
//! the journal beside a good snapshot, are loaded or refused with an
//! error, never a panic; a journal's unusable end is left out, never
//! more; and the files are left exactly as they were (a damaged session
//! is never overwritten or removed by reading).
use std::sync::LazyLock;

use dashfloat::llm::wire::{Message, Role};
use dashfloat::session::{SessionRecord, SessionStore, check_conversation};
use dashfloat::tools::CheckpointLog;

const ID: &str = "20261202-120000-f0f0f0";
/// The session whose journal is the bytes.
const JOURNALLED: &str = "20261202-120000-0f0f0f";

static STORE: LazyLock<(tempfile::TempDir, SessionStore)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::at(dir.path().join("sessions"));
    std::fs::create_dir_all(store.dir()).expect("sessions dir");
    let messages = [Message::new(Role::System, "system prompt")];
    let snapshot = SessionRecord {
        id: JOURNALLED,
        seq: 0,
        created: 1,
        updated: 1,
        directory: "/p",
        model: "m",
        base_url: "http://127.0.0.1:1/v1",
        wire: dashfloat::llm::wires::Wire::Chat,
        title: "t",
        usage: Default::default(),
        last_usage: None,
        messages: &messages,
        pending: &[],
        log: &[],
        log_first: 0,
        checkpoints: &CheckpointLog::default(),
    };
    let bytes = snapshot.encode().expect("a snapshot encodes");
    store.write(JOURNALLED, &bytes).expect("the snapshot");
    (dir, store)
});

/// The session file's bytes, then the same bytes as a journal.
pub fn run(bytes: &[u8]) {
    let store = &STORE.1;
    let path = store.path_of(ID);
    std::fs::write(&path, bytes).expect("write the session file");
    if let Ok(saved) = store.load(ID) {
        // What loads can be resumed: its conversation is valid.
        assert!(check_conversation(&saved.messages).is_ok());
    }
    let _ = store.list(None);
    assert_eq!(std::fs::read(&path).expect("read it back"), bytes);

    let journal = store.journal_of(JOURNALLED);
    std::fs::write(&journal, bytes).expect("write the journal");
    if let Ok(saved) = store.load(JOURNALLED) {
        assert!(check_conversation(&saved.messages).is_ok());
        // Only the end of the journal is ever left out.
        let left_out = saved.damage.map_or(0, |d| d.bytes);
        assert!(left_out <= bytes.len() as u64);
    }
    assert_eq!(std::fs::read(&journal).expect("read it back"), bytes);
}
