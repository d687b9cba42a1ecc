//! The pure state transition: keys and agent messages in, state and
//! effects out.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use dashfloat::bounds::SPINNER;
use dashfloat::protocol::{AgentEvent, Decision, Phase, ReplyEnd, Severity, ToolStatus, UiCommand};
use dashfloat::ui::state::State;
use dashfloat::ui::transcript::EntryKind;
use dashfloat::ui::update::{Effect, Msg, SendFailure, update};

use crate::{agent, confirm_command, draw, press, typed};

/// An 80×24 state, prepared as for its first frame.
fn state() -> State {
    let mut s = crate::state(80, 24);
    s.prepare();
    s
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Msg {
    Msg::Key(KeyEvent::new(code, modifiers))
}

fn ctrl(s: &mut State, c: char) -> Vec<Effect> {
    update(s, key(KeyCode::Char(c), KeyModifiers::CONTROL)).effects
}

#[test]
fn enter_submits_the_prompt_and_clears_the_input() {
    let mut s = state();
    typed(&mut s, "hi there");
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Send(UiCommand::Prompt {
            text: "hi there".into()
        })]
    );
    assert!(s.editor().is_empty());
    assert_eq!(s.phase(), Phase::Streaming);
    assert_eq!(s.transcript().entries().len(), 1);
}

#[test]
fn a_paste_past_the_prompt_bound_is_left_out_and_the_help_line_says_so() {
    let max = usize::try_from(dashfloat::bounds::PROMPT_MAX_BYTES).unwrap();
    let mut s = state();
    typed(&mut s, "see: ");
    update(&mut s, Msg::Paste("x".repeat(max)));
    assert_eq!(s.editor().text(), "see: ");
    let hint = s.hint();
    assert_eq!(
        hint,
        Some("a prompt holds at most 4 MiB; that was not inserted")
    );
    update(&mut s, Msg::Paste("x".repeat(max - 5)));
    assert_eq!(s.editor().text().len(), max);
    press(&mut s, KeyCode::Char('!'));
    assert_eq!(s.editor().text().len(), max);
    assert!(s.hint().is_some());
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Char('!'));
    assert!(s.editor().text().ends_with("x!"));
    assert!(s.hint().is_none());
}

#[test]
fn a_prompt_put_back_past_the_bound_stays_in_the_input_when_sent() {
    let long = "x".repeat(usize::try_from(dashfloat::bounds::PROMPT_MAX_BYTES).unwrap() + 1);
    let mut s = state();
    agent(&mut s, AgentEvent::Rewound { text: long.clone() });
    assert_eq!(press(&mut s, KeyCode::Enter), [], "nothing is sent");
    assert_eq!(s.editor().text(), long);
    assert_eq!(s.phase(), Phase::Idle);
    assert!(s.transcript().entries().is_empty());
    assert_eq!(
        s.hint(),
        Some("a prompt holds at most 4 MiB; shorten this one to send it")
    );
}

#[test]
fn an_undelivered_prompt_goes_back_into_the_input_and_no_turn_runs() {
    let mut s = state();
    typed(&mut s, "hi there");
    let effects = press(&mut s, KeyCode::Enter);
    let [Effect::Send(prompt)] = effects.as_slice() else {
        panic!("expected one send: {effects:?}");
    };
    let out = update(&mut s, Msg::Undelivered(prompt.clone(), SendFailure::Full));
    assert!(out.changed);
    assert!(out.effects.is_empty());
    assert_eq!(s.editor().text(), "hi there");
    assert_eq!(s.phase(), Phase::Idle);
    let last = s.transcript().entries().last().unwrap();
    assert_eq!(last.kind, EntryKind::System(Severity::Error));
    assert_eq!(
        last.text,
        "the agent is not keeping up; that key was dropped — try again"
    );
}

#[test]
fn an_undelivered_cancel_is_reported_and_leaves_the_rest_alone() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    typed(&mut s, "draft");
    let out = update(
        &mut s,
        Msg::Undelivered(UiCommand::Cancel, SendFailure::Closed),
    );
    assert!(out.effects.is_empty());
    assert_eq!(s.editor().text(), "draft");
    assert_eq!(s.phase(), Phase::Streaming);
    let last = s.transcript().entries().last().unwrap();
    assert_eq!(last.kind, EntryKind::System(Severity::Error));
    assert_eq!(last.text, "the agent has stopped; restart dashfloat");
}

/// An answer to a confirmation that never reached the agent puts the
/// confirmation back (read as far as it was): otherwise the turn would wait
/// for that call's answer forever with nothing left to press.
#[test]
fn an_undelivered_answer_puts_the_confirmation_back() {
    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    let effects = press(&mut s, KeyCode::Char('y'));
    let [Effect::Send(decide)] = effects.as_slice() else {
        panic!("expected one send: {effects:?}");
    };
    assert!(s.mode().confirmation().is_none());
    update(&mut s, Msg::Undelivered(decide.clone(), SendFailure::Full));
    assert_eq!(s.phase(), Phase::Confirming);
    assert_eq!(s.mode().confirmation().map(|c| c.id.as_str()), Some("x"));
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
}

/// When the agent is gone, nothing can answer a call: the question goes
/// whichever comes first, the news or the failed answer, and the screen
/// is idle instead of waiting forever.
#[test]
fn a_question_goes_with_the_agent() {
    for gone_first in [true, false] {
        let mut s = state();
        confirm_command(&mut s, 3);
        s.prepare();
        if gone_first {
            update(&mut s, Msg::AgentGone);
            assert!(s.mode().confirmation().is_none());
        }
        let effects = press(&mut s, KeyCode::Char('y'));
        if let [Effect::Send(decide)] = effects.as_slice() {
            update(
                &mut s,
                Msg::Undelivered(decide.clone(), SendFailure::Closed),
            );
            assert!(
                s.mode().confirmation().is_none(),
                "not put back for nothing to answer"
            );
        }
        update(&mut s, Msg::AgentGone);
        assert!(
            s.mode().confirmation().is_none(),
            "gone first: {gone_first}"
        );
        assert_eq!(s.phase(), Phase::Idle, "gone first: {gone_first}");
    }
}

/// Words sent instead of an answer to an agent that has stopped come back
/// to the input, not to be lost; the question does not.
#[test]
fn words_for_a_stopped_agent_come_back_without_the_question() {
    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "do it another way");
    let effects = press(&mut s, KeyCode::Enter);
    let [Effect::Send(decide)] = effects.as_slice() else {
        panic!("expected one send: {effects:?}");
    };
    update(
        &mut s,
        Msg::Undelivered(decide.clone(), SendFailure::Closed),
    );
    assert_eq!(s.editor().text(), "do it another way");
    assert!(s.mode().confirmation().is_none());
}

#[test]
fn enter_on_blank_input_sends_nothing() {
    let mut s = state();
    typed(&mut s, "   ");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
}

#[test]
fn enter_while_busy_keeps_the_text_and_explains() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    typed(&mut s, "next");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert_eq!(s.editor().text(), "next");
    assert!(s.hint().unwrap().contains("Esc"));
}

#[test]
fn alt_enter_shift_enter_and_ctrl_j_insert_newlines() {
    let mut s = state();
    typed(&mut s, "a");
    update(&mut s, key(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut s, "b");
    update(&mut s, key(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut s, "c");
    ctrl(&mut s, 'j');
    typed(&mut s, "d");
    assert_eq!(s.editor().text(), "a\nb\nc\nd");
}

#[test]
fn ctrl_enter_submits() {
    let mut s = state();
    typed(&mut s, "go");
    let out = update(&mut s, key(KeyCode::Enter, KeyModifiers::CONTROL));
    assert_eq!(
        out.effects,
        vec![Effect::Send(UiCommand::Prompt { text: "go".into() })]
    );
}

#[test]
fn paste_inserts_multiline_text_without_submitting() {
    let mut s = state();
    let out = update(&mut s, Msg::Paste("line one\nline two\n".into()));
    assert!(out.effects.is_empty());
    assert_eq!(s.editor().text(), "line one\nline two\n");
}

#[test]
fn esc_while_streaming_cancels() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        vec![Effect::Send(UiCommand::Cancel)]
    );
}

#[test]
fn esc_while_idle_does_nothing() {
    let mut s = state();
    assert!(press(&mut s, KeyCode::Esc).is_empty());
}

#[test]
fn ctrl_c_cancels_when_busy_and_a_second_quits() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert_eq!(ctrl(&mut s, 'c'), vec![Effect::Send(UiCommand::Cancel)]);
    let second = ctrl(&mut s, 'c');
    assert!(second.contains(&Effect::Quit));
    assert!(second.contains(&Effect::Send(UiCommand::Quit)));
}

#[test]
fn ctrl_c_quits_when_idle() {
    let mut s = state();
    assert_eq!(
        ctrl(&mut s, 'c'),
        vec![Effect::Send(UiCommand::Quit), Effect::Quit]
    );
}

#[test]
fn ctrl_c_arming_resets_when_the_turn_ends() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    ctrl(&mut s, 'c');
    agent(&mut s, AgentEvent::TurnDone);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert_eq!(ctrl(&mut s, 'c'), vec![Effect::Send(UiCommand::Cancel)]);
}

/// "cancelling — press Ctrl+C again to quit" stayed on screen after the
/// turn had stopped, until a key was pressed.
#[test]
fn a_hint_about_stopping_the_turn_goes_when_the_turn_ends() {
    let mut s = state();
    let hint = |s: &State| s.hint().map(str::to_owned);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    ctrl(&mut s, 'c');
    assert_eq!(
        hint(&s).as_deref(),
        Some("cancelling — press Ctrl+C again to quit")
    );
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    assert_eq!(hint(&s), None);

    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    press(&mut s, KeyCode::Esc);
    assert_eq!(hint(&s).as_deref(), Some("interrupting…"));
    agent(&mut s, AgentEvent::TurnDone);
    assert_eq!(hint(&s), None);

    // Any other hint waits for the next key, as before.
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    ctrl(&mut s, 'y');
    assert_eq!(hint(&s).as_deref(), Some("no reply to copy yet"));
    agent(&mut s, AgentEvent::TurnDone);
    assert_eq!(hint(&s).as_deref(), Some("no reply to copy yet"));
}

#[test]
fn ctrl_d_quits_only_on_empty_input() {
    let mut s = state();
    typed(&mut s, "x");
    assert!(ctrl(&mut s, 'd').is_empty());
    press(&mut s, KeyCode::Backspace);
    assert!(ctrl(&mut s, 'd').contains(&Effect::Quit));
}

#[test]
fn key_releases_are_ignored() {
    let mut s = state();
    let mut ev = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    ev.kind = KeyEventKind::Release;
    let out = update(&mut s, Msg::Key(ev));
    assert!(!out.changed);
    assert!(s.editor().is_empty());
}

#[test]
fn up_recalls_history_on_the_first_line() {
    let mut s = state();
    typed(&mut s, "first");
    press(&mut s, KeyCode::Enter);
    agent(&mut s, AgentEvent::TurnDone);
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "first");
}

#[test]
fn deltas_stream_into_one_reply_and_end_marks_it() {
    let mut s = state();
    agent(&mut s, AgentEvent::AssistantDelta("Hel".into()));
    agent(&mut s, AgentEvent::AssistantDelta("lo".into()));
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Interrupted));
    let entries = s.transcript().entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].text, "Hello");
    assert!(!entries[0].is_open_reply());
    assert!(s.transcript().plain_text().contains("[interrupted]"));
}

#[test]
fn a_system_entry_after_a_reply_starts_a_new_entry() {
    let mut s = state();
    agent(&mut s, AgentEvent::AssistantDelta("a".into()));
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    agent(
        &mut s,
        AgentEvent::System {
            severity: Severity::Notice,
            text: "note".into(),
        },
    );
    agent(&mut s, AgentEvent::AssistantDelta("b".into()));
    assert_eq!(s.transcript().entries().len(), 3);
}

#[test]
fn tick_advances_the_spinner_only_while_active() {
    let mut s = state();
    let now = std::time::Instant::now();
    assert!(!update(&mut s, Msg::Tick(now)).changed);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert!(update(&mut s, Msg::Tick(now)).changed);
    assert!(draw(&mut s).contains(SPINNER[1]));
}

#[test]
fn mouse_motion_costs_no_frame_but_the_wheel_scrolls() {
    let mut s = state();
    for i in 0..100 {
        agent(&mut s, AgentEvent::AssistantDelta(format!("{i}\n\n")));
    }
    s.prepare();
    let mouse = |kind| {
        Msg::Mouse(MouseEvent {
            kind,
            column: 1,
            row: 1,
            modifiers: KeyModifiers::NONE,
        })
    };
    assert!(!update(&mut s, mouse(MouseEventKind::Moved)).changed);
    assert!(update(&mut s, mouse(MouseEventKind::ScrollUp)).changed);
    assert!(!s.transcript().is_following());
    update(&mut s, mouse(MouseEventKind::ScrollDown));
    assert!(s.transcript().is_following());
}

#[test]
fn scrolled_up_view_stays_put_while_lines_arrive_and_end_follows_again() {
    let mut s = state();
    for i in 0..100 {
        agent(&mut s, AgentEvent::AssistantDelta(format!("{i}\n\n")));
    }
    s.prepare();
    press(&mut s, KeyCode::PageUp);
    s.prepare();
    let top_before = s.transcript().visible(5)[0].to_string();
    agent(
        &mut s,
        AgentEvent::AssistantDelta("more\n\nand more\n\n".into()),
    );
    s.prepare();
    assert_eq!(s.transcript().visible(5)[0].to_string(), top_before);
    press(&mut s, KeyCode::End);
    assert!(s.transcript().is_following());
}

/// A running command's tail grows and shrinks below a view scrolled
/// up, and its result replaces it: the view stays where it is.
#[test]
fn scrolled_up_view_stays_put_while_a_command_s_tail_changes() {
    let mut s = state();
    for i in 0..100 {
        agent(&mut s, AgentEvent::AssistantDelta(format!("{i}\n\n")));
    }
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    agent(
        &mut s,
        AgentEvent::ToolCall {
            id: "t".into(),
            name: "execute_command".into(),
            summary: "make".into(),
        },
    );
    s.prepare();
    press(&mut s, KeyCode::PageUp);
    s.prepare();
    let top_before = s.transcript().visible(5)[0].to_string();
    for tail in ["1\n2\n3\n4\n5", "5", "6\n7\n8"] {
        agent(
            &mut s,
            AgentEvent::ToolOutput {
                id: "t".into(),
                tail: tail.into(),
            },
        );
        s.prepare();
        assert_eq!(
            s.transcript().visible(5)[0].to_string(),
            top_before,
            "{tail}"
        );
    }
    agent(
        &mut s,
        AgentEvent::ToolResult {
            id: "t".into(),
            status: ToolStatus::Ok,
            excerpt: "done".into(),
        },
    );
    s.prepare();
    assert_eq!(s.transcript().visible(5)[0].to_string(), top_before);
}

#[test]
fn home_on_empty_input_jumps_to_the_top() {
    let mut s = state();
    for i in 0..100 {
        agent(&mut s, AgentEvent::AssistantDelta(format!("row {i}\n\n")));
    }
    s.prepare();
    press(&mut s, KeyCode::Home);
    s.prepare();
    let height = usize::from(s.log_height());
    assert_eq!(s.transcript().visible(height)[0].to_string(), "row 0");
}

#[test]
fn ctrl_y_copies_the_last_reply() {
    let mut s = state();
    agent(&mut s, AgentEvent::AssistantDelta("the answer".into()));
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    assert_eq!(
        ctrl(&mut s, 'y'),
        vec![Effect::Copy("the answer".to_string())]
    );
}

#[test]
fn agent_gone_leaves_an_error_and_idles() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    update(&mut s, Msg::AgentGone);
    assert_eq!(s.phase(), Phase::Idle);
    assert!(s.transcript().plain_text().contains("agent stopped"));
}

#[test]
fn a_reply_over_the_clipboard_cap_is_not_copied_and_the_hint_says_why() {
    use dashfloat::bounds::COPY_MAX_BYTES;
    let mut s = state();
    agent(
        &mut s,
        AgentEvent::AssistantDelta("x".repeat(COPY_MAX_BYTES)),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    assert_eq!(
        ctrl(&mut s, 'y'),
        vec![Effect::Copy("x".repeat(COPY_MAX_BYTES))]
    );
    let mut s2 = state();
    agent(
        &mut s2,
        AgentEvent::AssistantDelta("x".repeat(COPY_MAX_BYTES + 1)),
    );
    agent(&mut s2, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    assert!(ctrl(&mut s2, 'y').is_empty());
    assert!(s2.hint().unwrap().contains("not copied"));
}

#[test]
fn the_input_box_grows_to_its_limit_and_no_further() {
    use dashfloat::bounds::INPUT_MAX_ROWS;
    let mut s = state();
    // The box is laid out once per frame, by `prepare`.
    let rows = |s: &mut State| {
        s.prepare();
        s.input_rows()
    };
    assert_eq!(rows(&mut s), 1);
    update(
        &mut s,
        Msg::Paste("a\n".repeat(usize::from(INPUT_MAX_ROWS) - 1)),
    );
    assert_eq!(rows(&mut s), INPUT_MAX_ROWS);
    update(&mut s, Msg::Paste("b\nc\nd\n".into()));
    assert_eq!(rows(&mut s), INPUT_MAX_ROWS);
}

fn approves(effects: &[Effect]) -> bool {
    effects
        == [Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Approve,
        })]
}

fn screen_lines(s: &State) -> Vec<String> {
    let height = usize::from(s.log_height());
    s.transcript()
        .visible(height)
        .iter()
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn y_on_a_long_preview_approves_only_once_its_end_has_been_on_screen() {
    let mut s = state();
    confirm_command(&mut s, 61);
    s.prepare();
    // The preview opens at its first line, not at its end.
    assert_eq!(screen_lines(&s)[0].trim(), "run in .:");
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    assert!(s.mode().confirmation().is_some());
    assert!(s.editor().is_empty(), "the refused y was typed");
    let hint = &s.hint().unwrap();
    assert!(hint.contains("not been on screen"), "{hint}");
    // Two pages on, the end is still below.
    for _ in 0..2 {
        press(&mut s, KeyCode::PageDown);
        s.prepare();
    }
    assert!(!screen_lines(&s).iter().any(|l| l.contains("EVIL")));
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    // The third page shows it, but only once it has been drawn.
    press(&mut s, KeyCode::PageDown);
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    s.prepare();
    assert!(screen_lines(&s).iter().any(|l| l.contains("EVIL")));
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
    assert!(s.mode().confirmation().is_none());
}

#[test]
fn jumping_to_the_end_of_a_preview_does_not_count_the_lines_skipped() {
    let mut s = state();
    confirm_command(&mut s, 61);
    s.prepare();
    press(&mut s, KeyCode::End);
    s.prepare();
    assert!(screen_lines(&s).iter().any(|l| l.contains("EVIL")));
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    let hint = &s.hint().unwrap();
    assert!(hint.contains("lines 21–62"), "{hint}");
}

#[test]
fn down_scrolls_a_preview_line_by_line_on_empty_input() {
    let mut s = state();
    confirm_command(&mut s, 25);
    s.prepare();
    // 26 rows in a 20-row log: six more lines bring the end on screen.
    for _ in 0..5 {
        press(&mut s, KeyCode::Down);
        s.prepare();
    }
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    press(&mut s, KeyCode::Down);
    s.prepare();
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
}

#[test]
fn a_short_preview_is_approved_once_it_has_been_drawn() {
    let mut s = state();
    confirm_command(&mut s, 3);
    // Typed ahead, before the preview was ever on screen: held.
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    s.prepare();
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
}

#[test]
fn a_preview_can_be_rejected_without_reading_it() {
    for key in [KeyCode::Esc, KeyCode::Char('n')] {
        let mut s = state();
        confirm_command(&mut s, 61);
        assert_eq!(
            press(&mut s, key),
            vec![Effect::Send(UiCommand::Decide {
                id: "x".into(),
                decision: Decision::Reject,
            })]
        );
    }
}

/// A person typing when a question appears keeps typing: `y` and `n` go
/// into the text, before the question (typed ahead) or after it; Enter
/// sends the text instead of an answer, and Esc still rejects.
#[test]
fn typed_text_is_never_an_answer_and_enter_sends_it_instead_of_one() {
    let redirect = |text: &str| {
        vec![Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Redirect(text.into()),
        })]
    };
    // Typed ahead: "an" was there when the question came.
    let mut s = state();
    typed(&mut s, "an");
    confirm_command(&mut s, 3);
    s.prepare();
    for c in "y way, not that".chars() {
        assert!(press(&mut s, KeyCode::Char(c)).is_empty(), "{c}");
    }
    assert_eq!(s.editor().text(), "any way, not that");
    assert!(s.mode().confirmation().is_some());
    assert_eq!(press(&mut s, KeyCode::Enter), redirect("any way, not that"));
    assert!(s.mode().confirmation().is_none());
    assert!(s.editor().is_empty());
    assert_eq!(s.phase(), Phase::Executing);
    let last = s.transcript().entries().last().unwrap();
    assert_eq!(
        (&last.kind, last.text.as_str()),
        (&EntryKind::User, "any way, not that")
    );
    // Typed after it: the first letter was not an answer.
    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "fix the code, not the test");
    assert!(s.mode().confirmation().is_some());
    // A newline does not send it.
    update(&mut s, key(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut s, "please");
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        redirect("fix the code, not the test\nplease")
    );
    // Esc rejects and leaves the text.
    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "hmm");
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        vec![Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Reject,
        })]
    );
    assert_eq!(s.editor().text(), "hmm");
}

/// Alt+y can be Esc then `y` typed right after it (tmux joins them), so it
/// never approves: with a draft it is the Esc, which rejects, and the
/// letter. Alt+1…9 and Alt+b/f are chords and answer nothing.
#[test]
fn alt_y_never_approves_and_chords_answer_nothing() {
    let alt = |s: &mut State, c: char| update(s, key(KeyCode::Char(c), KeyModifiers::ALT)).effects;
    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "my draft");
    alt(&mut s, '1');
    alt(&mut s, 'b');
    assert!(
        s.mode().confirmation().is_some(),
        "Alt+1 and Alt+b are no answers"
    );
    assert_eq!(s.editor().cursor(), "my ".len(), "Alt+b moved a word back");
    alt(&mut s, 'f');
    assert_eq!(s.editor().cursor(), "my draft".len());
    assert_eq!(
        alt(&mut s, 'y'),
        vec![Effect::Send(UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Reject,
        })]
    );
    assert_eq!(s.editor().text(), "my drafty");
}

/// Text the person chose (from the history) is theirs: `y` is a letter of
/// it. Blank text is not sent instead of an answer; Ctrl+Enter sends words
/// as Enter does; words that never reached the agent come back to the
/// input with the question.
#[test]
fn chosen_blank_and_undelivered_words_at_a_confirmation() {
    let mut s = state();
    typed(&mut s, "earlier prompt");
    press(&mut s, KeyCode::Enter);
    agent(&mut s, AgentEvent::TurnDone);
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    confirm_command(&mut s, 3);
    s.prepare();
    // Up reads the preview on an empty input; with text, it recalls.
    typed(&mut s, "x");
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "earlier prompt");
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    assert_eq!(s.editor().text(), "earlier prompty");

    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "  ");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert!(s.mode().confirmation().is_some());

    let mut s = state();
    confirm_command(&mut s, 3);
    s.prepare();
    typed(&mut s, "other way");
    let effects = update(&mut s, key(KeyCode::Enter, KeyModifiers::CONTROL)).effects;
    let [Effect::Send(decide)] = effects.as_slice() else {
        panic!("expected one send: {effects:?}");
    };
    assert_eq!(
        decide,
        &UiCommand::Decide {
            id: "x".into(),
            decision: Decision::Redirect("other way".into()),
        }
    );
    assert!(s.editor().is_empty());
    update(&mut s, Msg::Undelivered(decide.clone(), SendFailure::Full));
    assert_eq!(s.phase(), Phase::Confirming);
    assert_eq!(s.editor().text(), "other way");
    assert!(press(&mut s, KeyCode::Char('n')).is_empty(), "n typed on");
}

/// Text the app put back (a rewound prompt) is not being written: `y` and
/// `n` answer as on an empty input. Once the person edits it, they type.
#[test]
fn text_put_back_leaves_y_and_n_as_answers_until_it_is_edited() {
    let rewound_then_asked = || {
        let mut s = state();
        let text = "change the greeting".into();
        agent(&mut s, AgentEvent::Rewound { text });
        confirm_command(&mut s, 3);
        s.prepare();
        s
    };
    let mut s = rewound_then_asked();
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
    assert_eq!(s.editor().text(), "change the greeting");
    let mut s = rewound_then_asked();
    press(&mut s, KeyCode::Backspace);
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());
    assert_eq!(s.editor().text(), "change the greetiny");
}

#[test]
fn a_resize_shows_a_partly_read_preview_from_its_top_but_keeps_a_read_one_approvable() {
    let mut s = state();
    confirm_command(&mut s, 30);
    s.prepare();
    press(&mut s, KeyCode::PageDown);
    // Rows 1–20 of 31 seen; the rows move when the width changes.
    update(&mut s, Msg::Resize(12, 24));
    s.prepare();
    assert_eq!(screen_lines(&s)[0].trim(), "run in .:");
    assert!(press(&mut s, KeyCode::Char('y')).is_empty());

    let mut s = state();
    confirm_command(&mut s, 30);
    s.prepare();
    press(&mut s, KeyCode::PageDown);
    s.prepare();
    // Every row was on screen: the content has been seen whatever the width.
    update(&mut s, Msg::Resize(12, 24));
    s.prepare();
    assert!(approves(&press(&mut s, KeyCode::Char('y'))));
}

#[test]
fn session_facts_correct_the_model_and_window_the_header_shows() {
    let mut s = state();
    agent(
        &mut s,
        AgentEvent::SessionFacts {
            model: Some("llama-3.1-8b\u{1b}[31m".into()),
            context_window: Some(32_768),
        },
    );
    assert_eq!(s.session().model, "llama-3.1-8b[31m");
    assert_eq!(s.session().context_window, 32_768);
    // A window learned alone leaves the model as it is; a zero window is
    // no window and changes nothing.
    agent(
        &mut s,
        AgentEvent::SessionFacts {
            model: None,
            context_window: Some(4096),
        },
    );
    agent(
        &mut s,
        AgentEvent::SessionFacts {
            model: None,
            context_window: Some(0),
        },
    );
    assert_eq!(s.session().model, "llama-3.1-8b[31m");
    assert_eq!(s.session().context_window, 4096);
}
