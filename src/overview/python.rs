//! A Python package's facts: its name, version and description from
//! `pyproject.toml` (`[project]`, `[tool.poetry]`), `setup.cfg`
//! (`[metadata]`) or `setup.py` (a line scan for `name=`, `version=`,
//! `description=`), and a version the manifests leave to the code from
//! the module that states it (`pkg/__version__.py`, `_version.py`,
//! `version.py`, `__about__.py` or `__init__.py`, also under `src/`, or
//! the one a manifest points at). The test command: `python3 -m pytest`
//! when pytest is configured, else one that fits a `tests/` folder of
//! `test_*.py` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::tools::ProjectTop;

use super::read::Reader;
use super::text::{DESCRIPTION_MAX_CHARS, FACT_MAX_CHARS, assigned_literal};
use super::{Facts, Stated};

/// Packages whose version modules are looked into, at most (4): the one
/// the name points at and the package folders at the top (or under
/// `src/`) beside it.
const PACKAGES_MAX: usize = 4;

/// The files a package states its version in, in the order they are
/// read.
const VERSION_MODULES: [&str; 5] = [
    "__version__.py",
    "_version.py",
    "version.py",
    "__about__.py",
    "__init__.py",
];

/// The command that runs pytest.
const PYTEST: &str = "python3 -m pytest";

/// The manifests read, as far as they exist and parse.
struct Manifests {
    pyproject: Option<toml::Table>,
    setup_cfg: Option<String>,
    setup_py: Option<String>,
}

/// The package's facts; `None` when the project has no Python manifest.
pub(super) fn package(reader: &Reader<'_>, top: &ProjectTop) -> Option<Facts> {
    let manifests = Manifests {
        pyproject: reader
            .whole("pyproject.toml")
            .and_then(|text| toml::from_str(&text).ok()),
        setup_cfg: reader.whole("setup.cfg"),
        setup_py: reader.head("setup.py"),
    };
    if manifests.pyproject.is_none()
        && manifests.setup_cfg.is_none()
        && manifests.setup_py.is_none()
    {
        return None;
    }
    let mut name = name(&manifests);
    let mut description = description(&manifests);
    let mut version = stated_version(&manifests).or_else(|| pointed_version(reader, &manifests));
    if version.is_none()
        && let Some((found, module)) =
            module_version(reader, top, name.as_ref().map(|n| n.value.as_str()))
    {
        // A version module often names the package too (`__title__`,
        // `__description__`), for a `setup.py` that reads them from it.
        let stated =
            |key: &str, max: usize| Stated::line(assigned_literal(&module, key), max, &found.file);
        name = name.or_else(|| stated("__title__", FACT_MAX_CHARS));
        description = description.or_else(|| stated("__description__", DESCRIPTION_MAX_CHARS));
        version = Some(found);
    }
    Some(Facts {
        name,
        version,
        description,
        test_command: pytest_configured(reader, top, &manifests).then(|| PYTEST.to_owned()),
    })
}

/// The test command of a project with Python tests but no manifest that
/// configures pytest: pytest when `pytest.ini`, `tox.ini`'s `[pytest]`
/// or a `conftest.py` says so, or the first test file imports it or
/// holds no `TestCase`; else `unittest`. `None` without a test file at
/// the top or in `tests/` (`test/`).
pub(super) fn tests_command(reader: &Reader<'_>, top: &ProjectTop) -> Option<String> {
    let no_manifests = Manifests {
        pyproject: None,
        setup_cfg: None,
        setup_py: None,
    };
    let (dir, file) = first_test_file(top)?;
    if pytest_configured(reader, top, &no_manifests) {
        return Some(PYTEST.to_owned());
    }
    let head = reader.head(&file).unwrap_or_default();
    let imports_pytest = head.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("import pytest") || line.starts_with("from pytest")
    });
    // Test classes of unittest's; pytest runs plain functions (and may
    // still use `unittest.mock`).
    if imports_pytest || !head.contains("TestCase") {
        return Some(PYTEST.to_owned());
    }
    // unittest finds tests in a folder only when it is a package.
    match dir {
        Some(dir) if !top.entries.contains_key(&dir.join("__init__.py")) => {
            Some(format!("python3 -m unittest discover -s {}", dir.display()))
        }
        _ => Some("python3 -m unittest".to_owned()),
    }
}

/// The first test file: at the top, else in `tests/` or `test/` (with
/// that folder).
fn first_test_file(top: &ProjectTop) -> Option<(Option<PathBuf>, String)> {
    let is_test = |path: &Path| {
        path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py"))
        })
    };
    let at = |dir: &Path| {
        top.entries
            .iter()
            .filter(|(path, folder)| !**folder && path.parent() == Some(dir) && is_test(path))
            .map(|(path, _)| path.to_string_lossy().into_owned())
            .next()
    };
    if let Some(file) = at(Path::new("")) {
        return Some((None, file));
    }
    ["tests", "test"].into_iter().find_map(|dir| {
        let dir = PathBuf::from(dir);
        at(&dir).map(|file| (Some(dir), file))
    })
}

/// Whether the project configures pytest: `[tool.pytest.ini_options]`
/// in `pyproject.toml`, `[tool:pytest]` in `setup.cfg`, a `pytest.ini`,
/// `[pytest]` in `tox.ini`, or a `conftest.py` at the top or in
/// `tests/`.
fn pytest_configured(reader: &Reader<'_>, top: &ProjectTop, manifests: &Manifests) -> bool {
    let in_pyproject = manifests
        .pyproject
        .as_ref()
        .and_then(|t| t.get("tool")?.get("pytest"))
        .is_some();
    let in_setup_cfg = manifests
        .setup_cfg
        .as_deref()
        .is_some_and(|text| has_section(text, "tool:pytest"));
    let has = |path: &str| top.entries.contains_key(Path::new(path));
    in_pyproject
        || in_setup_cfg
        || has("pytest.ini")
        || has("conftest.py")
        || has("tests/conftest.py")
        || (has("tox.ini")
            && reader
                .head("tox.ini")
                .is_some_and(|text| has_section(&text, "pytest")))
}

/// The name, from the first manifest that gives one.
fn name(m: &Manifests) -> Option<Stated> {
    let pyproject = || {
        let t = m.pyproject.as_ref()?;
        Some((
            project(t, "name").or_else(|| poetry(t, "name"))?,
            "pyproject.toml",
        ))
    };
    let setup_cfg = || {
        Some((
            ini_value(m.setup_cfg.as_deref()?, "metadata", "name")?,
            "setup.cfg",
        ))
    };
    let setup_py = || {
        Some((
            assigned_literal(m.setup_py.as_deref()?, "name")?,
            "setup.py",
        ))
    };
    let (name, file) = pyproject().or_else(setup_cfg).or_else(setup_py)?;
    Stated::line(Some(name), FACT_MAX_CHARS, file)
}

/// The description, from the first manifest that gives one.
fn description(m: &Manifests) -> Option<Stated> {
    let pyproject = || {
        let t = m.pyproject.as_ref()?;
        let text = project(t, "description").or_else(|| poetry(t, "description"))?;
        Some((text, "pyproject.toml"))
    };
    let setup_cfg = || {
        let text = m.setup_cfg.as_deref()?;
        let value = ini_value(text, "metadata", "description")
            .or_else(|| ini_value(text, "metadata", "summary"))?;
        Some((value, "setup.cfg"))
    };
    let setup_py = || {
        Some((
            assigned_literal(m.setup_py.as_deref()?, "description")?,
            "setup.py",
        ))
    };
    let (text, file) = pyproject().or_else(setup_cfg).or_else(setup_py)?;
    Stated::line(Some(text), DESCRIPTION_MAX_CHARS, file)
}

/// A version a manifest states as a literal.
fn stated_version(m: &Manifests) -> Option<Stated> {
    let pyproject = || {
        let t = m.pyproject.as_ref()?;
        let v = project(t, "version").or_else(|| poetry(t, "version"))?;
        Stated::version(&v, "pyproject.toml")
    };
    let setup_cfg = || {
        let v = ini_value(m.setup_cfg.as_deref()?, "metadata", "version")?;
        Stated::version(&v, "setup.cfg")
    };
    let setup_py = || {
        let v = assigned_literal(m.setup_py.as_deref()?, "version")?;
        Stated::version(&v, "setup.py")
    };
    pyproject().or_else(setup_cfg).or_else(setup_py)
}

/// A version a manifest says where to find: an attribute of a module
/// (`[tool.setuptools.dynamic] version = {attr = "pkg.__version__"}`,
/// `version = attr: pkg.__version__` in `setup.cfg`), a file holding it
/// (`{file = "VERSION"}`, `file: VERSION`), or hatch's and pdm's `path`.
fn pointed_version(reader: &Reader<'_>, m: &Manifests) -> Option<Stated> {
    let tool = m.pyproject.as_ref().and_then(|t| t.get("tool"));
    let dynamic = tool.and_then(|t| t.get("setuptools")?.get("dynamic")?.get("version"));
    let attr = dynamic
        .and_then(|d| d.get("attr")?.as_str().map(str::to_owned))
        .or_else(|| cfg_pointer(m, "attr:"));
    if let Some(attr) = attr
        && let Some(found) = attr_version(reader, attr.trim())
    {
        return Some(found);
    }
    let file = dynamic
        .and_then(|d| match d.get("file")? {
            toml::Value::String(file) => Some(file.clone()),
            toml::Value::Array(files) => files.first()?.as_str().map(str::to_owned),
            _ => None,
        })
        .or_else(|| cfg_pointer(m, "file:"));
    let in_file = |file: &str| {
        let text = reader.head(file)?;
        Stated::version(text.lines().next()?, file)
    };
    if let Some(found) = file.and_then(|file| in_file(file.trim())) {
        return Some(found);
    }
    let path = tool.and_then(|t| {
        ["hatch", "pdm"]
            .into_iter()
            .find_map(|name| t.get(name)?.get("version")?.get("path")?.as_str())
    })?;
    let found = assigned_literal(&reader.head(path)?, "__version__")?;
    Stated::version(&found, path)
}

/// `setup.cfg`'s `version = attr: …` or `version = file: …`, after the
/// `kind`.
fn cfg_pointer(m: &Manifests, kind: &str) -> Option<String> {
    let value = ini_value(m.setup_cfg.as_deref()?, "metadata", "version")?;
    value.strip_prefix(kind).map(|rest| rest.trim().to_owned())
}

/// The version an attribute (`pkg.sub.__version__`) holds, read from its
/// module's file as a literal.
fn attr_version(reader: &Reader<'_>, attr: &str) -> Option<Stated> {
    let (module, name) = attr.rsplit_once('.')?;
    let module = module.replace('.', "/");
    [
        format!("{module}.py"),
        format!("{module}/__init__.py"),
        format!("src/{module}.py"),
        format!("src/{module}/__init__.py"),
    ]
    .into_iter()
    .find_map(|file| {
        let found = assigned_literal(&reader.head(&file)?, name)?;
        Stated::version(&found, file)
    })
}

/// The version a package's own module states (`__version__ = "8.0.4"`),
/// with the module's text: the package the name points at first
/// (`python-slugify` → `slugify/`), then the other package folders at
/// the top or under `src/`, at most [`PACKAGES_MAX`] of them.
fn module_version(
    reader: &Reader<'_>,
    top: &ProjectTop,
    name: Option<&str>,
) -> Option<(Stated, String)> {
    let packages: Vec<&PathBuf> = top
        .entries
        .iter()
        .filter(|(path, folder)| {
            **folder
                && (path.components().count() == 1 || path.parent() == Some(Path::new("src")))
                && top.entries.contains_key(&path.join("__init__.py"))
        })
        .map(|(path, _)| path)
        .collect();
    let wanted = name.map(import_names).unwrap_or_default();
    let named = |path: &&PathBuf| {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| wanted.iter().any(|w| w == n))
    };
    let (first, rest): (Vec<&PathBuf>, Vec<&PathBuf>) = packages.into_iter().partition(named);
    first
        .into_iter()
        .chain(rest)
        .take(PACKAGES_MAX)
        .find_map(|package| {
            VERSION_MODULES.iter().find_map(|module| {
                let file = package.join(module);
                if !top.entries.contains_key(&file) {
                    return None;
                }
                let file = file.to_string_lossy().into_owned();
                let text = reader.head(&file)?;
                let found = Stated::version(&assigned_literal(&text, "__version__")?, file)?;
                Some((found, text))
            })
        })
}

/// The names a distribution's package may be imported as:
/// `Python-Slugify` → `python_slugify`, `slugify`.
fn import_names(name: &str) -> Vec<String> {
    let normal = name.to_lowercase().replace(['-', '.'], "_");
    let short = ["python_", "py_"]
        .into_iter()
        .find_map(|prefix| normal.strip_prefix(prefix).map(str::to_owned));
    [Some(normal), short].into_iter().flatten().collect()
}

/// A string field of `[project]`.
fn project(t: &toml::Table, key: &str) -> Option<String> {
    t.get("project")?.get(key)?.as_str().map(str::to_owned)
}

/// A string field of `[tool.poetry]`.
fn poetry(t: &toml::Table, key: &str) -> Option<String> {
    t.get("tool")?
        .get("poetry")?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}

/// Whether the INI `text` has a `[section]`.
fn has_section(text: &str, section: &str) -> bool {
    text.lines()
        .any(|line| line.trim() == format!("[{section}]"))
}

/// `key`'s value in `[section]` of the INI `text` (`key = value` or
/// `key: value`); of a value continued on indented lines, its first line
/// that is not empty.
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let values = ini_section(text, section);
    values.get(key).cloned().filter(|v| !v.is_empty())
}

/// The keys of `[section]` and their values' first lines.
fn ini_section(text: &str, section: &str) -> BTreeMap<String, String> {
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut inside = false;
    let mut last: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            inside = trimmed[1..trimmed.len() - 1].trim() == section;
            last = None;
            continue;
        }
        if !inside || trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation: it fills a value left empty on its key's line.
            if let Some(key) = &last
                && let Some(value) = values.get_mut(key)
                && value.is_empty()
            {
                trimmed.clone_into(value);
            }
            continue;
        }
        let Some(split) = trimmed.find(['=', ':']) else {
            continue;
        };
        let key = trimmed[..split].trim().to_owned();
        let value = trimmed[split + 1..].trim().to_owned();
        values.entry(key.clone()).or_insert(value);
        last = Some(key);
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ini_value_is_read_from_its_section_only() {
        let text = "[options]\nname = wrong\n[metadata]\nname = right\nversion = attr: pkg.__version__\ndescription =\n    first line\n    second\nsummary: short\n";
        assert_eq!(
            ini_value(text, "metadata", "name").as_deref(),
            Some("right")
        );
        assert_eq!(
            ini_value(text, "metadata", "version").as_deref(),
            Some("attr: pkg.__version__")
        );
        assert_eq!(
            ini_value(text, "metadata", "description").as_deref(),
            Some("first line")
        );
        assert_eq!(
            ini_value(text, "metadata", "summary").as_deref(),
            Some("short")
        );
        assert_eq!(ini_value(text, "metadata", "url"), None);
        assert!(!has_section(text, "tool:pytest"));
    }

    #[test]
    fn a_distribution_name_gives_its_import_names() {
        assert_eq!(
            import_names("Python-Slugify"),
            ["python_slugify", "slugify"]
        );
        assert_eq!(import_names("inventory"), ["inventory"]);
    }
}
