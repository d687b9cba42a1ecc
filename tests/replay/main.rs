//! The fuzz targets' seeds, and every input a fuzzing run found to fail,
//! replayed through the same checks as part of the test suite: a crash
//! found once stays fixed. Seeds live in `tests/fuzz/seeds/TARGET/`, the
//! inputs that failed in `tests/fuzz/regressions/TARGET/`. ADR 0036.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../fuzz/checks/mod.rs"]
mod checks;

use std::path::Path;

/// Runs `check` on every file of the target's seeds and regressions;
/// how many there were.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz");
    let mut count = 0;
    for kind in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails its check", file.display());
            count += 1;
        }
    }
    count
}

macro_rules! replayed {
    ($($target:ident),* $(,)?) => {$(
        #[test]
        fn $target() {
            let count = replay(stringify!($target), checks::$target::run);
            assert!(count > 0, "no seed for {}", stringify!($target));
        }
    )*};
}

replayed!(
    sse_frames,
    tool_calls,
    tool_arguments,
    text_calls,
    markdown,
    analyser,
    config_file,
    session_file,
    path_policy,
    wire_events,
);
