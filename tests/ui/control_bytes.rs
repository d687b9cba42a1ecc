//! Control bytes from the model, a tool or the server never reach a
//! terminal: not through a drawn frame, the transcript printed on exit, the
//! clipboard or the session log (which people `tail -f`), and they cannot
//! make a drawn line wider than it was measured (which would push its end
//! off the screen).

use dashfloat::protocol::{
    AgentEvent, ConfirmRequest, Phase, PreviewKind, ReplyEnd, Severity, ToolStatus,
};
use dashfloat::ui::state::State;
use dashfloat::ui::transcript::EntryKind;
use dashfloat::ui::update::{Msg, update};
use dashfloat::ui::view::view;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::support::{WAIT, log_text};
use crate::{agent, draw, preview_line, render, state, tool_call, tool_result};

/// Retitles the terminal.
const OSC_TITLE: &str = "\x1b]2;owned\x07";
/// Writes "evil" to the clipboard.
const OSC_CLIPBOARD: &str = "\x1b]52;c;ZXZpbA==\x07";
/// Asks the terminal to type its cursor position back as input.
const CSI_REPORT: &str = "\x1b[6n";
/// Clears the screen.
const CSI_CLEAR: &str = "\x1b[2J";

/// A transcript where every kind of entry carries control bytes.
fn hostile_state() -> State {
    let mut s = state(80, 40);
    agent(
        &mut s,
        AgentEvent::ReasoningDelta(format!("think{OSC_TITLE}ing")),
    );
    agent(
        &mut s,
        AgentEvent::AssistantDelta(format!(
            "before{OSC_TITLE}{OSC_CLIPBOARD}{CSI_REPORT}{CSI_CLEAR} after\x07\x7f\u{9b}31m\r\nnext"
        )),
    );
    agent(&mut s, AgentEvent::AssistantEnd(ReplyEnd::Complete));
    tool_call(
        &mut s,
        "1",
        &format!("write{OSC_TITLE}_file"),
        "docs/\x1b]2;x\x07evil.md (1 line)",
    );
    tool_result(
        &mut s,
        "1",
        ToolStatus::Error(format!("cannot write{OSC_CLIPBOARD}")),
        &format!("out{CSI_CLEAR}put\rover"),
    );
    tool_call(&mut s, "2", "list_directory", ".");
    tool_result(
        &mut s,
        "2",
        ToolStatus::TimedOut(format!("timed{OSC_TITLE} out")),
        &format!("name{OSC_TITLE}.txt"),
    );
    agent(
        &mut s,
        AgentEvent::System {
            severity: Severity::Error,
            text: format!("HTTP 500: {OSC_CLIPBOARD}server body"),
        },
    );
    agent(
        &mut s,
        AgentEvent::Confirm(ConfirmRequest {
            id: "3".into(),
            preview: vec![preview_line(
                PreviewKind::Added,
                &format!("$ echo {OSC_TITLE}hi"),
            )],
            position: 1,
            of: 1,
            remember: None,
        }),
    );
    s
}

fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

#[test]
fn the_transcript_printed_on_exit_holds_no_control_character() {
    let s = hostile_state();
    let text = s.transcript().plain_text();
    assert_eq!(controls(&text), Vec::<char>::new(), "{text:?}");
    // What is around the sequences stays, so nothing is hidden either.
    for visible in [
        "before]2;owned",
        "after",
        "next",
        "docs/]2;xevil.md",
        "server body",
    ] {
        assert!(text.contains(visible), "{visible:?} missing from {text:?}");
    }
    // Output excerpts and previews are drawn, not printed: they are kept
    // clean as well.
    let drawn_only: Vec<&str> = s
        .transcript()
        .entries()
        .iter()
        .flat_map(|e| match &e.kind {
            EntryKind::Tool {
                outcome: Some((_, excerpt)),
                ..
            } => vec![excerpt.as_str()],
            EntryKind::Preview { preview, .. } => preview.iter().map(|l| l.text.as_str()).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(
        drawn_only,
        ["out[2Jputover", "name]2;owned.txt", "$ echo ]2;ownedhi"]
    );
}

#[test]
fn a_copied_reply_holds_no_control_character() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use dashfloat::ui::update::Effect;
    let mut s = hostile_state();
    let out = update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL)),
    );
    let Some(Effect::Copy(text)) = out.effects.first() else {
        panic!("nothing copied: {:?}", out.effects);
    };
    assert_eq!(controls(text), Vec::<char>::new(), "{text:?}");
}

/// ratatui drops graphemes that hold a control character when it fills its
/// buffer, so a frame written by the real backend carries none of the
/// model's sequences; this pins that down for the version in use.
#[test]
fn a_frame_written_to_a_real_backend_carries_none_of_the_model_s_sequences() {
    let mut s = hostile_state();
    agent(&mut s, AgentEvent::Phase(Phase::Confirming));
    s.prepare();
    let mut bytes = Vec::new();
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(&mut bytes),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 80, 40)),
        },
    )
    .unwrap();
    terminal.draw(|f| view(&s, f)).unwrap();
    drop(terminal);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("before]2;owned"), "{text:?}");
    for seq in [
        "\x1b]", "\x07", CSI_REPORT, CSI_CLEAR, "\u{9b}", "\x7f", "\r",
    ] {
        assert!(
            !text.contains(seq),
            "{seq:?} reached the terminal: {text:?}"
        );
    }

    let cells: String = render(&mut s)
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert_eq!(controls(&cells), Vec::<char>::new());
}

/// The wrapper must measure a line as wide as it is drawn: a sequence the
/// wrapper thought zero columns wide but the screen shows as text would
/// push the end of the line past the edge, where no one sees it.
#[test]
fn an_escape_sequence_cannot_push_the_end_of_a_line_off_the_screen() {
    let padding = "x".repeat(150);
    let mut s = state(80, 24);
    tool_call(
        &mut s,
        "c",
        "execute_command",
        &format!("true \x1b]0;{padding}\x07; touch ROWEND"),
    );
    agent(
        &mut s,
        AgentEvent::Confirm(ConfirmRequest {
            id: "c".into(),
            preview: vec![
                preview_line(PreviewKind::Header, "run in .:"),
                preview_line(
                    PreviewKind::Added,
                    &format!("$ true \x1b]0;{padding}\x07; touch PREVIEWEND"),
                ),
            ],
            position: 1,
            of: 1,
            remember: None,
        }),
    );
    agent(&mut s, AgentEvent::Phase(Phase::Confirming));
    let shown = draw(&mut s);
    assert!(shown.contains("touch ROWEND"), "{shown}");
    assert!(shown.contains("touch PREVIEWEND"), "{shown}");
}

#[test]
fn the_sanitiser_strips_c0_c1_and_del_but_keeps_newlines_tabs_and_text() {
    use dashfloat::safe_text::strip_controls;
    assert_eq!(strip_controls("plain text ✓ 中文"), "plain text ✓ 中文");
    assert!(matches!(
        strip_controls("nothing to strip\n\tok"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(strip_controls("a\x1b]2;t\x07b"), "a]2;tb");
    assert_eq!(strip_controls("a\x00b\x08c\x7fd"), "abcd");
    assert_eq!(
        strip_controls("a\u{80}b\u{9b}c\u{9f}d\u{a0}e"),
        "abcd\u{a0}e"
    );
    // CRLF becomes LF; a bare CR, which would let the rest of a line
    // overwrite its start on a terminal, is dropped.
    assert_eq!(strip_controls("one\r\ntwo\rtwo'"), "one\ntwotwo'");
    assert_eq!(strip_controls("keep\n\tthese"), "keep\n\tthese");
}

#[test]
fn escape_sequences_are_removed_whole_and_the_text_around_them_kept() {
    use dashfloat::safe_text::strip_escapes;
    assert!(matches!(
        strip_escapes("no escape ✓\r\n"),
        std::borrow::Cow::Borrowed(_)
    ));
    for (printed, shown) in [
        ("\x1b[1;32mok\x1b[0m", "ok"),
        ("a\x1b[2Kb\x1b[?25l", "ab"),
        ("\x1b]0;title\x07rest", "rest"),
        ("\x1b]8;;https://x.dev\x1b\\link\x1b]8;;\x1b\\.", "link."),
        // An unended string stops at its line's end.
        ("\x1b]2;never ended\nnext line", "\nnext line"),
        ("\x1bPq#0\x1b\\x\x1b_apc\x07y", "xy"),
        ("\x1b(Bx\x1b7y\x1b=z", "xyz"),
        // Cut short by the end of the text.
        ("cut \x1b[3", "cut "),
        ("cut \x1b", "cut "),
        ("cut \x1b]0;ti", "cut "),
        // A byte that cannot continue a sequence ends it and is kept.
        ("\x1b[31\nkept", "\nkept"),
        ("\x1bé", "é"),
        // An `ESC` inside a sequence starts the next one.
        ("\x1b\x1b[31mred", "red"),
        ("\x1b]0;t\x1b[31mred", "red"),
        ("é\x1b[0mü\x1b[38;5;196m中", "éü中"),
        // Lone controls are left to `strip_controls`.
        ("a\x07b\rc", "a\x07b\rc"),
    ] {
        assert_eq!(strip_escapes(printed), shown, "{printed:?}");
    }
}

/// Every text of up to five pieces drawn from the bytes that frame
/// sequences, and a character of two bytes: none panics (every cut is at
/// a character boundary), none leaves an `ESC`, and text with no `ESC` is
/// kept as it is.
#[test]
fn no_arrangement_of_sequence_bytes_panics_or_leaves_an_escape() {
    use dashfloat::safe_text::strip_escapes;
    const PIECES: [&str; 9] = ["\x1b", "[", "]", "\\", "\x07", "\n", "é", "1", "m"];
    let mut texts = vec![String::new()];
    for _ in 0..5 {
        let longer: Vec<String> = texts
            .iter()
            .flat_map(|t| PIECES.iter().map(move |p| format!("{t}{p}")))
            .collect();
        for text in &longer {
            let shown = strip_escapes(text);
            assert!(!shown.contains('\x1b'), "{text:?} -> {shown:?}");
            if !text.contains('\x1b') {
                assert_eq!(shown, text.as_str());
            }
        }
        texts = longer;
    }
}

#[tokio::test]
async fn the_session_log_holds_no_control_character() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.log");
    let log = dashfloat::log::Log::to_file(&path).unwrap();
    log.line(|| format!("Error: HTTP 500: {OSC_TITLE}{OSC_CLIPBOARD}body\r\nend"));
    drop(log);
    let text = log_text(&path, WAIT, |t| t.ends_with('\n')).await;
    assert!(
        text.contains("HTTP 500: ]2;owned]52;c;ZXZpbA==body end"),
        "{text:?}"
    );
    assert_eq!(controls(&text), Vec::<char>::new(), "{text:?}");
}
