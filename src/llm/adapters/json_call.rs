//! What the JSON syntaxes share: a call written as the object
//! `{"name": NAME, "arguments": {…}}` (or `"parameters"`), alone or in a
//! JSON array, and the scanner that finds where an arguments value ends.

use super::cursor::{Cursor, Step, take};
use super::offered::OfferedTools;
use super::{CallHead, Shape, Tail};

/// The keys a call's arguments may be written under.
const ARGUMENT_KEYS: [&str; 2] = ["\"arguments\"", "\"parameters\""];

/// Reads `{ "name": NAME , "arguments":` up to the first character of the
/// arguments value. With `array` a `[` may come first (several calls).
/// The name must be an offered tool unless `any_name` (a later element of
/// an array already taken as calls: an unknown name is then the tool
/// validator's `unknown_tool`, not prose).
pub(super) fn head(
    text: &str,
    offered: &OfferedTools,
    array: bool,
    any_name: bool,
) -> Step<CallHead> {
    let mut c = Cursor::new(text);
    take!(c.ws_then_more());
    let list = array && take!(c.one_of(&["[", "{"])) == 0;
    if list {
        take!(c.ws_then_more());
        take!(c.lit("{"));
    } else if !array {
        take!(c.lit("{"));
    }
    take!(c.ws_then_more());
    take!(c.lit("\"name\""));
    take!(c.ws_then_more());
    take!(c.lit(":"));
    take!(c.ws_then_more());
    let name = take!(c.json_string());
    if !any_name && !offered.contains(&name) {
        return Step::No;
    }
    take!(c.ws_then_more());
    take!(c.lit(","));
    take!(c.ws_then_more());
    take!(c.one_of(&ARGUMENT_KEYS));
    take!(c.ws_then_more());
    take!(c.lit(":"));
    take!(c.ws_then_more());
    Step::Yes(CallHead {
        name,
        len: c.at(),
        shape: if list { Shape::List } else { Shape::Object },
    })
}

/// Reads what closes a call object: `}`, then in an array either `,`
/// (another call follows) or `]`.
pub(super) fn object_end(c: &mut Cursor<'_>, list: bool) -> Step<Tail> {
    take!(c.ws_then_more());
    take!(c.lit("}"));
    if !list {
        return Step::Yes(Tail::Done(c.at()));
    }
    take!(c.ws_then_more());
    match take!(c.one_of(&[",", "]"])) {
        0 => {
            // The whitespace after the comma is the separator's, however
            // the stream was cut (found by fuzzing, ADR 0036).
            take!(c.ws_then_more());
            Step::Yes(Tail::Next(c.at()))
        }
        _ => Step::Yes(Tail::Done(c.at())),
    }
}

/// Where an arguments value stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ValueEnd {
    /// The value is whole: it ends where the scan stopped.
    Whole,
    /// A closer of the syntax, this many bytes long, starts where the scan
    /// stopped, outside any string, before the value was whole: the value
    /// is malformed and ends there.
    Closer(usize),
}

/// Finds the end of one JSON value streamed in pieces: tracks strings,
/// escapes and nesting, and nothing else, so malformed JSON is passed on
/// as written for the validator to report.
#[derive(Debug, Clone, Default)]
pub(super) struct ValueScanner {
    depth: usize,
    in_string: bool,
    escape: bool,
    started: bool,
    bare: bool,
}

impl ValueScanner {
    /// Scans `text`, the value's next unscanned bytes. Returns how many of
    /// them belong to the value, and whether it ended there. Stops short
    /// (with `None`) before a possible start of one of `closers` that the
    /// text ends inside.
    pub(super) fn scan(&mut self, text: &str, closers: &[&str]) -> (usize, Option<ValueEnd>) {
        for (i, c) in text.char_indices() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if c == '\\' {
                    self.escape = true;
                } else if c == '"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return (i + 1, Some(ValueEnd::Whole));
                    }
                }
                continue;
            }
            let rest = &text[i..];
            for closer in closers {
                if rest.starts_with(closer) {
                    return (i, Some(ValueEnd::Closer(closer.len())));
                }
                if closer.starts_with(rest) {
                    return (i, None);
                }
            }
            if !self.started {
                self.started = true;
                match c {
                    '{' | '[' => self.depth = 1,
                    '"' => self.in_string = true,
                    _ => self.bare = true,
                }
                continue;
            }
            if self.bare {
                if matches!(c, ',' | '}' | ']' | ' ' | '\t' | '\n' | '\r') {
                    return (i, Some(ValueEnd::Whole));
                }
                continue;
            }
            match c {
                '{' | '[' => self.depth += 1,
                '}' | ']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return (i + 1, Some(ValueEnd::Whole));
                    }
                }
                '"' => self.in_string = true,
                _ => {}
            }
        }
        (text.len(), None)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// Tools offered to the unit tests of the text adapters: `read_file`.
    pub(in crate::llm::adapters) fn offered() -> OfferedTools {
        OfferedTools::from_definitions(&json!([
            {"type": "function", "function": {"name": "read_file"}}
        ]))
    }

    #[test]
    fn a_head_ends_at_the_arguments_value() {
        let text = "{\"name\": \"read_file\", \"arguments\": {\"path\": 1}}";
        let Step::Yes(head) = head(text, &offered(), false, false) else {
            panic!("not a call");
        };
        assert_eq!(head.name, "read_file");
        assert_eq!(&text[head.len..], "{\"path\": 1}}");
    }

    #[test]
    fn a_name_that_is_no_tool_is_no_call_unless_any_name_goes() {
        let text = "{\"name\": \"my-app\", \"arguments\": {}}";
        assert_eq!(head(text, &offered(), false, false), Step::No);
        assert!(matches!(head(text, &offered(), false, true), Step::Yes(_)));
    }

    #[test]
    fn other_keys_first_are_no_call() {
        let text = "{\"version\": 1, \"name\": \"read_file\"}";
        assert_eq!(head(text, &offered(), false, false), Step::No);
    }

    #[test]
    fn the_scanner_skips_braces_in_strings() {
        let mut scanner = ValueScanner::default();
        let text = r#"{"a": "}\"{"} tail"#;
        assert_eq!(scanner.scan(text, &[]), (13, Some(ValueEnd::Whole)));
    }

    #[test]
    fn the_scanner_stops_at_a_closer_outside_strings() {
        let mut scanner = ValueScanner::default();
        let text = "{\"a\": \"```\" ```";
        assert_eq!(
            scanner.scan(text, &["```"]),
            (12, Some(ValueEnd::Closer(3)))
        );
        let mut scanner = ValueScanner::default();
        assert_eq!(scanner.scan("{\"a\": 1 `", &["```"]), (8, None));
    }
}
