//! A cursor over held text for the syntaxes' small grammars. Every step
//! says whether the text matched, did not, or ended too soon to tell, so a
//! grammar gives the same answer however the text was chunked.

/// The answer of one grammar step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step<T> {
    /// The text matched, giving this.
    Yes(T),
    /// The text cannot match.
    No,
    /// The text ended before it could tell.
    More,
}

/// Returns early from a grammar with `No` or `More`; yields the value of
/// `Yes`.
macro_rules! take {
    ($step:expr) => {
        match $step {
            $crate::llm::adapters::cursor::Step::Yes(value) => value,
            $crate::llm::adapters::cursor::Step::No => {
                return $crate::llm::adapters::cursor::Step::No;
            }
            $crate::llm::adapters::cursor::Step::More => {
                return $crate::llm::adapters::cursor::Step::More;
            }
        }
    };
}
pub(super) use take;

/// A position in held text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub(super) fn new(text: &'a str) -> Self {
        Self { text, at: 0 }
    }

    /// Bytes consumed so far.
    pub(super) fn at(&self) -> usize {
        self.at
    }

    /// What is left.
    pub(super) fn rest(&self) -> &'a str {
        self.text.get(self.at..).unwrap_or("")
    }

    /// The next character, if the text has one.
    pub(super) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Skips JSON whitespace (space, tab, LF, CR).
    pub(super) fn ws(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        self.at += rest.len() - trimmed.len();
    }

    /// Skips whitespace, then requires that a character follows (so a
    /// decision never rests on whitespace that may continue).
    pub(super) fn ws_then_more(&mut self) -> Step<()> {
        self.ws();
        if self.rest().is_empty() {
            Step::More
        } else {
            Step::Yes(())
        }
    }

    /// Consumes `literal`.
    pub(super) fn lit(&mut self, literal: &str) -> Step<()> {
        let rest = self.rest();
        if rest.starts_with(literal) {
            self.at += literal.len();
            Step::Yes(())
        } else if literal.starts_with(rest) {
            Step::More
        } else {
            Step::No
        }
    }

    /// Consumes the first of `literals` that matches, giving its position.
    pub(super) fn one_of(&mut self, literals: &[&str]) -> Step<usize> {
        let mut more = false;
        for (n, literal) in literals.iter().enumerate() {
            match self.lit(literal) {
                Step::Yes(()) => return Step::Yes(n),
                Step::More => more = true,
                Step::No => {}
            }
        }
        if more { Step::More } else { Step::No }
    }

    /// Consumes a tool name: one or more of `A-Z a-z 0-9 _ - .`, ended by
    /// any other character (which is not consumed).
    pub(super) fn name(&mut self) -> Step<&'a str> {
        let rest = self.rest();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(rest.len());
        if end == rest.len() {
            return Step::More;
        }
        if end == 0 {
            return Step::No;
        }
        self.at += end;
        Step::Yes(&rest[..end])
    }

    /// Consumes a JSON string literal, giving its value.
    pub(super) fn json_string(&mut self) -> Step<String> {
        let rest = self.rest();
        if rest.is_empty() {
            return Step::More;
        }
        if !rest.starts_with('"') {
            return Step::No;
        }
        let mut escape = false;
        for (i, c) in rest.char_indices().skip(1) {
            if escape {
                escape = false;
            } else if c == '\\' {
                escape = true;
            } else if c == '"' {
                let literal = &rest[..=i];
                return match serde_json::from_str::<String>(literal) {
                    Ok(value) => {
                        self.at += literal.len();
                        Step::Yes(value)
                    }
                    Err(_) => Step::No,
                };
            }
        }
        Step::More
    }
}

/// The largest char boundary of `text` at or below `at`.
pub(super) fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_cut_short_asks_for_more() {
        assert_eq!(Cursor::new("</tool").lit("</tool_call>"), Step::More);
        assert_eq!(Cursor::new("</x").lit("</tool_call>"), Step::No);
        assert_eq!(
            Cursor::new("</tool_call>!").lit("</tool_call>"),
            Step::Yes(())
        );
    }

    #[test]
    fn a_name_needs_the_character_after_it() {
        assert_eq!(Cursor::new("read_file").name(), Step::More);
        assert_eq!(Cursor::new("read_file\n").name(), Step::Yes("read_file"));
        assert_eq!(Cursor::new("{").name(), Step::No);
    }

    #[test]
    fn json_strings_unescape() {
        assert_eq!(
            Cursor::new(r#""a\"b" "#).json_string(),
            Step::Yes("a\"b".to_string())
        );
        assert_eq!(Cursor::new(r#""a\"#).json_string(), Step::More);
    }

    #[test]
    fn boundaries_fall_back_to_a_char_start() {
        assert_eq!(floor_boundary("aé", 2), 1);
        assert_eq!(floor_boundary("aé", 9), 3);
    }
}
