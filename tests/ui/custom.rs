//! Custom commands on the screen (ADR 0053): offered in the `/` popup
//! with their description and whose they are, expanded into the prompt
//! sent, a built-in's name kept for the built-in, what a file asks that
//! is not done said, and a file left out said once; `/init` sends its
//! prompt.

use crossterm::event::KeyCode;
use dashfloat::commands::INIT_PROMPT;
use dashfloat::protocol::{AgentEvent, CommandScope, CustomCommand, Phase, Severity, UiCommand};
use dashfloat::ui::transcript::EntryKind;
use dashfloat::ui::update::Effect;

use crate::{agent, draw, press, state, typed};

fn command(name: &str, scope: CommandScope, template: &str) -> CustomCommand {
    CustomCommand {
        name: name.to_owned(),
        scope,
        origin: match scope {
            CommandScope::Project => ".dashfloat/commands".to_owned(),
            CommandScope::Person => "/home/ann/.config/dashfloat/commands".to_owned(),
        },
        description: format!("the {name} command"),
        argument_hint: String::new(),
        template: template.to_owned(),
        ignored: Vec::new(),
    }
}

/// A state that was sent `found`.
fn with_commands(found: Vec<CustomCommand>) -> dashfloat::ui::state::State {
    let mut s = state(100, 24);
    agent(
        &mut s,
        AgentEvent::CustomCommands {
            found,
            problems: Vec::new(),
        },
    );
    s
}

/// Types `text`, presses Enter, and returns the prompt sent, if one was.
fn sent(s: &mut dashfloat::ui::state::State, text: &str) -> Option<String> {
    typed(s, text);
    press(s, KeyCode::Enter)
        .into_iter()
        .find_map(|effect| match effect {
            Effect::Send(UiCommand::Prompt { text } | UiCommand::ProjectPrompt { text }) => {
                Some(text)
            }
            _ => None,
        })
}

#[test]
fn a_command_is_expanded_with_its_arguments_into_the_prompt_sent() {
    let mut review = command(
        "review",
        CommandScope::Project,
        "Review $1 for $2.\nAll: $ARGUMENTS",
    );
    review.argument_hint = "FILE WHAT".to_owned();
    let mut s = with_commands(vec![review]);
    assert_eq!(
        sent(&mut s, "/review src/a.rs \"error handling\"").as_deref(),
        Some("Review src/a.rs for error handling.\nAll: src/a.rs \"error handling\"")
    );
    let log = s.transcript().entries().last().expect("the prompt");
    assert_eq!(log.kind, EntryKind::User);
    assert!(log.text.starts_with("Review src/a.rs"), "{}", log.text);
}

#[test]
fn the_popup_lists_custom_commands_after_the_built_ins_saying_whose() {
    let mut review = command("review", CommandScope::Project, "Review.");
    review.argument_hint = "[file]".to_owned();
    let mut s = with_commands(vec![
        command("ticket", CommandScope::Person, "Ticket $1"),
        review,
    ]);
    typed(&mut s, "/");
    let names: Vec<String> = s
        .completion()
        .candidates(s.commands())
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    assert_eq!(names[names.len() - 2..], ["ticket", "review"]);
    typed(&mut s, "re");
    let screen = draw(&mut s);
    assert!(
        screen.contains("/review [file]  the review command (project: .dashfloat/commands)"),
        "{screen}"
    );
    assert!(screen.contains("/resume [ID]"), "{screen}");
    insta::assert_snapshot!(screen);
    // Tab completes it with a space: a custom command may take arguments.
    typed(&mut s, "v");
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.editor().text(), "/review ");
}

/// Types `text`, presses Enter and ends the turn it started: the prompt
/// sent, if one was.
fn turn(s: &mut dashfloat::ui::state::State, text: &str) -> Option<String> {
    let prompt = sent(s, text);
    agent(s, AgentEvent::Phase(Phase::Idle));
    agent(s, AgentEvent::TurnDone);
    prompt
}

#[test]
fn a_built_ins_name_means_the_built_in_and_the_scopes_reach_the_others() {
    let mut s = with_commands(vec![
        command("deploy", CommandScope::Person, "mine"),
        command("help", CommandScope::Project, "the project's help"),
        command("deploy", CommandScope::Project, "the project's deploy"),
    ]);
    typed(&mut s, "/help");
    press(&mut s, KeyCode::Enter);
    let help = s.transcript().entries().last().expect("help").text.clone();
    assert!(help.starts_with("commands"), "{help}");
    assert!(help.contains("/project:help"), "{help}");
    assert!(help.contains("/project:deploy"), "{help}");
    assert_eq!(
        turn(&mut s, "/project:help").as_deref(),
        Some("the project's help")
    );
    assert_eq!(turn(&mut s, "/deploy").as_deref(), Some("mine"));
    assert_eq!(turn(&mut s, "/user:deploy").as_deref(), Some("mine"));
    assert_eq!(turn(&mut s, "/prompts:deploy").as_deref(), Some("mine"));
    assert_eq!(
        turn(&mut s, "/project:deploy now").as_deref(),
        Some("the project's deploy\n\nnow")
    );
    assert_eq!(turn(&mut s, "/user:help"), None, "no such command");
}

#[test]
fn what_a_file_asks_that_is_not_done_is_said_and_its_text_sent_as_written() {
    let mut risky = command(
        "commit",
        CommandScope::Project,
        "Status: !`git status`\nCommit it.",
    );
    risky.ignored = vec![
        "`allowed-tools`".to_owned(),
        "the ``!`command` `` lines".to_owned(),
    ];
    let mut s = with_commands(vec![risky]);
    assert_eq!(
        sent(&mut s, "/commit").as_deref(),
        Some("Status: !`git status`\nCommit it.")
    );
    let notice = s
        .transcript()
        .entries()
        .iter()
        .find(|e| e.kind == EntryKind::System(Severity::Notice))
        .expect("a notice")
        .text
        .clone();
    assert!(
        notice.contains("`allowed-tools`, the ``!`command` `` lines not honoured"),
        "{notice}"
    );
}

#[test]
fn a_file_left_out_is_said_once() {
    let mut s = state(100, 24);
    let problems = vec![".dashfloat/commands/big.md: left out: too big".to_owned()];
    for _ in 0..2 {
        agent(
            &mut s,
            AgentEvent::CustomCommands {
                found: Vec::new(),
                problems: problems.clone(),
            },
        );
    }
    let said = s
        .transcript()
        .entries()
        .iter()
        .filter(|e| e.text.contains("big.md: left out"))
        .count();
    assert_eq!(said, 1);
}

#[test]
fn init_sends_its_prompt_only_when_idle() {
    let mut s = state(100, 24);
    assert_eq!(sent(&mut s, "/init").as_deref(), Some(INIT_PROMPT));
    assert!(INIT_PROMPT.contains("AGENTS.md") && INIT_PROMPT.contains("edit_file"));
    // Busy now: it waits, its text kept.
    assert_eq!(sent(&mut s, "/init"), None);
    assert_eq!(s.editor().text(), "/init");
}

#[test]
fn a_command_whose_prompt_would_pass_the_bound_sends_nothing() {
    let mut s = with_commands(vec![command(
        "echo",
        CommandScope::Person,
        &"$ARGUMENTS ".repeat(1_000),
    )]);
    let long = "x".repeat(8 * 1024);
    assert_eq!(sent(&mut s, &format!("/echo {long}")), None);
    let screen = draw(&mut s);
    assert!(screen.contains("a prompt holds at most 4 MiB"), "{screen}");
}

#[test]
fn a_projects_command_is_sent_as_the_projects_words() {
    let mut s = with_commands(vec![
        command("mine", CommandScope::Person, "Mine: $ARGUMENTS"),
        command("theirs", CommandScope::Project, "Theirs: $ARGUMENTS"),
    ]);
    typed(&mut s, "/theirs /tmp/shot.png");
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        [Effect::Send(UiCommand::ProjectPrompt {
            text: "Theirs: /tmp/shot.png".to_owned()
        })]
    );
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    agent(&mut s, AgentEvent::TurnDone);
    typed(&mut s, "/mine /tmp/shot.png");
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        [Effect::Send(UiCommand::Prompt {
            text: "Mine: /tmp/shot.png".to_owned()
        })]
    );
}
