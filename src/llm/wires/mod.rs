//! The wires dashfloat speaks: OpenAI chat completions, OpenAI Responses
//! and Anthropic Messages. The agent builds every request as a
//! chat-completions body and reads every reply as [`StreamEvent`]s; a wire
//! other than chat turns that body into its own request, and its stream
//! back into chat-shaped frames, here, so nothing above the stream task
//! changes per wire (ADR 0052).
//!
//! [`StreamEvent`]: crate::protocol::StreamEvent

pub mod anthropic;
mod request;
pub mod responses;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::protocol::TransportError;

use super::wire::{
    ChatChunk, ChunkChoice, Delta, PromptTokensDetails, WireFunctionDelta, WireToolCallDelta,
    WireUsage,
};

pub use request::ChatBody;

/// Which API the requests speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI chat completions: OpenAI, OpenRouter, vLLM, llama.cpp,
    /// Ollama and most others.
    #[default]
    Chat,
    /// OpenAI's Responses API.
    Responses,
    /// Anthropic's Messages API.
    Anthropic,
}

/// Anthropic's API version, sent with every request of that wire.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

impl Wire {
    /// The wire a base URL implies where that is unambiguous: Anthropic's
    /// own API host speaks only Messages; anything else (OpenAI's host
    /// too) stays on chat unless the person says otherwise.
    pub fn for_base_url(base_url: &str) -> Wire {
        let host = crate::base_url::host(base_url);
        if host.eq_ignore_ascii_case("api.anthropic.com") {
            Wire::Anthropic
        } else {
            Wire::Chat
        }
    }

    /// Its name, as the flag and the config file spell it.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Responses => "responses",
            Wire::Anthropic => "anthropic",
        }
    }

    /// The variable the key is read from when none is named.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Wire::Chat | Wire::Responses => "OPENAI_API_KEY",
            Wire::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// Where replies are asked for under `base_url`. Anthropic's base is
    /// the API's root, as its SDKs take it; one that already ends in
    /// `/v1` is used as it is.
    pub fn url(self, base_url: &str) -> String {
        match self {
            Wire::Chat => crate::base_url::api(base_url, "/chat/completions"),
            Wire::Responses => crate::base_url::api(base_url, "/responses"),
            Wire::Anthropic => crate::base_url::api(base_url, &versioned(base_url, "/messages")),
        }
    }

    /// Where the models served are listed under `base_url`.
    pub fn models_url(self, base_url: &str) -> String {
        match self {
            Wire::Chat | Wire::Responses => crate::base_url::api(base_url, "/models"),
            Wire::Anthropic => crate::base_url::api(base_url, &versioned(base_url, "/models")),
        }
    }

    /// The request body this wire sends for `chat_body`, the agent's
    /// chat-completions request.
    pub(crate) fn request(self, chat_body: &[u8]) -> Result<Cow<'_, [u8]>, serde_json::Error> {
        Ok(match self {
            Wire::Chat => Cow::Borrowed(chat_body),
            Wire::Responses => Cow::Owned(responses::request(&serde_json::from_slice(chat_body)?)?),
            Wire::Anthropic => Cow::Owned(anthropic::request(&serde_json::from_slice(chat_body)?)?),
        })
    }

    /// What turns this wire's stream into chat-shaped frames; `None` for
    /// chat, whose frames are read as they come.
    pub fn reader(self) -> Option<Reader> {
        match self {
            Wire::Chat => None,
            Wire::Responses => Some(Reader::Responses(responses::Reader::default())),
            Wire::Anthropic => Some(Reader::Anthropic(anthropic::Reader::default())),
        }
    }
}

/// `path` under `/v1` unless the base URL's path already ends there.
fn versioned(base_url: &str, path: &str) -> String {
    let ends_in_v1 = reqwest::Url::parse(base_url)
        .is_ok_and(|url| url.path().trim_end_matches('/').ends_with("/v1"));
    if ends_in_v1 {
        path.to_owned()
    } else {
        format!("/v1{path}")
    }
}

/// What one event of a wire's stream says, in the chat wire's terms.
#[derive(Debug)]
pub enum Frame {
    /// What a chat chunk would have carried.
    Chunk(Box<ChatChunk>),
    /// The reply is complete (chat's `[DONE]`).
    Done,
    /// The stream reports a failure.
    Failed(TransportError),
    /// An item the wire requires be sent back with the reply (Anthropic's
    /// signed thinking, Responses' encrypted reasoning), as sent.
    Carried(serde_json::Value),
}

/// The reader of a wire's stream, one per reply.
#[derive(Debug)]
pub enum Reader {
    /// Anthropic Messages events.
    Anthropic(anthropic::Reader),
    /// OpenAI Responses events.
    Responses(responses::Reader),
}

impl Reader {
    /// Turns one event's `data` into frames, added to `out`.
    pub fn read(&mut self, data: &str, out: &mut Vec<Frame>) {
        // An event with no data says nothing; a gateway that ends a stream
        // as chat does (`[DONE]`) ends it.
        match data.trim() {
            "" => return,
            "[DONE]" => return out.push(Frame::Done),
            _ => {}
        }
        let event: serde_json::Value = match serde_json::from_str(data) {
            Ok(event) => event,
            Err(e) => {
                out.push(Frame::Failed(TransportError::MalformedChunk {
                    detail: format!("{e}; frame: {}", super::classify::excerpt(data)),
                }));
                return;
            }
        };
        match self {
            Reader::Anthropic(reader) => reader.read(&event, data, out),
            Reader::Responses(reader) => reader.read(&event, out),
        }
    }
}

/// A frame of reply text.
fn content(text: &str) -> Frame {
    delta(Delta {
        content: Some(text.to_owned()),
        ..Delta::default()
    })
}

/// A frame of reasoning text.
fn reasoning(text: &str) -> Frame {
    delta(Delta {
        reasoning_content: Some(text.to_owned()),
        ..Delta::default()
    })
}

/// A frame of the call at `index` of the reply: its start when `start`
/// gives its id and name, and a piece of its arguments. (An index never
/// reaches `u32`'s bound: each costs bytes of a bounded reply.)
fn call(index: u64, start: Option<(&str, &str)>, arguments: &str) -> Frame {
    delta(Delta {
        tool_calls: vec![WireToolCallDelta {
            index: Some(u32::try_from(index).unwrap_or(u32::MAX)),
            id: start.map(|(id, _)| id.to_owned()),
            kind: start.map(|_| "function".to_owned()),
            function: Some(WireFunctionDelta {
                name: start.map(|(_, name)| name.to_owned()),
                arguments: Some(arguments.to_owned()),
            }),
        }],
        ..Delta::default()
    })
}

fn delta(delta: Delta) -> Frame {
    Frame::Chunk(Box::new(ChatChunk {
        choices: vec![ChunkChoice {
            delta,
            finish_reason: None,
        }],
        ..ChatChunk::default()
    }))
}

/// The frame that ends a reply: why, in chat's words, and its usage.
fn finish(reason: &str, usage: Counts) -> Frame {
    // The counts are the server's: a nonsense one stops at the top.
    let prompt_tokens = usage
        .input
        .saturating_add(usage.cached)
        .saturating_add(usage.cache_written);
    Frame::Chunk(Box::new(ChatChunk {
        choices: vec![ChunkChoice {
            delta: Delta::default(),
            finish_reason: Some(reason.to_owned()),
        }],
        usage: Some(WireUsage {
            prompt_tokens,
            completion_tokens: usage.output,
            total_tokens: prompt_tokens.saturating_add(usage.output),
            prompt_tokens_details: Some(PromptTokensDetails {
                cached_tokens: usage.cached,
            }),
        }),
        ..ChatChunk::default()
    }))
}

/// A reply's token counts as a wire reports them apart.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    /// Prompt tokens neither read from the cache nor written to it.
    input: u64,
    /// Prompt tokens read from the cache.
    cached: u64,
    /// Prompt tokens written to the cache (Anthropic).
    cache_written: u64,
    /// Reply tokens.
    output: u64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn anthropics_host_selects_its_wire_and_others_stay_on_chat() {
        assert_eq!(
            Wire::for_base_url("https://api.anthropic.com"),
            Wire::Anthropic
        );
        assert_eq!(
            Wire::for_base_url("https://API.Anthropic.com/v1/"),
            Wire::Anthropic
        );
        assert_eq!(Wire::for_base_url("https://api.openai.com/v1"), Wire::Chat);
        assert_eq!(Wire::for_base_url("http://127.0.0.1:8088/v1"), Wire::Chat);
        assert_eq!(
            Wire::for_base_url("https://anthropic.example.com"),
            Wire::Chat
        );
    }

    #[test]
    fn an_event_without_data_says_nothing_and_done_ends_the_reply() {
        for wire in [Wire::Anthropic, Wire::Responses] {
            let mut reader = wire.reader().unwrap();
            let mut out = Vec::new();
            reader.read(" ", &mut out);
            assert!(out.is_empty(), "{out:?}");
            reader.read("[DONE]", &mut out);
            assert!(matches!(out.as_slice(), [Frame::Done]), "{out:?}");
            out.clear();
            reader.read("{not json", &mut out);
            assert!(matches!(out.as_slice(), [Frame::Failed(_)]), "{out:?}");
        }
    }

    #[test]
    fn each_wire_posts_to_its_own_path() {
        assert_eq!(
            Wire::Anthropic.url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            Wire::Anthropic.url("https://proxy.example/anthropic/v1/"),
            "https://proxy.example/anthropic/v1/messages"
        );
        assert_eq!(
            Wire::Responses.url("https://api.openai.com/v1"),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            Wire::Chat.url("http://127.0.0.1:8088/v1"),
            "http://127.0.0.1:8088/v1/chat/completions"
        );
        assert_eq!(
            Wire::Anthropic.models_url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/models"
        );
    }
}
