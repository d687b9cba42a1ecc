//! Finding the command files: the project's through the path policy (a
//! link out of the project is not followed), the person's from their own
//! directories, each bounded in count and size.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::own_files;
use crate::protocol::{CommandScope, CustomCommand};
use crate::tools::Workspace;

use super::template;

/// The largest command file read (64 KiB): pages of prompt; a larger one
/// is left out with a notice, not cut.
pub const COMMAND_FILE_MAX_BYTES: u64 = 64 * 1024;
/// The most commands offered, both scopes together: more than anyone
/// keeps, and the popup and `/help` stay short to build.
pub const COMMANDS_MAX: usize = 256;
/// Names one command directory is listed for at most, its folders
/// included.
const DIRECTORY_NAMES_MAX: usize = 1024;
/// The longest command name.
const NAME_MAX_CHARS: usize = 64;

/// The project's command directories, in the order their names win.
const PROJECT_DIRS: [&str; 2] = [".dashfloat/commands", ".claude/commands"];

/// The person's command directories, in the order their names win:
/// dashfloat's own (`commands/` in its configuration directory), Claude
/// Code's `~/.claude/commands`, Codex's `$CODEX_HOME/prompts` (else
/// `~/.codex/prompts`).
pub fn person_dirs(
    config_dir: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let codex = env("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".codex")));
    [
        config_dir.map(|d| d.join("commands")),
        home.map(|h| h.join(".claude").join("commands")),
        codex.map(|c| c.join("prompts")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The commands found, and what was left out and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The person's first, then the project's; within a scope a name is
    /// the first directory's.
    pub commands: Vec<CustomCommand>,
    /// One line per file left out.
    pub problems: Vec<String>,
}

/// A file found, before it is read.
struct File {
    /// Its name without `.md`.
    name: String,
    /// Where it is said to be, for notices (`.claude/commands/x.md`).
    shown: String,
    /// Where it is read from.
    at: Place,
}

/// Where a command file is read from.
enum Place {
    /// The person's own file.
    Person(PathBuf),
    /// A project file, by its path relative to the project, read through
    /// the path policy.
    Project(String),
}

impl File {
    /// Its text, or why it cannot be used.
    fn read(&self, ws: &dyn Workspace) -> Result<String, String> {
        match &self.at {
            Place::Person(path) => match own_files::read_bounded(path, COMMAND_FILE_MAX_BYTES) {
                Ok(Some(bytes)) => {
                    String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())
                }
                Ok(None) => Err("it is gone".to_owned()),
                Err(e) => Err(e.to_string()),
            },
            Place::Project(relative) => ws
                .resolve(relative)
                .map_err(|e| e.to_string())
                .and_then(|real| {
                    ws.read_small(&real, COMMAND_FILE_MAX_BYTES)
                        .map_err(|e| e.to_string())
                })
                .and_then(|text| text.ok_or_else(|| "it is gone".to_owned())),
        }
    }
}

/// Every command of the person's `dirs` and of the project `ws` is
/// rooted at. Each directory is listed for [`DIRECTORY_NAMES_MAX`] names
/// at most, its folders included; a file is read only when its name is
/// not taken in its scope and fewer than [`COMMANDS_MAX`] are found.
pub fn find(ws: &dyn Workspace, person: &[PathBuf]) -> Found {
    let mut found = Found::default();
    for dir in person {
        let origin = dir.display().to_string();
        let files = person_files(dir, &origin);
        add(&mut found, ws, CommandScope::Person, &origin, files);
    }
    for dir in PROJECT_DIRS {
        let files = project_files(ws, dir);
        add(&mut found, ws, CommandScope::Project, dir, files);
    }
    found
}

fn add(found: &mut Found, ws: &dyn Workspace, scope: CommandScope, origin: &str, files: Vec<File>) {
    let mut taken: HashSet<String> = found
        .commands
        .iter()
        .filter(|c| c.scope == scope)
        .map(|c| c.name.clone())
        .collect();
    for file in files {
        if !is_name(&file.name) {
            found.problems.push(format!(
                "{}: left out: a command's name is letters, digits, `.`, `_` and `-`",
                file.shown
            ));
            continue;
        }
        if taken.contains(&file.name) {
            continue;
        }
        if found.commands.len() >= COMMANDS_MAX {
            found.problems.push(format!(
                "{}: left out, and any after it: more than {COMMANDS_MAX} commands",
                file.shown
            ));
            return;
        }
        let text = match file.read(ws) {
            Ok(text) => text,
            Err(why) => {
                found
                    .problems
                    .push(format!("{}: left out: {why}", file.shown));
                continue;
            }
        };
        taken.insert(file.name.clone());
        let parsed = template::parse(&text);
        found.commands.push(CustomCommand {
            name: file.name,
            scope,
            origin: origin.to_owned(),
            description: parsed.description,
            argument_hint: parsed.argument_hint,
            template: parsed.template,
            ignored: parsed.ignored,
        });
    }
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= NAME_MAX_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The `.md` files of the person's `dir` and of the folders in it
/// (Claude Code's namespaces), sorted by path, named as `shown`.
fn person_files(dir: &Path, shown: &str) -> Vec<File> {
    let mut budget = DIRECTORY_NAMES_MAX;
    markdown_in(dir, 2, &mut budget)
        .into_iter()
        .map(|(path, name)| {
            let relative = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            File {
                name,
                shown: format!("{shown}/{relative}"),
                at: Place::Person(path),
            }
        })
        .collect()
}

/// The `.md` files under `dir`, `depth` levels deep at most, with the
/// name each gives its command, sorted by path; `budget` names are
/// listed at most, and what is listed is taken from it.
fn markdown_in(dir: &Path, depth: u32, budget: &mut usize) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .take(*budget)
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    *budget = budget.saturating_sub(paths.len());
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            if depth > 1 {
                out.extend(markdown_in(&path, depth - 1, budget));
            }
        } else if let Some(name) = markdown_name(&path) {
            out.push((path, name));
        }
    }
    out
}

/// `name` of `name.md`.
fn markdown_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    file.strip_suffix(".md").map(str::to_owned)
}

/// The `.md` files of the project's `dir` and of the folders in it, to
/// be read through the path policy.
fn project_files(ws: &dyn Workspace, dir: &str) -> Vec<File> {
    let mut budget = DIRECTORY_NAMES_MAX;
    project_markdown(ws, dir, 2, &mut budget)
        .into_iter()
        .filter_map(|relative| {
            let name = markdown_name(Path::new(&relative))?;
            Some(File {
                name,
                shown: relative.clone(),
                at: Place::Project(relative),
            })
        })
        .collect()
}

/// The project-relative paths of the `.md` files under the project's
/// `dir`, `depth` levels deep at most, sorted; `budget` names are listed
/// at most, and what is listed is taken from it.
fn project_markdown(ws: &dyn Workspace, dir: &str, depth: u32, budget: &mut usize) -> Vec<String> {
    let Ok(real) = ws.resolve(dir) else {
        return Vec::new();
    };
    let Ok(listing) = ws.list(&real, *budget) else {
        return Vec::new();
    };
    *budget = budget.saturating_sub(listing.entries.len());
    let mut out = Vec::new();
    for entry in listing.entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        let relative = format!("{dir}/{name}");
        match entry.stat {
            Some(stat) if stat.is_dir() && depth > 1 => {
                out.extend(project_markdown(ws, &relative, depth - 1, budget));
            }
            Some(_) if name.ends_with(".md") => out.push(relative),
            _ => {}
        }
    }
    out
}
