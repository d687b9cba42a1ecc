//! The key table: the keys that apply in each phase, most useful first.
//! The help line shows as many as fit; `/help` lists them all. ADR 0003.

/// Keys while the agent is idle.
pub(crate) const IDLE: &[&str] = &[
    "⏎ send",
    "/ commands",
    "Alt+⏎/^J newline",
    "PgUp/PgDn scroll",
    "^Y copy reply",
    "Shift-drag select",
    "^D quit",
    "↑↓ history",
    "Alt+1-9 copy code",
    "Esc Esc rewind",
];

/// Keys while a reply streams, a call runs or the conversation is
/// compacted.
pub(crate) const BUSY: &[&str] = &[
    "Esc interrupt",
    "PgUp/PgDn scroll",
    "^Y copy reply",
    "Shift-drag select",
    "^C cancel (twice: quit)",
];

/// Keys while a call waits for the person's answer.
pub(crate) const CONFIRMING: &[&str] = &[
    "y approve",
    "Esc/n reject",
    "type+⏎ say instead",
    "PgUp/PgDn scroll",
    "^C cancel",
];

/// Keys while a command waits whose rule can be remembered (ADR 0044).
pub const CONFIRMING_REMEMBER: &[&str] = &[
    "y approve",
    "a always allow",
    "Esc/n reject",
    "type+⏎ say instead",
    "PgUp/PgDn scroll",
    "^C cancel",
];

/// Keys while the command popup is open.
pub(crate) const POPUP: &[&str] = &["Tab complete", "↑↓ select", "⏎ run", "Esc close"];

/// Keys while the `@` popup of the project's paths is open.
pub(crate) const MENTION: &[&str] = &["Tab/⏎ complete", "↑↓ select", "Esc close"];

/// Keys while the session picker is open.
pub(crate) const PICKER: &[&str] = &["↑↓ choose", "⏎ resume", "Esc close"];

/// Keys while the rewind picker is open.
pub(crate) const REWIND: &[&str] = &["↑↓ choose", "⏎ rewind to it", "Esc close"];

/// Every table with the heading `/help` gives it.
pub const TABLES: [(&str, &[&str]); 7] = [
    ("keys", IDLE),
    ("while the agent works", BUSY),
    ("while a call waits for you", CONFIRMING_REMEMBER),
    ("in the command list", POPUP),
    ("in the @ list of paths", MENTION),
    ("in the session picker", PICKER),
    ("in the rewind picker", REWIND),
];
