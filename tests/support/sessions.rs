//! Saved sessions written straight to a store, for the tests that list,
//! continue or resume them.

use dashfloat::llm::wire::{Message, Role};
use dashfloat::protocol::{LogItem, ReplyEnd};
use dashfloat::session::{SessionRecord, SessionStore};

/// Writes session `id` of `directory`, updated at `updated`, holding
/// `messages` and the screen's `log`, titled by its first prompt.
pub fn write_record(
    store: &SessionStore,
    id: &str,
    directory: &str,
    updated: u64,
    messages: &[Message],
    log: &[LogItem],
) {
    let title = messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    let record = SessionRecord {
        id,
        seq: 0,
        created: updated,
        updated,
        directory,
        model: "scripted",
        base_url: "http://127.0.0.1:1/v1",
        wire: dashfloat::llm::wires::Wire::Chat,
        title,
        usage: Default::default(),
        last_usage: None,
        messages,
        pending: &[],
        log,
        log_first: 0,
        checkpoints: &dashfloat::tools::CheckpointLog::default(),
    };
    store.write(id, &record.encode().unwrap()).unwrap();
}

/// Writes session `id` of `directory`, updated at `updated`: one prompt
/// (its title) and one answer.
pub fn write_session(
    store: &SessionStore,
    id: &str,
    directory: &str,
    updated: u64,
    (prompt, answer): (&str, &str),
) {
    let messages = [
        Message::new(Role::System, "system prompt"),
        Message::new(Role::User, prompt),
        Message::new(Role::Assistant, answer),
    ];
    let log = [
        LogItem::User(prompt.into()),
        LogItem::Assistant {
            text: answer.into(),
            reasoning: String::new(),
            end: ReplyEnd::Complete,
        },
    ];
    write_record(store, id, directory, updated, &messages, &log);
}
