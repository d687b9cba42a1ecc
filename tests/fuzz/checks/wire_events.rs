//! Another wire's events read as chat frames (ADR 0052): whatever each
//! event's data holds, the reader makes frames of it without panicking,
//! at most two an event, and a frame that ends the reply (done or
//! failed) is the last its event makes. The first byte picks the wire
//! (even: Anthropic Messages, odd: OpenAI Responses); each line after it
//! is one event's data.
use dashfloat::llm::wires::{Frame, Wire};

pub fn run(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let wire = if which % 2 == 0 {
        Wire::Anthropic
    } else {
        Wire::Responses
    };
    let mut reader = wire.reader().expect("a wire that is not chat has a reader");
    let text = String::from_utf8_lossy(rest);
    let mut frames = Vec::new();
    for line in text.split('\n') {
        reader.read(line, &mut frames);
        assert!(frames.len() <= 2, "{line:?} made {frames:?}");
        let end = frames
            .iter()
            .position(|f| matches!(f, Frame::Done | Frame::Failed(_)));
        if let Some(end) = end {
            assert_eq!(end, frames.len() - 1, "{line:?} made {frames:?}");
        }
        frames.clear();
    }
}
