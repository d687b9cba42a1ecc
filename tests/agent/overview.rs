//! The project overview (ADR 0048): what it says of real projects made in
//! temporary directories — a Rust crate, a Python package whose version
//! lives in its version module, a Node and a Go project, a folder without
//! a manifest, a tree too large to show, ignored folders, manifests that
//! do not parse — and of the task suite's fixture, as the model reads it.

use std::path::Path;

use dashfloat::overview::{self, OVERVIEW_OPENING, Overview};
use dashfloat::tools::ToolContext;

/// The overview of the project at `root`, as the agent builds it.
fn overview_of(root: &Path) -> Option<Overview> {
    let ctx = ToolContext::new(root).unwrap();
    overview::build(ctx.workspace.as_ref())
}

/// The overview's text of a project made of `files` (path, content).
fn text_of(files: &[(&str, &str)]) -> String {
    let dir = project(files);
    overview_of(dir.path()).expect("an overview").text
}

/// A temporary project holding `files`.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

/// The lines of `text` that state a fact (before the tree).
fn fact_lines(text: &str) -> Vec<&str> {
    text.lines()
        .skip(2)
        .take_while(|line| !line.starts_with("files ") && !line.starts_with("</"))
        .collect()
}

#[test]
fn the_task_fixture_reads_as_the_model_is_shown_it() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tasks/fixture");
    let overview = overview_of(&fixture).unwrap();
    assert!(overview.text.starts_with(OVERVIEW_OPENING));
    assert_eq!(
        overview.headline,
        "inventory 0.3.1, tests: python3 -m unittest"
    );
    insta::assert_snapshot!("the_task_fixture", overview.text);
}

#[test]
fn a_rust_crate_states_its_package_and_cargo_test() {
    let text = text_of(&[
        (
            "Cargo.toml",
            "[package]\nname = \"stock\"\nversion.workspace = true\ndescription = \"Keeps stock\"\n\n[workspace.package]\nversion = \"1.4.2\"\n",
        ),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    assert_eq!(
        fact_lines(&text),
        [
            "name: stock (Cargo.toml)",
            "version: 1.4.2 (Cargo.toml)",
            "description (Cargo.toml): Keeps stock",
            "test command: cargo test",
        ]
    );
    assert!(text.contains("\nsrc/\n  main.rs\nCargo.toml\n"), "{text}");
}

#[test]
fn a_python_package_states_the_version_its_module_holds() {
    // setup.cfg points at an attribute that is imported, not assigned,
    // there: the version is found in the package's `_version.py`.
    let text = text_of(&[
        (
            "setup.cfg",
            "[metadata]\nname = stock-keeper\nversion = attr: stock_keeper.__version__\ndescription = Keeps stock\n\n[tool:pytest]\ntestpaths = tests\n",
        ),
        ("setup.py", "from setuptools import setup\nsetup()\n"),
        (
            "stock_keeper/__init__.py",
            "from ._version import __version__\n",
        ),
        (
            "stock_keeper/_version.py",
            "__version__ = version = '2.0.1'\n",
        ),
        ("requirements.txt", "requests==2.31.0\n"),
        ("tests/test_stock.py", "import pytest\n"),
    ]);
    assert_eq!(
        fact_lines(&text),
        [
            "name: stock-keeper (setup.cfg)",
            "version: 2.0.1 (stock_keeper/_version.py)",
            "description (setup.cfg): Keeps stock",
            "test command: python3 -m pytest",
        ]
    );
}

#[test]
fn a_setup_py_that_reads_its_version_module_is_stated_from_the_module() {
    // As python-slugify: setup.py takes everything from `__version__.py`,
    // under a name that is not the distribution's.
    let dir = project(&[
        (
            "setup.py",
            "about = {}\nexec(open('slugify/__version__.py').read(), about)\nsetup(\n    name=about['__title__'],\n    version=about['__version__'],\n)\n",
        ),
        (
            "slugify/__version__.py",
            "__title__ = 'python-slugify'\n__description__ = 'A Python slugify application'\n__version__ = '8.0.4'\n",
        ),
        ("slugify/__init__.py", "from .slugify import *\n"),
        ("test.py", "import unittest\n"),
        ("README.md", "# Slugify\n\nMakes slugs.\n"),
    ]);
    let overview = overview_of(dir.path()).unwrap();
    assert_eq!(
        fact_lines(&overview.text),
        [
            "name: python-slugify (slugify/__version__.py)",
            "version: 8.0.4 (slugify/__version__.py)",
            "description (slugify/__version__.py): A Python slugify application",
        ]
    );
    assert_eq!(overview.headline, "python-slugify 8.0.4");
}

#[test]
fn python_tests_without_pytest_configured_get_the_runner_they_import() {
    let unittest = text_of(&[
        (
            "pyproject.toml",
            "[project]\nname = \"inv\"\nversion = \"0.3.1\"\n",
        ),
        (
            "tests/test_a.py",
            "import unittest\nclass A(unittest.TestCase): pass\n",
        ),
    ]);
    assert!(
        unittest.contains("test command: python3 -m unittest discover -s tests\n"),
        "not a package: unittest is told where to look\n{unittest}"
    );
    let package = text_of(&[
        ("tests/__init__.py", ""),
        (
            "tests/test_a.py",
            "from unittest import TestCase\nclass A(TestCase): pass\n",
        ),
    ]);
    assert!(
        package.contains("test command: python3 -m unittest\n"),
        "{package}"
    );
    let pytest = text_of(&[(
        "tests/test_a.py",
        "from unittest import mock\n\ndef test_a():\n    assert mock\n",
    )]);
    assert!(
        pytest.contains("test command: python3 -m pytest\n"),
        "{pytest}"
    );
}

#[test]
fn a_node_project_states_its_package_and_the_runner_its_lock_file_names() {
    let text = text_of(&[
        (
            "package.json",
            r#"{"name": "@acme/stock", "version": "3.2.0", "description": "Keeps stock", "scripts": {"test": "vitest"}}"#,
        ),
        ("yarn.lock", ""),
        ("src/index.js", ""),
        ("node_modules/left-pad/index.js", ""),
    ]);
    assert_eq!(
        fact_lines(&text),
        [
            "name: @acme/stock (package.json)",
            "version: 3.2.0 (package.json)",
            "description (package.json): Keeps stock",
            "test command: yarn test",
        ]
    );
    assert!(!text.contains("node_modules"), "{text}");
    // `npm init`'s placeholder is no test command; a Makefile's target is.
    let placeholder = text_of(&[
        (
            "package.json",
            r#"{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
        ),
        (
            "Makefile",
            "build:\n\tnode build.js\ntest: build\n\tnode test.js\n",
        ),
    ]);
    assert!(
        placeholder.contains("test command: make test\n"),
        "{placeholder}"
    );
}

#[test]
fn a_go_module_is_named_by_its_path() {
    let text = text_of(&[
        ("go.mod", "module example.com/stock\n\ngo 1.22\n"),
        ("main.go", "package main\n"),
    ]);
    assert_eq!(
        fact_lines(&text),
        [
            "name: example.com/stock (go.mod)",
            "test command: go test ./...",
        ]
    );
}

#[test]
fn a_project_without_a_manifest_is_described_by_its_readme() {
    let text = text_of(&[
        (
            "README.md",
            "# Notes\n\n[![build](b.svg)](ci)\n\nScripts that tidy\nthe **photo** archive.\n\nUsage: run it.\n",
        ),
        ("tidy.sh", "#!/bin/sh\n"),
        ("Makefile", "test:\n\t./tidy.sh --check\n"),
    ]);
    assert_eq!(
        fact_lines(&text),
        [
            "description (README.md): Scripts that tidy the photo archive.",
            "test command: make test",
        ]
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(overview_of(empty.path()), None, "nothing to say");
}

#[test]
fn ignored_build_and_dependency_folders_are_left_out() {
    let dir = project(&[
        (".gitignore", "/generated\n*.log\n"),
        ("generated/big.rs", ""),
        ("run.log", ""),
        ("target/debug/app", ""),
        (".venv/lib/site.py", ""),
        ("src/lib.rs", ""),
    ]);
    let text = overview_of(dir.path()).unwrap().text;
    for left_out in ["generated", "run.log", "target", ".venv"] {
        assert!(!text.contains(left_out), "{left_out} shown:\n{text}");
    }
    assert!(text.contains("src/\n  lib.rs\n"), "{text}");
}

#[test]
fn a_huge_tree_is_shown_within_its_bounds() {
    let dir = tempfile::tempdir().unwrap();
    for folder in 0..40 {
        for file in 0..30 {
            let path = dir.path().join(format!("pkg_{folder:02}/mod_{file:02}.py"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
    }
    for file in 0..2_000 {
        std::fs::write(dir.path().join(format!("data_{file:04}.csv")), "").unwrap();
    }
    let text = overview_of(dir.path()).unwrap().text;
    let lines = text.lines().count();
    // The opening, the tags and the heading; 20 entries at the top and
    // the line for the rest; 32 lines inside folders and their "more".
    assert!(lines <= 4 + 21 + 32 + 4, "{lines} lines:\n{text}");
    assert!(text.contains("pkg_00/\n  mod_00.py\n"), "{text}");
    assert!(text.contains("  … and 22 more\n"), "{text}");
    assert!(text.contains("pkg_05/ (30 entries)\n"), "{text}");
    assert!(text.contains("\n… and 2020 more\n"), "{text}");
    assert!(!text.contains("data_"), "folders come first: {text}");
}

#[test]
fn long_names_are_cut_and_the_tree_stops_at_its_byte_bound() {
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(90);
    for folder in 0..10 {
        for file in 0..8 {
            let path = dir.path().join(format!("{long}_{folder}/{long}_{file}"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
    }
    let text = overview_of(dir.path()).unwrap().text;
    assert!(text.len() < 1_600, "{} bytes:\n{text}", text.len());
    assert!(!text.contains(&long), "names are cut at 60 characters");
    assert!(
        text.contains("\n… (the rest of the tree is left out: its names are long)\n"),
        "{text}"
    );
}

#[test]
fn a_manifest_that_does_not_parse_is_left_out_and_the_rest_stays() {
    let text = text_of(&[
        ("Cargo.toml", "[package\nname = \"broken\"\n"),
        ("package.json", "{\"name\": \"half\","),
        (
            "pyproject.toml",
            "[project]\nname = \"fine\"\nversion = \"not a version\"\n",
        ),
        ("src/main.rs", ""),
    ]);
    assert_eq!(fact_lines(&text), ["name: fine (pyproject.toml)"]);
    assert!(text.contains("src/\n  main.rs\n"), "{text}");
    // A manifest past the read bound is not parsed: its facts are left out.
    let padding = format!("# {}\n", "x".repeat(70 * 1024));
    let huge = format!("[package]\nname = \"huge\"\n{padding}");
    let text = text_of(&[("Cargo.toml", huge.as_str())]);
    assert!(fact_lines(&text).is_empty(), "{text}");
}
