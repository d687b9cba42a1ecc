//! The workspace seam stays a seam (ADR 0026): outside the local
//! workspace's own files, nothing in `src/tools/` touches the filesystem
//! or starts a process except through the `Workspace` trait.

use std::path::Path;

/// The local implementation (and the trait's own file, whose signatures
/// name `std::fs::File`), and the reaper, which reads `/proc` to manage
/// dashfloat's own children rather than the workspace's files.
const ALLOWED: &[&str] = &[
    "workspace.rs",
    "local.rs",
    "beneath.rs",
    "atomic.rs",
    "path_policy.rs",
    "walk.rs",
    "ignore_rules.rs",
    "reaper.rs",
];

/// What only the local implementation may write: filesystem and process
/// APIs, and the local helpers a tool would reach around the trait with.
const FORBIDDEN: &[&str] = &[
    "std::fs",
    "fs::",
    "File::",
    "OpenOptions",
    "Command::new",
    "process::Command",
    "pre_exec",
    "read_dir",
    "canonicalize",
    "symlink_metadata",
    "read_link",
    "WalkBuilder",
    "nix::fcntl",
    "nix::dir",
    "beneath::",
    "path_policy::",
    "walk::files",
    "super::atomic",
    "super::reaper",
];

/// The lines of `text` that use a forbidden name: code only, not comments,
/// re-exports or the unit tests at the end of a file (whose fixtures make
/// files with `std::fs`).
fn offences(text: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") || code.starts_with("pub use ") {
            continue;
        }
        found.extend(
            FORBIDDEN
                .iter()
                .filter(|word| uses(code, word))
                .map(|word| (n + 1, *word)),
        );
    }
    found
}

/// Whether `code` holds `word` where a name starts (`File::` in
/// `std::fs::File::open`, not in `ReadFile::NAME`).
fn uses(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn nothing_in_the_tools_reaches_around_the_workspace() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    let mut files = Vec::new();
    crate::support::rust_files(&tools, &mut files);
    for allowed in ALLOWED {
        assert!(
            tools.join(allowed).is_file(),
            "{allowed} is allowed but gone: update ALLOWED"
        );
    }
    let mut scanned = 0;
    let mut offenders = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&tools).unwrap();
        if ALLOWED.iter().any(|a| Path::new(a) == relative) {
            continue;
        }
        scanned += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for (line, word) in offences(&text) {
            offenders.push(format!("src/tools/{}:{line}: {word}", relative.display()));
        }
    }
    assert!(scanned >= 20, "only {scanned} files scanned");
    assert!(
        offenders.is_empty(),
        "file or process access outside the Workspace trait (go through ctx.workspace; ADR 0026):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_looks_for() {
    let local =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools/local.rs"))
            .unwrap();
    let words: Vec<_> = offences(&local).into_iter().map(|(_, w)| w).collect();
    for word in ["std::fs", "Command::new", "beneath::", "path_policy::"] {
        assert!(words.contains(&word), "{word} not seen in local.rs");
    }
    assert!(offences("// std::fs in a comment\n").is_empty());
    assert!(offences("#[cfg(test)]\nstd::fs::write(x, y)\n").is_empty());
    assert!(offences("const TOOL: &str = ReadFile::NAME;").is_empty());
    assert_eq!(offences("let f = File::open(p);"), [(1, "File::")]);
}
