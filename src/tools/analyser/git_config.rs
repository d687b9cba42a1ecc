//! The repository a git stage runs in, found as git finds it, and its
//! configuration, read as text (git is never run to read it): a key that
//! makes one of the allowed subcommands run a program, include another
//! file or leave the project refuses the stage. ADR 0025.

use std::io;
use std::path::{Path, PathBuf};

use super::Refusal;
use super::paths::Place;
use crate::tools::{FileKind, Workspace};

/// The largest git configuration file read (1 MiB); a larger one is not
/// trusted.
const CONFIG_MAX_BYTES: u64 = 1024 * 1024;
/// The largest `.git` file or `commondir` file read.
const POINTER_MAX_BYTES: u64 = 4096;

const NAMES_A_PROGRAM: &str = "names a program";
const GPG: &str = "makes git verify signatures by running gpg";

/// Why a git stage's repository is not one the analyser can vouch for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum GitRefusal {
    /// No `.git` between the stage's directory and the project root: git
    /// would look above the project.
    #[error("no repository in the project here, so git would look for one above it")]
    NoRepository,
    /// A `.git` git might not accept, and would then look past.
    #[error("`{0}` is not a repository git would use, so git could look above it")]
    NotARepository(String),
    /// A `.git` that leads out of the project to a repository it is not a
    /// registered linked worktree of: git would read another repository.
    #[error("`{0}` leads to a repository outside the project, so git would read its files")]
    Elsewhere(String),
    /// A directory that looks like a bare repository, which git would use.
    #[error("`{0}` looks like a bare repository, whose configuration is not checked")]
    Bare(String),
    /// The repository takes objects or refs from elsewhere (alternates,
    /// or `objects`, `refs`, `packed-refs` leading out of it): git would
    /// show another repository's files.
    #[error(
        "`{0}` takes objects or refs from outside the repository, so git would show another's files"
    )]
    Borrowed(String),
    /// git status and diff run git in submodules.
    #[error("the repository has submodules, whose configuration is not checked")]
    Submodules,
    /// git status and diff can write the index, which runs this hook.
    #[error("the repository has a post-index-change hook, which git status and git diff can run")]
    Hook,
    /// A configuration key that runs, reads or writes what the analysis
    /// does not see.
    #[error("{file} {what} ({key})")]
    Key {
        /// Which configuration: the repository's or a global one.
        file: String,
        /// The key, lower-cased as git lists it.
        key: String,
        /// What the key does.
        what: &'static str,
    },
    /// A file git would read that cannot be read here.
    #[error("{0} cannot be read: {1}")]
    Unreadable(String, String),
    /// A configuration file the parser does not fully understand.
    #[error("{0} is not understood past line {1}, so it is not trusted")]
    Unparsable(String, usize),
}

/// A repository as git would find it from a stage's directory.
struct Repository {
    /// The directory holding `.git`: the work tree's top.
    worktree: PathBuf,
    /// Where `.git` leads (a linked worktree's own directory).
    git_dir: PathBuf,
    /// Where the shared configuration, hooks and objects are.
    common_dir: PathBuf,
}

/// Checks the repository a git stage at `place` would use, and the
/// configuration git would read there: the global files (`global`, in
/// git's order), the repository's `config` and `config.worktree`.
pub(super) fn check_repository(place: &Place, global: &[PathBuf]) -> Result<(), Refusal> {
    let ws = place.ws;
    let repo = find(place)?;
    if exists(ws, &repo.worktree.join(".gitmodules"))
        || exists(ws, &repo.common_dir.join("modules"))
    {
        return Err(GitRefusal::Submodules.into());
    }
    if exists(ws, &repo.common_dir.join("hooks").join("post-index-change")) {
        return Err(GitRefusal::Hook.into());
    }
    for path in global {
        check_config(ws, path, &format!("the git config {}", path.display()))?;
    }
    check_config(
        ws,
        &repo.common_dir.join("config"),
        "the repository's config",
    )?;
    check_config(
        ws,
        &repo.git_dir.join("config.worktree"),
        "the repository's config.worktree",
    )?;
    Ok(())
}

fn exists(ws: &dyn Workspace, path: &Path) -> bool {
    ws.lstat(path).is_ok()
}

/// Walks up from the stage's directory to the project root, as git's
/// discovery does: at each level `.git` first, then the directory itself
/// as a bare repository. What git would find above the root is refused.
fn find(place: &Place) -> Result<Repository, GitRefusal> {
    let ws = place.ws;
    let root = ws
        .real_path(ws.root())
        .map_err(|e| GitRefusal::Unreadable("the project root".to_owned(), e.to_string()))?;
    for dir in place.dir.ancestors() {
        if !dir.starts_with(&root) {
            break;
        }
        let dotgit = dir.join(".git");
        match ws.lstat(&dotgit) {
            Ok(_) => return open(ws, &root, dir, &dotgit),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(GitRefusal::Unreadable(
                    dotgit.display().to_string(),
                    e.to_string(),
                ));
            }
        }
        if ws.looks_like_git_dir(dir) {
            return Err(GitRefusal::Bare(dir.display().to_string()));
        }
    }
    Err(GitRefusal::NoRepository)
}

/// The repository `dotgit` (a directory, or a file `gitdir: <path>`)
/// stands for, if git would take it as one and it is the project's: its
/// shared directory beneath `root`, or the repository outside that
/// `dotgit` is a registered linked worktree of.
fn open(
    ws: &dyn Workspace,
    root: &Path,
    worktree: &Path,
    dotgit: &Path,
) -> Result<Repository, GitRefusal> {
    let not_a_repo = || GitRefusal::NotARepository(dotgit.display().to_string());
    let is_dir = |path: &Path| ws.stat(path).is_ok_and(|meta| meta.is_dir());
    let git_dir = if is_dir(dotgit) {
        dotgit.to_path_buf()
    } else {
        let text = ws
            .read_small(dotgit, POINTER_MAX_BYTES)
            .ok()
            .flatten()
            .ok_or_else(not_a_repo)?;
        let target = text
            .strip_prefix("gitdir:")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(not_a_repo)?;
        worktree.join(target)
    };
    let git_dir = ws.real_path(&git_dir).map_err(|_| not_a_repo())?;
    let common_dir = match ws.read_small(&git_dir.join("commondir"), POINTER_MAX_BYTES) {
        Ok(None) => git_dir.clone(),
        Ok(Some(text)) => ws
            .real_path(&git_dir.join(text.trim()))
            .map_err(|_| not_a_repo())?,
        Err(_) => return Err(not_a_repo()),
    };
    let is_repository = ws
        .read_small(&git_dir.join("HEAD"), POINTER_MAX_BYTES)
        .ok()
        .flatten()
        .is_some_and(|text| is_head(&text))
        && is_dir(&common_dir.join("objects"))
        && is_dir(&common_dir.join("refs"));
    if !is_repository {
        return Err(not_a_repo());
    }
    if !common_dir.starts_with(root) && !is_linked_worktree(ws, dotgit, &git_dir, &common_dir) {
        return Err(GitRefusal::Elsewhere(dotgit.display().to_string()));
    }
    if borrows(ws, &common_dir, common_dir.starts_with(root)) {
        return Err(GitRefusal::Borrowed(dotgit.display().to_string()));
    }
    Ok(Repository {
        worktree: worktree.to_path_buf(),
        git_dir,
        common_dir,
    })
}

/// Whether the repository at `common_dir` takes objects or refs from
/// elsewhere: an alternates file, `objects`, `refs` or `packed-refs`
/// leading out of it, or, when it is in the project (`in_project`; a
/// linked worktree's may be the person's own repository beside it), a
/// link among the object folders or the packs. What cannot be looked at
/// counts as borrowed.
fn borrows(ws: &dyn Workspace, common_dir: &Path, in_project: bool) -> bool {
    let leads_out = |name: &str| {
        ws.real_path(&common_dir.join(name))
            .is_ok_and(|real| !real.starts_with(common_dir))
    };
    let holds_a_link = |dir: &Path| match ws.list(dir, super::ANALYSER_GIT_OBJECT_NAMES_MAX) {
        Ok(listing) => {
            listing.total > listing.entries.len()
                || listing
                    .entries
                    .iter()
                    .any(|e| e.stat.is_some_and(|s| s.kind == FileKind::Symlink))
        }
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    };
    let objects = common_dir.join("objects");
    ws.lstat(&objects.join("info/alternates")).is_ok()
        || ["objects", "refs", "packed-refs"]
            .into_iter()
            .any(leads_out)
        || in_project && (holds_a_link(&objects) || holds_a_link(&objects.join("pack")))
}

/// Whether `HEAD` holds what git's own check of a repository takes: a
/// symbolic ref into `refs/`, or an object id. git passes over a `.git`
/// whose `HEAD` holds anything else and looks further up.
fn is_head(text: &str) -> bool {
    let text = text.trim_end();
    match text.strip_prefix("ref:") {
        Some(target) => target.trim_start().starts_with("refs/"),
        None => matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()),
    }
}

/// Whether `git_dir` is a linked worktree of `common_dir` made for
/// `dotgit`, as `git worktree add` leaves one: `<common>/worktrees/<name>`,
/// whose `gitdir` file names `dotgit` back (absolute, or relative to it).
fn is_linked_worktree(
    ws: &dyn Workspace,
    dotgit: &Path,
    git_dir: &Path,
    common_dir: &Path,
) -> bool {
    let real = |path: &Path| ws.real_path(path).ok();
    git_dir.parent() == Some(common_dir.join("worktrees").as_path())
        && ws
            .read_small(&git_dir.join("gitdir"), POINTER_MAX_BYTES)
            .ok()
            .flatten()
            .is_some_and(|back| {
                let back = real(&git_dir.join(back.trim()));
                back.is_some() && back == real(dotgit)
            })
}

/// Reads one configuration file (absent is fine) and refuses the first key
/// that makes an allowed subcommand run, include or write something.
fn check_config(ws: &dyn Workspace, path: &Path, label: &str) -> Result<(), GitRefusal> {
    let text = ws
        .read_small(path, CONFIG_MAX_BYTES)
        .map_err(|e| GitRefusal::Unreadable(label.to_owned(), e.to_string()))?;
    let Some(text) = text else {
        return Ok(());
    };
    let entries = parse(&text).map_err(|line| GitRefusal::Unparsable(label.to_owned(), line))?;
    for entry in &entries {
        if let Some(what) = judge(entry) {
            return Err(GitRefusal::Key {
                file: label.to_owned(),
                key: entry.key(),
                what,
            });
        }
    }
    Ok(())
}

/// What a key does that the analysis cannot vouch for, if anything. Only
/// keys the allowed subcommands (status, log, show, diff, branch,
/// rev-parse, ls-files, blame) act on are judged: `core.editor`,
/// `credential.*`, `alias.*` (git never lets an alias replace a built-in
/// command) and the like are never used by them.
fn judge(entry: &Entry) -> Option<&'static str> {
    let value = entry.value.as_deref();
    let subsection = entry.subsection.is_some();
    match (entry.section.as_str(), subsection, entry.name.as_str()) {
        ("core", false, "pager") => Some(NAMES_A_PROGRAM),
        ("core", false, "fsmonitor") if !is_false(value) => Some(NAMES_A_PROGRAM),
        ("core", false, "hookspath") => Some("names a directory of hooks"),
        ("core", false, "worktree") => Some("points git at another work tree"),
        ("diff", false, "external") => Some(NAMES_A_PROGRAM),
        ("diff", true, "command" | "textconv") => Some(NAMES_A_PROGRAM),
        ("filter", true, "clean" | "smudge" | "process") => Some(NAMES_A_PROGRAM),
        ("pager", false, _) if !is_bool(value) => Some(NAMES_A_PROGRAM),
        ("include", false, "path") | ("includeif", true, "path") => {
            Some("includes another config file, which is not checked")
        }
        ("log", false, "showsignature") if !is_false(value) => Some(GPG),
        ("pretty", false, _) | ("format", false, "pretty")
            if value.is_some_and(verifies_signatures) =>
        {
            Some(GPG)
        }
        ("gpg", _, "program") => Some(NAMES_A_PROGRAM),
        ("extensions", false, "partialclone") | ("remote", true, "promisor")
            if !is_false(value) =>
        {
            Some("makes git fetch missing objects over the network")
        }
        ("blame", false, "ignorerevsfile") => Some("names a file git blame reads"),
        // As `-O` is refused. (`core.excludesFile` and `attributesFile`,
        // common in global configurations, only steer which files are
        // listed and which checked drivers apply.)
        ("mailmap", false, "file") | ("diff", false, "orderfile") => {
            Some("names a file git reads, which may be outside the project")
        }
        ("trace2", false, name) if name.ends_with("target") => Some("writes a trace file"),
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

/// One `name = value` line under its section.
#[derive(Debug)]
struct Entry {
    /// Lower-cased.
    section: String,
    /// As written for `[section "sub"]`, lower-cased for `[section.sub]`.
    subsection: Option<String>,
    /// Lower-cased.
    name: String,
    /// `None` for a bare `name` (true).
    value: Option<String>,
}

impl Entry {
    fn key(&self) -> String {
        match &self.subsection {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.name),
            None => format!("{}.{}", self.section, self.name),
        }
    }
}

/// The entries of a configuration file, or the line where it stopped
/// making sense to this parser (which is then not trusted).
fn parse(text: &str) -> Result<Vec<Entry>, usize> {
    let mut cursor = Cursor {
        chars: text.chars().peekable(),
        line: 1,
        after_newline: false,
    };
    let mut section: Option<(String, Option<String>)> = None;
    let mut entries = Vec::new();
    loop {
        cursor.skip(|c| c.is_whitespace() || c == '\u{feff}');
        let Some(c) = cursor.chars.peek().copied() else {
            return Ok(entries);
        };
        match c {
            '#' | ';' => cursor.skip_line(),
            '[' => {
                cursor.next();
                section = Some(cursor.section()?);
            }
            c if c.is_ascii_alphabetic() => {
                let Some((name_of_section, subsection)) = &section else {
                    return Err(cursor.line);
                };
                let name = cursor
                    .take(|c| c.is_ascii_alphanumeric() || c == '-')
                    .to_ascii_lowercase();
                cursor.skip(|c| c == ' ' || c == '\t' || c == '\r');
                let value = match cursor.chars.peek() {
                    Some('=') => {
                        cursor.next();
                        Some(cursor.value()?)
                    }
                    None | Some('\n' | '#' | ';') => {
                        cursor.skip_line();
                        None
                    }
                    Some(_) => return Err(cursor.line),
                };
                entries.push(Entry {
                    section: name_of_section.clone(),
                    subsection: subsection.clone(),
                    name,
                    value,
                });
            }
            _ => return Err(cursor.line),
        }
    }
}

struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    /// The line of the last character read.
    line: usize,
    after_newline: bool,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.next();
        if self.after_newline && c.is_some() {
            self.line += 1;
        }
        self.after_newline = c == Some('\n');
        c
    }

    fn skip(&mut self, what: impl Fn(char) -> bool) {
        while self.chars.peek().is_some_and(|&c| what(c)) {
            self.next();
        }
    }

    fn take(&mut self, what: impl Fn(char) -> bool) -> String {
        let mut out = String::new();
        while self.chars.peek().is_some_and(|&c| what(c)) {
            out.extend(self.next());
        }
        out
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }

    /// After `[`: `name]`, `name.sub]` or `name "sub"]`.
    fn section(&mut self) -> Result<(String, Option<String>), usize> {
        let name = self
            .take(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            .to_ascii_lowercase();
        if name.is_empty() {
            return Err(self.line);
        }
        match self.next() {
            Some(']') => Ok(match name.split_once('.') {
                Some((section, sub)) => (section.to_owned(), Some(sub.to_owned())),
                None => (name, None),
            }),
            Some(' ' | '\t') if !name.contains('.') => {
                self.skip(|c| c == ' ' || c == '\t');
                if self.next() != Some('"') {
                    return Err(self.line);
                }
                let mut sub = String::new();
                loop {
                    match self.next() {
                        Some('"') => break,
                        Some('\\') => match self.next() {
                            Some('\n') | None => return Err(self.line),
                            Some(c) => sub.push(c),
                        },
                        Some('\n') | None => return Err(self.line),
                        Some(c) => sub.push(c),
                    }
                }
                if self.next() != Some(']') {
                    return Err(self.line);
                }
                Ok((name, Some(sub)))
            }
            _ => Err(self.line),
        }
    }

    /// After `=`: the value to the end of the line, with git's quotes,
    /// escapes, comments and line continuations.
    fn value(&mut self) -> Result<String, usize> {
        self.skip(|c| c == ' ' || c == '\t');
        let mut value = String::new();
        let mut blanks = String::new();
        let mut quoted = false;
        loop {
            let c = match self.next() {
                None | Some('\n') if quoted => return Err(self.line),
                None | Some('\n') => return Ok(value),
                Some(c) => c,
            };
            let literal = match c {
                '#' | ';' if !quoted => {
                    self.skip_line();
                    return Ok(value);
                }
                '"' => {
                    quoted = !quoted;
                    continue;
                }
                '\\' => match self.next() {
                    Some('\n') => continue,
                    Some('\r') if self.chars.peek() == Some(&'\n') => {
                        self.next();
                        continue;
                    }
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    Some(c @ ('"' | '\\')) => c,
                    _ => return Err(self.line),
                },
                ' ' | '\t' | '\r' if !quoted => {
                    blanks.push(c);
                    continue;
                }
                c => c,
            };
            value.push_str(&blanks);
            blanks.clear();
            value.push(literal);
        }
    }
}
