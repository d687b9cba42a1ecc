//! The session picker: opened by the agent's list when one was asked for,
//! driven by ↑/↓, Enter and Esc, and drawn over the log.

use crossterm::event::KeyCode;
use dashfloat::bounds::PICKER_TITLE_COLUMNS;
use dashfloat::protocol::{AgentEvent, Decision, LogItem, ReplyEnd, SessionSummary, UiCommand};
use dashfloat::ui::picker::{age, size};
use dashfloat::ui::state::State;
use dashfloat::ui::update::Effect;

use crate::{agent, confirm_command, draw, press, state, typed};

/// Now, for the snapshots: 2026-12-01 08:15:00 UTC.
const NOW: u64 = 1_796_112_900;

fn summary(id: &str, title: &str, directory: &str, ago: u64, bytes: u64) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        title: title.into(),
        directory: directory.into(),
        updated: NOW - ago,
        bytes,
    }
}

fn three() -> Vec<SessionSummary> {
    vec![
        summary(
            "20261201-080000-aaaaaa",
            "fix the failing test in src/tools",
            "/home/ann/src/project",
            30,
            2_048,
        ),
        summary(
            "20261130-170000-bbbbbb",
            "explain the agent loop and how a round ends when the person interrupts it halfway",
            "/home/ann/src/project",
            3 * 3_600,
            1_400_000,
        ),
        summary(
            "20261120-090000-cccccc",
            "hello",
            "/home/ann/src/other",
            11 * 86_400,
            812,
        ),
    ]
}

/// `/resume` without an id: the next list of sessions is for the picker.
fn ask_for_the_picker(s: &mut State) {
    typed(s, "/resume");
    assert_eq!(
        press(s, KeyCode::Enter),
        [Effect::Send(UiCommand::ListSessions { all: false })]
    );
}

/// The agent's answer to a listing asked for the picker.
fn open_picker_on(s: &mut State, list: Vec<SessionSummary>) {
    ask_for_the_picker(s);
    agent(s, AgentEvent::Sessions { list, now: NOW });
}

/// The picker open on [`three`] sessions.
fn open_picker(s: &mut State) {
    open_picker_on(s, three());
}

#[test]
fn the_picker_shows_title_directory_age_and_size_over_the_log() {
    let mut s = state(100, 14);
    agent(
        &mut s,
        AgentEvent::AssistantDelta("an earlier reply".into()),
    );
    open_picker(&mut s);
    press(&mut s, KeyCode::Down);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn a_list_asked_for_the_picker_opens_it_and_enter_resumes_the_chosen() {
    let mut s = state(100, 14);
    open_picker(&mut s);
    assert!(s.mode().picker().is_some());
    assert!(!s.picks_sessions());
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Up);
    // Typing does nothing while the picker is open.
    assert!(press(&mut s, KeyCode::Char('x')).is_empty());
    assert!(s.editor().is_empty());
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        [Effect::Send(UiCommand::Resume {
            id: "20261130-170000-bbbbbb".into()
        })]
    );
    assert!(s.mode().picker().is_none());
    // The agent's answer replaces the log.
    agent(
        &mut s,
        AgentEvent::SessionOpened {
            log: vec![
                LogItem::User("explain the agent loop".into()),
                LogItem::Assistant {
                    text: "it runs rounds".into(),
                    reasoning: String::new(),
                    end: ReplyEnd::Complete,
                },
            ],
        },
    );
    let screen = draw(&mut s);
    assert!(screen.contains("explain the agent loop"), "{screen}");
    assert!(screen.contains("it runs rounds"), "{screen}");
}

#[test]
fn esc_closes_the_picker_and_sends_nothing() {
    let mut s = state(100, 14);
    open_picker(&mut s);
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    assert!(s.mode().picker().is_none());
    assert!(!draw(&mut s).contains("Resume a session"));
}

#[test]
fn a_list_not_asked_for_the_picker_is_a_notice_and_so_is_an_empty_one() {
    let mut s = state(100, 14);
    agent(
        &mut s,
        AgentEvent::Sessions {
            list: three(),
            now: NOW,
        },
    );
    assert!(s.mode().picker().is_none());
    assert!(draw(&mut s).contains("20261130-170000-bbbbbb"));
    let mut s = state(100, 14);
    ask_for_the_picker(&mut s);
    agent(
        &mut s,
        AgentEvent::Sessions {
            list: Vec::new(),
            now: NOW,
        },
    );
    assert!(s.mode().picker().is_none());
    assert!(draw(&mut s).contains("no saved sessions"));
}

/// A question about a call closes the picker: what the picker chooses
/// needs the agent idle, and the preview must not lie under it, where its
/// rows would count as seen; the keys are the question's.
#[test]
fn a_question_closes_the_picker() {
    let mut s = state(100, 14);
    open_picker(&mut s);
    confirm_command(&mut s, 3);
    assert!(s.mode().picker().is_none());
    let screen = draw(&mut s);
    assert!(!screen.contains("Resume a session"), "{screen}");
    assert!(screen.contains("echo EVIL > marker"), "{screen}");
    assert_eq!(
        press(&mut s, KeyCode::Char('y')),
        [Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Approve
        })]
    );
}

/// A list asked for the picker that comes while a call waits does not
/// cover the question: a notice says so, and the question keeps its keys.
#[test]
fn a_list_for_the_picker_does_not_cover_a_waiting_call() {
    for list in [
        AgentEvent::Sessions {
            list: three(),
            now: NOW,
        },
        AgentEvent::Prompts {
            list: vec!["fix the test".into()],
        },
    ] {
        let mut s = state(100, 14);
        ask_for_the_picker(&mut s);
        confirm_command(&mut s, 3);
        agent(&mut s, list);
        assert!(s.mode().confirmation().is_some());
        let screen = draw(&mut s);
        assert!(screen.contains("a call waits for your answer"), "{screen}");
        assert!(screen.contains("Confirm (1 of 1)"), "{screen}");
        assert_eq!(press(&mut s, KeyCode::Esc).len(), 1, "Esc rejects");
    }
}

#[test]
fn a_long_title_is_cut_at_the_title_columns() {
    let mut s = state(120, 8);
    let long = "t".repeat(PICKER_TITLE_COLUMNS + 20);
    open_picker_on(
        &mut s,
        vec![summary("20261201-080000-aaaaaa", &long, "/d", 0, 1)],
    );
    let screen = draw(&mut s);
    let row = screen.lines().find(|l| l.contains('›')).unwrap();
    let kept = format!("{}…", "t".repeat(PICKER_TITLE_COLUMNS - 1));
    assert!(row.contains(&kept), "{row}");
    assert!(!row.contains(&"t".repeat(PICKER_TITLE_COLUMNS)), "{row}");
}

#[test]
fn ages_and_sizes_read_as_people_say_them() {
    assert_eq!(age(NOW, NOW), "just now");
    assert_eq!(age(NOW, NOW - 125), "2 min ago");
    assert_eq!(age(NOW, NOW - 7_200), "2 h ago");
    assert_eq!(age(NOW, NOW - 3 * 86_400), "3 d ago");
    assert_eq!(age(NOW, NOW + 10), "just now");
    assert_eq!(size(812), "812 B");
    assert_eq!(size(12 * 1_024), "12 KB");
    assert_eq!(size(1_468_006), "1.4 MB");
}
