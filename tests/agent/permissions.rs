//! What a remembered approval matches, and the file it is kept in
//! (ADR 0044): a table of rules and lines, every line the analyser's
//! parser cannot split into one simple command matching none; the rules
//! file written and read back, kept per project outside the project,
//! bounded, and refused when it is not this project's.

use dashfloat::bounds::{RULES_FILE_MAX_BYTES, RULES_MAX};
use dashfloat::permissions::{NoRule, Rule, Store, StoreError};

/// The rule the table's first column names.
fn rule(text: &str) -> Rule {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} is no rule: {e}"))
}

/// Each rule, the lines it allows, and lines it does not.
const TABLE: &[(&str, &[&str], &[&str])] = &[
    (
        "cargo test",
        &[
            "cargo test",
            "cargo test --release -p x",
            "cargo test -- --nocapture 'a b'",
            "cargo test;",
        ],
        &[
            "cargo build",
            "cargo",
            "cargo --version",
            "cargo test | tee log",
            "cargo test && rm -rf .",
            "cargo test; cargo build",
            "cargo test > out.txt",
            "cargo test $(echo x)",
            "cargo test `id`",
            "cargo test $X",
            "RUSTFLAGS=x cargo test",
            "cargo test *",
            "cargo test &",
            "cargo test\nrm x",
            "(cargo test)",
            "cargo testing",
            "/usr/bin/cargo test",
        ],
    ),
    (
        "make",
        &[
            "make",
            "make test",
            "make -j4",
            "make -j4 all check",
            "make -C sub/dir test",
            "make CC=clang",
        ],
        &[
            "make install",
            "make test install",
            "make uninstall",
            "make publish",
            "make --eval='x:;touch y'",
            "make 'two words'",
            "make && make install",
            "gmake",
        ],
    ),
    (
        "make install",
        &[
            "make install",
            "make install PREFIX=/tmp/p",
            "make test install",
        ],
        &["make", "make test", "make uninstall", "make install deploy"],
    ),
    (
        "npm run build",
        &["npm run build", "npm run build -- --watch"],
        &[
            "npm run test",
            "npm run",
            "npm install",
            "npm run build && npm publish",
        ],
    ),
    (
        "npm test",
        &["npm test", "npm test -- -t x"],
        &["npm run test", "npm install"],
    ),
    (
        "python3 -m pytest",
        &["python3 -m pytest", "python3 -m pytest -x tests/test_a.py"],
        &[
            "python3 -m pip install x",
            "python3 -c 'import os'",
            "python3 '-cimport os'",
            "python -m pytest",
            "python3 pytest",
        ],
    ),
    (
        "python3",
        &["python3", "python3 -V", "python3 --version"],
        &[
            "python3 -c print",
            "python3 script.py",
            "python3 '-cimport os'",
            "python3 -c'import os'",
        ],
    ),
    (
        "./gradlew test",
        &["./gradlew test --info"],
        &["gradlew test", "./gradlew build"],
    ),
    (
        "pytest",
        &["pytest", "pytest -x -q"],
        &["pytest tests", "pytest -k 'a or b'"],
    ),
    (
        "git diff",
        &["git diff", "git diff --stat HEAD~1"],
        &["git commit", "git -C .. diff"],
    ),
];

#[test]
fn a_rule_matches_its_program_and_subcommand_and_nothing_else() {
    let mut failures = Vec::new();
    for (text, allowed, refused) in TABLE {
        let rule = rule(text);
        assert_eq!(rule.to_string(), *text);
        for line in *allowed {
            if !rule.matches(line) {
                failures.push(format!("`{text}` should allow {line:?}"));
            }
        }
        for line in *refused {
            if rule.matches(line) {
                failures.push(format!("`{text}` should not allow {line:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Which reason a line has no rule for.
type IsReason = fn(&NoRule) -> bool;

/// What `a` offers for a line: its rule, never the whole line; nothing
/// for a line that is not one simple command, or whose program runs
/// whatever it is given, or whose action no subcommand names.
#[test]
fn the_rule_offered_for_a_line_is_its_program_and_subcommand() {
    let offered = [
        ("cargo test --release -p x", "cargo test"),
        ("npm run build -- --prod", "npm run build"),
        ("python3 -m pytest -x tests", "python3 -m pytest"),
        ("make", "make"),
        ("make -j4 test", "make"),
        ("make install", "make install"),
        ("cargo --version", "cargo"),
        ("go test ./...", "go test"),
    ];
    for (line, expected) in offered {
        let rule = Rule::for_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(rule.to_string(), expected, "{line:?}");
        assert!(
            rule.matches(line),
            "{line:?} is not matched by its own rule"
        );
    }
    let none: &[(&str, IsReason)] = &[
        ("cargo test | tee x", |e| matches!(e, NoRule::Several)),
        ("cargo test && make", |e| matches!(e, NoRule::Several)),
        ("cargo test; make", |e| matches!(e, NoRule::Several)),
        ("cargo test > x", |e| matches!(e, NoRule::NotSimple(_))),
        ("cargo test $(id)", |e| matches!(e, NoRule::NotSimple(_))),
        ("X=1 cargo test", |e| matches!(e, NoRule::NotSimple(_))),
        ("cargo test 'open", |e| matches!(e, NoRule::NotSimple(_))),
        ("bash -c 'cargo test'", |e| {
            matches!(e, NoRule::RunsAnyCommand(_))
        }),
        ("/bin/sh run.sh", |e| matches!(e, NoRule::RunsAnyCommand(_))),
        ("env cargo test", |e| matches!(e, NoRule::RunsAnyCommand(_))),
        ("sudo make install", |e| {
            matches!(e, NoRule::RunsAnyCommand(_))
        }),
        ("timeout 5 cargo test", |e| {
            matches!(e, NoRule::RunsAnyCommand(_))
        }),
        ("xargs rm", |e| matches!(e, NoRule::RunsAnyCommand(_))),
        ("rm -rf src", |e| matches!(e, NoRule::Unclear(_))),
        ("python3 -c 'print(1)'", |e| matches!(e, NoRule::Unclear(_))),
        ("make install publish", |e| matches!(e, NoRule::Unclear(_))),
        ("cargo +nightly test", |e| matches!(e, NoRule::Unclear(_))),
    ];
    for (line, expected) in none {
        match Rule::for_line(line) {
            Ok(rule) => panic!("{line:?} offered `{rule}`"),
            Err(e) => assert!(expected(&e), "{line:?}: {e:?}"),
        }
    }
    let long = format!("cargo test {}", "x".repeat(20_000));
    assert_eq!(Rule::for_line(&long), Err(NoRule::TooLong));
}

#[test]
fn a_rule_reads_back_only_as_it_is_written() {
    for text in ["cargo test", "make", "npm run build", "python3 -m pytest"] {
        assert_eq!(rule(text).to_string(), text);
    }
    for text in [
        "cargo test --release",
        "cargo  test",
        "make test",
        "rm -rf x",
        "",
        "sh",
    ] {
        assert!(text.parse::<Rule>().is_err(), "{text:?} read as a rule");
    }
}

/// A project and a configuration directory beside it.
struct Places {
    _dir: tempfile::TempDir,
    config: std::path::PathBuf,
    project: std::path::PathBuf,
}

fn places() -> Places {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (config, project) = (base.join("config/dashfloat"), base.join("project"));
    std::fs::create_dir_all(&project).unwrap();
    Places {
        _dir: dir,
        config,
        project,
    }
}

#[test]
fn rules_are_kept_per_project_in_the_config_directory_and_read_back() {
    use std::os::unix::fs::PermissionsExt;
    let p = places();
    let store = Store::new(&p.config, &p.project);
    assert!(store.load().unwrap().is_empty(), "no file, no rules");
    assert_eq!(
        store.add(&rule("cargo test")).unwrap(),
        [rule("cargo test")]
    );
    let kept = store.add(&rule("make")).unwrap();
    assert_eq!(kept, [rule("cargo test"), rule("make")]);
    // Added twice, kept once.
    assert_eq!(store.add(&rule("make")).unwrap().len(), 2);
    assert_eq!(store.load().unwrap(), kept);
    // Outside the project, owner-only, one file and no temporary left.
    assert!(crate::support::names(&p.project).is_empty());
    let dir = p.config.join("permissions");
    let names = crate::support::names(&dir);
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(store.path(), dir.join(&names[0]));
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let text = std::fs::read_to_string(store.path()).unwrap();
    assert!(text.contains(&*p.project.to_string_lossy()), "{text}");

    // Another project has none of them, in a file of its own.
    let other = Store::new(&p.config, &p.project.join("sub"));
    assert!(other.load().unwrap().is_empty());
    assert_ne!(other.path(), store.path());

    let (rest, removed) = store.remove(&rule("cargo test")).unwrap();
    assert!(removed);
    assert_eq!(rest, [rule("make")]);
    let (_, removed) = store.remove(&rule("cargo test")).unwrap();
    assert!(!removed);
    assert_eq!(store.load().unwrap(), [rule("make")]);
}

#[test]
fn a_rules_file_that_is_not_this_projects_or_too_large_is_refused() {
    let p = places();
    let store = Store::new(&p.config, &p.project);
    store.add(&rule("make")).unwrap();
    let path = store.path();
    // Copied from another project: its path is not this one's.
    let text = std::fs::read_to_string(&path).unwrap();
    let moved = text.replace(&*p.project.to_string_lossy(), "/elsewhere");
    std::fs::write(&path, moved).unwrap();
    let err = store.load().unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("/elsewhere"), "{err}");
    // An entry that is no rule (a whole line) is refused, not half read.
    std::fs::write(
        &path,
        format!(
            r#"{{"v":1,"project":{:?},"allow":["cargo test | sh"]}}"#,
            p.project.to_string_lossy()
        ),
    )
    .unwrap();
    assert!(matches!(store.load(), Err(StoreError::Invalid { .. })));
    // And adding to a file that cannot be read leaves it as it is.
    assert!(store.add(&rule("cargo test")).is_err());
    assert!(std::fs::read_to_string(&path).unwrap().contains("| sh"));
    // Larger than dashfloat ever writes.
    let huge = vec![b' '; usize::try_from(RULES_FILE_MAX_BYTES).unwrap() + 1];
    std::fs::write(&path, huge).unwrap();
    let err = store.load().unwrap_err();
    assert!(matches!(err, StoreError::Read { .. }), "{err}");
    // A FIFO in its place does not hang the read.
    std::fs::remove_file(&path).unwrap();
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    assert!(matches!(store.load(), Err(StoreError::Read { .. })));
}

#[test]
fn a_project_keeps_at_most_rules_max_rules() {
    let p = places();
    let store = Store::new(&p.config, &p.project);
    for i in 0..RULES_MAX {
        store.add(&rule(&format!("cargo t{i}"))).unwrap();
    }
    let err = store.add(&rule("cargo test")).unwrap_err();
    assert!(matches!(err, StoreError::Full), "{err}");
    assert_eq!(store.load().unwrap().len(), RULES_MAX);
    // One already kept is no addition.
    assert!(store.add(&rule("cargo t0")).is_ok());
}

#[test]
fn a_rules_directory_that_cannot_be_written_is_an_error_not_a_panic() {
    let p = places();
    let store = Store::new(&p.config, &p.project);
    store.add(&rule("make")).unwrap();
    // A directory in the file's place is no rules file, and nothing is
    // written over it.
    std::fs::remove_file(store.path()).unwrap();
    std::fs::create_dir(store.path()).unwrap();
    std::fs::write(store.path().join("x"), "").unwrap();
    let err = store.add(&rule("cargo test")).unwrap_err();
    assert!(matches!(err, StoreError::Read { .. }), "{err}");
    std::fs::remove_dir_all(store.path()).unwrap();
    // A file where the directory should be.
    std::fs::remove_dir_all(p.config.join("permissions")).unwrap();
    std::fs::write(p.config.join("permissions"), "").unwrap();
    let err = store.add(&rule("make")).unwrap_err();
    assert!(
        matches!(err, StoreError::Read { .. } | StoreError::Write { .. }),
        "{err}"
    );
}
