//! Fuzz target `tool_calls`: the check in `checks/tool_calls.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::tool_calls::run(data));
