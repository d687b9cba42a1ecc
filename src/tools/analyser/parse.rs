//! The safe subset of `/bin/sh` syntax: a command line to a [`Plan`] of
//! stages joined by `|`, `&&`, `||` and `;`, each stage a list of words as
//! the programs will receive them (quotes removed). Pure: no filesystem,
//! no environment. Whatever the tokenizer does not understand it refuses
//! ([`ParseError`]), and [`Plan::render`] turns a plan back into a line the
//! shell splits into exactly those words. ADR 0025.

use std::borrow::Cow;

/// What joins two stages of a [`Plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    /// `|`: the first stage's output is the second's input.
    Pipe,
    /// `&&`: the second stage runs if the first succeeded.
    And,
    /// `||`: the second stage runs if the first failed.
    Or,
    /// `;`: the second stage runs after the first, whatever it returned.
    Then,
}

impl Operator {
    /// The operator as it is written between two stages.
    fn as_str(self) -> &'static str {
        match self {
            Operator::Pipe => "|",
            Operator::And => "&&",
            Operator::Or => "||",
            Operator::Then => ";",
        }
    }
}

/// A command line in the safe subset: its first stage and every further
/// stage with the operator before it. A stage is never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    first: Vec<String>,
    rest: Vec<(Operator, Vec<String>)>,
}

impl Plan {
    /// The stages in order, each the words its program receives (the
    /// first word is the command).
    pub fn stages(&self) -> impl Iterator<Item = &[String]> {
        std::iter::once(self.first.as_slice()).chain(self.rest.iter().map(|(_, s)| s.as_slice()))
    }

    /// The plan as a command line: each word bare when it holds only
    /// characters no shell treats specially, single-quoted otherwise (a
    /// `'` inside written as `'"'"'`), stages joined by their operators.
    /// [`parse`] of the result gives this plan back; it is the line that
    /// runs, so what runs is what was analysed.
    pub fn render(&self) -> String {
        let mut line = render_stage(&self.first);
        for (op, stage) in &self.rest {
            line.push_str(match op {
                Operator::Then => "; ",
                _ => " ",
            });
            if *op != Operator::Then {
                line.push_str(op.as_str());
                line.push(' ');
            }
            line.push_str(&render_stage(stage));
        }
        line
    }
}

/// Why a command line is not in the safe subset, or is no command line.
/// The text is what the person reads in the confirmation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing but blanks.
    #[error("the command line is empty")]
    Empty,
    /// A quote opened and never closed: the shell rejects the line.
    #[error("the {0} quote is never closed")]
    Unterminated(&'static str),
    /// An operator with no command on one side (`| ls`, `ls &&`, `;;`):
    /// the shell rejects the line.
    #[error("`{0}` has no command on one side")]
    MissingCommand(&'static str),
    /// A `(` after the words of a command (`python3 -m x mode(values)`):
    /// neither POSIX sh nor bash parses it.
    #[error(
        "`(` cannot follow `{0}`: the shell rejects the line; quote the word to pass it as an argument"
    )]
    MisplacedParenthesis(String),
    /// A construct outside the subset: an expansion, a redirect, a glob,
    /// a background job, a subshell... The line may be fine; it is just
    /// not one the analyser can show to be read-only.
    #[error("{0}")]
    Unsupported(String),
}

impl ParseError {
    /// Whether the shell itself would reject the line (an unterminated
    /// quote, an empty line, a dangling operator, a `(` after a command's
    /// words), as opposed to a line outside the subset.
    pub fn is_syntax_error(&self) -> bool {
        !matches!(self, ParseError::Unsupported(_))
    }
}

/// Splits `line` into a [`Plan`], or says why it is outside the safe
/// subset. Scans left to right and stops at the first construct it does
/// not accept, so a line with both `$x` and, later, an unterminated quote
/// is `Unsupported` (what follows an expansion cannot be read reliably).
pub fn parse(line: &str) -> Result<Plan, ParseError> {
    let mut tokenizer = Tokenizer {
        chars: line.chars().peekable(),
        stages: Vec::new(),
        ops: Vec::new(),
        stage: Vec::new(),
        word: None,
    };
    tokenizer.run()?;
    let mut stages = tokenizer.stages.into_iter();
    let first = stages.next().ok_or(ParseError::Empty)?;
    Ok(Plan {
        first,
        rest: tokenizer.ops.into_iter().zip(stages).collect(),
    })
}

/// The word being read, with what the rules for `~` and assignments need.
struct Word {
    text: String,
    /// The leading run of characters that were neither quoted nor escaped,
    /// while it lasts: `A=b` makes an assignment only if `A=` is in it.
    unquoted_prefix: Option<String>,
}

struct Tokenizer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    /// Finished stages, and the operators between them.
    stages: Vec<Vec<String>>,
    ops: Vec<Operator>,
    /// The stage being read.
    stage: Vec<String>,
    word: Option<Word>,
}

impl Tokenizer<'_> {
    fn run(&mut self) -> Result<(), ParseError> {
        while let Some(c) = self.chars.next() {
            match c {
                ' ' | '\t' => self.end_word()?,
                '|' => match self.chars.peek() {
                    Some('|') => {
                        self.chars.next();
                        self.operator(Operator::Or)?;
                    }
                    Some('&') => return Err(unsupported("`|&` pipes error output as well")),
                    _ => self.operator(Operator::Pipe)?,
                },
                '&' => match self.chars.peek() {
                    Some('&') => {
                        self.chars.next();
                        self.operator(Operator::And)?;
                    }
                    _ => return Err(unsupported("`&` runs a command in the background")),
                },
                ';' => self.operator(Operator::Then)?,
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '\\' => match self.chars.next() {
                    None => return Err(unsupported("a `\\` ends the line")),
                    Some(e) => {
                        refuse_control(e)?;
                        self.push_quoted(e);
                    }
                },
                '$' => return Err(dollar(self.chars.peek().copied())),
                '`' => return Err(unsupported("a backquote (`) runs a command")),
                '>' => return Err(output_redirect(self.chars.peek().copied())),
                '<' => return Err(input_redirect(self.chars.peek().copied())),
                '(' if self.misplaced_parenthesis() => {
                    let after = self.word.as_ref().map_or_else(
                        || self.stage.last().cloned().unwrap_or_default(),
                        |w| w.text.clone(),
                    );
                    return Err(ParseError::MisplacedParenthesis(after));
                }
                '(' | ')' => {
                    return Err(unsupported(format!(
                        "`{c}` is shell syntax (a subshell or a function); quote it to pass it as is"
                    )));
                }
                '{' | '}' => {
                    return Err(unsupported(format!(
                        "`{c}` groups commands or expands braces; quote it to pass it as is"
                    )));
                }
                '*' | '?' | '[' => {
                    return Err(unsupported(format!(
                        "`{c}` is a glob pattern the shell expands, which may name files outside the \
                         project; quote it to pass it as is"
                    )));
                }
                '#' if self.word.is_none() => {
                    return Err(unsupported("`#` starts a comment"));
                }
                '~' if self.tilde_expands() => {
                    return Err(unsupported(
                        "`~` expands to a home directory; quote it to pass it as is",
                    ));
                }
                '\n' => return Err(unsupported("a newline starts another command")),
                c => {
                    refuse_control(c)?;
                    self.push_unquoted(c);
                }
            }
        }
        self.end_word()?;
        if self.stage.is_empty() {
            match self.ops.last() {
                None => return Err(ParseError::Empty),
                // `ls;` is `ls`: a trailing `;` ends the last command.
                Some(Operator::Then) => {
                    self.ops.pop();
                    return Ok(());
                }
                Some(op) => return Err(ParseError::MissingCommand(op.as_str())),
            }
        }
        self.stages.push(std::mem::take(&mut self.stage));
        Ok(())
    }

    /// Whether an unquoted `(` here (the `(` itself already read) is one
    /// no shell parses: it follows a command's words, and they are not a
    /// function's name (`f()`, `f ( )`), a bash array (`a=(1 2)`), or a
    /// compound command's reserved word (`if (`, `case x in (`), or bash's
    /// extended patterns (`!(x)`), where a `(` is sound syntax the subset
    /// merely leaves out.
    fn misplaced_parenthesis(&self) -> bool {
        let mut words = self
            .stage
            .iter()
            .map(String::as_str)
            .chain(self.word.as_ref().map(|w| w.text.as_str()));
        let Some(first) = words.next() else {
            return false;
        };
        let function = self.stage.len() + usize::from(self.word.is_some()) == 1
            && self.chars.clone().find(|c| !matches!(c, ' ' | '\t')) == Some(')');
        let array = self.word.as_ref().is_some_and(|w| w.text.ends_with('='));
        // bash with extglob (which `BASHOPTS` can turn on) reads `!(x)`,
        // `@(x)` and `+(x)` as patterns.
        let pattern = self
            .word
            .as_ref()
            .is_some_and(|w| w.text.ends_with(['!', '@', '+']));
        !(function || array || pattern || RESERVED_WORDS.contains(&first))
    }

    /// Whether an unquoted `~` here would be expanded: at the start of a
    /// word, or after `=` or `:` (assignments, and arguments that look like
    /// them in bash). `HEAD~2` keeps its `~`.
    fn tilde_expands(&self) -> bool {
        match &self.word {
            None => true,
            Some(w) => matches!(w.text.chars().last(), None | Some('=' | ':')),
        }
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            unquoted_prefix: Some(String::new()),
        })
    }

    fn push_unquoted(&mut self, c: char) {
        let word = self.word();
        word.text.push(c);
        if let Some(prefix) = &mut word.unquoted_prefix {
            prefix.push(c);
        }
    }

    fn push_quoted(&mut self, c: char) {
        let word = self.word();
        word.text.push(c);
        word.unquoted_prefix = None;
    }

    fn single_quoted(&mut self) -> Result<(), ParseError> {
        // An empty pair is still a word: `''` is an empty argument.
        self.word().unquoted_prefix = None;
        loop {
            match self.chars.next() {
                None => return Err(ParseError::Unterminated("single")),
                Some('\'') => return Ok(()),
                Some(c) => {
                    refuse_control(c)?;
                    self.push_quoted(c);
                }
            }
        }
    }

    /// Inside double quotes `$` and a backquote still expand, and `\` escapes
    /// only `$`, a backquote, `"`, `\` and a newline; before anything else
    /// it is itself.
    fn double_quoted(&mut self) -> Result<(), ParseError> {
        self.word().unquoted_prefix = None;
        loop {
            match self.chars.next() {
                None => return Err(ParseError::Unterminated("double")),
                Some('"') => return Ok(()),
                Some('$') => {
                    return Err(unsupported(
                        "`$` inside double quotes expands a variable or runs a command; \
                         use single quotes",
                    ));
                }
                Some('`') => return Err(unsupported("a backquote (`) runs a command")),
                Some('\\') => match self.chars.next() {
                    None => return Err(ParseError::Unterminated("double")),
                    Some(e @ ('$' | '`' | '"' | '\\')) => self.push_quoted(e),
                    Some(e) => {
                        refuse_control(e)?;
                        self.push_quoted('\\');
                        self.push_quoted(e);
                    }
                },
                Some(c) => {
                    refuse_control(c)?;
                    self.push_quoted(c);
                }
            }
        }
    }

    fn end_word(&mut self) -> Result<(), ParseError> {
        let Some(word) = self.word.take() else {
            return Ok(());
        };
        if self.stage.is_empty() && is_assignment(word.unquoted_prefix.as_deref()) {
            return Err(unsupported(format!(
                "`{}` sets a variable for the command",
                word.text
            )));
        }
        self.stage.push(word.text);
        Ok(())
    }

    fn operator(&mut self, op: Operator) -> Result<(), ParseError> {
        self.end_word()?;
        if self.stage.is_empty() {
            return Err(ParseError::MissingCommand(op.as_str()));
        }
        self.stages.push(std::mem::take(&mut self.stage));
        self.ops.push(op);
        Ok(())
    }
}

/// Words that open or continue a compound command, in POSIX sh and bash:
/// a `(` after them starts a subshell or a `case` pattern.
const RESERVED_WORDS: &[&str] = &[
    "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while",
];

fn unsupported(why: impl Into<String>) -> ParseError {
    ParseError::Unsupported(why.into())
}

/// Control characters other than tab are refused anywhere, quoted or not:
/// a newline is another command, and the rest can hide text on a screen.
fn refuse_control(c: char) -> Result<(), ParseError> {
    if c.is_control() && c != '\t' {
        return Err(unsupported(match c {
            '\n' => "a newline starts another command".to_owned(),
            _ => format!("the line holds a control character (U+{:04X})", c as u32),
        }));
    }
    Ok(())
}

/// Whether a command word's unquoted prefix makes it an assignment
/// (`NAME=value`), which the shell applies to the command's environment.
fn is_assignment(unquoted_prefix: Option<&str>) -> bool {
    let Some((name, _)) = unquoted_prefix.and_then(|p| p.split_once('=')) else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn dollar(next: Option<char>) -> ParseError {
    unsupported(match next {
        Some('(') => "`$(…)` runs a command (or evaluates arithmetic)",
        Some('{') => "`${…}` expands a variable",
        Some('\'') => "`$'…'` quoting is not understood here; use plain single quotes",
        _ => "`$` expands a variable; quote it with single quotes to pass it as is",
    })
}

fn output_redirect(next: Option<char>) -> ParseError {
    unsupported(match next {
        Some('>') => "`>>` appends output to a file",
        Some('(') => "`>(…)` runs a command",
        Some('&') => "`>&` redirects a stream; redirects are not auto-allowed",
        Some('|') => "`>|` overwrites a file",
        _ => "`>` redirects output to a file",
    })
}

fn input_redirect(next: Option<char>) -> ParseError {
    unsupported(match next {
        Some('<') => "`<<` starts a here-document",
        Some('(') => "`<(…)` runs a command",
        Some('&') => "`<&` redirects a stream; redirects are not auto-allowed",
        Some('>') => "`<>` opens a file for writing",
        _ => "`<` redirects input from a file",
    })
}

fn render_stage(words: &[String]) -> String {
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&quote(word, i == 0));
    }
    out
}

/// Characters that mean nothing to any POSIX shell (nor bash) in a word.
/// `=` joins them except in a command word, where it would make an
/// assignment.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '@' | '%' | '+')
}

fn quote(word: &str, command: bool) -> Cow<'_, str> {
    let plain = !word.is_empty() && word.chars().all(|c| is_plain(c) || (c == '=' && !command));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', "'\"'\"'")))
    }
}
