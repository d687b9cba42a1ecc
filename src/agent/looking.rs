//! Answers from what was read: a question about a name (`merge_patches`,
//! `TAX_RATE`, Redis) answered with that name when no tool result has
//! shown it is asked once to look (ADR 0049). A small model asked which
//! file defines a function read one file that does not hold it, and named
//! that file.

use serde_json::Value;

use crate::tools::ToolResult;

/// A name a question asks about, which an answer should come from a tool
/// result for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Name {
    /// The name as the question wrote it.
    text: String,
    /// A word, not code: any case matches (`Redis`, `redis`).
    any_case: bool,
}

impl Name {
    /// The name as the question wrote it.
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// Whether `text` holds the name.
    fn in_text(&self, text: &str) -> bool {
        if self.any_case {
            text.to_lowercase().contains(&self.text.to_lowercase())
        } else {
            text.contains(&self.text)
        }
    }

    /// Whether `result` shows the name in what its tool read or found.
    pub(super) fn shown_by(&self, result: &ToolResult) -> bool {
        result.found_text().iter().any(|text| self.in_text(text))
    }
}

/// Phrases of an answer that says what was asked about was not found.
const NOT_FOUND: [&str; 14] = [
    "not found",
    "not find",
    "n't find",
    "no such",
    "not defined",
    "no definition",
    "not exist",
    "n't exist",
    "not in the project",
    "unable to find",
    "cannot find",
    "can't find",
    "could not locate",
    "not present",
];

/// The note that asks the model to look for `name`: a user message of
/// dashfloat's, not the person's prompt.
pub(super) fn look_note(name: &str) -> String {
    format!(
        "No tool result so far shows `{name}`, so that answer is not from the project. Search \
         for it (grep) before you answer; if it is not in the project, say you did not find it."
    )
}

/// The names `prompt` asks about: code names (with an underscore, or in
/// camelCase, or in backticks) and capitalised words inside a sentence.
/// A path or a file name (`src/a_b.py`) is none: its text is not in what
/// reading it returns.
fn names(prompt: &str) -> Vec<Name> {
    let mut names: Vec<Name> = Vec::new();
    let mut sentence_start = true;
    for chunk in prompt.split_whitespace() {
        let quoted = chunk.starts_with('`');
        let word = chunk.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        let ends_sentence = chunk.ends_with(['.', '?', '!', ':']);
        let first = std::mem::replace(&mut sentence_start, ends_sentence);
        let is_ident = word.len() >= 3
            && word.chars().all(|c| c.is_alphanumeric() || c == '_')
            && word.chars().any(char::is_alphabetic);
        if !is_ident || names.iter().any(|n| n.text == word) {
            continue;
        }
        let camel = word
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
        let mut letters = word.chars().filter(|c| c.is_alphabetic());
        let capitalised =
            letters.next().is_some_and(char::is_uppercase) && letters.all(char::is_lowercase);
        let name = if quoted || word.contains('_') || camel {
            Name {
                text: word.to_owned(),
                any_case: false,
            }
        } else if capitalised && !first {
            Name {
                text: word.to_owned(),
                any_case: true,
            }
        } else {
            continue;
        };
        names.push(name);
    }
    names
}

/// The keys of a result that echo the call rather than show what it
/// found, and a search's advice.
const ECHOES: [&str; 6] = ["pattern", "path", "include", "command", "cwd", "next"];

/// The names `prompt` asks about that none of `results`, the tool
/// messages of the conversation so far, shows.
pub(super) fn unseen_names(prompt: &str, results: &[&str]) -> Vec<Name> {
    let mut names = names(prompt);
    if names.is_empty() {
        return names;
    }
    for result in results {
        let mut shown = Vec::new();
        let value = serde_json::from_str::<Value>(result);
        match &value {
            Ok(value) => found_strings(value, &mut shown),
            Err(_) => shown.push(result),
        }
        names.retain(|name| !shown.iter().any(|text| name.in_text(text)));
    }
    names
}

/// The strings of a result that worked, but for those that echo its call
/// ([`ECHOES`]); none of a failure, whose words may echo what was asked
/// for.
fn found_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| found_strings(item, out)),
        Value::Object(map) if map.get("ok") != Some(&Value::Bool(false)) => {
            for (key, item) in map {
                if !ECHOES.contains(&key.as_str()) {
                    found_strings(item, out);
                }
            }
        }
        _ => {}
    }
}

/// The first of `names` that `answer` names as if found, when it does not
/// say it found nothing.
pub(super) fn unfounded<'a>(names: &'a [Name], answer: &str) -> Option<&'a Name> {
    let lower = answer.to_lowercase();
    if NOT_FOUND.iter().any(|phrase| lower.contains(phrase)) {
        return None;
    }
    names.iter().find(|name| name.in_text(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(prompt: &str) -> Vec<String> {
        names(prompt).iter().map(|n| n.text.clone()).collect()
    }

    #[test]
    fn code_names_and_capitalised_words_inside_a_sentence_are_names() {
        assert_eq!(
            texts("Which file defines the function merge_patches?"),
            ["merge_patches"]
        );
        assert_eq!(
            texts("What is the value of TAX_RATE in this project?"),
            ["TAX_RATE"]
        );
        assert_eq!(
            texts("Which file configures the Redis connection?"),
            ["Redis"]
        );
        assert_eq!(
            texts("Where is `parse` called? And fromString?"),
            ["parse", "fromString"]
        );
        for none in [
            "What does this project do?",
            "What is in tests/test_pricing.py?",
            "Read README.md and tell me the version.",
            "Redis: where is it set up?",
        ] {
            assert_eq!(texts(none), Vec::<String>::new(), "{none}");
        }
    }

    #[test]
    fn a_result_shows_what_it_found_not_what_its_call_asked_for() {
        let unseen = |results: &[&str]| {
            unseen_names("Where is merge_patches?", results)
                .iter()
                .map(|n| n.text.clone())
                .collect::<Vec<_>>()
        };
        let grep_echo = r#"{"ok":true,"pattern":"merge_patches","path":".","matches":""}"#;
        let failed = r#"{"ok":false,"error":"merge_patches: no such file"}"#;
        assert_eq!(unseen(&[grep_echo, failed]), ["merge_patches"]);
        let read = r#"{"ok":true,"path":"a.py","content":"def merge_patches():"}"#;
        assert!(unseen(&[read]).is_empty());
        assert!(unseen(&["[Old tool result: merge_patches]"]).is_empty());
    }

    #[test]
    fn an_answer_naming_the_name_is_unfounded_unless_it_says_it_found_nothing() {
        let asked = names("Which file defines merge_patches, and where is Redis set?");
        let name = |answer| unfounded(&asked, answer).map(Name::text);
        assert_eq!(
            name("`merge_patches` is defined in unidiff/__init__.py."),
            Some("merge_patches")
        );
        assert_eq!(name("The redis URL is in config.toml"), Some("Redis"));
        assert_eq!(name("I could not find merge_patches anywhere."), None);
        assert_eq!(name("merge_patches doesn't exist in this project"), None);
        assert_eq!(name("It is in unidiff/patch.py."), None);
    }
}
