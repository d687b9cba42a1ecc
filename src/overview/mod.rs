//! The project overview: what a person looks up first in a project they
//! are handed, gathered when a conversation starts and sent in its first
//! user message, ahead of the person's words (ADR 0048). The package's
//! name and version and the file that states the version, a one-line
//! description, the test command when one is evident, and the top of the
//! file tree — so a small model grounds "what version is this?" or "what
//! does this project do?" in the project rather than in a guess.
//!
//! Everything is read through the [`Workspace`], bounded (files looked
//! for, bytes per file, files walked, lines shown: a named constant
//! each) and failure-tolerant: a manifest that cannot be read or parsed
//! leaves its facts out, never fails the overview. Blocking: built on the
//! blocking pool.

mod manifest;
mod python;
mod read;
mod readme;
mod text;
mod tree;

use crate::tools::{Workspace, project_top};

use read::Reader;

/// How the overview's message begins: dashfloat's note prefix, so the
/// conversation never counts it as one of the person's prompts, and what
/// it is.
pub const OVERVIEW_OPENING: &str = "[dashfloat] Project overview, read from the project's files when this conversation started: background for the person's requests, not a request.";

/// How deep the walk records the tree: one level below what is shown,
/// where a `src/` layout keeps a Python package's version module.
const WALK_DEPTH: usize = tree::SHOWN_DEPTH + 1;

/// The overview of one project, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overview {
    /// The message's text: [`OVERVIEW_OPENING`], then the facts and the
    /// tree between `<project_overview>` tags.
    pub text: String,
    /// What the person is told was sent: the name and version, the test
    /// command, as far as they were found (empty when none was).
    pub headline: String,
}

impl Overview {
    /// The lines of the text.
    pub fn lines(&self) -> usize {
        self.text.lines().count()
    }
}

/// What the overview states about the project besides its tree, each
/// fact as far as it was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Facts {
    /// The package's name.
    name: Option<Stated>,
    /// The package's version.
    version: Option<Stated>,
    /// What the project is, in a line.
    description: Option<Stated>,
    /// The command that runs the tests.
    test_command: Option<String>,
}

/// A value and the file (relative to the root) that states it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stated {
    /// The value, one line.
    value: String,
    /// Where it is stated.
    file: String,
}

impl Stated {
    fn new(value: String, file: impl Into<String>) -> Self {
        Stated {
            value,
            file: file.into(),
        }
    }

    /// `value` as a version ([`text::version`]: a short token starting
    /// with a digit), with where; `None` when it is not one.
    fn version(value: &str, file: impl Into<String>) -> Option<Stated> {
        Some(Stated::new(text::version(value)?, file))
    }

    /// `value` as the overview states it — one line of at most `max`
    /// characters ([`text::one_line`]) — with where; `None` when there is
    /// no value or nothing of it is left.
    fn line(value: Option<String>, max: usize, file: impl Into<String>) -> Option<Stated> {
        Some(Stated::new(text::one_line(&value?, max)?, file))
    }
}

/// The overview of the project in `ws`; `None` when there is nothing to
/// say (no file the search tools see, no fact found). Blocking.
pub fn build(ws: &dyn Workspace) -> Option<Overview> {
    let top = project_top(ws, WALK_DEPTH);
    let reader = Reader::new(ws);
    let mut facts = manifest::facts(&reader, &top);
    if facts.description.is_none() {
        facts.description = readme::description(&reader, &top);
    }
    let tree = tree::render(&top);
    if tree.is_empty() && facts == Facts::default() {
        return None;
    }
    Some(Overview {
        text: render(&facts, &tree),
        headline: headline(&facts),
    })
}

/// The overview's text from its parts.
fn render(facts: &Facts, tree: &[String]) -> String {
    let mut lines = vec![OVERVIEW_OPENING.to_owned(), "<project_overview>".to_owned()];
    if let Some(name) = &facts.name {
        lines.push(format!("name: {} ({})", name.value, name.file));
    }
    if let Some(version) = &facts.version {
        lines.push(format!("version: {} ({})", version.value, version.file));
    }
    if let Some(description) = &facts.description {
        lines.push(format!(
            "description ({}): {}",
            description.file, description.value
        ));
    }
    if let Some(command) = &facts.test_command {
        lines.push(format!("test command: {command}"));
    }
    if !tree.is_empty() {
        lines.push(tree::HEADING.to_owned());
        lines.extend(tree.iter().cloned());
    }
    lines.push("</project_overview>".to_owned());
    lines.join("\n")
}

/// What the person reads of the facts: `inventory 0.3.1, tests: python3
/// -m unittest`.
fn headline(facts: &Facts) -> String {
    let package = [&facts.name, &facts.version]
        .into_iter()
        .flatten()
        .map(|s| s.value.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let tests = facts
        .test_command
        .as_ref()
        .map(|command| format!("tests: {command}"));
    (!package.is_empty())
        .then_some(package)
        .into_iter()
        .chain(tests)
        .collect::<Vec<_>>()
        .join(", ")
}
