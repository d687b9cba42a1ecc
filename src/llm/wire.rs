//! The OpenAI chat-completions wire format: the request body and the
//! streamed chunks, as typed serde structs. Unknown fields are ignored
//! (servers add their own, e.g. llama-server's `timings`).

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize};

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
    /// A tool's result, answering one call.
    Tool,
}

/// One message of the conversation, in the shape the API takes. Read
/// from a saved session (its text, and its images apart) or from a chat
/// request the agent wrote (its text and images as content parts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "MessageFields")]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text; absent on an assistant message that only calls tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The calls an assistant message makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallMessage>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Items another wire requires be sent back with this reply
    /// (Anthropic's signed thinking, Responses' encrypted reasoning), as
    /// the provider sent them. Only those wires make them, and a session
    /// resumed on chat drops them (ADR 0052).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<serde_json::Value>,
    /// The images that go with the person's words (ADR 0055). A chat
    /// request sends them as content parts after the text; the session
    /// file keeps them beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// An image that goes with the person's words, as every wire takes one:
/// its media type and its bytes in base64 (ADR 0055).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// The file's name as the prompt gave it, for the note that stands
    /// for the image when it is left out; empty when read back from a
    /// request, which does not carry it.
    #[serde(default)]
    pub name: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The file's bytes, base64 (standard alphabet, padded): shared, as
    /// the conversation is copied to be measured and compacted and an
    /// image is megabytes.
    pub data: std::sync::Arc<str>,
}

impl Image {
    /// The image as a `data:` URL, the form chat completions and
    /// Responses take.
    pub fn data_url(&self) -> String {
        DataUrl(self).to_string()
    }

    /// The image a `data:MEDIA;base64,DATA` URL holds; `None` for any
    /// other URL (the agent writes no other).
    fn from_data_url(url: &str) -> Option<Image> {
        let (media_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
        Some(Image {
            name: String::new(),
            media_type: media_type.to_owned(),
            data: data.into(),
        })
    }
}

/// An image's `data:` URL, written where it goes: a request holds
/// megabytes of base64, not copied once more to be sent.
struct DataUrl<'a>(&'a Image);

impl std::fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "data:{};base64,{}", self.0.media_type, self.0.data)
    }
}

impl Serialize for DataUrl<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A message as it is read: its content a text, or (a chat request with
/// images) a list of parts.
#[derive(Deserialize)]
struct MessageFields {
    role: Role,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Vec<ToolCallMessage>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    carried: Vec<serde_json::Value>,
    #[serde(default)]
    images: Vec<Image>,
}

/// A message's content as chat completions sends it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    /// Plain text.
    Text(String),
    /// Parts: texts and images.
    Parts(Vec<PartIn>),
}

/// One content part read back; kinds the agent never writes are skipped.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartIn {
    Text {
        text: String,
    },
    ImageUrl {
        image_url: UrlIn,
    },
    #[serde(other)]
    Other,
}

/// The `image_url` of a part.
#[derive(Deserialize)]
struct UrlIn {
    url: String,
}

impl From<MessageFields> for Message {
    fn from(fields: MessageFields) -> Self {
        let mut images = fields.images;
        let content = match fields.content {
            None => None,
            Some(Content::Text(text)) => Some(text),
            Some(Content::Parts(parts)) => {
                let mut texts = Vec::new();
                for part in parts {
                    match part {
                        PartIn::Text { text } => texts.push(text),
                        PartIn::ImageUrl { image_url } => {
                            images.extend(Image::from_data_url(&image_url.url));
                        }
                        PartIn::Other => {}
                    }
                }
                Some(texts.join("\n\n"))
            }
        };
        Message {
            role: fields.role,
            content,
            tool_calls: fields.tool_calls,
            tool_call_id: fields.tool_call_id,
            carried: fields.carried,
            images,
        }
    }
}

/// User messages in a row, one of them or more with images, as chat
/// completions takes them: one message whose content is each one's text,
/// then its images, in order.
struct WithParts<'a>(&'a [&'a Message]);

/// One content part as chat completions takes it.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartOut<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: UrlOut<'a> },
}

/// The `image_url` of a part.
#[derive(Serialize)]
struct UrlOut<'a> {
    url: DataUrl<'a>,
}

impl Serialize for WithParts<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let parts: Vec<PartOut<'_>> = self
            .0
            .iter()
            .flat_map(|message| {
                let text = message.content.as_deref().filter(|t| !t.is_empty());
                text.map(|text| PartOut::Text { text }).into_iter().chain(
                    message.images.iter().map(|image| PartOut::ImageUrl {
                        image_url: UrlOut {
                            url: DataUrl(image),
                        },
                    }),
                )
            })
            .collect();
        let mut message = serializer.serialize_struct("Message", 2)?;
        message.serialize_field("role", &Role::User)?;
        message.serialize_field("content", &parts)?;
        message.end()
    }
}

impl Message {
    /// A message with the given role and text.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            carried: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// A tool call inside an assistant message, in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallMessage {
    /// The call's id; the answering tool message echoes it.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What is called.
    pub function: FunctionCall,
}

/// The function of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as a JSON object encoded in a string.
    pub arguments: String,
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
    pub messages: Messages<'a>,
    /// Always true: dashfloat only streams.
    pub stream: bool,
    /// Always asks for usage.
    pub stream_options: StreamOptions,
    /// The tool catalogue (OpenAI function format); left out when empty
    /// (a summary request offers no tools, and some providers refuse an
    /// empty list).
    #[serde(skip_serializing_if = "no_tools")]
    pub tools: &'a serde_json::Value,
    /// Temperature, seed and the reply's bound.
    #[serde(flatten)]
    pub sampling: Sampling,
    /// `"none"` when the reply must be an answer, not a call (the tools
    /// stay listed, so the prompt's cached prefix stays valid); absent
    /// otherwise, which lets the model choose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
}

/// A request's messages: the conversation as it stands, and optionally
/// one more that is not part of it (the ask to answer now, ADR 0015).
#[derive(Debug, Clone, Copy)]
pub struct Messages<'a> {
    /// The conversation's messages, in order.
    pub conversation: &'a [Message],
    /// A last message sent with this request only.
    pub then: Option<&'a Message>,
}

impl<'a> From<&'a [Message]> for Messages<'a> {
    fn from(conversation: &'a [Message]) -> Self {
        Messages {
            conversation,
            then: None,
        }
    }
}

/// User messages in a row are sent as one, their texts joined by a blank
/// line: a summary before the kept prompt, a note of restored files, a
/// prompt whose reply was lost, or (with the tools in the prompt) results
/// and the words after them leave several, and strict chat templates
/// refuse roles that do not alternate. When one of them has images, the
/// one message's content is parts: each one's text, then its images
/// (ADR 0055). The earlier requests' bytes stay a prefix of the later
/// ones' up to their last message.
impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let is_user = |m: &&Message| m.role == Role::User;
        let mut seq = serializer.serialize_seq(None)?;
        let mut all = self.conversation.iter().chain(self.then).peekable();
        while let Some(message) = all.next() {
            if !is_user(&message) {
                seq.serialize_element(message)?;
                continue;
            }
            let mut run = vec![message];
            while let Some(next) = all.next_if(is_user) {
                run.push(next);
            }
            if run.iter().any(|m| !m.images.is_empty()) {
                seq.serialize_element(&WithParts(&run))?;
            } else if let [only] = run[..] {
                seq.serialize_element(only)?;
            } else {
                let texts: Vec<&str> = run
                    .iter()
                    .map(|m| m.content.as_deref().unwrap_or_default())
                    .collect();
                seq.serialize_element(&Message::new(Role::User, texts.join("\n\n")))?;
            }
        }
        seq.end()
    }
}

/// The `tool_choice` that asks for an answer rather than a call.
pub(crate) const TOOL_CHOICE_NONE: &str = "none";

/// How the reply is sampled, how long it may grow and whether the
/// server's reading is reported: the request fields every request of a
/// session shares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Sampling {
    /// Sampling temperature; the provider's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Sampling seed, for repeatable runs where the server honours it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The most tokens the reply may take: the budget's reply reserve, so
    /// a degenerate reply ends instead of running to the end of the
    /// window (ADR 0021).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Ask llama.cpp for `prompt_progress` frames while it reads a long
    /// prompt; sent only to a server that answered llama.cpp's `/props`,
    /// as others may refuse a field they do not know.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub return_progress: bool,
    /// Where the reply ends if the model starts to write it: the marker
    /// that opens a tool result, which only a made-up result would hold
    /// (ADR 0027).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<[&'static str; 1]>,
}

fn no_tools(tools: &&serde_json::Value) -> bool {
    tools.as_array().is_some_and(Vec::is_empty)
}

/// One `data:` frame of the stream.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ChatChunk {
    /// Usually one choice; empty in the usage chunk.
    pub choices: Vec<ChunkChoice>,
    /// Token counts (the last chunk, when asked for).
    pub usage: Option<WireUsage>,
    /// Some servers report failures inside the stream, as an object or a
    /// bare message.
    pub error: Option<ErrorField>,
    /// llama.cpp, asked with `return_progress`: how far the prompt has
    /// been read.
    pub prompt_progress: Option<WirePromptProgress>,
    /// llama.cpp's timings, on the reply's last chunk.
    pub timings: Option<WireTimings>,
}

/// llama.cpp's `prompt_progress` frame field.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct WirePromptProgress {
    /// Tokens in the prompt.
    pub total: u64,
    /// Tokens it had cached.
    pub cache: u64,
    /// Tokens ready so far, cached ones included.
    pub processed: u64,
    /// Milliseconds since it began reading.
    pub time_ms: f64,
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
    /// Tool-call fragments, assembled by
    /// [`ToolCallAccumulator`](super::tool_calls::ToolCallAccumulator).
    /// Several servers send `"tool_calls": null` on text chunks; that reads
    /// as empty rather than failing the whole chunk.
    #[serde(deserialize_with = "null_as_empty")]
    pub tool_calls: Vec<WireToolCallDelta>,
}

/// One `delta.tool_calls[]` fragment as sent. Only the first fragment of a
/// call usually carries `id`, `type` and the name; later ones carry `index`
/// and an `arguments` piece. Every field may be missing or `null`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WireToolCallDelta {
    /// Which call of the reply this fragment belongs to (some servers omit it
    /// for a single call, some send 0 for every call).
    pub index: Option<u32>,
    /// The provider's call id, echoed by the tool result.
    pub id: Option<String>,
    /// Always `"function"` when present.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The function name and an arguments piece.
    pub function: Option<WireFunctionDelta>,
}

/// The `function` object of a tool-call fragment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WireFunctionDelta {
    /// The tool's name, usually whole on the call's first fragment.
    pub name: Option<String>,
    /// A piece of the arguments' JSON text, to be concatenated.
    pub arguments: Option<String>,
}

/// Reads `null` (or a missing field, via `#[serde(default)]`) as an empty
/// list.
fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// Usage numbers as sent.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    /// Tokens the request cost: the whole conversation sent.
    pub prompt_tokens: u64,
    /// Tokens the reply cost.
    pub completion_tokens: u64,
    /// What the status bar shows as context used.
    pub total_tokens: u64,
    /// How much of the prompt was read from the provider's cache (OpenAI).
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct PromptTokensDetails {
    /// Prompt tokens the provider read from its cache.
    pub cached_tokens: u64,
}

/// llama.cpp's `timings` of a reply's last chunk.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct WireTimings {
    /// Prompt tokens the server had in its cache.
    pub cache_n: u64,
}

/// An error object, in a body or inside the stream.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WireError {
    /// The provider's message.
    pub message: String,
    /// The error's kind as llama.cpp names it (`exceed_context_size_error`).
    #[serde(rename = "type")]
    pub kind: serde_json::Value,
    /// The error's code: a word for OpenAI (`context_length_exceeded`), a
    /// number for others.
    pub code: serde_json::Value,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn with_image(text: &str, name: &str) -> Message {
        let mut message = Message::new(Role::User, text);
        message.images.push(Image {
            name: name.to_owned(),
            media_type: "image/png".to_owned(),
            data: "iVBORw0K".into(),
        });
        message
    }

    fn sent(conversation: &[Message]) -> serde_json::Value {
        serde_json::to_value(Messages::from(conversation)).unwrap()
    }

    #[test]
    fn a_prompt_with_images_is_sent_as_its_text_then_its_images() {
        let conversation = [
            with_image("what is this?", "a.png"),
            Message::new(Role::User, "a note"),
        ];
        assert_eq!(
            sent(&conversation),
            serde_json::json!([{"role": "user", "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                {"type": "text", "text": "a note"},
            ]}])
        );
        let alone = sent(&conversation[..1]).to_string();
        assert!(
            sent(&conversation)
                .to_string()
                .starts_with(alone.trim_end_matches("]}]")),
            "the earlier request's bytes stay a prefix"
        );
    }

    #[test]
    fn a_request_read_back_has_its_images_and_a_session_message_its_own() {
        let body = sent(&[with_image("look", "a.png")]);
        let read: Vec<Message> = serde_json::from_value(body).unwrap();
        assert_eq!(read[0].content.as_deref(), Some("look"));
        assert_eq!(
            read[0].images[0].data_url(),
            "data:image/png;base64,iVBORw0K"
        );
        assert_eq!(read[0].images[0].name, "", "a request does not carry it");

        let saved = serde_json::to_value(with_image("look", "a.png")).unwrap();
        assert_eq!(saved["content"], "look");
        let again: Message = serde_json::from_value(saved).unwrap();
        assert_eq!(again, with_image("look", "a.png"));
        let old: Message =
            serde_json::from_str(r#"{"role":"user","content":"before images were kept"}"#).unwrap();
        assert!(old.images.is_empty());
        assert!(!serde_json::to_string(&old).unwrap().contains(r#""images""#));
    }
}
