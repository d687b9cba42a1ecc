//! The conversation: OpenAI-shaped messages in order, starting with the
//! system prompt. It keeps the one invariant providers enforce: every tool
//! call in an assistant message is answered by exactly one tool message,
//! in call order, before anything else follows.

use std::collections::HashMap;

use crate::llm::adapters::{OfferedTools, QuotedCalls, Syntax};
use crate::llm::tool_calls::MadeUpIds;
use crate::llm::wire::{
    ChatRequest, FunctionCall, Image, Message, Messages, Role, Sampling, StreamOptions,
    TOOL_CHOICE_NONE, ToolCallMessage,
};
use crate::protocol::CallId;
use crate::tools::ToolResult;

use super::images::{self, IMAGE_COUNTED_BYTES};

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

/// What the start of a compaction summary message says, so the model
/// (and a later compaction) knows it for what it is. ADR 0021.
pub const SUMMARY_PREFIX: &str = "[Summary of the earlier conversation, written by dashfloat to save context; the messages after it are verbatim]\n\n";
/// How the text of a pruned tool result ends. A pruned result is one JSON
/// object, `{"pruned": "…"}`, as every answer is (ADR 0011), and is never
/// pruned again. ADR 0021.
pub const PRUNED_TAIL: &str = "output pruned to save context; call again if needed";
/// How a pruned result's JSON starts.
const PRUNED_OPENING: &str = "{\"pruned\":";
/// Characters of a call's arguments a pruned result's marker repeats, at
/// most: enough to name the file or the command. ADR 0021.
const PRUNED_ARGUMENTS_MAX_CHARS: usize = 120;

/// What a prune did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// Tool results replaced by their marker.
    pub results: usize,
    /// Bytes of content they gave up.
    pub bytes: usize,
}

/// The messages sent with every request.
#[derive(Debug, Clone)]
pub struct Conversation {
    messages: Vec<Message>,
    /// No message before this index changed since
    /// [`Conversation::take_changed_from`] was last called (appending
    /// changes none): a save writes the messages from here on, not the
    /// whole conversation (ADR 0040). Every change to an earlier message
    /// lowers it.
    changed_from: usize,
}

impl Conversation {
    /// A conversation holding only the system prompt.
    pub fn new(system_prompt: &str) -> Self {
        Self {
            messages: vec![Message::new(Role::System, system_prompt)],
            changed_from: 0,
        }
    }

    /// A conversation resumed from a saved session, whose messages the
    /// store has checked ([`crate::session::check_conversation`]); it
    /// opens with `system_prompt` as it reads now (the project's
    /// instructions may have changed since the session was saved).
    pub fn resumed(system_prompt: &str, messages: Vec<Message>) -> Self {
        let mut conversation = Self {
            changed_from: messages.len(),
            messages,
        };
        conversation.set_system_prompt(system_prompt);
        conversation.renew_old_ids();
        conversation
    }

    /// Gives the calls whose ids were made up in the old form
    /// (`call_<episode>_…`, sessions saved before) ids every provider
    /// takes, and their results the same: Mistral refuses the old ones,
    /// and the session would fail on its next request.
    fn renew_old_ids(&mut self) {
        // The latest call of each old id: a result answers the nearest.
        let mut renewed: HashMap<String, String> = HashMap::new();
        let mut count = 0;
        let mut changed_from = self.changed_from;
        for (at, message) in self.messages.iter_mut().enumerate() {
            for call in &mut message.tool_calls {
                if MadeUpIds::is_old_form(&call.id) {
                    let id = MadeUpIds::renewed(count);
                    count += 1;
                    renewed.insert(std::mem::replace(&mut call.id, id.clone()), id);
                    changed_from = changed_from.min(at);
                }
            }
            if let Some(id) = &mut message.tool_call_id
                && let Some(new) = renewed.get(id.as_str())
            {
                id.clone_from(new);
                changed_from = changed_from.min(at);
            }
        }
        self.changed_from = changed_from;
    }

    /// Replaces the system prompt, keeping everything after it.
    pub fn set_system_prompt(&mut self, system_prompt: &str) {
        let message = Message::new(Role::System, system_prompt);
        match self.messages.first_mut() {
            Some(first) if *first == message => return,
            Some(first) if first.role == Role::System => *first = message,
            _ => self.messages.insert(0, message),
        }
        self.changed_from = 0;
    }

    /// The messages, oldest first: what a saved session holds.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The index of the first message that changed since the last call
    /// (the length, when messages were only appended); the next call
    /// counts from now.
    pub fn take_changed_from(&mut self) -> usize {
        std::mem::replace(&mut self.changed_from, self.messages.len())
    }

    /// The calls written in what the model was shown besides the system
    /// prompt, the person's prompts and its own replies: tool results, and
    /// the summaries and notes made of them. A call written as text without
    /// a marker that copies one is the model quoting it (ADR 0027).
    pub fn quoted_calls(&self, offered: &OfferedTools) -> QuotedCalls {
        let mut quoted = QuotedCalls::default();
        let shown = self
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool || (m.role == Role::User && !is_prompt(m)));
        for text in shown.filter_map(|m| m.content.as_deref()) {
            quoted.add(text, offered);
        }
        quoted
    }

    /// Appends the person's words, or a note in their place.
    pub fn push_user(&mut self, text: String) {
        self.push_prompt(text, Vec::new());
    }

    /// Appends the person's prompt with the images it goes with
    /// (ADR 0055).
    pub fn push_prompt(&mut self, text: String, images: Vec<Image>) {
        let mut message = Message::new(Role::User, text);
        message.images = images;
        self.messages.push(message);
    }

    /// The bytes of base64 the conversation's images hold.
    pub fn image_bytes(&self) -> usize {
        self.messages
            .iter()
            .flat_map(|m| &m.images)
            .map(|image| image.data.len())
            .sum()
    }

    /// The size the budget counts for `body_len` bytes of the request
    /// this conversation makes: each image as [`IMAGE_COUNTED_BYTES`],
    /// not as its base64, which is no measure of what the model reads
    /// of it (ADR 0055).
    pub fn counted_len(&self, body_len: usize) -> usize {
        let count = self.messages.iter().map(|m| m.images.len()).sum::<usize>();
        body_len.saturating_sub(self.image_bytes()) + count * IMAGE_COUNTED_BYTES
    }

    /// Takes every image out of the conversation, each replaced by a
    /// note in its message's text that says it was left out: the model
    /// refused images (ADR 0055).
    pub fn leave_out_images(&mut self) {
        for (index, message) in self.messages.iter_mut().enumerate() {
            if message.images.is_empty() {
                continue;
            }
            let text = message.content.get_or_insert_default();
            for image in std::mem::take(&mut message.images) {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&images::refused_note(&image));
            }
            self.changed_from = self.changed_from.min(index);
        }
    }

    /// Appends a reply (whole, or partial after an interrupt or failure:
    /// what the person saw is what the model is told it said) with the
    /// calls it made.
    pub fn push_assistant(&mut self, text: String, calls: Vec<AssistantCall>) {
        self.push_reply(text, calls, Vec::new());
    }

    /// [`Conversation::push_assistant`], with the items the wire requires
    /// be sent back with the reply ([`Message::carried`]).
    pub fn push_reply(
        &mut self,
        text: String,
        calls: Vec<AssistantCall>,
        carried: Vec<serde_json::Value>,
    ) {
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
            carried,
            images: Vec::new(),
        });
    }

    /// Appends the answer to one call: the result as the JSON the model
    /// reads.
    pub fn push_tool_result(&mut self, call_id: CallId, result: &ToolResult) {
        self.messages.push(tool_message(call_id, result));
    }

    /// Where the current (or last) turn starts: the index of the last
    /// prompt, or the end when there is none. Its messages are never
    /// pruned or summarised.
    pub fn turn_start(&self) -> usize {
        self.messages
            .iter()
            .rposition(is_prompt)
            .unwrap_or(self.messages.len())
    }

    /// The conversation as the turn in progress alone would send it: the
    /// system prompt, then the last prompt and what followed it. What
    /// compaction can never take away.
    pub fn this_turn(&self) -> Conversation {
        let start = self.turn_start().max(1);
        Conversation {
            messages: self.messages[..1.min(self.messages.len())]
                .iter()
                .chain(self.messages.get(start..).unwrap_or_default())
                .cloned()
                .collect(),
            changed_from: 0,
        }
    }

    /// The conversation as it stood when the message at `at` joined it:
    /// the messages before it.
    pub fn before(&self, at: usize) -> Conversation {
        Conversation {
            messages: self.messages[..at.min(self.messages.len())].to_vec(),
            changed_from: 0,
        }
    }

    /// Answers the call `id` at `at` with `result` instead, when the tool
    /// message there answers that call and `result` is shorter than what
    /// it holds: a result is only ever cut, never grown. Whether it was
    /// replaced.
    pub fn replace_result(&mut self, at: usize, id: &str, result: &ToolResult) -> bool {
        let Some(message) = self.messages.get_mut(at) else {
            return false;
        };
        if message.role != Role::Tool || message.tool_call_id.as_deref() != Some(id) {
            return false;
        }
        let json = result.to_json();
        if message
            .content
            .as_ref()
            .is_some_and(|c| json.len() >= c.len())
        {
            return false;
        }
        message.content = Some(json);
        self.changed_from = self.changed_from.min(at);
        true
    }

    /// The person's prompts, oldest first, with their indices: what a
    /// rewind can return to.
    pub fn prompts(&self) -> impl Iterator<Item = (usize, &str)> {
        self.messages
            .iter()
            .enumerate()
            .filter(|(_, m)| is_prompt(m))
            .map(|(at, m)| (at, m.content.as_deref().unwrap_or_default()))
    }

    /// Drops the messages from index `at` on (a rewind to the prompt
    /// there); the system prompt stays.
    pub fn truncate(&mut self, at: usize) {
        self.messages.truncate(at.max(1));
        self.changed_from = self.changed_from.min(self.messages.len());
    }

    /// Replaces the content of the oldest tool results before `before`
    /// with a marker that keeps the call's identity, until at least `free`
    /// bytes are given up (or none is left). The pairing of calls and
    /// results never changes; a result pruned once stays as it is.
    pub fn prune(&mut self, before: usize, free: usize) -> Pruned {
        let mut done = Pruned::default();
        for index in 1..before.min(self.messages.len()) {
            if done.bytes >= free {
                break;
            }
            let message = &self.messages[index];
            let Some(content) = &message.content else {
                continue;
            };
            if message.role != Role::Tool || content.starts_with(PRUNED_OPENING) {
                continue;
            }
            let marker = pruned_marker(answered_call(&self.messages, index), content.len());
            if marker.len() >= content.len() {
                continue;
            }
            done.results += 1;
            done.bytes += content.len() - marker.len();
            self.messages[index].content = Some(marker);
            self.changed_from = self.changed_from.min(index);
        }
        done
    }

    /// Where the turns kept verbatim by a summary start: the earliest
    /// prompt from which the rest encodes in `max_bytes`, and never after
    /// the last prompt, so every call in the kept part keeps its answer.
    pub fn tail_start(&self, max_bytes: usize) -> usize {
        let last = self.turn_start();
        let mut size = 0;
        let mut start = last;
        for index in (1..self.messages.len()).rev() {
            size += encoded_len(&self.messages[index]);
            if size > max_bytes {
                break;
            }
            if index < start && self.messages[index].role == Role::User {
                start = index;
            }
        }
        start
    }

    /// Whether the messages between the system prompt and `keep_from`
    /// hold anything a summary would add to (more than an earlier
    /// summary).
    pub fn summarisable(&self, keep_from: usize) -> bool {
        self.messages
            .get(1..keep_from)
            .is_some_and(|head| head.iter().any(|m| !is_summary(m)))
    }

    /// Replaces the messages between the system prompt and `keep_from`
    /// (an earlier summary among them) by one summary message.
    pub fn summarise(&mut self, keep_from: usize, summary: &str) {
        let keep_from = keep_from.clamp(1, self.messages.len());
        let message = Message::new(Role::User, format!("{SUMMARY_PREFIX}{}", summary.trim()));
        self.messages.splice(1..keep_from, [message]);
        self.changed_from = self.changed_from.min(1);
    }

    /// The highest episode of the ids the agent made up
    /// ([`MadeUpIds::episode_of`]: calls that came without one, and files
    /// a prompt named): a resumed
    /// conversation's next made-up ids start past it, so no id names two
    /// calls. 0 when there are none.
    pub fn made_up_ids_past(&self) -> u64 {
        self.messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .filter_map(|c| MadeUpIds::episode_of(&c.id))
            .max()
            .unwrap_or(0)
    }

    /// The JSON body of the next request.
    pub fn request_body(
        &self,
        model: &str,
        offer: ToolOffer<'_>,
        sampling: Sampling,
        answer_now: Option<AnswerNow>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        let stream_options = StreamOptions {
            include_usage: true,
        };
        let answer = answer_now.map(|ask| Message::new(Role::User, ask.prompt()));
        match offer {
            ToolOffer::Api(tools) => serde_json::to_vec(&ChatRequest {
                model,
                messages: Messages {
                    conversation: &self.messages,
                    then: answer.as_ref(),
                },
                stream: true,
                stream_options,
                tools,
                sampling,
                tool_choice: answer_now.map(|_| TOOL_CHOICE_NONE),
            }),
            ToolOffer::Prompt(syntax, tools) => serde_json::to_vec(&ChatRequest {
                model,
                messages: self.prompted(syntax, tools, answer_now).as_slice().into(),
                stream: true,
                stream_options,
                tools: &serde_json::Value::Array(Vec::new()),
                sampling,
                tool_choice: None,
            }),
        }
    }

    /// The messages with the tools offered in the system prompt, each
    /// call written in `syntax` and each result as a user message in its
    /// result format (sent joined with the user messages beside it, so
    /// roles still alternate), ending with the ask to answer when
    /// `answer_now`. Derived afresh for every request from the canonical
    /// messages, so it is the same bytes each time.
    fn prompted(
        &self,
        syntax: Syntax,
        tools: &serde_json::Value,
        answer_now: Option<AnswerNow>,
    ) -> Vec<Message> {
        let mut out: Vec<Message> = Vec::with_capacity(self.messages.len() + 1);
        for (index, message) in self.messages.iter().enumerate() {
            let text = message.content.as_deref().unwrap_or_default();
            out.push(match message.role {
                Role::System => Message::new(
                    Role::System,
                    format!("{text}{}", syntax.instructions(tools)),
                ),
                Role::Assistant if !message.tool_calls.is_empty() => {
                    let calls = message
                        .tool_calls
                        .iter()
                        .map(|c| syntax.write_call(&c.function.name, &c.function.arguments));
                    let prose = text.trim_end();
                    let parts: Vec<String> = (!prose.is_empty())
                        .then(|| prose.to_owned())
                        .into_iter()
                        .chain(calls)
                        .collect();
                    Message::new(Role::Assistant, parts.join("\n\n"))
                }
                Role::Tool => {
                    let name = answered_call(&self.messages, index)
                        .map_or("the tool", |c| c.name.as_str());
                    Message::new(Role::User, syntax.write_result(name, text))
                }
                Role::User | Role::Assistant => message.clone(),
            });
        }
        if let Some(ask) = answer_now {
            out.push(Message::new(Role::User, ask.prompt()));
        }
        out
    }
}

/// What the last message of a request that asks for an answer says: sent
/// with that request only, never kept. A small model asked with
/// `tool_choice: "none"` alone writes its next call as text, or copies the
/// last result, as its answer (ADR 0015).
pub const ANSWER_NOW_PROMPT: &str = "Answer my question now, in words, from the tool results above. \
Do not call a tool and do not write JSON.";

/// What the ask to answer says when every search of the turn found
/// nothing: a small model otherwise answers with a value or a file name
/// no result showed (issue 41).
pub const NOTHING_FOUND_PROMPT: &str = "Answer my question now, in words, from the tool results above. \
Your searches found nothing: if the results above do not show the answer, say that you did not find it \
and where you looked; do not guess a value, a version or a file name. Do not call a tool and do not \
write JSON.";

/// Which ask to answer a request ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerNow {
    /// The plain ask: answer from the results.
    Plain,
    /// Every search of the turn found nothing: say so rather than guess.
    NothingFound,
}

impl AnswerNow {
    /// The user message that asks it.
    pub fn prompt(self) -> &'static str {
        match self {
            AnswerNow::Plain => ANSWER_NOW_PROMPT,
            AnswerNow::NothingFound => NOTHING_FOUND_PROMPT,
        }
    }
}

/// How a note dashfloat adds to the conversation begins (what `/undo`
/// did to the files): a user message that is not the person's prompt.
pub(crate) const NOTE_PREFIX: &str = "[dashfloat] ";

/// Whether `message` is one of the person's prompts: a user message that
/// is neither a summary nor a note of dashfloat's.
pub fn is_prompt(message: &Message) -> bool {
    message.role == Role::User
        && !is_summary(message)
        && !message
            .content
            .as_deref()
            .is_some_and(|text| text.starts_with(NOTE_PREFIX))
}

/// How a request offers the tools.
#[derive(Debug, Clone, Copy)]
pub enum ToolOffer<'a> {
    /// In the API's `tools` field (this catalogue); calls and results
    /// travel as `tool_calls` and `tool` messages.
    Api(&'a serde_json::Value),
    /// In the system prompt, calls and results written in this syntax:
    /// for a server that refuses the API's way (ADR 0031).
    Prompt(Syntax, &'a serde_json::Value),
}

/// The call the tool message at `at` answers: its name and arguments,
/// from the nearest assistant message before it that made a call of that
/// id (a provider may give the same id in several replies).
pub fn answered_call(messages: &[Message], at: usize) -> Option<&FunctionCall> {
    let id = messages.get(at)?.tool_call_id.as_deref()?;
    messages[..at]
        .iter()
        .rev()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.id == id)
        .map(|c| &c.function)
}

/// Whether a message is a compaction summary.
pub fn is_summary(message: &Message) -> bool {
    message.role == Role::User
        && message
            .content
            .as_deref()
            .is_some_and(|c| c.starts_with(SUMMARY_PREFIX))
}

/// A message's size as it is sent, its images as the budget counts them
/// ([`Conversation::counted_len`]).
pub fn encoded_len(message: &Message) -> usize {
    let encoded = serde_json::to_vec(message).map_or(0, |v| v.len());
    let images: usize = message.images.iter().map(|image| image.data.len()).sum();
    encoded.saturating_sub(images) + message.images.len() * IMAGE_COUNTED_BYTES
}

/// What a pruned result says instead of its content:
/// `{"pruned":"read_file {\"path\":\"src/x.rs\"}: 14 KB output pruned to save context; call again if needed"}`.
fn pruned_marker(call: Option<&FunctionCall>, bytes: usize) -> String {
    let identity = match call {
        Some(call) => {
            let arguments: String = call
                .arguments
                .chars()
                .take(PRUNED_ARGUMENTS_MAX_CHARS)
                .collect();
            format!("{} {arguments}", call.name)
        }
        None => "a tool call".to_string(),
    };
    let size = if bytes >= 1024 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    };
    serde_json::json!({ "pruned": format!("{identity}: {size} {PRUNED_TAIL}") }).to_string()
}

/// The tool message answering call `call_id` with `result`.
pub fn tool_message(call_id: CallId, result: &ToolResult) -> Message {
    Message {
        role: Role::Tool,
        content: Some(result.to_json()),
        tool_calls: Vec::new(),
        tool_call_id: Some(call_id),
        carried: Vec::new(),
        images: Vec::new(),
    }
}

/// The system prompt. It names no directory: small models shown an
/// absolute path build absolute paths from its parent (`/tmp/x` for a
/// project in `/tmp/proj`), and shown the directory's name they prefix it
/// (`./proj/x`) — both refused by the path policy, both seen with
/// Qwen2.5-Coder-0.5B.
pub fn system_prompt() -> String {
    "You are a coding assistant working in the person's project, the current directory. You cannot see its \
files until you use a tool.\n\
1. To answer a question about the project, look first: read_file reads a file, list_directory lists a folder, \
grep finds where a name is defined or used, glob finds files by name.\n\
2. As soon as a tool result holds the answer, stop calling tools and answer in a sentence or two, quoting the \
exact value.\n\
3. Change files only when asked to: edit_file for a small change (copy search_block exactly from the file), \
write_file to create a file. The person approves each change and may reject it.\n\
4. Never repeat a call with the same arguments: the result would be the same.\n\
5. If a tool fails, its error says what to do next.\n\
Give every path relative to the project, spelled exactly as the person names the file; `.` is the project \
itself. Answer in GitHub-flavoured markdown, code in fenced blocks tagged with their language."
        .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::tools::{ToolFailure, ToolResult};

    fn call(id: &str, arguments: &str) -> AssistantCall {
        AssistantCall {
            id: id.to_string(),
            name: "read_file".to_string(),
            arguments: arguments.to_string(),
        }
    }

    fn result(size: usize) -> ToolResult {
        ToolFailure::ExecutionFailed {
            tool: "read_file".to_string(),
            message: "x".repeat(size),
        }
        .into()
    }

    /// Only what the model was shown from outside counts as quotable: the
    /// person's prompt and the model's own call do not (ADR 0027).
    #[test]
    fn quoted_calls_come_from_tool_results_only() {
        let offered =
            OfferedTools::from_definitions(&crate::tools::Registry::builtin().definitions());
        let block = |path: &str| {
            format!(
                "```json\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{path}\"}}}}\n```"
            )
        };
        let mut c = Conversation::new(&block("system"));
        c.push_user(block("prompt"));
        c.push_assistant(block("reply"), vec![call("c0", r#"{"path":"own"}"#)]);
        let readme = ToolFailure::ExecutionFailed {
            tool: "read_file".to_string(),
            message: block("readme"),
        };
        c.push_tool_result("c0".to_string(), &readme.into());
        let quoted = c.quoted_calls(&offered);
        assert!(quoted.contains("read_file", r#"{"path":"readme"}"#));
        for path in ["system", "prompt", "reply", "own"] {
            let arguments = format!("{{\"path\":\"{path}\"}}");
            assert!(!quoted.contains("read_file", &arguments), "{path}");
        }
    }

    /// A conversation with one prompt holding `count` images of
    /// `bytes` base64 each.
    fn with_images(count: usize, bytes: usize) -> Conversation {
        let mut c = Conversation::new("sys");
        let image = Image {
            name: "shot.png".to_owned(),
            media_type: "image/png".to_owned(),
            data: "A".repeat(bytes).into(),
        };
        c.push_prompt("look".to_owned(), vec![image; count]);
        c
    }

    #[test]
    fn an_image_counts_the_same_whatever_its_bytes() {
        let sizes: Vec<usize> = [1_000, 1_000_000]
            .into_iter()
            .map(|bytes| {
                let c = with_images(2, bytes);
                let body = c
                    .request_body(
                        "m",
                        ToolOffer::Api(&serde_json::json!([])),
                        Sampling::default(),
                        None,
                    )
                    .unwrap();
                c.counted_len(body.len())
            })
            .collect();
        assert_eq!(sizes[0], sizes[1]);
        let words = Conversation::new("sys").request_body(
            "m",
            ToolOffer::Api(&serde_json::json!([])),
            Sampling::default(),
            None,
        );
        assert!(sizes[0] > words.unwrap().len() + 2 * IMAGE_COUNTED_BYTES);
        let c = with_images(2, 1_000_000);
        assert_eq!(
            encoded_len(&c.messages()[1]),
            encoded_len(&with_images(2, 8).messages()[1])
        );
    }

    #[test]
    fn images_left_out_become_notes_in_their_message() {
        let mut c = with_images(2, 8);
        c.take_changed_from();
        c.leave_out_images();
        assert_eq!(c.image_bytes(), 0);
        assert_eq!(
            c.messages()[1].content.as_deref(),
            Some(
                "look\n\n[image shot.png left out: the model does not take images]\n\n\
                 [image shot.png left out: the model does not take images]"
            )
        );
        assert_eq!(c.take_changed_from(), 1, "saved again from there");
    }

    /// Three turns, each one call with a result of `size` bytes or more.
    fn three_turns(size: usize) -> Conversation {
        let mut c = Conversation::new("system");
        for n in 0..3 {
            c.push_user(format!("prompt {n}"));
            c.push_assistant(
                String::new(),
                vec![call(&format!("c{n}"), r#"{"path":"a"}"#)],
            );
            c.push_tool_result(format!("c{n}"), &result(size));
            c.push_assistant(format!("reply {n}"), Vec::new());
        }
        c
    }

    #[test]
    fn prune_goes_oldest_first_stops_when_enough_is_freed_and_never_twice() {
        let mut c = three_turns(4_000);
        let turn = c.turn_start();
        assert_eq!(turn, 9);
        let done = c.prune(turn, 1);
        assert_eq!(done.results, 1);
        assert!(done.bytes > 3_900);
        assert!(
            c.messages()[3]
                .content
                .as_deref()
                .is_some_and(|t| t.starts_with(PRUNED_OPENING))
        );
        assert!(
            c.messages()[7]
                .content
                .as_deref()
                .is_some_and(|t| t.starts_with("{\"ok\":false"))
        );
        let again = c.prune(turn, usize::MAX);
        assert_eq!(again.results, 1, "only the second turn's is left");
        assert!(
            c.messages()[11]
                .content
                .as_deref()
                .is_some_and(|t| t.starts_with("{\"ok\":false")),
            "the current turn's stays"
        );
        assert_eq!(c.prune(turn, usize::MAX), Pruned::default());
    }

    #[test]
    fn a_result_replaced_is_only_ever_shorter_and_of_its_own_call() {
        let mut c = three_turns(4_000);
        c.take_changed_from();
        let at = 11;
        assert_eq!(c.before(at).messages(), &c.messages()[..at]);
        let was = c.messages()[at].content.clone();
        assert!(!c.replace_result(at, "c2", &result(5_000)), "longer");
        assert!(!c.replace_result(at, "c1", &result(10)), "another call's");
        assert!(!c.replace_result(at + 1, "c2", &result(10)), "no result");
        assert_eq!(c.messages()[at].content, was);
        assert_eq!(c.take_changed_from(), c.messages().len(), "unchanged");
        assert!(c.replace_result(at, "c2", &result(10)));
        assert_eq!(c.messages()[at].content, Some(result(10).to_json()));
        assert_eq!(c.take_changed_from(), at, "saved again from there");
    }

    #[test]
    fn the_marker_repeats_at_most_the_bound_of_the_arguments() {
        let mut c = Conversation::new("system");
        c.push_user("go".to_string());
        let arguments = format!(r#"{{"path":"{}"}}"#, "p".repeat(300));
        c.push_assistant(String::new(), vec![call("c0", &arguments)]);
        c.push_tool_result("c0".to_string(), &result(4_000));
        c.push_user("next".to_string());
        c.prune(c.turn_start(), usize::MAX);
        let marker: serde_json::Value =
            serde_json::from_str(c.messages()[3].content.as_deref().unwrap_or_default())
                .unwrap_or_default();
        let expected: String = arguments.chars().take(PRUNED_ARGUMENTS_MAX_CHARS).collect();
        assert_eq!(
            marker["pruned"],
            format!("read_file {expected}: 3 KB {PRUNED_TAIL}")
        );
    }

    /// The roles and texts of the messages a request sends.
    fn sent(c: &Conversation, offer: ToolOffer<'_>, answer_now: bool) -> Vec<(String, String)> {
        let body = c
            .request_body(
                "m",
                offer,
                Sampling::default(),
                answer_now.then_some(AnswerNow::Plain),
            )
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let role = m["role"].as_str().unwrap_or_default().to_string();
                (role, m["content"].as_str().unwrap_or_default().to_string())
            })
            .collect()
    }

    fn roles(sent: &[(String, String)]) -> Vec<&str> {
        sent.iter().map(|(role, _)| role.as_str()).collect()
    }

    #[test]
    fn prompted_results_are_one_user_message_that_carries_the_ask_to_answer() {
        let mut c = Conversation::new("system");
        c.push_user("read a".to_string());
        c.push_assistant(String::new(), vec![call("c0", r#"{"path":"a"}"#)]);
        c.push_tool_result("c0".to_string(), &result(1));
        let tools = serde_json::json!([]);
        let offer = ToolOffer::Prompt(Syntax::Hermes, &tools);
        let plain = sent(&c, offer, false);
        assert_eq!(roles(&plain), ["system", "user", "assistant", "user"]);
        let asked = sent(&c, offer, true);
        assert_eq!(roles(&asked), roles(&plain));
        let last = &asked[3].1;
        assert!(last.starts_with("<tool_response>\n{\"ok\":false"), "{last}");
        assert!(
            last.ends_with(&format!("</tool_response>\n\n{ANSWER_NOW_PROMPT}")),
            "{last}"
        );
        assert_eq!(
            asked[2].1,
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"a\"}}\n</tool_call>"
        );
    }

    #[test]
    fn prompted_words_after_results_join_their_user_message() {
        let mut c = Conversation::new("system");
        c.push_user("read a".to_string());
        c.push_assistant(String::new(), vec![call("c0", r#"{"path":"a"}"#)]);
        c.push_tool_result("c0".to_string(), &result(1));
        c.push_user("read b instead".to_string());
        let tools = serde_json::json!([]);
        let sent = sent(&c, ToolOffer::Prompt(Syntax::Hermes, &tools), true);
        assert_eq!(roles(&sent), ["system", "user", "assistant", "user"]);
        let last = &sent[3].1;
        assert!(
            last.ends_with(&format!(
                "</tool_response>\n\nread b instead\n\n{ANSWER_NOW_PROMPT}"
            )),
            "{last}"
        );
    }

    #[test]
    fn user_messages_in_a_row_are_sent_as_one_either_way() {
        // A summary before the kept prompt, and a prompt whose reply was
        // lost before its first token, leave user messages in a row.
        let mut c = Conversation::new("system");
        c.push_user("first".to_string());
        c.push_user("second".to_string());
        c.push_assistant("ok".to_string(), Vec::new());
        c.push_user("third".to_string());
        c.summarise(2, "what happened");
        c.push_user("fourth".to_string());
        let tools = serde_json::json!([]);
        for offer in [
            ToolOffer::Api(&tools),
            ToolOffer::Prompt(Syntax::Hermes, &tools),
        ] {
            let sent = sent(&c, offer, false);
            assert_eq!(roles(&sent), ["system", "user", "assistant", "user"]);
            assert!(sent[1].1.ends_with("what happened\n\nsecond"), "{sent:?}");
            assert_eq!(sent[3].1, "third\n\nfourth");
        }
        assert_eq!(
            c.messages().len(),
            6,
            "the conversation itself is kept as it was"
        );
    }

    #[test]
    fn a_result_is_of_the_nearest_call_of_its_id_when_a_provider_reuses_ids() {
        let mut c = Conversation::new("system");
        c.push_user("go".to_string());
        c.push_assistant(String::new(), vec![call("0", r#"{"path":"a"}"#)]);
        c.push_tool_result("0".to_string(), &result(1));
        let listing = AssistantCall {
            name: "list_directory".to_string(),
            ..call("0", r#"{"path":"src"}"#)
        };
        c.push_assistant(String::new(), vec![listing]);
        c.push_tool_result("0".to_string(), &result(4_000));
        c.push_user("next".to_string());
        let named = |at: usize| answered_call(c.messages(), at).map(|f| f.name.clone());
        assert_eq!(named(3).as_deref(), Some("read_file"));
        assert_eq!(named(5).as_deref(), Some("list_directory"));
        assert_eq!(named(6), None, "not a tool message");
        c.prune(c.turn_start(), usize::MAX);
        let marker = c.messages()[5].content.clone().unwrap_or_default();
        assert!(
            marker.contains("list_directory {\\\"path\\\":\\\"src\\\"}"),
            "{marker}"
        );
    }

    #[test]
    fn the_kept_tail_starts_at_a_prompt_and_at_least_at_the_last() {
        let c = three_turns(1_000);
        let turn_size: usize = c.messages()[5..9].iter().map(encoded_len).sum();
        assert_eq!(c.tail_start(0), 9, "at least the last prompt");
        assert_eq!(c.tail_start(2 * turn_size), 5);
        assert_eq!(c.tail_start(2 * turn_size - 1), 9);
        assert_eq!(c.tail_start(usize::MAX), 1);
    }

    #[test]
    fn a_summary_replaces_the_head_and_is_not_summarised_alone() {
        let mut c = three_turns(10);
        assert!(c.summarisable(5));
        c.summarise(9, "what happened");
        let roles: Vec<Role> = c.messages().iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert!(is_summary(&c.messages()[1]));
        assert_eq!(c.turn_start(), 2, "a summary is not a prompt");
        assert!(!c.summarisable(2), "an earlier summary alone");
        assert!(!c.summarisable(1));
    }
}
