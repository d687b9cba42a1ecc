//! list_directory: sorted, marked, bounded, non-UTF-8 names kept.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dashfloat::bounds::LIST_MAX_ENTRIES;
use serde_json::{Value, json};

async fn list(dir: &Path, args: &str) -> Value {
    crate::run(dir, "list_directory", args).await
}

#[tokio::test]
async fn entries_are_sorted_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("b.txt"), "12345").unwrap();
    std::fs::write(dir.path().join("A.md"), "").unwrap();
    std::os::unix::fs::symlink("/etc", dir.path().join("link")).unwrap();
    let v = list(dir.path(), "{}").await;
    assert_eq!(
        v,
        json!({
            "ok": true,
            "path": ".",
            "entries": [
                {"name": "A.md", "kind": "file", "size": 0},
                {"name": "b.txt", "kind": "file", "size": 5},
                {"name": "link", "kind": "symlink", "target": "/etc"},
                {"name": "src/", "kind": "dir"},
            ],
            "total": 4,
            "truncated": false,
        })
    );
}

#[tokio::test]
async fn the_entry_cap_at_below_and_above() {
    for (n, truncated) in [
        (LIST_MAX_ENTRIES - 1, false),
        (LIST_MAX_ENTRIES, false),
        (LIST_MAX_ENTRIES + 1, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            std::fs::write(dir.path().join(format!("f{i:05}")), "").unwrap();
        }
        let v = list(dir.path(), "{}").await;
        let entries = v["entries"].as_array().unwrap();
        assert_eq!(entries.len(), n.min(LIST_MAX_ENTRIES), "{n}");
        assert_eq!(v["total"], n, "{n}");
        assert_eq!(v["truncated"], truncated, "{n}");
        // The head of the sorted names, in order.
        assert_eq!(entries[0]["name"], "f00000");
        assert_eq!(
            entries[entries.len() - 1]["name"],
            format!("f{:05}", n.min(LIST_MAX_ENTRIES) - 1)
        );
    }
}

#[tokio::test]
async fn a_non_utf8_name_is_shown_lossily_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(OsStr::from_bytes(b"caf\xe9")), "").unwrap();
    let v = list(dir.path(), "{}").await;
    assert_eq!(
        v["entries"],
        json!([{"name": "caf\u{FFFD}", "kind": "file", "size": 0, "lossy": true}])
    );
}

#[tokio::test]
async fn a_subdirectory_is_listed_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    let v = list(dir.path(), r#"{"path":"a"}"#).await;
    assert_eq!(v["entries"], json!([{"name": "b/", "kind": "dir"}]));
}

#[tokio::test]
async fn a_file_is_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "").unwrap();
    let v = list(dir.path(), r#"{"path":"f"}"#).await;
    assert_eq!(v["code"], "execution_failed");
}

#[tokio::test]
async fn listing_outside_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        list(dir.path(), r#"{"path":".."}"#).await["code"],
        "path_denied"
    );
}
