//! Fuzz target `analyser`: the check in `checks/analyser.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::analyser::run(data));
