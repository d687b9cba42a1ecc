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
        /// The call.
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
    // The calls of the last assistant message still to be answered, in
    // order, with that message's index.
    let mut waiting: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
    let mut asked_at = 0;
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
