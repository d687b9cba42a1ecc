//! Fuzz target `tool_arguments`: the check in `checks/tool_arguments.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::tool_arguments::run(data));
