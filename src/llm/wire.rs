//! The OpenAI chat-completions wire format: the request body and the
//! streamed chunks, as typed serde structs. Unknown fields are ignored
//! (servers add their own, e.g. llama-server's `timings`).

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from dashfloat.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation, in the shape the API takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

impl Message {
    /// A message with the given role and text.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
}

/// `stream_options` of the request.
#[derive(Debug, Clone, Serialize)]
pub struct StreamOptions {
    /// Ask for a final usage chunk.
    pub include_usage: bool,
}

/// The body of `POST {base_url}/chat/completions`.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest<'a> {
    /// Model name.
    pub model: &'a str,
    /// The whole conversation.
    pub messages: &'a [Message],
    /// Always true: dashfloat only streams.
    pub stream: bool,
    /// Always asks for usage.
    pub stream_options: StreamOptions,
}

/// One `data:` frame of the stream.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ChatChunk {
    /// Usually one choice; empty in the usage chunk.
    pub choices: Vec<ChunkChoice>,
    /// Token counts (the last chunk, when asked for).
    pub usage: Option<WireUsage>,
    /// Some servers report failures inside the stream.
    pub error: Option<WireError>,
}

/// A choice inside a chunk.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ChunkChoice {
    /// The new text.
    pub delta: Delta,
    /// Set on the choice's last chunk.
    pub finish_reason: Option<String>,
}

/// The incremental part of a choice.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Delta {
    /// Reply text.
    pub content: Option<String>,
    /// Reasoning text (DeepSeek, llama-server with reasoning models).
    pub reasoning_content: Option<String>,
    /// Some servers name it `reasoning`.
    pub reasoning: Option<String>,
}

/// Usage numbers as sent.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    /// Request tokens.
    pub prompt_tokens: u64,
    /// Reply tokens.
    pub completion_tokens: u64,
    /// Sum.
    pub total_tokens: u64,
}

/// An error object, in a body or inside the stream.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WireError {
    /// The provider's message.
    pub message: String,
}

/// A JSON error body: `{"error": {...}}` or `{"error": "..."}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorField,
}

/// The two shapes of the `error` field seen in the wild.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ErrorField {
    /// `{"message": "..."}`.
    Object(WireError),
    /// A bare string.
    Text(String),
}
