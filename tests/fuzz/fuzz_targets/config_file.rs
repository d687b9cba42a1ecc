//! Fuzz target `config_file`: the check in `checks/config_file.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::config_file::run(data));
