//! A command file's text: its front matter read, and its template
//! expanded with the arguments typed after the command's name. Pure, so
//! the UI expands a command it was sent without any I/O.

use crate::protocol::{CommandScope, CustomCommand, UiCommand};

/// What a command file holds, front matter read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// `description`, else the template's first line.
    pub description: String,
    /// `argument-hint`.
    pub argument_hint: String,
    /// The text after the front matter.
    pub template: String,
    /// The front matter's other keys and the `` !`command` `` lines: what
    /// dashfloat does not do.
    pub ignored: Vec<String>,
}

/// The most characters of a description the popup is given.
const DESCRIPTION_MAX_CHARS: usize = 120;

/// Reads a command file's `text`: an optional front matter between two
/// `---` lines of `key: value` lines (Claude Code's and Codex's form),
/// then the template.
pub fn parse(text: &str) -> Parsed {
    let (front, template) = split_front_matter(text);
    let mut parsed = Parsed {
        template: template.to_owned(),
        ..Parsed::default()
    };
    for line in front.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let value = unquoted(value.trim());
        match key.trim() {
            "description" => parsed.description = value.to_owned(),
            "argument-hint" => parsed.argument_hint = value.to_owned(),
            other => parsed.ignored.push(format!("`{other}`")),
        }
    }
    if runs_commands(template) {
        parsed.ignored.push("the ``!`command` `` lines".to_owned());
    }
    if parsed.description.is_empty() {
        parsed.description = template
            .lines()
            .map(|line| line.trim_start_matches('#').trim())
            .find(|line| !line.is_empty())
            .unwrap_or_default()
            .to_owned();
    }
    parsed.description = parsed
        .description
        .chars()
        .take(DESCRIPTION_MAX_CHARS)
        .collect();
    parsed
}

/// The front matter's lines and the rest, when `text` opens with a
/// `---` line closed by another; else nothing and all of it.
fn split_front_matter(text: &str) -> (&str, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (
                &rest[..at],
                rest[at + line.len()..].trim_start_matches(['\r', '\n']),
            );
        }
        at += line.len();
    }
    ("", text)
}

fn unquoted(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// Whether the template holds Claude Code's `` !`command` `` form, which
/// would run a command before the prompt is sent.
fn runs_commands(template: &str) -> bool {
    template
        .match_indices("!`")
        .any(|(at, _)| template[at + 2..].contains('`'))
}

/// The prompt `template` makes with `arguments` typed after the name:
/// `$ARGUMENTS` is all of them, `$1`, `$2`… each word (a quoted group is
/// one word), `$NAME` the value of a `NAME=value` word (Codex's named
/// placeholders), `$$` a `$`. A template with no placeholder gets the
/// arguments after a blank line, so none is lost. `None` once the prompt
/// would pass `max` bytes: a template repeating `$ARGUMENTS` could
/// otherwise make gigabytes of a long paste.
pub fn expand(template: &str, arguments: &str, max: usize) -> Option<String> {
    let arguments = arguments.trim();
    let words = split_words(arguments);
    let named: Vec<(&str, &str)> = words
        .iter()
        .filter_map(|word| word.split_once('='))
        .filter(|(key, _)| is_placeholder_name(key))
        .collect();
    let mut out = String::with_capacity(template.len() + arguments.len());
    let mut used = false;
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let upper = after
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        let (taken, text) = if after.starts_with('$') {
            (1, Some("$"))
        } else if digits > 0 {
            let word = after[..digits]
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|n| words.get(n));
            used = true;
            (digits, Some(word.map_or("", String::as_str)))
        } else if &after[..upper] == "ARGUMENTS" {
            used = true;
            (upper, Some(arguments))
        } else {
            match named.iter().find(|(key, _)| *key == &after[..upper]) {
                Some((_, value)) if upper > 0 => {
                    used = true;
                    (upper, Some(*value))
                }
                _ => (0, None),
            }
        };
        match text {
            Some(text) => out.push_str(text),
            None => out.push('$'),
        }
        if out.len() > max {
            return None;
        }
        rest = &after[taken..];
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.truncate(out.trim_end().len());
        out.push_str("\n\n");
        out.push_str(arguments);
    }
    (out.len() <= max).then_some(out)
}

/// Whether `key` can name a placeholder: capitals, digits and `_`,
/// starting with a capital.
fn is_placeholder_name(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_uppercase())
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// How a prompt a command of `scope` made is sent: as the person's words,
/// or as the project's, for which nothing outside the project is read
/// (ADR 0055).
pub fn sent_as(scope: CommandScope) -> fn(String) -> UiCommand {
    match scope {
        CommandScope::Person => |text| UiCommand::Prompt { text },
        CommandScope::Project => |text| UiCommand::ProjectPrompt { text },
    }
}

/// The notice that says what of `command`'s file is not done, if
/// anything is: said when it is used (ADR 0053).
pub fn ignored_notice(command: &CustomCommand) -> Option<String> {
    (!command.ignored.is_empty()).then(|| {
        format!(
            "/{}: {} not honoured — dashfloat runs and allows nothing a command file asks; its text is sent as written",
            command.name,
            command.ignored.join(", ")
        )
    })
}

/// `arguments` split at white space, a double- or single-quoted group
/// (`"two words"`) one word without its quotes.
fn split_words(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut open = false;
    for c in arguments.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                open = true;
            }
            None if c.is_whitespace() => {
                if open {
                    words.push(std::mem::take(&mut word));
                    open = false;
                }
            }
            None => {
                word.push(c);
                open = true;
            }
        }
    }
    if open {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const MAX: usize = 1 << 20;

    #[test]
    fn arguments_fill_every_placeholder() {
        assert_eq!(
            expand(
                "Review $1 against $2 ($ARGUMENTS)",
                "src/a.rs \"the spec\"",
                MAX
            )
            .unwrap(),
            "Review src/a.rs against the spec (src/a.rs \"the spec\")"
        );
        assert_eq!(
            expand("Fix issue #$1 now; $3 is empty", "42", MAX).unwrap(),
            "Fix issue #42 now;  is empty"
        );
        assert_eq!(
            expand("Cost: $$5 and $PATH stays", "", MAX).unwrap(),
            "Cost: $5 and $PATH stays"
        );
        assert_eq!(
            expand(
                "Ticket $TICKET for $OWNER",
                "TICKET=DF-12 OWNER='Ann Lee'",
                MAX
            )
            .unwrap(),
            "Ticket DF-12 for Ann Lee"
        );
    }

    #[test]
    fn a_template_without_placeholders_gets_the_arguments_after_it() {
        assert_eq!(
            expand("Explain this code.\n", "src/lib.rs", MAX).unwrap(),
            "Explain this code.\n\nsrc/lib.rs"
        );
        assert_eq!(
            expand("Explain this code.\n", " ", MAX).unwrap(),
            "Explain this code.\n"
        );
    }

    #[test]
    fn a_prompt_past_the_bound_is_not_made() {
        let repeated = "$ARGUMENTS".repeat(1_000);
        assert_eq!(expand(&repeated, &"x".repeat(100), 50_000), None);
        assert_eq!(expand("$1", "abc", 3).as_deref(), Some("abc"));
        assert_eq!(expand("say", "more", 8), None);
    }

    #[test]
    fn front_matter_is_read_and_what_would_run_is_named() {
        let parsed = parse(
            "---\ndescription: \"Review a file\"\nargument-hint: [file]\nallowed-tools: Bash(git diff:*)\nmodel: opus\n---\n\nStatus: !`git status`\nReview $ARGUMENTS\n",
        );
        assert_eq!(parsed.description, "Review a file");
        assert_eq!(parsed.argument_hint, "[file]");
        assert_eq!(
            parsed.template,
            "Status: !`git status`\nReview $ARGUMENTS\n"
        );
        assert_eq!(
            parsed.ignored,
            ["`allowed-tools`", "`model`", "the ``!`command` `` lines"]
        );
    }

    #[test]
    fn without_front_matter_the_first_line_describes_it() {
        let parsed = parse("# Write the changelog\n\nFrom the last tag on.");
        assert_eq!(parsed.description, "Write the changelog");
        assert_eq!(
            parsed.template,
            "# Write the changelog\n\nFrom the last tag on."
        );
        assert!(parsed.ignored.is_empty());
        let unclosed = parse("---\nnot front matter");
        assert_eq!(unclosed.template, "---\nnot front matter");
    }
}
