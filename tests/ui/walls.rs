//! The module walls of ADR 0001, checked rather than reviewed: the UI
//! takes what it needs from `protocol` and imports no `tools`, `llm`,
//! `session` or `agent` module; `tools` imports neither `agent` nor `ui`;
//! `llm` does not import `tools`.

use std::path::Path;

/// Each walled module and the modules it must not name.
const WALLS: &[(&str, &[&str])] = &[
    ("ui", &["tools", "llm", "session", "agent"]),
    ("tools", &["agent", "ui"]),
    ("llm", &["tools", "agent", "ui"]),
];

/// The crate's modules `code` names: `crate::x` paths, and the names in
/// a `use crate::{…}` group (on one line or across several).
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            names.extend(
                group[..end]
                    .split(',')
                    .map(|item| item.trim().split("::").next().unwrap_or("").to_owned()),
            );
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(rest[..end].to_owned());
        }
    }
    names
}

#[test]
fn no_module_reaches_over_its_wall() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut breaches = Vec::new();
    let mut scanned = 0;
    for (module, forbidden) in WALLS {
        let mut files = Vec::new();
        crate::support::rust_files(&src.join(module), &mut files);
        assert!(!files.is_empty(), "src/{module} has no files");
        for file in files {
            scanned += 1;
            let code = std::fs::read_to_string(&file).unwrap();
            for name in named_modules(&code) {
                if forbidden.contains(&name.as_str()) {
                    breaches.push(format!("{}: crate::{name}", file.display()));
                }
            }
        }
    }
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn the_scan_finds_plain_and_grouped_uses() {
    let code =
        "use crate::tools::x;\nuse crate::{protocol, llm::wire};\nfn f() { crate::session::now() }";
    assert_eq!(named_modules(code), ["tools", "protocol", "llm", "session"]);
}
