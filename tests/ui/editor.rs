//! The input editor and prompt history, one behaviour per test.

use dashfloat::bounds::PROMPT_MAX_BYTES;
use dashfloat::bounds::{HISTORY_LIMIT, HISTORY_MAX_BYTES};
use dashfloat::ui::editor::{Editor, History};

/// An editor holding `text` with the cursor at the `|` marker.
fn editor(marked: &str) -> Editor {
    let at = marked.find('|').expect("cursor marker");
    let mut e = Editor::new();
    assert!(e.insert_str(&marked.replace('|', "")));
    let moves = marked.len() - at - 1;
    // Walk back from the end; every test text is ASCII around the marker.
    for _ in 0..marked[at + 1..].chars().count() {
        e.move_left();
    }
    assert_eq!(e.cursor(), marked.len() - 1 - moves, "setup of {marked:?}");
    e
}

/// The text with `|` inserted at the cursor.
fn shown(e: &Editor) -> String {
    let mut s = e.text().to_owned();
    s.insert(e.cursor(), '|');
    s
}

#[test]
fn new_editor_is_empty() {
    let e = Editor::default();
    assert!(e.is_empty());
    assert_eq!(e.text(), "");
    assert_eq!(e.cursor(), 0);
}

#[test]
fn insert_char_types_at_the_cursor() {
    let mut e = editor("ac|");
    e.move_left();
    assert!(e.insert_char('b'));
    assert_eq!(shown(&e), "ab|c");
    assert!(e.insert_char('é'));
    assert_eq!(shown(&e), "abé|c");
}

#[test]
fn control_characters_are_not_typed() {
    let mut e = Editor::new();
    assert!(e.insert_char('\u{7}'));
    assert!(e.insert_char('\u{1b}'));
    assert!(e.is_empty());
    assert!(e.insert_char('\t'));
    assert_eq!(e.text(), "\t");
}

#[test]
fn paste_normalises_crlf_and_cr_and_drops_controls() {
    let mut e = Editor::new();
    assert!(e.insert_str("one\r\ntwo\rthree\u{1b}[0m\tend\n"));
    assert_eq!(e.text(), "one\ntwo\nthree[0m\tend\n");
    assert_eq!(e.cursor(), e.text().len());
}

#[test]
fn paste_goes_in_at_the_cursor() {
    let mut e = editor("ab|cd");
    assert!(e.insert_str("X\r\nY"));
    assert_eq!(shown(&e), "abX\nY|cd");
}

#[test]
fn newline_splits_the_line() {
    let mut e = editor("ab|cd");
    assert!(e.newline());
    assert_eq!(shown(&e), "ab\n|cd");
}

#[test]
fn backspace_across_a_newline_joins_lines() {
    let mut e = editor("ab\n|cd");
    e.backspace();
    assert_eq!(shown(&e), "ab|cd");
    e.backspace();
    assert_eq!(shown(&e), "a|cd");
}

#[test]
fn backspace_at_the_start_does_nothing() {
    let mut e = editor("|ab");
    e.backspace();
    assert_eq!(shown(&e), "|ab");
}

#[test]
fn backspace_and_delete_remove_whole_characters_with_their_marks() {
    let mut e = Editor::new();
    assert!(e.insert_str("xe\u{301}👍🏽"));
    e.backspace();
    assert_eq!(e.text(), "xe\u{301}");
    e.backspace();
    assert_eq!(e.text(), "x");
    assert!(e.insert_str("👨\u{200D}👩\u{200D}👧"));
    e.move_home();
    e.move_right();
    e.delete();
    assert_eq!(e.text(), "x");
}

#[test]
fn backspace_and_delete_remove_a_flag_whole() {
    let mut e = Editor::new();
    assert!(e.insert_str("x🇺🇸🇫🇷"));
    e.backspace();
    assert_eq!(e.text(), "x🇺🇸");
    e.move_left();
    assert_eq!(e.cursor(), 1);
    e.delete();
    assert_eq!(e.text(), "x");
}

#[test]
fn word_jumps_treat_an_accented_letter_as_a_letter() {
    let mut e = Editor::new();
    assert!(e.insert_str("un cafe\u{301}"));
    e.word_left();
    assert_eq!(e.cursor(), 3);
}

#[test]
fn delete_removes_after_the_cursor_and_joins_at_line_end() {
    let mut e = editor("ab|\ncd");
    e.delete();
    assert_eq!(shown(&e), "ab|cd");
    e.delete();
    assert_eq!(shown(&e), "ab|d");
    e.move_end();
    e.delete();
    assert_eq!(shown(&e), "abd|");
}

#[test]
fn ctrl_w_deletes_the_word_before_the_cursor() {
    let mut e = editor("git commit  -m|");
    e.delete_word_back();
    assert_eq!(shown(&e), "git commit  |");
    e.delete_word_back();
    assert_eq!(shown(&e), "git |");
}

#[test]
fn ctrl_w_at_a_line_start_joins_the_lines() {
    let mut e = editor("one two\n|three");
    e.delete_word_back();
    assert_eq!(shown(&e), "one two|three");
}

#[test]
fn ctrl_u_kills_to_the_line_start_then_the_line_break() {
    let mut e = editor("first\nsecond li|ne");
    e.kill_to_line_start();
    assert_eq!(shown(&e), "first\n|ne");
    e.kill_to_line_start();
    assert_eq!(shown(&e), "first|ne");
}

#[test]
fn word_jumps_stop_at_word_and_punctuation_runs() {
    let mut e = editor("|let x = foo.bar(1);  end");
    e.word_right();
    assert_eq!(shown(&e), "let| x = foo.bar(1);  end");
    e.word_right();
    e.word_right();
    e.word_right();
    assert_eq!(shown(&e), "let x = foo|.bar(1);  end");
    e.word_right();
    assert_eq!(shown(&e), "let x = foo.|bar(1);  end");
    e.move_end();
    e.word_left();
    assert_eq!(shown(&e), "let x = foo.bar(1);  |end");
    e.word_left();
    assert_eq!(shown(&e), "let x = foo.bar(1|);  end");
}

#[test]
fn word_jumps_cross_lines() {
    let mut e = editor("one\n|two");
    e.word_left();
    assert_eq!(shown(&e), "|one\ntwo");
    e.word_right();
    e.word_right();
    assert_eq!(shown(&e), "one\ntwo|");
}

#[test]
fn home_and_end_stay_on_the_current_line() {
    let mut e = editor("one\ntw|o\nthree");
    e.move_home();
    assert_eq!(shown(&e), "one\n|two\nthree");
    e.move_end();
    assert_eq!(shown(&e), "one\ntwo|\nthree");
}

#[test]
fn left_and_right_cross_line_breaks() {
    let mut e = editor("ab\n|cd");
    e.move_left();
    assert_eq!(shown(&e), "ab|\ncd");
    e.move_right();
    e.move_right();
    assert_eq!(shown(&e), "ab\nc|d");
}

#[test]
fn up_and_down_keep_the_preferred_column() {
    let mut e = editor("long line here\nab\nanother lo|ng");
    assert!(e.move_up());
    assert_eq!(shown(&e), "long line here\nab|\nanother long");
    assert!(e.move_up());
    assert_eq!(shown(&e), "long line |here\nab\nanother long");
    assert!(e.move_down());
    assert!(e.move_down());
    assert_eq!(shown(&e), "long line here\nab\nanother lo|ng");
}

#[test]
fn up_returns_false_on_the_first_line() {
    let mut e = editor("fi|rst\nsecond");
    assert!(!e.move_up());
    assert_eq!(shown(&e), "fi|rst\nsecond");
}

#[test]
fn down_returns_false_on_the_last_line() {
    let mut e = editor("first\nsec|ond");
    assert!(!e.move_down());
    assert_eq!(shown(&e), "first\nsec|ond");
}

#[test]
fn a_horizontal_move_resets_the_preferred_column() {
    let mut e = editor("abcdef\nab\nabcdef|");
    assert!(e.move_up());
    e.move_left();
    assert!(e.move_up());
    assert_eq!(shown(&e), "a|bcdef\nab\nabcdef");
}

#[test]
fn up_and_down_measure_display_columns_of_wide_characters() {
    // "中文" is four columns: column 4 below it is after both characters.
    let mut e = editor("中文x\nabcd|e");
    assert!(e.move_up());
    assert_eq!(shown(&e), "中文|x\nabcde");
    // Column 3 falls inside "文": stay before it.
    let mut e = editor("中文x\nabc|de");
    assert!(e.move_up());
    assert_eq!(shown(&e), "中|文x\nabcde");
}

#[test]
fn layout_wraps_wide_characters_without_splitting_them() {
    let e = editor("ab中文|");
    let l = e.layout(5, 10, 0);
    assert_eq!(l.rows, ["ab中", "文"]);
    assert_eq!(l.cursor, (2, 1));
    assert_eq!(l.total_rows, 2);
}

#[test]
fn layout_soft_wraps_long_lines_by_width() {
    let e = editor("abcdefghij\nxy|");
    let l = e.layout(4, 10, 0);
    assert_eq!(l.rows, ["abcd", "efgh", "ij", "xy"]);
    assert_eq!(l.cursor, (2, 3));
    assert_eq!(l.total_rows, 4);
}

#[test]
fn layout_puts_a_cursor_at_a_full_row_end_on_the_next_row() {
    let e = editor("abcd|");
    let l = e.layout(4, 10, 0);
    assert_eq!(l.rows, ["abcd", ""]);
    assert_eq!(l.cursor, (0, 1));
    let e = editor("abcd|efgh");
    let l = e.layout(4, 10, 0);
    assert_eq!(l.rows, ["abcd", "efgh", ""]);
    assert_eq!(l.cursor, (0, 1));
}

#[test]
fn layout_shows_tabs_as_spaces() {
    let e = editor("a\tb|");
    let l = e.layout(20, 3, 0);
    assert_eq!(l.rows, ["a    b"]);
    assert_eq!(l.cursor, (6, 0));
}

#[test]
fn layout_of_empty_text_is_one_empty_row() {
    let l = Editor::new().layout(10, 3, 0);
    assert_eq!(l.rows, [""]);
    assert_eq!(l.cursor, (0, 0));
    assert_eq!(l.total_rows, 1);
}

#[test]
fn layout_scrolls_to_keep_the_cursor_visible() {
    let mut e = Editor::new();
    assert!(e.insert_str("1\n2\n3\n4\n5\n6"));
    let l = e.layout(10, 3, 0);
    assert_eq!(l.total_rows, 6);
    assert_eq!(l.rows, ["4", "5", "6"]);
    assert_eq!(l.cursor, (1, 2));
    // Moving up inside the view doesn't scroll it.
    assert!(e.move_up());
    assert!(e.move_up());
    let l = e.layout(10, 3, l.scroll);
    assert_eq!(l.rows, ["4", "5", "6"]);
    assert_eq!(l.cursor, (1, 0));
    // Moving above it scrolls by just enough.
    assert!(e.move_up());
    let l = e.layout(10, 3, l.scroll);
    assert_eq!(l.rows, ["3", "4", "5"]);
    assert_eq!(l.cursor, (1, 0));
    assert_eq!(l.scroll, 2);
}

#[test]
fn take_returns_the_text_and_empties_the_editor() {
    let mut e = editor("hello|");
    assert_eq!(e.take(), "hello");
    assert!(e.is_empty());
    assert_eq!(e.cursor(), 0);
}

#[test]
fn set_replaces_the_text_with_the_cursor_at_the_end() {
    let mut e = editor("old|");
    e.set("new\r\ntext");
    assert_eq!(shown(&e), "new\ntext|");
}

#[test]
fn history_recalls_older_entries_then_restores_the_draft() {
    let mut h = History::new();
    h.push("first".into());
    h.push("second".into());
    assert_eq!(h.prev("my draft"), Some("second"));
    assert_eq!(h.prev("second"), Some("first"));
    assert_eq!(h.prev("first"), None);
    assert_eq!(h.next(), Some("second"));
    assert_eq!(h.next(), Some("my draft"));
    assert_eq!(h.next(), None);
}

#[test]
fn history_with_the_editor_round_trips_the_draft() {
    let mut h = History::new();
    h.push("earlier prompt".into());
    let mut e = editor("half typed|");
    if !e.move_up() {
        let entry = h.prev(e.text()).unwrap().to_owned();
        e.set(&entry);
    }
    assert_eq!(e.text(), "earlier prompt");
    if !e.move_down() {
        let draft = h.next().unwrap().to_owned();
        e.set(&draft);
    }
    assert_eq!(shown(&e), "half typed|");
}

#[test]
fn history_skips_consecutive_repeats_and_blanks() {
    let mut h = History::new();
    h.push("a".into());
    h.push("a".into());
    h.push("   ".into());
    h.push("b".into());
    h.push("a".into());
    assert_eq!(h.len(), 3);
}

#[test]
fn history_reset_position_starts_again_from_the_newest() {
    let mut h = History::new();
    h.push("a".into());
    h.push("b".into());
    assert_eq!(h.prev(""), Some("b"));
    assert_eq!(h.prev(""), Some("a"));
    h.reset_position();
    assert_eq!(h.prev(""), Some("b"));
}

#[test]
fn history_is_bounded_and_drops_the_oldest() {
    let mut h = History::new();
    for i in 0..HISTORY_LIMIT + 5 {
        h.push(format!("prompt {i}"));
    }
    assert_eq!(h.len(), HISTORY_LIMIT);
    let mut oldest = None;
    while let Some(e) = h.prev("") {
        oldest = Some(e.to_owned());
    }
    assert_eq!(oldest.as_deref(), Some("prompt 5"));
}

#[test]
fn history_keeps_at_most_its_bytes_and_always_the_newest() {
    let mut h = History::new();
    let big = |c: char| c.to_string().repeat(HISTORY_MAX_BYTES * 2 / 5);
    for c in ['a', 'b', 'c', 'd'] {
        h.push(big(c));
    }
    assert_eq!(h.len(), 2);
    assert_eq!(h.prev("").map(|e| e.starts_with('d')), Some(true));
    assert_eq!(h.prev("").map(|e| e.starts_with('c')), Some(true));
    assert_eq!(h.prev(""), None);
    h.push("x".repeat(HISTORY_MAX_BYTES + 1));
    assert_eq!(h.len(), 1);
}

#[test]
fn the_prompt_takes_nothing_past_its_bound() {
    let max = usize::try_from(PROMPT_MAX_BYTES).unwrap();
    let mut e = Editor::new();
    assert!(e.insert_str(&"a".repeat(max - 2)));
    assert!(!e.insert_str("bcd"), "a paste goes in whole or not at all");
    assert!(e.insert_str("bc"));
    assert!(!e.insert_char('d'));
    assert!(!e.newline());
    assert!(e.insert_char('\u{7}'), "a control character takes no room");
    assert_eq!(e.text().len(), max);
    assert!(e.text().ends_with("abc"));
}

#[test]
fn text_put_back_past_the_bound_is_kept_whole() {
    let long = "a".repeat(usize::try_from(PROMPT_MAX_BYTES).unwrap() + 10);
    let mut e = Editor::new();
    e.set(&long);
    assert_eq!(e.text(), long, "the person's words are not cut");
    assert!(!e.insert_char('b'), "but nothing more goes in");
}

#[test]
fn empty_history_recalls_nothing() {
    let mut h = History::new();
    assert!(h.is_empty());
    assert_eq!(h.prev("draft"), None);
    assert_eq!(h.next(), None);
}
