//! Argument validation of every tool with arbitrary JSON (and text that
//! is not JSON), as the stream hands a call on: the text assembled and
//! parsed once by the accumulator, then validated by the registry. A call
//! is accepted or refused with a failure, never a panic, and an accepted
//! call's summary and preview path never panic.
use std::sync::LazyLock;

use dashfloat::llm::tool_calls::ToolCallAccumulator;
use dashfloat::llm::wire::{WireFunctionDelta, WireToolCallDelta};
use dashfloat::tools::{Registry, ToolContext, preview};

/// The built-in tools, their schemas compiled once.
static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::builtin);

/// Every tool's name, from the catalogue the model is sent.
static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    REGISTRY
        .definitions()
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
    let mut calls = ToolCallAccumulator::new();
    let fragment = WireToolCallDelta {
        index: Some(0),
        id: None,
        kind: None,
        function: Some(WireFunctionDelta {
            name: Some(name.to_owned()),
            arguments: Some(arguments.into_owned()),
        }),
    };
    if calls.feed(&[fragment]).is_err() {
        return;
    }
    for request in calls.finish().into_iter().map(|c| c.into_request()) {
        if let Ok(call) = REGISTRY.validate(&request.name, &request.arguments) {
            let _ = call.summary();
            let _ = preview(&call, &PROJECT.1);
        }
    }
}
