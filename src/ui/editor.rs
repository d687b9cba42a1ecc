//! STUB until the widgets branch lands.

/// Editor.
#[derive(Debug, Default)]
pub struct Editor {
    text: String,
}
/// Layout.
pub struct EditorLayout {
    /// Rows.
    pub rows: Vec<String>,
    /// Cursor.
    pub cursor: (u16, u16),
    /// Total.
    pub total_rows: usize,
}
impl Editor {
    /// New.
    pub fn new() -> Self {
        Self::default()
    }
    /// Text.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// Empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
    /// Insert.
    pub fn insert_char(&mut self, c: char) {
        self.text.push(c)
    }
    /// Paste.
    pub fn insert_str(&mut self, s: &str) {
        self.text.push_str(s)
    }
    /// Newline.
    pub fn newline(&mut self) {
        self.text.push('\n')
    }
    /// Bs.
    pub fn backspace(&mut self) {
        self.text.pop();
    }
    /// Del.
    pub fn delete(&mut self) {}
    /// L.
    pub fn move_left(&mut self) {}
    /// R.
    pub fn move_right(&mut self) {}
    /// U.
    pub fn move_up(&mut self) -> bool {
        false
    }
    /// D.
    pub fn move_down(&mut self) -> bool {
        false
    }
    /// H.
    pub fn move_home(&mut self) {}
    /// E.
    pub fn move_end(&mut self) {}
    /// WL.
    pub fn word_left(&mut self) {}
    /// WR.
    pub fn word_right(&mut self) {}
    /// CU.
    pub fn kill_to_line_start(&mut self) {}
    /// CW.
    pub fn delete_word_back(&mut self) {}
    /// Take.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.text)
    }
    /// Set.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string()
    }
    /// Layout.
    pub fn layout(&self, _width: u16, _max_rows: u16) -> EditorLayout {
        let rows: Vec<String> = self.text.split('\n').map(str::to_string).collect();
        let n = rows.len();
        EditorLayout {
            cursor: (rows.last().map_or(0, |r| r.len()) as u16, (n - 1) as u16),
            rows,
            total_rows: n,
        }
    }
}
/// History.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
}
impl History {
    /// Push.
    pub fn push(&mut self, entry: String) {
        self.entries.push(entry)
    }
    /// Prev.
    pub fn prev(&mut self, _current: &str) -> Option<&str> {
        self.entries.last().map(String::as_str)
    }
    /// Next.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&str> {
        None
    }
    /// Reset.
    pub fn reset_position(&mut self) {}
}
