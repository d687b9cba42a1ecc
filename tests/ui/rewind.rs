//! Rewind on screen: Esc twice on an empty, idle input (or `/rewind`)
//! asks the agent for the prompts, its answer opens the picker newest
//! first, Enter asks for the rewind, and the prompt comes back into the
//! input box; `/undo` and `/redo` go to the agent.

use crossterm::event::KeyCode;
use dashfloat::protocol::{AgentEvent, Phase, UiCommand};
use dashfloat::ui::update::Effect;

use crate::{agent, draw, press, state, typed};

fn prompts() -> AgentEvent {
    AgentEvent::Prompts {
        list: [
            "fix the test",
            "now add a docs page\nwith examples",
            "rename it",
        ]
        .map(String::from)
        .to_vec(),
    }
}

#[test]
fn esc_twice_on_an_empty_input_asks_for_the_prompts() {
    let mut s = state(80, 12);
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    assert!(draw(&mut s).contains("Esc again to rewind"));
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        [Effect::Send(UiCommand::ListPrompts)]
    );
    // Another key between the two disarms it.
    press(&mut s, KeyCode::Esc);
    press(&mut s, KeyCode::Down);
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    // With text typed, Esc does not rewind.
    typed(&mut s, "draft");
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    assert!(press(&mut s, KeyCode::Esc).is_empty());
}

#[test]
fn while_the_agent_works_esc_interrupts_and_never_rewinds() {
    let mut s = state(80, 12);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        [Effect::Send(UiCommand::Cancel)]
    );
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        [Effect::Send(UiCommand::Cancel)]
    );
}

#[test]
fn the_prompts_open_newest_first_and_enter_rewinds_to_the_chosen() {
    let mut s = state(80, 12);
    agent(&mut s, prompts());
    insta::assert_snapshot!(draw(&mut s));
    press(&mut s, KeyCode::Down);
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        [Effect::Send(UiCommand::Rewind { prompt: 1 })]
    );
    assert!(s.mode().picker().is_none());
    agent(
        &mut s,
        AgentEvent::Rewound {
            text: "now add a docs page\nwith examples".into(),
        },
    );
    assert_eq!(s.editor().text(), "now add a docs page\nwith examples");
}

#[test]
fn no_prompt_yet_is_a_notice() {
    let mut s = state(80, 12);
    agent(&mut s, AgentEvent::Prompts { list: Vec::new() });
    assert!(s.mode().picker().is_none());
    assert!(draw(&mut s).contains("no prompt to rewind to yet"));
}

#[test]
fn undo_redo_and_rewind_are_commands_for_the_agent() {
    let mut s = state(80, 12);
    for (text, command) in [
        ("/undo", UiCommand::Undo),
        ("/redo", UiCommand::Redo),
        ("/rewind", UiCommand::ListPrompts),
    ] {
        typed(&mut s, text);
        assert_eq!(press(&mut s, KeyCode::Enter), [Effect::Send(command)]);
    }
}
