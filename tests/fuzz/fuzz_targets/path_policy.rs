//! Fuzz target `path_policy`: the check in `checks/path_policy.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::path_policy::run(data));
