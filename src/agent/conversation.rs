//! The conversation: OpenAI-shaped messages in order, starting with the
//! system prompt. It keeps the one invariant providers enforce: every tool
//! call in an assistant message is answered by exactly one tool message,
//! in call order, before anything else follows.

use crate::llm::wire::{ChatRequest, FunctionCall, Message, Role, StreamOptions, ToolCallMessage};
use crate::protocol::CallId;
use crate::tools::ToolResult;

/// One call of a reply, as the assistant message carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantCall {
    /// The id its tool message answers to.
    pub id: CallId,
    /// The tool's name, as the model wrote it.
    pub name: String,
    /// The arguments as a JSON object's text.
    pub arguments: String,
}

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

    /// A conversation resumed from a saved session, whose messages the
    /// store has checked ([`crate::session::check_conversation`]).
    pub fn from_messages(messages: Vec<Message>) -> Self {
        Self { messages }
    }

    /// The messages, oldest first: what a saved session holds.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Appends the person's prompt.
    pub fn push_user(&mut self, text: String) {
        self.messages.push(Message::new(Role::User, text));
    }

    /// Appends a reply (whole, or partial after an interrupt or failure:
    /// what the person saw is what the model is told it said) with the
    /// calls it made.
    pub fn push_assistant(&mut self, text: String, calls: Vec<AssistantCall>) {
        let tool_calls: Vec<ToolCallMessage> = calls
            .into_iter()
            .map(|call| ToolCallMessage {
                id: call.id,
                kind: "function".to_string(),
                function: FunctionCall {
                    name: call.name,
                    arguments: call.arguments,
                },
            })
            .collect();
        let content = if text.is_empty() && !tool_calls.is_empty() {
            None
        } else {
            Some(text)
        };
        self.messages.push(Message {
            role: Role::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
        });
    }

    /// Appends the answer to one call: the result as the JSON the model
    /// reads.
    pub fn push_tool_result(&mut self, call_id: CallId, result: &ToolResult) {
        self.messages.push(tool_message(call_id, result));
    }

    /// The JSON body of the next request.
    pub fn request_body(
        &self,
        model: &str,
        tools: &serde_json::Value,
        temperature: Option<f32>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(&ChatRequest {
            model,
            messages: &self.messages,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools,
            temperature,
        })
    }
}

/// The tool message answering call `call_id` with `result`.
pub fn tool_message(call_id: CallId, result: &ToolResult) -> Message {
    Message {
        role: Role::Tool,
        content: Some(result.to_json()),
        tool_calls: Vec::new(),
        tool_call_id: Some(call_id),
    }
}

/// The system prompt. It names no directory: small models shown an
/// absolute path build absolute paths from its parent (`/tmp/x` for a
/// project in `/tmp/proj`), and shown the directory's name they prefix it
/// (`./proj/x`) — both refused by the path policy, both seen with
/// Qwen2.5-Coder-0.5B.
pub fn system_prompt() -> String {
    "You are dashfloat, a coding agent in a terminal, working in the person's project, which is the current \
directory. Give every tool a path relative to it, spelled exactly as the person names the file; `.` is the \
project itself. read_file and list_directory run at once; write_file, edit_file and execute_command wait for \
the person's approval and may be rejected. When a tool fails, read its error: it says how to recover. When you \
have what you need, answer concisely in GitHub-flavoured markdown, with code in fenced blocks tagged with their \
language."
        .to_string()
}
