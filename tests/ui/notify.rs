//! Notifications (ADR 0056): a turn's end or a call waiting is told with
//! the configured escape sequence only while the terminal has no focus,
//! as focus reporting says; never while it has it, never when off.

use dashfloat::protocol::{AgentEvent, ConfirmRequest, Phase, PreviewKind};
use dashfloat::ui::notify::Notify;
use dashfloat::ui::state::State;
use dashfloat::ui::update::{Effect, Msg, update};

use crate::{preview_line, state};

/// The bytes the events of a turn that ends had the loop write.
fn turn_end(s: &mut State) -> Vec<String> {
    let mut written = Vec::new();
    for event in [AgentEvent::Phase(Phase::Idle), AgentEvent::TurnDone] {
        for effect in update(s, Msg::Agent(event)).effects {
            if let Effect::Notify(bytes) = effect {
                written.push(bytes);
            }
        }
    }
    written
}

#[test]
fn only_an_unfocused_terminal_is_told_that_the_turn_is_done() {
    let mut s = state(80, 24);
    assert!(turn_end(&mut s).is_empty(), "focused at first");
    update(&mut s, Msg::Focus(false));
    assert_eq!(turn_end(&mut s), ["\x07"]);
    update(&mut s, Msg::Focus(true));
    assert!(turn_end(&mut s).is_empty());
}

#[test]
fn each_way_of_telling_writes_its_own_sequence() {
    for (notify, bytes) in [
        (Notify::Bell, Some("\x07")),
        (Notify::Osc9, Some("\x1b]9;dashfloat: the turn is done\x07")),
        (
            Notify::Osc777,
            Some("\x1b]777;notify;dashfloat;the turn is done\x07"),
        ),
        (Notify::Off, None),
    ] {
        let mut s = state(80, 24);
        s.notify = notify;
        update(&mut s, Msg::Focus(false));
        assert_eq!(
            turn_end(&mut s),
            bytes.into_iter().collect::<Vec<_>>(),
            "{notify:?}"
        );
    }
}

#[test]
fn a_call_waiting_for_approval_is_told_too() {
    let mut s = state(80, 24);
    s.notify = Notify::Osc9;
    update(&mut s, Msg::Focus(false));
    let request = ConfirmRequest {
        id: "x".into(),
        preview: vec![preview_line(PreviewKind::Header, "run in .:")],
        position: 1,
        of: 1,
        remember: None,
    };
    let effects = update(&mut s, Msg::Agent(AgentEvent::Confirm(request))).effects;
    assert_eq!(
        effects,
        [Effect::Notify(
            "\x1b]9;dashfloat: a call waits for your approval\x07".to_owned()
        )]
    );
}
