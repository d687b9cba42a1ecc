//! The scripted server speaking another wire (ADR 0052): each chat reply
//! a test scripts goes out as that wire's stream, event by event, with
//! the chat reply's timing, cuts and hangs kept; each request is checked
//! against the wire's own pairing rules, then read back into chat's shape
//! so the test's assertions read it as they read a chat request. Written
//! from the providers' documentation, apart from dashfloat's own code.

use dashfloat::llm::wires::Wire;
use serde_json::{Value, json};

use super::server::{Reply, Step};

/// The path a request of `wire` goes to.
pub fn path_of(wire: Wire) -> &'static str {
    match wire {
        Wire::Chat => "/chat/completions",
        Wire::Responses => "/responses",
        Wire::Anthropic => "/messages",
    }
}

/// `reply`, a chat stream, as `wire` sends it; anything but a 200 event
/// stream as it is.
pub fn reply(wire: Wire, mut reply: Reply) -> Reply {
    let streams = reply.status == 200
        && reply
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("event-stream"));
    if wire == Wire::Chat || !streams {
        return reply;
    }
    let mut writer = Writer::new(wire);
    reply.steps = reply
        .steps
        .into_iter()
        .map(|step| match step {
            Step::Send(bytes) => Step::Send(writer.events(&bytes)),
            other => other,
        })
        .collect();
    reply
}

/// Writes one reply's chat chunks as another wire's events.
struct Writer {
    wire: Wire,
    started: bool,
    /// The block or item open: its index and kind.
    open: Option<(u64, &'static str)>,
    next: u64,
    /// Chat call index → the block or item it became.
    calls: Vec<(u64, u64)>,
    finish: Option<String>,
    usage: (u64, u64, u64),
    called: bool,
}

impl Writer {
    fn new(wire: Wire) -> Self {
        Self {
            wire,
            started: false,
            open: None,
            next: 0,
            calls: Vec::new(),
            finish: None,
            usage: (0, 0, 0),
            called: false,
        }
    }

    /// The events of the SSE bytes of one step (whole events; anything
    /// that is not a `data:` line goes as it is).
    fn events(&mut self, bytes: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            match line.trim_end().strip_prefix("data:").map(str::trim) {
                Some("[DONE]") => self.done(&mut out),
                Some(data) => match serde_json::from_str::<Value>(data) {
                    Ok(chunk) => self.chunk(&chunk, &mut out),
                    Err(_) => out.push_str(line),
                },
                None if line.trim().is_empty() => {}
                None => out.push_str(line),
            }
        }
        out.into_bytes()
    }

    fn send(&self, out: &mut String, event: &Value) {
        let name = event["type"].as_str().unwrap_or("message");
        out.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }

    fn start(&mut self, out: &mut String) {
        if self.started {
            return;
        }
        self.started = true;
        let event = match self.wire {
            Wire::Anthropic => json!({"type": "message_start", "message": {
                "id": "msg_scripted", "type": "message", "role": "assistant", "content": [],
                "model": "scripted", "stop_reason": null,
                "usage": {"input_tokens": 0, "output_tokens": 1}}}),
            _ => {
                json!({"type": "response.created", "response": {"id": "resp_scripted", "status": "in_progress"}})
            }
        };
        self.send(out, &event);
    }

    /// Opens a block or item of `kind` unless one is open; its index.
    fn open(&mut self, kind: &'static str, out: &mut String) -> u64 {
        if let Some((index, open)) = self.open
            && open == kind
        {
            return index;
        }
        self.close(out);
        let index = self.next;
        self.next += 1;
        self.open = Some((index, kind));
        let event = match (self.wire, kind) {
            (Wire::Anthropic, "text") => json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}),
            (Wire::Anthropic, _) => json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": ""}}),
            (_, "text") => json!({"type": "response.output_item.added", "output_index": index,
                "item": {"type": "message", "role": "assistant", "content": []}}),
            (_, _) => json!({"type": "response.output_item.added", "output_index": index,
                "item": {"type": "reasoning", "summary": []}}),
        };
        self.send(out, &event);
        index
    }

    fn close(&mut self, out: &mut String) {
        let Some((index, kind)) = self.open.take() else {
            return;
        };
        match (self.wire, kind) {
            (Wire::Anthropic, "thinking") => {
                self.send(
                    out,
                    &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": "c2lnbmVk"}}),
                );
                self.send(out, &json!({"type": "content_block_stop", "index": index}));
            }
            (Wire::Anthropic, _) => {
                self.send(out, &json!({"type": "content_block_stop", "index": index}));
            }
            (_, "thinking") => self.send(
                out,
                &json!({"type": "response.output_item.done",
                "output_index": index, "item": {"id": format!("rs_{index}"), "type": "reasoning",
                "summary": [], "encrypted_content": format!("enc{index}")}}),
            ),
            (_, _) => {}
        }
    }

    fn chunk(&mut self, chunk: &Value, out: &mut String) {
        if let Some(error) = chunk.get("error") {
            let message = error["message"]
                .as_str()
                .or(error.as_str())
                .unwrap_or("error");
            let event = match self.wire {
                Wire::Anthropic => json!({"type": "error",
                    "error": {"type": "api_error", "message": message}}),
                _ => json!({"type": "error", "code": error["code"], "message": message}),
            };
            self.send(out, &event);
            return;
        }
        self.start(out);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |v: &Value| v.as_u64().unwrap_or_default();
            self.usage = (
                n(&usage["prompt_tokens"]),
                n(&usage["completion_tokens"]),
                n(&usage["prompt_tokens_details"]["cached_tokens"]),
            );
        }
        let Some(choice) = chunk["choices"].get(0) else {
            return;
        };
        let delta = &choice["delta"];
        let thought = delta["reasoning_content"]
            .as_str()
            .or(delta["reasoning"].as_str())
            .filter(|t| !t.is_empty());
        if let Some(text) = thought {
            let index = self.open("thinking", out);
            let event = match self.wire {
                Wire::Anthropic => json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": text}}),
                _ => json!({"type": "response.reasoning_summary_text.delta",
                    "output_index": index, "delta": text}),
            };
            self.send(out, &event);
        }
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            let index = self.open("text", out);
            let event = match self.wire {
                Wire::Anthropic => json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": text}}),
                _ => json!({"type": "response.output_text.delta", "output_index": index,
                    "delta": text}),
            };
            self.send(out, &event);
        }
        for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
            self.call(fragment, out);
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish = Some(reason.to_owned());
        }
    }

    fn call(&mut self, fragment: &Value, out: &mut String) {
        let chat_index = fragment["index"].as_u64().unwrap_or_default();
        let arguments = fragment["function"]["arguments"]
            .as_str()
            .unwrap_or_default();
        let known = self
            .calls
            .iter()
            .find(|(c, _)| *c == chat_index)
            .map(|(_, i)| *i);
        let index = match known {
            Some(index) => index,
            None => {
                self.close(out);
                let index = self.next;
                self.next += 1;
                self.calls.push((chat_index, index));
                self.called = true;
                let id = fragment["id"].as_str().unwrap_or("call_scripted");
                let name = fragment["function"]["name"].as_str().unwrap_or_default();
                let event = match self.wire {
                    Wire::Anthropic => {
                        self.open = Some((index, "tool_use"));
                        json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
                    }
                    _ => json!({"type": "response.output_item.added", "output_index": index,
                        "item": {"type": "function_call", "call_id": id, "name": name, "arguments": ""}}),
                };
                self.send(out, &event);
                index
            }
        };
        if arguments.is_empty() {
            return;
        }
        let event = match self.wire {
            Wire::Anthropic => json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": arguments}}),
            _ => json!({"type": "response.function_call_arguments.delta", "output_index": index,
                "delta": arguments}),
        };
        self.send(out, &event);
    }

    /// Chat's `[DONE]`: the wire's end of a whole reply.
    fn done(&mut self, out: &mut String) {
        self.start(out);
        self.close(out);
        let (prompt, completion, cached) = self.usage;
        let finish = self
            .finish
            .clone()
            .unwrap_or_else(|| if self.called { "tool_calls" } else { "stop" }.to_owned());
        match self.wire {
            Wire::Anthropic => {
                let stop = match finish.as_str() {
                    "tool_calls" => "tool_use",
                    "length" => "max_tokens",
                    _ => "end_turn",
                };
                self.send(
                    out,
                    &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"input_tokens": prompt - cached.min(prompt),
                        "cache_read_input_tokens": cached, "output_tokens": completion}}),
                );
                self.send(out, &json!({"type": "message_stop"}));
            }
            _ => {
                let usage = json!({"input_tokens": prompt,
                    "input_tokens_details": {"cached_tokens": cached},
                    "output_tokens": completion, "total_tokens": prompt + completion});
                let event = if finish == "length" {
                    json!({"type": "response.incomplete", "response": {"status": "incomplete",
                        "incomplete_details": {"reason": "max_output_tokens"}, "usage": usage}})
                } else {
                    json!({"type": "response.completed", "response": {"status": "completed",
                        "usage": usage}})
                };
                self.send(out, &event);
            }
        }
    }
}

/// Checks a request of `wire` against its own pairing rules, then reads
/// it back as a chat request; the first break, said.
pub fn chat_request(wire: Wire, body: &Value) -> Result<Value, String> {
    match wire {
        Wire::Chat => Ok(body.clone()),
        Wire::Anthropic => from_anthropic(body),
        Wire::Responses => from_responses(body),
    }
}

fn tools(tools: &Value, schema: &str) -> Value {
    Value::Array(
        tools
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                json!({"type": "function", "function": {"name": t["name"],
                    "description": t["description"], "parameters": t[schema]}})
            })
            .collect(),
    )
}

/// Anthropic: turns alternate from a user's; every `tool_use` is answered
/// by a `tool_result` at the start of the next user turn, and no result
/// answers nothing.
fn from_anthropic(body: &Value) -> Result<Value, String> {
    let mut messages = Vec::new();
    if let Some(system) = body["system"].as_array() {
        let text: Vec<&str> = system.iter().filter_map(|b| b["text"].as_str()).collect();
        messages.push(json!({"role": "system", "content": text.join("")}));
    }
    let turns = body["messages"].as_array().ok_or("no messages")?;
    if turns.first().is_some_and(|t| t["role"] != "user") {
        return Err("the first turn is not the user's".into());
    }
    let mut owed: Vec<String> = Vec::new();
    for (n, turn) in turns.iter().enumerate() {
        let blocks = turn["content"]
            .as_array()
            .ok_or(format!("turn {n}: no blocks"))?;
        if blocks.is_empty() {
            return Err(format!("turn {n} is empty"));
        }
        if turn["role"] == "assistant" {
            if !owed.is_empty() {
                return Err(format!("turn {n}: calls {owed:?} unanswered"));
            }
            let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            let calls: Vec<Value> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    owed.push(b["id"].as_str().unwrap_or_default().to_owned());
                    json!({"id": b["id"], "type": "function", "function": {
                        "name": b["name"], "arguments": b["input"].to_string()}})
                })
                .collect();
            let mut message = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            messages.push(message);
            continue;
        }
        let mut words = Vec::new();
        let mut images = Vec::new();
        for (k, block) in blocks.iter().enumerate() {
            if block["type"] == "tool_result" {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                if !words.is_empty() || owed.first().map(String::as_str) != Some(id) {
                    return Err(format!(
                        "turn {n} block {k}: result {id} out of place (owed {owed:?})"
                    ));
                }
                owed.remove(0);
                messages
                    .push(json!({"role": "tool", "tool_call_id": id, "content": block["content"]}));
            } else if let Some(text) = block["text"].as_str() {
                words.push(text.to_owned());
            } else if block["type"] == "image" {
                let source = &block["source"];
                if source["type"] != "base64" {
                    return Err(format!("turn {n} block {k}: image source {source}"));
                }
                images.push(json!({"type": "image_url", "image_url": {"url": format!(
                    "data:{};base64,{}",
                    source["media_type"].as_str().unwrap_or_default(),
                    source["data"].as_str().unwrap_or_default()
                )}}));
            }
        }
        if !owed.is_empty() {
            return Err(format!("turn {n}: calls {owed:?} unanswered"));
        }
        if !images.is_empty() {
            let mut parts: Vec<Value> = words
                .iter()
                .map(|text| json!({"type": "text", "text": text}))
                .collect();
            parts.append(&mut images);
            messages.push(json!({"role": "user", "content": parts}));
        } else if !words.is_empty() {
            messages.push(json!({"role": "user", "content": words.join("\n\n")}));
        }
    }
    Ok(json!({"model": body["model"], "messages": messages,
        "tools": tools(&body["tools"], "input_schema")}))
}

/// A Responses message's content as chat's: a text stays one, parts
/// (`input_text`, `input_image` with a data URL) become chat's parts.
fn content_parts(content: &Value) -> Value {
    match content.as_array() {
        None => content.clone(),
        Some(parts) => Value::Array(
            parts
                .iter()
                .map(|part| match part["type"].as_str() {
                    Some("input_image") => {
                        json!({"type": "image_url", "image_url": {"url": part["image_url"]}})
                    }
                    _ => json!({"type": "text", "text": part["text"]}),
                })
                .collect(),
        ),
    }
}

/// Responses: every `function_call` is answered by the
/// `function_call_output` with its `call_id` before the next words, and
/// no output answers nothing.
fn from_responses(body: &Value) -> Result<Value, String> {
    let mut messages = Vec::new();
    if let Some(system) = body["instructions"].as_str() {
        messages.push(json!({"role": "system", "content": system}));
    }
    let mut owed: Vec<String> = Vec::new();
    for (n, item) in body["input"]
        .as_array()
        .ok_or("no input")?
        .iter()
        .enumerate()
    {
        match (item["type"].as_str(), item["role"].as_str()) {
            (Some("function_call"), _) => {
                let id = item["call_id"].as_str().unwrap_or_default().to_owned();
                let call = json!({"id": id, "type": "function", "function": {
                    "name": item["name"], "arguments": item["arguments"]}});
                owed.push(id);
                match messages.last_mut() {
                    Some(last) if last["role"] == "assistant" => {
                        let calls = last
                            .as_object_mut()
                            .map(|m| m.entry("tool_calls").or_insert_with(|| json!([])));
                        if let Some(Value::Array(calls)) = calls {
                            calls.push(call);
                        }
                    }
                    _ => messages
                        .push(json!({"role": "assistant", "content": "", "tool_calls": [call]})),
                }
            }
            (Some("function_call_output"), _) => {
                let id = item["call_id"].as_str().unwrap_or_default();
                let Some(at) = owed.iter().position(|o| o == id) else {
                    return Err(format!("item {n}: output {id} answers no call"));
                };
                owed.remove(at);
                messages
                    .push(json!({"role": "tool", "tool_call_id": id, "content": item["output"]}));
            }
            (Some("reasoning"), _) => {
                if item.get("id").is_some() {
                    return Err(format!(
                        "item {n}: reasoning sent with an id nothing stored"
                    ));
                }
            }
            (_, Some(role)) => {
                if !owed.is_empty() {
                    return Err(format!("item {n}: calls {owed:?} unanswered"));
                }
                messages.push(json!({"role": role, "content": content_parts(&item["content"])}));
            }
            _ => return Err(format!("item {n}: unknown {item}")),
        }
    }
    if !owed.is_empty() {
        return Err(format!("calls {owed:?} unanswered"));
    }
    Ok(json!({"model": body["model"], "messages": messages,
        "tools": tools(&body["tools"], "parameters")}))
}
