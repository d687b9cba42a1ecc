//! Slash commands (ADR 0023): parsing every command and its bad
//! arguments, the completion popup (Tab, arrows, Enter, Esc), `//text`,
//! refusal while busy, and the screens of the popup and of `/help`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dashfloat::bounds::{COMMANDS, POPUP_MAX_ROWS};
use dashfloat::protocol::{AgentEvent, ApprovalPolicy, Phase, ReplyEnd, Severity, UiCommand};
use dashfloat::ui::slash::{self, ArgError, CustomCommands, Input, Slash, SlashError, window};
use dashfloat::ui::state::State;
use dashfloat::ui::transcript::EntryKind;
use dashfloat::ui::update::{Effect, Msg, update};

use crate::{agent, draw, press, typed};

fn state() -> State {
    let mut s = crate::state(80, 24);
    s.prepare();
    s
}

/// Types `text` and presses Enter; the effects.
fn run(s: &mut State, text: &str) -> Vec<Effect> {
    typed(s, text);
    press(s, KeyCode::Enter)
}

/// Empties a one-line input as the person would, with Ctrl+U.
fn clear_input(s: &mut State) {
    update(
        s,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
}

fn command(text: &str) -> Slash {
    match slash::parse(text, &CustomCommands::default()) {
        Ok(Input::Command(command)) => command,
        other => panic!("{text}: {other:?}"),
    }
}

fn refused(text: &str) -> SlashError {
    slash::parse(text, &CustomCommands::default()).expect_err(text)
}

/// The last log entry's kind and text.
fn last_entry(s: &State) -> (EntryKind, String) {
    let entry = s.transcript().entries().last().expect("an entry");
    (entry.kind.clone(), entry.text.clone())
}

fn names(s: &State) -> Vec<String> {
    s.completion()
        .candidates(s.commands())
        .iter()
        .map(|c| c.name().to_owned())
        .collect()
}

#[test]
fn every_command_parses_with_and_without_its_argument() {
    assert_eq!(command("/help"), Slash::Help);
    assert_eq!(command("/clear"), Slash::Clear);
    assert_eq!(command("/compact"), Slash::Compact { focus: None });
    assert_eq!(
        command("/compact  the parser and\nits tests "),
        Slash::Compact {
            focus: Some("the parser and\nits tests".into())
        }
    );
    assert_eq!(command("/sessions"), Slash::Sessions);
    assert_eq!(command("/resume"), Slash::Resume { id: None });
    assert_eq!(
        command("/resume 20261201-081700-ab12"),
        Slash::Resume {
            id: Some("20261201-081700-ab12".into())
        }
    );
    assert_eq!(command("/model"), Slash::Model { name: None });
    assert_eq!(
        command("/model qwen3:8b"),
        Slash::Model {
            name: Some("qwen3:8b".into())
        }
    );
    assert_eq!(command("/approval"), Slash::Approval { policy: None });
    for policy in ApprovalPolicy::ALL {
        assert_eq!(
            command(&format!("/approval {}", policy.name())),
            Slash::Approval {
                policy: Some(policy)
            }
        );
    }
    assert_eq!(command("/copy"), Slash::Copy { block: None });
    assert_eq!(command("/copy 2"), Slash::Copy { block: Some(2) });
    assert_eq!(command("/quit"), Slash::Quit);
    assert_eq!(command("/help   "), Slash::Help);
}

#[test]
fn bad_arguments_are_refused_with_the_usage() {
    for text in ["/help me", "/clear all", "/sessions --all", "/quit now"] {
        assert!(matches!(
            refused(text),
            SlashError::Argument {
                why: ArgError::Unexpected,
                ..
            }
        ));
    }
    for text in ["/resume a b", "/model two words", "/copy 1 2"] {
        assert!(matches!(
            refused(text),
            SlashError::Argument {
                why: ArgError::OneWord,
                ..
            }
        ));
    }
    assert_eq!(
        refused("/approval yolo").to_string(),
        "/approval [POLICY]: `yolo` is not an approval policy; choose ask|auto-edit|auto|dangerously-approve-all"
    );
    for n in ["0", "x", "-1", "1.5"] {
        assert_eq!(
            refused(&format!("/copy {n}")),
            SlashError::Argument {
                command: "copy",
                usage: "[N]",
                why: ArgError::Block(n.into()),
            }
        );
    }
}

#[test]
fn a_double_slash_is_a_prompt_that_starts_with_one() {
    assert_eq!(
        slash::parse("//etc/hosts is odd", &CustomCommands::default()),
        Ok(Input::Prompt("/etc/hosts is odd".into()))
    );
    assert_eq!(
        slash::parse("hi /help", &CustomCommands::default()),
        Ok(Input::Prompt("hi /help".into()))
    );
    let mut s = state();
    let effects = run(&mut s, "//help");
    assert_eq!(
        effects,
        vec![Effect::Send(UiCommand::Prompt {
            text: "/help".into()
        })]
    );
    assert_eq!(last_entry(&s), (EntryKind::User, "/help".into()));
    assert!(s.completion().candidates(s.commands()).is_empty());
}

#[test]
fn an_unknown_command_is_an_error_entry_and_never_reaches_the_model() {
    let mut s = state();
    let effects = run(&mut s, "/frobnicate now");
    assert!(effects.is_empty());
    assert_eq!(s.phase(), Phase::Idle);
    assert!(s.editor().is_empty());
    assert_eq!(
        last_entry(&s),
        (
            EntryKind::System(Severity::Error),
            "unknown command /frobnicate — /help lists the commands; start with // to send a prompt that begins with /".into()
        )
    );
    let effects = run(&mut s, "/copy zero");
    assert!(effects.is_empty());
    assert_eq!(last_entry(&s).0, EntryKind::System(Severity::Error));
}

#[test]
fn each_command_sends_what_the_agent_needs() {
    let cases = [
        ("/clear", UiCommand::Clear),
        ("/compact", UiCommand::Compact { focus: None }),
        (
            "/compact the tests",
            UiCommand::Compact {
                focus: Some("the tests".into()),
            },
        ),
        ("/sessions", UiCommand::ListSessions { all: false }),
        ("/resume abc", UiCommand::Resume { id: "abc".into() }),
        (
            "/model big-model",
            UiCommand::SetModel {
                name: "big-model".into(),
            },
        ),
        (
            "/approval auto-edit",
            UiCommand::SetApproval(ApprovalPolicy::AutoEdit),
        ),
    ];
    for (text, expected) in cases {
        let mut s = state();
        assert_eq!(run(&mut s, text), vec![Effect::Send(expected)], "{text}");
        assert!(s.editor().is_empty(), "{text}");
        assert!(!s.picks_sessions(), "{text}");
    }
}

#[test]
fn compact_shows_the_compacting_phase_until_the_turn_is_done() {
    let mut s = state();
    run(&mut s, "/compact");
    assert_eq!(s.phase(), Phase::Compacting);
    agent(&mut s, AgentEvent::TurnDone);
    assert_eq!(s.phase(), Phase::Idle);
}

#[test]
fn resume_without_an_id_lists_the_sessions_for_the_picker() {
    let mut s = state();
    let effects = run(&mut s, "/resume");
    assert_eq!(
        effects,
        vec![Effect::Send(UiCommand::ListSessions { all: false })]
    );
    assert!(s.picks_sessions());
    run(&mut s, "/sessions");
    assert!(!s.picks_sessions());
}

#[test]
fn model_and_approval_without_an_argument_show_the_current_one() {
    let mut s = state();
    assert!(run(&mut s, "/model").is_empty());
    assert_eq!(
        last_entry(&s),
        (
            EntryKind::System(Severity::Notice),
            "model: qwen2.5-coder-0.5b — /model NAME uses another from the next request on".into()
        )
    );
    agent(
        &mut s,
        AgentEvent::ApprovalChanged(crate::mode(ApprovalPolicy::DangerouslyApproveAll, "off")),
    );
    assert!(run(&mut s, "/approval").is_empty());
    assert_eq!(
        last_entry(&s).1,
        "approval: dangerously-approve-all (commands it runs: sandbox off) — /approval ask|auto-edit|auto|dangerously-approve-all changes it"
    );
}

#[test]
fn copy_quit_and_help_work_while_busy_and_the_rest_wait_with_the_text_kept() {
    let mut s = state();
    agent(
        &mut s,
        AgentEvent::AssistantDelta("```sh\nls\n```\n".into()),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert_eq!(run(&mut s, "/copy 1"), vec![Effect::Copy("ls".into())]);
    let entries = s.transcript().entries().len();
    assert!(run(&mut s, "/help").is_empty());
    assert_eq!(s.transcript().entries().len(), entries + 1);
    assert!(run(&mut s, "/model").is_empty());
    assert_eq!(
        run(&mut s, "/hooks"),
        vec![Effect::Send(UiCommand::ListHooks)]
    );
    assert_eq!(run(&mut s, "/mcp"), vec![Effect::Send(UiCommand::ListMcp)]);
    for text in [
        "/clear",
        "/compact",
        "/sessions",
        "/resume",
        "/resume x",
        "/model m",
        "/approval ask",
        "/hooks trust",
        "/mcp trust",
    ] {
        clear_input(&mut s);
        let effects = run(&mut s, text);
        assert!(effects.is_empty(), "{text} while busy: {effects:?}");
        assert_eq!(s.editor().text(), text);
        assert_eq!(
            s.hint().unwrap(),
            "the agent is busy — Esc interrupts it; your text stays here"
        );
    }
    clear_input(&mut s);
    let effects = run(&mut s, "/quit");
    assert_eq!(
        effects,
        vec![
            Effect::Send(UiCommand::Cancel),
            Effect::Send(UiCommand::Quit),
            Effect::Quit
        ]
    );
}

#[test]
fn slash_commands_are_kept_in_the_prompt_history() {
    let mut s = state();
    run(&mut s, "/model");
    run(&mut s, "/nonsense");
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "/nonsense");
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "/model");
}

#[test]
fn a_slash_opens_the_popup_with_every_command_and_typing_narrows_it() {
    let mut s = state();
    assert!(s.completion().candidates(s.commands()).is_empty());
    typed(&mut s, "/");
    assert_eq!(names(&s), COMMANDS.map(|c| c.name).to_vec());
    typed(&mut s, "c");
    assert_eq!(names(&s), vec!["clear", "compact", "copy"]);
    typed(&mut s, "om");
    assert_eq!(names(&s), vec!["compact"]);
    typed(&mut s, "x");
    assert!(names(&s).is_empty());
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Char(' '));
    assert!(names(&s).is_empty(), "arguments close it");
}

#[test]
fn tab_completes_the_selection_and_cycles_through_the_candidates() {
    let mut s = state();
    typed(&mut s, "/c");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/clear");
    assert_eq!(names(&s), vec!["clear", "compact", "copy"]);
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/compact");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/copy");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/clear");
    // The arrows move the selection, and the completed input with it.
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "/copy");
    // Typing on starts afresh from what is typed.
    typed(&mut s, "x");
    assert!(names(&s).is_empty());
}

#[test]
fn tab_on_the_only_candidate_adds_a_space_where_an_argument_follows() {
    let mut s = state();
    typed(&mut s, "/mo");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/model ");
    assert!(names(&s).is_empty());
    let mut s = state();
    typed(&mut s, "/he");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/help");
}

#[test]
fn arrows_move_the_selection_and_enter_runs_the_selected_command() {
    let mut s = state();
    typed(&mut s, "/");
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Down);
    assert_eq!(
        s.completion().selected(s.commands()).unwrap().name(),
        "compact"
    );
    press(&mut s, KeyCode::Up);
    assert_eq!(
        s.completion().selected(s.commands()).unwrap().name(),
        "clear"
    );
    press(&mut s, KeyCode::Up);
    press(&mut s, KeyCode::Up);
    assert_eq!(
        s.completion().selected(s.commands()).unwrap().name(),
        "quit",
        "it wraps"
    );
    assert_eq!(s.editor().text(), "/", "the typed text stays");
    let mut s = state();
    typed(&mut s, "/se");
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        vec![Effect::Send(UiCommand::ListSessions { all: false })]
    );
    assert!(s.editor().is_empty());
}

#[test]
fn esc_closes_the_popup_until_the_input_changes_and_then_interrupts() {
    let mut s = state();
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    typed(&mut s, "/co");
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    assert!(s.completion().candidates(s.commands()).is_empty());
    assert_eq!(s.editor().text(), "/co");
    // Closed, Tab is a tab and the arrows browse the history again.
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        vec![Effect::Send(UiCommand::Cancel)]
    );
    press(&mut s, KeyCode::Backspace);
    assert_eq!(names(&s), vec!["clear", "compact", "copy"]);
}

#[test]
fn the_popup_window_keeps_the_selection_in_view_within_its_bound() {
    // Every command fits.
    assert_eq!(POPUP_MAX_ROWS, COMMANDS.len());
    assert_eq!(window(9, 0, POPUP_MAX_ROWS), 0..9);
    assert_eq!(window(30, 0, POPUP_MAX_ROWS), 0..POPUP_MAX_ROWS);
    assert_eq!(window(30, 16, POPUP_MAX_ROWS), 0..17);
    assert_eq!(window(30, 17, POPUP_MAX_ROWS), 1..18);
    assert_eq!(window(30, 29, POPUP_MAX_ROWS), 13..30);
    assert_eq!(window(0, 0, POPUP_MAX_ROWS), 0..0);
}

#[test]
fn popup_screen() {
    let mut s = state();
    agent(
        &mut s,
        AgentEvent::AssistantDelta("An earlier reply.".into()),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    typed(&mut s, "/c");
    press(&mut s, KeyCode::Down);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn popup_in_a_short_terminal_scrolls_with_the_selection() {
    let mut s = crate::state(60, 8);
    typed(&mut s, "/");
    for _ in 0..5 {
        press(&mut s, KeyCode::Down);
    }
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn help_screen() {
    let mut s = crate::state(100, 30);
    run(&mut s, "/help");
    let help = last_entry(&s).1;
    for command in &COMMANDS {
        assert!(help.contains(&format!("/{}", command.name)));
        assert!(help.contains(command.about));
    }
    for item in dashfloat::bounds::TABLES
        .iter()
        .flat_map(|(_, items)| *items)
    {
        assert!(help.contains(item), "{item}");
    }
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn an_undelivered_compact_returns_to_idle() {
    let mut s = state();
    let effects = run(&mut s, "/compact");
    let [Effect::Send(command)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    update(
        &mut s,
        Msg::Undelivered(command.clone(), dashfloat::ui::update::SendFailure::Full),
    );
    assert_eq!(s.phase(), Phase::Idle);
}

/// `/status` (ADR 0052): the session's tokens from the agent's totals,
/// and their cost where the config prices the model in use; the header
/// shows the cost too. Without a price it says how to give one.
#[test]
fn status_shows_the_sessions_tokens_and_their_cost() {
    use dashfloat::protocol::{Price, Usage};
    assert_eq!(command("/status"), Slash::Status);
    let totals = Usage {
        prompt_tokens: 120_000,
        completion_tokens: 4_000,
        total_tokens: 124_000,
        cached_tokens: 100_000,
    };
    let mut s = state();
    agent(&mut s, AgentEvent::Totals(totals));
    assert!(run(&mut s, "/status").is_empty());
    let screen = draw(&mut s);
    assert!(
        screen.contains("session: 120000 prompt tokens (100000 read from the provider's cache)"),
        "{screen}"
    );
    assert!(
        screen.contains("cost unknown: give [prices.\"qwen2.5-coder-0.5b\"]"),
        "{screen}"
    );

    let mut session = crate::session();
    // $3 a million prompt tokens, $0.30 cached, $15 a million reply tokens.
    let price = Price {
        input: 3_000_000,
        cached_input: 300_000,
        output: 15_000_000,
    };
    session.prices.insert(session.model.clone(), price);
    // 20,000 × $3 + 100,000 × $0.30 + 4,000 × $15, per million: $0.15.
    assert!((price.cost(&totals) - 0.15).abs() < 1e-9);
    let mut s = State::new(session, dashfloat::ui::theme::Theme::new(true), (100, 24));
    s.prepare();
    agent(&mut s, AgentEvent::Totals(totals));
    run(&mut s, "/status");
    let screen = draw(&mut s);
    assert!(screen.contains("$0.1500"), "{screen}");
    assert!(
        screen.lines().next().unwrap().contains("│ $0.1500 │"),
        "{screen}"
    );
}
