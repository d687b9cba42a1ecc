//! Finding custom commands (ADR 0053) in real directories: the person's
//! (dashfloat's, Claude Code's, Codex's) and the project's, read through
//! the path policy, bounded, named once per scope; and the agent sending
//! them to the UI when it starts and again after a turn.

use std::os::unix::fs::symlink;
use std::path::Path;

use dashfloat::bounds::COMMAND_FILE_MAX_BYTES;
use dashfloat::commands::{find, person_dirs};
use dashfloat::protocol::{AgentEvent, CommandScope, CustomCommand};
use dashfloat::tools::ToolContext;

use crate::support::agent::{self, setup, start_with};
use crate::support::server::{Reply, ScriptedServer};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn summary(found: &[CustomCommand]) -> Vec<(String, CommandScope, String)> {
    found
        .iter()
        .map(|c| (c.name.clone(), c.scope, c.description.clone()))
        .collect()
}

#[test]
fn the_persons_and_the_projects_commands_are_found_each_name_once_per_scope() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config/dashfloat");
    write(
        &config_dir.join("commands/ticket.md"),
        "---\ndescription: Open a ticket\nargument-hint: ID\n---\nTicket $1",
    );
    write(
        &home.path().join(".claude/commands/ticket.md"),
        "Claude's ticket",
    );
    write(
        &home.path().join(".claude/commands/frontend/component.md"),
        "# Make a component\n$ARGUMENTS",
    );
    write(&home.path().join(".codex/prompts/draftpr.md"), "Draft a PR");
    write(
        &project.path().join(".dashfloat/commands/review.md"),
        "Review $ARGUMENTS",
    );
    write(
        &project.path().join(".claude/commands/ticket.md"),
        "---\nallowed-tools: Bash(git add:*)\n---\nThe project's ticket: !`git log -1`",
    );
    write(
        &project.path().join(".claude/commands/notes.txt"),
        "not a command",
    );
    let env = |k: &str| match k {
        "HOME" => Some(home.path().to_str().unwrap().to_owned()),
        _ => None,
    };
    let dirs = person_dirs(Some(&config_dir), env);
    let ctx = ToolContext::new(project.path()).unwrap();
    let found = find(&*ctx.workspace, &dirs);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(
        summary(&found.commands),
        [
            (
                "ticket".to_owned(),
                CommandScope::Person,
                "Open a ticket".to_owned()
            ),
            (
                "component".to_owned(),
                CommandScope::Person,
                "Make a component".to_owned()
            ),
            (
                "draftpr".to_owned(),
                CommandScope::Person,
                "Draft a PR".to_owned()
            ),
            (
                "review".to_owned(),
                CommandScope::Project,
                "Review $ARGUMENTS".to_owned()
            ),
            (
                "ticket".to_owned(),
                CommandScope::Project,
                "The project's ticket: !`git log -1`".to_owned()
            ),
        ]
    );
    let project_ticket = &found.commands[4];
    assert_eq!(project_ticket.origin, ".claude/commands");
    assert_eq!(
        project_ticket.ignored,
        ["`allowed-tools`", "the ``!`command` `` lines"]
    );
    assert_eq!(found.commands[0].argument_hint, "ID");
}

#[test]
fn codex_home_moves_codexs_prompts() {
    let codex = tempfile::tempdir().unwrap();
    let env = |k: &str| match k {
        "HOME" => Some("/home/nobody".to_owned()),
        "CODEX_HOME" => Some(codex.path().to_str().unwrap().to_owned()),
        _ => None,
    };
    assert_eq!(
        person_dirs(None, env),
        [
            Path::new("/home/nobody/.claude/commands").to_path_buf(),
            codex.path().join("prompts")
        ]
    );
}

#[test]
fn a_projects_link_out_a_file_too_large_and_a_bad_name_are_left_out_with_why() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.md"), "the outside's words");
    let commands = project.path().join(".dashfloat/commands");
    write(&commands.join("ok.md"), "fine");
    symlink(outside.path().join("secret.md"), commands.join("leak.md")).unwrap();
    write(
        &commands.join("huge.md"),
        &"x".repeat(COMMAND_FILE_MAX_BYTES as usize + 1),
    );
    write(&commands.join("two words.md"), "bad name");
    let ctx = ToolContext::new(project.path()).unwrap();
    let found = find(&*ctx.workspace, &[]);
    let names: Vec<&str> = found.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let problems = found.problems.join("\n");
    assert!(
        problems.contains(".dashfloat/commands/leak.md: left out"),
        "{problems}"
    );
    assert!(
        problems.contains(".dashfloat/commands/huge.md: left out"),
        "{problems}"
    );
    assert!(
        problems.contains(".dashfloat/commands/two words.md: left out: a command's name"),
        "{problems}"
    );
    assert!(!problems.contains("the outside's words"));
}

/// The commands of the next `CustomCommands` event.
async fn next_commands(harness: &mut agent::AgentHarness) -> Vec<String> {
    let events = harness
        .until(|e| matches!(e, AgentEvent::CustomCommands { .. }))
        .await;
    match events.last() {
        Some(AgentEvent::CustomCommands { found, .. }) => {
            found.iter().map(|c| c.name.clone()).collect()
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_agent_sends_the_commands_at_start_and_again_after_a_turn() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(&home.path().join("commands/mine.md"), "Mine");
    let server = ScriptedServer::start(vec![Reply::text(&["done"])]).await;
    let mut setup = setup(
        &server.base_url(),
        project.path(),
        dashfloat::protocol::ApprovalPolicy::Ask,
    );
    setup.command_dirs = vec![home.path().join("commands")];
    let mut harness = start_with(setup);
    assert_eq!(next_commands(&mut harness).await, ["mine"]);
    write(
        &project.path().join(".dashfloat/commands/fresh.md"),
        "Made during the session",
    );
    harness.prompt("hello").await;
    harness.turn().await;
    assert_eq!(next_commands(&mut harness).await, ["mine", "fresh"]);
}

#[test]
fn no_more_than_the_bound_is_read_and_a_taken_name_is_not_read_at_all() {
    use dashfloat::bounds::COMMANDS_MAX;
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.md"), "the outside's words");
    // The .claude copy of `first` is a link out: its name is taken by
    // .dashfloat's, so it is never read (no problem is reported for it).
    write(
        &project.path().join(".dashfloat/commands/first.md"),
        "First",
    );
    std::fs::create_dir_all(project.path().join(".claude/commands")).unwrap();
    symlink(
        outside.path().join("secret.md"),
        project.path().join(".claude/commands/first.md"),
    )
    .unwrap();
    for n in 0..COMMANDS_MAX + 5 {
        write(
            &project.path().join(format!(".claude/commands/c{n:04}.md")),
            "many",
        );
    }
    let ctx = ToolContext::new(project.path()).unwrap();
    let found = find(&*ctx.workspace, &[]);
    assert_eq!(found.commands.len(), COMMANDS_MAX);
    assert_eq!(found.problems.len(), 1, "{:?}", found.problems);
    assert!(
        found.problems[0].contains(&format!("more than {COMMANDS_MAX} commands")),
        "{:?}",
        found.problems
    );
}
