//! Telling a person who looked away that dashfloat needs them: when a turn
//! ends or a call waits for approval while the terminal does not have
//! focus, the terminal is sent the bell, or a desktop notification by
//! OSC 9 or OSC 777, as the config says. A terminal cannot be asked which
//! of these it shows, so the bell, which all of them take, is the
//! default. `docs/decisions/0056-notifications.md`.

use serde::Deserialize;

use crate::protocol::AgentEvent;

/// How the person is told (`notify` in config.toml, `--notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    /// The terminal's bell (BEL), which every terminal takes: a sound, a
    /// flash or a mark on the tab, as the terminal is set up.
    #[default]
    Bell,
    /// OSC 9, a desktop notification with words (iTerm2, kitty, WezTerm,
    /// Windows Terminal, foot, ghostty).
    Osc9,
    /// OSC 777 `notify`, a desktop notification with a title (rxvt-unicode,
    /// VTE-based terminals such as GNOME Terminal, foot, ghostty).
    Osc777,
    /// Nothing.
    Off,
}

impl Notify {
    /// The bytes that tell the person `what`, or `None` when off.
    pub fn sequence(self, what: &str) -> Option<String> {
        match self {
            Notify::Bell => Some("\x07".to_owned()),
            Notify::Osc9 => Some(format!("\x1b]9;dashfloat: {what}\x07")),
            Notify::Osc777 => Some(format!("\x1b]777;notify;dashfloat;{what}\x07")),
            Notify::Off => None,
        }
    }
}

/// What an event from the agent would tell a person who looked away,
/// if it is one they wait for.
pub fn alert(event: &AgentEvent) -> Option<&'static str> {
    match event {
        AgentEvent::TurnDone => Some("the turn is done"),
        AgentEvent::Confirm(_) => Some("a call waits for your approval"),
        _ => None,
    }
}
