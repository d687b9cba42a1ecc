//! `git` stages: the global options before the subcommand, the read-only
//! subcommands and their allow-lists, and then the repository itself
//! ([`git_repo`](super::git_repo)): one git would not use from the
//! project, or a configuration that names a program, refuses the stage.
//! ADR 0025.

use super::commands::{Parsed, Spec, Style, Takes};
use super::git_config;
use super::git_repo;
use super::paths::{Place, Use};
use super::{Analyser, Refusal};

const WRITES_A_FILE: &str = "writes a file";
const OTHER_REPOSITORY: &str = "points git at another repository or work tree";
const SUBMODULES: &str = "runs git in submodules, whose configuration is not checked";
const GPG: &str = "verifies signatures by running gpg";

/// Options of `git` itself, before the subcommand; `-C` is handled apart
/// (it changes the directory the rest is read from).
const GLOBAL: &[&str] = &["--no-pager", "-P", "--no-optional-locks"];

/// Refused global options, with why.
const GLOBAL_DENIED: &[(&str, &str)] = &[
    ("-c", "sets configuration the analyser does not check"),
    (
        "--config-env",
        "sets configuration the analyser does not check",
    ),
    ("--git-dir", OTHER_REPOSITORY),
    ("--work-tree", OTHER_REPOSITORY),
    ("--namespace", OTHER_REPOSITORY),
    ("--bare", OTHER_REPOSITORY),
    ("--exec-path", "runs git programs from another directory"),
    ("-p", "starts a pager"),
    ("--paginate", "starts a pager"),
];

/// Checks the words after `git`.
pub(super) fn check(analyser: &Analyser, place: &Place, args: &[String]) -> Result<(), Refusal> {
    let mut place = place.clone();
    let mut words = args.iter();
    let sub = loop {
        let Some(word) = words.next() else {
            return Err(Refusal::Operand {
                cmd: "git".to_owned(),
                why: "no subcommand".to_owned(),
            });
        };
        match word.as_str() {
            "-C" => {
                let dir = words.next().ok_or_else(|| Refusal::MissingValue {
                    cmd: "git".to_owned(),
                    flag: "-C".to_owned(),
                })?;
                place = place.enter(dir)?;
            }
            option if GLOBAL.contains(&option) => {}
            option if option.starts_with('-') => {
                let name = option.split_once('=').map_or(option, |(n, _)| n);
                let why = GLOBAL_DENIED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("is not an option the analyser allows", |(_, why)| *why);
                return Err(Refusal::Flag {
                    cmd: "git".to_owned(),
                    flag: name.to_owned(),
                    why,
                });
            }
            _ => break word,
        }
    };
    let spec = match sub.as_str() {
        "status" => &STATUS,
        "log" | "show" => &LOG,
        "diff" => &DIFF,
        "branch" => &BRANCH,
        "rev-parse" => &REV_PARSE,
        "ls-files" => &LS_FILES,
        "blame" => &BLAME,
        _ => return Err(Refusal::Command(format!("git {sub}"))),
    };
    let cmd = format!("git {sub}");
    let rest = words.as_slice();
    let parsed = spec.walk(&cmd, rest, &place)?;
    formats_run_nothing(&cmd, &parsed)?;
    if sub == "branch" && !parsed.operands.is_empty() && !parsed.has(&["-l", "--list"]) {
        return Err(Refusal::Operand {
            cmd,
            why: "a name without --list creates a branch".to_owned(),
        });
    }
    // Revisions and paths look alike (`main`, `src/lib.rs`, `HEAD:x`); every
    // operand is held to the path policy, which a revision passes.
    for word in &parsed.operands {
        place.check(word, Use::Look)?;
    }
    Ok(git_repo::check(&place, analyser.command_env())?)
}

/// `%G` placeholders (modified or not) in a pretty format make git verify
/// signatures with gpg.
fn formats_run_nothing(cmd: &str, parsed: &Parsed) -> Result<(), Refusal> {
    for (flag, value) in &parsed.flags {
        if matches!(*flag, "--format" | "--pretty")
            && value.is_some_and(git_config::verifies_signatures)
        {
            return Err(Refusal::Flag {
                cmd: cmd.to_owned(),
                flag: format!("{flag}=…%G…"),
                why: GPG,
            });
        }
    }
    Ok(())
}

/// Refused after any subcommand, with why.
const DENIED: &[(&str, &str)] = &[
    ("--output", WRITES_A_FILE),
    ("--ext-diff", "runs an external diff program"),
    ("--textconv", "runs text conversion programs"),
    ("--no-index", "compares files outside the repository"),
    ("--submodule", SUBMODULES),
    ("--recurse-submodules", SUBMODULES),
    ("--show-signature", GPG),
    ("-O", "reads an order file the analyser does not check"),
];

/// What `git branch` does besides listing, refused with why.
const BRANCH_DENIED: &[(&str, &str)] = &[
    ("-d", "deletes a branch"),
    ("-D", "deletes a branch"),
    ("--delete", "deletes a branch"),
    ("-m", "renames a branch"),
    ("-M", "renames a branch"),
    ("--move", "renames a branch"),
    ("-c", "copies a branch"),
    ("-C", "copies a branch"),
    ("--copy", "copies a branch"),
    ("-f", "forces a branch change"),
    ("--force", "forces a branch change"),
    ("-u", "changes a branch's upstream"),
    ("--set-upstream-to", "changes a branch's upstream"),
    ("--unset-upstream", "changes a branch's upstream"),
    ("-t", "sets a branch's upstream"),
    ("--track", "sets a branch's upstream"),
    ("--edit-description", "runs an editor"),
    ("--create-reflog", "creates a reflog"),
];

/// Options every subcommand that shows a diff takes (`git diff`, `log`,
/// `show`).
const DIFF_OPTIONS: &[(&str, Takes)] = &[
    ("-p", Takes::No),
    ("-u", Takes::No),
    ("--patch", Takes::No),
    ("-s", Takes::No),
    ("--no-patch", Takes::No),
    ("-U", Takes::Attached),
    ("--unified", Takes::Attached),
    ("--raw", Takes::No),
    ("--patch-with-raw", Takes::No),
    ("--patch-with-stat", Takes::No),
    ("--stat", Takes::Attached),
    ("--compact-summary", Takes::No),
    ("--numstat", Takes::No),
    ("--shortstat", Takes::No),
    ("--dirstat", Takes::Attached),
    ("--summary", Takes::No),
    ("--name-only", Takes::No),
    ("--name-status", Takes::No),
    ("--color", Takes::Attached),
    ("--no-color", Takes::No),
    ("--color-moved", Takes::Attached),
    ("--no-color-moved", Takes::No),
    ("--word-diff", Takes::Attached),
    ("--word-diff-regex", Takes::Value),
    ("--color-words", Takes::Attached),
    ("--no-renames", Takes::No),
    ("--check", Takes::No),
    ("--full-index", Takes::No),
    ("--binary", Takes::No),
    ("--abbrev", Takes::Attached),
    ("-B", Takes::Attached),
    ("--break-rewrites", Takes::Attached),
    ("-M", Takes::Attached),
    ("--find-renames", Takes::Attached),
    ("-C", Takes::Attached),
    ("--find-copies", Takes::Attached),
    ("--find-copies-harder", Takes::No),
    ("-D", Takes::No),
    ("--irreversible-delete", Takes::No),
    ("-l", Takes::Value),
    ("--diff-filter", Takes::Value),
    ("-S", Takes::Value),
    ("-G", Takes::Value),
    ("--pickaxe-all", Takes::No),
    ("--pickaxe-regex", Takes::No),
    ("-R", Takes::No),
    ("--relative", Takes::Attached),
    ("--no-relative", Takes::No),
    ("-a", Takes::No),
    ("--text", Takes::No),
    ("--ignore-cr-at-eol", Takes::No),
    ("--ignore-space-at-eol", Takes::No),
    ("-b", Takes::No),
    ("--ignore-space-change", Takes::No),
    ("-w", Takes::No),
    ("--ignore-all-space", Takes::No),
    ("--ignore-blank-lines", Takes::No),
    ("-W", Takes::No),
    ("--function-context", Takes::No),
    ("--exit-code", Takes::No),
    ("--quiet", Takes::No),
    ("--no-ext-diff", Takes::No),
    ("--no-textconv", Takes::No),
    ("--src-prefix", Takes::Value),
    ("--dst-prefix", Takes::Value),
    ("--no-prefix", Takes::No),
    ("--default-prefix", Takes::No),
    ("--line-prefix", Takes::Value),
    ("--minimal", Takes::No),
    ("--patience", Takes::No),
    ("--histogram", Takes::No),
    ("--diff-algorithm", Takes::Value),
    ("--anchored", Takes::Value),
    ("--indent-heuristic", Takes::No),
    ("--no-indent-heuristic", Takes::No),
    ("--inter-hunk-context", Takes::Value),
    ("--stat-width", Takes::Value),
    ("--stat-name-width", Takes::Value),
    ("--stat-count", Takes::Value),
];

const STATUS: Spec = Spec {
    opts: &[&[
        ("-s", Takes::No),
        ("--short", Takes::No),
        ("-b", Takes::No),
        ("--branch", Takes::No),
        ("--show-stash", Takes::No),
        ("--porcelain", Takes::Attached),
        ("--long", Takes::No),
        ("-v", Takes::No),
        ("--verbose", Takes::No),
        ("-u", Takes::Attached),
        ("--untracked-files", Takes::Attached),
        ("--ignored", Takes::Attached),
        ("-z", Takes::No),
        ("--column", Takes::Attached),
        ("--no-column", Takes::No),
        ("--ahead-behind", Takes::No),
        ("--no-ahead-behind", Takes::No),
        ("--renames", Takes::No),
        ("--no-renames", Takes::No),
        ("--find-renames", Takes::Attached),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
};

/// `git log` and `git show`: revision walking, formatting and diff options.
const LOG: Spec = Spec {
    opts: &[
        DIFF_OPTIONS,
        &[
            ("-n", Takes::Value),
            ("--max-count", Takes::Value),
            ("--skip", Takes::Value),
            ("--since", Takes::Value),
            ("--after", Takes::Value),
            ("--until", Takes::Value),
            ("--before", Takes::Value),
            ("--author", Takes::Value),
            ("--committer", Takes::Value),
            ("--grep", Takes::Value),
            ("--all-match", Takes::No),
            ("--invert-grep", Takes::No),
            ("-i", Takes::No),
            ("--regexp-ignore-case", Takes::No),
            ("-E", Takes::No),
            ("--extended-regexp", Takes::No),
            ("-F", Takes::No),
            ("--fixed-strings", Takes::No),
            ("-P", Takes::No),
            ("--perl-regexp", Takes::No),
            ("--merges", Takes::No),
            ("--no-merges", Takes::No),
            ("--min-parents", Takes::Attached),
            ("--max-parents", Takes::Attached),
            ("--first-parent", Takes::No),
            ("--not", Takes::No),
            ("--all", Takes::No),
            ("--branches", Takes::Attached),
            ("--tags", Takes::Attached),
            ("--remotes", Takes::Attached),
            ("--glob", Takes::Value),
            ("--exclude", Takes::Value),
            ("--reflog", Takes::No),
            ("-g", Takes::No),
            ("--walk-reflogs", Takes::No),
            ("--follow", Takes::No),
            ("--decorate", Takes::Attached),
            ("--no-decorate", Takes::No),
            ("--decorate-refs", Takes::Value),
            ("--decorate-refs-exclude", Takes::Value),
            ("--source", Takes::No),
            ("--use-mailmap", Takes::No),
            ("--no-use-mailmap", Takes::No),
            ("--mailmap", Takes::No),
            ("--no-mailmap", Takes::No),
            ("--full-diff", Takes::No),
            ("--log-size", Takes::No),
            ("-L", Takes::Value),
            ("--oneline", Takes::No),
            ("--pretty", Takes::Attached),
            ("--format", Takes::Attached),
            ("--abbrev-commit", Takes::No),
            ("--no-abbrev-commit", Takes::No),
            ("--encoding", Takes::Value),
            ("--expand-tabs", Takes::Attached),
            ("--no-expand-tabs", Takes::No),
            ("--notes", Takes::Attached),
            ("--no-notes", Takes::No),
            ("--relative-date", Takes::No),
            ("--date", Takes::Value),
            ("--parents", Takes::No),
            ("--children", Takes::No),
            ("--left-right", Takes::No),
            ("--graph", Takes::No),
            ("--show-linear-break", Takes::Attached),
            ("--cherry-mark", Takes::No),
            ("--cherry-pick", Takes::No),
            ("--left-only", Takes::No),
            ("--right-only", Takes::No),
            ("--cherry", Takes::No),
            ("--boundary", Takes::No),
            ("--ancestry-path", Takes::Attached),
            ("--simplify-by-decoration", Takes::No),
            ("--full-history", Takes::No),
            ("--dense", Takes::No),
            ("--sparse", Takes::No),
            ("--simplify-merges", Takes::No),
            ("--topo-order", Takes::No),
            ("--date-order", Takes::No),
            ("--author-date-order", Takes::No),
            ("--reverse", Takes::No),
            ("--no-walk", Takes::Attached),
            ("--do-walk", Takes::No),
            ("-m", Takes::No),
            ("-c", Takes::No),
            ("--cc", Takes::No),
            ("--diff-merges", Takes::Value),
            ("--no-diff-merges", Takes::No),
            ("-t", Takes::No),
        ],
    ],
    denied: &[DENIED],
    numbers: true,
    style: Style::Git,
};

const DIFF: Spec = Spec {
    opts: &[
        DIFF_OPTIONS,
        &[
            ("--cached", Takes::No),
            ("--staged", Takes::No),
            ("--merge-base", Takes::No),
            ("-1", Takes::No),
            ("--base", Takes::No),
            ("-2", Takes::No),
            ("--ours", Takes::No),
            ("-3", Takes::No),
            ("--theirs", Takes::No),
            ("-0", Takes::No),
        ],
    ],
    denied: &[DENIED],
    numbers: false,
    style: Style::Git,
};

const BRANCH: Spec = Spec {
    opts: &[&[
        ("-a", Takes::No),
        ("--all", Takes::No),
        ("-r", Takes::No),
        ("--remotes", Takes::No),
        ("-l", Takes::No),
        ("--list", Takes::No),
        ("-v", Takes::No),
        ("--verbose", Takes::No),
        ("-i", Takes::No),
        ("--ignore-case", Takes::No),
        ("--show-current", Takes::No),
        ("--color", Takes::Attached),
        ("--no-color", Takes::No),
        ("--column", Takes::Attached),
        ("--no-column", Takes::No),
        ("--abbrev", Takes::Attached),
        ("--no-abbrev", Takes::No),
        ("--sort", Takes::Value),
        ("--contains", Takes::ValueOrEnd),
        ("--no-contains", Takes::ValueOrEnd),
        ("--merged", Takes::ValueOrEnd),
        ("--no-merged", Takes::ValueOrEnd),
        ("--points-at", Takes::Value),
        ("--omit-empty", Takes::No),
    ]],
    denied: &[DENIED, BRANCH_DENIED],
    numbers: false,
    style: Style::Gnu,
};

const REV_PARSE: Spec = Spec {
    opts: &[&[
        ("--verify", Takes::No),
        ("-q", Takes::No),
        ("--quiet", Takes::No),
        ("--sq", Takes::No),
        ("--short", Takes::Attached),
        ("--abbrev-ref", Takes::Attached),
        ("--symbolic", Takes::No),
        ("--symbolic-full-name", Takes::No),
        ("--show-toplevel", Takes::No),
        ("--show-prefix", Takes::No),
        ("--show-cdup", Takes::No),
        ("--git-dir", Takes::No),
        ("--absolute-git-dir", Takes::No),
        ("--git-common-dir", Takes::No),
        ("--is-inside-work-tree", Takes::No),
        ("--is-inside-git-dir", Takes::No),
        ("--is-bare-repository", Takes::No),
        ("--is-shallow-repository", Takes::No),
        ("--show-object-format", Takes::Attached),
        ("--show-ref-format", Takes::No),
        ("--all", Takes::No),
        ("--branches", Takes::Attached),
        ("--tags", Takes::Attached),
        ("--remotes", Takes::Attached),
        ("--glob", Takes::Attached),
        ("--exclude", Takes::Attached),
        ("--not", Takes::No),
        ("--default", Takes::Value),
        ("--revs-only", Takes::No),
        ("--no-revs", Takes::No),
        ("--flags", Takes::No),
        ("--no-flags", Takes::No),
        ("--since", Takes::Attached),
        ("--after", Takes::Attached),
        ("--until", Takes::Attached),
        ("--before", Takes::Attached),
        ("--path-format", Takes::Attached),
        ("--local-env-vars", Takes::No),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Git,
};

const LS_FILES: Spec = Spec {
    opts: &[&[
        ("-c", Takes::No),
        ("--cached", Takes::No),
        ("-d", Takes::No),
        ("--deleted", Takes::No),
        ("-m", Takes::No),
        ("--modified", Takes::No),
        ("-o", Takes::No),
        ("--others", Takes::No),
        ("-i", Takes::No),
        ("--ignored", Takes::No),
        ("-s", Takes::No),
        ("--stage", Takes::No),
        ("-u", Takes::No),
        ("--unmerged", Takes::No),
        ("-k", Takes::No),
        ("--killed", Takes::No),
        ("--directory", Takes::No),
        ("--no-empty-directory", Takes::No),
        ("--eol", Takes::No),
        ("-z", Takes::No),
        ("-t", Takes::No),
        ("-v", Takes::No),
        ("-f", Takes::No),
        ("--full-name", Takes::No),
        ("--exclude-standard", Takes::No),
        ("--error-unmatch", Takes::No),
        ("--deduplicate", Takes::No),
        ("--sparse", Takes::No),
        ("--debug", Takes::No),
        ("-x", Takes::Value),
        ("--exclude", Takes::Value),
        ("-X", Takes::Path(Use::Read)),
        ("--exclude-from", Takes::Path(Use::Read)),
        ("--exclude-per-directory", Takes::Value),
        ("--abbrev", Takes::Attached),
        ("--format", Takes::Value),
        ("--with-tree", Takes::Value),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
};

const BLAME: Spec = Spec {
    opts: &[&[
        ("-b", Takes::No),
        ("--root", Takes::No),
        ("--show-stats", Takes::No),
        ("-l", Takes::No),
        ("-t", Takes::No),
        ("-s", Takes::No),
        ("-n", Takes::No),
        ("--show-number", Takes::No),
        ("-f", Takes::No),
        ("--show-name", Takes::No),
        ("-e", Takes::No),
        ("--show-email", Takes::No),
        ("-w", Takes::No),
        ("-p", Takes::No),
        ("--porcelain", Takes::No),
        ("--line-porcelain", Takes::No),
        ("--incremental", Takes::No),
        ("--score-debug", Takes::No),
        ("-c", Takes::No),
        ("--minimal", Takes::No),
        ("-L", Takes::Value),
        ("--reverse", Takes::No),
        ("--first-parent", Takes::No),
        ("--encoding", Takes::Value),
        ("--date", Takes::Value),
        ("--contents", Takes::Path(Use::Read)),
        ("-M", Takes::Attached),
        ("-C", Takes::Attached),
        ("--ignore-rev", Takes::Value),
        ("--ignore-revs-file", Takes::Path(Use::Read)),
        ("-S", Takes::Path(Use::Read)),
        ("--color-lines", Takes::No),
        ("--color-by-age", Takes::No),
        ("--abbrev", Takes::Attached),
        ("--progress", Takes::No),
        ("--no-progress", Takes::No),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
};
