//! The log's bound: like the session's log, the screen keeps the newest
//! entries and bytes of text, never a preview still waiting for an answer.

use crossterm::event::KeyCode;
use dashfloat::bounds::ENTRY_ROWS_MAX;
use dashfloat::bounds::ROWS_MAX;
use dashfloat::bounds::{LOG_BYTES_MAX, LOG_ITEMS_MAX};
use dashfloat::protocol::{AgentEvent, ReplyEnd, Severity, ToolStatus};
use dashfloat::ui::mode::Mode;
use dashfloat::ui::state::State;
use dashfloat::ui::transcript::{EntryKind, dropped_notice};

use crate::{agent, confirm_command, draw, press, state, tool_result};

/// Tells the log a notice of `text`.
fn notice(s: &mut State, text: String) {
    agent(
        s,
        AgentEvent::System {
            severity: Severity::Notice,
            text,
        },
    );
}

/// Tells the log notices `from..from + count` ("notice N"), each padded
/// with `pad` more bytes of text.
fn notices(s: &mut State, from: usize, count: usize, pad: usize) {
    for i in from..from + count {
        notice(s, format!("notice {i}{}", " pad".repeat(pad / 4)));
    }
}

/// Each kept entry's first two words.
fn heads(s: &State) -> Vec<String> {
    s.transcript()
        .entries()
        .iter()
        .map(|e| e.text.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn the_log_keeps_the_newest_entries_under_a_notice() {
    let mut s = state(80, 24);
    notices(&mut s, 0, LOG_ITEMS_MAX + 500, 0);
    s.prepare();
    let heads = heads(&s);
    assert_eq!(
        heads.len(),
        LOG_ITEMS_MAX + 1,
        "the notice and the entries it says are kept"
    );
    assert_eq!(s.transcript().entries()[0].text, dropped_notice());
    assert_eq!(heads[1], "notice 500");
    assert_eq!(
        heads.last().unwrap(),
        &format!("notice {}", LOG_ITEMS_MAX + 499)
    );
    s.transcript_mut().scroll_to_top();
    let top = draw(&mut s);
    assert!(top.contains("earlier entries are no longer shown"), "{top}");
    assert!(top.contains("notice 500"), "{top}");
    assert!(!top.contains("notice 499 "), "{top}");
    s.transcript_mut().follow();
    let bottom = draw(&mut s);
    assert!(
        bottom.contains(&format!("notice {}", LOG_ITEMS_MAX + 499)),
        "{bottom}"
    );
}

#[test]
fn the_log_keeps_at_most_its_bytes_of_text_and_always_the_newest_entry() {
    let mut s = state(80, 24);
    notices(&mut s, 0, 10, 512 * 1024);
    s.prepare();
    let kept = heads(&s);
    assert_eq!(kept[0], "earlier entries");
    assert_eq!(
        kept[1..],
        [
            "notice 3", "notice 4", "notice 5", "notice 6", "notice 7", "notice 8", "notice 9"
        ]
    );
    let bytes: usize = s.transcript().entries().iter().map(|e| e.text.len()).sum();
    assert!(bytes <= LOG_BYTES_MAX, "{bytes} bytes kept");

    notices(&mut s, 10, 1, LOG_BYTES_MAX + 1);
    s.prepare();
    assert_eq!(heads(&s)[1..], ["notice 10"]);
}

/// The text of notice `i` ("notice N"), `bytes` bytes in all.
fn sized(i: usize, bytes: usize) -> String {
    let head = format!("notice {i} ");
    format!("{head}{}", "x".repeat(bytes - head.len()))
}

/// The text of notice `i` ("notice N"), followed by `rows` rows.
fn tall(i: usize, rows: usize) -> String {
    format!("notice {i}\n{}", "r\n".repeat(rows))
}

#[test]
fn the_log_keeps_at_most_its_bytes_counting_the_notice_on_top() {
    let mut s = state(80, 24);
    // Past the bound by the first entry; the notice of its drop needs
    // room too.
    notice(&mut s, sized(0, 100));
    for i in 1..=4 {
        notice(&mut s, sized(i, LOG_BYTES_MAX / 4));
    }
    s.prepare();
    let bytes: usize = s.transcript().entries().iter().map(|e| e.text.len()).sum();
    assert!(bytes <= LOG_BYTES_MAX, "{bytes} bytes kept");
    assert_eq!(
        heads(&s),
        ["earlier entries", "notice 2", "notice 3", "notice 4"]
    );
}

#[test]
fn a_preview_waiting_for_an_answer_is_kept_until_it_is_answered() {
    let mut s = state(80, 24);
    confirm_command(&mut s, 3);
    let preview = s.mode().confirmation().unwrap().entry;
    notices(&mut s, 0, LOG_ITEMS_MAX + 10, 0);
    s.prepare();
    assert!(matches!(
        s.transcript().entries()[1].kind,
        EntryKind::Preview { .. }
    ));
    assert!(!s.transcript().entry_rows(preview).is_empty());
    let screen = {
        s.transcript_mut().scroll_to_top();
        draw(&mut s)
    };
    assert!(screen.contains("echo EVIL > marker"), "{screen}");

    // Answered, it may go at the next frame, before the agent's result.
    assert_eq!(press(&mut s, KeyCode::Char('n')).len(), 1);
    s.prepare();
    let kept = heads(&s);
    assert_eq!(kept.len(), LOG_ITEMS_MAX + 1);
    assert_eq!(kept[1], "notice 10");
    tool_result(&mut s, "x", ToolStatus::Rejected, "");
    assert_eq!(s.mode(), &Mode::Editing);
}

#[test]
fn a_scrolled_up_view_stays_on_its_lines_while_old_entries_go() {
    let mut s = state(80, 24);
    notices(&mut s, 0, LOG_ITEMS_MAX, 0);
    s.prepare();
    s.transcript_mut().scroll_up(40);
    let before = draw(&mut s);
    notices(&mut s, LOG_ITEMS_MAX, 300, 0);
    let after = draw(&mut s);
    assert_eq!(s.transcript().entries()[0].text, dropped_notice());
    let log = |screen: &str| {
        screen
            .lines()
            .skip(1)
            .take(18)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(log(&after), log(&before));
}

#[test]
fn an_entry_of_very_many_rows_shows_its_first_and_last_halves() {
    let mut s = state(80, 24);
    let rows: String = (0..50_000).map(|i| format!("row {i}\n")).collect();
    agent(
        &mut s,
        AgentEvent::AssistantDelta(format!("```\n{rows}```\n")),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    s.prepare();
    assert_eq!(s.transcript().total_lines(), ENTRY_ROWS_MAX + 1);
    let bottom = draw(&mut s);
    assert!(bottom.contains("row 49999"), "{bottom}");
    s.transcript_mut().scroll_to_top();
    let top = draw(&mut s);
    assert!(top.contains("row 0 "), "{top}");
    s.transcript_mut().show_from(ENTRY_ROWS_MAX / 2 - 2);
    let middle = draw(&mut s);
    assert!(middle.contains("row 4997"), "{middle}");
    // The rows between the halves.
    assert!(
        middle.contains("… 40002 more lines, not shown here"),
        "{middle}"
    );
    assert!(middle.contains("row 45000"), "{middle}");
}

#[test]
fn the_log_keeps_at_most_its_rows_counting_the_notice_on_top() {
    let mut s = state(80, 24);
    notice(&mut s, tall(0, 1000));
    s.prepare();
    let framing = s.transcript().total_lines() - 1000;
    // Twenty entries fill the rows exactly; the notice of the dropped ones
    // then needs room too.
    let per = ROWS_MAX / 20;
    for i in 1..30 {
        notice(&mut s, tall(i, per - framing));
    }
    s.prepare();
    assert!(
        s.transcript().total_lines() <= ROWS_MAX,
        "{}",
        s.transcript().total_lines()
    );
    assert_eq!(s.transcript().entries()[0].text, dropped_notice());
    assert!(
        heads(&s)[1].starts_with("notice 11\n"),
        "{:?}",
        heads(&s)[1]
    );
    assert!(heads(&s).last().unwrap().starts_with("notice 29"));
}
