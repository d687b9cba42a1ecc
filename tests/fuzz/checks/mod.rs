//! The fuzz targets' checks, one module each, shared by the fuzz targets
//! (`cargo +nightly fuzz run TARGET --fuzz-dir tests/fuzz`) and the replay
//! of their seeds and every crash found (`tests/replay`). Each takes the
//! raw bytes of one input. ADR 0036.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod analyser;
pub mod config_file;
pub mod markdown;
pub mod path_policy;
pub mod session_file;
pub mod sse_frames;
pub mod text_calls;
pub mod tool_arguments;
pub mod tool_calls;
pub mod wire_events;
