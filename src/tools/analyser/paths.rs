//! Where a stage runs, and the checks every path argument goes through:
//! the file tools' path policy ([`resolve`]), a rule for `..` that makes
//! the policy's reading agree with the kernel's, and the size cap for
//! files whose content a command reads. ADR 0025.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use super::Refusal;
use super::git_repo::{GitRefusal, WorkTree};
use crate::tools::{FileKind, PathError, Workspace};

/// The directory a stage runs in (a real path inside the project) and the
/// limits its paths are held to.
#[derive(Debug, Clone)]
pub(super) struct Place<'a> {
    /// The project, through which every path is resolved and looked at.
    pub ws: &'a dyn Workspace,
    /// The real path of the directory the stage runs in.
    pub dir: PathBuf,
    /// The largest file a content-reading command may be given.
    pub max_file: u64,
    /// What the line's stages share.
    pub line: &'a Line,
}

/// What the analysis of one command line shares between its stages.
#[derive(Debug)]
pub(super) struct Line {
    /// When asking git must be done by, for the whole line.
    pub deadline: Instant,
    /// The most entries of a work tree looked through.
    pub work_tree_entries: usize,
    /// git's verdict on each folder a stage ran it in: the top of the work
    /// tree, or why not. A line of many stages asks git once a folder.
    pub repos: RefCell<HashMap<PathBuf, Result<PathBuf, GitRefusal>>>,
    /// What a look through each work tree a stage reads found, or why
    /// there was none: once a work tree per line.
    pub work_trees: RefCell<HashMap<PathBuf, Result<WorkTree, GitRefusal>>>,
}

/// What a command does with a path it is given, which decides the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    /// It looks at the name: lists it, stats it, walks it. Any type.
    Look,
    /// It reads the content of a file, or walks a directory: a regular
    /// file must be within the size cap; a FIFO, socket or device is
    /// refused (it could block or never end).
    Read,
    /// Like `Read`, but a directory is refused too (`diff` of directories
    /// opens files that are not named on the line).
    ReadFileOnly,
}

/// Where a program reads a path given as an option's value from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Base {
    /// The directory the stage runs in.
    Stage,
    /// The top of the git work tree: git moves there before it opens an
    /// option's file (`ls-files -X`, `blame --contents`), whatever
    /// directory it was started in. The top lies between the stage's
    /// directory and the project root (a repository found above the root
    /// asks), so the path is checked from each of them.
    WorkTreeTop,
}

impl<'a> Place<'a> {
    /// The real path `word` names from this directory, if the path policy
    /// keeps it inside the project and the shell will reach the same file.
    pub fn resolve(&self, word: &str) -> Result<PathBuf, Refusal> {
        let refused = |error: PathError| Refusal::Path {
            word: word.to_owned(),
            error,
        };
        if word.is_empty() {
            return Err(refused(PathError::Empty));
        }
        let joined = self.dir.join(word);
        climbs_only_directories(self.ws, &joined).map_err(|why| Refusal::Climb {
            word: word.to_owned(),
            why,
        })?;
        let Some(text) = joined.to_str() else {
            return Err(Refusal::NotUtf8(word.to_owned()));
        };
        self.ws.resolve(text).map_err(refused)
    }

    /// Checks `word` as a path used as `using` says.
    pub fn check(&self, word: &str, using: Use) -> Result<(), Refusal> {
        let real = self.resolve(word)?;
        if using == Use::Look {
            return Ok(());
        }
        // A name that does not exist makes the command fail; nothing is read.
        let Ok(meta) = self.ws.stat(&real) else {
            return Ok(());
        };
        if meta.is_file() {
            if meta.len > self.max_file {
                return Err(Refusal::TooLarge {
                    word: word.to_owned(),
                    size: meta.len,
                    cap: self.max_file,
                });
            }
            Ok(())
        } else if meta.is_dir() {
            match using {
                Use::ReadFileOnly => Err(Refusal::Directory(word.to_owned())),
                _ => Ok(()),
            }
        } else {
            Err(Refusal::Special(word.to_owned()))
        }
    }

    /// Checks `word` as a path used as `using` says, read from `base`.
    pub fn check_from(&self, base: Base, word: &str, using: Use) -> Result<(), Refusal> {
        if base == Base::Stage {
            return self.check(word, using);
        }
        let root = self.ws.resolve(".").map_err(|error| Refusal::Path {
            word: word.to_owned(),
            error,
        })?;
        for dir in self
            .dir
            .ancestors()
            .take_while(|dir| dir.starts_with(&root))
        {
            let level = Place {
                dir: dir.to_path_buf(),
                ..self.clone()
            };
            level.check(word, using)?;
        }
        Ok(())
    }

    /// The place a stage reaches with `cd`-like options (`git -C dir`).
    pub fn enter(&self, word: &str) -> Result<Place<'a>, Refusal> {
        let dir = self.resolve(word)?;
        if !self.ws.stat(&dir).is_ok_and(|meta| meta.is_dir()) {
            return Err(Refusal::NotDirectory(word.to_owned()));
        }
        Ok(Place {
            dir,
            ..self.clone()
        })
    }
}

/// The path policy reads a `..` the caller wrote lexically (`link/..` is
/// the directory holding `link`); the kernel climbs from where `link`
/// leads. They agree when every name a `..` climbs out of is a real
/// directory, so that is required: a `..` after a symbolic link, a file or
/// a missing name is refused.
fn climbs_only_directories(ws: &dyn Workspace, path: &Path) -> Result<(), &'static str> {
    let mut at = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                match ws.lstat(&at) {
                    Ok(meta) if meta.kind == FileKind::Symlink => {
                        return Err("a `..` climbs out of a symbolic link, which the shell \
                                    follows first");
                    }
                    Ok(meta) if meta.is_dir() => {}
                    _ => return Err("a `..` follows a name that is not a directory"),
                }
                at.pop();
            }
            Component::CurDir => {}
            other => at.push(other),
        }
    }
    Ok(())
}
