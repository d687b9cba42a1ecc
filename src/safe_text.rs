//! Text made safe for a terminal: the one sanitiser for every string that
//! came from the model, a tool or a server and may reach the screen.
//!
//! A terminal obeys control characters wherever they appear: `ESC ]2;…`
//! retitles it, `ESC ]52;…` writes the clipboard, `ESC [6n` makes it type
//! an answer into our input, a bare `CR` lets the rest of a line overwrite
//! its start. So everything printed outside ratatui passes through
//! [`strip_controls`], and the UI strips what it stores too, because the
//! transcript printed on exit and the clipboard copy are made from it. This
//! module imports nothing of the crate: every other module may
//! use it without crossing a wall (ADR 0001).

use std::borrow::Cow;

/// Whether `c` is removed: every C0 control but `\n` and `\t`, DEL, and the
/// C1 controls U+0080..=U+009F (`char::is_control` is exactly these).
fn is_stripped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` without control characters other than `\n` and `\t`; borrowed
/// when there is nothing to strip. `CR LF` becomes `LF` and a bare `CR` is
/// dropped, so what was on both sides of it stays visible. Everything else
/// is kept, so the text around a removed sequence still shows that one was
/// there (`ESC ]2;title BEL` shows as `]2;title`).
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_stripped) {
        Cow::Owned(text.chars().filter(|&c| !is_stripped(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}
