//! Completing `@path` in the input box from the project's files, which the
//! agent sends (`AgentEvent::ProjectFiles`). A file named with `@` is read
//! for the model before it starts (ADR 0038); the popup saves typing the
//! path and guessing its spelling.

/// Matches kept for the popup at most; the popup scrolls through them.
const MENTION_MATCHES_MAX: usize = 50;

/// The `@` word at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    /// Where its path starts: just after the `@`.
    start: usize,
    /// What is typed of the path, without the quote that opens it.
    typed: String,
    /// The path is in quotes (`@"my notes`): a path with spaces.
    quoted: bool,
}

/// The `@` popup: the project's files, the word being completed and its
/// matches. It follows the input: an edit matches afresh.
#[derive(Debug, Clone, Default)]
pub struct Mention {
    /// The project's files and folders (folders end with `/`), the
    /// shallowest first.
    files: Vec<String>,
    /// The same, lower-cased, for matching.
    lower: Vec<String>,
    /// The word being completed.
    word: Option<Word>,
    /// Indexes into `files` of the matches, best first.
    matches: Vec<usize>,
    /// The selected match.
    selected: usize,
    /// Esc closed the popup for this word.
    closed: bool,
}

impl Mention {
    /// Takes a new list of the project's files; the word typed is matched
    /// against it afresh, the selected path kept where it still matches.
    pub fn set_files(&mut self, files: Vec<String>) {
        let chosen = self.candidates().get(self.selected).map(|&p| p.to_owned());
        self.lower = files.iter().map(|f| f.to_lowercase()).collect();
        self.files = files;
        self.rematch();
        if let Some(chosen) = chosen {
            self.selected = self
                .candidates()
                .iter()
                .position(|&p| p == chosen)
                .unwrap_or(0);
        }
    }

    /// Catches up with the input: the word before the cursor, when it
    /// starts with `@` (at the start of the text or after white space),
    /// is the one completed; so is a quote opened by such an `@` and not
    /// closed yet (`@"my no`). A different word opens the popup only when
    /// `typing` made it (a character typed or deleted there); one the
    /// cursor or a recalled prompt lands on leaves it shut.
    pub fn follow(&mut self, text: &str, cursor: usize, typing: bool) {
        let before = text.get(..cursor).unwrap_or_default();
        let word = open_quote(before).or_else(|| {
            let start = before.rfind(char::is_whitespace).map_or(0, |at| {
                at + before[at..].chars().next().map_or(1, char::len_utf8)
            });
            before[start..].strip_prefix('@').map(|typed| Word {
                start: start + 1,
                typed: typed.to_owned(),
                quoted: false,
            })
        });
        if word != self.word {
            self.word = word.filter(|_| typing);
            self.closed = false;
            self.rematch();
        }
    }

    /// The matches the popup shows, best first; empty while it is closed
    /// or no `@` word is typed.
    pub fn candidates(&self) -> Vec<&str> {
        if !self.is_open() {
            return Vec::new();
        }
        self.matches
            .iter()
            .map(|&i| self.files[i].as_str())
            .collect()
    }

    /// Whether the popup shows anything: cheaper than asking for the
    /// candidates.
    pub fn is_open(&self) -> bool {
        !self.closed && self.word.is_some() && !self.matches.is_empty()
    }

    /// The selected match's place in [`Mention::candidates`].
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// Esc: closes the popup until the word changes.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// ↑ / ↓: moves the selection, wrapping.
    pub fn step(&mut self, down: bool) {
        let count = self.matches.len();
        if count > 0 {
            self.selected = if down {
                (self.selected + 1) % count
            } else {
                (self.selected + count - 1) % count
            };
        }
    }

    /// Tab or Enter: where the typed path starts and what replaces it, the
    /// selected match (a file followed by a space; a folder without one,
    /// so its files can be completed next), in quotes when it has spaces
    /// or the quote is open already (a folder's left open), while the
    /// popup is open and the word is not that path already (Enter then
    /// sends the prompt).
    pub fn accept(&self) -> Option<(usize, String)> {
        let path = *self.candidates().get(self.selected)?;
        let word = self.word.as_ref()?;
        let folder = path.ends_with('/');
        // A quoted file's path is not done until its quote is closed; a
        // quoted folder's stays open for its files.
        if word.typed == path && (!word.quoted || folder) {
            return None;
        }
        let with = if word.quoted || path.contains(char::is_whitespace) {
            let close = if folder { "" } else { "\" " };
            format!("\"{path}{close}")
        } else {
            let space = if folder { "" } else { " " };
            format!("{path}{space}")
        };
        Some((word.start, with))
    }

    /// Matches the typed word: paths that start with it, then paths whose
    /// last part starts with it, then paths that hold it, case aside, each
    /// group in the list's order, at most [`MENTION_MATCHES_MAX`].
    fn rematch(&mut self) {
        self.selected = 0;
        self.matches.clear();
        let Some(word) = &self.word else {
            return;
        };
        let typed = word.typed.to_lowercase();
        let rank = |path: &str| -> Option<u8> {
            let name = path.trim_end_matches('/');
            let name = name.rsplit('/').next().unwrap_or(name);
            if path.starts_with(&typed) {
                Some(0)
            } else if name.starts_with(&typed) {
                Some(1)
            } else if path.contains(&typed) {
                Some(2)
            } else {
                None
            }
        };
        // One pass over the list, each group kept to the bound.
        let mut groups: [Vec<usize>; 3] = Default::default();
        for (i, path) in self.lower.iter().enumerate() {
            if let Some(group) = rank(path).map(usize::from)
                && groups[group].len() < MENTION_MATCHES_MAX
            {
                groups[group].push(i);
            }
        }
        self.matches = groups.concat();
        self.matches.truncate(MENTION_MATCHES_MAX);
    }
}

/// The path being typed in quotes at the end of `before` (`fix @"my no`):
/// an `@` at the start or after white space, then a quote not closed yet
/// on this line.
fn open_quote(before: &str) -> Option<Word> {
    let at = before.rfind("@\"")?;
    let typed = &before[at + 2..];
    let opens_word = before[..at]
        .chars()
        .next_back()
        .is_none_or(char::is_whitespace);
    (opens_word && !typed.contains(['"', '\n'])).then(|| Word {
        start: at + 1,
        typed: typed.to_owned(),
        quoted: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mention(files: &[&str], text: &str) -> Mention {
        let mut m = Mention::default();
        m.set_files(files.iter().map(|f| (*f).to_owned()).collect());
        m.follow(text, text.len(), true);
        m
    }

    #[test]
    fn the_word_at_the_cursor_that_starts_with_at_is_completed() {
        let files = ["README.md", "lib/", "lib/slug.js", "test/slug.test.js"];
        assert_eq!(
            mention(&files, "fix @sl").candidates(),
            ["lib/slug.js", "test/slug.test.js"]
        );
        assert_eq!(mention(&files, "@").candidates(), files);
        assert_eq!(
            mention(&files, "see @LIB").candidates(),
            ["lib/", "lib/slug.js"]
        );
        assert_eq!(
            mention(&files, "@.test").candidates(),
            ["test/slug.test.js"]
        );
        for text in ["fix sl", "me@sl", "fix @sl ", "@nothing"] {
            assert!(mention(&files, text).candidates().is_empty(), "{text}");
        }
    }

    #[test]
    fn accepting_puts_the_path_after_the_at() {
        let mut m = mention(&["lib/", "lib/slug.js", "lib/x.js"], "fix\t@li");
        assert_eq!(m.accept(), Some((5, "lib/".to_owned())));
        m.step(true);
        assert_eq!(m.accept(), Some((5, "lib/slug.js ".to_owned())));
        m.step(false);
        m.step(false);
        assert_eq!(m.accept(), Some((5, "lib/x.js ".to_owned())));
        m.close();
        assert_eq!(m.accept(), None);
        m.follow("fix\t@lib", 8, true);
        assert_eq!(m.candidates().len(), 3, "a new word opens it again");
    }

    #[test]
    fn a_path_with_spaces_is_completed_in_quotes() {
        let files = ["my docs/", "my docs/read me.md", "notes.md"];
        let mut m = mention(&files, "see @my");
        assert_eq!(m.accept(), Some((5, "\"my docs/".to_owned())));
        m.follow("see @\"my docs/re", 16, true);
        assert_eq!(m.candidates(), ["my docs/read me.md"]);
        assert_eq!(m.accept(), Some((5, "\"my docs/read me.md\" ".to_owned())));
        let whole = "see @\"my docs/read me.md";
        m.follow(whole, whole.len(), true);
        assert_eq!(
            m.accept(),
            Some((5, "\"my docs/read me.md\" ".to_owned())),
            "the quote is closed even when the path is typed whole"
        );
        let folder = "see @\"my docs/";
        m.follow(folder, folder.len(), true);
        assert_eq!(m.candidates()[0], "my docs/");
        assert_eq!(m.accept(), None, "Enter sends once the folder is there");
        m.follow("see @\"notes", 11, true);
        assert_eq!(m.accept(), Some((5, "\"notes.md\" ".to_owned())));
        for text in ["see @\"my docs/read me.md\" ", "a@\"my", "@\"my\nx"] {
            assert!(mention(&files, text).candidates().is_empty(), "{text}");
        }
    }

    #[test]
    fn the_matches_are_bounded() {
        let files: Vec<String> = (0..MENTION_MATCHES_MAX + 5)
            .map(|n| format!("f{n}.rs"))
            .collect();
        let mut m = Mention::default();
        m.set_files(files);
        m.follow("@f", 2, true);
        assert_eq!(m.candidates().len(), MENTION_MATCHES_MAX);
    }
}
