//! Fuzz target `text_calls`: the check in `checks/text_calls.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::text_calls::run(data));
