//! Fuzz target `wire_events`: the check in `checks/wire_events.rs`.
#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::wire_events::run(data));
