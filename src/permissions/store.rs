//! Where a project's remembered approvals are kept: a file of their own
//! in dashfloat's configuration directory (`permissions/`, named by a
//! hash of the project's real path, which the file also holds), never in
//! the project, so a repository cannot grant itself anything. Written
//! atomically; read within a bound; every change reads the file afresh,
//! so two dashfloats in one project do not undo each other's. ADR 0044.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::own_files::{self, ReadError};
use crate::stable_hash::ContentHash;

use super::rule::Rule;

/// The most rules a project keeps: far more than a person approves by
/// hand, few enough to list.
pub const RULES_MAX: usize = 100;

/// The largest rules file read (64 KiB): a hundred rules of the longest
/// words fit; anything larger was not written by dashfloat.
pub const RULES_FILE_MAX_BYTES: u64 = 64 * 1024;

/// The rules file's schema version.
const VERSION: u32 = 1;

/// Why the rules could not be read or kept.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read.
    #[error("cannot read the remembered commands in {path}: {source}")]
    Read {
        /// The rules file.
        path: PathBuf,
        /// Why.
        source: ReadError,
    },
    /// The file is not a rules file of this project.
    #[error("the remembered commands in {path} cannot be used: {detail}")]
    Invalid {
        /// The rules file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The file could not be written.
    #[error("cannot keep the remembered commands in {path}: {source}")]
    Write {
        /// The rules file.
        path: PathBuf,
        /// The OS's words.
        source: std::io::Error,
    },
    /// The project has [`RULES_MAX`] rules already.
    #[error(
        "this project has {RULES_MAX} remembered commands already; /permissions remove one first"
    )]
    Full,
}

/// The rules file as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    v: u32,
    /// The project's real path, as it was when the file was written.
    project: String,
    /// The rules, as [`Rule`] displays them, in the order remembered.
    allow: Vec<String>,
}

/// The remembered approvals of one project.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    project: PathBuf,
}

impl Store {
    /// The rules of `project` (its real path) in `config_dir`,
    /// dashfloat's configuration directory.
    pub fn new(config_dir: &Path, project: &Path) -> Store {
        Store {
            dir: config_dir.join("permissions"),
            project: project.to_path_buf(),
        }
    }

    /// The project the rules are for.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The rules file.
    pub fn path(&self) -> PathBuf {
        let (ContentHash::Xxh3(key) | ContentHash::Sip13(key)) =
            crate::stable_hash::content_hash(self.project.as_os_str().as_encoded_bytes());
        self.dir.join(format!("{key:016x}.json"))
    }

    /// The rules remembered, in the order they were; none when there is
    /// no file.
    pub fn load(&self) -> Result<Vec<Rule>, StoreError> {
        let path = self.path();
        let Some(bytes) =
            own_files::read_bounded(&path, RULES_FILE_MAX_BYTES).map_err(|source| {
                StoreError::Read {
                    path: path.clone(),
                    source,
                }
            })?
        else {
            return Ok(Vec::new());
        };
        let invalid = |detail: String| StoreError::Invalid {
            path: path.clone(),
            detail,
        };
        let file: RulesFile = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
        if file.v != VERSION {
            return Err(invalid(format!("it is of version {}", file.v)));
        }
        if Path::new(&file.project) != self.project {
            return Err(invalid(format!("it is for {}", file.project)));
        }
        if file.allow.len() > RULES_MAX {
            return Err(invalid(format!("it holds more than {RULES_MAX} rules")));
        }
        file.allow
            .iter()
            .map(|text| {
                text.parse::<Rule>()
                    .map_err(|e| invalid(format!("{text:?} is no rule: {e}")))
            })
            .collect()
    }

    /// Adds `rule` (kept once) to the rules on file, and returns them all.
    pub fn add(&self, rule: &Rule) -> Result<Vec<Rule>, StoreError> {
        let mut rules = self.load()?;
        if !rules.contains(rule) {
            if rules.len() >= RULES_MAX {
                return Err(StoreError::Full);
            }
            rules.push(rule.clone());
        }
        self.write(&rules)?;
        Ok(rules)
    }

    /// Takes `rule` out of the rules on file; returns the rest, and
    /// whether it was there.
    pub fn remove(&self, rule: &Rule) -> Result<(Vec<Rule>, bool), StoreError> {
        let mut rules = self.load()?;
        let before = rules.len();
        rules.retain(|r| r != rule);
        let removed = rules.len() < before;
        if removed {
            self.write(&rules)?;
        }
        Ok((rules, removed))
    }

    /// Replaces the file with `rules`.
    fn write(&self, rules: &[Rule]) -> Result<(), StoreError> {
        let path = self.path();
        let failed = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        let Some(project) = self.project.to_str() else {
            return Err(StoreError::Invalid {
                path,
                detail: "the project's path is not UTF-8, which the file cannot hold".to_owned(),
            });
        };
        let file = RulesFile {
            v: VERSION,
            project: project.to_owned(),
            allow: rules.iter().map(ToString::to_string).collect(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| failed(e.into()))?;
        bytes.push(b'\n');
        own_files::make_dir(&self.dir).map_err(failed)?;
        own_files::write_atomically(&self.dir, &path, &bytes, ".rules-").map_err(failed)
    }
}
