//! Snapshots of the screen drawn on ratatui's `TestBackend`: every state a
//! person sees in the foundation (empty, streaming, scrolled, each phase,
//! narrow, an error entry), and, in colour with every cell's style, the
//! diff preview, an error entry, the status bar under each phase and
//! the outcome rows of a write with syntax errors beside an ok and an
//! error.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dashfloat::bounds::WRITING_NAME_MAX_CHARS;
use dashfloat::protocol::{
    AgentEvent, ConfirmRequest, Phase, PreviewKind, ReplyEnd, Severity, ToolStatus, Usage,
};
use dashfloat::ui::state::{Progress, State};
use dashfloat::ui::theme::Theme;
use dashfloat::ui::update::{Msg, update};
use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};

use crate::{
    agent, confirm, confirm_command, draw, press, preview_line, render, session, state, tool_call,
    tool_result,
};

/// A fresh state of `width`×`height` in the colour palette.
fn coloured(width: u16, height: u16) -> State {
    State::new(session(), Theme::new(false), (width, height))
}

/// The screen with its styles: each row as drawn, under it one letter per
/// cell naming that cell's style (`.` the terminal's own; a row with no
/// mark line, and the cells past a mark line's end, are all the terminal's
/// own), then what each letter stands for: colours and modifiers.
fn draw_styled(s: &mut State) -> String {
    let terminal = render(s);
    let buffer = terminal.backend().buffer();
    let mut styles: Vec<CellStyle> = Vec::new();
    let mut out = String::new();
    let rows = terminal.backend().to_string();
    for (row, cells) in rows
        .lines()
        .zip(buffer.content.chunks(usize::from(buffer.area.width)))
    {
        let marks: String = cells
            .iter()
            .map(|cell| {
                let style = CellStyle::of(cell);
                if style == CellStyle::default() {
                    return '.';
                }
                let index = styles.iter().position(|s| *s == style).unwrap_or_else(|| {
                    styles.push(style);
                    styles.len() - 1
                });
                STYLE_MARKS
                    .chars()
                    .nth(index)
                    .expect("more styles than marks")
            })
            .collect();
        out.push_str(&format!("{row}\n"));
        let marks = marks.trim_end_matches('.');
        if !marks.is_empty() {
            out.push_str(&format!(" {marks}\n"));
        }
    }
    for (mark, style) in STYLE_MARKS.chars().zip(&styles) {
        out.push_str(&format!("{mark}:{style}\n"));
    }
    out
}

/// The letters that name the styles of a screen, in order of appearance.
const STYLE_MARKS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// What a cell looks like apart from its symbol.
#[derive(Debug, Default, PartialEq, Eq)]
struct CellStyle {
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

impl CellStyle {
    fn of(cell: &Cell) -> CellStyle {
        CellStyle {
            fg: cell.fg,
            bg: cell.bg,
            underline: cell.underline_color,
            modifier: cell.modifier,
        }
    }
}

impl std::fmt::Display for CellStyle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (what, colour) in [
            ("fg", self.fg),
            ("bg", self.bg),
            ("underline", self.underline),
        ] {
            if colour != Color::Reset {
                write!(f, " {what} {colour}")?;
            }
        }
        for (name, _) in self.modifier.iter_names() {
            write!(f, " {name}")?;
        }
        Ok(())
    }
}

fn type_text(state: &mut State, text: &str) {
    update(state, Msg::Paste(text.to_string()));
}

fn submit(state: &mut State) {
    press(state, KeyCode::Enter);
}

const REPLY: &str = "# Plan\n\nHere is **the** change, with `inline` code:\n\n1. read the file\n2. edit it\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nSee [the docs](https://example.com).\n";

#[test]
fn empty_screen() {
    let mut s = state(80, 24);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn streaming_reply_with_markdown() {
    let mut s = state(80, 24);
    type_text(&mut s, "Explain the plan");
    submit(&mut s);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    // The reply stops in the middle of a line: that line stays plain.
    agent(&mut s, AgentEvent::AssistantDelta(REPLY.to_string()));
    agent(
        &mut s,
        AgentEvent::AssistantDelta("and then **mid".to_string()),
    );
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn finished_reply_with_usage() {
    let mut s = state(80, 24);
    type_text(&mut s, "Explain the plan");
    submit(&mut s);
    agent(&mut s, AgentEvent::AssistantDelta(REPLY.to_string()));
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    agent(
        &mut s,
        AgentEvent::Usage(Usage {
            prompt_tokens: 1200,
            completion_tokens: 300,
            total_tokens: 1500,
            cached_tokens: 1_100,
        }),
    );
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    agent(&mut s, AgentEvent::TurnDone);
    insta::assert_snapshot!(draw(&mut s));
}

/// Usage is the server's number: one near `u64::MAX` once overflowed the
/// percentage and panicked the UI thread.
#[test]
fn a_server_reported_usage_near_the_limit_is_drawn_not_a_panic() {
    let mut s = state(80, 6);
    agent(
        &mut s,
        AgentEvent::Usage(Usage {
            prompt_tokens: u64::MAX,
            completion_tokens: 0,
            total_tokens: u64::MAX,
            cached_tokens: 0,
        }),
    );
    let screen = draw(&mut s);
    assert!(screen.contains("ctx "), "{screen}");
}

#[test]
fn after_a_compaction_the_status_bar_shows_the_estimate_until_the_next_report() {
    let mut s = state(80, 6);
    let usage = |total_tokens| Usage {
        prompt_tokens: total_tokens,
        completion_tokens: 0,
        total_tokens,
        cached_tokens: 0,
    };
    agent(&mut s, AgentEvent::Usage(usage(7_600)));
    assert!(draw(&mut s).contains("ctx 7.6k/8.2k"), "{}", draw(&mut s));
    agent(&mut s, AgentEvent::Compacted { estimate: 1_600 });
    let screen = draw(&mut s);
    assert!(screen.contains("ctx ~1.6k/8.2k (19%)"), "{screen}");
    agent(&mut s, AgentEvent::Usage(usage(2_000)));
    let screen = draw(&mut s);
    assert!(screen.contains("ctx 2.0k/8.2k"), "{screen}");
    agent(&mut s, AgentEvent::SessionOpened { log: Vec::new() });
    assert!(draw(&mut s).contains("ctx –/8.2k"), "{}", draw(&mut s));
}

/// Until the server says anything the status bar says it is waited
/// for; while it reads a long prompt, how far it has got and how long the
/// rest should take; the first token clears that.
#[test]
fn a_long_prompt_being_read_shows_its_progress_until_the_reply_starts() {
    let mut s = state(80, 6);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    let screen = draw(&mut s);
    assert!(screen.contains("waiting for the server"), "{screen}");
    let progress = |processed, elapsed_ms| dashfloat::protocol::PromptProgress {
        total: 5_800,
        cache: 0,
        processed,
        elapsed_ms,
    };
    agent(&mut s, AgentEvent::ReadingPrompt(progress(0, 0)));
    let screen = draw(&mut s);
    assert!(screen.contains("reading prompt 0/5,800 "), "{screen}");
    agent(&mut s, AgentEvent::ReadingPrompt(progress(1_204, 6_000)));
    let screen = draw(&mut s);
    assert!(
        screen.contains("reading prompt 1,204/5,800 · ~22 s"),
        "{screen}"
    );
    agent(&mut s, AgentEvent::AssistantDelta("Hi".into()));
    let screen = draw(&mut s);
    assert!(!screen.contains("reading prompt"), "{screen}");
    assert!(!screen.contains("waiting"), "{screen}");
    assert!(screen.contains("streaming"), "{screen}");
    // The next request is waited for again.
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    assert!(draw(&mut s).contains("waiting for the server"));
}

/// A model writing a long call may stream nothing the status bar can
/// count for minutes: the turn's clock beside the spinner shows it is still
/// at work. It stops while a confirmation waits for the person, and a new
/// turn starts it again from nought.
#[test]
fn the_turns_clock_runs_while_it_works_and_stops_for_a_confirmation() {
    let mut s = state(80, 6);
    let start = std::time::Instant::now();
    let tick = |s: &mut State, secs: u64| {
        update(s, Msg::Tick(start + std::time::Duration::from_secs(secs)));
    };
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    tick(&mut s, 0);
    assert!(draw(&mut s).contains(" 0:00 waiting for the server"));
    tick(&mut s, 1);
    agent(
        &mut s,
        AgentEvent::ToolCallWriting {
            name: "grep".into(),
            bytes: 0,
        },
    );
    tick(&mut s, 151);
    let screen = draw(&mut s);
    assert!(screen.contains(" 2:31 streaming · grep 0 B "), "{screen}");
    agent(&mut s, AgentEvent::Phase(Phase::Confirming));
    tick(&mut s, 152);
    assert!(!draw(&mut s).contains("2:3"), "{}", draw(&mut s));
    tick(&mut s, 400);
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    tick(&mut s, 402);
    let screen = draw(&mut s);
    assert!(screen.contains(" 2:33 executing "), "{screen}");
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    tick(&mut s, 500);
    let screen = draw(&mut s);
    assert!(screen.contains(" 0:00 waiting for the server"), "{screen}");
}

/// A call being written shows in the status bar with its size, so a long
/// or runaway one is seen before it is whole; the next phase clears it.
#[test]
fn a_call_being_written_shows_its_name_and_size_until_the_phase_changes() {
    let mut s = state(80, 6);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    agent(
        &mut s,
        AgentEvent::ToolCallWriting {
            name: "write_file".into(),
            bytes: 3 * 1024,
        },
    );
    let screen = draw(&mut s);
    assert!(screen.contains("streaming · write_file 3 KB"), "{screen}");
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    let screen = draw(&mut s);
    assert!(!screen.contains("write_file 3 KB"), "{screen}");
    // Whatever the model streamed as a name is shown only so long.
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    agent(
        &mut s,
        AgentEvent::ToolCallWriting {
            name: "n".repeat(10_000),
            bytes: 0,
        },
    );
    let Progress::Writing { name, .. } = s.progress() else {
        panic!("not writing: {:?}", s.progress());
    };
    assert_eq!(name.chars().count(), WRITING_NAME_MAX_CHARS);
}

/// A call written as text is shown being written while it is held; when
/// prose follows and it turns out to be prose, the reply text that shows
/// it clears the call from the status bar (ADR 0027).
#[test]
fn reply_text_clears_a_call_being_written() {
    let mut s = state(80, 6);
    agent(&mut s, AgentEvent::Phase(Phase::Streaming));
    agent(
        &mut s,
        AgentEvent::ToolCallWriting {
            name: "read_file".into(),
            bytes: 40,
        },
    );
    let screen = draw(&mut s);
    assert!(screen.contains("streaming · read_file 40 B"), "{screen}");
    agent(
        &mut s,
        AgentEvent::AssistantDelta("The README shows the format:".into()),
    );
    let screen = draw(&mut s);
    assert!(!screen.contains("read_file 40 B"), "{screen}");
    assert!(screen.contains("streaming"), "{screen}");
}

#[test]
fn the_status_bar_shows_the_discovered_model_and_window() {
    let mut s = state(80, 6);
    agent(
        &mut s,
        AgentEvent::SessionFacts {
            model: Some("Qwen/Qwen2.5-7B-Instruct".into()),
            context_window: Some(32_768),
        },
    );
    agent(
        &mut s,
        AgentEvent::Usage(Usage {
            prompt_tokens: 1200,
            completion_tokens: 300,
            total_tokens: 1500,
            cached_tokens: 0,
        }),
    );
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn long_transcript_scrolled_up() {
    let mut s = state(80, 24);
    for i in 0..40 {
        agent(&mut s, AgentEvent::AssistantDelta(format!("line {i}\n\n")));
    }
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    draw(&mut s);
    press(&mut s, KeyCode::PageUp);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn interrupted_reply() {
    let mut s = state(80, 16);
    type_text(&mut s, "Write a poem");
    submit(&mut s);
    agent(
        &mut s,
        AgentEvent::AssistantDelta("Roses are red,\nviolets".into()),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Interrupted));
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    agent(&mut s, AgentEvent::TurnDone);
    insta::assert_snapshot!(draw(&mut s));
}

/// A prompt whose turn failed: the error entry says why and what to do.
fn failed_turn(s: &mut State) {
    type_text(s, "hello");
    submit(s);
    agent(s, AgentEvent::AssistantEnd(ReplyEnd::Failed));
    agent(
        s,
        AgentEvent::System {
            severity: Severity::Error,
            text: "no model server answers at http://127.0.0.1:8088/v1 (connection refused). Start one — `scripts/local-model` starts the local default — or set OPENAI_BASE_URL / --base-url".into(),
        },
    );
    agent(s, AgentEvent::Phase(Phase::Idle));
    agent(s, AgentEvent::TurnDone);
}

#[test]
fn error_entry() {
    let mut s = state(80, 16);
    failed_turn(&mut s);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn error_entry_in_colour() {
    let mut s = coloured(80, 16);
    failed_turn(&mut s);
    insta::assert_snapshot!(draw_styled(&mut s));
}

const PHASES: [Phase; 4] = [
    Phase::Idle,
    Phase::Streaming,
    Phase::Executing,
    Phase::Confirming,
];

#[test]
fn each_phase_in_the_status_bar() {
    let mut screens = String::new();
    for phase in PHASES {
        let mut s = state(100, 4);
        agent(&mut s, AgentEvent::Phase(phase));
        screens.push_str(&format!("{phase:?}\n{}\n", draw(&mut s)));
    }
    insta::assert_snapshot!(screens);
}

#[test]
fn each_phase_in_the_status_bar_in_colour() {
    let mut screens = String::new();
    for phase in PHASES {
        let mut s = coloured(100, 4);
        agent(&mut s, AgentEvent::Phase(phase));
        screens.push_str(&format!("{phase:?}\n{}\n", draw_styled(&mut s)));
    }
    insta::assert_snapshot!(screens);
}

/// In a terminal too short for the input box's eight rows, the line being
/// typed and the cursor stay in sight.
#[test]
fn a_short_terminal_keeps_the_line_being_typed() {
    let mut s = state(40, 6);
    type_text(&mut s, "one");
    for line in ["two", "three", "four", "five", "six"] {
        update(
            &mut s,
            Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
        );
        type_text(&mut s, line);
    }
    let mut terminal = render(&mut s);
    let screen = terminal.backend().to_string();
    assert!(screen.contains("six"), "{screen}");
    let cursor = terminal.get_cursor_position().unwrap();
    assert!(cursor.y < 6, "{cursor:?}");
    assert!(
        screen
            .lines()
            .nth(usize::from(cursor.y))
            .unwrap()
            .contains("six")
    );
}

#[test]
fn narrow_terminal() {
    let mut s = state(40, 16);
    type_text(
        &mut s,
        "a prompt long enough to wrap in a narrow terminal window",
    );
    submit(&mut s);
    agent(&mut s, AgentEvent::AssistantDelta(REPLY.to_string()));
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn multi_line_input_grows() {
    let mut s = state(60, 16);
    type_text(&mut s, "first line\nsecond line\nthird line");
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn reasoning_is_shown_above_the_reply() {
    let mut s = state(60, 12);
    agent(
        &mut s,
        AgentEvent::ReasoningDelta("The person wants a greeting.".into()),
    );
    agent(&mut s, AgentEvent::AssistantDelta("Hello!".into()));
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn tool_rows_with_every_outcome() {
    let mut s = state(80, 30);
    type_text(&mut s, "look around and build");
    submit(&mut s);
    tool_call(&mut s, "1", "read_file", "src/main.rs:120-180");
    tool_result(&mut s, "1", ToolStatus::Ok, "fn main() {\n    run();\n}");
    tool_call(&mut s, "2", "execute_command", "cargo test");
    tool_result(
        &mut s,
        "2",
        ToolStatus::Error("exit code 101".into()),
        "test failed: 1 of 12",
    );
    tool_call(&mut s, "3", "write_file", "notes.md (3 lines)");
    tool_result(&mut s, "3", ToolStatus::Rejected, "");
    tool_call(&mut s, "4", "execute_command", "sleep 30");
    tool_result(&mut s, "4", ToolStatus::Cancelled, "");
    tool_call(&mut s, "5", "execute_command", "make slow");
    tool_result(
        &mut s,
        "5",
        ToolStatus::TimedOut("timed out after 30s".into()),
        "partial",
    );
    tool_call(&mut s, "6", "grep", "TODO");
    tool_result(
        &mut s,
        "6",
        ToolStatus::Empty("no matches in 12 files".into()),
        "",
    );
    tool_call(&mut s, "7", "list_directory", "src");
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    insta::assert_snapshot!(draw(&mut s));
}

/// A write that landed with syntax errors reads ok, with where they
/// are, in the accent rather than the dim of a plain ok or the colour of
/// an error: it stands out without reading as a failure (ADR 0047).
#[test]
fn a_write_that_left_syntax_errors_stands_out_without_failing() {
    let mut s = coloured(60, 14);
    tool_call(&mut s, "1", "write_file", "ok.py (2 lines)");
    tool_result(&mut s, "1", ToolStatus::Ok, "");
    tool_call(&mut s, "2", "edit_file", "calc.py");
    tool_result(
        &mut s,
        "2",
        ToolStatus::Warning("syntax error at line 6".into()),
        "",
    );
    tool_call(&mut s, "3", "execute_command", "false");
    tool_result(&mut s, "3", ToolStatus::Error("exit code 1".into()), "");
    insta::assert_snapshot!(draw_styled(&mut s));
}

/// A running command's latest lines stand under its preview (where its
/// result will go), each update replacing the last, until the result
/// replaces them; a call that has its result takes no more.
#[test]
fn a_running_command_shows_its_latest_lines_until_its_result() {
    let mut s = state(60, 16);
    type_text(&mut s, "run the tests");
    submit(&mut s);
    tool_call(&mut s, "t", "execute_command", "cargo test");
    confirm(
        &mut s,
        "t",
        vec![
            preview_line(PreviewKind::Header, "run in .:"),
            preview_line(PreviewKind::Added, "$ cargo test"),
        ],
    );
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    let live = |s: &mut State, tail: &str| {
        agent(
            s,
            AgentEvent::ToolOutput {
                id: "t".into(),
                tail: tail.into(),
            },
        );
    };
    live(&mut s, "Compiling calc v0.1.0");
    live(
        &mut s,
        "running 12 tests\ntest one ... ok\ntest two ... ok\u{1b}[2K",
    );
    let running = draw(&mut s);
    tool_result(&mut s, "t", ToolStatus::Ok, "test result: ok. 12 passed");
    live(&mut s, "late");
    insta::assert_snapshot!(format!("{running}\n{}", draw(&mut s)));
}

/// An edit of `src/lib.rs`, the second of three calls, waiting for
/// confirmation.
fn diff_preview(s: &mut State) {
    type_text(s, "rename old to new");
    submit(s);
    tool_call(s, "e1", "edit_file", "src/lib.rs");
    agent(
        s,
        AgentEvent::Confirm(ConfirmRequest {
            id: "e1".into(),
            preview: vec![
                preview_line(PreviewKind::Header, "edit src/lib.rs at line 2"),
                preview_line(PreviewKind::Context, "// top"),
                preview_line(PreviewKind::Removed, "fn old() {}"),
                preview_line(PreviewKind::Added, "fn new() {}"),
                preview_line(PreviewKind::Context, "// bottom"),
            ],
            position: 2,
            of: 3,
            remember: None,
        }),
    );
    agent(s, AgentEvent::Phase(Phase::Confirming));
}

#[test]
fn a_diff_preview_waiting_for_confirmation() {
    let mut s = state(80, 24);
    diff_preview(&mut s);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn a_diff_preview_in_colour() {
    let mut s = coloured(80, 24);
    diff_preview(&mut s);
    insta::assert_snapshot!(draw_styled(&mut s));
}

#[test]
fn a_command_preview_and_the_approve_all_warning() {
    let mut s = state(80, 16);
    agent(
        &mut s,
        AgentEvent::ApprovalChanged(crate::mode(
            dashfloat::protocol::ApprovalPolicy::DangerouslyApproveAll,
            "off",
        )),
    );
    tool_call(&mut s, "x", "execute_command", "cargo build");
    confirm(
        &mut s,
        "x",
        vec![
            preview_line(PreviewKind::Header, "run in .:"),
            preview_line(PreviewKind::Added, "$ cargo build"),
        ],
    );
    insta::assert_snapshot!(draw(&mut s));
}

/// A call put to the person has its outcome under the preview they
/// decided on, so the log reads call, what it would do, what it did; a
/// call that needed no answer keeps its outcome on its row. The transcript
/// printed on exit reads the same way.
#[test]
fn an_approved_calls_outcome_follows_its_preview() {
    let mut s = state(80, 20);
    tool_call(&mut s, "g", "grep", "median");
    tool_call(&mut s, "x", "execute_command", "python3 test_stats.py");
    tool_result(
        &mut s,
        "g",
        ToolStatus::Ok,
        "calc/stats.py:9:def median(values):",
    );
    confirm(
        &mut s,
        "x",
        vec![
            preview_line(PreviewKind::Header, "run in . (time limit 1 min):"),
            preview_line(PreviewKind::Added, "$ python3 test_stats.py"),
        ],
    );
    draw(&mut s);
    press(&mut s, KeyCode::Char('y'));
    agent(&mut s, AgentEvent::Phase(Phase::Executing));
    tool_result(
        &mut s,
        "x",
        ToolStatus::Error("exit code 1".into()),
        "AssertionError",
    );
    agent(&mut s, AgentEvent::Phase(Phase::Idle));
    insta::assert_snapshot!(draw(&mut s));
    let printed = s.transcript().plain_text();
    assert!(
        printed.contains(
            "⚙ execute_command python3 test_stats.py\n\n  \
             run in . (time limit 1 min):\n  → error: exit code 1\n"
        ),
        "{printed}"
    );
}

#[test]
fn a_long_command_preview_opens_at_its_top_with_its_position() {
    let mut s = state(80, 24);
    confirm_command(&mut s, 61);
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn a_long_command_preview_scrolled_to_its_end() {
    let mut s = state(80, 24);
    confirm_command(&mut s, 61);
    draw(&mut s);
    for _ in 0..3 {
        press(&mut s, KeyCode::PageDown);
        draw(&mut s);
    }
    insta::assert_snapshot!(draw(&mut s));
}

#[test]
fn a_refused_y_says_why() {
    let mut s = state(80, 24);
    confirm_command(&mut s, 61);
    draw(&mut s);
    press(&mut s, KeyCode::Char('y'));
    insta::assert_snapshot!(draw(&mut s));
}
