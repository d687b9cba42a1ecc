//! Fuzz target `session_file`: the check in `checks/session_file.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::session_file::run(data));
