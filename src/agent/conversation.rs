//! The conversation: OpenAI-shaped messages in order, starting with the
//! system prompt. Whole-conversation per request (compaction comes with
//! sessions).

use crate::llm::wire::{ChatRequest, Message, Role, StreamOptions};

/// The messages sent with every request.
#[derive(Debug, Clone)]
pub struct Conversation {
    messages: Vec<Message>,
}

impl Conversation {
    /// A conversation holding only the system prompt.
    pub fn new(system_prompt: &str) -> Self {
        Self {
            messages: vec![Message::new(Role::System, system_prompt)],
        }
    }

    /// Appends the person's prompt.
    pub fn push_user(&mut self, text: String) {
        self.messages.push(Message::new(Role::User, text));
    }

    /// Appends a reply (whole, or partial after an interrupt or failure:
    /// what the person saw is what the model is told it said).
    pub fn push_assistant(&mut self, text: String) {
        self.messages.push(Message::new(Role::Assistant, text));
    }

    /// The JSON body of the next request.
    pub fn request_body(&self, model: &str) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(&ChatRequest {
            model,
            messages: &self.messages,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
        })
    }
}

/// The system prompt for a session in `cwd`.
pub fn system_prompt(cwd: &str) -> String {
    format!(
        "You are dashfloat, a coding assistant in a terminal. The person works in the project directory {cwd}. \
Answer concisely in GitHub-flavoured markdown; put code in fenced blocks with a language tag."
    )
}
