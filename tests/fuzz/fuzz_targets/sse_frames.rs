//! Fuzz target `sse_frames`: the check in `checks/sse_frames.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::sse_frames::run(data));
