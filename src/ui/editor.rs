//! The multi-line input box: an editable text with a cursor, its visual
//! layout in a box of a given width, and the history of earlier prompts.
//!
//! The cursor is a byte index on a character boundary. Deletion and cursor
//! motion step over whole grapheme clusters (from `unicode-segmentation`),
//! so an accented letter, a flag or a family emoji goes in one keystroke;
//! the layout cuts rows between the same clusters, measured by the UI's one
//! width rule (ADR 0018).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use crate::protocol::PROMPT_MAX_BYTES;

use super::width::str_width;
use super::wrap::{Fill, fill_columns};

/// Columns a tab occupies in the input box.
const TAB_WIDTH: usize = 4;

/// The prompt being typed: text plus a cursor (byte index on a char boundary).
#[derive(Debug, Clone, Default)]
pub struct Editor {
    text: String,
    cursor: usize,
    /// The display column Up/Down aim for, kept across consecutive moves.
    goal_col: Option<usize>,
    /// The person changed the text since it was last set or emptied.
    typed: bool,
}

/// What the input box shows: the visible rows and where the cursor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorLayout {
    /// The visible rows, soft-wrapped by display width (tabs as spaces).
    pub rows: Vec<String>,
    /// The cursor as (column, row) inside `rows`.
    pub cursor: (u16, u16),
    /// How many rows the whole text takes at this width.
    pub total_rows: usize,
    /// Index of the first visible row among all `total_rows`.
    pub scroll: usize,
}

/// Word-motion classes: whitespace, word characters, punctuation.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Class {
    Space,
    Word,
    Punct,
}

fn class(c: char) -> Class {
    if c.is_whitespace() {
        Class::Space
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Punct
    }
}

/// Pasted or recalled text made safe: CRLF and lone CR become LF, other
/// control characters except tab are dropped.
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Display width of a stretch of one line, tabs counting [`TAB_WIDTH`].
fn cols(s: &str) -> usize {
    let tabs = s.bytes().filter(|&b| b == b'\t').count();
    str_width(s) + tabs * TAB_WIDTH
}

/// One line of the text as the box shows it: tabs as `tab` spaces, and
/// where byte `cursor` of the line (if given) lands in it.
fn shown_line(line: &str, tab: usize, cursor: Option<usize>) -> (Cow<'_, str>, Option<usize>) {
    if !line.contains('\t') {
        return (Cow::Borrowed(line), cursor);
    }
    let mut shown = String::with_capacity(line.len() + 8);
    let mut at = None;
    for (i, c) in line.char_indices() {
        if cursor == Some(i) {
            at = Some(shown.len());
        }
        if c == '\t' {
            shown.extend(std::iter::repeat_n(' ', tab));
        } else {
            shown.push(c);
        }
    }
    if cursor == Some(line.len()) {
        at = Some(shown.len());
    }
    (Cow::Owned(shown), at)
}

impl Editor {
    /// An empty editor.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text typed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether nothing has been typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the text holds something the person typed, pasted or
    /// deleted since it was last set or emptied: they are writing, so a
    /// key that would answer a question belongs to the text.
    pub fn typing(&self) -> bool {
        self.typed && !self.text.is_empty()
    }

    /// The cursor: a byte index into [`Editor::text`] on a char boundary.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Types one character at the cursor. CR becomes a newline; other
    /// control characters except tab are ignored. Whether it went in: not
    /// when the prompt would grow past [`PROMPT_MAX_BYTES`].
    #[must_use]
    pub fn insert_char(&mut self, c: char) -> bool {
        match c {
            '\r' | '\n' => self.newline(),
            '\t' => self.insert_clean("\t"),
            c if c.is_control() => true,
            c => {
                let mut buf = [0u8; 4];
                self.insert_clean(c.encode_utf8(&mut buf))
            }
        }
    }

    /// Inserts pasted text at the cursor: CRLF and CR become LF, other
    /// control characters except newline and tab are dropped. Never submits.
    /// Whether it went in: all of it, or nothing when the prompt would grow
    /// past [`PROMPT_MAX_BYTES`] (a paste cut short would be sent as if
    /// whole).
    #[must_use]
    pub fn insert_str(&mut self, s: &str) -> bool {
        let cleaned = clean(s);
        self.insert_clean(&cleaned)
    }

    /// Inserts a line break at the cursor; whether it went in, as
    /// [`Editor::insert_char`].
    #[must_use]
    pub fn newline(&mut self) -> bool {
        self.insert_clean("\n")
    }

    /// Inserts at the cursor, a change the person made unless `s` is
    /// empty; whether it went in, as [`Editor::insert_char`].
    fn insert_clean(&mut self, s: &str) -> bool {
        if (self.text.len() + s.len()) as u64 > PROMPT_MAX_BYTES {
            return false;
        }
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.goal_col = None;
        self.typed |= !s.is_empty();
        true
    }

    /// Removes `range` of the text, the cursor at its start: a change the
    /// person made unless the range is empty (Backspace at the start).
    fn remove(&mut self, range: Range<usize>) {
        self.cursor = range.start;
        self.goal_col = None;
        self.typed |= !range.is_empty();
        self.text.replace_range(range, "");
    }

    /// Deletes the character (with its combining marks) before the cursor;
    /// at a line start this joins the line to the one above.
    pub fn backspace(&mut self) {
        self.remove(self.prev_boundary(self.cursor)..self.cursor);
    }

    /// Deletes the character (with its combining marks) after the cursor.
    pub fn delete(&mut self) {
        self.remove(self.cursor..self.next_boundary(self.cursor));
    }

    /// Moves one character left (possibly to the end of the line above).
    pub fn move_left(&mut self) {
        self.cursor = self.prev_boundary(self.cursor);
        self.goal_col = None;
    }

    /// Moves one character right (possibly to the start of the line below).
    pub fn move_right(&mut self) {
        self.cursor = self.next_boundary(self.cursor);
        self.goal_col = None;
    }

    /// Moves to the line above, keeping the display column of the first of a
    /// run of vertical moves. Returns false, without moving, when already on
    /// the first line (the caller then recalls history).
    pub fn move_up(&mut self) -> bool {
        let start = self.line_start(self.cursor);
        if start == 0 {
            return false;
        }
        let goal = self.goal();
        let prev_start = self.line_start(start - 1);
        self.cursor = self.column_in_line(prev_start, goal);
        self.goal_col = Some(goal);
        true
    }

    /// Moves to the line below, keeping the display column like
    /// [`Editor::move_up`]. Returns false, without moving, on the last line.
    pub fn move_down(&mut self) -> bool {
        let end = self.line_end(self.cursor);
        if end == self.text.len() {
            return false;
        }
        let goal = self.goal();
        self.cursor = self.column_in_line(end + 1, goal);
        self.goal_col = Some(goal);
        true
    }

    /// Moves to the start of the current line.
    pub fn move_home(&mut self) {
        self.cursor = self.line_start(self.cursor);
        self.goal_col = None;
    }

    /// Moves to the end of the current line.
    pub fn move_end(&mut self) {
        self.cursor = self.line_end(self.cursor);
        self.goal_col = None;
    }

    /// Moves to the start of the word before the cursor (Ctrl+Left): skips
    /// whitespace, then a run of word characters or of punctuation.
    pub fn word_left(&mut self) {
        let mut pos = self.skip_back(self.cursor, |c| c == Class::Space);
        if let Some(cls) = self.class_before(pos) {
            pos = self.skip_back(pos, |c| c == cls);
        }
        self.cursor = pos;
        self.goal_col = None;
    }

    /// Moves to the end of the word after the cursor (Ctrl+Right): skips
    /// whitespace, then a run of word characters or of punctuation.
    pub fn word_right(&mut self) {
        let mut pos = self.skip_forward(self.cursor, |c| c == Class::Space);
        if let Some(cls) = self.class_after(pos) {
            pos = self.skip_forward(pos, |c| c == cls);
        }
        self.cursor = pos;
        self.goal_col = None;
    }

    /// Deletes from the start of the line to the cursor (Ctrl+U). At a line
    /// start it deletes the line break instead, so repeating it keeps going.
    pub fn kill_to_line_start(&mut self) {
        let start = self.line_start(self.cursor);
        let start = if start == self.cursor {
            self.cursor.saturating_sub(1)
        } else {
            start
        };
        self.remove(start..self.cursor);
    }

    /// Deletes the whitespace-delimited word before the cursor (Ctrl+W),
    /// staying on the current line; at a line start it joins the lines.
    pub fn delete_word_back(&mut self) {
        let end = self.cursor;
        let start = if self.text[..end].ends_with('\n') {
            end - 1
        } else {
            let blank = |c: char| c == ' ' || c == '\t';
            let pos = self.text[..end].trim_end_matches(blank).len();
            self.text[..pos]
                .trim_end_matches(|c: char| !c.is_whitespace())
                .len()
        };
        self.remove(start..end);
    }

    /// Returns the text and leaves the editor empty (on submit).
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        self.goal_col = None;
        self.typed = false;
        std::mem::take(&mut self.text)
    }

    /// Replaces the text with what the app puts back (a rewound prompt, one
    /// that could not be delivered), cursor at the end; the person has not
    /// written it. Never cut, even past [`PROMPT_MAX_BYTES`]: the text is the
    /// person's, and it is not sent until they shorten it.
    pub fn set(&mut self, text: &str) {
        self.text = clean(text);
        self.cursor = self.text.len();
        self.goal_col = None;
        self.typed = false;
    }

    /// Replaces the text from `start` to the cursor with `with`, the
    /// cursor after it: a completion the person chose. Whether it went
    /// in, as [`Editor::insert_char`].
    #[must_use]
    pub fn complete(&mut self, start: usize, with: &str) -> bool {
        let start = start.min(self.cursor);
        if !self.text.is_char_boundary(start) {
            return false;
        }
        let replaced = self.cursor - start;
        if (self.text.len() - replaced + with.len()) as u64 > PROMPT_MAX_BYTES {
            return false;
        }
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
        self.goal_col = None;
        self.typed = true;
        true
    }

    /// Replaces the text with one the person chose (from the history, a
    /// completion), cursor at the end: it counts as written.
    pub fn choose(&mut self, text: &str) {
        self.set(text);
        self.typed = true;
    }

    /// Visual layout for a box `width` columns wide showing at most
    /// `max_rows` rows: the visible rows (soft-wrapped by display width),
    /// the cursor's (col,row) inside them, and the total row count (so the
    /// box can grow up to a limit, then scroll keeping the cursor visible).
    /// `scroll` is the first visible row of the box as last drawn: the view
    /// only scrolls when the cursor would leave it.
    ///
    /// A row that fills the width exactly at the end of a line is followed
    /// by an empty row, where the cursor goes when it's at that line end.
    pub fn layout(&self, width: u16, max_rows: u16, scroll: usize) -> EditorLayout {
        let width = usize::from(width.max(1));
        let max_rows = usize::from(max_rows.max(1));
        let mut rows: Vec<String> = Vec::new();
        let mut cursor = (0, 0);
        let mut offset = 0;
        for line in self.text.split('\n') {
            let in_line = (offset..=offset + line.len()).contains(&self.cursor);
            let (shown, mut at) = shown_line(
                line,
                TAB_WIDTH.min(width),
                in_line.then(|| self.cursor - offset),
            );
            let mut row = String::new();
            let mut col = 0;
            let used = fill_columns(&shown, width, |fill| match fill {
                Fill::Text(range, w) => {
                    if let Some(c) = at.filter(|&c| c < range.end) {
                        let before = shown.get(range.start..c).map_or(0, str_width);
                        cursor = (col + before, rows.len());
                        at = None;
                    }
                    row.push_str(&shown[range]);
                    col += w;
                }
                Fill::RowEnd => {
                    rows.push(std::mem::take(&mut row));
                    col = 0;
                }
            });
            if used >= width {
                rows.push(std::mem::take(&mut row));
                col = 0;
            }
            if at.is_some() {
                cursor = (col, rows.len());
            }
            rows.push(row);
            offset += line.len() + 1;
        }
        let total_rows = rows.len();
        let mut scroll = scroll;
        if cursor.1 < scroll {
            scroll = cursor.1;
        } else if cursor.1 >= scroll + max_rows {
            scroll = cursor.1 + 1 - max_rows;
        }
        scroll = scroll.min(total_rows.saturating_sub(max_rows));
        let visible: Vec<String> = rows.into_iter().skip(scroll).take(max_rows).collect();
        EditorLayout {
            rows: visible,
            cursor: (to_u16(cursor.0), to_u16(cursor.1 - scroll)),
            total_rows,
            scroll,
        }
    }

    fn goal(&self) -> usize {
        self.goal_col.unwrap_or_else(|| {
            let start = self.line_start(self.cursor);
            cols(&self.text[start..self.cursor])
        })
    }

    /// The position in the line starting at `start` closest to display
    /// column `goal` without passing it.
    fn column_in_line(&self, start: usize, goal: usize) -> usize {
        let end = self.line_end(start);
        let mut pos = start;
        let mut col = 0;
        while pos < end {
            let next = self.next_boundary(pos);
            let w = cols(&self.text[pos..next]);
            if col + w > goal {
                break;
            }
            col += w;
            pos = next;
        }
        pos
    }

    fn line_start(&self, pos: usize) -> usize {
        self.text[..pos].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, pos: usize) -> usize {
        self.text[pos..]
            .find('\n')
            .map_or(self.text.len(), |i| pos + i)
    }

    /// The start of the grapheme cluster ending at `pos`.
    fn prev_boundary(&self, pos: usize) -> usize {
        self.text[..pos]
            .graphemes(true)
            .next_back()
            .map_or(pos, |g| pos - g.len())
    }

    /// The end of the grapheme cluster starting at `pos`.
    fn next_boundary(&self, pos: usize) -> usize {
        self.text[pos..]
            .graphemes(true)
            .next()
            .map_or(pos, |g| pos + g.len())
    }

    /// The word-motion class of the cluster ending at `pos`, by its base
    /// character.
    fn class_before(&self, pos: usize) -> Option<Class> {
        let start = self.prev_boundary(pos);
        self.text[start..pos].chars().next().map(class)
    }

    /// The word-motion class of the cluster starting at `pos`.
    fn class_after(&self, pos: usize) -> Option<Class> {
        self.text[pos..].chars().next().map(class)
    }

    fn skip_back(&self, mut pos: usize, keep: impl Fn(Class) -> bool) -> usize {
        while self.class_before(pos).is_some_and(&keep) {
            pos = self.prev_boundary(pos);
        }
        pos
    }

    fn skip_forward(&self, mut pos: usize, keep: impl Fn(Class) -> bool) -> usize {
        while self.class_after(pos).is_some_and(&keep) {
            pos = self.next_boundary(pos);
        }
        pos
    }
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// How many earlier prompts [`History`] keeps.
pub const HISTORY_LIMIT: usize = 1_000;
/// The most bytes of earlier prompts [`History`] keeps; the newest always
/// stays.
pub const HISTORY_MAX_BYTES: usize = 8 * 1024 * 1024;

/// Earlier prompts for Up/Down recall, oldest first; bounded by
/// [`HISTORY_LIMIT`] and [`HISTORY_MAX_BYTES`], skipping a prompt equal to the one before it. Going
/// back keeps the in-progress draft, and coming forward past the newest
/// entry restores it.
#[derive(Debug, Clone, Default)]
pub struct History {
    entries: VecDeque<String>,
    /// The entry being shown, or None when editing the draft.
    position: Option<usize>,
    draft: String,
    /// The entries' bytes.
    bytes: usize,
}

impl History {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a submitted prompt (blank ones and repeats of the newest
    /// entry are skipped) and returns to the draft position.
    pub fn push(&mut self, entry: String) {
        self.reset_position();
        if entry.trim().is_empty() || self.entries.back() == Some(&entry) {
            return;
        }
        self.bytes += entry.len();
        self.entries.push_back(entry);
        while self.entries.len() > HISTORY_LIMIT
            || (self.bytes > HISTORY_MAX_BYTES && self.entries.len() > 1)
        {
            if let Some(old) = self.entries.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    /// Steps back to the next older entry. `current` is the editor's text,
    /// saved as the draft when leaving it. None when there is nothing older.
    pub fn prev(&mut self, current: &str) -> Option<&str> {
        let pos = match self.position {
            None => {
                let newest = self.entries.len().checked_sub(1)?;
                self.draft = current.to_owned();
                newest
            }
            Some(p) => p.checked_sub(1)?,
        };
        self.position = Some(pos);
        self.entries.get(pos).map(String::as_str)
    }

    /// Steps forward to the next newer entry, or past the newest back to the
    /// saved draft. None when already at the draft.
    #[allow(clippy::should_implement_trait)] // the named API; not an iterator
    pub fn next(&mut self) -> Option<&str> {
        let pos = self.position?;
        if pos + 1 < self.entries.len() {
            self.position = Some(pos + 1);
            return self.entries.get(pos + 1).map(String::as_str);
        }
        self.position = None;
        Some(&self.draft)
    }

    /// Forgets the browsing position and the draft (after submit or edit).
    pub fn reset_position(&mut self) {
        self.position = None;
        self.draft.clear();
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
