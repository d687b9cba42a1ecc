//! The tools' own logic on the second kind of workspace (ADR 0026): the
//! same calls on the same files, once in a temporary directory
//! ([`LocalWorkspace`]) and once in memory ([`MemoryWorkspace`]), give
//! the model the same results and leave the same files. Confinement and
//! security stay tested on the local workspace alone.

use std::sync::Arc;

use crate::support::calls::validate;
use dashfloat::tools::{MemoryWorkspace, ToolContext, Workspace, execute};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{json_of, plant};

/// The project both workspaces hold.
const FILES: &[(&str, &str)] = &[
    ("README.md", "# Demo\n\nA small project.\n"),
    (
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    ),
    (
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", demo::add(1, 2));\n}\n",
    ),
    ("docs/notes.txt", "one\ntwo\nthree\nfour\nfive\n"),
    ("target/debug/built.rs", "fn built() {}\n"),
];

/// Calls made in order, the model's view of each compared: reads,
/// listings and searches, and edits and writes, whose files are compared
/// after.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": "src/lib.rs"})),
        (
            "read_file",
            json!({"path": "docs/notes.txt", "offset": 2, "limit": 2}),
        ),
        ("read_file", json!({"path": "missing.txt"})),
        ("read_file", json!({"path": "../outside.txt"})),
        ("list_directory", json!({"path": "."})),
        ("list_directory", json!({"path": "src"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "pub fn \\w+", "path": "src"})),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "search_block": "a - b", "replace_block": "a - b - 0"}),
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "search_block": "not there", "replace_block": "x"}),
        ),
        (
            "write_file",
            json!({"path": "docs/new/todo.md", "content": "- write tests\n"}),
        ),
        ("read_file", json!({"path": "docs/new/todo.md"})),
    ]
}

/// What each call of [`calls`] gives in `ws`.
async fn results(ws: Arc<dyn Workspace>) -> Vec<Value> {
    let ctx = ToolContext::with_workspace(ws);
    let mut out = Vec::new();
    for (tool, args) in calls() {
        let call = validate(tool, &args.to_string()).unwrap();
        out.push(json_of(
            execute(&call, &ctx, CancellationToken::new()).await,
        ));
    }
    out
}

#[tokio::test]
async fn the_tools_give_the_same_results_in_memory_as_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    plant(&root, FILES);
    let memory = FILES
        .iter()
        .fold(MemoryWorkspace::new("/project"), |ws, (path, text)| {
            ws.with_file(path, text.as_bytes())
        });
    let on_disk = results(Arc::new(dashfloat::tools::LocalWorkspace::new(&root))).await;
    let in_memory = results(Arc::new(memory.clone())).await;
    for ((call, disk), held) in calls().iter().zip(&on_disk).zip(&in_memory) {
        assert_eq!(disk, held, "{call:?}");
    }
    // The calls did something: a read, a refusal, an edit that landed.
    assert_eq!(on_disk[0]["ok"], true);
    assert_eq!(on_disk[3]["code"], "path_denied");
    assert_eq!(on_disk[8]["ok"], true, "{}", on_disk[8]);
    for file in ["src/lib.rs", "docs/new/todo.md"] {
        let disk = std::fs::read(root.join(file)).unwrap();
        assert_eq!(memory.file(file), Some(disk), "{file}");
    }
    assert!(
        String::from_utf8(memory.file("src/lib.rs").unwrap())
            .unwrap()
            .contains("a - b - 0")
    );
}

#[tokio::test]
async fn a_command_in_memory_is_a_failure_result_not_a_crash() {
    let ws: Arc<dyn Workspace> = Arc::new(MemoryWorkspace::new("/project"));
    let ctx = ToolContext::with_workspace(ws);
    let call = validate("execute_command", r#"{"command":"ls"}"#).unwrap();
    let v = json_of(execute(&call, &ctx, CancellationToken::new()).await);
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("runs no processes"),
        "{v}"
    );
}
