//! Code blocks: collecting them, listing them for copying, and laying them
//! out verbatim (tabs expanded, cut by columns).

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use ratatui::text::Span;

use super::options;
use super::renderer::Renderer;
use crate::ui::width::clusters;
use crate::ui::wrap::{Fill, fill_columns};

/// Columns a tab advances to (the next multiple of this) in code blocks.
const TAB_STOP: usize = 4;

/// A code block being collected.
pub(super) struct Code {
    pub(super) label: String,
    pub(super) text: String,
    pub(super) fenced: bool,
}

/// The fenced/indented code blocks of a message, verbatim, in order (for
/// copy-to-clipboard by index: block `[n]` on screen is element `n - 1`).
/// The newline that ends each block's last line is not included.
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(code) = current.as_mut() {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut code) = current.take() {
                    if code.ends_with('\n') {
                        code.pop();
                    }
                    blocks.push(code);
                }
            }
            _ => {}
        }
    }
    blocks
}

impl Renderer<'_> {
    pub(super) fn emit_code(&mut self, code: &Code) {
        let avail = self.avail();
        let dim = self.theme.dim;
        for part in hard_break(&code.label, avail) {
            self.emit(vec![Span::styled(part, dim)]);
        }
        let body = code.text.strip_suffix('\n').unwrap_or(&code.text);
        let style = self.theme.code_block;
        for line in body.split('\n') {
            let expanded = expand_tabs(line);
            if expanded.is_empty() {
                self.emit(Vec::new());
                continue;
            }
            for part in hard_break(&expanded, avail) {
                self.emit(vec![Span::styled(part, style)]);
            }
        }
    }
}

/// Tabs to spaces (to the next multiple of [`TAB_STOP`]); other control
/// characters dropped.
fn expand_tabs(line: &str) -> String {
    if !line.chars().any(char::is_control) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut col = 0;
    for cluster in clusters(line) {
        if cluster.text == "\t" {
            let n = TAB_STOP - col % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else if !cluster.text.contains(char::is_control) {
            col += cluster.width;
            out.push_str(cluster.text);
        }
    }
    out
}

/// Splits `s` into rows of at most `w` columns (a cluster wider than `w`
/// is left out rather than overflow).
fn hard_break(s: &str, w: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    fill_columns(s, w, |fill| match fill {
        Fill::Text(range, _) => {
            if let Some(row) = rows.last_mut() {
                row.push_str(&s[range]);
            }
        }
        Fill::RowEnd => rows.push(String::new()),
    });
    rows
}
