//! The commands a stage may run, each with the options it may take, as
//! allow-lists: an option that is not in a command's table refuses the
//! stage, and a few well-known dangerous ones say why. Options are read
//! as the programs read them (GNU `getopt_long` for the coreutils, grep,
//! diff and ripgrep; find's own expression syntax; git's in `git.rs`), so a
//! path is never mistaken for an option's value. ADR 0025 documents each
//! table.

use super::git;
use super::paths::{Place, Use};
use super::{Analyser, Refusal};

/// What an option takes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Takes {
    /// Nothing: a flag.
    No,
    /// A value that is not a path (a number, a pattern, a format): after
    /// `=` or attached to a short option, else the next word.
    Value,
    /// An optional value, only in the same word (`--color=always`,
    /// `-uno`); the next word is never taken.
    Attached,
    /// A value in the same word or the next one, which may be left out at
    /// the end of the line (`git branch --contains`).
    ValueOrEnd,
    /// A path, checked as the command uses it.
    Path(Use),
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
    pub style: Style,
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

    /// Reads `args` against the table: every option allowed, every path an
    /// option takes checked; the operands are left to the command.
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
            let inline = (!attached.is_empty()).then_some(attached);
            let value = self.value(cmd, canonical, takes, inline, rest, place)?;
            parsed.flags.push((canonical, value));
            return Ok(());
        }
        Ok(())
    }

    /// The value of an option, taken from the same word or the next, and
    /// checked when it is a path.
    fn value<'w>(
        &self,
        cmd: &str,
        flag: &str,
        takes: Takes,
        inline: Option<&'w str>,
        rest: &mut std::slice::Iter<'w, String>,
        place: &Place,
    ) -> Result<Option<&'w str>, Refusal> {
        let missing = || Refusal::MissingValue {
            cmd: cmd.to_owned(),
            flag: flag.to_owned(),
        };
        match takes {
            Takes::No if inline.is_some() => Err(Refusal::Flag {
                cmd: cmd.to_owned(),
                flag: flag.to_owned(),
                why: "takes no value",
            }),
            Takes::No => Ok(None),
            Takes::Attached => Ok(inline),
            Takes::ValueOrEnd => Ok(inline.or_else(|| rest.next().map(String::as_str))),
            Takes::Value => inline
                .or_else(|| rest.next().map(String::as_str))
                .map(Some)
                .ok_or_else(missing),
            Takes::Path(using) => {
                let path = inline
                    .or_else(|| rest.next().map(String::as_str))
                    .ok_or_else(missing)?;
                place.check(path, using)?;
                Ok(Some(path))
            }
        }
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
        "ls" => &LS,
        "cat" => &CAT,
        "head" => &HEAD,
        "tail" => &TAIL,
        "wc" => &WC,
        "grep" => &GREP,
        "rg" => &RG,
        "pwd" => &PWD,
        "file" => &FILE,
        "stat" => &STAT,
        "du" => &DU,
        "tree" => &TREE,
        "sort" => &SORT,
        "uniq" => &UNIQ,
        "cut" => &CUT,
        "diff" => &DIFF,
        _ => return Err(Refusal::Command(cmd.clone())),
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

/// The operands that are files: all of them when a pattern came from an
/// option, else all but the first, which is the pattern.
fn pattern_operand<'p, 'w>(parsed: &'p Parsed<'w>, pattern_given: &[&str]) -> &'p [&'w str] {
    if parsed.has(pattern_given) {
        &parsed.operands
    } else {
        parsed.operands.get(1..).unwrap_or(&[])
    }
}

const LS: Spec = Spec {
    opts: &[&[
        ("-a", Takes::No),
        ("--all", Takes::No),
        ("-A", Takes::No),
        ("--almost-all", Takes::No),
        ("--author", Takes::No),
        ("-b", Takes::No),
        ("--escape", Takes::No),
        ("--block-size", Takes::Value),
        ("-B", Takes::No),
        ("--ignore-backups", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::No),
        ("--color", Takes::Attached),
        ("-d", Takes::No),
        ("--directory", Takes::No),
        ("-D", Takes::No),
        ("--dired", Takes::No),
        ("-f", Takes::No),
        ("-F", Takes::No),
        ("--classify", Takes::Attached),
        ("--file-type", Takes::No),
        ("--format", Takes::Value),
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
        ("--hide", Takes::Value),
        ("--hyperlink", Takes::Attached),
        ("--indicator-style", Takes::Value),
        ("-i", Takes::No),
        ("--inode", Takes::No),
        ("-I", Takes::Value),
        ("--ignore", Takes::Value),
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
        ("--quoting-style", Takes::Value),
        ("-r", Takes::No),
        ("--reverse", Takes::No),
        ("-R", Takes::No),
        ("--recursive", Takes::No),
        ("-s", Takes::No),
        ("--size", Takes::No),
        ("-S", Takes::No),
        ("--sort", Takes::Value),
        ("--time", Takes::Value),
        ("--time-style", Takes::Value),
        ("-t", Takes::No),
        ("-T", Takes::Value),
        ("--tabsize", Takes::Value),
        ("-u", Takes::No),
        ("-U", Takes::No),
        ("-v", Takes::No),
        ("-w", Takes::Value),
        ("--width", Takes::Value),
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
};

const FOLLOWS_LINKS: &str = "follows symbolic links, which may lead out of the project";
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
};

const HEAD_OPTS: &[(&str, Takes)] = &[
    ("-c", Takes::Value),
    ("--bytes", Takes::Value),
    ("-n", Takes::Value),
    ("--lines", Takes::Value),
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
};

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
        ("-e", Takes::Value),
        ("--regexp", Takes::Value),
        ("-f", Takes::Path(Use::Read)),
        ("--file", Takes::Path(Use::Read)),
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
        ("-m", Takes::Value),
        ("--max-count", Takes::Value),
        ("-b", Takes::No),
        ("--byte-offset", Takes::No),
        ("-n", Takes::No),
        ("--line-number", Takes::No),
        ("--line-buffered", Takes::No),
        ("-H", Takes::No),
        ("--with-filename", Takes::No),
        ("-h", Takes::No),
        ("--no-filename", Takes::No),
        ("--label", Takes::Value),
        ("-o", Takes::No),
        ("--only-matching", Takes::No),
        ("-q", Takes::No),
        ("--quiet", Takes::No),
        ("--silent", Takes::No),
        ("--binary-files", Takes::Value),
        ("-a", Takes::No),
        ("--text", Takes::No),
        ("-I", Takes::No),
        ("-d", Takes::Value),
        ("--directories", Takes::Value),
        ("-r", Takes::No),
        ("--recursive", Takes::No),
        ("--include", Takes::Value),
        ("--exclude", Takes::Value),
        ("--exclude-from", Takes::Path(Use::Read)),
        ("--exclude-dir", Takes::Value),
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
        ("-B", Takes::Value),
        ("--before-context", Takes::Value),
        ("-A", Takes::Value),
        ("--after-context", Takes::Value),
        ("-C", Takes::Value),
        ("--context", Takes::Value),
        ("--group-separator", Takes::Value),
        ("--no-group-separator", Takes::No),
        ("--color", Takes::Attached),
        ("--colour", Takes::Attached),
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
};

const RG: Spec = Spec {
    opts: &[&[
        ("-e", Takes::Value),
        ("--regexp", Takes::Value),
        ("-f", Takes::Path(Use::Read)),
        ("--file", Takes::Path(Use::Read)),
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
        ("-g", Takes::Value),
        ("--glob", Takes::Value),
        ("--iglob", Takes::Value),
        ("-t", Takes::Value),
        ("--type", Takes::Value),
        ("-T", Takes::Value),
        ("--type-not", Takes::Value),
        ("-A", Takes::Value),
        ("--after-context", Takes::Value),
        ("-B", Takes::Value),
        ("--before-context", Takes::Value),
        ("-C", Takes::Value),
        ("--context", Takes::Value),
        ("-m", Takes::Value),
        ("--max-count", Takes::Value),
        ("-d", Takes::Value),
        ("--max-depth", Takes::Value),
        ("--max-filesize", Takes::Value),
        ("-M", Takes::Value),
        ("--max-columns", Takes::Value),
        ("-j", Takes::Value),
        ("--threads", Takes::Value),
        ("--sort", Takes::Value),
        ("--sortr", Takes::Value),
        ("--color", Takes::Value),
        ("--colors", Takes::Value),
        ("-r", Takes::Value),
        ("--replace", Takes::Value),
        ("-E", Takes::Value),
        ("--encoding", Takes::Value),
        ("--engine", Takes::Value),
        ("--context-separator", Takes::Value),
        ("--field-match-separator", Takes::Value),
        ("--path-separator", Takes::Value),
        ("--ignore-file", Takes::Path(Use::Read)),
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
};

const PWD: Spec = Spec {
    opts: &[&[("-L", Takes::No), ("-P", Takes::No)]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
};

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
        ("-e", Takes::Value),
        ("--exclude", Takes::Value),
        ("--exclude-quiet", Takes::Value),
        ("-F", Takes::Value),
        ("--separator", Takes::Value),
        ("-P", Takes::Value),
        ("--parameter", Takes::Value),
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
};

const STAT: Spec = Spec {
    opts: &[&[
        ("-L", Takes::No),
        ("--dereference", Takes::No),
        ("-f", Takes::No),
        ("--file-system", Takes::No),
        ("-t", Takes::No),
        ("--terse", Takes::No),
        ("-c", Takes::Value),
        ("--format", Takes::Value),
        ("--printf", Takes::Value),
        ("--cached", Takes::Value),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
};

const DU: Spec = Spec {
    opts: &[&[
        ("-0", Takes::No),
        ("--null", Takes::No),
        ("-a", Takes::No),
        ("--all", Takes::No),
        ("--apparent-size", Takes::No),
        ("-B", Takes::Value),
        ("--block-size", Takes::Value),
        ("-b", Takes::No),
        ("--bytes", Takes::No),
        ("-c", Takes::No),
        ("--total", Takes::No),
        ("-D", Takes::No),
        ("-H", Takes::No),
        ("--dereference-args", Takes::No),
        ("-d", Takes::Value),
        ("--max-depth", Takes::Value),
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
        ("-t", Takes::Value),
        ("--threshold", Takes::Value),
        ("--time", Takes::Attached),
        ("--time-style", Takes::Value),
        ("-X", Takes::Path(Use::Read)),
        ("--exclude-from", Takes::Path(Use::Read)),
        ("--exclude", Takes::Value),
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
};

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
        ("-L", Takes::Value),
        ("-P", Takes::Value),
        ("-I", Takes::Value),
        ("--noreport", Takes::No),
        ("--dirsfirst", Takes::No),
        ("--filesfirst", Takes::No),
        ("--du", Takes::No),
        ("--si", Takes::No),
        ("--prune", Takes::No),
        ("--matchdirs", Takes::No),
        ("--ignore-case", Takes::No),
        ("--gitignore", Takes::No),
        ("--charset", Takes::Value),
        ("--filelimit", Takes::Value),
        ("--timefmt", Takes::Value),
        ("--sort", Takes::Value),
    ]],
    denied: &[&[
        ("-o", WRITES_A_FILE),
        ("-l", FOLLOWS_LINKS),
        ("-R", "writes an index file into every directory"),
        ("--fromfile", UNCHECKED_NAMES),
    ]],
    numbers: false,
    style: Style::Separate,
};

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
        ("--sort", Takes::Value),
        ("-V", Takes::No),
        ("--version-sort", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::No),
        ("--check", Takes::Attached),
        ("--debug", Takes::No),
        ("-k", Takes::Value),
        ("--key", Takes::Value),
        ("-m", Takes::No),
        ("--merge", Takes::No),
        ("-s", Takes::No),
        ("--stable", Takes::No),
        ("-S", Takes::Value),
        ("--buffer-size", Takes::Value),
        ("-t", Takes::Value),
        ("--field-separator", Takes::Value),
        ("--parallel", Takes::Value),
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
    ]],
    numbers: false,
    style: Style::Gnu,
};

const UNIQ: Spec = Spec {
    opts: &[&[
        ("-c", Takes::No),
        ("--count", Takes::No),
        ("-d", Takes::No),
        ("--repeated", Takes::No),
        ("-D", Takes::No),
        ("--all-repeated", Takes::Attached),
        ("--group", Takes::Attached),
        ("-u", Takes::No),
        ("--unique", Takes::No),
        ("-i", Takes::No),
        ("--ignore-case", Takes::No),
        ("-z", Takes::No),
        ("--zero-terminated", Takes::No),
        ("-f", Takes::Value),
        ("--skip-fields", Takes::Value),
        ("-s", Takes::Value),
        ("--skip-chars", Takes::Value),
        ("-w", Takes::Value),
        ("--check-chars", Takes::Value),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
};

const CUT: Spec = Spec {
    opts: &[&[
        ("-b", Takes::Value),
        ("--bytes", Takes::Value),
        ("-c", Takes::Value),
        ("--characters", Takes::Value),
        ("-d", Takes::Value),
        ("--delimiter", Takes::Value),
        ("-f", Takes::Value),
        ("--fields", Takes::Value),
        ("-n", Takes::No),
        ("--complement", Takes::No),
        ("-s", Takes::No),
        ("--only-delimited", Takes::No),
        ("--output-delimiter", Takes::Value),
        ("-z", Takes::No),
        ("--zero-terminated", Takes::No),
    ]],
    denied: &[],
    numbers: false,
    style: Style::Gnu,
};

const DIFF: Spec = Spec {
    opts: &[&[
        ("--normal", Takes::No),
        ("-q", Takes::No),
        ("--brief", Takes::No),
        ("-s", Takes::No),
        ("--report-identical-files", Takes::No),
        ("-c", Takes::No),
        ("-C", Takes::Value),
        ("--context", Takes::Attached),
        ("-u", Takes::No),
        ("-U", Takes::Value),
        ("--unified", Takes::Attached),
        ("-e", Takes::No),
        ("--ed", Takes::No),
        ("-n", Takes::No),
        ("--rcs", Takes::No),
        ("-y", Takes::No),
        ("--side-by-side", Takes::No),
        ("-W", Takes::Value),
        ("--width", Takes::Value),
        ("--left-column", Takes::No),
        ("--suppress-common-lines", Takes::No),
        ("-p", Takes::No),
        ("--show-c-function", Takes::No),
        ("-F", Takes::Value),
        ("--show-function-line", Takes::Value),
        ("--label", Takes::Value),
        ("-t", Takes::No),
        ("--expand-tabs", Takes::No),
        ("-T", Takes::No),
        ("--initial-tab", Takes::No),
        ("--tabsize", Takes::Value),
        ("--suppress-blank-empty", Takes::No),
        ("--no-dereference", Takes::No),
        ("-N", Takes::No),
        ("--new-file", Takes::No),
        ("--unidirectional-new-file", Takes::No),
        ("--ignore-file-name-case", Takes::No),
        ("--no-ignore-file-name-case", Takes::No),
        ("-x", Takes::Value),
        ("--exclude", Takes::Value),
        ("-X", Takes::Path(Use::Read)),
        ("--exclude-from", Takes::Path(Use::Read)),
        ("-S", Takes::Value),
        ("--starting-file", Takes::Value),
        ("--from-file", Takes::Path(Use::ReadFileOnly)),
        ("--to-file", Takes::Path(Use::ReadFileOnly)),
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
        ("-I", Takes::Value),
        ("--ignore-matching-lines", Takes::Value),
        ("-a", Takes::No),
        ("--text", Takes::No),
        ("--strip-trailing-cr", Takes::No),
        ("-D", Takes::Value),
        ("--ifdef", Takes::Value),
        ("--old-group-format", Takes::Value),
        ("--new-group-format", Takes::Value),
        ("--changed-group-format", Takes::Value),
        ("--unchanged-group-format", Takes::Value),
        ("--line-format", Takes::Value),
        ("--old-line-format", Takes::Value),
        ("--new-line-format", Takes::Value),
        ("--unchanged-line-format", Takes::Value),
        ("-d", Takes::No),
        ("--minimal", Takes::No),
        ("--horizon-lines", Takes::Value),
        ("--speed-large-files", Takes::No),
        ("--color", Takes::Attached),
        ("--palette", Takes::Value),
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
};

/// `find`'s options before its start points.
const FIND_LEADING: &[&str] = &["-H", "-P"];

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
        ("-name", Takes::Value),
        ("-iname", Takes::Value),
        ("-path", Takes::Value),
        ("-ipath", Takes::Value),
        ("-wholename", Takes::Value),
        ("-iwholename", Takes::Value),
        ("-regex", Takes::Value),
        ("-iregex", Takes::Value),
        ("-regextype", Takes::Value),
        ("-lname", Takes::Value),
        ("-ilname", Takes::Value),
        ("-type", Takes::Value),
        ("-xtype", Takes::Value),
        ("-size", Takes::Value),
        ("-mtime", Takes::Value),
        ("-mmin", Takes::Value),
        ("-atime", Takes::Value),
        ("-amin", Takes::Value),
        ("-ctime", Takes::Value),
        ("-cmin", Takes::Value),
        ("-used", Takes::Value),
        ("-perm", Takes::Value),
        ("-user", Takes::Value),
        ("-group", Takes::Value),
        ("-uid", Takes::Value),
        ("-gid", Takes::Value),
        ("-links", Takes::Value),
        ("-inum", Takes::Value),
        ("-maxdepth", Takes::Value),
        ("-mindepth", Takes::Value),
        ("-fstype", Takes::Value),
        ("-printf", Takes::Value),
        ("-newer", Takes::Path(Use::Look)),
        ("-anewer", Takes::Path(Use::Look)),
        ("-cnewer", Takes::Path(Use::Look)),
        ("-samefile", Takes::Path(Use::Look)),
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
        ("-files0-from", UNCHECKED_NAMES),
    ]],
    numbers: false,
    style: Style::Git,
};

/// `find [-H|-P] [start...] [expression]`: start points are the words
/// before the first that starts with `-` or is `(` or `!`; each is a path
/// (a `)` or `,` there is refused). Every word of the expression must be a primary of the
/// table, with its argument.
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
        let (primary, takes) = FIND_EXPRESSION
            .find(word)
            .ok_or_else(|| FIND_EXPRESSION.refuse("find", word))?;
        if takes == Takes::No {
            continue;
        }
        let value = words.next().ok_or_else(|| Refusal::MissingValue {
            cmd: "find".to_owned(),
            flag: primary.to_owned(),
        })?;
        if let Takes::Path(using) = takes {
            place.check(value, using)?;
        }
    }
    Ok(())
}
