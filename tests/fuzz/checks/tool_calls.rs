//! The tool-call accumulator fed any sequence of fragments: it never
//! panics, and every call it assembles has an id of its own, so every
//! call can be answered.
use arbitrary::{Arbitrary, Unstructured};
use dashfloat::llm::tool_calls::ToolCallAccumulator;
use dashfloat::llm::wire::{WireFunctionDelta, WireToolCallDelta};

#[derive(Debug, Arbitrary)]
struct Fragment {
    index: Option<u8>,
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    function: bool,
}

impl From<Fragment> for WireToolCallDelta {
    fn from(f: Fragment) -> Self {
        WireToolCallDelta {
            index: f.index.map(u32::from),
            id: f.id,
            kind: f.kind,
            function: f.function.then_some(WireFunctionDelta {
                name: f.name,
                arguments: f.arguments,
            }),
        }
    }
}

/// The fragments as the JSON of a list of chunks' `delta.tool_calls`
/// (as recorded), or else as arbitrary fragments made from the bytes.
pub fn run(data: &[u8]) {
    let chunks: Vec<Vec<WireToolCallDelta>> = match serde_json::from_slice(data) {
        Ok(chunks) => chunks,
        Err(_) => match Unstructured::new(data).arbitrary::<Vec<Vec<Fragment>>>() {
            Ok(chunks) => chunks
                .into_iter()
                .map(|chunk| chunk.into_iter().map(Into::into).collect())
                .collect(),
            Err(_) => return,
        },
    };
    let mut acc = ToolCallAccumulator::new();
    for deltas in chunks {
        if acc.feed(&deltas).is_err() {
            // A refused fragment ends the reply; what was taken stays whole.
            break;
        }
        let _ = acc.announced();
    }
    let calls = acc.finish();
    assert!(
        calls.iter().all(|c| !c.id.is_empty()),
        "a call without an id"
    );
    let mut ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), calls.len(), "two assembled calls share an id");
}
