//! What one remembered approval allows: a program and the words that
//! choose what it does (`cargo test`, `npm run build`, `python3 -m
//! pytest`, `make`). A line is split by the read-only analyser's parser;
//! a line it cannot split into one simple command has no rule, and so
//! matches none. ADR 0044.

use std::fmt;

use crate::tools::analyser::ANALYSER_MAX_LINE_BYTES;
use crate::tools::parse;

/// Programs that run whatever command their arguments name — shells,
/// `env`, `sudo`, `xargs`, `timeout` and the like: never remembered, as
/// a rule for one would be a rule for every line.
const RUNS_ANY_COMMAND: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "env",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "xargs",
    "exec",
    "eval",
    "command",
    "builtin",
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "time",
    "watch",
    "strace",
    "ltrace",
    "chroot",
    "unshare",
    "nsenter",
    "setsid",
    "setpriv",
    "flock",
    "parallel",
    "ssh",
    "script",
    "stdbuf",
    "taskset",
    "chrt",
    "systemd-run",
    "firejail",
    "bwrap",
];

/// Programs whose words are targets of the project's own build file, not
/// subcommands: their rule is the program alone, covering every target
/// but the [`OUTWARD_TARGETS`].
const TARGET_PROGRAMS: &[&str] = &["make", "gmake", "ninja", "just"];

/// Targets that by their name reach beyond the project (an install, a
/// release): a target program's rule covers none of them; each is a rule
/// of its own (`make install`).
const OUTWARD_TARGETS: &[&str] = &[
    "install",
    "uninstall",
    "deploy",
    "publish",
    "release",
    "upload",
    "push",
];

/// The longest word a rule holds (a program's path included).
const RULE_WORD_MAX_CHARS: usize = 128;

/// Why a line has no rule: `a` is not offered for it, and no rule
/// matches it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoRule {
    /// Longer than the analyser parses.
    #[error("the line is longer than {ANALYSER_MAX_LINE_BYTES} bytes")]
    TooLong,
    /// Outside the analyser's subset: an expansion, a redirect, a glob,
    /// an assignment, a quote left open.
    #[error("{0}")]
    NotSimple(String),
    /// More than one command: a pipe, `;`, `&&`, `||`.
    #[error("it is more than one command")]
    Several,
    /// The program runs whatever its arguments name.
    #[error("`{0}` runs whatever command it is given")]
    RunsAnyCommand(String),
    /// The words give no action a rule could name: options then
    /// operands (`rm -rf x`, `python3 -c CODE`), a word that is no name,
    /// several outward targets.
    #[error("what `{0}` does is not chosen by a subcommand")]
    Unclear(String),
}

/// One remembered approval: a program and the words choosing its action,
/// none for the program alone. It matches exactly the lines whose own
/// rule it is ([`Rule::for_line`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    program: String,
    action: Vec<String>,
}

impl Rule {
    /// The rule of `line`: what `a` offers to remember for it.
    pub fn for_line(line: &str) -> Result<Rule, NoRule> {
        if line.len() > ANALYSER_MAX_LINE_BYTES {
            return Err(NoRule::TooLong);
        }
        let plan = parse(line).map_err(|e| NoRule::NotSimple(e.to_string()))?;
        let mut stages = plan.stages();
        let (Some(words), None) = (stages.next(), stages.next()) else {
            return Err(NoRule::Several);
        };
        let (program, args) = words.split_first().ok_or(NoRule::Several)?;
        let unclear = || NoRule::Unclear(program.clone());
        if !is_program(program) {
            return Err(unclear());
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        if RUNS_ANY_COMMAND.contains(&name) {
            return Err(NoRule::RunsAnyCommand(program.clone()));
        }
        let action = action(name, args).ok_or_else(unclear)?;
        Ok(Rule {
            program: program.clone(),
            action,
        })
    }

    /// Whether the rule allows `line`: the line has a rule, and it is
    /// this one.
    pub fn matches(&self, line: &str) -> bool {
        Rule::for_line(line).is_ok_and(|rule| rule == *self)
    }
}

impl fmt::Display for Rule {
    /// The words, space-separated: `npm run build`. [`std::str::FromStr`]
    /// reads them back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for word in &self.action {
            write!(f, " {word}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Rule {
    type Err = NoRule;

    /// A rule as [`Rule`]'s `Display` writes it (a file's entry, a
    /// `/permissions remove` argument): the rule of that line, which must
    /// read the same.
    fn from_str(text: &str) -> Result<Rule, NoRule> {
        let rule = Rule::for_line(text)?;
        if rule.to_string() == text {
            Ok(rule)
        } else {
            Err(NoRule::Unclear(text.to_owned()))
        }
    }
}

/// The words choosing what `program` (its name, without a directory)
/// does, given its `args`; `None` when no rule can name it.
fn action(program: &str, args: &[String]) -> Option<Vec<String>> {
    if let (Some(chooser), [first, rest @ ..]) = (chooser(program), args)
        && first == chooser
    {
        return match rest.first() {
            None => Some(vec![first.clone()]),
            Some(name) if is_name(name) => Some(vec![first.clone(), name.clone()]),
            Some(_) => None,
        };
    }
    if TARGET_PROGRAMS.contains(&program) {
        if !args.iter().all(|word| is_option(word) || is_plain(word)) {
            return None;
        }
        let mut outward = args
            .iter()
            .filter(|word| OUTWARD_TARGETS.contains(&word.as_str()));
        return match (outward.next(), outward.next()) {
            (None, _) => Some(Vec::new()),
            (Some(target), None) => Some(vec![target.clone()]),
            (Some(_), Some(_)) => None,
        };
    }
    match args.first() {
        None => Some(Vec::new()),
        Some(first) if first.starts_with('-') => {
            args.iter().all(|word| is_option(word)).then(Vec::new)
        }
        Some(first) if is_name(first) => Some(vec![first.clone()]),
        Some(_) => None,
    }
}

/// The word before the name that chooses the action, for the programs
/// whose action is chosen by two words: `npm run build`, `python3 -m
/// pytest`.
fn chooser(program: &str) -> Option<&'static str> {
    match program {
        "npm" | "pnpm" | "yarn" | "bun" => Some("run"),
        "python" | "python3" | "pypy3" => Some("-m"),
        _ if program.strip_prefix("python3.").is_some_and(|minor| {
            !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())
        }) =>
        {
            Some("-m")
        }
        _ => None,
    }
}

/// A subcommand's, a script's or a module's name: `test`, `build:prod`,
/// `run-tests`, `unittest.main`.
fn is_name(word: &str) -> bool {
    word.len() <= RULE_WORD_MAX_CHARS
        && word.starts_with(|c: char| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:+-".contains(c))
}

/// A target or an option's value for a target program: plain characters
/// (`test`, `sub/dir`, `CC=clang`), no room for a recipe (`--eval=…;…`).
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word.len() <= RULE_WORD_MAX_CHARS
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:+=-".contains(c))
}

/// A program as a rule names it: a name or a path of plain characters.
fn is_program(word: &str) -> bool {
    word.len() <= RULE_WORD_MAX_CHARS
        && !word.starts_with('-')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./+-".contains(c))
}

/// A plain option (`-x`, `--release`, `-j4`, `--jobs=4`): what may follow
/// a program whose rule is the program alone. Its characters leave no
/// room for code (`python3 -c…`).
fn is_option(word: &str) -> bool {
    word.len() <= RULE_WORD_MAX_CHARS
        && word.starts_with('-')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,:=+-".contains(c))
}
