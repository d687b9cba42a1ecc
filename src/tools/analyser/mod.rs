//! The read-only command analyser: whether an `execute_command` line can be
//! shown to only read, and only inside the project, so that it may run
//! without the person's `y`. `docs/decisions/0025-read-only-allow-list.md`.
//!
//! It is an allow-list at every level. The line must parse entirely in a
//! small subset of shell syntax ([`parse`]: words, quotes without
//! expansions, `|`, `&&`, `||`, `;`); every stage must be one of a few
//! known commands (`ls`, `cat`, `grep`, `find`, `git log`, ...) with
//! options from that command's table, each option's value of the kind the
//! table gives it (`values`); every path must pass the file
//! tools' path policy ([`resolve`](crate::tools::resolve)), and a file
//! whose content is read must be within [`ANALYSER_MAX_FILE_BYTES`]; a git
//! stage's repository must have no configuration that names a program.
//! Anything else is [`Verdict::Ask`], with a reason for the confirmation.
//!
//! What runs is what was analysed: an accepted line comes back as
//! [`Verdict::ReadOnly`] with the line re-rendered from the words that were
//! checked ([`Plan::render`]), and that rendering is what the runner must
//! give the shell, with [`ANALYSER_RUN_ENV`] applied to its environment.
//!
//! The analysis reads the filesystem (paths, sizes) and asks the git the
//! line would run which repository and configuration it would use
//! ([`git_repo`]; git run so that it starts nothing else), and it does
//! not panic on any input.

mod commands;
mod git;
mod git_config;
mod git_probe;
mod git_repo;
mod parse;
mod paths;
mod program;
mod values;

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use git_repo::work_tree;
pub use parse::{ParseError, Plan, parse};

use super::env::{child_env, with_settings};
use super::{LocalWorkspace, PathError, Workspace};
use git_repo::GitRefusal;
use paths::{Line, Place};
use values::BadValue;

/// The largest file (10 MiB) whose content an auto-allowed command may be
/// given: `cat`, `head`, `tail`, `wc`, `grep`, `rg`, `sort`, `uniq`, `cut`,
/// `diff` and the files options such as `grep -f` read. A directory
/// searched recursively is not walked to check it (ADR 0025).
pub const ANALYSER_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The longest command line analysed (16 KiB); a longer one asks.
pub const ANALYSER_MAX_LINE_BYTES: usize = 16 * 1024;

/// Entries of a repository's own folders (its git directory and shared
/// one) looked through for a link or a special file, at most (20,000): a
/// repository keeps most objects packed, and git packs them itself past
/// 6,700 loose ones. One with more asks.
pub const ANALYSER_GIT_DIR_ENTRIES_MAX: usize = 20_000;

/// The longest the analysis of one command line may spend asking git
/// (10 s): one folder's questions take milliseconds; a configuration of
/// many megabytes, a huge index or a line of hundreds of git stages in
/// as many folders asks instead of holding the call.
const ANALYSER_GIT_TIME_MAX: Duration = Duration::from_secs(10);

/// Entries of a work tree looked through, at most (200,000), before a
/// git stage that reads untracked folders or attributes runs: for a
/// repository nested in it, or a link to a folder outside the project.
/// One with more asks. Build output and dependencies inside the work tree
/// count; a look through 200,000 entries took 0.2 s here.
pub const ANALYSER_WORK_TREE_ENTRIES_MAX: usize = 200_000;

/// One change to the environment of an auto-allowed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvSetting {
    /// Set the variable to the value.
    Set(&'static str, &'static str),
    /// Remove the variable.
    Unset(&'static str),
}

/// SHA-1's empty tree, which every SHA-1 repository has without storing
/// it: the analysed lines read attributes from it (`attr.tree`), so from
/// no file. A tree that does not resolve (`HEAD` on an unborn branch) is
/// dropped by git, which then reads the files again.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// What the runner must do to the environment of a line the analyser
/// allowed, so the commands behave as analysed: no pager, no system git
/// configuration, no index refresh by `git status`, no look inside
/// repositories planted in the work tree (a gitlink without
/// `.gitmodules`: not for their status, their summary or their log),
/// no folder names from the index's untracked cache (which can name
/// `..`), no pack a multi-pack index names by a path, no index rewritten
/// by `git diff`, no attributes read from a file (a history path can
/// lead anywhere), none of the variables that would point git at another
/// repository,
/// add configuration from the environment, make the analyser's
/// `git config` read another file than git does (`GIT_CONFIG`), run an
/// external diff, or give grep, ripgrep or the shell options the
/// analysis did not see.
pub const ANALYSER_RUN_ENV: &[EnvSetting] = &[
    EnvSetting::Set("GIT_PAGER", "cat"),
    EnvSetting::Set("PAGER", "cat"),
    EnvSetting::Set("GIT_CONFIG_NOSYSTEM", "1"),
    EnvSetting::Set("GIT_OPTIONAL_LOCKS", "0"),
    EnvSetting::Set("GIT_NO_LAZY_FETCH", "1"),
    EnvSetting::Unset("LESS"),
    EnvSetting::Unset("GIT_EXTERNAL_DIFF"),
    EnvSetting::Unset("GIT_CONFIG_PARAMETERS"),
    EnvSetting::Unset("GIT_CONFIG"),
    EnvSetting::Set("GIT_CONFIG_COUNT", "7"),
    EnvSetting::Set("GIT_CONFIG_KEY_0", "diff.ignoreSubmodules"),
    EnvSetting::Set("GIT_CONFIG_VALUE_0", "all"),
    EnvSetting::Set("GIT_CONFIG_KEY_1", "status.submoduleSummary"),
    EnvSetting::Set("GIT_CONFIG_VALUE_1", "false"),
    EnvSetting::Set("GIT_CONFIG_KEY_2", "diff.submodule"),
    EnvSetting::Set("GIT_CONFIG_VALUE_2", "short"),
    EnvSetting::Set("GIT_CONFIG_KEY_3", "core.untrackedCache"),
    EnvSetting::Set("GIT_CONFIG_VALUE_3", "false"),
    EnvSetting::Set("GIT_CONFIG_KEY_4", "core.multiPackIndex"),
    EnvSetting::Set("GIT_CONFIG_VALUE_4", "false"),
    EnvSetting::Set("GIT_CONFIG_KEY_5", "diff.autoRefreshIndex"),
    EnvSetting::Set("GIT_CONFIG_VALUE_5", "false"),
    EnvSetting::Set("GIT_CONFIG_KEY_6", "attr.tree"),
    EnvSetting::Set("GIT_CONFIG_VALUE_6", EMPTY_TREE),
    EnvSetting::Unset("GIT_DIR"),
    EnvSetting::Unset("GIT_WORK_TREE"),
    EnvSetting::Unset("GIT_COMMON_DIR"),
    EnvSetting::Unset("GIT_INDEX_FILE"),
    EnvSetting::Unset("GIT_OBJECT_DIRECTORY"),
    EnvSetting::Unset("GIT_ALTERNATE_OBJECT_DIRECTORIES"),
    EnvSetting::Unset("GIT_NAMESPACE"),
    EnvSetting::Unset("GIT_ATTR_SOURCE"),
    EnvSetting::Unset("RIPGREP_CONFIG_PATH"),
    EnvSetting::Unset("GREP_OPTIONS"),
    EnvSetting::Unset("POSIXLY_CORRECT"),
    EnvSetting::Unset("BASH_ENV"),
    EnvSetting::Unset("ENV"),
];

/// The analyser's answer for one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Read-only and inside the project: it may run unasked, as `rendered`
    /// (never as the line given), with [`ANALYSER_RUN_ENV`] applied.
    ReadOnly {
        /// The line to run: the analysed words, quoted for the shell.
        rendered: String,
    },
    /// Not shown to be read-only: the person decides. `reason` says what
    /// the analyser could not accept, for the confirmation.
    Ask {
        /// Short text naming the first construct, command, option or path
        /// that was not accepted.
        reason: String,
    },
    /// Not a command line the shell would run: an unterminated quote, an
    /// operator with nothing on one side, an empty line, a `(` after a
    /// command's words.
    Invalid {
        /// What is wrong with it.
        reason: String,
    },
}

/// The analyser for one project: its workspace, the size cap, and the
/// environment the commands it allows run with.
#[derive(Debug, Clone)]
pub struct Analyser {
    workspace: Arc<dyn Workspace>,
    max_file: u64,
    env: Vec<(OsString, OsString)>,
    git_time: Duration,
    work_tree_entries: usize,
}

impl Analyser {
    /// An analyser for the project at `root` on this machine
    /// ([`LocalWorkspace`]), as [`Analyser::for_workspace`].
    pub fn new(root: impl Into<PathBuf>) -> Analyser {
        Analyser::for_workspace(Arc::new(LocalWorkspace::new(root)))
    }

    /// An analyser for the project in `workspace` (the one the commands
    /// will run in: every path is looked at and git asked through it),
    /// with the size cap [`ANALYSER_MAX_FILE_BYTES`] and, for the commands'
    /// environment, this process's without credentials
    /// ([`Analyser::with_command_env`]).
    pub fn for_workspace(workspace: Arc<dyn Workspace>) -> Analyser {
        Analyser {
            workspace,
            max_file: ANALYSER_MAX_FILE_BYTES,
            env: Vec::new(),
            git_time: ANALYSER_GIT_TIME_MAX,
            work_tree_entries: ANALYSER_WORK_TREE_ENTRIES_MAX,
        }
        .with_command_env(child_env(std::env::vars_os(), &[], &[]))
    }

    /// The same analyser with another size cap for files a command reads.
    pub fn with_max_file(mut self, bytes: u64) -> Analyser {
        self.max_file = bytes;
        self
    }

    /// The same analyser with another bound on the time one line's
    /// questions to git may take (the default is
    /// [`ANALYSER_GIT_TIME_MAX`]).
    pub fn with_git_time(mut self, limit: Duration) -> Analyser {
        self.git_time = limit;
        self
    }

    /// The same analyser with another bound on the entries of a work
    /// tree looked through (the default is
    /// [`ANALYSER_WORK_TREE_ENTRIES_MAX`]).
    pub fn with_work_tree_entries(mut self, max: usize) -> Analyser {
        self.work_tree_entries = max;
        self
    }

    /// The same analyser for commands that run with `env` (before
    /// [`ANALYSER_RUN_ENV`], which it applies): the `PATH` that finds each
    /// program and the variables that steer git are the ones the line
    /// will run with.
    pub fn with_command_env(mut self, env: Vec<(OsString, OsString)>) -> Analyser {
        self.env = with_settings(env, ANALYSER_RUN_ENV);
        self
    }

    /// Analyses `line` as `execute_command` would run it in `cwd` (relative
    /// to the root, or absolute inside it, as the tool takes it).
    pub fn analyse(&self, cwd: &str, line: &str) -> Verdict {
        if line.len() > ANALYSER_MAX_LINE_BYTES {
            return Verdict::Ask {
                reason: Refusal::TooLong(ANALYSER_MAX_LINE_BYTES).to_string(),
            };
        }
        let plan = match parse(line) {
            Ok(plan) => plan,
            Err(e) if e.is_syntax_error() => {
                return Verdict::Invalid {
                    reason: e.to_string(),
                };
            }
            Err(e) => {
                return Verdict::Ask {
                    reason: e.to_string(),
                };
            }
        };
        match self.check(cwd, &plan) {
            Ok(()) => Verdict::ReadOnly {
                rendered: plan.render(),
            },
            Err(refusal) => Verdict::Ask {
                reason: refusal.to_string(),
            },
        }
    }

    fn check(&self, cwd: &str, plan: &Plan) -> Result<(), Refusal> {
        let ws = self.workspace.as_ref();
        let dir = ws.resolve(cwd).map_err(|error| Refusal::Path {
            word: cwd.to_owned(),
            error,
        })?;
        if !ws.stat(&dir).is_ok_and(|meta| meta.is_dir()) {
            return Err(Refusal::NotDirectory(cwd.to_owned()));
        }
        let line = Line {
            deadline: Instant::now() + self.git_time,
            work_tree_entries: self.work_tree_entries,
            repos: RefCell::default(),
            work_trees: RefCell::default(),
        };
        let place = Place {
            ws,
            dir,
            max_file: self.max_file,
            line: &line,
        };
        for stage in plan.stages() {
            if let Some(name) = stage.first() {
                program::check(&place, name, &self.env)?;
            }
            commands::check_stage(self, &place, stage)?;
        }
        Ok(())
    }

    /// The environment the commands it allows run with,
    /// [`ANALYSER_RUN_ENV`] applied.
    fn command_env(&self) -> &[(OsString, OsString)] {
        &self.env
    }
}

/// Analyses `line` as run at the project root, with the defaults of
/// [`Analyser::new`].
pub fn analyse(root: &Path, line: &str) -> Verdict {
    Analyser::new(root).analyse(".", line)
}

/// Why a parsed line is not auto-allowed. The text is the reason the
/// person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Refusal {
    #[error("the command line is longer than {0} bytes")]
    TooLong(usize),
    #[error("`{0}` is not a read-only command")]
    Command(String),
    #[error("`{cmd} {flag}` {why}")]
    Flag {
        cmd: String,
        flag: String,
        why: &'static str,
    },
    #[error("`{cmd} {flag}` needs a value")]
    MissingValue { cmd: String, flag: String },
    #[error("`{cmd} {flag} {value}`: {why}")]
    Value {
        cmd: String,
        flag: String,
        value: String,
        why: BadValue,
    },
    #[error("`{cmd}`: {why}")]
    Operand { cmd: String, why: String },
    #[error("`{word}`: {error}")]
    Path { word: String, error: PathError },
    #[error("`{word}`: {why}")]
    Climb { word: String, why: &'static str },
    #[error("`{0}` does not name a UTF-8 path from here")]
    NotUtf8(String),
    #[error(
        "`{word}` is {}, over the {} cap for files a command reads",
        size_text(.size),
        size_text(.cap)
    )]
    TooLarge { word: String, size: u64, cap: u64 },
    #[error("`{0}` is a directory; comparing directories opens files not named on the line")]
    Directory(String),
    #[error("`{0}` is not a regular file (a FIFO, socket or device can block or never end)")]
    Special(String),
    #[error("`{0}` is not a directory")]
    NotDirectory(String),
    #[error("`{cmd}` would run {path}, {why}")]
    Program {
        cmd: String,
        path: String,
        why: &'static str,
    },
    #[error(transparent)]
    Git(#[from] GitRefusal),
}

/// A byte count for a person: MiB or KiB to one decimal, else bytes.
fn size_text(bytes: &u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match *bytes {
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}
