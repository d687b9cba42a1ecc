//! The one check that a conversation is valid, as providers require and
//! as every saved session must be: it opens with the system prompt, and
//! every tool call of an assistant message is answered by exactly one tool
//! message, in call order, before anything else follows. Used before a
//! session is written, when one is loaded, and by the tests.

use crate::llm::wire::{Message, Role};

/// How a conversation breaks the rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidConversation {
    /// It is empty or does not open with the system prompt.
    #[error("the conversation does not open with the system prompt")]
    NoSystemPrompt,
    /// A call is not answered before the next non-tool message (or the
    /// end).
    #[error("call {id} of message {at} is not answered")]
    Unanswered {
        /// The call's id, as the message holds it.
        id: String,
        /// The assistant message's index.
        at: usize,
    },
    /// A tool message answers no call, or not the next one in order.
    #[error("message {at} answers call {id:?}, which is not the next call waiting")]
    Unexpected {
        /// The tool message's index.
        at: usize,
        /// The call it names.
        id: Option<String>,
    },
}

/// Checks `messages` (see the module docs).
pub fn check_conversation<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
) -> Result<(), InvalidConversation> {
    let mut messages = messages.into_iter().enumerate().peekable();
    match messages.next() {
        Some((_, first)) if first.role == Role::System => {}
        _ => return Err(InvalidConversation::NoSystemPrompt),
    }
    check_after(messages, 0)
}

/// Checks `messages` then `pending`, as one conversation whose messages
/// before `from` were checked already (they opened a conversation the
/// check passed, and have not changed since): only the round around
/// `from` and what follows it are looked at, so a save's check costs what
/// it writes, not the whole session (ADR 0040).
pub fn check_conversation_from(
    messages: &[Message],
    pending: &[Message],
    from: usize,
) -> Result<(), InvalidConversation> {
    // The last message before `from` that is not a tool's answer: before
    // it every call was answered, so the check can start there.
    let start = messages[..from.min(messages.len())]
        .iter()
        .rposition(|m| m.role != Role::Tool)
        .unwrap_or(0);
    if start == 0 {
        return check_conversation(messages.iter().chain(pending));
    }
    if messages[0].role != Role::System {
        return Err(InvalidConversation::NoSystemPrompt);
    }
    let rest = messages[start..].iter().chain(pending);
    check_after(rest.enumerate().map(|(at, m)| (start + at, m)), start - 1)
}

/// The check of the messages after a point where no call waits: each
/// with its index; `asked_at` names the last assistant message before.
fn check_after<'a>(
    messages: impl Iterator<Item = (usize, &'a Message)>,
    mut asked_at: usize,
) -> Result<(), InvalidConversation> {
    // The calls of the last assistant message still to be answered, in
    // order, with that message's index.
    let mut waiting: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
    for (at, message) in messages {
        if message.role == Role::Tool {
            let answers = message.tool_call_id.as_deref();
            if waiting.front().copied() != answers || answers.is_none() {
                return Err(InvalidConversation::Unexpected {
                    at,
                    id: message.tool_call_id.clone(),
                });
            }
            waiting.pop_front();
            continue;
        }
        if let Some(id) = waiting.front() {
            return Err(InvalidConversation::Unanswered {
                id: (*id).to_string(),
                at: asked_at,
            });
        }
        if message.role == Role::Assistant {
            waiting.extend(message.tool_calls.iter().map(|c| c.id.as_str()));
            asked_at = at;
        }
    }
    match waiting.front() {
        Some(id) => Err(InvalidConversation::Unanswered {
            id: (*id).to_string(),
            at: asked_at,
        }),
        None => Ok(()),
    }
}
