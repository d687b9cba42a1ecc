//! The commands a stage may run, each with the options it may take, as
//! allow-lists: an option that is not in a command's table refuses the
//! stage, and a few well-known dangerous ones say why. Every option that
//! takes a value says what the value is ([`Kind`]: a count, a word from a
//! list, a path, text never opened, ...), and the value is checked as
//! that. Options are read as the programs read them (GNU `getopt_long` for
//! the coreutils, grep, diff and ripgrep; find's own expression syntax;
//! git's in `git.rs`), so a path is never mistaken for an option's value.
//! ADR 0025 documents each table.

use super::git;
use super::paths::{Base, Place, Use};
use super::values::Kind;
use super::{Analyser, Refusal};

/// What an option takes after it, and what that value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Takes {
    /// Nothing: a flag.
    No,
    /// A value: after `=` or attached to a short option, else the next
    /// word.
    Value(Kind),
    /// An optional value, only in the same word (`--color=always`,
    /// `-uno`); the next word is never taken.
    Attached(Kind),
    /// A value in the same word or the next one, which may be left out at
    /// the end of the line (`git branch --contains`).
    ValueOrEnd(Kind),
}

/// How a command groups its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// `getopt_long` (and git's parse-options, for `status`, `branch`,
    /// `ls-files`, `blame`): short options cluster (`-rn`, `-sb`), a short
    /// option's value may be attached (`-n5`, `-uno`), options may follow
    /// operands.
    Gnu,
    /// git's revision and diff options (`log`, `show`, `diff`,
    /// `rev-parse`) and find's primaries: each option is its own word, no
    /// clusters; a short option's value may be attached (`-n5`, `-L1,5:f`).
    Git,
    /// `tree`'s own parser: flags cluster (`-ad`), but an option with a
    /// value (`-L`, `-P`, `-I`) takes the *next word* and the rest of its
    /// cluster is read on as more flags, so `-Io x f` is `-I x -o f`.
    /// Such an option is accepted only as a word of its own.
    Separate,
}

/// A command's allow-list.
pub(super) struct Spec {
    /// The options it may take (tables shared between commands, joined).
    pub opts: &'static [&'static [(&'static str, Takes)]],
    /// Options it must not take, with why, for the person's benefit; any
    /// option not in `opts` is refused whether listed here or not.
    pub denied: &'static [&'static [(&'static str, &'static str)]],
    /// Whether `-NUM` is an option (`head -5`, `grep -3`, `git log -3`).
    pub numbers: bool,
    /// How the command groups its options.
    pub style: Style,
    /// Where the command reads a path given as an option's value from.
    pub paths: Base,
}

/// The options a stage was given, each with its value, and its operands.
#[derive(Debug, Default)]
pub(super) struct Parsed<'w> {
    pub flags: Vec<(&'static str, Option<&'w str>)>,
    pub operands: Vec<&'w str>,
}

impl Parsed<'_> {
    /// Whether any of `names` was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.flags.iter().any(|(f, _)| names.contains(f))
    }
}

impl Spec {
    fn find(&self, name: &str) -> Option<(&'static str, Takes)> {
        self.opts
            .iter()
            .flat_map(|table| table.iter())
            .find(|(n, _)| *n == name)
            .copied()
    }

    fn refuse(&self, cmd: &str, flag: &str) -> Refusal {
        let why = self
            .denied
            .iter()
            .flat_map(|table| table.iter())
            .find(|(n, _)| *n == flag)
            .map_or("is not an option the analyser allows", |(_, why)| *why);
        Refusal::Flag {
            cmd: cmd.to_owned(),
            flag: flag.to_owned(),
            why,
        }
    }

    fn lookup(&self, cmd: &str, name: &str) -> Result<(&'static str, Takes), Refusal> {
        self.find(name).ok_or_else(|| self.refuse(cmd, name))
    }

    /// Reads `args` against the table: every option allowed, every value
    /// checked as its kind; the operands are left to the command.
    pub fn walk<'w>(
        &self,
        cmd: &str,
        args: &'w [String],
        place: &Place,
    ) -> Result<Parsed<'w>, Refusal> {
        let mut parsed = Parsed::default();
        let mut rest = args.iter();
        let mut operands_only = false;
        while let Some(arg) = rest.next() {
            if operands_only || arg == "-" || !arg.starts_with('-') {
                parsed.operands.push(arg);
                continue;
            }
            if arg == "--" {
                operands_only = true;
                continue;
            }
            let short = &arg[1..];
            if arg.starts_with("--") {
                let (name, inline) = match arg.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (arg.as_str(), None),
                };
                let (canonical, takes) = self.lookup(cmd, name)?;
                let value = self.value(cmd, canonical, takes, inline, &mut rest, place)?;
                parsed.flags.push((canonical, value));
            } else if self.numbers && short.chars().all(|c| c.is_ascii_digit()) {
                parsed.flags.push(("-NUM", Some(short)));
            } else if let (Style::Git, Some((canonical, takes))) = (self.style, self.find(arg)) {
                let value = self.value(cmd, canonical, takes, None, &mut rest, place)?;
                parsed.flags.push((canonical, value));
            } else {
                self.cluster(cmd, short, &mut parsed, &mut rest, place)?;
            }
        }
        Ok(parsed)
    }

    /// Short options after one `-`: for getopt a cluster (`-rn`, `-n5`);
    /// for git one option and its attached value (`-n5`).
    fn cluster<'w>(
        &self,
        cmd: &str,
        short: &'w str,
        parsed: &mut Parsed<'w>,
        rest: &mut std::slice::Iter<'w, String>,
        place: &Place,
    ) -> Result<(), Refusal> {
        for (i, c) in short.char_indices() {
            let name = format!("-{c}");
            let attached = &short[i + c.len_utf8()..];
            let found = self.find(&name);
            let (canonical, takes) = match (self.style, found) {
                (Style::Separate, Some(found)) if found.1 != Takes::No && short.len() > 1 => {
                    return Err(self.refuse(cmd, &format!("-{short}")));
                }
                (Style::Gnu | Style::Separate, Some(found)) => found,
                // git has no clusters: `-X` must take the rest as its value.
                (Style::Git, Some(found)) if found.1 != Takes::No => found,
                (Style::Git, _) => return Err(self.refuse(cmd, &format!("-{short}"))),
                (Style::Gnu | Style::Separate, None) => return Err(self.refuse(cmd, &name)),
            };
            if takes == Takes::No {
                parsed.flags.push((canonical, None));
                continue;
            }
            // `-f=x`: getopt gives `=x`, ripgrep's parser `x`. Which name
            // is opened depends on the program, so neither is accepted.
            if attached.starts_with('=') {
                return Err(Refusal::Flag {
                    cmd: cmd.to_owned(),
                    flag: format!("{name}{attached}"),
                    why: "joins its value with `=`, which programs read differently",
                });
            }
            let inline = (!attached.is_empty()).then_some(attached);
            let value = self.value(cmd, canonical, takes, inline, rest, place)?;
            parsed.flags.push((canonical, value));
            return Ok(());
        }
        Ok(())
    }

    /// The value of an option, taken from the same word or the next, and
    /// checked as its kind.
    fn value<'w>(
        &self,
        cmd: &str,
        flag: &str,
        takes: Takes,
        inline: Option<&'w str>,
        rest: &mut std::slice::Iter<'w, String>,
        place: &Place,
    ) -> Result<Option<&'w str>, Refusal> {
        let (kind, value) = match takes {
            Takes::No if inline.is_some() => {
                return Err(Refusal::Flag {
                    cmd: cmd.to_owned(),
                    flag: flag.to_owned(),
                    why: "takes no value",
                });
            }
            Takes::No => return Ok(None),
            Takes::Attached(kind) => (kind, inline),
            Takes::ValueOrEnd(kind) => (kind, inline.or_else(|| rest.next().map(String::as_str))),
            Takes::Value(kind) => {
                let value = inline
                    .or_else(|| rest.next().map(String::as_str))
                    .ok_or_else(|| Refusal::MissingValue {
                        cmd: cmd.to_owned(),
                        flag: flag.to_owned(),
                    })?;
                (kind, Some(value))
            }
        };
        if let Some(value) = value {
            kind.check(cmd, flag, value, place, self.paths)?;
        }
        Ok(value)
    }
}

/// Checks one stage: a known command, allowed options, paths inside the
/// project, and for git a repository whose configuration runs nothing.
pub(super) fn check_stage(
    analyser: &Analyser,
    place: &Place,
    words: &[String],
) -> Result<(), Refusal> {
    let Some((cmd, args)) = words.split_first() else {
        return Ok(());
    };
    let spec = match cmd.as_str() {
        "echo" => return Ok(()),
        "find" => return find(place, args),
        "git" => return git::check(analyser, place, args),
        name => COMMANDS
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, spec)| *spec)
            .ok_or_else(|| Refusal::Command(cmd.clone()))?,
    };
    let parsed = spec.walk(cmd, args, place)?;
    let operand = |why: &str| Refusal::Operand {
        cmd: cmd.clone(),
        why: why.to_owned(),
    };
    let (uses, operands) = match cmd.as_str() {
        "ls" | "file" | "stat" | "du" | "tree" => (Use::Look, &parsed.operands[..]),
        "pwd" if !parsed.operands.is_empty() => return Err(operand("takes no operands")),
        "tail" if parsed.operands.iter().any(|word| word.starts_with('+')) => {
            return Err(operand(
                "an operand starting with `+` is tail's old option form (`+1f` follows the file \
                 and keeps running until the time limit)",
            ));
        }
        "uniq" if parsed.operands.len() > 1 => {
            return Err(operand("a second operand is a file uniq writes"));
        }
        "diff" => (Use::ReadFileOnly, &parsed.operands[..]),
        "grep" => (
            Use::Read,
            pattern_operand(&parsed, &["-e", "--regexp", "-f", "--file"]),
        ),
        "rg" if !parsed.has(&["--no-ignore", "-u", "--unrestricted"]) => {
            return Err(operand(READS_IGNORE_FILES));
        }
        "rg" => (
            Use::Read,
            pattern_operand(
                &parsed,
                &["-e", "--regexp", "-f", "--file", "--files", "--type-list"],
            ),
        ),
        _ => (Use::Read, &parsed.operands[..]),
    };
    for word in operands {
        place.check(word, uses)?;
    }
    Ok(())
}

/// The commands read with their table, by name; `echo`, `find` and `git`
/// are read apart.
pub(super) const COMMANDS: &[(&str, &Spec)] = &[
    ("ls", &LS),
    ("cat", &CAT),
    ("head", &HEAD),
    ("tail", &TAIL),
    ("wc", &WC),
    ("grep", &GREP),
    ("rg", &RG),
    ("pwd", &PWD),
    ("file", &FILE),
    ("stat", &STAT),
    ("du", &DU),
    ("tree", &TREE),
    ("sort", &SORT),
    ("uniq", &UNIQ),
    ("cut", &CUT),
    ("diff", &DIFF),
];

/// `--color[=WHEN]` and the like, in the coreutils, grep, diff and git.
pub(super) const WHEN: &[&str] = &["always", "never", "auto"];

/// The operands that are files: all of them when a pattern came from an
/// option, else all but the first, which is the pattern.
fn pattern_operand<'p, 'w>(parsed: &'p Parsed<'w>, pattern_given: &[&str]) -> &'p [&'w str] {
    if parsed.has(pattern_given) {
        &parsed.operands
    } else {
        parsed.operands.get(1..).unwrap_or(&[])
    }
}

/// `ls --format=WORD`.
const LS_FORMATS: &[&str] = &[
    "across",
    "commas",
    "horizontal",
    "long",
    "single-column",
    "verbose",
    "vertical",
];

/// `ls --quoting-style=WORD`.
const QUOTING_STYLES: &[&str] = &[
    "literal",
    "locale",
    "shell",
    "shell-always",
    "shell-escape",
    "shell-escape-always",
    "c",
    "escape",
];

/// `ls --time=WORD`.
const LS_TIMES: &[&str] = &[
    "atime", "access", "use", "ctime", "status", "birth", "creation",
];

/// `ls --indicator-style=WORD`.
const INDICATOR_STYLES: &[&str] = &["none", "slash", "file-type", "classify"];

/// `ls --sort=WORD`.
const LS_SORTS: &[&str] = &["none", "size", "time", "version", "extension", "width"];

const LS: Spec = Spec {
    opts: &[&[
        ("-a", Takes::No),
        ("--all", Takes::No),
        ("-A", Takes::No),
        ("--almost-all", Takes::No),
        ("--author", Takes::No),
        ("-b", Takes::No),
        ("--escape", Takes::No),
        ("--block-size", Takes::Value(Kind::BlockSize)),
        ("-B", Takes::No),
        ("--ignore-backups", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::No),
        ("--color", Takes::Attached(Kind::Word(WHEN))),
        ("-d", Takes::No),
        ("--directory", Takes::No),
        ("-D", Takes::No),
        ("--dired", Takes::No),
        ("-f", Takes::No),
        ("-F", Takes::No),
        ("--classify", Takes::Attached(Kind::Word(WHEN))),
        ("--file-type", Takes::No),
        ("--format", Takes::Value(Kind::Word(LS_FORMATS))),
        ("--full-time", Takes::No),
        ("-g", Takes::No),
        ("--group-directories-first", Takes::No),
        ("-G", Takes::No),
        ("--no-group", Takes::No),
        ("-h", Takes::No),
        ("--human-readable", Takes::No),
        ("--si", Takes::No),
        ("-H", Takes::No),
        ("--dereference-command-line", Takes::No),
        ("--dereference-command-line-symlink-to-dir", Takes::No),
        ("--hide", Takes::Value(Kind::Text)),
        ("--hyperlink", Takes::Attached(Kind::Word(WHEN))),
        (
            "--indicator-style",
            Takes::Value(Kind::Word(INDICATOR_STYLES)),
        ),
        ("-i", Takes::No),
        ("--inode", Takes::No),
        ("-I", Takes::Value(Kind::Text)),
        ("--ignore", Takes::Value(Kind::Text)),
        ("-k", Takes::No),
        ("--kibibytes", Takes::No),
        ("-l", Takes::No),
        ("-m", Takes::No),
        ("-n", Takes::No),
        ("--numeric-uid-gid", Takes::No),
        ("-N", Takes::No),
        ("--literal", Takes::No),
        ("-o", Takes::No),
        ("-p", Takes::No),
        ("-q", Takes::No),
        ("--hide-control-chars", Takes::No),
        ("--show-control-chars", Takes::No),
        ("-Q", Takes::No),
        ("--quote-name", Takes::No),
        ("--quoting-style", Takes::Value(Kind::Word(QUOTING_STYLES))),
        ("-r", Takes::No),
        ("--reverse", Takes::No),
        ("-R", Takes::No),
        ("--recursive", Takes::No),
        ("-s", Takes::No),
        ("--size", Takes::No),
        ("-S", Takes::No),
        ("--sort", Takes::Value(Kind::Word(LS_SORTS))),
        ("--time", Takes::Value(Kind::Word(LS_TIMES))),
        ("--time-style", Takes::Value(Kind::Text)),
        ("-t", Takes::No),
        ("-T", Takes::Value(Kind::Count)),
        ("--tabsize", Takes::Value(Kind::Count)),
        ("-u", Takes::No),
        ("-U", Takes::No),
        ("-v", Takes::No),
        ("-w", Takes::Value(Kind::Count)),
        ("--width", Takes::Value(Kind::Count)),
        ("-x", Takes::No),
        ("-X", Takes::No),
        ("-Z", Takes::No),
        ("--context", Takes::No),
        ("--zero", Takes::No),
        ("-1", Takes::No),
    ]],
    denied: &[&[("-L", FOLLOWS_LINKS), ("--dereference", FOLLOWS_LINKS)]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

const READS_IGNORE_FILES: &str = "reads .gitignore and .ignore files as it walks, above the project too, \
     following links and blocking on FIFOs; give rg --no-ignore, or use the grep tool";
const SPILLS: &str = "spills to many temporary files, which a killed sort leaves behind";
const FOLLOWS_LINKS: &str = "follows symbolic links, which may lead out of the project";
const LOOKS_WHERE_LINKS_LEAD: &str =
    "looks at what a symbolic link leads to, which may be outside the project";
const RUNS_A_PROGRAM: &str = "runs another program";
const WRITES_A_FILE: &str = "writes a file";
const UNCHECKED_NAMES: &str = "reads file names from a file, which the analyser does not check";
const NEVER_ENDS: &str = "keeps running until the time limit";

const CAT: Spec = Spec {
    opts: &[&[
        ("-A", Takes::No),
        ("--show-all", Takes::No),
        ("-b", Takes::No),
        ("--number-nonblank", Takes::No),
        ("-e", Takes::No),
        ("-E", Takes::No),
        ("--show-ends", Takes::No),
        ("-n", Takes::No),
        ("--number", Takes::No),
        ("-s", Takes::No),
        ("--squeeze-blank", Takes::No),
        ("-t", Takes::No),
        ("-T", Takes::No),
        ("--show-tabs", Takes::No),
        ("-u", Takes::No),
        ("-v", Takes::No),
        ("--show-nonprinting", Takes::No),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

const HEAD_OPTS: &[(&str, Takes)] = &[
    ("-c", Takes::Value(Kind::Size)),
    ("--bytes", Takes::Value(Kind::Size)),
    ("-n", Takes::Value(Kind::Size)),
    ("--lines", Takes::Value(Kind::Size)),
    ("-q", Takes::No),
    ("--quiet", Takes::No),
    ("--silent", Takes::No),
    ("-v", Takes::No),
    ("--verbose", Takes::No),
    ("-z", Takes::No),
    ("--zero-terminated", Takes::No),
];

const HEAD: Spec = Spec {
    opts: &[HEAD_OPTS],
    denied: &[],
    numbers: true,
    style: Style::Gnu,
    paths: Base::Stage,
};

const TAIL: Spec = Spec {
    opts: &[HEAD_OPTS],
    denied: &[&[
        ("-f", NEVER_ENDS),
        ("-F", NEVER_ENDS),
        ("--follow", NEVER_ENDS),
        ("--retry", NEVER_ENDS),
        ("--pid", NEVER_ENDS),
    ]],
    numbers: true,
    style: Style::Gnu,
    paths: Base::Stage,
};

const WC: Spec = Spec {
    opts: &[&[
        ("-c", Takes::No),
        ("--bytes", Takes::No),
        ("-m", Takes::No),
        ("--chars", Takes::No),
        ("-l", Takes::No),
        ("--lines", Takes::No),
        ("-L", Takes::No),
        ("--max-line-length", Takes::No),
        ("-w", Takes::No),
        ("--words", Takes::No),
    ]],
    denied: &[&[("--files0-from", UNCHECKED_NAMES)]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `grep --binary-files=TYPE`.
const BINARY_FILES: &[&str] = &["binary", "text", "without-match"];

/// `grep -d ACTION`, `--directories=ACTION`.
const DIRECTORY_ACTIONS: &[&str] = &["read", "recurse", "skip"];

const GREP: Spec = Spec {
    opts: &[&[
        ("-E", Takes::No),
        ("--extended-regexp", Takes::No),
        ("-F", Takes::No),
        ("--fixed-strings", Takes::No),
        ("-G", Takes::No),
        ("--basic-regexp", Takes::No),
        ("-P", Takes::No),
        ("--perl-regexp", Takes::No),
        ("-e", Takes::Value(Kind::Text)),
        ("--regexp", Takes::Value(Kind::Text)),
        ("-f", Takes::Value(Kind::Path(Use::Read))),
        ("--file", Takes::Value(Kind::Path(Use::Read))),
        ("-i", Takes::No),
        ("-y", Takes::No),
        ("--ignore-case", Takes::No),
        ("--no-ignore-case", Takes::No),
        ("-w", Takes::No),
        ("--word-regexp", Takes::No),
        ("-x", Takes::No),
        ("--line-regexp", Takes::No),
        ("-z", Takes::No),
        ("--null-data", Takes::No),
        ("-s", Takes::No),
        ("--no-messages", Takes::No),
        ("-v", Takes::No),
        ("--invert-match", Takes::No),
        ("-m", Takes::Value(Kind::Count)),
        ("--max-count", Takes::Value(Kind::Count)),
        ("-b", Takes::No),
        ("--byte-offset", Takes::No),
        ("-n", Takes::No),
        ("--line-number", Takes::No),
        ("--line-buffered", Takes::No),
        ("-H", Takes::No),
        ("--with-filename", Takes::No),
        ("-h", Takes::No),
        ("--no-filename", Takes::No),
        ("--label", Takes::Value(Kind::Text)),
        ("-o", Takes::No),
        ("--only-matching", Takes::No),
        ("-q", Takes::No),
        ("--quiet", Takes::No),
        ("--silent", Takes::No),
        ("--binary-files", Takes::Value(Kind::Word(BINARY_FILES))),
        ("-a", Takes::No),
        ("--text", Takes::No),
        ("-I", Takes::No),
        ("-d", Takes::Value(Kind::Word(DIRECTORY_ACTIONS))),
        ("--directories", Takes::Value(Kind::Word(DIRECTORY_ACTIONS))),
        ("-r", Takes::No),
        ("--recursive", Takes::No),
        ("--include", Takes::Value(Kind::Text)),
        ("--exclude", Takes::Value(Kind::Text)),
        ("--exclude-from", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude-dir", Takes::Value(Kind::Text)),
        ("-L", Takes::No),
        ("--files-without-match", Takes::No),
        ("-l", Takes::No),
        ("--files-with-matches", Takes::No),
        ("-c", Takes::No),
        ("--count", Takes::No),
        ("-T", Takes::No),
        ("--initial-tab", Takes::No),
        ("-Z", Takes::No),
        ("--null", Takes::No),
        ("-B", Takes::Value(Kind::Count)),
        ("--before-context", Takes::Value(Kind::Count)),
        ("-A", Takes::Value(Kind::Count)),
        ("--after-context", Takes::Value(Kind::Count)),
        ("-C", Takes::Value(Kind::Count)),
        ("--context", Takes::Value(Kind::Count)),
        ("--group-separator", Takes::Value(Kind::Text)),
        ("--no-group-separator", Takes::No),
        ("--color", Takes::Attached(Kind::Word(WHEN))),
        ("--colour", Takes::Attached(Kind::Word(WHEN))),
        ("-U", Takes::No),
        ("--binary", Takes::No),
    ]],
    denied: &[&[
        ("-R", FOLLOWS_LINKS),
        ("--dereference-recursive", FOLLOWS_LINKS),
        ("-D", "reads devices, FIFOs and sockets"),
        ("--devices", "reads devices, FIFOs and sockets"),
    ]],
    numbers: true,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `rg --sort` and `--sortr`.
const RG_SORTS: &[&str] = &["none", "path", "modified", "accessed", "created"];

/// `rg --color`.
const RG_WHEN: &[&str] = &["never", "auto", "always", "ansi"];

/// `rg --engine`.
const RG_ENGINES: &[&str] = &["default", "pcre2", "auto"];

const RG: Spec = Spec {
    opts: &[&[
        ("-e", Takes::Value(Kind::Text)),
        ("--regexp", Takes::Value(Kind::Text)),
        ("-f", Takes::Value(Kind::Path(Use::Read))),
        ("--file", Takes::Value(Kind::Path(Use::Read))),
        ("-i", Takes::No),
        ("--ignore-case", Takes::No),
        ("-s", Takes::No),
        ("--case-sensitive", Takes::No),
        ("-S", Takes::No),
        ("--smart-case", Takes::No),
        ("-v", Takes::No),
        ("--invert-match", Takes::No),
        ("-w", Takes::No),
        ("--word-regexp", Takes::No),
        ("-x", Takes::No),
        ("--line-regexp", Takes::No),
        ("-F", Takes::No),
        ("--fixed-strings", Takes::No),
        ("-P", Takes::No),
        ("--pcre2", Takes::No),
        ("-U", Takes::No),
        ("--multiline", Takes::No),
        ("--multiline-dotall", Takes::No),
        ("-c", Takes::No),
        ("--count", Takes::No),
        ("--count-matches", Takes::No),
        ("-l", Takes::No),
        ("--files-with-matches", Takes::No),
        ("--files-without-match", Takes::No),
        ("--files", Takes::No),
        ("--type-list", Takes::No),
        ("-n", Takes::No),
        ("--line-number", Takes::No),
        ("-N", Takes::No),
        ("--no-line-number", Takes::No),
        ("-H", Takes::No),
        ("--with-filename", Takes::No),
        ("-I", Takes::No),
        ("--no-filename", Takes::No),
        ("-o", Takes::No),
        ("--only-matching", Takes::No),
        ("-q", Takes::No),
        ("--quiet", Takes::No),
        ("-a", Takes::No),
        ("--text", Takes::No),
        ("--binary", Takes::No),
        ("-u", Takes::No),
        ("--unrestricted", Takes::No),
        ("--hidden", Takes::No),
        ("--no-ignore", Takes::No),
        ("--no-ignore-vcs", Takes::No),
        ("--no-ignore-parent", Takes::No),
        ("--no-ignore-dot", Takes::No),
        ("--no-ignore-global", Takes::No),
        ("--no-ignore-exclude", Takes::No),
        ("--no-ignore-files", Takes::No),
        ("--no-require-git", Takes::No),
        ("--no-config", Takes::No),
        ("--no-messages", Takes::No),
        ("--json", Takes::No),
        ("--stats", Takes::No),
        ("--column", Takes::No),
        ("--vimgrep", Takes::No),
        ("--heading", Takes::No),
        ("--no-heading", Takes::No),
        ("-p", Takes::No),
        ("--pretty", Takes::No),
        ("-0", Takes::No),
        ("--null", Takes::No),
        ("--null-data", Takes::No),
        ("--crlf", Takes::No),
        ("-b", Takes::No),
        ("--byte-offset", Takes::No),
        ("--trim", Takes::No),
        ("--passthru", Takes::No),
        ("--include-zero", Takes::No),
        ("--one-file-system", Takes::No),
        ("--glob-case-insensitive", Takes::No),
        ("-g", Takes::Value(Kind::Text)),
        ("--glob", Takes::Value(Kind::Text)),
        ("--iglob", Takes::Value(Kind::Text)),
        ("-t", Takes::Value(Kind::Text)),
        ("--type", Takes::Value(Kind::Text)),
        ("-T", Takes::Value(Kind::Text)),
        ("--type-not", Takes::Value(Kind::Text)),
        ("-A", Takes::Value(Kind::Count)),
        ("--after-context", Takes::Value(Kind::Count)),
        ("-B", Takes::Value(Kind::Count)),
        ("--before-context", Takes::Value(Kind::Count)),
        ("-C", Takes::Value(Kind::Count)),
        ("--context", Takes::Value(Kind::Count)),
        ("-m", Takes::Value(Kind::Count)),
        ("--max-count", Takes::Value(Kind::Count)),
        ("-d", Takes::Value(Kind::Count)),
        ("--max-depth", Takes::Value(Kind::Count)),
        ("--max-filesize", Takes::Value(Kind::Size)),
        ("-M", Takes::Value(Kind::Count)),
        ("--max-columns", Takes::Value(Kind::Count)),
        ("-j", Takes::Value(Kind::Count)),
        ("--threads", Takes::Value(Kind::Count)),
        ("--sort", Takes::Value(Kind::Word(RG_SORTS))),
        ("--sortr", Takes::Value(Kind::Word(RG_SORTS))),
        ("--color", Takes::Value(Kind::Word(RG_WHEN))),
        ("--colors", Takes::Value(Kind::Text)),
        ("-r", Takes::Value(Kind::Text)),
        ("--replace", Takes::Value(Kind::Text)),
        ("-E", Takes::Value(Kind::Encoding)),
        ("--encoding", Takes::Value(Kind::Encoding)),
        ("--engine", Takes::Value(Kind::Word(RG_ENGINES))),
        ("--context-separator", Takes::Value(Kind::Text)),
        ("--field-match-separator", Takes::Value(Kind::Text)),
        ("--path-separator", Takes::Value(Kind::Text)),
        ("--ignore-file", Takes::Value(Kind::Path(Use::Read))),
    ]],
    denied: &[&[
        ("--pre", RUNS_A_PROGRAM),
        ("--pre-glob", RUNS_A_PROGRAM),
        ("--hostname-bin", RUNS_A_PROGRAM),
        ("-z", "runs decompression programs"),
        ("--search-zip", "runs decompression programs"),
        ("-L", FOLLOWS_LINKS),
        ("--follow", FOLLOWS_LINKS),
    ]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

const PWD: Spec = Spec {
    opts: &[&[("-L", Takes::No), ("-P", Takes::No)]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// The tests `file -e` can leave out.
const FILE_TESTS: &[&str] = &[
    "apptype", "ascii", "cdf", "compress", "csv", "elf", "encoding", "soft", "tar", "json", "text",
    "tokens",
];

const FILE: Spec = Spec {
    opts: &[&[
        ("-b", Takes::No),
        ("--brief", Takes::No),
        ("-i", Takes::No),
        ("--mime", Takes::No),
        ("--mime-type", Takes::No),
        ("--mime-encoding", Takes::No),
        ("--apple", Takes::No),
        ("--extension", Takes::No),
        ("-k", Takes::No),
        ("--keep-going", Takes::No),
        ("-L", Takes::No),
        ("--dereference", Takes::No),
        ("-h", Takes::No),
        ("--no-dereference", Takes::No),
        ("-n", Takes::No),
        ("--no-buffer", Takes::No),
        ("-N", Takes::No),
        ("--no-pad", Takes::No),
        ("-0", Takes::No),
        ("--print0", Takes::No),
        ("-r", Takes::No),
        ("--raw", Takes::No),
        ("-E", Takes::No),
        ("-e", Takes::Value(Kind::Word(FILE_TESTS))),
        ("--exclude", Takes::Value(Kind::Word(FILE_TESTS))),
        ("--exclude-quiet", Takes::Value(Kind::Word(FILE_TESTS))),
        ("-F", Takes::Value(Kind::Text)),
        ("--separator", Takes::Value(Kind::Text)),
        ("-P", Takes::Value(Kind::Text)),
        ("--parameter", Takes::Value(Kind::Text)),
    ]],
    denied: &[&[
        ("-f", UNCHECKED_NAMES),
        ("--files-from", UNCHECKED_NAMES),
        ("-m", "loads magic files the analyser does not check"),
        (
            "--magic-file",
            "loads magic files the analyser does not check",
        ),
        ("-C", WRITES_A_FILE),
        ("--compile", WRITES_A_FILE),
        ("-p", "resets the files' access times"),
        ("--preserve-date", "resets the files' access times"),
        ("-s", "reads devices"),
        ("--special-files", "reads devices"),
        ("-z", "may run decompression programs"),
        ("-Z", "may run decompression programs"),
        ("--uncompress", "may run decompression programs"),
        ("--uncompress-noreport", "may run decompression programs"),
    ]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `stat --cached=MODE`.
const STAT_CACHED: &[&str] = &["always", "never", "default"];

const STAT: Spec = Spec {
    opts: &[&[
        ("-L", Takes::No),
        ("--dereference", Takes::No),
        ("-f", Takes::No),
        ("--file-system", Takes::No),
        ("-t", Takes::No),
        ("--terse", Takes::No),
        ("-c", Takes::Value(Kind::Text)),
        ("--format", Takes::Value(Kind::Text)),
        ("--printf", Takes::Value(Kind::Text)),
        ("--cached", Takes::Value(Kind::Word(STAT_CACHED))),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `du --time=WORD`.
const DU_TIMES: &[&str] = &["atime", "access", "use", "ctime", "status"];

const DU: Spec = Spec {
    opts: &[&[
        ("-0", Takes::No),
        ("--null", Takes::No),
        ("-a", Takes::No),
        ("--all", Takes::No),
        ("--apparent-size", Takes::No),
        ("-B", Takes::Value(Kind::BlockSize)),
        ("--block-size", Takes::Value(Kind::BlockSize)),
        ("-b", Takes::No),
        ("--bytes", Takes::No),
        ("-c", Takes::No),
        ("--total", Takes::No),
        ("-D", Takes::No),
        ("-H", Takes::No),
        ("--dereference-args", Takes::No),
        ("-d", Takes::Value(Kind::Count)),
        ("--max-depth", Takes::Value(Kind::Count)),
        ("-h", Takes::No),
        ("--human-readable", Takes::No),
        ("--inodes", Takes::No),
        ("-k", Takes::No),
        ("-l", Takes::No),
        ("--count-links", Takes::No),
        ("-m", Takes::No),
        ("-P", Takes::No),
        ("--no-dereference", Takes::No),
        ("-S", Takes::No),
        ("--separate-dirs", Takes::No),
        ("--si", Takes::No),
        ("-s", Takes::No),
        ("--summarize", Takes::No),
        ("-t", Takes::Value(Kind::Size)),
        ("--threshold", Takes::Value(Kind::Size)),
        ("--time", Takes::Attached(Kind::Word(DU_TIMES))),
        ("--time-style", Takes::Value(Kind::Text)),
        ("-X", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude-from", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude", Takes::Value(Kind::Text)),
        ("-x", Takes::No),
        ("--one-file-system", Takes::No),
    ]],
    denied: &[&[
        ("-L", FOLLOWS_LINKS),
        ("--dereference", FOLLOWS_LINKS),
        ("--files0-from", UNCHECKED_NAMES),
    ]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `tree --sort`.
const TREE_SORTS: &[&str] = &["name", "version", "size", "mtime", "ctime", "none"];

const TREE: Spec = Spec {
    opts: &[&[
        ("-a", Takes::No),
        ("-d", Takes::No),
        ("-f", Takes::No),
        ("-F", Takes::No),
        ("-i", Takes::No),
        ("-q", Takes::No),
        ("-N", Takes::No),
        ("-Q", Takes::No),
        ("-p", Takes::No),
        ("-u", Takes::No),
        ("-g", Takes::No),
        ("-s", Takes::No),
        ("-h", Takes::No),
        ("-D", Takes::No),
        ("-v", Takes::No),
        ("-t", Takes::No),
        ("-c", Takes::No),
        ("-U", Takes::No),
        ("-r", Takes::No),
        ("-C", Takes::No),
        ("-n", Takes::No),
        ("-A", Takes::No),
        ("-S", Takes::No),
        ("-x", Takes::No),
        ("-J", Takes::No),
        ("-X", Takes::No),
        ("-L", Takes::Value(Kind::Count)),
        ("-P", Takes::Value(Kind::Text)),
        ("-I", Takes::Value(Kind::Text)),
        ("--noreport", Takes::No),
        ("--dirsfirst", Takes::No),
        ("--filesfirst", Takes::No),
        ("--du", Takes::No),
        ("--si", Takes::No),
        ("--prune", Takes::No),
        ("--matchdirs", Takes::No),
        ("--ignore-case", Takes::No),
        ("--charset", Takes::Value(Kind::Encoding)),
        ("--filelimit", Takes::Value(Kind::Count)),
        ("--timefmt", Takes::Value(Kind::Text)),
        ("--sort", Takes::Value(Kind::Word(TREE_SORTS))),
    ]],
    denied: &[&[
        ("-o", WRITES_A_FILE),
        ("-l", FOLLOWS_LINKS),
        ("-R", "writes an index file into every directory"),
        ("--fromfile", UNCHECKED_NAMES),
        (
            "--gitignore",
            "reads .gitignore files as it walks, following links and blocking on FIFOs",
        ),
    ]],
    numbers: false,
    style: Style::Separate,
    paths: Base::Stage,
};

/// `sort --sort=WORD`.
const SORT_ORDERS: &[&str] = &[
    "general-numeric",
    "human-numeric",
    "month",
    "numeric",
    "random",
    "version",
];

/// `sort --check=WORD`.
const SORT_CHECKS: &[&str] = &["diagnose-first", "quiet", "silent"];

const SORT: Spec = Spec {
    opts: &[&[
        ("-b", Takes::No),
        ("--ignore-leading-blanks", Takes::No),
        ("-d", Takes::No),
        ("--dictionary-order", Takes::No),
        ("-f", Takes::No),
        ("--ignore-case", Takes::No),
        ("-g", Takes::No),
        ("--general-numeric-sort", Takes::No),
        ("-i", Takes::No),
        ("--ignore-nonprinting", Takes::No),
        ("-M", Takes::No),
        ("--month-sort", Takes::No),
        ("-h", Takes::No),
        ("--human-numeric-sort", Takes::No),
        ("-n", Takes::No),
        ("--numeric-sort", Takes::No),
        ("-R", Takes::No),
        ("--random-sort", Takes::No),
        ("-r", Takes::No),
        ("--reverse", Takes::No),
        ("--sort", Takes::Value(Kind::Word(SORT_ORDERS))),
        ("-V", Takes::No),
        ("--version-sort", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::No),
        ("--check", Takes::Attached(Kind::Word(SORT_CHECKS))),
        ("--debug", Takes::No),
        ("-k", Takes::Value(Kind::Numbers)),
        ("--key", Takes::Value(Kind::Numbers)),
        ("-m", Takes::No),
        ("--merge", Takes::No),
        ("-s", Takes::No),
        ("--stable", Takes::No),
        ("-t", Takes::Value(Kind::Text)),
        ("--field-separator", Takes::Value(Kind::Text)),
        ("--parallel", Takes::Value(Kind::Count)),
        ("-u", Takes::No),
        ("--unique", Takes::No),
        ("-z", Takes::No),
        ("--zero-terminated", Takes::No),
    ]],
    denied: &[&[
        ("-o", WRITES_A_FILE),
        ("--output", WRITES_A_FILE),
        (
            "-T",
            "writes temporary files into a directory the analyser does not check",
        ),
        (
            "--temporary-directory",
            "writes temporary files into a directory the analyser does not check",
        ),
        ("--compress-program", RUNS_A_PROGRAM),
        ("--files0-from", UNCHECKED_NAMES),
        ("-S", SPILLS),
        ("--buffer-size", SPILLS),
    ]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `uniq --all-repeated=METHOD`.
const ALL_REPEATED: &[&str] = &["none", "prepend", "separate"];

/// `uniq --group=METHOD`.
const GROUPS: &[&str] = &["separate", "prepend", "append", "both"];

const UNIQ: Spec = Spec {
    opts: &[&[
        ("-c", Takes::No),
        ("--count", Takes::No),
        ("-d", Takes::No),
        ("--repeated", Takes::No),
        ("-D", Takes::No),
        ("--all-repeated", Takes::Attached(Kind::Word(ALL_REPEATED))),
        ("--group", Takes::Attached(Kind::Word(GROUPS))),
        ("-u", Takes::No),
        ("--unique", Takes::No),
        ("-i", Takes::No),
        ("--ignore-case", Takes::No),
        ("-z", Takes::No),
        ("--zero-terminated", Takes::No),
        ("-f", Takes::Value(Kind::Count)),
        ("--skip-fields", Takes::Value(Kind::Count)),
        ("-s", Takes::Value(Kind::Count)),
        ("--skip-chars", Takes::Value(Kind::Count)),
        ("-w", Takes::Value(Kind::Count)),
        ("--check-chars", Takes::Value(Kind::Count)),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

const CUT: Spec = Spec {
    opts: &[&[
        ("-b", Takes::Value(Kind::Numbers)),
        ("--bytes", Takes::Value(Kind::Numbers)),
        ("-c", Takes::Value(Kind::Numbers)),
        ("--characters", Takes::Value(Kind::Numbers)),
        ("-d", Takes::Value(Kind::Text)),
        ("--delimiter", Takes::Value(Kind::Text)),
        ("-f", Takes::Value(Kind::Numbers)),
        ("--fields", Takes::Value(Kind::Numbers)),
        ("-n", Takes::No),
        ("--complement", Takes::No),
        ("-s", Takes::No),
        ("--only-delimited", Takes::No),
        ("--output-delimiter", Takes::Value(Kind::Text)),
        ("-z", Takes::No),
        ("--zero-terminated", Takes::No),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

const DIFF: Spec = Spec {
    opts: &[&[
        ("--normal", Takes::No),
        ("-q", Takes::No),
        ("--brief", Takes::No),
        ("-s", Takes::No),
        ("--report-identical-files", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::Value(Kind::Count)),
        ("--context", Takes::Attached(Kind::Count)),
        ("-u", Takes::No),
        ("-U", Takes::Value(Kind::Count)),
        ("--unified", Takes::Attached(Kind::Count)),
        ("-e", Takes::No),
        ("--ed", Takes::No),
        ("-n", Takes::No),
        ("--rcs", Takes::No),
        ("-y", Takes::No),
        ("--side-by-side", Takes::No),
        ("-W", Takes::Value(Kind::Count)),
        ("--width", Takes::Value(Kind::Count)),
        ("--left-column", Takes::No),
        ("--suppress-common-lines", Takes::No),
        ("-p", Takes::No),
        ("--show-c-function", Takes::No),
        ("-F", Takes::Value(Kind::Text)),
        ("--show-function-line", Takes::Value(Kind::Text)),
        ("--label", Takes::Value(Kind::Text)),
        ("-t", Takes::No),
        ("--expand-tabs", Takes::No),
        ("-T", Takes::No),
        ("--initial-tab", Takes::No),
        ("--tabsize", Takes::Value(Kind::Count)),
        ("--suppress-blank-empty", Takes::No),
        ("--no-dereference", Takes::No),
        ("-N", Takes::No),
        ("--new-file", Takes::No),
        ("--unidirectional-new-file", Takes::No),
        ("--ignore-file-name-case", Takes::No),
        ("--no-ignore-file-name-case", Takes::No),
        ("-x", Takes::Value(Kind::Text)),
        ("--exclude", Takes::Value(Kind::Text)),
        ("-X", Takes::Value(Kind::Path(Use::Read))),
        ("--exclude-from", Takes::Value(Kind::Path(Use::Read))),
        ("-S", Takes::Value(Kind::Text)),
        ("--starting-file", Takes::Value(Kind::Text)),
        ("--from-file", Takes::Value(Kind::Path(Use::ReadFileOnly))),
        ("--to-file", Takes::Value(Kind::Path(Use::ReadFileOnly))),
        ("-i", Takes::No),
        ("--ignore-case", Takes::No),
        ("-E", Takes::No),
        ("--ignore-tab-expansion", Takes::No),
        ("-Z", Takes::No),
        ("--ignore-trailing-space", Takes::No),
        ("-b", Takes::No),
        ("--ignore-space-change", Takes::No),
        ("-w", Takes::No),
        ("--ignore-all-space", Takes::No),
        ("-B", Takes::No),
        ("--ignore-blank-lines", Takes::No),
        ("-I", Takes::Value(Kind::Text)),
        ("--ignore-matching-lines", Takes::Value(Kind::Text)),
        ("-a", Takes::No),
        ("--text", Takes::No),
        ("--strip-trailing-cr", Takes::No),
        ("-D", Takes::Value(Kind::Text)),
        ("--ifdef", Takes::Value(Kind::Text)),
        ("--old-group-format", Takes::Value(Kind::Text)),
        ("--new-group-format", Takes::Value(Kind::Text)),
        ("--changed-group-format", Takes::Value(Kind::Text)),
        ("--unchanged-group-format", Takes::Value(Kind::Text)),
        ("--line-format", Takes::Value(Kind::Text)),
        ("--old-line-format", Takes::Value(Kind::Text)),
        ("--new-line-format", Takes::Value(Kind::Text)),
        ("--unchanged-line-format", Takes::Value(Kind::Text)),
        ("-d", Takes::No),
        ("--minimal", Takes::No),
        ("--horizon-lines", Takes::Value(Kind::Count)),
        ("--speed-large-files", Takes::No),
        ("--color", Takes::Attached(Kind::Word(WHEN))),
        ("--palette", Takes::Value(Kind::Text)),
    ]],
    denied: &[&[
        (
            "-r",
            "compares directories, following symbolic links inside them",
        ),
        (
            "--recursive",
            "compares directories, following symbolic links inside them",
        ),
        ("-l", RUNS_A_PROGRAM),
        ("--paginate", RUNS_A_PROGRAM),
    ]],
    numbers: false,
    style: Style::Gnu,
    paths: Base::Stage,
};

/// `find`'s options before its start points.
const FIND_LEADING: &[&str] = &["-H", "-P"];

/// `find -regextype TYPE`.
const FIND_REGEX_TYPES: &[&str] = &[
    "findutils-default",
    "ed",
    "emacs",
    "gnu-awk",
    "grep",
    "posix-awk",
    "awk",
    "posix-basic",
    "posix-egrep",
    "egrep",
    "posix-extended",
    "posix-minimal-basic",
    "sed",
];

/// `find -type`: one type (find also takes a list, `f,d`, which asks).
const FILE_TYPES: &[&str] = &["b", "c", "d", "p", "f", "l", "s"];

/// `find`'s expression: what each primary takes after it.
const FIND_EXPRESSION: Spec = Spec {
    opts: &[&[
        ("-print", Takes::No),
        ("-print0", Takes::No),
        ("-ls", Takes::No),
        ("-prune", Takes::No),
        ("-quit", Takes::No),
        ("-true", Takes::No),
        ("-false", Takes::No),
        ("-empty", Takes::No),
        ("-executable", Takes::No),
        ("-readable", Takes::No),
        ("-writable", Takes::No),
        ("-nouser", Takes::No),
        ("-nogroup", Takes::No),
        ("-depth", Takes::No),
        ("-mount", Takes::No),
        ("-xdev", Takes::No),
        ("-noleaf", Takes::No),
        ("-daystart", Takes::No),
        ("-ignore_readdir_race", Takes::No),
        ("-noignore_readdir_race", Takes::No),
        ("-nowarn", Takes::No),
        ("-warn", Takes::No),
        ("-not", Takes::No),
        ("-a", Takes::No),
        ("-and", Takes::No),
        ("-o", Takes::No),
        ("-or", Takes::No),
        ("!", Takes::No),
        ("(", Takes::No),
        (")", Takes::No),
        (",", Takes::No),
        ("-name", Takes::Value(Kind::Text)),
        ("-iname", Takes::Value(Kind::Text)),
        ("-path", Takes::Value(Kind::Text)),
        ("-ipath", Takes::Value(Kind::Text)),
        ("-wholename", Takes::Value(Kind::Text)),
        ("-iwholename", Takes::Value(Kind::Text)),
        ("-regex", Takes::Value(Kind::Text)),
        ("-iregex", Takes::Value(Kind::Text)),
        ("-regextype", Takes::Value(Kind::Word(FIND_REGEX_TYPES))),
        ("-lname", Takes::Value(Kind::Text)),
        ("-ilname", Takes::Value(Kind::Text)),
        ("-type", Takes::Value(Kind::Word(FILE_TYPES))),
        ("-size", Takes::Value(Kind::Size)),
        ("-mtime", Takes::Value(Kind::Size)),
        ("-mmin", Takes::Value(Kind::Size)),
        ("-atime", Takes::Value(Kind::Size)),
        ("-amin", Takes::Value(Kind::Size)),
        ("-ctime", Takes::Value(Kind::Size)),
        ("-cmin", Takes::Value(Kind::Size)),
        ("-used", Takes::Value(Kind::Size)),
        ("-perm", Takes::Value(Kind::Text)),
        ("-user", Takes::Value(Kind::Text)),
        ("-group", Takes::Value(Kind::Text)),
        ("-uid", Takes::Value(Kind::Size)),
        ("-gid", Takes::Value(Kind::Size)),
        ("-links", Takes::Value(Kind::Size)),
        ("-inum", Takes::Value(Kind::Size)),
        ("-maxdepth", Takes::Value(Kind::Count)),
        ("-mindepth", Takes::Value(Kind::Count)),
        ("-fstype", Takes::Value(Kind::Text)),
        ("-printf", Takes::Value(Kind::FindFormat)),
        ("-newer", Takes::Value(Kind::Path(Use::Look))),
        ("-anewer", Takes::Value(Kind::Path(Use::Look))),
        ("-cnewer", Takes::Value(Kind::Path(Use::Look))),
        ("-samefile", Takes::Value(Kind::Path(Use::Look))),
    ]],
    denied: &[&[
        ("-exec", RUNS_A_PROGRAM),
        ("-execdir", RUNS_A_PROGRAM),
        ("-ok", RUNS_A_PROGRAM),
        ("-okdir", RUNS_A_PROGRAM),
        ("-delete", "deletes files"),
        ("-fprint", WRITES_A_FILE),
        ("-fprint0", WRITES_A_FILE),
        ("-fprintf", WRITES_A_FILE),
        ("-fls", WRITES_A_FILE),
        ("-follow", FOLLOWS_LINKS),
        ("-L", FOLLOWS_LINKS),
        ("-xtype", LOOKS_WHERE_LINKS_LEAD),
        ("-files0-from", UNCHECKED_NAMES),
    ]],
    numbers: false,
    style: Style::Git,
    paths: Base::Stage,
};

/// `find [-H|-P] [start...] [expression]`: start points are the words
/// before the first that starts with `-` or is `(` or `!`; each is a path
/// (a `)` or `,` there is refused). Every word of the expression must be a
/// primary of the table; one that takes a value takes the next word, which
/// is checked as its kind.
fn find(place: &Place, args: &[String]) -> Result<(), Refusal> {
    let mut words = args.iter().peekable();
    while words
        .next_if(|w| FIND_LEADING.contains(&w.as_str()))
        .is_some()
    {}
    let is_expression =
        |w: &String| w.starts_with('-') || matches!(w.as_str(), "(" | ")" | "!" | ",");
    while let Some(start) = words.next_if(|w| !is_expression(w)) {
        place.check(start, Use::Look)?;
    }
    // Where the start points would begin, GNU find reads a lone `)` or `,`
    // as a start point, not an operator: refused rather than read two ways.
    if let Some(word) = words.next_if(|w| matches!(w.as_str(), ")" | ",")) {
        return Err(Refusal::Operand {
            cmd: "find".to_owned(),
            why: format!("`{word}` before the expression is read by find as a start point"),
        });
    }
    while let Some(word) = words.next() {
        let (primary, takes) = FIND_EXPRESSION.lookup("find", word)?;
        let Takes::Value(kind) = takes else {
            continue;
        };
        let value = words.next().ok_or_else(|| Refusal::MissingValue {
            cmd: "find".to_owned(),
            flag: primary.to_owned(),
        })?;
        kind.check("find", primary, value, place, FIND_EXPRESSION.paths)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Every table, option by option: each value-taking option is given a
    //! value of its kind in every form its program reads (which must run
    //! unasked), and values its kind refuses (which must ask), in a real
    //! project with a real repository.
    #![allow(clippy::unwrap_used)]

    use std::collections::HashSet;
    use std::mem::discriminant;
    use std::path::PathBuf;

    use nix::sys::stat::Mode;

    use super::super::git::SUBCOMMANDS;
    use super::super::{Analyser, Verdict};
    use super::*;

    /// What a git line in a folder of no repository asks for.
    const NO_REPOSITORY: &str = "no repository in the project here";

    /// `base/root` with `README.md`, a directory `sub` and a FIFO `fifo`
    /// (no repository: git's own answers are the repository tests');
    /// `base/outside/secret.txt` beside it.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
        std::fs::write(root.join("README.md"), "hello\n").unwrap();
        nix::unistd::mkfifo(&root.join("fifo"), Mode::S_IRWXU).unwrap();
        (dir, root)
    }

    /// Every table, with the words a line using it starts with.
    fn tables() -> Vec<(String, &'static Spec)> {
        // rg asks unless told to read no ignore file.
        let commands = COMMANDS.iter().map(|(name, spec)| match *name {
            "rg" => ("rg --no-ignore".to_owned(), *spec),
            name => (name.to_owned(), *spec),
        });
        let git = SUBCOMMANDS
            .iter()
            .map(|(name, spec)| (format!("git {name}"), *spec));
        commands
            .chain([("find .".to_owned(), &FIND_EXPRESSION)])
            .chain(git)
            .collect()
    }

    /// The kind of what `takes`, if anything.
    fn kind_of(takes: Takes) -> Option<Kind> {
        match takes {
            Takes::No => None,
            Takes::Value(kind) | Takes::Attached(kind) | Takes::ValueOrEnd(kind) => Some(kind),
        }
    }

    /// The ways `flag` is given `value` in a line of `cmd`, as its program
    /// reads them: `--flag=v` and `--flag v`, `-fv` and `-f v`; only the
    /// same word for an optional value; only the next word for find's
    /// primaries and tree's short options.
    fn forms(cmd: &str, spec: &Spec, flag: &str, takes: Takes, value: &str) -> Vec<String> {
        let long = flag.starts_with("--");
        let joined = if long {
            format!("'{flag}={value}'")
        } else {
            format!("'{flag}{value}'")
        };
        let apart = format!("{flag} '{value}'");
        match takes {
            Takes::No => Vec::new(),
            Takes::Attached(_) => vec![joined],
            Takes::Value(_) | Takes::ValueOrEnd(_)
                if !long && (cmd == "find ." || spec.style == Style::Separate) =>
            {
                vec![apart]
            }
            Takes::Value(_) | Takes::ValueOrEnd(_) => vec![joined, apart],
        }
        .into_iter()
        .map(|option| format!("{cmd} {option}"))
        .collect()
    }

    /// Values of `kind` that must run unasked. Text and formats are never
    /// opened, so a name outside the project is only text to them.
    fn fitting(kind: Kind) -> Vec<&'static str> {
        match kind {
            Kind::Count => vec!["3", "012"],
            Kind::Size => vec!["3", "10K", "-5", "+2", "1.5", "50%"],
            Kind::BlockSize => vec!["K", "MiB", "1M", "512"],
            Kind::Numbers => vec!["1,3-5", "-3", "2,2n", "50%", "0.5", "20%/60%"],
            Kind::Word(words) => words
                .iter()
                .map(|word| {
                    if *word == "format:" {
                        "format:%Y"
                    } else {
                        word
                    }
                })
                .collect(),
            Kind::Path(Use::Look) => vec!["README.md", "sub", "fifo", "nothere"],
            Kind::Path(Use::Read) => vec!["README.md", "sub", "nothere"],
            Kind::Path(Use::ReadFileOnly) => vec!["README.md", "nothere"],
            Kind::FileName => vec![".gitignore", "x"],
            Kind::Revision => vec!["HEAD", "main~1", "v1.0^{commit}"],
            Kind::Encoding => vec!["UTF-8", "latin1", "ISO-8859-1"],
            Kind::GitFormat => vec!["%h %s", "../outside/secret.txt", "/etc/passwd"],
            Kind::FindFormat => vec!["%p %y %l\\n", "%TY %AY", "%%Y", "/etc/passwd"],
            Kind::Text => vec!["x y", "../outside/secret.txt", "/etc/passwd", "-v"],
        }
    }

    /// Values of `kind` that must ask: for every kind but text, names
    /// outside the project; for files read, a FIFO; and what the kind's
    /// form leaves out.
    fn refused(kind: Kind) -> Vec<&'static str> {
        let outside = ["../outside/secret.txt", "/etc/passwd"];
        let own: &[&str] = match kind {
            Kind::Count => &["-1", "3K", ""],
            Kind::Size => &["--5", "1.", "10KiBs", "1,2", "K", "f", ""],
            Kind::BlockSize => &["--5", "KiBs", "1,2", ""],
            Kind::Numbers => &["1..3", "/1", "1/x", "x", "-", ""],
            Kind::Word(_) => &["nonsense", ""],
            Kind::Path(Use::Look) => &[""],
            Kind::Path(Use::Read) => &["fifo", ""],
            Kind::Path(Use::ReadFileOnly) => &["fifo", "sub", ""],
            Kind::FileName => &[".", "..", "sub/x", ""],
            Kind::Revision => &["-x", ""],
            Kind::Encoding => &["UTF 8", ""],
            Kind::GitFormat => return vec!["%G?", "%h %GS"],
            Kind::FindFormat => return vec!["%Y", "%p %-3Y", "%10.2Y"],
            Kind::Text => return Vec::new(),
        };
        outside.iter().chain(own).copied().collect()
    }

    #[test]
    fn every_option_value_is_checked_as_its_kind() {
        let (_dir, root) = project();
        let analyser = Analyser::new(&root).with_command_env(vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ]);
        let mut failures = Vec::new();
        let mut lines = 0;
        let mut kinds = HashSet::new();
        for (cmd, spec) in tables() {
            for &(flag, takes) in spec.opts.iter().flat_map(|table| table.iter()) {
                let Some(kind) = kind_of(takes) else {
                    continue;
                };
                kinds.insert(discriminant(&kind));
                let cases = fitting(kind)
                    .into_iter()
                    .map(|value| (value, true))
                    .chain(refused(kind).into_iter().map(|value| (value, false)));
                for (value, runs) in cases {
                    // An optional value left empty is no value.
                    if value.is_empty() && matches!(takes, Takes::Attached(_)) {
                        continue;
                    }
                    for line in forms(&cmd, spec, flag, takes, value) {
                        lines += 1;
                        let verdict = analyser.analyse(".", &line);
                        // The project is no repository: a git line whose
                        // options all passed asks for that alone, without
                        // asking git (which the repository tests cover).
                        let ok = match &verdict {
                            Verdict::ReadOnly { .. } => runs,
                            Verdict::Ask { reason } if runs => reason.contains(NO_REPOSITORY),
                            Verdict::Ask { reason } => reason.contains(value),
                            Verdict::Invalid { .. } => false,
                        };
                        if !ok {
                            failures.push(format!("{line}: {verdict:?}"));
                        }
                    }
                }
                // git opens an option's file from the top of the work
                // tree: from `sub`, `..` leaves the project. Other programs
                // read it from where they run.
                if let Kind::Path(_) = kind {
                    let value = "../outside/secret.txt";
                    for line in forms(&cmd, spec, flag, takes, value) {
                        lines += 1;
                        let verdict = analyser.analyse("sub", &line);
                        let asks =
                            matches!(&verdict, Verdict::Ask { reason } if reason.contains(value));
                        let runs = matches!(verdict, Verdict::ReadOnly { .. });
                        let ok = match spec.paths {
                            Base::WorkTreeTop => asks,
                            Base::Stage => runs,
                        };
                        if !ok {
                            failures.push(format!("in sub: {line}: {verdict:?}"));
                        }
                    }
                }
            }
        }
        let every_kind = [
            Kind::Count,
            Kind::Size,
            Kind::BlockSize,
            Kind::Numbers,
            Kind::Word(&[]),
            Kind::Path(Use::Read),
            Kind::FileName,
            Kind::Revision,
            Kind::Encoding,
            Kind::GitFormat,
            Kind::FindFormat,
            Kind::Text,
        ];
        for kind in every_kind {
            if !kinds.contains(&discriminant(&kind)) {
                failures.push(format!("no option's value is {kind:?}"));
            }
        }
        assert!(lines > 1000, "{lines} lines");
        assert!(
            failures.is_empty(),
            "{} of {lines} lines failed:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    /// A table lists each option once, and never one it refuses.
    #[test]
    fn tables_are_unambiguous() {
        for (cmd, spec) in tables() {
            let mut seen = HashSet::new();
            for (flag, _) in spec.opts.iter().flat_map(|table| table.iter()) {
                assert!(seen.insert(*flag), "`{cmd} {flag}` is listed twice");
            }
            for (flag, _) in spec.denied.iter().flat_map(|table| table.iter()) {
                assert!(
                    !seen.contains(flag),
                    "`{cmd} {flag}` is allowed and refused"
                );
            }
        }
    }
}
