//! The tree-sitter half of the check: a parse bounded in time, and the
//! places its tree marks as errors. A grammar is static data in the
//! binary, used only when a file of its language is checked: nothing of it
//! runs at start-up.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Language, Node, ParseOptions, ParseState, Parser, Tree};

use super::{Place, SYNTAX_PARSE_TIMEOUT, SYNTAX_PLACES_MAX, short};

/// The most of a token a problem quotes (24 bytes): enough to recognise
/// it, short of another excerpt.
const TOKEN_MAX_BYTES: usize = 24;

/// Where `text` fails to parse in `grammar`, in no particular order, at
/// most [`SYNTAX_PLACES_MAX`]; `None` when the parse did not finish within
/// [`SYNTAX_PARSE_TIMEOUT`] (or the grammar does not load).
pub(super) fn places(grammar: Language, text: &[u8]) -> Option<Vec<Place>> {
    let tree = parse(&grammar, text, SYNTAX_PARSE_TIMEOUT)?;
    let mut places = Vec::new();
    let mut cursor = tree.walk();
    // Depth first, iteratively (nesting can be as deep as the file is
    // long), into the subtrees that hold an error only.
    'walk: loop {
        let node = cursor.node();
        if let Some(place) = place_of(node, text) {
            places.push(place);
            if places.len() == SYNTAX_PLACES_MAX {
                break;
            }
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    Some(places)
}

/// Parses `text`, giving up (`None`) once it has taken longer than
/// `within`: tree-sitter asks every hundred steps whether to go on.
fn parse(language: &Language, text: &[u8], within: Duration) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(language).ok()?;
    let started = Instant::now();
    let mut in_time = |_: &ParseState| {
        if started.elapsed() > within {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    parser.parse_with_options(
        &mut |offset, _| text.get(offset..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut in_time)),
    )
}

/// The error `node` is, if it is one. A token the grammar expected and
/// the parser made up is missing where it was expected. Text the parser
/// could not fit is an ERROR node, which may hold well-formed pieces: it
/// is placed at its first token of its own (the tokens that did not fit),
/// else at its first piece; errors inside it are places of their own.
fn place_of(node: Node, text: &[u8]) -> Option<Place> {
    if node.is_missing() {
        let problem = if node.is_named() {
            format!("missing {}", node.kind())
        } else {
            format!("missing \"{}\"", node.kind())
        };
        let line = node.start_position().row + 1;
        return Some(Place {
            line,
            last_line: line,
            problem,
        });
    }
    if !node.is_error() {
        return None;
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node
        .children(&mut cursor)
        .filter(|child| !child.is_extra())
        .collect();
    let first = children
        .iter()
        .find(|child| child.child_count() == 0)
        .or(children.first())
        .copied()
        .unwrap_or(node);
    let token = first_token(first);
    let quoted = short(token.utf8_text(text).unwrap_or_default(), TOKEN_MAX_BYTES);
    let problem = if quoted.is_empty() {
        "cannot be parsed".to_owned()
    } else {
        format!("unexpected \"{quoted}\"")
    };
    Some(Place {
        line: token.start_position().row + 1,
        last_line: node.end_position().row + 1,
        problem,
    })
}

/// The first token of `node`: itself when it has no children.
fn first_token(node: Node) -> Node {
    let mut token = node;
    while let Some(child) = token.child(0) {
        token = child;
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parse past its time is given up: with no time at all, the first
    /// time tree-sitter asks (after a hundred steps, well inside this
    /// text), whatever the machine's speed; with an hour, it finishes.
    #[test]
    fn a_parse_past_its_time_is_given_up() {
        let language = Language::new(tree_sitter_python::LANGUAGE);
        let text = "x = [1, 2, 3]\n".repeat(1_000);
        assert!(parse(&language, text.as_bytes(), Duration::ZERO).is_none());
        let hour = Duration::from_secs(3600);
        assert!(parse(&language, text.as_bytes(), hour).is_some());
    }
}
