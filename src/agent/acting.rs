//! Doing, not advising: a prompt that asks for a change or a run, answered
//! at first with words and no call, is asked once to act (ADR 0049). A
//! small model asked to fix a crash explains how one might; asked once
//! more, it makes the call.

/// Words that ask for something to be done to the project, when the prompt
/// is not a question about them.
const ACTING_VERBS: [&str; 28] = [
    "add",
    "append",
    "apply",
    "build",
    "bump",
    "change",
    "correct",
    "create",
    "delete",
    "edit",
    "execute",
    "fix",
    "format",
    "implement",
    "insert",
    "install",
    "make",
    "modify",
    "move",
    "refactor",
    "remove",
    "rename",
    "repair",
    "replace",
    "run",
    "set",
    "update",
    "write",
];

/// First words that make a prompt a question or a request for words,
/// whatever verbs follow ("how do I run the tests?").
const ASKING_WORDS: [&str; 20] = [
    "how", "what", "why", "which", "where", "when", "who", "whose", "is", "are", "was", "does",
    "do", "did", "should", "explain", "describe", "tell", "show", "list",
];

/// The note that asks the model to act: a user message of dashfloat's,
/// not the person's prompt.
pub(super) const ACT_NOW_NOTE: &str = "Do it now with your tools: make the change (edit_file, \
write_file) or run the command (execute_command) instead of describing it. If you need something \
from me first, ask.";

/// The words of `prompt`, in lower case.
fn words(prompt: &str) -> impl Iterator<Item = String> + '_ {
    prompt
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Whether `prompt` asks for something to be changed, created or run.
pub(super) fn asks_to_act(prompt: &str) -> bool {
    let mut words = words(prompt);
    let Some(first) = words.next() else {
        return false;
    };
    if ASKING_WORDS.contains(&first.as_str()) {
        return false;
    }
    std::iter::once(first)
        .chain(words)
        .any(|w| ACTING_VERBS.contains(&w.as_str()))
}

/// Whether `prompt` only asks a question: it opens as one (or ends with a
/// question mark) and holds none of the verbs that ask for a change or a
/// run anywhere ("What is wrong? Fix it." asks for a change).
pub(super) fn only_asks(prompt: &str) -> bool {
    let opens_as_one = words(prompt)
        .next()
        .is_some_and(|first| ASKING_WORDS.contains(&first.as_str()));
    (opens_as_one || prompt.trim_end().ends_with('?'))
        && !words(prompt).any(|w| ACTING_VERBS.contains(&w.as_str()))
}

/// Whether `reply`, which made no call, only advises: it has words and
/// asks the person nothing.
pub(super) fn only_advises(reply: &str) -> bool {
    !reply.trim().is_empty() && !reply.contains('?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_to_change_or_run_asks_to_act_and_a_question_does_not() {
        for prompt in [
            "Fix the spelling mistake 'recieve' in docs/notes.txt",
            "Find and fix the cause of the crash of `python3 -m demo`",
            "Add a function named double to inventory/pricing.py",
            "Can you run the tests?",
            "please create hello.txt",
            "Change the server port in config.toml to 9000.",
        ] {
            assert!(asks_to_act(prompt), "{prompt}");
        }
        for prompt in [
            "How do I run the tests?",
            "What does this project do?",
            "Which file defines apply_discount?",
            "Explain how to fix it",
            "",
            "hello",
            "fixture names in tests/",
        ] {
            assert!(!asks_to_act(prompt), "{prompt}");
        }
    }

    #[test]
    fn a_question_without_a_verb_of_change_only_asks() {
        for prompt in [
            "Which file defines the function apply_discount?",
            "List the files in the inventory folder.",
            "What is the value of TAX_RATE in this project?",
            "Is the cache on by default?",
        ] {
            assert!(only_asks(prompt), "{prompt}");
        }
        for prompt in [
            "What is wrong with it? Fix it.",
            "How do I add a route?",
            "Can you run the tests?",
            "Rename total_value to inventory_value",
            "The tests fail",
            "",
        ] {
            assert!(!only_asks(prompt), "{prompt}");
        }
    }

    #[test]
    fn a_reply_that_asks_the_person_is_not_advice() {
        assert!(only_advises("Install the package, then run it."));
        assert!(!only_advises("Which file do you mean?"));
        assert!(!only_advises("  \n"));
    }
}
