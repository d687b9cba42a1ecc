//! The session file loader: any bytes in a session file are loaded or
//! refused with an error, never a panic, and the file is left exactly as
//! it was (a damaged session is never overwritten or removed by reading).
use std::sync::LazyLock;

use dashfloat::session::{SessionStore, check_conversation};

const ID: &str = "20261202-120000-f0f0f0";

static STORE: LazyLock<(tempfile::TempDir, SessionStore)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::at(dir.path().join("sessions"));
    std::fs::create_dir_all(store.dir()).expect("sessions dir");
    (dir, store)
});

/// The session file's bytes.
pub fn run(bytes: &[u8]) {
    let store = &STORE.1;
    let path = store.dir().join(format!("{ID}.json"));
    std::fs::write(&path, bytes).expect("write the session file");
    if let Ok(saved) = store.load(ID) {
        // What loads can be resumed: its conversation is valid.
        assert!(check_conversation(&saved.messages).is_ok());
    }
    let _ = store.list(None);
    assert_eq!(std::fs::read(&path).expect("read it back"), bytes);
}
