//! Argument validation of every tool with arbitrary JSON (and text that
//! is not JSON): a call is accepted or refused with a failure, never a
//! panic, and an accepted call's summary and preview path never panic.
use std::sync::LazyLock;

use dashfloat::tools::{ToolContext, definitions, preview, validate};

/// Every tool's name, from the catalogue the model is sent.
static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    definitions()
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
});

/// An empty project for previews, made once.
static PROJECT: LazyLock<(tempfile::TempDir, ToolContext)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let ctx = ToolContext::new(dir.path()).expect("context");
    (dir, ctx)
});

/// One byte choosing the tool, then the arguments' text.
pub fn run(data: &[u8]) {
    let Some((&pick, arguments)) = data.split_first() else {
        return;
    };
    let arguments = String::from_utf8_lossy(arguments);
    let names = &*NAMES;
    assert!(!names.is_empty());
    // A name off the list now and then: refused as unknown.
    let name = names
        .get(usize::from(pick) % (names.len() + 1))
        .map_or("no_such_tool", String::as_str);
    if let Ok(call) = validate(name, &arguments) {
        let _ = call.summary();
        let _ = preview(&call, &PROJECT.1);
    }
}
