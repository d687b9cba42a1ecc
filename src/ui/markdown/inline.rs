//! A block's inline content gathered before wrapping: one text buffer and
//! the styled runs that cover it.

use ratatui::style::Style;

/// How a run of inline content may be broken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum RunKind {
    /// Text that may wrap at whitespace.
    Text,
    /// Text kept on one line when it fits (inline code).
    Atomic,
    /// A hard line break (empty).
    Break,
}

/// A styled stretch `start..end` of [`Inline::text`].
pub(super) struct Run {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) style: Style,
    pub(super) kind: RunKind,
}

/// A block's inline content before wrapping: one string (control characters
/// already dropped) and the styled runs that cover it, so wrapping slices it
/// instead of allocating per word.
#[derive(Default)]
pub(super) struct Inline {
    pub(super) text: String,
    pub(super) runs: Vec<Run>,
}

impl Inline {
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    fn push(&mut self, t: &str, style: Style, kind: RunKind) {
        let start = self.text.len();
        // Byte pre-check: C0 controls, DEL, and 0xC2 (lead byte of C1).
        let suspect = t
            .bytes()
            .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2);
        if suspect {
            self.text.extend(
                t.chars()
                    .filter(|&c| !c.is_control() || c == '\n' || c == '\t'),
            );
        } else {
            self.text.push_str(t);
        }
        let end = self.text.len();
        if start == end && kind != RunKind::Break {
            return;
        }
        if kind == RunKind::Text
            && let Some(last) = self.runs.last_mut()
            && last.kind == RunKind::Text
            && last.style == style
        {
            last.end = end;
            return;
        }
        self.runs.push(Run {
            start,
            end,
            style,
            kind,
        });
    }

    pub(super) fn text(&mut self, t: &str, style: Style) {
        self.push(t, style, RunKind::Text);
    }

    /// Adds text kept whole (inline code). A tab in it shows as a space:
    /// as a control character it would be measured but not drawn.
    pub(super) fn atomic(&mut self, t: &str, style: Style) {
        if t.contains('\t') {
            self.push(&t.replace('\t', " "), style, RunKind::Atomic);
        } else {
            self.push(t, style, RunKind::Atomic);
        }
    }

    pub(super) fn hard_break(&mut self) {
        self.push("", Style::new(), RunKind::Break);
    }
}
