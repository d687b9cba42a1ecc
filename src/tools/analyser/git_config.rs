//! The configuration a git stage would run under, as the git that will
//! run lists it (`git config --list --includes` in the stage's directory,
//! with the commands' environment: every scope, every included file, in
//! git's own reading), and the keys in it that make an allowed subcommand
//! run a program, read a file from elsewhere or write one. ADR 0025.

use std::path::Path;

use super::git_probe::Git;
use super::git_repo::GitRefusal;

const NAMES_A_PROGRAM: &str = "names a program";
const GPG: &str = "makes git verify signatures by running gpg";
const READS_A_FILE: &str = "names a file git reads, which may be outside the project";

/// Lists the configuration `git` would read in `dir` and refuses the
/// first key that makes an allowed subcommand run, include or write
/// something.
pub(super) fn check(git: &Git<'_>, dir: &Path) -> Result<(), GitRefusal> {
    let answer = git.answer(
        dir,
        &[
            "config",
            "--list",
            "-z",
            "--show-scope",
            "--show-origin",
            "--includes",
        ],
    )?;
    let text = String::from_utf8_lossy(&answer);
    for entry in entries(&text)? {
        if let Some(what) = judge(&entry) {
            return Err(GitRefusal::Key {
                file: entry.origin(),
                key: entry.key.to_owned(),
                what,
            });
        }
    }
    Ok(())
}

/// Where an entry was set, as far as trust goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The repository's own files (`config`, `config.worktree`) and what
    /// they include: the project's, so anyone who made it.
    Repository,
    /// The person's or the system's files, or the environment.
    Person,
}

/// One entry of git's listing.
#[derive(Debug)]
struct Entry<'a> {
    scope: Scope,
    /// git's `--show-scope` word.
    scope_name: &'a str,
    /// git's `--show-origin`: `file:PATH`, `command line:`, …
    origin: &'a str,
    /// As git lists it: section and name lower-cased, a subsection as
    /// written.
    key: &'a str,
    /// Lower-cased.
    section: String,
    /// As written.
    subsection: Option<&'a str>,
    /// Lower-cased.
    name: String,
    /// `None` for a bare `name` (true).
    value: Option<&'a str>,
}

impl Entry<'_> {
    /// Which configuration set it, for the reason the person reads.
    fn origin(&self) -> String {
        let file = self.origin.strip_prefix("file:");
        match (self.scope_name, file) {
            ("local", Some(file)) => format!("the repository's config {file}"),
            ("worktree", Some(file)) => format!("the worktree's config {file}"),
            ("system", Some(file)) => format!("the system git config {file}"),
            (_, Some(file)) => format!("the git config {file}"),
            ("command", None) => "git configuration from the environment".to_owned(),
            (scope, None) => format!("the {scope} git configuration ({})", self.origin),
        }
    }
}

/// The entries of `git config --list -z --show-scope --show-origin`:
/// `scope NUL origin NUL key [LF value] NUL`, again and again.
fn entries(text: &str) -> Result<Vec<Entry<'_>>, GitRefusal> {
    let unusual = || GitRefusal::Unusual(text.chars().take(200).collect());
    let mut fields = text.split_terminator('\0');
    let mut out = Vec::new();
    while let Some(scope_name) = fields.next() {
        let (Some(origin), Some(item)) = (fields.next(), fields.next()) else {
            return Err(unusual());
        };
        let (key, value) = match item.split_once('\n') {
            Some((key, value)) => (key, Some(value)),
            None => (item, None),
        };
        let (section, rest) = key.split_once('.').ok_or_else(unusual)?;
        let (subsection, name) = match rest.rsplit_once('.') {
            Some((sub, name)) => (Some(sub), name),
            None => (None, rest),
        };
        let scope = match scope_name {
            "local" | "worktree" => Scope::Repository,
            _ => Scope::Person,
        };
        out.push(Entry {
            scope,
            scope_name,
            origin,
            key,
            section: section.to_ascii_lowercase(),
            subsection,
            name: name.to_ascii_lowercase(),
            value,
        });
    }
    Ok(out)
}

/// What a key does that the analysis cannot vouch for, if anything. Only
/// keys the allowed subcommands (status, log, show, diff, branch,
/// rev-parse, ls-files, blame) act on are judged: `core.editor`,
/// `credential.*`, `alias.*` (git never lets an alias replace a built-in
/// command) and the like are never used by them. A repository's own
/// configuration may not name files to read at all: it came with the
/// project, and the files could be anywhere.
fn judge(entry: &Entry) -> Option<&'static str> {
    let value = entry.value;
    let subsection = entry.subsection.is_some();
    let repository = entry.scope == Scope::Repository;
    match (entry.section.as_str(), subsection, entry.name.as_str()) {
        ("core", false, "pager") => Some(NAMES_A_PROGRAM),
        ("core", false, "fsmonitor") if !is_false(value) => Some(NAMES_A_PROGRAM),
        ("core", false, "hookspath") => Some("names a directory of hooks"),
        ("core", false, "worktree") => Some("points git at another work tree"),
        ("diff", false, "external") => Some(NAMES_A_PROGRAM),
        ("diff", true, "command" | "textconv") => Some(NAMES_A_PROGRAM),
        ("filter", true, "clean" | "smudge" | "process") => Some(NAMES_A_PROGRAM),
        ("pager", false, _) if !is_bool(value) => Some(NAMES_A_PROGRAM),
        ("include", false, "path") | ("includeif", true, "path") if repository => {
            Some("includes another config file, which may be outside the project")
        }
        ("core", false, "excludesfile" | "attributesfile") if repository => Some(READS_A_FILE),
        ("log", false, "showsignature") if !is_false(value) => Some(GPG),
        ("pretty", false, _) | ("format", false, "pretty")
            if value.is_some_and(verifies_signatures) =>
        {
            Some(GPG)
        }
        ("gpg", _, "program") => Some(NAMES_A_PROGRAM),
        // `git log -m` and `show` may merge again to show a merge
        // (`--diff-merges=remerge`, `log.diffMerges`), which runs a
        // merge driver.
        ("merge", true, "driver") => Some(NAMES_A_PROGRAM),
        ("log", false, "diffmerges")
            if value
                .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "r" | "remerge")) =>
        {
            Some("makes git merge again to show a merge, which runs merge drivers")
        }
        // Sorting branches by their signature verifies it with gpg.
        ("branch", false, "sort") if value.is_some_and(|v| v.contains("signature")) => Some(GPG),
        ("gpg", true, "allowedsignersfile" | "revocationfile") if repository => Some(READS_A_FILE),
        // The run environment reads attributes from SHA-1's empty tree
        // (`attr.tree`); in a SHA-256 repository that names no tree, and
        // git would read them from the files after all.
        ("extensions", false, "objectformat")
            if value.is_some_and(|v| !v.eq_ignore_ascii_case("sha1")) =>
        {
            Some("makes the repository SHA-256, where attributes would be read from the files")
        }
        ("extensions", false, "partialclone") | ("remote", true, "promisor")
            if !is_false(value) =>
        {
            Some("makes git fetch missing objects over the network")
        }
        ("blame", false, "ignorerevsfile") => Some("names a file git blame reads"),
        // As `-O` is refused. (`core.excludesFile` and `attributesFile`,
        // common in the person's configuration, only steer which files
        // are listed and which checked drivers apply.)
        ("mailmap", false, "file") | ("diff", false, "orderfile") => Some(READS_A_FILE),
        ("trace2", false, name) if name.ends_with("target") => Some("writes a trace file"),
        // git 2.54 runs hooks the configuration names
        // (`hook.<name>.command`, for `hook.<name>.event`): none may be
        // set, in any scope, whichever event it names.
        ("hook", _, _) => Some("configures a hook, a program git runs"),
        _ => None,
    }
}

/// Whether a pretty format holds a `%G` placeholder — with or without one
/// of git's modifiers between `%` and the letter (`%+G?`, `%-GS`, `% GK`)
/// — which makes git run gpg to verify signatures.
pub(super) fn verifies_signatures(format: &str) -> bool {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            continue;
        }
        let _ = chars.next_if(|m| matches!(m, '+' | '-' | ' ' | '*'));
        if chars.peek() == Some(&'G') {
            return true;
        }
    }
    false
}

const FALSE: &[&str] = &["false", "no", "off", "0", ""];
const TRUE: &[&str] = &["true", "yes", "on", "1"];

/// git's reading of a boolean: a key with no `=` is true, an empty value
/// false.
fn is_false(value: Option<&str>) -> bool {
    value.is_some_and(|v| FALSE.contains(&v.to_ascii_lowercase().as_str()))
}

fn is_bool(value: Option<&str>) -> bool {
    value.is_none_or(|v| {
        let v = v.to_ascii_lowercase();
        FALSE.contains(&v.as_str()) || TRUE.contains(&v.as_str())
    })
}
