//! Rendering a reply that is still arriving: the unfinished last line and
//! the guesses about what it will become.

use ratatui::text::Line;

use super::Rendered;
use super::renderer::Renderer;
use crate::ui::theme::Theme;

/// Renders a reply that is still streaming: every completed line (up to the
/// last `'\n'`) as markdown and the unfinished last line as plain wrapped
/// text, so half-typed markup (`**bo`, a half link) never flickers into a
/// different shape. Inside an open code fence the unfinished line is code
/// already, so the whole text renders as markdown and nothing jumps.
pub fn render_streaming(text: &str, width: u16, theme: &Theme) -> Rendered {
    let split = text.rfind('\n').map_or(0, |i| i + 1);
    let (done, tail) = text.split_at(split);
    if width == 0 {
        return Rendered::default();
    }
    let mut r = Renderer::new(theme, usize::from(width));
    if !tail.is_empty() {
        r.tail = Some(tail);
    }
    r.run(done);
    // Not taken by an open code fence: plain text after the last block.
    if let Some(tail) = r.tail.take() {
        if !r.out.is_empty() && tail_starts_block(done, tail) {
            r.out.push(Line::default());
        }
        r.inline.text(tail, theme.text);
        r.flush_inline();
    }
    Rendered { lines: r.out }
}

/// Guesses whether the unfinished `tail` will be a block of its own once
/// complete (so a blank line separates it) rather than continue the block
/// the completed text ended with (paragraph, list item, table).
fn tail_starts_block(done: &str, tail: &str) -> bool {
    let body = done.strip_suffix('\n').unwrap_or(done);
    let last = body.rsplit('\n').next().unwrap_or("");
    let last = last.trim_start_matches(|c: char| c == '>' || c.is_whitespace());
    if last.is_empty() || last.starts_with('#') || is_fence(last) || is_rule(last) {
        return true;
    }
    let tail = tail.trim_start_matches(|c: char| c == '>' || c.is_whitespace());
    if looks_like_item(tail) {
        return !looks_like_item(last);
    }
    if tail.starts_with('|') {
        return !last.starts_with('|');
    }
    tail.starts_with('#') || is_fence(tail)
}

fn is_fence(line: &str) -> bool {
    line.starts_with("```") || line.starts_with("~~~")
}

fn is_rule(line: &str) -> bool {
    let mut marks = line.chars().filter(|c| !c.is_whitespace());
    let Some(first) = marks.next() else {
        return false;
    };
    let mut count = 1;
    for c in marks {
        if c != first {
            return false;
        }
        count += 1;
    }
    matches!(first, '-' | '*' | '_') && count >= 3
}

/// `- x`, `* x`, `+ x`, `1. x`, `1) x` (or just the marker so far).
fn looks_like_item(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    let marker = if rest.len() < line.len() {
        rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))
    } else {
        line.strip_prefix(['-', '*', '+'])
    };
    marker.is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// Whether the source of a fenced code block lacks its closing fence (the
/// block runs to the end of the text so far).
fn fence_unclosed(block: &str) -> bool {
    let mut lines = block.lines();
    lines.next();
    let Some(last) = lines.last() else {
        return true;
    };
    let last = last
        .trim_start_matches(|c: char| c == '>' || c.is_whitespace())
        .trim_end();
    !(is_fence(last) && last.chars().all(|c| c == '`' || c == '~'))
}

impl Renderer<'_> {
    /// While streaming, an unfinished line inside a still-open fence is
    /// code already: it joins the block instead of showing as prose (unless
    /// it is the closing fence being typed).
    pub(super) fn take_tail_into_code(&mut self, block: &str) {
        let Some(tail) = self.tail else {
            return;
        };
        let Some(code) = self.code.as_mut() else {
            return;
        };
        if !code.fenced || !fence_unclosed(block) {
            return;
        }
        self.tail = None;
        if !is_fence(tail.trim_start_matches(|c: char| c == '>' || c.is_whitespace())) {
            code.text.push_str(tail);
            code.text.push('\n');
        }
    }
}
