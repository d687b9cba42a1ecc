//! OpenAI's Responses API: the request built from the agent's chat body,
//! and the stream's events read as chat frames. Nothing is stored at the
//! provider (`store: false`): the reasoning it returns encrypted is
//! carried in the conversation and sent back with each request. Shapes
//! follow OpenAI's API reference for "Responses" and "Streaming
//! events" (ADR 0052).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::llm::classify;
use crate::llm::wire::{Message, Role};

use super::request::ChatBody;
use super::{Counts, Frame, call, content, finish, reasoning};

/// The request body for `body`.
pub(super) fn request(body: &ChatBody) -> Result<Vec<u8>, serde_json::Error> {
    let mut request = Map::new();
    request.insert("model".into(), json!(body.model));
    request.insert("stream".into(), json!(true));
    request.insert("store".into(), json!(false));
    request.insert("include".into(), json!(["reasoning.encrypted_content"]));
    request.insert("prompt_cache_key".into(), json!(body.cache_key()));
    if let Some(system) = body.system().filter(|s| !s.is_empty()) {
        request.insert("instructions".into(), json!(system));
    }
    request.insert("input".into(), Value::Array(items(body.conversation())));
    if !body.tools.is_empty() {
        let tools: Vec<Value> = body
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.function.name,
                    "description": tool.function.description,
                    "parameters": tool.function.parameters,
                    "strict": false,
                })
            })
            .collect();
        request.insert("tools".into(), Value::Array(tools));
        if body.answer_only() {
            request.insert("tool_choice".into(), json!("none"));
        }
    }
    if let Some(t) = body.temperature {
        request.insert("temperature".into(), json!(t));
    }
    if let Some(n) = body.max_tokens {
        request.insert("max_output_tokens".into(), json!(n));
    }
    serde_json::to_vec(&request)
}

/// The conversation as input items: a reply's carried reasoning before
/// its words and calls, each call as a `function_call`, each result as
/// the `function_call_output` naming it; the person's images as
/// `input_image` parts after their words (ADR 0055).
fn items(conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for message in conversation {
        let text = message.content.as_deref().unwrap_or_default();
        match message.role {
            Role::User | Role::System if !message.images.is_empty() => {
                let words = Some(text).filter(|t| !t.is_empty());
                let parts: Vec<Value> =
                    words
                        .map(|text| json!({"type": "input_text", "text": text}))
                        .into_iter()
                        .chain(message.images.iter().map(
                            |image| json!({"type": "input_image", "image_url": image.data_url()}),
                        ))
                        .collect();
                out.push(json!({"role": "user", "content": parts}));
            }
            Role::User | Role::System => {
                if !text.is_empty() {
                    out.push(json!({"role": "user", "content": text}));
                }
            }
            Role::Tool => out.push(json!({
                "type": "function_call_output",
                "call_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "output": text,
            })),
            Role::Assistant => {
                out.extend(
                    message
                        .carried
                        .iter()
                        .filter(|item| item["type"] == "reasoning")
                        .cloned(),
                );
                if !text.is_empty() {
                    out.push(json!({"role": "assistant", "content": text}));
                }
                out.extend(message.tool_calls.iter().map(|c| {
                    json!({
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.function.name,
                        "arguments": c.function.arguments,
                    })
                }));
            }
        }
    }
    out
}

/// Reads one reply's events.
#[derive(Debug, Default)]
pub struct Reader {
    /// The calls (by output index) whose arguments came in pieces.
    pieces: HashSet<u64>,
    /// Whether the reply made a call.
    called: bool,
}

impl Reader {
    /// Turns one event (`data` as sent, `event` parsed) into frames.
    pub(super) fn read(&mut self, event: &Value, out: &mut Vec<Frame>) {
        let index = event["output_index"].as_u64().unwrap_or_default();
        let text = |field: &str| event[field].as_str().unwrap_or_default();
        match text("type") {
            "response.output_text.delta" if !text("delta").is_empty() => {
                out.push(content(text("delta")));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta"
                if !text("delta").is_empty() =>
            {
                out.push(reasoning(text("delta")));
            }
            "response.output_item.added" if event["item"]["type"] == "function_call" => {
                let item = &event["item"];
                let field = |name: &str| item[name].as_str().unwrap_or_default();
                self.called = true;
                // Arguments given whole here are not given again by `.done`.
                if !field("arguments").is_empty() {
                    self.pieces.insert(index);
                }
                out.push(call(
                    index,
                    Some((field("call_id"), field("name"))),
                    field("arguments"),
                ));
            }
            "response.function_call_arguments.delta" => {
                self.pieces.insert(index);
                out.push(call(index, None, text("delta")));
            }
            // A server that sends the arguments only whole.
            "response.function_call_arguments.done" if !self.pieces.contains(&index) => {
                out.push(call(index, None, text("arguments")));
            }
            "response.output_item.done" if event["item"]["type"] == "reasoning" => {
                let mut item = event["item"].clone();
                if let Value::Object(fields) = &mut item {
                    // Nothing is stored: an id would name an item the
                    // provider does not have.
                    fields.remove("id");
                    fields.remove("status");
                }
                out.push(Frame::Carried(item));
            }
            "response.completed" => {
                let reason = if self.called { "tool_calls" } else { "stop" };
                out.push(finish(reason, counts(&event["response"]["usage"])));
                out.push(Frame::Done);
            }
            "response.incomplete" => {
                let reason = match event["response"]["incomplete_details"]["reason"].as_str() {
                    Some("content_filter") => "content_filter",
                    _ => "length",
                };
                out.push(finish(reason, counts(&event["response"]["usage"])));
                out.push(Frame::Done);
            }
            "response.failed" => {
                let error = json!({"error": event["response"]["error"]});
                out.push(Frame::Failed(classify::in_stream_error(
                    error.to_string().as_bytes(),
                )));
            }
            // Documented flat; some servers nest it under `error`.
            "error" => {
                let error = match &event["error"] {
                    nested @ Value::Object(_) => json!({"error": nested}),
                    _ => json!({"error": {"message": event["message"], "code": event["code"]}}),
                };
                out.push(Frame::Failed(classify::in_stream_error(
                    error.to_string().as_bytes(),
                )));
            }
            _ => {}
        }
    }
}

/// A `usage` object's counts: `input_tokens` includes the cached ones.
fn counts(usage: &Value) -> Counts {
    let n = |value: &Value| value.as_u64().unwrap_or_default();
    let cached = n(&usage["input_tokens_details"]["cached_tokens"]);
    Counts {
        input: n(&usage["input_tokens"]).saturating_sub(cached),
        cached,
        cache_written: 0,
        output: n(&usage["output_tokens"]),
    }
}
