//! The read-only allow-list analyser: any line, any working directory
//! argument. It never panics, and a line it lets run unasked is run as a
//! rendering in which no shell metacharacter is left unquoted.
use std::sync::LazyLock;

use dashfloat::tools::{Analyser, Verdict};

/// A project with a file and a folder, made once.
static PROJECT: LazyLock<(tempfile::TempDir, Analyser)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").expect("file");
    let analyser = Analyser::new(dir.path()).with_command_env(vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
    ]);
    (dir, analyser)
});

/// Characters a word may hold unquoted: nothing any shell reads as more.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./,:@%+=".contains(c)
}

/// Where `line` has a character outside quotes that a shell would act on
/// (anything but plain characters, spaces and the operators `|`, `||`,
/// `&&` and `;`), if anywhere.
fn unquoted_metacharacter(line: &str) -> Option<usize> {
    let bytes: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            '\'' => {
                // To the closing quote; nothing inside is special.
                i += 1;
                while i < bytes.len() && bytes[i] != '\'' {
                    i += 1;
                }
                if i == bytes.len() {
                    return Some(i);
                }
            }
            // The only double-quoted text the quoting writes is `'`.
            '"' => {
                if bytes.get(i + 1) != Some(&'\'') || bytes.get(i + 2) != Some(&'"') {
                    return Some(i);
                }
                i += 2;
            }
            '&' if bytes.get(i + 1) == Some(&'&') => i += 1,
            ' ' | '|' | ';' => {}
            c if plain(c) => {}
            _ => return Some(i),
        }
        i += 1;
    }
    None
}

/// Directories a command may be asked to run in.
const CWDS: [&str; 5] = [".", "src", "src/..", "..", "/tmp"];

/// One byte choosing the working directory, then the command line.
pub fn run(data: &[u8]) {
    let Some((&pick, line)) = data.split_first() else {
        return;
    };
    let line = String::from_utf8_lossy(line);
    let cwd = CWDS[usize::from(pick) % CWDS.len()];
    if let Verdict::ReadOnly { rendered } = PROJECT.1.analyse(cwd, &line) {
        assert_eq!(
            unquoted_metacharacter(&rendered),
            None,
            "{line:?} runs as {rendered:?}"
        );
    }
}
