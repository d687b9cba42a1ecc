//! The project's facts from its manifest: `Cargo.toml`, the Python
//! manifests (`python`), `package.json` and `go.mod`, tried in that order
//! — the first that names a package is the project's (else the first
//! found at all) — and the test command: the manifest's own
//! (`cargo test`, `npm test` for a `scripts.test`, pytest when it is
//! configured, `go test ./...`), else a Makefile's `test:` target, else
//! one that fits Python test files.

use std::path::Path;

use crate::tools::ProjectTop;

use super::python;
use super::read::Reader;
use super::text::{DESCRIPTION_MAX_CHARS, FACT_MAX_CHARS};
use super::{Facts, Stated};

/// The names a Makefile goes by, in the order `make` looks for them.
const MAKEFILES: [&str; 3] = ["GNUmakefile", "makefile", "Makefile"];

/// What `npm init` puts in `scripts.test`: no test command at all.
const NPM_PLACEHOLDER: &str = "no test specified";

/// The project's facts, as far as its files state them.
pub(super) fn facts(reader: &Reader<'_>, top: &ProjectTop) -> Facts {
    let mut first: Option<Facts> = None;
    let mut named: Option<Facts> = None;
    let tries: [&dyn Fn() -> Option<Facts>; 4] = [
        &|| cargo(reader),
        &|| python::package(reader, top),
        &|| node(reader, top),
        &|| go(reader),
    ];
    for found in tries.iter().filter_map(|manifest| manifest()) {
        if found.name.is_some() {
            named = Some(found);
            break;
        }
        first.get_or_insert(found);
    }
    let mut facts = named.or(first).unwrap_or_default();
    if facts.test_command.is_none() {
        facts.test_command = make_test(reader, top).or_else(|| python::tests_command(reader, top));
    }
    facts
}

/// `Cargo.toml`'s `[package]`, its fields inherited from
/// `[workspace.package]` where it says `.workspace = true`.
fn cargo(reader: &Reader<'_>) -> Option<Facts> {
    const FILE: &str = "Cargo.toml";
    let table: toml::Table = toml::from_str(&reader.whole(FILE)?).ok()?;
    let inherited = table.get("workspace").and_then(|w| w.get("package"));
    let field = |key: &str| -> Option<String> {
        let value = table.get("package")?.get(key)?;
        let value = match value {
            toml::Value::Table(t) if t.get("workspace")?.as_bool()? => inherited?.get(key)?,
            toml::Value::Table(_) => return None,
            other => other,
        };
        value.as_str().map(str::to_owned)
    };
    // A workspace without a package of its own still states a version.
    let version =
        field("version").or_else(|| inherited?.get("version")?.as_str().map(str::to_owned));
    Some(Facts {
        name: Stated::line(field("name"), FACT_MAX_CHARS, FILE),
        version: version.and_then(|v| Stated::version(&v, FILE)),
        description: Stated::line(field("description"), DESCRIPTION_MAX_CHARS, FILE),
        test_command: Some("cargo test".to_owned()),
    })
}

/// `package.json`'s name, version and description; `npm test` (or
/// yarn's, pnpm's, bun's, as the lock file shows) when `scripts.test`
/// is a real command.
fn node(reader: &Reader<'_>, top: &ProjectTop) -> Option<Facts> {
    const FILE: &str = "package.json";
    let json: serde_json::Value = serde_json::from_str(&reader.whole(FILE)?).ok()?;
    let field = |key: &str| json.get(key)?.as_str().map(str::to_owned);
    let has_tests = json
        .get("scripts")
        .and_then(|s| s.get("test")?.as_str())
        .is_some_and(|test| !test.contains(NPM_PLACEHOLDER));
    let has = |file: &str| top.entries.contains_key(Path::new(file));
    let runner = if has("pnpm-lock.yaml") {
        "pnpm test"
    } else if has("yarn.lock") {
        "yarn test"
    } else if has("bun.lock") || has("bun.lockb") {
        "bun run test"
    } else {
        "npm test"
    };
    Some(Facts {
        name: Stated::line(field("name"), FACT_MAX_CHARS, FILE),
        version: field("version").and_then(|v| Stated::version(&v, FILE)),
        description: Stated::line(field("description"), DESCRIPTION_MAX_CHARS, FILE),
        test_command: has_tests.then(|| runner.to_owned()),
    })
}

/// `go.mod`'s module path as the name; `go test ./...`.
fn go(reader: &Reader<'_>) -> Option<Facts> {
    const FILE: &str = "go.mod";
    let text = reader.whole(FILE)?;
    let module = text.lines().find_map(|line| {
        let path = line.trim().strip_prefix("module")?;
        path.starts_with(char::is_whitespace)
            .then(|| path.trim().trim_matches('"').to_owned())
    });
    Some(Facts {
        name: Stated::line(module, FACT_MAX_CHARS, FILE),
        version: None,
        description: None,
        test_command: Some("go test ./...".to_owned()),
    })
}

/// `make test` when the project's Makefile has a `test` target.
fn make_test(reader: &Reader<'_>, top: &ProjectTop) -> Option<String> {
    let makefile = MAKEFILES
        .into_iter()
        .find(|name| top.entries.get(Path::new(name)) == Some(&false))?;
    let text = reader.head(makefile)?;
    let has_target = text.lines().any(|line| {
        line.strip_prefix("test")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|rest| !rest.starts_with('='))
    });
    has_target.then(|| "make test".to_owned())
}
