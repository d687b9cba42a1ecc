//! `git` stages: the global options before the subcommand, the read-only
//! subcommands and their allow-lists, and then the repository itself
//! ([`git_repo`](super::git_repo)): one git would not use from the
//! project, or a configuration that names a program, refuses the stage.
//! ADR 0025.

use super::commands::{Parsed, Spec, Style, Takes, WHEN};
use super::git_repo;
use super::paths::{Base, Place, Use};
use super::values::Kind;
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
    let cmd = format!("git {sub}");
    let spec = SUBCOMMANDS
        .iter()
        .find(|(name, _)| *name == sub.as_str())
        .map(|(_, spec)| *spec)
        .ok_or_else(|| Refusal::Command(cmd.clone()))?;
    let rest = words.as_slice();
    let parsed = spec.walk(&cmd, rest, &place)?;
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
    let worktree = git_repo::check(&place, analyser.command_env())?;
    let reads = git_repo::Reads {
        untracked: match sub.as_str() {
            "status" => !untracked_off(&parsed),
            "ls-files" => parsed.has(&["-o", "--others", "-k", "--killed"]),
            _ => false,
        },
        // `status` too: `-v` shows the staged diff, and an `attr:`
        // pathspec asks each path's attributes, of the paths `HEAD` holds
        // beneath a folder the index now has as a link.
        attributes: matches!(sub.as_str(), "log" | "show" | "diff" | "blame" | "status"),
    };
    git_repo::check_work_tree(&place, &worktree, reads)?;
    // Two paths one of which lies outside the work tree make `git diff`
    // compare files as `--no-index` does, FIFOs included.
    if sub == "diff" {
        for word in &parsed.operands {
            if !place.resolve(word)?.starts_with(&worktree) {
                return Err(Refusal::Operand {
                    cmd,
                    why: format!(
                        "`{word}` is outside the repository's work tree, so git diff would \
                         compare files as --no-index does"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Whether `git status` was told to look at no untracked file: the last
/// `-u`/`--untracked-files` is `no`.
fn untracked_off(parsed: &Parsed) -> bool {
    parsed
        .flags
        .iter()
        .rev()
        .find(|(flag, _)| matches!(*flag, "-u" | "--untracked-files"))
        .is_some_and(|(_, value)| *value == Some("no"))
}

/// The subcommands a git stage may run, each with its table.
pub(super) const SUBCOMMANDS: &[(&str, &Spec)] = &[
    ("status", &STATUS),
    ("log", &LOG),
    ("show", &LOG),
    ("diff", &DIFF),
    ("branch", &BRANCH),
    ("rev-parse", &REV_PARSE),
    ("ls-files", &LS_FILES),
    ("blame", &BLAME),
];

/// `--date=` of `log`, `show` and `blame`: each format, and its `-local`
/// form; `format:` and `format-local:` are followed by a strftime format.
const DATE_FORMATS: &[&str] = &[
    "relative",
    "relative-local",
    "local",
    "iso",
    "iso-local",
    "iso8601",
    "iso8601-local",
    "iso-strict",
    "iso-strict-local",
    "iso8601-strict",
    "iso8601-strict-local",
    "rfc",
    "rfc-local",
    "rfc2822",
    "rfc2822-local",
    "short",
    "short-local",
    "raw",
    "raw-local",
    "human",
    "human-local",
    "unix",
    "unix-local",
    "default",
    "default-local",
    "format:",
    "format-local:",
];

/// `--diff-merges=` of `log` and `show`; not `remerge` (`r`), which
/// merges again and so runs merge drivers.
const DIFF_MERGES: &[&str] = &[
    "off",
    "none",
    "on",
    "first-parent",
    "1",
    "separate",
    "m",
    "combined",
    "c",
    "dense-combined",
    "cc",
];

/// `--sort=` keys of `git branch`, each also reversed with `-`; not
/// `signature`, which verifies signatures with gpg.
const BRANCH_SORT_KEYS: &[&str] = &[
    "refname",
    "-refname",
    "objectname",
    "-objectname",
    "objecttype",
    "-objecttype",
    "authorname",
    "-authorname",
    "authordate",
    "-authordate",
    "committername",
    "-committername",
    "committerdate",
    "-committerdate",
    "creatordate",
    "-creatordate",
    "subject",
    "-subject",
    "upstream",
    "-upstream",
    "HEAD",
    "-HEAD",
    "version:refname",
    "-version:refname",
    "v:refname",
    "-v:refname",
];

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

/// `--color-moved=`.
const COLOR_MOVED: &[&str] = &["no", "default", "plain", "blocks", "zebra", "dimmed-zebra"];

/// `--word-diff=`.
const WORD_DIFF: &[&str] = &["color", "plain", "porcelain", "none"];

/// `--diff-algorithm=`.
const DIFF_ALGORITHMS: &[&str] = &["myers", "minimal", "patience", "histogram"];

/// Options every subcommand that shows a diff takes (`git diff`, `log`,
/// `show`).
const DIFF_OPTIONS: &[(&str, Takes)] = &[
    ("-p", Takes::No),
    ("-u", Takes::No),
    ("--patch", Takes::No),
    ("-s", Takes::No),
    ("--no-patch", Takes::No),
    ("-U", Takes::Attached(Kind::Count)),
    ("--unified", Takes::Attached(Kind::Count)),
    ("--raw", Takes::No),
    ("--patch-with-raw", Takes::No),
    ("--patch-with-stat", Takes::No),
    ("--stat", Takes::Attached(Kind::Numbers)),
    ("--compact-summary", Takes::No),
    ("--numstat", Takes::No),
    ("--shortstat", Takes::No),
    ("--dirstat", Takes::Attached(Kind::Text)),
    ("--summary", Takes::No),
    ("--name-only", Takes::No),
    ("--name-status", Takes::No),
    ("--color", Takes::Attached(Kind::Word(WHEN))),
    ("--no-color", Takes::No),
    ("--color-moved", Takes::Attached(Kind::Word(COLOR_MOVED))),
    ("--no-color-moved", Takes::No),
    ("--word-diff", Takes::Attached(Kind::Word(WORD_DIFF))),
    ("--word-diff-regex", Takes::Value(Kind::Text)),
    ("--color-words", Takes::Attached(Kind::Text)),
    ("--no-renames", Takes::No),
    ("--check", Takes::No),
    ("--full-index", Takes::No),
    ("--binary", Takes::No),
    ("--abbrev", Takes::Attached(Kind::Count)),
    ("-B", Takes::Attached(Kind::Numbers)),
    ("--break-rewrites", Takes::Attached(Kind::Numbers)),
    ("-M", Takes::Attached(Kind::Numbers)),
    ("--find-renames", Takes::Attached(Kind::Numbers)),
    ("-C", Takes::Attached(Kind::Numbers)),
    ("--find-copies", Takes::Attached(Kind::Numbers)),
    ("--find-copies-harder", Takes::No),
    ("-D", Takes::No),
    ("--irreversible-delete", Takes::No),
    ("-l", Takes::Value(Kind::Count)),
    ("--diff-filter", Takes::Value(Kind::Text)),
    ("-S", Takes::Value(Kind::Text)),
    ("-G", Takes::Value(Kind::Text)),
    ("--pickaxe-all", Takes::No),
    ("--pickaxe-regex", Takes::No),
    ("-R", Takes::No),
    ("--relative", Takes::Attached(Kind::Path(Use::Look))),
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
    ("--src-prefix", Takes::Value(Kind::Text)),
    ("--dst-prefix", Takes::Value(Kind::Text)),
    ("--no-prefix", Takes::No),
    ("--default-prefix", Takes::No),
    ("--line-prefix", Takes::Value(Kind::Text)),
    ("--minimal", Takes::No),
    ("--patience", Takes::No),
    ("--histogram", Takes::No),
    (
        "--diff-algorithm",
        Takes::Value(Kind::Word(DIFF_ALGORITHMS)),
    ),
    ("--anchored", Takes::Value(Kind::Text)),
    ("--indent-heuristic", Takes::No),
    ("--no-indent-heuristic", Takes::No),
    ("--inter-hunk-context", Takes::Value(Kind::Count)),
    ("--stat-width", Takes::Value(Kind::Count)),
    ("--stat-name-width", Takes::Value(Kind::Count)),
    ("--stat-count", Takes::Value(Kind::Count)),
];

/// `git status --porcelain=`.
const PORCELAIN: &[&str] = &["v1", "v2"];

/// `git status -u`, `--untracked-files=`.
const UNTRACKED: &[&str] = &["no", "normal", "all"];

/// `git status --ignored=`.
const IGNORED: &[&str] = &["traditional", "matching", "no"];

const STATUS: Spec = Spec {
    opts: &[&[
        ("-s", Takes::No),
        ("--short", Takes::No),
        ("-b", Takes::No),
        ("--branch", Takes::No),
        ("--show-stash", Takes::No),
        ("--porcelain", Takes::Attached(Kind::Word(PORCELAIN))),
        ("--long", Takes::No),
        ("-v", Takes::No),
        ("--verbose", Takes::No),
        ("-u", Takes::Attached(Kind::Word(UNTRACKED))),
        ("--untracked-files", Takes::Attached(Kind::Word(UNTRACKED))),
        ("--ignored", Takes::Attached(Kind::Word(IGNORED))),
        ("-z", Takes::No),
        ("--column", Takes::Attached(Kind::Text)),
        ("--no-column", Takes::No),
        ("--ahead-behind", Takes::No),
        ("--no-ahead-behind", Takes::No),
        ("--renames", Takes::No),
        ("--no-renames", Takes::No),
        ("--find-renames", Takes::Attached(Kind::Numbers)),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
    paths: Base::WorkTreeTop,
};

/// `--decorate=`.
const DECORATE: &[&str] = &["short", "full", "auto", "no"];

/// `--no-walk=`.
const NO_WALK: &[&str] = &["sorted", "unsorted"];

/// `git log` and `git show`: revision walking, formatting and diff options.
const LOG: Spec = Spec {
    opts: &[
        DIFF_OPTIONS,
        &[
            ("-n", Takes::Value(Kind::Count)),
            ("--max-count", Takes::Value(Kind::Count)),
            ("--skip", Takes::Value(Kind::Count)),
            ("--since", Takes::Value(Kind::Text)),
            ("--after", Takes::Value(Kind::Text)),
            ("--until", Takes::Value(Kind::Text)),
            ("--before", Takes::Value(Kind::Text)),
            ("--author", Takes::Value(Kind::Text)),
            ("--committer", Takes::Value(Kind::Text)),
            ("--grep", Takes::Value(Kind::Text)),
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
            ("--min-parents", Takes::Attached(Kind::Count)),
            ("--max-parents", Takes::Attached(Kind::Count)),
            ("--first-parent", Takes::No),
            ("--not", Takes::No),
            ("--all", Takes::No),
            ("--branches", Takes::Attached(Kind::Text)),
            ("--tags", Takes::Attached(Kind::Text)),
            ("--remotes", Takes::Attached(Kind::Text)),
            ("--glob", Takes::Value(Kind::Text)),
            ("--exclude", Takes::Value(Kind::Text)),
            ("--reflog", Takes::No),
            ("-g", Takes::No),
            ("--walk-reflogs", Takes::No),
            ("--follow", Takes::No),
            ("--decorate", Takes::Attached(Kind::Word(DECORATE))),
            ("--no-decorate", Takes::No),
            ("--decorate-refs", Takes::Value(Kind::Text)),
            ("--decorate-refs-exclude", Takes::Value(Kind::Text)),
            ("--source", Takes::No),
            ("--use-mailmap", Takes::No),
            ("--no-use-mailmap", Takes::No),
            ("--mailmap", Takes::No),
            ("--no-mailmap", Takes::No),
            ("--full-diff", Takes::No),
            ("--log-size", Takes::No),
            ("-L", Takes::Value(Kind::Text)),
            ("--oneline", Takes::No),
            ("--pretty", Takes::Attached(Kind::GitFormat)),
            ("--format", Takes::Attached(Kind::GitFormat)),
            ("--abbrev-commit", Takes::No),
            ("--no-abbrev-commit", Takes::No),
            ("--encoding", Takes::Value(Kind::Encoding)),
            ("--expand-tabs", Takes::Attached(Kind::Count)),
            ("--no-expand-tabs", Takes::No),
            ("--notes", Takes::Attached(Kind::Revision)),
            ("--no-notes", Takes::No),
            ("--relative-date", Takes::No),
            ("--date", Takes::Value(Kind::Word(DATE_FORMATS))),
            ("--parents", Takes::No),
            ("--children", Takes::No),
            ("--left-right", Takes::No),
            ("--graph", Takes::No),
            ("--show-linear-break", Takes::Attached(Kind::Text)),
            ("--cherry-mark", Takes::No),
            ("--cherry-pick", Takes::No),
            ("--left-only", Takes::No),
            ("--right-only", Takes::No),
            ("--cherry", Takes::No),
            ("--boundary", Takes::No),
            ("--ancestry-path", Takes::Attached(Kind::Revision)),
            ("--simplify-by-decoration", Takes::No),
            ("--full-history", Takes::No),
            ("--dense", Takes::No),
            ("--sparse", Takes::No),
            ("--simplify-merges", Takes::No),
            ("--topo-order", Takes::No),
            ("--date-order", Takes::No),
            ("--author-date-order", Takes::No),
            ("--reverse", Takes::No),
            ("--no-walk", Takes::Attached(Kind::Word(NO_WALK))),
            ("--do-walk", Takes::No),
            ("-m", Takes::No),
            ("-c", Takes::No),
            ("--cc", Takes::No),
            ("--diff-merges", Takes::Value(Kind::Word(DIFF_MERGES))),
            ("--no-diff-merges", Takes::No),
            ("-t", Takes::No),
        ],
    ],
    denied: &[DENIED],
    numbers: true,
    style: Style::Git,
    paths: Base::WorkTreeTop,
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
    paths: Base::WorkTreeTop,
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
        ("--color", Takes::Attached(Kind::Word(WHEN))),
        ("--no-color", Takes::No),
        ("--column", Takes::Attached(Kind::Text)),
        ("--no-column", Takes::No),
        ("--abbrev", Takes::Attached(Kind::Count)),
        ("--no-abbrev", Takes::No),
        ("--sort", Takes::Value(Kind::Word(BRANCH_SORT_KEYS))),
        ("--contains", Takes::ValueOrEnd(Kind::Revision)),
        ("--no-contains", Takes::ValueOrEnd(Kind::Revision)),
        ("--merged", Takes::ValueOrEnd(Kind::Revision)),
        ("--no-merged", Takes::ValueOrEnd(Kind::Revision)),
        ("--points-at", Takes::Value(Kind::Revision)),
        ("--omit-empty", Takes::No),
    ]],
    denied: &[DENIED, BRANCH_DENIED],
    numbers: false,
    style: Style::Gnu,
    paths: Base::WorkTreeTop,
};

/// `git rev-parse --abbrev-ref=`.
const ABBREV_REF: &[&str] = &["strict", "loose"];

/// `git rev-parse --show-object-format=`.
const OBJECT_FORMATS: &[&str] = &["storage", "input", "output"];

/// `git rev-parse --path-format=`.
const PATH_FORMATS: &[&str] = &["absolute", "relative"];

const REV_PARSE: Spec = Spec {
    opts: &[&[
        ("--verify", Takes::No),
        ("-q", Takes::No),
        ("--quiet", Takes::No),
        ("--sq", Takes::No),
        ("--short", Takes::Attached(Kind::Count)),
        ("--abbrev-ref", Takes::Attached(Kind::Word(ABBREV_REF))),
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
        (
            "--show-object-format",
            Takes::Attached(Kind::Word(OBJECT_FORMATS)),
        ),
        ("--show-ref-format", Takes::No),
        ("--all", Takes::No),
        ("--branches", Takes::Attached(Kind::Text)),
        ("--tags", Takes::Attached(Kind::Text)),
        ("--remotes", Takes::Attached(Kind::Text)),
        ("--glob", Takes::Attached(Kind::Text)),
        ("--exclude", Takes::Attached(Kind::Text)),
        ("--not", Takes::No),
        ("--default", Takes::Value(Kind::Revision)),
        ("--revs-only", Takes::No),
        ("--no-revs", Takes::No),
        ("--flags", Takes::No),
        ("--no-flags", Takes::No),
        ("--since", Takes::Attached(Kind::Text)),
        ("--after", Takes::Attached(Kind::Text)),
        ("--until", Takes::Attached(Kind::Text)),
        ("--before", Takes::Attached(Kind::Text)),
        ("--path-format", Takes::Attached(Kind::Word(PATH_FORMATS))),
        ("--local-env-vars", Takes::No),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Git,
    paths: Base::WorkTreeTop,
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
        ("-x", Takes::Value(Kind::Text)),
        ("--exclude", Takes::Value(Kind::Text)),
        ("-X", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude-from", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude-per-directory", Takes::Value(Kind::FileName)),
        ("--abbrev", Takes::Attached(Kind::Count)),
        ("--format", Takes::Value(Kind::Text)),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
    paths: Base::WorkTreeTop,
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
        ("-L", Takes::Value(Kind::Text)),
        ("--reverse", Takes::No),
        ("--first-parent", Takes::No),
        ("--encoding", Takes::Value(Kind::Encoding)),
        ("--date", Takes::Value(Kind::Word(DATE_FORMATS))),
        ("--contents", Takes::Value(Kind::Path(Use::Read))),
        ("-M", Takes::Attached(Kind::Count)),
        ("-C", Takes::Attached(Kind::Count)),
        ("--ignore-rev", Takes::Value(Kind::Revision)),
        ("--ignore-revs-file", Takes::Value(Kind::Path(Use::Read))),
        ("-S", Takes::Value(Kind::Path(Use::Read))),
        ("--color-lines", Takes::No),
        ("--color-by-age", Takes::No),
        ("--abbrev", Takes::Attached(Kind::Count)),
        ("--progress", Takes::No),
        ("--no-progress", Takes::No),
    ]],
    denied: &[DENIED],
    numbers: false,
    style: Style::Gnu,
    paths: Base::WorkTreeTop,
};
