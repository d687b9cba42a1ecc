//! The read-only command analyser against real projects in temporary
//! directories: a table of lines it must accept (and how it renders them)
//! and lines it must refuse (each with its reason), git repositories with
//! and without configuration that names a program, and property tests:
//! accepted lines render safely and re-parse to the same plan, the
//! tokenizer splits words as `/bin/sh` does, and no input panics.
//! ADR 0025.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use dashfloat::tools::{Analyser, EnvSetting, Verdict, analyse, parse};

use dashfloat::bounds::{ANALYSER_MAX_FILE_BYTES, ANALYSER_MAX_LINE_BYTES, ANALYSER_RUN_ENV};
use nix::sys::stat::Mode;

use crate::{Rng, env_or, support};

/// What a line must come to.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Accepted.
    Runs,
    /// Accepted, and rendered as this.
    Renders(&'static str),
    /// Asked about, the reason containing this.
    Asks(&'static str),
    /// A validation error, the reason containing this.
    Invalid(&'static str),
}

use Expect::{Asks, Invalid, Renders, Runs};

/// A project in a temporary directory:
///
/// ```text
/// base/root/            the project, a git repository (.git/ with a plain config)
///   README.md notes.txt patterns.txt src/{lib,main}.rs sub/inner.txt
///   big.log             11 MiB, sparse: over the size cap
///   fifo                a named pipe
///   link-in -> src      a link that stays inside
///   link-out -> base/outside/secret.txt
/// base/outside/secret.txt
/// base/home/.gitconfig  the global git config the analyser is given
/// ```
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    global: PathBuf,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        let home = base.join("home");
        for d in [&root, &outside, &home] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        let project = Project {
            _dir: dir,
            root,
            outside,
            global: home.join(".gitconfig"),
        };
        project.write("README.md", "hello\n");
        project.write("notes.txt", "b:2\na:1\na:1\n");
        project.write("patterns.txt", "hello\n");
        project.write("src/lib.rs", "pub fn f() {}\n");
        project.write("src/main.rs", "fn main() {}\n");
        project.write("sub/inner.txt", "inner\n");
        project.write(".git/HEAD", "ref: refs/heads/main\n");
        project.write(
            ".git/config",
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
        );
        fs::create_dir_all(project.root.join(".git/objects")).unwrap();
        fs::create_dir_all(project.root.join(".git/refs/heads")).unwrap();
        fs::write(&project.global, "[user]\n\tname = Someone\n").unwrap();
        let big = fs::File::create(project.root.join("big.log")).unwrap();
        big.set_len(11 * 1024 * 1024).unwrap();
        nix::unistd::mkfifo(&project.root.join("fifo"), Mode::S_IRWXU).unwrap();
        symlink("src", project.root.join("link-in")).unwrap();
        symlink(
            project.outside.join("secret.txt"),
            project.root.join("link-out"),
        )
        .unwrap();
        project
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    fn analyser(&self) -> Analyser {
        Analyser::new(&self.root).with_command_env(support::command_env(&self.global))
    }

    fn analyse(&self, line: &str) -> Verdict {
        self.analyser().analyse(".", line)
    }
}

/// Checks every case, and reports every one that failed.
fn check_all<'a>(cases: impl IntoIterator<Item = (&'a str, Verdict, Expect)>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for (line, verdict, expect) in cases {
        count += 1;
        let ok = match (&expect, &verdict) {
            (Runs, Verdict::ReadOnly { .. }) => true,
            (Renders(want), Verdict::ReadOnly { rendered }) => rendered == want,
            (Asks(why), Verdict::Ask { reason }) | (Invalid(why), Verdict::Invalid { reason }) => {
                reason.contains(why)
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{line:?}: expected {expect:?}, got {verdict:?}"));
        }
    }
    assert!(count > 0);
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Lines at the project root, and what each must come to.
const CASES: &[(&str, Expect)] = &[
    // Listing, reading, searching inside the project.
    ("ls", Renders("ls")),
    ("ls -la", Runs),
    ("ls -la src", Runs),
    ("ls -R --color=auto src sub", Runs),
    ("ls -- src", Runs),
    ("ls link-in", Runs),
    ("ls sub/../src", Runs),
    ("ls -l nothere", Runs),
    ("cat README.md", Runs),
    ("cat -n src/lib.rs src/main.rs", Runs),
    ("cat src/lib.rs | head -5", Runs),
    ("cat - ", Renders("cat -")),
    ("head -n 20 README.md", Runs),
    ("head -20 README.md", Runs),
    ("tail -n5 notes.txt", Runs),
    ("tail -c 100 notes.txt", Runs),
    ("wc -l src/lib.rs src/main.rs", Runs),
    ("grep -rn foo src", Runs),
    ("grep -rn 'fn main' src", Renders("grep -rn 'fn main' src")),
    ("grep -e foo -e bar README.md", Runs),
    ("grep -c TODO notes.txt", Runs),
    ("grep -f patterns.txt README.md", Runs),
    (
        "grep -rn --include='*.rs' foo src",
        Renders("grep -rn '--include=*.rs' foo src"),
    ),
    ("grep --color=always -i hello README.md", Runs),
    ("grep -3 hello README.md", Runs),
    ("grep -r foo .", Runs),
    ("grep -r foo", Runs),
    ("grep foo src", Runs),
    ("grep -- -n README.md", Runs),
    ("rg --no-ignore -n foo src", Runs),
    ("rg -u --files src", Runs),
    ("rg --unrestricted -g '*.rs' -t rust foo", Runs),
    ("rg --no-ignore -e foo -e bar", Runs),
    // rg reads ignore files as it walks, through links and FIFOs alike.
    ("rg -n foo src", Asks("give rg --no-ignore")),
    ("rg foo README.md", Asks("give rg --no-ignore")),
    (
        "tree --gitignore",
        Asks("reads .gitignore files as it walks"),
    ),
    // `-f=x` is `=x` to getopt and `x` to ripgrep.
    (
        "rg --no-ignore -f=../outside/secret.txt -e y README.md",
        Asks("joins its value with `=`"),
    ),
    (
        "grep -f=patterns.txt x notes.txt",
        Asks("joins its value with `=`"),
    ),
    // tail's old form: `-cf` is "follow", not a size.
    ("tail -cf README.md", Asks("must be a number")),
    (
        "sort -S 1K notes.txt",
        Asks("spills to many temporary files"),
    ),
    ("find . -name '*.rs'", Renders("find . -name '*.rs'")),
    ("find src -type f -name '*.rs' -print", Runs),
    (
        "find . \\( -name a -o -name b \\) -print",
        Renders("find . '(' -name a -o -name b ')' -print"),
    ),
    ("find . -maxdepth 2 -newer README.md", Runs),
    ("find", Runs),
    ("find -H . -not -name x", Runs),
    ("pwd", Runs),
    ("pwd -P", Runs),
    ("echo hello world", Runs),
    ("echo 'a|b' \"c d\"", Renders("echo 'a|b' 'c d'")),
    ("echo \"it's\"", Renders("echo 'it'\"'\"'s'")),
    ("echo \"a\\\"b\" 'c\\d'", Renders("echo 'a\"b' 'c\\d'")),
    ("echo a=b", Renders("echo a=b")),
    (
        "echo HEAD~1 x@y %s a:b",
        Renders("echo 'HEAD~1' x@y %s a:b"),
    ),
    ("echo ''", Renders("echo ''")),
    ("echo café", Renders("echo 'café'")),
    ("file README.md src", Runs),
    ("stat -c %s README.md", Runs),
    ("du -sh src", Runs),
    ("tree -L 2 src", Runs),
    ("sort notes.txt | uniq -c", Runs),
    ("sort -k2 -t, -n notes.txt", Runs),
    ("uniq notes.txt", Runs),
    ("cut -d: -f1 notes.txt", Runs),
    ("diff README.md notes.txt", Runs),
    ("diff -u README.md notes.txt", Runs),
    ("diff --to-file=README.md notes.txt patterns.txt", Runs),
    // git, in a repository whose configuration runs nothing.
    ("git status", Runs),
    ("git status --short -uno", Runs),
    ("git status -sb -- src", Runs),
    // `none` would undo the run environment's diff.ignoreSubmodules=all.
    (
        "git status --ignore-submodules=none",
        Asks("`git status --ignore-submodules` is not an option"),
    ),
    ("git diff --ignore-submodules", Asks("is not an option")),
    // git runs `git -C .. ls-files` for it: the repository above, under a
    // configuration never read.
    (
        "git rev-parse --show-superproject-working-tree",
        Asks("is not an option"),
    ),
    ("git log -pS foo", Asks("`git log -pS` is not an option")),
    ("git log --oneline -n 5", Runs),
    (
        "git log -5 --format='%h %s'",
        Renders("git log -5 '--format=%h %s'"),
    ),
    ("git log --since=2.weeks -- src", Runs),
    ("git log HEAD~2..HEAD --stat", Runs),
    ("git log 'HEAD@{1}'", Renders("git log 'HEAD@{1}'")),
    ("git log -S foo -p", Runs),
    ("git log -L1,5:README.md", Runs),
    ("git diff HEAD~1 -- src/lib.rs", Runs),
    ("git diff --cached --stat", Runs),
    ("git show HEAD:README.md", Runs),
    ("git show --stat HEAD", Runs),
    ("git branch", Runs),
    ("git branch -a -vv", Runs),
    ("git branch --list 'feat*'", Runs),
    ("git branch --contains", Runs),
    ("git branch --merged main", Runs),
    ("git rev-parse --show-toplevel", Runs),
    ("git rev-parse --abbrev-ref HEAD", Runs),
    ("git ls-files -- src", Runs),
    ("git ls-files --others --exclude-standard", Runs),
    ("git blame -L 1,5 README.md", Runs),
    ("git -C src log --oneline", Runs),
    ("git --no-pager log -1", Runs),
    // Operators, quoting, escapes.
    (
        "ls && cat README.md || echo none; pwd",
        Renders("ls && cat README.md || echo none; pwd"),
    ),
    ("ls&&pwd", Renders("ls && pwd")),
    ("ls;", Renders("ls")),
    ("ls | sort | uniq", Runs),
    (
        "grep foo\\ bar README.md",
        Renders("grep 'foo bar' README.md"),
    ),
    ("cat \"README.md\"", Renders("cat README.md")),
    ("cat RE'AD'ME.md", Renders("cat README.md")),
    ("'ls' -l", Renders("ls -l")),
    ("echo \\$HOME", Renders("echo '$HOME'")),
    (
        "echo '$(id)' '`id`' '*'",
        Renders("echo '$(id)' '`id`' '*'"),
    ),
    // Outside the subset: asked about.
    ("ls > out.txt", Asks("`>` redirects output to a file")),
    ("ls >> out.txt", Asks("`>>` appends output to a file")),
    ("ls 2>&1", Asks("`>&` redirects a stream")),
    ("ls 2>/dev/null", Asks("`>` redirects output to a file")),
    ("ls >| out.txt", Asks("`>|` overwrites a file")),
    ("cat < README.md", Asks("`<` redirects input from a file")),
    ("cat <<EOF", Asks("`<<` starts a here-document")),
    ("cat <> README.md", Asks("`<>` opens a file for writing")),
    ("diff <(ls) README.md", Asks("`<(…)` runs a command")),
    ("echo $(id)", Asks("`$(…)` runs a command")),
    ("echo $((1+1))", Asks("`$(…)` runs a command")),
    ("echo `id`", Asks("a backquote (`) runs a command")),
    ("echo $HOME", Asks("`$` expands a variable")),
    ("echo \"$HOME\"", Asks("`$` inside double quotes")),
    ("echo \"`id`\"", Asks("a backquote (`) runs a command")),
    ("echo ${HOME}", Asks("`${…}` expands a variable")),
    ("echo $'x'", Asks("`$'…'` quoting")),
    ("ls &", Asks("`&` runs a command in the background")),
    ("ls & pwd", Asks("`&` runs a command in the background")),
    ("ls |& cat", Asks("`|&` pipes error output")),
    ("(ls)", Asks("`(` is shell syntax")),
    ("ls && (ls)", Asks("`(` is shell syntax")),
    ("f() { ls; }", Asks("`(` is shell syntax")),
    ("f ( ) { ls; }", Asks("`(` is shell syntax")),
    ("if (ls); then ls; fi", Asks("`(` is shell syntax")),
    ("case a in (a) ls;; esac", Asks("`(` is shell syntax")),
    ("a=(1 2)", Asks("`(` is shell syntax")),
    ("ls !(x)", Asks("`(` is shell syntax")),
    ("ls @(x|y)", Asks("`(` is shell syntax")),
    ("{ ls; }", Asks("`{` groups commands")),
    ("echo {a,b}", Asks("`{` groups commands or expands braces")),
    ("ls *.rs", Asks("`*` is a glob pattern")),
    ("cat ?EADME.md", Asks("`?` is a glob pattern")),
    ("ls [ab]", Asks("`[` is a glob pattern")),
    ("cat ~/.ssh/id_rsa", Asks("`~` expands to a home directory")),
    ("ls --color=~", Asks("`~` expands to a home directory")),
    ("ls # list", Asks("`#` starts a comment")),
    ("ls\npwd", Asks("a newline starts another command")),
    ("echo 'a\nb'", Asks("a newline starts another command")),
    ("ls\u{7}", Asks("control character (U+0007)")),
    ("FOO=1 ls", Asks("`FOO=1` sets a variable")),
    ("ls \\", Asks("a `\\` ends the line")),
    // Not a command line the shell would run.
    ("echo 'abc", Invalid("the single quote is never closed")),
    ("echo \"abc", Invalid("the double quote is never closed")),
    ("| ls", Invalid("`|` has no command on one side")),
    ("ls |", Invalid("`|` has no command on one side")),
    ("ls &&", Invalid("`&&` has no command on one side")),
    ("ls || ", Invalid("`||` has no command on one side")),
    (";", Invalid("`;` has no command on one side")),
    ("ls ;; pwd", Invalid("`;` has no command on one side")),
    (
        "python3 -m calc.stats mode(values)",
        Invalid("`(` cannot follow `mode`"),
    ),
    ("echo (a)", Invalid("`(` cannot follow `echo`")),
    ("ls 'x' (y)", Invalid("`(` cannot follow `x`")),
    ("f(x)", Invalid("`(` cannot follow `f`")),
    ("   ", Invalid("the command line is empty")),
    ("", Invalid("the command line is empty")),
    // Commands that are not read-only, or not known to be.
    ("rm -rf src", Asks("`rm` is not a read-only command")),
    ("sh -c ls", Asks("`sh` is not a read-only command")),
    ("python3 x.py", Asks("`python3` is not a read-only command")),
    ("sudo ls", Asks("`sudo` is not a read-only command")),
    ("env ls", Asks("`env` is not a read-only command")),
    ("cd src", Asks("`cd` is not a read-only command")),
    ("/bin/ls", Asks("`/bin/ls` is not a read-only command")),
    ("./ls", Asks("`./ls` is not a read-only command")),
    ("ls | xargs rm", Asks("`xargs` is not a read-only command")),
    (
        "cat README.md && rm x",
        Asks("`rm` is not a read-only command"),
    ),
    ("echo ok | sh", Asks("`sh` is not a read-only command")),
    ("'FOO=1' ls", Asks("`FOO=1` is not a read-only command")),
    (
        "git commit -m x",
        Asks("`git commit` is not a read-only command"),
    ),
    ("git push", Asks("`git push` is not a read-only command")),
    (
        "git config core.pager less",
        Asks("`git config` is not a read-only command"),
    ),
    ("git", Asks("`git`: no subcommand")),
    // Options that write, run programs or leave the project.
    (
        "git log --output=x",
        Asks("`git log --output` writes a file"),
    ),
    (
        "git diff --ext-diff",
        Asks("`git diff --ext-diff` runs an external diff program"),
    ),
    (
        "git diff --no-index a b",
        Asks("compares files outside the repository"),
    ),
    (
        "git -c core.pager=less log",
        Asks("`git -c` sets configuration"),
    ),
    (
        "git --git-dir=/tmp/x log",
        Asks("`git --git-dir` points git at another repository"),
    ),
    (
        "git --work-tree=/ status",
        Asks("`git --work-tree` points git at another"),
    ),
    ("git -p log", Asks("`git -p` starts a pager")),
    (
        "git log --show-signature",
        Asks("verifies signatures by running gpg"),
    ),
    (
        "git log '--format=%G?'",
        Asks("verifies signatures by running gpg"),
    ),
    (
        "git log --pretty=format:%GS",
        Asks("verifies signatures by running gpg"),
    ),
    // git allows a modifier between `%` and the placeholder.
    (
        "git log '--format=%+G?'",
        Asks("verifies signatures by running gpg"),
    ),
    (
        "git log '--format=% GK'",
        Asks("verifies signatures by running gpg"),
    ),
    ("git log '--format=%%G'", Runs),
    ("git blame --reverse README.md", Runs),
    (
        "git branch -d main",
        Asks("`git branch -d` deletes a branch"),
    ),
    (
        "git branch -D main",
        Asks("`git branch -D` deletes a branch"),
    ),
    (
        "git branch -m a b",
        Asks("`git branch -m` renames a branch"),
    ),
    (
        "git branch newbranch",
        Asks("a name without --list creates a branch"),
    ),
    (
        "git branch --set-upstream-to=origin/main",
        Asks("changes a branch's upstream"),
    ),
    (
        "git status --porcelain --foo",
        Asks("`git status --foo` is not an option"),
    ),
    (
        "git ls-files --recurse-submodules",
        Asks("runs git in submodules"),
    ),
    // git lays the tree's entries over the index in memory, and reads
    // through them (a linked folder's files, a gitlink's repository)
    // where the index the analyser looked at names nothing.
    (
        "git ls-files -m --with-tree=HEAD",
        Asks("`git ls-files --with-tree` is not an option"),
    ),
    ("git log -O order.txt", Asks("reads an order file")),
    ("git log -n", Asks("`git log -n` needs a value")),
    // git's own arities: these options take no separate word, so the word
    // after them is an operand and is checked (`git diff -U x a` would
    // compare `x` outside the repository with --no-index).
    (
        "git diff -U /etc/passwd README.md",
        Asks("escapes the working directory"),
    ),
    (
        "git diff --unified ../outside/secret.txt README.md",
        Asks("escapes"),
    ),
    ("git log --format ../outside/secret.txt", Asks("escapes")),
    (
        "git log --min-parents ../outside/secret.txt",
        Asks("escapes"),
    ),
    (
        "git rev-parse --glob ../outside/secret.txt",
        Asks("escapes"),
    ),
    ("git diff -U5 --unified=3", Runs),
    ("git log --format=%h --min-parents=2", Runs),
    ("git -C /tmp log", Asks("escapes the working directory")),
    (
        "git -C ../outside log",
        Asks("escapes the working directory"),
    ),
    (
        "git -C README.md log",
        Asks("`README.md` is not a directory"),
    ),
    (
        "git blame --contents ../outside/secret.txt README.md",
        Asks("escapes"),
    ),
    (
        "git show ../outside/secret.txt",
        Asks("escapes the working directory"),
    ),
    (
        "git diff /etc/passwd README.md",
        Asks("escapes the working directory"),
    ),
    (
        "find . -exec rm '{}' +",
        Asks("`find -exec` runs another program"),
    ),
    (
        "find . -execdir ls ';'",
        Asks("`find -execdir` runs another program"),
    ),
    ("find . -delete", Asks("`find -delete` deletes files")),
    (
        "find . -fprint out.txt",
        Asks("`find -fprint` writes a file"),
    ),
    ("find -L .", Asks("`find -L` follows symbolic links")),
    (
        "find . -follow",
        Asks("`find -follow` follows symbolic links"),
    ),
    // Whether a link's target exists, and what it is, may be a fact
    // about a path outside the project.
    (
        "find . -maxdepth 1 -xtype f",
        Asks("`find -xtype` looks at what a symbolic link leads to"),
    ),
    (
        "find . -type l -printf '%Y %s %p\\n'",
        Asks("a `%Y` directive looks at what a symbolic link leads to"),
    ),
    (
        "find . -printf '%-4Y'",
        Asks("a `%Y` directive looks at what a symbolic link leads to"),
    ),
    ("find . -printf '%y %TY %p %l\\n'", Runs),
    ("find / -name x", Asks("escapes the working directory")),
    ("find .. -name x", Asks("escapes the working directory")),
    (
        "find . -newer ../outside/secret.txt",
        Asks("escapes the working directory"),
    ),
    ("find . -name", Asks("`find -name` needs a value")),
    (
        "find . -name x stray",
        Asks("`find stray` is not an option"),
    ),
    ("sort -o out.txt notes.txt", Asks("`sort -o` writes a file")),
    (
        "sort --output=out.txt notes.txt",
        Asks("`sort --output` writes a file"),
    ),
    ("sort -T /tmp notes.txt", Asks("writes temporary files")),
    (
        "sort --compress-program=gzip notes.txt",
        Asks("runs another program"),
    ),
    (
        "sort -rno out.txt notes.txt",
        Asks("`sort -o` writes a file"),
    ),
    (
        "uniq notes.txt out.txt",
        Asks("a second operand is a file uniq writes"),
    ),
    ("tree -o out.txt", Asks("`tree -o` writes a file")),
    // tree's -L/-P/-I take the next word and read on through the cluster:
    // `-Io x f` is `-I x -o f`.
    ("tree -Io x README.md", Asks("`tree -Io`")),
    ("tree -L3o README.md", Asks("`tree -L3o`")),
    ("tree -ad -L 2", Runs),
    (
        "find , -ls",
        Asks("`,` before the expression is read by find as a start point"),
    ),
    (
        "find ')' -ls",
        Asks("`)` before the expression is read by find as a start point"),
    ),
    ("tree -l", Asks("`tree -l` follows symbolic links")),
    ("grep -R foo .", Asks("`grep -R` follows symbolic links")),
    ("grep -D read foo README.md", Asks("reads devices")),
    ("rg --pre cat foo", Asks("`rg --pre` runs another program")),
    ("rg -z foo", Asks("runs decompression programs")),
    ("rg -L foo", Asks("`rg -L` follows symbolic links")),
    (
        "tail -f notes.txt",
        Asks("keeps running until the time limit"),
    ),
    ("tail -nf notes.txt", Asks("must be a number")),
    ("tail +1f notes.txt", Asks("tail's old option form")),
    ("tail -- +2 notes.txt", Asks("tail's old option form")),
    ("ls -L link-out", Asks("`ls -L` follows symbolic links")),
    ("ls -laL", Asks("`ls -L` follows symbolic links")),
    ("ls --dereference", Asks("follows symbolic links")),
    (
        "wc --files0-from=list",
        Asks("reads file names from a file"),
    ),
    ("file -C", Asks("`file -C` writes a file")),
    ("file -z README.md", Asks("may run decompression programs")),
    ("file -f list.txt", Asks("reads file names from a file")),
    ("du -L", Asks("`du -L` follows symbolic links")),
    ("diff -r src sub", Asks("`diff -r` compares directories")),
    ("diff src sub", Asks("`src` is a directory")),
    (
        "diff -l README.md notes.txt",
        Asks("`diff -l` runs another program"),
    ),
    (
        "head --foo README.md",
        Asks("`head --foo` is not an option"),
    ),
    ("head --lines", Asks("`head --lines` needs a value")),
    ("cat -Z README.md", Asks("`cat -Z` is not an option")),
    (
        "cat --number=3 README.md",
        Asks("`cat --number` takes no value"),
    ),
    ("pwd extra", Asks("`pwd`: takes no operands")),
    (
        "ls --all-the-things",
        Asks("`ls --all-the-things` is not an option"),
    ),
    ("cat --num README.md", Asks("`cat --num` is not an option")),
    // Paths: outside, through links, too big, not regular files.
    (
        "cat /etc/passwd",
        Asks("path escapes the working directory"),
    ),
    (
        "cat ../outside/secret.txt",
        Asks("path escapes the working directory"),
    ),
    ("cat link-out", Asks("path escapes the working directory")),
    (
        "cat link-in/../../outside/secret.txt",
        Asks("climbs out of a symbolic link"),
    ),
    (
        "cat link-in/../README.md",
        Asks("climbs out of a symbolic link"),
    ),
    (
        "cat src/../../outside/secret.txt",
        Asks("path escapes the working directory"),
    ),
    (
        "cat nothere/../README.md",
        Asks("follows a name that is not a directory"),
    ),
    (
        "cat README.md/../notes.txt",
        Asks("follows a name that is not a directory"),
    ),
    ("cat ''", Asks("path is empty")),
    (
        "cat big.log",
        Asks("`big.log` is 11.0 MiB, over the 10.0 MiB cap"),
    ),
    ("grep foo big.log", Asks("over the 10.0 MiB cap")),
    ("head -1 big.log", Asks("over the 10.0 MiB cap")),
    ("sort big.log", Asks("over the 10.0 MiB cap")),
    ("grep -f big.log README.md", Asks("over the 10.0 MiB cap")),
    ("ls -l big.log fifo", Runs),
    ("cat fifo", Asks("`fifo` is not a regular file")),
    ("grep foo fifo", Asks("`fifo` is not a regular file")),
    (
        "cat src/lib.rs ../outside/secret.txt",
        Asks("`../outside/secret.txt`"),
    ),
    ("echo ok && cat link-out", Asks("`link-out`")),
];

/// A link to a folder outside the project is no way out for a path, and
/// makes the git lines that read attributes ask: git reads a
/// `.gitattributes` through it for the history's paths beneath it.
#[test]
fn a_link_to_a_folder_outside_the_project() {
    let project = Project::new();
    symlink(&project.outside, project.root.join("dir-out")).unwrap();
    let outside = "`dir-out` is a link to a folder outside the project";
    check_all(
        [
            ("ls dir-out/", Asks("path escapes the working directory")),
            (
                "cat dir-out/secret.txt",
                Asks("path escapes the working directory"),
            ),
            ("ls -L dir-out", Asks("`ls -L` follows symbolic links")),
            ("git log -p", Asks(outside)),
            ("git show HEAD", Asks(outside)),
            ("git diff --stat", Asks(outside)),
            ("git blame README.md", Asks(outside)),
            ("git status --short", Asks(outside)),
            ("git ls-files -s", Runs),
        ]
        .map(|(line, expect)| (line, project.analyse(line), expect)),
    );
}

#[test]
fn the_table() {
    let project = Project::new();
    check_all(
        CASES
            .iter()
            .map(|&(line, expect)| (line, project.analyse(line), expect)),
    );
}

/// Repository configuration, in `.git/config`, and what `git log` comes
/// to under it.
const GIT_CONFIG_CASES: &[(&str, Expect)] = &[
    // Attributes come from SHA-1's empty tree, which names nothing in a
    // SHA-256 repository: git would read them from the files.
    (
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n",
        Asks("SHA-256"),
    ),
    (
        "[core]\n\tpager = less\n",
        Asks("the repository's config .git/config names a program (core.pager)"),
    ),
    (
        "[Core]\n\tPager = less\n",
        Asks("names a program (core.pager)"),
    ),
    (
        "[core] pager = less\n",
        Asks("names a program (core.pager)"),
    ),
    (
        "[core]\n\tpager = \"less -R\" # comment\n",
        Asks("(core.pager)"),
    ),
    ("[core]\n\tpager\n", Asks("(core.pager)")),
    (
        "[core]\n\tfsmonitor = true\n",
        Asks("names a program (core.fsmonitor)"),
    ),
    (
        "[core]\n\tfsmonitor = .git/fsmonitor.sh\n",
        Asks("(core.fsmonitor)"),
    ),
    ("[core]\n\tfsmonitor = false\n", Runs),
    (
        "[core]\n\thooksPath = .githooks\n",
        Asks("names a directory of hooks (core.hookspath)"),
    ),
    (
        "[core]\n\tworktree = /tmp\n",
        Asks("points git at another work tree (core.worktree)"),
    ),
    (
        "[diff]\n\texternal = difftool.sh\n",
        Asks("names a program (diff.external)"),
    ),
    (
        "[diff \"img\"]\n\ttextconv = exif\n",
        Asks("names a program (diff.img.textconv)"),
    ),
    (
        "[diff \"x\"]\n\tcommand = foo\n",
        Asks("names a program (diff.x.command)"),
    ),
    ("[diff \"x\"]\n\tbinary = true\n", Runs),
    (
        "[filter \"lfs\"]\n\tsmudge = git-lfs smudge\n",
        Asks("names a program (filter.lfs.smudge)"),
    ),
    (
        "[filter \"lfs\"]\n\tprocess = git-lfs filter-process\n",
        Asks("(filter.lfs.process)"),
    ),
    (
        "[pager]\n\tlog = less -R\n",
        Asks("names a program (pager.log)"),
    ),
    ("[pager]\n\tbranch = false\n", Runs),
    (
        "[include]\n\tpath = other.cfg\n",
        Asks("includes another config file, which may be outside the project (include.path)"),
    ),
    (
        "[includeIf \"gitdir:~/work/\"]\n\tpath = w.cfg\n",
        Asks("(includeif.gitdir:~/work/.path)"),
    ),
    (
        "[log]\n\tshowSignature = true\n",
        Asks("verify signatures by running gpg (log.showsignature)"),
    ),
    ("[log]\n\tshowSignature\n", Asks("(log.showsignature)")),
    ("[log]\n\tshowSignature = false\n", Runs),
    (
        "[pretty]\n\tsig = format:%h %G?\n",
        Asks("running gpg (pretty.sig)"),
    ),
    ("[pretty]\n\tshort = format:%h %s\n", Runs),
    (
        "[pretty]\n\tsig = format:%h %-G?\n",
        Asks("running gpg (pretty.sig)"),
    ),
    ("[gpg]\n\tprogram = ./sign.sh\n", Asks("(gpg.program)")),
    (
        "[gpg \"ssh\"]\n\tprogram = ./sign.sh\n",
        Asks("(gpg.ssh.program)"),
    ),
    (
        "[extensions]\n\tpartialClone = origin\n",
        Asks("fetch missing objects over the network (extensions.partialclone)"),
    ),
    (
        "[remote \"origin\"]\n\tpromisor = true\n",
        Asks("(remote.origin.promisor)"),
    ),
    (
        "[blame]\n\tignoreRevsFile = revs\n",
        Asks("names a file git blame reads"),
    ),
    (
        "[trace2]\n\tnormalTarget = /tmp/t\n",
        Asks("writes a trace file (trace2.normaltarget)"),
    ),
    (
        "[mailmap]\n\tfile = /etc/passwd\n",
        Asks("names a file git reads, which may be outside the project (mailmap.file)"),
    ),
    (
        "[diff]\n\torderFile = ../outside/secret.txt\n",
        Asks("(diff.orderfile)"),
    ),
    // A repository's own configuration names no file to read; the
    // person's may (`global_configuration_is_judged_too`).
    (
        "[core]\n\texcludesFile = ~/.gitignore_global\n",
        Asks("names a file git reads, which may be outside the project (core.excludesfile)"),
    ),
    (
        "[core]\n\tattributesFile = /etc/x\n",
        Asks("(core.attributesfile)"),
    ),
    // git 2.54 runs the hooks its configuration names.
    (
        "[hook \"linter\"]\n\tcommand = touch x\n\tevent = post-index-change\n",
        Asks("configures a hook, a program git runs (hook.linter.command)"),
    ),
    ("[hook]\n\tevent = x\n", Asks("(hook.event)")),
    ("[alias]\n\tst = !rm -rf /\n", Runs),
    ("[core]\n\teditor = vim\n\tsshCommand = ssh -i k\n", Runs),
    ("[credential]\n\thelper = store\n", Runs),
    (
        "[remote \"origin\"]\n\turl = https://example.com/x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        Runs,
    ),
    ("; comment\n# comment\n[core]\n\tbare = false\r\n", Runs),
    ("[user]\n\tname = A \\\n\t continued\n", Runs),
    // What git cannot read, it does not vouch for: its own error says so.
    (
        "[user]\n\tname = \"unterminated\n",
        Asks(
            "git does not vouch for a repository here (fatal: bad config line 2 in file .git/config)",
        ),
    ),
    ("garbage line\n", Asks("bad config line 1")),
    ("[core\n", Asks("bad config line 1")),
    ("[section \"sub\" x]\n", Asks("bad config line 1")),
];

#[test]
fn repository_configuration_that_names_a_program_asks() {
    let project = Project::new();
    check_all(GIT_CONFIG_CASES.iter().map(|&(config, expect)| {
        project.write(".git/config", config);
        (config, project.analyse("git log --oneline"), expect)
    }));
}

/// A repository that takes objects or refs from elsewhere would show
/// another repository's files (`git show <id>` of a secret there).
#[test]
fn a_repository_borrowing_objects_or_refs_from_outside_asks() {
    let alternates: fn(&Project) = |p| {
        p.write(
            ".git/objects/info/alternates",
            &format!("{}\n", p.outside.display()),
        );
    };
    let refs: fn(&Project) = |p| {
        fs::remove_dir_all(p.root.join(".git/refs")).unwrap();
        fs::create_dir_all(p.outside.join("refs/heads")).unwrap();
        symlink(p.outside.join("refs"), p.root.join(".git/refs")).unwrap();
    };
    let packed_refs: fn(&Project) = |p| {
        symlink(
            p.outside.join("secret.txt"),
            p.root.join(".git/packed-refs"),
        )
        .unwrap();
    };
    // A pack, or a fan-out folder of loose objects, of another repository.
    let pack_folder: fn(&Project) = |p| {
        fs::create_dir_all(p.outside.join("pack")).unwrap();
        symlink(p.outside.join("pack"), p.root.join(".git/objects/pack")).unwrap();
    };
    let pack: fn(&Project) = |p| {
        fs::create_dir_all(p.root.join(".git/objects/pack")).unwrap();
        let to = p.root.join(".git/objects/pack/pack-1.pack");
        symlink(p.outside.join("secret.txt"), to).unwrap();
    };
    let fan_out: fn(&Project) = |p| {
        symlink(&p.outside, p.root.join(".git/objects/3a")).unwrap();
    };
    let plants = [alternates, refs, packed_refs, pack_folder, pack, fan_out];
    for (n, plant) in plants.into_iter().enumerate() {
        let project = Project::new();
        plant(&project);
        match project.analyse("git show HEAD") {
            Verdict::Ask { reason } => assert!(
                reason.contains("takes objects or refs from outside the repository")
                    || reason.contains("is a link or a special file"),
                "{n}: {reason}"
            ),
            other => panic!("{n}: {other:?}"),
        }
    }
}

#[test]
fn global_configuration_is_judged_too() {
    let project = Project::new();
    fs::write(&project.global, "[core]\n\tpager = delta\n").unwrap();
    let why = format!(
        "the git config {} names a program (core.pager)",
        project.global.display()
    );
    match project.analyse("git status") {
        Verdict::Ask { reason } => assert!(reason.contains(&why), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Not for commands other than git.
    assert!(matches!(project.analyse("ls"), Verdict::ReadOnly { .. }));
    // A hook named in the person's own configuration runs as well (git
    // 2.54).
    fs::write(
        &project.global,
        "[hook \"fmt\"]\n\tevent = post-index-change\n\tcommand = cargo fmt\n",
    )
    .unwrap();
    match project.analyse("git diff") {
        Verdict::Ask { reason } => assert!(reason.contains("(hook.fmt.event)"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // The person's own configuration may name files git reads, and
    // include others, which git reads as it will when the line runs.
    let included = project.global.with_file_name("included.cfg");
    fs::write(
        &project.global,
        format!(
            "[core]\n\texcludesFile = ~/.gitignore_global\n[include]\n\tpath = {}\n",
            included.display()
        ),
    )
    .unwrap();
    fs::write(&included, "[user]\n\temail = a@example.com\n").unwrap();
    assert!(matches!(
        project.analyse("git status"),
        Verdict::ReadOnly { .. }
    ));
    fs::write(&included, "[diff]\n\texternal = difft\n").unwrap();
    let why = format!(
        "the git config {} names a program (diff.external)",
        included.display()
    );
    match project.analyse("git diff") {
        Verdict::Ask { reason } => assert!(reason.contains(&why), "{reason}"),
        other => panic!("{other:?}"),
    }
    // A global file that does not exist is no configuration.
    let analyser = Analyser::new(&project.root).with_command_env(support::command_env(
        &project.root.join("no/such/gitconfig"),
    ));
    assert!(matches!(
        analyser.analyse(".", "git status"),
        Verdict::ReadOnly { .. }
    ));
}

#[test]
fn repositories_git_would_not_take_as_checked() {
    let project = Project::new();
    let asks = |line: &str, why: &str| match project.analyse(line) {
        Verdict::Ask { reason } => assert!(reason.contains(why), "{line}: {reason}"),
        other => panic!("{line}: {other:?}"),
    };

    // A hook git status and git diff can run.
    project.write(".git/hooks/post-index-change", "#!/bin/sh\n");
    asks("git status", "post-index-change hook");
    fs::remove_file(project.root.join(".git/hooks/post-index-change")).unwrap();
    // Samples are not hooks.
    project.write(".git/hooks/post-index-change.sample", "#!/bin/sh\n");
    assert!(matches!(
        project.analyse("git status"),
        Verdict::ReadOnly { .. }
    ));

    // Submodules, whose configuration is elsewhere.
    project.write(".gitmodules", "[submodule \"x\"]\n\tpath = x\n");
    asks("git diff", "has submodules");
    fs::remove_file(project.root.join(".gitmodules")).unwrap();

    // A nested repository with its own configuration is the one git uses
    // below it.
    project.write("sub/.git/HEAD", "ref: refs/heads/main\n");
    project.write("sub/.git/config", "[core]\n\tpager = less\n");
    fs::create_dir_all(project.root.join("sub/.git/objects")).unwrap();
    fs::create_dir_all(project.root.join("sub/.git/refs")).unwrap();
    asks("git -C sub status", "(core.pager)");
    // From above, git status asks of the folder whether it holds a
    // repository, and looks where its `.git` leads; git log does not.
    asks("git status", "is a repository nested in the work tree");
    assert!(matches!(
        project.analyse("git log"),
        Verdict::ReadOnly { .. }
    ));

    // A directory that looks like a bare repository.
    project.write("bare/HEAD", "ref: refs/heads/main\n");
    project.write("bare/config", "[core]\n\tfsmonitor = ./x\n");
    fs::create_dir_all(project.root.join("bare/refs")).unwrap();
    asks("git -C bare log", "looks like a bare repository");

    // A `.git` that is not a repository: git would look above the project.
    fs::create_dir_all(project.root.join("empty/.git")).unwrap();
    asks("git -C empty log", "is not a repository git would use");
    // Nor is one whose HEAD git's own check refuses, though it has
    // `objects` and `refs`: git passed over it and read the repository
    // above the project (checked against git 2.47).
    for head in ["", "garbage\n", "ref: heads/main\n", "0123abc\n"] {
        project.write("badhead/.git/HEAD", head);
        fs::create_dir_all(project.root.join("badhead/.git/objects")).unwrap();
        fs::create_dir_all(project.root.join("badhead/.git/refs")).unwrap();
        asks("git -C badhead log", "is not a repository git would use");
    }
    project.write("badhead/.git/HEAD", &format!("{}\n", "a".repeat(40)));
    assert!(matches!(
        project.analyse("git -C badhead log"),
        Verdict::ReadOnly { .. }
    ));

    // A config that is a FIFO holds git until its time is up: asked, and
    // the git that waited is gone.
    fs::remove_file(project.root.join(".git/config")).unwrap();
    nix::unistd::mkfifo(&project.root.join(".git/config"), Mode::S_IRWXU).unwrap();
    asks("git log", "did not answer in time");
}

#[test]
fn linked_worktrees_read_the_common_configuration() {
    let project = Project::new();
    fs::remove_dir_all(project.root.join(".git")).unwrap();
    // root/.git -> outside/common/worktrees/wt, as `git worktree add` makes.
    let common = project.outside.join("common");
    let wt = common.join("worktrees/wt");
    fs::create_dir_all(common.join("objects")).unwrap();
    fs::create_dir_all(common.join("refs")).unwrap();
    fs::create_dir_all(&wt).unwrap();
    fs::write(wt.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
    fs::write(wt.join("commondir"), "../..\n").unwrap();
    fs::write(
        wt.join("gitdir"),
        format!("{}\n", project.root.join(".git").display()),
    )
    .unwrap();
    fs::write(common.join("config"), "[core]\n\tbare = false\n").unwrap();
    fs::write(
        project.root.join(".git"),
        format!("gitdir: {}\n", wt.display()),
    )
    .unwrap();
    assert!(matches!(
        project.analyse("git status"),
        Verdict::ReadOnly { .. }
    ));

    // git reads a worktree's own configuration only with the extension
    // on, and the analyser judges what git reads.
    fs::write(wt.join("config.worktree"), "[core]\n\tpager = less\n").unwrap();
    assert!(matches!(
        project.analyse("git status"),
        Verdict::ReadOnly { .. }
    ));
    fs::write(
        common.join("config"),
        "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tworktreeConfig = true\n",
    )
    .unwrap();
    match project.analyse("git status") {
        Verdict::Ask { reason } => assert!(
            reason.contains("the worktree's config") && reason.contains("(core.pager)"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    fs::remove_file(wt.join("config.worktree")).unwrap();

    fs::write(common.join("config"), "[diff]\n\texternal = x\n").unwrap();
    match project.analyse("git diff") {
        Verdict::Ask { reason } => assert!(
            reason.contains("the repository's config")
                && reason.contains("names a program (diff.external)"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }

    fs::write(common.join("config"), "[core]\n\tbare = false\n").unwrap();
    let leads_out = |line: &str| match project.analyse(line) {
        Verdict::Ask { reason } => assert!(
            reason.contains("leads to a repository outside the project"),
            "{line}: {reason}"
        ),
        other => panic!("{line}: {other:?}"),
    };
    // A worktree that does not name this `.git` back is another's.
    fs::write(wt.join("gitdir"), "/somewhere/else/.git\n").unwrap();
    leads_out("git log");
    // A relative back-link is read from the worktree's directory.
    let up = "../".repeat(wt.components().count());
    fs::write(
        wt.join("gitdir"),
        format!("{up}{}\n", project.root.join(".git").display()),
    )
    .unwrap();
    assert!(matches!(
        project.analyse("git log"),
        Verdict::ReadOnly { .. }
    ));
    // A `.git` file that leads to a whole repository outside (a parent
    // repository's `.git`), and a `.git` inside whose `commondir` leads
    // out: git would read the other repository's files.
    fs::write(wt.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
    fs::write(common.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(
        project.root.join(".git"),
        format!("gitdir: {}\n", common.display()),
    )
    .unwrap();
    leads_out("git log");
    fs::remove_file(project.root.join(".git")).unwrap();
    project.write(".git/HEAD", "ref: refs/heads/main\n");
    project.write(".git/commondir", &format!("{}\n", common.display()));
    leads_out("git show HEAD:secret.txt");

    fs::remove_dir_all(project.root.join(".git")).unwrap();
    fs::write(project.root.join(".git"), "gitdir: nowhere\n").unwrap();
    assert!(matches!(project.analyse("git log"), Verdict::Ask { .. }));
}

#[test]
fn git_outside_a_repository_asks() {
    let project = Project::new();
    fs::remove_dir_all(project.root.join(".git")).unwrap();
    match project.analyse("git status") {
        Verdict::Ask { reason } => assert!(
            reason.contains("no repository in the project here"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn paths_are_read_from_the_directory_the_command_runs_in() {
    let project = Project::new();
    let analyser = project.analyser();
    let root = project.root.display().to_string();
    let inside = format!("cat {root}/README.md");
    let cases: Vec<(&str, &str, Expect)> = vec![
        ("src", "cat lib.rs", Runs),
        ("src", "cat ../README.md", Runs),
        ("src", "cat README.md", Runs),
        ("src", "cat ../../outside/secret.txt", Asks("escapes")),
        ("link-in", "cat lib.rs", Runs),
        ("link-in", "cat ../README.md", Runs),
        ("sub", "git log", Runs),
        ("../outside", "ls", Asks("`../outside`: path escapes")),
        ("README.md", "ls", Asks("`README.md` is not a directory")),
        (".", &inside, Runs),
        (".", "cat /etc/hostname", Asks("escapes")),
    ];
    let mut failures = Vec::new();
    for (cwd, line, expect) in cases {
        let verdict = analyser.analyse(cwd, line);
        let ok = match (expect, &verdict) {
            (Runs, Verdict::ReadOnly { .. }) => true,
            (Asks(why), Verdict::Ask { reason }) => reason.contains(why),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "in {cwd}: {line:?}: expected {expect:?}, got {verdict:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the real git in `cwd`, away from the developer's configuration.
fn git(cwd: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out
}

/// Issue 37, item 4: an option's value is checked as what it is. The
/// layout is a real `git init` in `base/root`, a file of patterns beside
/// the project (`base/outsidepat`) and one inside (`root/sub/pat`).
/// `--exclude-per-directory` names a file git opens in every directory,
/// so `../outsidepat` read the file beside the project (an oracle on its
/// content, or a hang on a FIFO); and git opens the files of `-X`,
/// `--exclude-from`, `blame --contents`, `-S` and `--ignore-revs-file`
/// from the top of the work tree, not from where it runs, so from `sub`
/// the value `../outsidepat` is the file beside the project too.
#[test]
fn git_option_values_name_no_file_outside_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let sub = root.join("sub");
    fs::create_dir_all(&sub).unwrap();
    git(&root, &["init", "-q"]);
    fs::write(base.join("outsidepat"), "untracked\n").unwrap();
    fs::write(sub.join("pat"), "untracked\n").unwrap();
    fs::write(sub.join("untracked"), "").unwrap();
    fs::write(root.join("README.md"), "hello\n").unwrap();
    git(&root, &["add", "README.md"]);

    // What git does with them: the file beside the project decides what
    // is listed.
    let listed = git(&sub, &["ls-files", "-o", "-i", "-X", "../outsidepat"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "untracked\n");
    let listed = git(
        &root,
        &[
            "ls-files",
            "-o",
            "-i",
            "--exclude-per-directory=../outsidepat",
        ],
    );
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "sub/untracked\n");

    let analyser =
        Analyser::new(&root).with_command_env(support::command_env(Path::new("/dev/null")));
    let cases: &[(&str, &str, Expect)] = &[
        (
            ".",
            "git ls-files -o -i --exclude-per-directory=../outsidepat",
            Asks("`git ls-files --exclude-per-directory ../outsidepat`"),
        ),
        (
            ".",
            "git ls-files -o -i --exclude-per-directory ../outsidepat",
            Asks("--exclude-per-directory"),
        ),
        (
            ".",
            "git ls-files -o -i --exclude-per-directory=..",
            Asks("--exclude-per-directory"),
        ),
        (
            ".",
            "git ls-files -o -i --exclude-per-directory=/etc/passwd",
            Asks("--exclude-per-directory"),
        ),
        (
            ".",
            "git ls-files -o -i --exclude-per-directory=.gitignore",
            Runs,
        ),
        (
            "sub",
            "git ls-files -o -i -X ../outsidepat",
            Asks("escapes"),
        ),
        (
            "sub",
            "git ls-files -o -i --exclude-from=../outsidepat",
            Asks("escapes"),
        ),
        (
            ".",
            "git -C sub ls-files -o -i -X ../outsidepat",
            Asks("escapes"),
        ),
        (
            "sub",
            "git blame --contents ../outsidepat pat",
            Asks("escapes"),
        ),
        ("sub", "git blame -S ../outsidepat pat", Asks("escapes")),
        (
            "sub",
            "git blame --ignore-revs-file=../outsidepat pat",
            Asks("escapes"),
        ),
        // Read from the top or from here, it stays inside.
        ("sub", "git ls-files -o -i -X pat", Runs),
        ("sub", "git ls-files -o -i -X sub/pat", Runs),
        (".", "git ls-files -o -i -X sub/pat", Runs),
        ("sub", "git blame --contents pat pat", Runs),
        // `..` from the top of the work tree leaves the project.
        ("sub", "git ls-files -o -i -X ../README.md", Asks("escapes")),
    ];
    let labels: Vec<String> = cases
        .iter()
        .map(|(cwd, line, _)| format!("in {cwd}: {line}"))
        .collect();
    check_all(
        cases
            .iter()
            .zip(&labels)
            .map(|(&(cwd, line, expect), label)| {
                (label.as_str(), analyser.analyse(cwd, line), expect)
            }),
    );
}

#[test]
fn the_size_cap_is_the_analysers() {
    let project = Project::new();
    assert_eq!(ANALYSER_MAX_FILE_BYTES, 10 * 1024 * 1024);
    let small = project.analyser().with_max_file(4);
    match small.analyse(".", "cat README.md") {
        Verdict::Ask { reason } => assert!(
            reason.contains("`README.md` is 6 bytes, over the 4 bytes cap"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    let large = project.analyser().with_max_file(64 * 1024 * 1024);
    assert!(matches!(
        large.analyse(".", "cat big.log"),
        Verdict::ReadOnly { .. }
    ));
}

#[test]
fn the_short_form_analyses_at_the_root() {
    let project = Project::new();
    assert_eq!(
        analyse(&project.root, "ls -l   src"),
        Verdict::ReadOnly {
            rendered: "ls -l src".to_owned()
        }
    );
    assert!(matches!(
        analyse(&project.root, "cat ../outside/secret.txt"),
        Verdict::Ask { .. }
    ));
}

#[test]
fn long_lines_ask_without_being_parsed() {
    let project = Project::new();
    let long = format!("echo {}", "a".repeat(ANALYSER_MAX_LINE_BYTES));
    match project.analyse(&long) {
        Verdict::Ask { reason } => assert!(reason.contains("longer than 16384 bytes"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Just under the limit, with hundreds of paths to check, is fine.
    let many = format!(
        "cat{}",
        " README.md".repeat((ANALYSER_MAX_LINE_BYTES - 3) / 10)
    );
    assert!(many.len() <= ANALYSER_MAX_LINE_BYTES);
    assert!(matches!(project.analyse(&many), Verdict::ReadOnly { .. }));
}

#[test]
fn the_run_environment_disables_pagers_and_system_configuration() {
    for needed in [
        EnvSetting::Set("GIT_PAGER", "cat"),
        EnvSetting::Set("PAGER", "cat"),
        EnvSetting::Set("GIT_CONFIG_NOSYSTEM", "1"),
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
        EnvSetting::Set(
            "GIT_CONFIG_VALUE_6",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ),
        EnvSetting::Unset("GIT_CONFIG"),
        EnvSetting::Unset("LESS"),
        EnvSetting::Unset("GIT_EXTERNAL_DIFF"),
        EnvSetting::Unset("RIPGREP_CONFIG_PATH"),
    ] {
        assert!(ANALYSER_RUN_ENV.contains(&needed), "{needed:?}");
    }
}

// ---- Properties -----------------------------------------------------------

/// The run CI does: seed and case counts (`DASHFLOAT_ANALYSER_SEED`,
/// `DASHFLOAT_ANALYSER_CASES` vary them; a failure prints the line).
const DEFAULT_SEED: u64 = 0x0da5_f10a_7000_0025;
const DEFAULT_CASES: usize = 20_000;

/// Pieces random lines are made of: words the commands know, quotes,
/// escapes, every shell metacharacter, unicode, control characters.
const FRAGMENTS: &[&str] = &[
    "ls",
    "cat",
    "grep",
    "git",
    "log",
    "status",
    "find",
    "echo",
    "sort",
    "-n",
    "-la",
    "-rn",
    "--format=%h",
    "--color=auto",
    "-e",
    "README.md",
    "src",
    "src/lib.rs",
    "notes.txt",
    "a b",
    "x=y",
    "HEAD~1",
    "é",
    "日本",
    "-",
    "--",
    ".",
    "..",
    "../outside",
    "link-out",
    "'",
    "\"",
    "\\",
    "$",
    "*",
    "~",
    "#",
    "!",
    "%",
    "^",
    "=",
    ":",
    ",",
    "@",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "&",
    "|",
    ";",
    "\t",
    " ",
    "\n",
    "'it''s'",
    "\"q\\\"x\"",
    "\\ ",
    "\\'",
    "''",
    "\"\"",
    "'a|b'",
    "\"a b\"",
    "\"\\\\\"",
    "\"\\$\"",
    "\\$",
    "\u{7}",
    "\u{a0}",
    "\u{202e}",
    "+",
    "'$(id)'",
    "\"'\"",
    "'\"'",
    "\\\\",
    "\"a\\b\"",
    "-name",
    "'*.rs'",
    "-C",
    "2>&1",
];

const JOINS: &[&str] = &["", " ", " ", " ", " | ", " && ", " || ", "; ", "  "];

/// Commands a random line starts with more often than not, so that many
/// reach the command checks.
const STARTS: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "grep x",
    "git log",
    "git status",
    "find .",
    "sort",
    "wc -l",
    "head",
];

fn random_line(rng: &mut Rng) -> String {
    let mut line = String::new();
    if rng.percent(60) {
        line.push_str(rng.pick(STARTS));
        line.push(' ');
    }
    for i in 0..1 + rng.below(10) {
        if i > 0 {
            line.push_str(rng.pick(JOINS));
        }
        line.push_str(rng.pick(FRAGMENTS));
    }
    line
}

/// Whether `line` has no character a shell would treat specially outside
/// quotes: unquoted it holds only plain word characters, blanks and the
/// operators `|`, `||`, `&&`, `;`; single quotes hold anything; double
/// quotes hold no `$`, backquote or backslash. Independent of `parse`.
fn only_quoted_metacharacters(line: &str) -> bool {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./,:@%+= |;".contains(c);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                if !chars.by_ref().any(|c| c == '\'') {
                    return false;
                }
            }
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('$' | '`' | '\\') | None => return false,
                    Some(_) => {}
                }
            },
            '&' => {
                if chars.next() != Some('&') {
                    return false;
                }
            }
            c if plain(c) => {}
            _ => return false,
        }
    }
    true
}

#[test]
fn rendered_plans_parse_back_to_themselves() {
    let seed: u64 = env_or("DASHFLOAT_ANALYSER_SEED", DEFAULT_SEED);
    let cases: usize = env_or("DASHFLOAT_ANALYSER_CASES", DEFAULT_CASES);
    let mut rng = Rng(seed);
    let mut parsed = 0;
    for _ in 0..cases {
        let line = random_line(&mut rng);
        let Ok(plan) = parse(&line) else { continue };
        parsed += 1;
        let rendered = plan.render();
        assert!(
            only_quoted_metacharacters(&rendered),
            "seed {seed:#x}: {line:?} rendered as {rendered:?}, which has an unquoted metacharacter"
        );
        assert_eq!(
            parse(&rendered).as_ref(),
            Ok(&plan),
            "seed {seed:#x}: {line:?} rendered as {rendered:?}"
        );
        assert_eq!(plan.render(), rendered, "rendering is deterministic");
    }
    // The generator must reach the subset often enough to test it.
    assert!(parsed * 10 > cases, "only {parsed} of {cases} lines parsed");
}

#[test]
fn accepted_lines_render_safely_and_stay_accepted() {
    let project = Project::new();
    let analyser = project.analyser();
    let seed: u64 = env_or("DASHFLOAT_ANALYSER_SEED", DEFAULT_SEED) ^ 1;
    let cases = env_or("DASHFLOAT_ANALYSER_CASES", DEFAULT_CASES) / 4;
    let mut rng = Rng(seed);
    let mut accepted = 0;
    for _ in 0..cases {
        let line = random_line(&mut rng);
        let Verdict::ReadOnly { rendered } = analyser.analyse(".", &line) else {
            continue;
        };
        accepted += 1;
        assert!(
            only_quoted_metacharacters(&rendered),
            "seed {seed:#x}: {line:?} accepted as {rendered:?}"
        );
        assert_eq!(
            Ok(rendered.clone()),
            parse(&line).map(|p| p.render()),
            "{line:?}"
        );
        assert_eq!(
            analyser.analyse(".", &rendered),
            Verdict::ReadOnly {
                rendered: rendered.clone()
            },
            "seed {seed:#x}: {line:?}: the rendering must be accepted as itself"
        );
    }
    assert!(
        accepted * 100 > cases,
        "only {accepted} of {cases} lines accepted"
    );
}

/// The tokenizer agrees with the real `/bin/sh`: for lines `parse` accepts
/// as one stage, `printf '%s\n'` given the line's words prints exactly the
/// plan's words, and so does it given the rendering.
#[test]
fn the_shell_splits_words_as_the_tokenizer_does() {
    let seed: u64 = env_or("DASHFLOAT_ANALYSER_SEED", DEFAULT_SEED) ^ 2;
    let mut rng = Rng(seed);
    let mut checked = 0;
    while checked < 300 {
        let line = random_line(&mut rng);
        let Ok(plan) = parse(&line) else { continue };
        let stages: Vec<&[String]> = plan.stages().collect();
        let [words] = stages[..] else { continue };
        checked += 1;
        let mut want = String::new();
        for word in words {
            want.push_str(word);
            want.push('\n');
        }
        for form in [line.clone(), plan.render()] {
            let out = Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("printf '%s\\n' {form}"))
                .env_clear()
                .output()
                .unwrap();
            assert!(out.status.success(), "{form:?}: {out:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                want,
                "seed {seed:#x}: the shell split {form:?} (from {line:?}) otherwise"
            );
        }
    }
}

/// The real `/bin/sh` agrees about what is no command line: it refuses
/// to parse (`-n`) every non-blank line the table calls invalid, and
/// parses every line the table asks about for a `(` that is sound syntax
/// in POSIX sh (bash's arrays aside).
#[test]
fn the_shell_rejects_what_the_analyser_calls_invalid() {
    let parses = |line: &str| {
        Command::new("/bin/sh")
            .args(["-n", "-c", line])
            .env_clear()
            .output()
            .unwrap()
            .status
            .success()
    };
    let mut checked = 0;
    for (line, expect) in CASES {
        let sound = match expect {
            Invalid(_) if !line.trim().is_empty() => false,
            Asks(why) if why.starts_with("`(`") && !line.contains(['=', '!', '@']) => true,
            _ => continue,
        };
        checked += 1;
        assert_eq!(parses(line), sound, "/bin/sh -n on {line:?}");
    }
    assert!(checked >= 15, "{checked} lines checked");
}

#[test]
fn no_input_panics() {
    let project = Project::new();
    let analyser = project.analyser();
    let seed: u64 = env_or("DASHFLOAT_ANALYSER_SEED", DEFAULT_SEED) ^ 3;
    let mut rng = Rng(seed);
    let cases = env_or("DASHFLOAT_ANALYSER_CASES", DEFAULT_CASES) / 10;
    for i in 0..cases {
        let line = match i % 4 {
            // Arbitrary bytes, as a lossy string.
            0 => {
                let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            // Arbitrary characters from the whole range.
            1 => (0..rng.below(32))
                .filter_map(|_| char::from_u32((rng.next() % 0x11_0000) as u32))
                .collect(),
            // Fragments: the subset's edges.
            2 => random_line(&mut rng),
            // A known command followed by printable ASCII noise.
            _ => {
                let noise: String = (0..rng.below(40))
                    .map(|_| (b' ' + rng.below(95) as u8) as char)
                    .collect();
                format!(
                    "{} {noise}",
                    rng.pick(&["git log", "find .", "grep", "ls", "sort"])
                )
            }
        };
        let _ = analyser.analyse(".", &line);
        let _ = analyser.analyse("src", &line);
    }
    // Very long lines: over the limit, at it, and deep in quotes.
    for line in [
        "a".repeat(1 << 20),
        format!("echo '{}", "x".repeat(ANALYSER_MAX_LINE_BYTES - 7)),
        "'".repeat(ANALYSER_MAX_LINE_BYTES),
        "\\".repeat(ANALYSER_MAX_LINE_BYTES),
        "ls |".repeat(ANALYSER_MAX_LINE_BYTES / 4),
        "é".repeat(ANALYSER_MAX_LINE_BYTES / 2),
    ] {
        let _ = analyser.analyse(".", &line);
        let _ = parse(&line);
    }
    // The parse step alone on a line far over the analyser's limit.
    let huge = "git log --oneline -- src | ".repeat(40_000) + "wc -l";
    assert_eq!(parse(&huge).map(|p| p.stages().count()).ok(), Some(40_001));
}

/// Lines that must not be accepted wherever they run, whatever the
/// filesystem holds: a quick check that the subset is enforced before
/// anything else.
#[test]
fn absolute_paths_outside_ask_whatever_the_command() {
    let project = Project::new();
    let secret = project.outside.join("secret.txt");
    for cmd in [
        "cat",
        "head",
        "tail",
        "wc",
        "grep x",
        "rg --no-ignore x",
        "ls",
        "file",
        "stat",
        "du",
        "tree",
        "sort",
        "uniq",
        "cut -f1",
        "diff README.md",
        "find",
        "git log --",
        "git diff",
        "git blame",
    ] {
        let line = format!("{cmd} {}", secret.display());
        match project.analyse(&line) {
            Verdict::Ask { reason } => assert!(reason.contains("escapes"), "{line}: {reason}"),
            other => panic!("{line}: {other:?}"),
        }
    }
}
