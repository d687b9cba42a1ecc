//! The agent's chat-completions request read back, for a wire that sends
//! something else: what every such wire needs of it.

use serde::Deserialize;
use serde_json::Value;

use crate::llm::wire::{Message, Role};
use crate::stable_hash::checksum;

/// A chat-completions request body as the agent builds it.
#[derive(Debug, Deserialize)]
pub struct ChatBody {
    /// The model asked for.
    pub model: String,
    /// The conversation, the system prompt first.
    pub messages: Vec<Message>,
    /// The tools offered, in the chat wire's function form.
    #[serde(default)]
    pub tools: Vec<ChatTool>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// The reply's bound.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Where the reply ends if the model writes it.
    #[serde(default)]
    pub stop: Option<Vec<String>>,
    /// `"none"` when the reply must be words, not calls.
    #[serde(default)]
    pub tool_choice: Option<String>,
}

/// One offered tool, as chat completions lists it.
#[derive(Debug, Deserialize)]
pub struct ChatTool {
    /// The function it is.
    pub function: ChatFunction,
}

/// A tool's name, description and parameters' JSON schema.
#[derive(Debug, Deserialize)]
pub struct ChatFunction {
    /// The tool's name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// Its parameters' schema.
    #[serde(default)]
    pub parameters: Value,
}

impl ChatBody {
    /// The system prompt: the first message's text, when it is one.
    pub fn system(&self) -> Option<&str> {
        self.messages
            .first()
            .filter(|m| m.role == Role::System)
            .and_then(|m| m.content.as_deref())
    }

    /// The conversation after the system prompt.
    pub fn conversation(&self) -> &[Message] {
        let skip = usize::from(self.system().is_some());
        self.messages.get(skip..).unwrap_or_default()
    }

    /// Whether the reply must be words rather than calls.
    pub fn answer_only(&self) -> bool {
        self.tool_choice.as_deref() == Some("none")
    }

    /// A name for this conversation's prompt cache: the same for every
    /// request of it (its model, system prompt and first prompt), so a
    /// provider routes them to the cache that holds its prefix.
    pub fn cache_key(&self) -> String {
        let first = self
            .conversation()
            .first()
            .and_then(|m| m.content.as_deref());
        let mut named = Vec::new();
        for part in [Some(self.model.as_str()), self.system(), first] {
            named.extend_from_slice(part.unwrap_or_default().as_bytes());
            named.push(0);
        }
        format!("dashfloat-{:016x}", checksum(&named))
    }
}

/// A call's arguments as the object a wire that takes structured input
/// sends: the text the model wrote parsed, or an empty object when it is
/// not one (a call that failed validation is answered as such; its
/// arguments are not sent back whole).
pub fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}
