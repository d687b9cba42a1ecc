//! The exact-repeat detector: canonical calls counted per session, notices
//! at 3, 5 and 8, reset by the person's message, bounded.

use dashfloat::agent::{Repeat, RepeatDetector};

use dashfloat::bounds::REPEAT_MAX_KEYS;

use dashfloat::tools::{Effect, Registry};

use crate::support::calls::{arguments, validate};
use crate::support::dynamic::Echo;

/// Counts `args` for `name` as the agent does: as validated when they are.
fn record(d: &mut RepeatDetector, name: &str, args: &str) -> Repeat {
    let valid = validate(name, args).ok();
    d.record(
        name,
        RepeatDetector::key(name, &arguments(args), valid.as_ref()),
    )
}

fn notices(d: &mut RepeatDetector, name: &str, args: &str, times: usize) -> Vec<usize> {
    (1..=times)
        .filter_map(|n| record(d, name, args).notice.map(|_| n))
        .collect()
}

#[test]
fn notices_come_at_three_five_and_eight() {
    let mut d = RepeatDetector::default();
    assert_eq!(
        notices(&mut d, "read_file", r#"{"path":"a"}"#, 10),
        vec![3, 5, 8]
    );
}

#[test]
fn key_order_and_spacing_do_not_make_a_different_call() {
    let mut d = RepeatDetector::default();
    record(&mut d, "read_file", r#"{"path":"a","limit":5}"#);
    record(&mut d, "read_file", r#"{ "limit": 5, "path": "a" }"#);
    let third = record(&mut d, "read_file", r#"{"limit":5,"path":"a"}"#)
        .notice
        .unwrap();
    assert!(third.contains("3 times"), "{third}");
}

/// The 1.5B alternated `list_directory .` and `./`, which counted apart
/// and put the notices off. A call is compared as validated: defaults
/// filled in and its path in a normal form.
#[test]
fn one_place_written_differently_is_one_call() {
    for (tool, forms) in [
        (
            "list_directory",
            [r#"{}"#, r#"{"path":"./"}"#, r#"{"path":"."}"#],
        ),
        (
            "read_file",
            [
                r#"{"path":"./src/a.rs"}"#,
                r#"{"path":"src//a.rs"}"#,
                r#"{"path":"src/./a.rs","offset":1}"#,
            ],
        ),
        (
            "execute_command",
            [
                r#"{"command":"ls"}"#,
                r#"{"command":"ls","cwd":"./"}"#,
                r#"{"cwd":".","command":"ls"}"#,
            ],
        ),
    ] {
        let mut d = RepeatDetector::default();
        let notices: Vec<bool> = forms
            .iter()
            .map(|args| record(&mut d, tool, args).notice.is_some())
            .collect();
        assert_eq!(notices, [false, false, true], "{tool} {forms:?}");
    }
    // `..` stays: what it names depends on links.
    let mut d = RepeatDetector::default();
    let keys: Vec<String> = [r#"{"path":"a/../b"}"#, r#"{"path":"b"}"#]
        .iter()
        .map(|args| record(&mut d, "read_file", args).key)
        .collect();
    assert_ne!(keys[0], keys[1]);
}

/// A run-time tool's call has no typed form: it is compared by its
/// arguments as validated, keys sorted at every level.
#[test]
fn a_run_time_tools_call_is_one_call_whatever_its_key_order() {
    let mut registry = Registry::builtin();
    registry
        .register(Echo::named("echo", Effect::Reads))
        .unwrap();
    let mut d = RepeatDetector::default();
    let notices: Vec<bool> = [
        r#"{"text":"a","times":2}"#,
        r#"{ "times": 2, "text": "a" }"#,
        r#"{"times":2,"text":"a"}"#,
    ]
    .iter()
    .map(|args| {
        let args = arguments(args);
        let valid = registry.validate("echo", &args).ok();
        assert!(valid.is_some());
        let key = RepeatDetector::key("echo", &args, valid.as_ref());
        d.record("echo", key).notice.is_some()
    })
    .collect();
    assert_eq!(notices, [false, false, true]);
}

#[test]
fn different_arguments_or_tools_count_apart() {
    let mut d = RepeatDetector::default();
    for _ in 0..2 {
        assert!(
            record(&mut d, "read_file", r#"{"path":"a"}"#)
                .notice
                .is_none()
        );
        assert!(
            record(&mut d, "read_file", r#"{"path":"b"}"#)
                .notice
                .is_none()
        );
        assert!(
            record(&mut d, "list_directory", r#"{"path":"a"}"#)
                .notice
                .is_none()
        );
    }
}

#[test]
fn the_persons_message_resets_the_counts() {
    let mut d = RepeatDetector::default();
    record(&mut d, "x", "{}");
    record(&mut d, "x", "{}");
    d.reset();
    assert_eq!(notices(&mut d, "x", "{}", 3), vec![3]);
}

#[test]
fn the_table_is_bounded() {
    let mut d = RepeatDetector::default();
    for i in 0..REPEAT_MAX_KEYS {
        record(&mut d, "x", &format!("{{\"i\":{i}}}"));
    }
    record(&mut d, "x", r#"{"i":0}"#);
    // The table was full, so counting restarted: this is the first again.
    assert!(record(&mut d, "x", r#"{"i":0}"#).notice.is_none());
    assert!(record(&mut d, "x", r#"{"i":0}"#).notice.is_some());
}

#[test]
fn a_repeat_that_gives_the_same_result_is_unchanged_and_a_new_result_is_not() {
    let mut d = RepeatDetector::default();
    let first = record(&mut d, "read_file", r#"{"path":"a"}"#);
    assert!(
        !d.unchanged(&first.key, "one"),
        "nothing to compare with yet"
    );
    let second = record(&mut d, "read_file", r#"{ "path": "a" }"#);
    assert_eq!(second.key, first.key);
    assert!(d.unchanged(&second.key, "one"));
    assert!(!d.unchanged(&second.key, "two"), "the file changed");
    let other = record(&mut d, "read_file", r#"{"path":"b"}"#);
    assert!(!d.unchanged(&other.key, "two"), "another call");
    d.reset();
    let again = record(&mut d, "read_file", r#"{"path":"a"}"#);
    assert!(!d.unchanged(&again.key, "two"), "the person wrote since");
}
