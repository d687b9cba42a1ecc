//! What an option's value is, and the one check for each kind. Every
//! option that takes a value says in its command's table what the value
//! is ([`Kind`]); a value that is not of its kind refuses the stage. A
//! value the program opens is a path and goes through the path policy;
//! the other kinds are never opened, and each is held to the form the
//! program reads, so that an option marked wrongly still cannot be handed
//! a file name. ADR 0025.

use super::Refusal;
use super::git_config;
use super::paths::{Base, Place, Use};

/// What an option's value is, which decides how it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A count: decimal digits only (`-n 5`, `-A 3`, `--max-depth=2`).
    Count,
    /// A size, offset or time as coreutils, find and ripgrep read them:
    /// an optional `+` or `-`, digits with an optional fraction, and an
    /// optional unit of at most three letters or `%` (`10K`, `-5`, `+2`,
    /// `1MiB`, `50%`, `-1.5`). Digits are required: `tail -cf` reads `f`
    /// as "follow", not as a size.
    Size,
    /// A block size as `ls` and `du` take it: a [`Kind::Size`], or a unit
    /// alone (`K`, `MiB`).
    BlockSize,
    /// Numbers in a list, a range or a ratio: digits and `,` `-` `.` `/`
    /// `%`, with the letters of sort's key options (cut's `1,3-5` and
    /// `-3`, sort's `2,2n`, git's `--stat=80,40`, `-M50%` and `-B20%/60%`);
    /// it starts with a digit or `-`, holds no `..`, and a digit follows
    /// every `/`.
    Numbers,
    /// One of a fixed list of words. A word that ends in `:` stands for
    /// itself followed by anything (git's `--date=format:%Y`).
    Word(&'static [&'static str]),
    /// A path the program opens or looks at: the path policy checks it as
    /// `Use` says, from where the program reads it ([`Base`]).
    Path(Use),
    /// A file name the program opens in every directory it visits (git's
    /// `--exclude-per-directory`): one name, without `/`, not `.` or
    /// `..`, so it never leaves the directory. git opens it without
    /// following a link, as it opens `.gitignore`.
    FileName,
    /// A revision, looked up in the repository and never opened
    /// (`--contains`, `--with-tree`): not starting with `-`, and held to
    /// the path policy as a git operand is (a revision name passes it).
    Revision,
    /// The name of a character encoding, given to iconv: ASCII letters,
    /// digits and `-` `_` `.` `:`, at most 64 of them (`UTF-8`, `latin1`).
    Encoding,
    /// A git pretty format (`--format`, `--pretty`): text, but without a
    /// `%G` placeholder, which makes git verify signatures by running gpg.
    GitFormat,
    /// A `find -printf` format: text, but without a `%Y` directive, which
    /// makes find look at what a link leads to (whether it exists and
    /// what it is), which may be outside the project.
    FindFormat,
    /// Text the program matches, parses or prints, and never opens: a
    /// regular expression, a glob, a date, a label, an output format, a
    /// separator (`grep -e`, `--grep`, `--author`, `find -name`,
    /// `--label`, `--time-style`). Any text.
    Text,
}

/// Why a value is not of its option's kind: what the option takes. The
/// text follows "`cmd flag value`: " in the reason the person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum BadValue {
    /// Not a [`Kind::Count`].
    #[error("the value must be a count (digits only)")]
    Count,
    /// Not a [`Kind::Size`].
    #[error("the value must be a number, with an optional sign and unit (`10K`, `-5`)")]
    Size,
    /// Not [`Kind::Numbers`].
    #[error("the value must be numbers in a list, range or ratio (`1,3-5`, `2,2n`, `50%`)")]
    Numbers,
    /// Not one of the words of a [`Kind::Word`].
    #[error("the value must be one of {}", words_text(.0))]
    Word(&'static [&'static str]),
    /// Not a [`Kind::FileName`].
    #[error(
        "the value is a file name opened in every directory, so it must be one name: no `/`, \
         not `.` or `..`"
    )]
    FileName,
    /// A [`Kind::Revision`] that starts with `-`.
    #[error("the value must be a revision, which does not start with `-`")]
    Revision,
    /// Not a [`Kind::Encoding`].
    #[error("the value must be an encoding's name (letters, digits, `-`, `_`, `.`, `:`)")]
    Encoding,
    /// A [`Kind::GitFormat`] with a `%G` placeholder.
    #[error("a `%G` placeholder verifies signatures by running gpg")]
    Gpg,
    /// A [`Kind::FindFormat`] with a `%Y` directive.
    #[error(
        "a `%Y` directive looks at what a symbolic link leads to, which may be outside the project"
    )]
    LinkTarget,
}

/// The words of a [`Kind::Word`] for a person: `a`, `b`, `format:…`.
fn words_text(words: &[&str]) -> String {
    words
        .iter()
        .map(|word| match word.strip_suffix(':') {
            Some(_) => format!("`{word}…`"),
            None => format!("`{word}`"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Kind {
    /// Checks `value`, given to `flag` of `cmd` in a stage at `place`, as
    /// a value of this kind; a path is checked from `base`.
    pub fn check(
        self,
        cmd: &str,
        flag: &str,
        value: &str,
        place: &Place,
        base: Base,
    ) -> Result<(), Refusal> {
        let fault = match self {
            Kind::Path(using) => return place.check_from(base, value, using),
            Kind::Revision if !value.starts_with('-') => return place.check(value, Use::Look),
            Kind::Revision => Some(BadValue::Revision),
            Kind::Count => (!is_count(value)).then_some(BadValue::Count),
            Kind::Size => (!is_size(value)).then_some(BadValue::Size),
            Kind::BlockSize => (!is_size(value) && !is_unit(value)).then_some(BadValue::Size),
            Kind::Numbers => (!is_numbers(value)).then_some(BadValue::Numbers),
            Kind::Word(words) => (!is_word(words, value)).then_some(BadValue::Word(words)),
            Kind::FileName => (!is_file_name(value)).then_some(BadValue::FileName),
            Kind::Encoding => (!is_encoding(value)).then_some(BadValue::Encoding),
            Kind::GitFormat => git_config::verifies_signatures(value).then_some(BadValue::Gpg),
            Kind::FindFormat => looks_at_link_targets(value).then_some(BadValue::LinkTarget),
            Kind::Text => None,
        };
        match fault {
            None => Ok(()),
            Some(why) => Err(Refusal::Value {
                cmd: cmd.to_owned(),
                flag: flag.to_owned(),
                value: value.to_owned(),
                why,
            }),
        }
    }
}

/// Whether `value` is a [`Kind::Count`].
fn is_count(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `value` is a [`Kind::Size`].
fn is_size(value: &str) -> bool {
    let rest = value.strip_prefix(['+', '-']).unwrap_or(value);
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(rest.len());
    let (number, unit) = rest.split_at(end);
    let number_fits = match number.split_once('.') {
        Some((whole, fraction)) => is_count(whole) && is_count(fraction),
        None if number.is_empty() => false,
        None => is_count(number),
    };
    number_fits && (unit == "%" || unit.is_empty() || is_unit(unit))
}

/// Whether `value` is a unit of at most three letters (`K`, `MiB`).
fn is_unit(value: &str) -> bool {
    (1..=3).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Whether `value` is [`Kind::Numbers`].
fn is_numbers(value: &str) -> bool {
    const SORT_KEY_LETTERS: &str = "bdfghiMnRrV";
    value.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        && value.contains(|c: char| c.is_ascii_digit())
        && !value.contains("..")
        && value
            .split('/')
            .skip(1)
            .all(|part| part.starts_with(|c: char| c.is_ascii_digit()))
        && value
            .chars()
            .all(|c| c.is_ascii_digit() || ",-./%".contains(c) || SORT_KEY_LETTERS.contains(c))
}

/// Whether `value` is one of `words` ([`Kind::Word`]).
fn is_word(words: &[&str], value: &str) -> bool {
    words.iter().any(|word| {
        if word.ends_with(':') {
            value.starts_with(word)
        } else {
            value == *word
        }
    })
}

/// Whether `value` is a [`Kind::FileName`].
fn is_file_name(value: &str) -> bool {
    !value.is_empty() && value != "." && value != ".." && !value.contains('/')
}

/// Whether `value` is a [`Kind::Encoding`].
fn is_encoding(value: &str) -> bool {
    (1..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// Whether a `find -printf` format holds a `%Y` directive, as GNU find
/// reads one: `%`, then flags (`-+ #0`), a width and a precision, then
/// the directive; `%%` is a `%`, and after `%A`, `%B`, `%C` and `%T` the
/// next character is a part of the time (`%TY` is the year).
fn looks_at_link_targets(format: &str) -> bool {
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        let directive = chars
            .by_ref()
            .find(|c| !matches!(c, '-' | '+' | ' ' | '#' | '0'..='9' | '.'));
        match directive {
            Some('Y') => return true,
            Some('A' | 'B' | 'C' | 'T') => {
                chars.next();
            }
            _ => {}
        }
    }
    false
}
