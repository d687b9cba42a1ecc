//! The conversation invariant providers enforce, which the scripted server
//! checks on every chat request it receives (ADR 0015): every assistant
//! message's tool calls are answered, in order, by the tool messages right
//! after it, each echoing its call's id, each content one JSON object; no
//! tool message answers nothing; arguments are JSON object text.

use serde_json::Value;

/// Checks a chat request body against the invariant; the first break of
/// it, said.
pub fn check(body: &Value) -> Result<(), String> {
    let messages = body["messages"]
        .as_array()
        .ok_or_else(|| format!("no messages array in {body}"))?;
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m["role"] == "tool" {
            return Err(format!("tool message #{i} answers no call: {m}"));
        }
        i += 1;
        let Some(calls) = m.get("tool_calls").and_then(Value::as_array) else {
            continue;
        };
        if m["role"] != "assistant" {
            return Err(format!("tool_calls outside an assistant message: {m}"));
        }
        for call in calls {
            let id = call["id"]
                .as_str()
                .ok_or_else(|| format!("a call without an id: {call}"))?;
            if call["type"] != "function" {
                return Err(format!("call {id} is not a function call: {call}"));
            }
            let args = call["function"]["arguments"]
                .as_str()
                .ok_or_else(|| format!("call {id} has no arguments string: {call}"))?;
            if !is_object_text(args) {
                return Err(format!(
                    "call {id}: arguments are not a JSON object: {args}"
                ));
            }
            let answer = messages
                .get(i)
                .ok_or_else(|| format!("call {id} is not answered"))?;
            if answer["role"] != "tool" {
                return Err(format!("call {id} is not answered next: {answer}"));
            }
            if answer["tool_call_id"] != id {
                return Err(format!("answers out of order: call {id} got {answer}"));
            }
            let content = answer["content"]
                .as_str()
                .ok_or_else(|| format!("the answer to {id} has no content string: {answer}"))?;
            if !is_object_text(content) {
                return Err(format!(
                    "the answer to {id} is not one JSON object: {content}"
                ));
            }
            i += 1;
        }
    }
    Ok(())
}

/// Whether `text` is one JSON object.
fn is_object_text(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object())
}
