//! Fuzz target `markdown`: the check in `checks/markdown.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::markdown::run(data));
