//! Anthropic's Messages API: the request built from the agent's chat
//! body, and the stream's events read as chat frames. Shapes follow
//! Anthropic's "Messages", "Streaming messages", "Prompt caching" and
//! "Extended thinking" documentation (ADR 0052).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::llm::classify;
use crate::llm::wire::{Message, Role};
use crate::stable_hash::checksum;

use super::request::{ChatBody, arguments_object};
use super::{Counts, Frame, call, content, finish, reasoning};

/// `max_tokens` is required by this API; the agent always sets it, and
/// this stands in should a request come without.
const MAX_TOKENS_DEFAULT: u64 = 8192;

/// The request body for `body`.
pub(super) fn request(body: &ChatBody) -> Result<Vec<u8>, serde_json::Error> {
    let mut request = Map::new();
    request.insert("model".into(), json!(body.model));
    request.insert(
        "max_tokens".into(),
        json!(body.max_tokens.unwrap_or(MAX_TOKENS_DEFAULT)),
    );
    request.insert("stream".into(), json!(true));
    if let Some(system) = body.system().filter(|s| !s.is_empty()) {
        request.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    }
    request.insert(
        "messages".into(),
        Value::Array(messages(body.conversation())),
    );
    if !body.tools.is_empty() {
        let mut tools: Vec<Value> = body
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.function.name,
                    "description": tool.function.description,
                    "input_schema": tool.function.parameters,
                })
            })
            .collect();
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), ephemeral());
        }
        request.insert("tools".into(), Value::Array(tools));
        if body.answer_only() {
            request.insert("tool_choice".into(), json!({"type": "none"}));
        }
    }
    if let Some(t) = body.temperature {
        request.insert("temperature".into(), json!(t));
    }
    let stops: Vec<&String> = body
        .stop
        .iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect();
    if !stops.is_empty() {
        request.insert("stop_sequences".into(), json!(stops));
    }
    serde_json::to_vec(&request)
}

/// A prompt-cache breakpoint: the prefix up to here is cached for the
/// next request.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The conversation as this API's alternating turns: a tool's results go
/// first in the user turn after the call, the person's words after them;
/// an assistant turn holds its carried thinking, its text, then its calls;
/// the person's images go as image blocks after their words (ADR 0055).
/// The last block of the last turn is the cache's latest breakpoint.
fn messages(conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut results = Vec::new();
    let mut words = Vec::new();
    for message in conversation {
        let text = message.content.as_deref().unwrap_or_default();
        match message.role {
            Role::Tool => results.push(json!({
                "type": "tool_result",
                "tool_use_id": call_id(message.tool_call_id.as_deref().unwrap_or_default()),
                "content": text,
            })),
            Role::User | Role::System => {
                if !text.trim().is_empty() {
                    words.push(json!({"type": "text", "text": text}));
                }
                words.extend(message.images.iter().map(|image| {
                    json!({"type": "image", "source": {
                        "type": "base64",
                        "media_type": image.media_type,
                        "data": image.data,
                    }})
                }));
            }
            Role::Assistant => {
                // A reply with no words and no call (interrupted before
                // either) is not a turn this API takes, thinking or not.
                if text.trim().is_empty() && message.tool_calls.is_empty() {
                    continue;
                }
                flush_user(&mut out, &mut results, &mut words);
                let mut blocks: Vec<Value> = message
                    .carried
                    .iter()
                    .filter(|item| {
                        matches!(
                            item["type"].as_str(),
                            Some("thinking" | "redacted_thinking")
                        )
                    })
                    .cloned()
                    .collect();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                blocks.extend(message.tool_calls.iter().map(|c| {
                    json!({
                        "type": "tool_use",
                        "id": call_id(&c.id),
                        "name": c.function.name,
                        "input": arguments_object(&c.function.arguments),
                    })
                }));
                out.push(json!({"role": "assistant", "content": blocks}));
            }
        }
    }
    flush_user(&mut out, &mut results, &mut words);
    // Thinking takes no breakpoint: the last block that is not.
    if let Some(Value::Array(blocks)) = out.last_mut().map(|turn| &mut turn["content"])
        && let Some(Value::Object(last)) = blocks
            .iter_mut()
            .rev()
            .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
    {
        last.insert("cache_control".into(), ephemeral());
    }
    out
}

/// Ends the user turn being gathered: results first, then words.
fn flush_user(out: &mut Vec<Value>, results: &mut Vec<Value>, words: &mut Vec<Value>) {
    if results.is_empty() && words.is_empty() {
        return;
    }
    let mut blocks = std::mem::take(results);
    blocks.append(words);
    out.push(json!({"role": "user", "content": blocks}));
}

/// A call's id as this API takes them (letters, digits, `_` and `-`):
/// the same id every time, so a call and its result still pair; one that
/// had to change carries a hash of what it was, so two ids that differ
/// only where they changed stay apart.
fn call_id(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == id && !safe.is_empty() {
        safe
    } else {
        format!("{safe}_{:08x}", checksum(id.as_bytes()) as u32)
    }
}

/// A thinking block while it streams, gathered to be sent back whole with
/// its signature.
#[derive(Debug, Default)]
struct Thinking {
    /// Its text so far.
    thinking: String,
    /// Its signature so far.
    signature: String,
}

/// Reads one reply's events.
#[derive(Debug, Default)]
pub struct Reader {
    /// The thinking blocks open, by index.
    thinking: HashMap<u64, Thinking>,
    /// Token counts so far.
    counts: Counts,
    /// Why the reply stopped, in chat's words, once said.
    stop: Option<&'static str>,
}

impl Reader {
    /// Turns one event (`data` as sent, `event` parsed) into frames.
    pub(super) fn read(&mut self, event: &Value, data: &str, out: &mut Vec<super::Frame>) {
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => self.count(&event["message"]["usage"]),
            "content_block_start" => self.start(event, out),
            "content_block_delta" => self.delta(event, out),
            "content_block_stop" => {
                let index = event["index"].as_u64().unwrap_or_default();
                // Unsigned thinking (a server imitating this API) is not
                // sent back: the API refuses a block it did not sign.
                if let Some(Thinking {
                    thinking,
                    signature,
                }) = self.thinking.remove(&index)
                    && !signature.is_empty()
                {
                    out.push(Frame::Carried(json!({
                        "type": "thinking",
                        "thinking": thinking,
                        "signature": signature,
                    })));
                }
            }
            "message_delta" => {
                self.count(&event["usage"]);
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop_reason(reason));
                }
            }
            "message_stop" => {
                out.push(finish(self.stop.unwrap_or("stop"), self.counts));
                out.push(Frame::Done);
            }
            "error" => out.push(Frame::Failed(classify::in_stream_error(data.as_bytes()))),
            // `ping`, and whatever a later version adds.
            _ => {}
        }
    }

    /// Takes the counts a `usage` object gives; those it leaves out keep
    /// what an earlier event said (`message_delta`'s are cumulative).
    fn count(&mut self, usage: &Value) {
        let take = |field: &str, into: &mut u64| {
            if let Some(n) = usage[field].as_u64() {
                *into = n;
            }
        };
        take("input_tokens", &mut self.counts.input);
        take("cache_read_input_tokens", &mut self.counts.cached);
        take(
            "cache_creation_input_tokens",
            &mut self.counts.cache_written,
        );
        take("output_tokens", &mut self.counts.output);
    }

    fn start(&mut self, event: &Value, out: &mut Vec<Frame>) {
        let index = event["index"].as_u64().unwrap_or_default();
        let block = &event["content_block"];
        match block["type"].as_str().unwrap_or_default() {
            "text" => {
                if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(content(text));
                }
            }
            "tool_use" => {
                let id = block["id"].as_str().unwrap_or_default();
                let name = block["name"].as_str().unwrap_or_default();
                // The input streams as JSON pieces after an empty object;
                // a server that sends it whole here sends no pieces.
                let whole = match &block["input"] {
                    Value::Object(input) if !input.is_empty() => block["input"].to_string(),
                    _ => String::new(),
                };
                out.push(call(index, Some((id, name)), &whole));
            }
            "thinking" => {
                let thinking = block["thinking"].as_str().unwrap_or_default();
                if !thinking.is_empty() {
                    out.push(reasoning(thinking));
                }
                self.thinking.insert(
                    index,
                    Thinking {
                        thinking: thinking.to_owned(),
                        signature: block["signature"].as_str().unwrap_or_default().to_owned(),
                    },
                );
            }
            "redacted_thinking" => out.push(Frame::Carried(block.clone())),
            _ => {}
        }
    }

    fn delta(&mut self, event: &Value, out: &mut Vec<Frame>) {
        let index = event["index"].as_u64().unwrap_or_default();
        let delta = &event["delta"];
        let text = |field: &str| delta[field].as_str().unwrap_or_default();
        match delta["type"].as_str().unwrap_or_default() {
            "text_delta" if !text("text").is_empty() => out.push(content(text("text"))),
            "input_json_delta" => out.push(call(index, None, text("partial_json"))),
            "thinking_delta" => {
                if let Some(open) = self.thinking.get_mut(&index) {
                    open.thinking.push_str(text("thinking"));
                }
                if !text("thinking").is_empty() {
                    out.push(reasoning(text("thinking")));
                }
            }
            "signature_delta" => {
                if let Some(open) = self.thinking.get_mut(&index) {
                    open.signature.push_str(text("signature"));
                }
            }
            _ => {}
        }
    }
}

/// `stop_reason` in chat's `finish_reason` words.
fn stop_reason(reason: &str) -> &'static str {
    match reason {
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        _ => "stop",
    }
}
