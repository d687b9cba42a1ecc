//! The `@` popup (ADR 0038): the project's paths the agent sends, matched
//! against the `@` word at the cursor; Tab or Enter completes it, the
//! arrows select, Esc closes; and its screen.

use crossterm::event::KeyCode;
use dashfloat::protocol::{AgentEvent, Phase, ReplyEnd, UiCommand};
use dashfloat::ui::state::State;
use dashfloat::ui::update::Effect;

use crate::{agent, confirm_command, draw, press, typed};

const FILES: [&str; 6] = [
    "README.md",
    "lib/",
    "package.json",
    "test/",
    "lib/slug.js",
    "test/slug.test.js",
];

/// A state that knows the project's files.
fn state() -> State {
    let mut s = crate::state(80, 24);
    s.prepare();
    agent(
        &mut s,
        AgentEvent::ProjectFiles(FILES.iter().map(|f| (*f).to_owned()).collect()),
    );
    s
}

#[test]
fn an_at_word_lists_the_matching_paths_and_tab_completes_one() {
    let mut s = state();
    typed(&mut s, "fix ");
    assert!(s.mention().candidates().is_empty());
    typed(&mut s, "@slu");
    assert_eq!(
        s.mention().candidates(),
        ["lib/slug.js", "test/slug.test.js"]
    );
    press(&mut s, KeyCode::Down);
    assert!(press(&mut s, KeyCode::Tab).is_empty());
    assert_eq!(s.editor().text(), "fix @test/slug.test.js ");
    assert!(s.mention().candidates().is_empty(), "the word is done");
    typed(&mut s, "and @li");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "fix @test/slug.test.js and @lib/");
    assert_eq!(
        s.mention().candidates(),
        ["lib/", "lib/slug.js"],
        "a folder goes on to its files"
    );
}

#[test]
fn enter_completes_instead_of_sending_while_the_popup_is_open() {
    let mut s = state();
    typed(&mut s, "@pack");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert_eq!(s.editor().text(), "@package.json ");
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        vec![Effect::Send(UiCommand::Prompt {
            text: "@package.json ".into()
        })]
    );
}

#[test]
fn completing_in_the_middle_keeps_what_follows() {
    let mut s = state();
    typed(&mut s, "fix  please");
    for _ in 0.." please".len() {
        press(&mut s, KeyCode::Left);
    }
    typed(&mut s, "@READ");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "fix @README.md  please");
    assert_eq!(s.editor().cursor(), "fix @README.md ".len());
}

#[test]
fn esc_closes_the_popup_until_the_word_changes() {
    let mut s = state();
    typed(&mut s, "@lib");
    assert!(press(&mut s, KeyCode::Esc).is_empty());
    assert!(s.mention().candidates().is_empty());
    // Closed, Enter sends what is typed.
    typed(&mut s, "/");
    assert_eq!(s.mention().candidates(), ["lib/", "lib/slug.js"]);
    press(&mut s, KeyCode::Esc);
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        vec![Effect::Send(UiCommand::Prompt {
            text: "@lib/".into()
        })]
    );
}

#[test]
fn a_new_list_of_files_is_matched_at_once() {
    let mut s = state();
    typed(&mut s, "@new");
    assert!(s.mention().candidates().is_empty());
    agent(
        &mut s,
        AgentEvent::ProjectFiles(vec!["src/".into(), "src/new.rs".into()]),
    );
    assert_eq!(s.mention().candidates(), ["src/new.rs"]);
}

#[test]
fn mention_popup_screen() {
    let mut s = state();
    typed(&mut s, "what does @s");
    press(&mut s, KeyCode::Down);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn enter_sends_when_the_word_is_the_selected_path_already() {
    let mut s = state();
    typed(&mut s, "list @lib/");
    assert_eq!(s.mention().candidates(), ["lib/", "lib/slug.js"]);
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        vec![Effect::Send(UiCommand::Prompt {
            text: "list @lib/".into()
        })]
    );
    // The arrows still choose among the paths before that.
    typed(&mut s, "@lib/");
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.editor().text(), "@lib/slug.js ");
}

#[test]
fn a_recalled_prompt_or_a_moved_cursor_opens_no_popup() {
    let mut s = state();
    typed(&mut s, "read @lib/slug.js");
    press(&mut s, KeyCode::Enter);
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    agent(&mut s, AgentEvent::TurnDone);
    press(&mut s, KeyCode::Up);
    assert_eq!(s.editor().text(), "read @lib/slug.js");
    assert!(s.mention().candidates().is_empty());
    press(&mut s, KeyCode::Down);
    assert!(s.editor().is_empty(), "the arrows still walk the history");
    typed(&mut s, "@READ x");
    for _ in 0.." x".len() {
        press(&mut s, KeyCode::Left);
    }
    assert!(s.mention().candidates().is_empty());
}

#[test]
fn no_popup_while_a_call_waits() {
    let mut s = state();
    confirm_command(&mut s, 1);
    typed(&mut s, "read @li");
    assert_eq!(s.editor().text(), "read @li");
    assert!(s.mention().candidates().is_empty());
}

/// A popup open when a call comes to be confirmed closes: it would cover
/// the preview's last rows, which would count as seen, and its Esc and
/// Enter are the confirmation's now.
#[test]
fn a_popup_open_when_a_call_comes_closes() {
    for draft in ["@li", "/"] {
        let mut s = state();
        typed(&mut s, draft);
        assert!(s.mention().is_open() || !s.completion().candidates(s.commands()).is_empty());
        confirm_command(&mut s, 3);
        assert!(!s.mention().is_open(), "{draft}");
        assert!(
            s.completion().candidates(s.commands()).is_empty(),
            "{draft}"
        );
        typed(&mut s, "x");
        assert!(
            s.completion().candidates(s.commands()).is_empty(),
            "{draft}"
        );
        assert!(crate::draw(&mut s).contains("Esc/n reject"), "{draft}");
    }
}

#[test]
fn a_new_list_keeps_the_selected_path() {
    let mut s = state();
    typed(&mut s, "@slu");
    press(&mut s, KeyCode::Down);
    agent(
        &mut s,
        AgentEvent::ProjectFiles(vec![
            "a/slug.md".into(),
            "lib/slug.js".into(),
            "test/slug.test.js".into(),
        ]),
    );
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "@test/slug.test.js ");
}
