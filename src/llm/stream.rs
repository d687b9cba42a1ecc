//! The stream task: one model episode. It sends one chat-completions
//! request and turns the SSE reply into [`StreamEvent`]s on its channel.
//! Everything it holds is bounded; it ends with `Done` or `Failed`, or
//! silently when the agent drops the receiver (a cancel).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, StreamExt};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use tokio::sync::mpsc;

use crate::protocol::{PromptProgress, StreamEvent, TransportError, Usage};
use crate::secret::{Secret, redact_userinfo};

use super::adapters::{OfferedTools, QuotedCalls, TextCalls, TextPiece, ToolSyntax};
use super::classify::{self, RequestContext};
use super::guarded::{GuardError, GuardedBytes, ReplyBudget};
use super::tool_calls::MadeUpIds;
use super::tool_calls::{AccumulatorError, AssembledCall, ToolCallAccumulator, call_key};
use super::wire::{ChatChunk, WireFunctionDelta, WireToolCallDelta};
use super::wires::{ANTHROPIC_VERSION, Frame, Reader, Wire};

/// The header Anthropic's wire sends the key in.
const ANTHROPIC_KEY_HEADER: &str = "x-api-key";
/// The header naming Anthropic's API version.
const ANTHROPIC_VERSION_HEADER: &str = "anthropic-version";

/// ADR 0007's episode cap: reply and reasoning text, tool calls and the
/// stream's lines that carry no data (comments) together may not exceed
/// this, so a trickling endpoint cannot grow memory without bound, nor
/// send comments without end.
pub const REPLY_MAX_BYTES: usize = 4 * 1024 * 1024;
/// The largest single SSE frame accepted. Real chunks are well under a
/// kilobyte; a megabyte leaves room for a whole tool call in one frame.
pub const FRAME_MAX_BYTES: usize = 1024 * 1024;
/// Retries of a 429/503 before any token arrived.
pub(crate) const RETRY_MAX: u32 = 2;
/// Arguments a call being written grows by between two reports of its
/// size past its first KiB: a long write is seen growing without an event
/// per token.
pub const TOOL_CALL_PROGRESS_BYTES: usize = 1024;
/// The same within a call's first KiB: a small call on a slow model is
/// seen growing too, where a KiB would take it a minute.
pub const TOOL_CALL_EARLY_PROGRESS_BYTES: usize = 64;

/// How many times one reply may write the same call (the same tool with
/// the same arguments) before it is taken to be looping: the reply is
/// stopped as that copy is complete, and each call in it runs once. A
/// small model that starts repeating itself in one reply writes the same
/// calls until its output limit, which on a CPU costs a minute of writing
/// and then a minute of reading them back (ADR 0015).
pub const REPLY_CALL_COPIES_MAX: u32 = 3;

/// The stream index given to the first call read from text (ADR 0027);
/// the n-th is at this plus n. Far above any index a server uses, so text
/// calls and native ones never share an accumulator slot.
const TEXT_CALL_INDEX_BASE: u32 = 1 << 31;
/// A Retry-After longer than this is not waited for: the error is shown.
pub(crate) const RETRY_WAIT_MAX: Duration = Duration::from_secs(30);
/// The first wait when the provider names none; doubled per retry.
const RETRY_WAIT_FIRST: Duration = Duration::from_secs(1);

/// How many progress reports a call's arguments of `bytes` have earned:
/// one per [`TOOL_CALL_EARLY_PROGRESS_BYTES`] up to the first KiB, one per
/// [`TOOL_CALL_PROGRESS_BYTES`] after it (a 4 MiB call: about 4,100).
pub fn progress_step(bytes: usize) -> usize {
    if bytes < TOOL_CALL_PROGRESS_BYTES {
        bytes / TOOL_CALL_EARLY_PROGRESS_BYTES
    } else {
        TOOL_CALL_PROGRESS_BYTES / TOOL_CALL_EARLY_PROGRESS_BYTES + bytes / TOOL_CALL_PROGRESS_BYTES
            - 1
    }
}

/// Where and how to send requests. Cheap to clone (the client is shared).
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The HTTP client (connection pool, TLS roots).
    pub client: reqwest::Client,
    /// Names for error messages, and the request timeout.
    pub context: RequestContext,
    /// The bearer token, if any.
    pub api_key: Option<Secret>,
    /// Extra headers; their values may be credentials.
    pub headers: Vec<(String, Secret)>,
    /// How long a stream may send no data (ADR 0007).
    pub idle_timeout: Duration,
}

/// Why no [`Endpoint`] could be set up; the agent shows it on each prompt.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The HTTP client could not be built (TLS roots, resolver...).
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

impl Endpoint {
    fn url(&self) -> String {
        self.context.wire.url(&self.context.base_url)
    }

    /// The request the wire sends for the agent's chat body.
    fn wire_body<'a>(&self, chat_body: &'a [u8]) -> Result<Cow<'a, [u8]>, TransportError> {
        let wire = self.context.wire;
        wire.request(chat_body)
            .map_err(|e| TransportError::BadRequest {
                message: format!(
                    "the request could not be put in the {} wire's form: {e}",
                    wire.name()
                ),
            })
    }

    /// Adds the key and the extra headers to a request to this provider:
    /// every request to it carries the same credentials, and only those
    /// (Anthropic's wire: `x-api-key` and its API version). A key header
    /// of the person's own replaces the key's: a second one would hand the
    /// key to a provider it is not for.
    pub(super) fn authorised(
        &self,
        mut request: reqwest::RequestBuilder,
    ) -> reqwest::RequestBuilder {
        let key_header = match self.context.wire {
            Wire::Anthropic => {
                request = request.header(ANTHROPIC_VERSION_HEADER, ANTHROPIC_VERSION);
                ANTHROPIC_KEY_HEADER
            }
            Wire::Chat | Wire::Responses => AUTHORIZATION.as_str(),
        };
        let own_key = self
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(key_header));
        if let Some(key) = self.api_key.as_ref().filter(|_| !own_key) {
            request = match self.context.wire {
                Wire::Anthropic => request.header(ANTHROPIC_KEY_HEADER, key.expose()),
                Wire::Chat | Wire::Responses => request.bearer_auth(key.expose()),
            };
        }
        for (name, value) in &self.headers {
            request = request.header(name, value.expose());
        }
        request
    }
}

/// What the stream task knows of the episode besides its request: how to
/// name calls that come without an id, and how to read calls written as
/// text.
#[derive(Debug, Clone)]
pub struct EpisodeSetup {
    /// The ids made up for calls that arrive without one.
    pub ids: MadeUpIds,
    /// How tool calls written in the content are read (ADR 0027).
    pub tool_syntax: ToolSyntax,
    /// The tools the request offers: a text call must name one of them.
    pub tools: Arc<OfferedTools>,
    /// The calls in what the model was shown: a text call without a marker
    /// that copies one is a quote (ADR 0027).
    pub quoted: Arc<QuotedCalls>,
}

impl EpisodeSetup {
    /// An episode whose content is never read for calls: a request that
    /// offers no tools (a summary), or native calls only.
    pub fn native(ids: MadeUpIds) -> Self {
        Self {
            ids,
            tool_syntax: ToolSyntax::Native,
            tools: Arc::default(),
            quoted: Arc::default(),
        }
    }
}

/// Runs one episode: POSTs `body` (a serialised chat request) and reports on
/// `tx` until the stream ends.
pub async fn run(
    endpoint: Endpoint,
    body: Vec<u8>,
    setup: EpisodeSetup,
    tx: mpsc::Sender<StreamEvent>,
) {
    let body = match endpoint.wire_body(&body) {
        Ok(body) => body.into_owned(),
        Err(e) => {
            let _ = tx.send(StreamEvent::Failed(e)).await;
            return;
        }
    };
    let mut attempt = 0;
    let response = loop {
        match send(&endpoint, body.clone()).await {
            Ok(response) => break response,
            Err(err) => {
                let wait = classify::retry_delay(&err).map(|named| {
                    named.unwrap_or(RETRY_WAIT_FIRST.saturating_mul(2u32.saturating_pow(attempt)))
                });
                match wait {
                    Some(wait) if attempt < RETRY_MAX && wait <= RETRY_WAIT_MAX => {
                        attempt += 1;
                        let notice = StreamEvent::Retrying {
                            attempt,
                            wait,
                            reason: err,
                        };
                        if tx.send(notice).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(wait).await;
                    }
                    _ => {
                        let _ = tx.send(StreamEvent::Failed(err)).await;
                        return;
                    }
                }
            }
        }
    };
    let end = read(response, &endpoint, setup, &tx).await;
    if let Some(end) = end {
        let _ = tx.send(end).await;
    }
}

/// POSTs `body`, already in the wire's form (translated once for all
/// the retries of a request); the response once its headers say it
/// streams.
async fn send(endpoint: &Endpoint, body: Vec<u8>) -> Result<reqwest::Response, TransportError> {
    let ctx = &endpoint.context;
    let request = endpoint.authorised(
        endpoint
            .client
            .post(endpoint.url())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body),
    );
    // A server may answer only with its first token (llama-server does,
    // reading the prompt first): until then it is as silent as a stream
    // between tokens may be.
    let answer_within = ctx.request_timeout.max(endpoint.idle_timeout);
    let response = match tokio::time::timeout(answer_within, request.send()).await {
        Err(_) => {
            return Err(TransportError::ConnectTimeout {
                url: ctx.shown_url(),
                after: answer_within,
            });
        }
        Ok(Err(e)) => return Err(classify::connect_error(&e, ctx)),
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    if status.is_redirection()
        && let Some(location) = response.headers().get(LOCATION)
    {
        // Only a redirect to another origin reaches here (see build_client).
        return Err(TransportError::Redirect {
            url: redact_userinfo(response.url().as_str()).into_owned(),
            location: redact_userinfo(&String::from_utf8_lossy(location.as_bytes())).into_owned(),
        });
    }
    if !status.is_success() {
        let retry_after = classify::parse_retry_after(
            response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
        );
        let body = read_bounded(
            response,
            ctx.request_timeout,
            classify::ERROR_BODY_MAX_BYTES,
        )
        .await;
        return Err(classify::status_error(
            status.as_u16(),
            retry_after,
            &body,
            ctx,
        ));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type")
        .to_string();
    if !content_type.contains("text/event-stream") {
        let body = read_bounded(
            response,
            ctx.request_timeout,
            classify::ERROR_BODY_MAX_BYTES,
        )
        .await;
        return Err(TransportError::NotEventStream {
            content_type,
            excerpt: classify::body_message(&body),
        });
    }
    Ok(response)
}

/// The most of a warm-up's reply that is read (it asks for one token):
/// past it the server is writing, so it has read the prompt.
const WARM_REPLY_MAX_BYTES: usize = 64 * 1024;

/// Sends `body`, a request for at most one token, and reads its short
/// reply to its end: the server reads the whole prompt first, so its prompt
/// cache then holds it, and the next real request pays only for what it
/// adds. Dropping the future closes the connection, which stops the server
/// reading. ADR 0032.
///
/// Each piece of the reply must come within the idle timeout, as for a
/// real reply (llama.cpp's progress frames, one per batch read, count). A
/// reply that stops coming or breaks off is an error: the server did not
/// read the whole prompt, and its slot is not worth saving (ADR 0034).
pub async fn warm(endpoint: &Endpoint, body: &[u8]) -> Result<(), TransportError> {
    let body = endpoint.wire_body(body)?.into_owned();
    let response = send(endpoint, body).await?;
    let mut chunks = response.bytes_stream();
    let mut read = 0;
    while read < WARM_REPLY_MAX_BYTES {
        match tokio::time::timeout(endpoint.idle_timeout, chunks.next()).await {
            Err(_) => {
                return Err(TransportError::IdleTimeout {
                    after: endpoint.idle_timeout,
                });
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(TransportError::ReadFailed {
                    detail: e.without_url().to_string(),
                });
            }
            Ok(Some(Ok(chunk))) => read += chunk.len(),
        }
    }
    Ok(())
}

/// Reads at most `max` bytes of a body within `limit`, giving up quietly
/// then: what arrived by then (an error body's status already says what
/// happened; a warm-up's reply is only drained).
pub(super) async fn read_bounded(
    response: reqwest::Response,
    limit: Duration,
    max: usize,
) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    let collect = async {
        while let Some(Ok(chunk)) = chunks.next().await {
            let room = max - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= max {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(limit, collect).await;
    body
}

/// Events taken from the parser without waiting before they are sent on:
/// what one network read delivered is merged into few messages (adjacent
/// text pieces become one), which is what keeps a fast stream from costing
/// a cross-thread wake-up per token. Bounded so a flood still yields.
const BATCH_MAX_EVENTS: usize = 1024;

/// Reads the event stream; returns the final event to send, or `None` when
/// the agent stopped listening.
async fn read(
    response: reqwest::Response,
    endpoint: &Endpoint,
    setup: EpisodeSetup,
    tx: &mpsc::Sender<StreamEvent>,
) -> Option<StreamEvent> {
    let budget = ReplyBudget::new(REPLY_MAX_BYTES);
    let bytes = GuardedBytes::new(
        Box::pin(response.bytes_stream()),
        endpoint.idle_timeout,
        FRAME_MAX_BYTES,
        budget.clone(),
    );
    let mut events = bytes
        .map(|lines| lines.map(error_field_as_data))
        .eventsource();
    let mut episode = EpisodeReader::new(setup, budget);
    let mut wire = endpoint.context.wire.reader();
    let mut frames = Vec::new();
    let mut out = Vec::new();
    while let Some(first) = events.next().await {
        let mut next = Some(first);
        let mut taken = 0;
        let mut end = None;
        while let Some(event) = next {
            end = match (event, wire.as_mut()) {
                (Ok(event), None) => episode.on_event(&event.data, &mut out),
                (Ok(event), Some(wire)) => {
                    episode.on_frames(wire, &event.data, &mut frames, &mut out)
                }
                (Err(e), _) => Some(StreamEvent::Failed(stream_error(e))),
            };
            taken += 1;
            if end.is_some() || taken >= BATCH_MAX_EVENTS {
                break;
            }
            next = events.next().now_or_never().flatten();
        }
        for ev in out.drain(..) {
            tx.send(ev).await.ok()?;
        }
        if end.is_some() {
            return end;
        }
    }
    // Some servers close without `[DONE]` after a finish_reason; that reply
    // is whole. Without a finish_reason the stream was cut.
    let end = episode.finish_text(&mut out);
    for ev in out.drain(..) {
        tx.send(ev).await.ok()?;
    }
    Some(match end {
        Some(end) => end,
        None if episode.finished => done(episode.calls.finish()),
        None => StreamEvent::Failed(TransportError::CutShort),
    })
}

/// What one episode's stream has said so far.
struct EpisodeReader {
    calls: ToolCallAccumulator,
    /// Reads calls written as text; dropped once native calls arrive.
    text: Option<TextCalls>,
    /// Calls read from text so far.
    text_calls: u32,
    /// The held text call last reported ([`TextCalls::held_call`]): its
    /// place in the run and the progress step of its arguments.
    held: Option<(usize, usize)>,
    announced: usize,
    /// Per announced call, the progress steps of its arguments reported.
    progress: Vec<usize>,
    /// [`REPLY_MAX_BYTES`], spent by text, reasoning and tool-call bytes
    /// here and by the lines without data in the guard.
    budget: ReplyBudget,
    finished: bool,
    copies: Copies,
}

/// The loop stop's count of one reply's calls ([`REPLY_CALL_COPIES_MAX`]).
#[derive(Default)]
struct Copies {
    /// How often each complete call ([`call_key`]) was written so far.
    written: HashMap<String, u32>,
    /// Ids of the calls already looked at.
    judged: HashSet<String>,
    /// Ids of the complete calls that copy no earlier one.
    firsts: Vec<String>,
}

impl Copies {
    /// Looks at every call but the last, which may still be growing, once:
    /// a call is counted if its arguments are then a whole JSON object (a
    /// server that interleaves its calls' fragments leaves them
    /// unfinished, and they are not counted). The name of the call just
    /// written for the [`REPLY_CALL_COPIES_MAX`]th time, if one was. A
    /// call's arguments parsed here are kept by the accumulator for the
    /// end of the reply, not parsed again.
    fn judge(&mut self, calls: &mut ToolCallAccumulator) -> Option<String> {
        let announced = calls.announced();
        let fresh: Vec<String> = announced
            .iter()
            .take(announced.len().saturating_sub(1))
            .filter(|call| !self.judged.contains(call.id))
            .map(|call| call.id.to_owned())
            .collect();
        for id in fresh {
            self.judged.insert(id.clone());
            let Some((name, arguments)) = calls.whole_arguments(&id) else {
                continue;
            };
            let times = self.written.entry(call_key(name, arguments)).or_default();
            *times += 1;
            if *times == 1 {
                self.firsts.push(id);
            }
            if *times == REPLY_CALL_COPIES_MAX {
                return Some(name.to_owned());
            }
        }
        None
    }
}

impl EpisodeReader {
    fn new(setup: EpisodeSetup, budget: ReplyBudget) -> Self {
        Self {
            calls: ToolCallAccumulator::with_ids(setup.ids),
            text: TextCalls::new(setup.tool_syntax, setup.tools, setup.quoted),
            text_calls: 0,
            held: None,
            announced: 0,
            progress: Vec::new(),
            budget,
            finished: false,
            copies: Copies::default(),
        }
    }

    /// Counts `n` more bytes of the reply; the failure once they pass the
    /// cap (what crossed it is not passed on).
    fn count(&self, n: usize) -> Option<StreamEvent> {
        self.budget
            .spend(n)
            .err()
            .map(|e| StreamEvent::Failed(guard_failure(e)))
    }

    /// Reports the calls whose names arrived since the last report, and
    /// every call whose arguments grew by another progress step. Returns
    /// the end of the reply when a call was just written for the
    /// [`REPLY_CALL_COPIES_MAX`]th time.
    fn report_calls(&mut self, out: &mut Vec<StreamEvent>) -> Option<StreamEvent> {
        let announced = self.calls.announced();
        for call in announced.iter().skip(self.announced) {
            out.push(StreamEvent::ToolCallStarted {
                id: call.id.to_string(),
                name: call.name.to_string(),
            });
        }
        self.announced = announced.len();
        self.progress.resize(self.announced, 0);
        for (call, reported) in announced.iter().zip(&mut self.progress) {
            let step = progress_step(call.arguments.len());
            if step > *reported {
                *reported = step;
                out.push(StreamEvent::ToolCallProgress {
                    id: call.id.to_string(),
                    bytes: call.arguments.len(),
                });
            }
        }
        let name = self.copies.judge(&mut self.calls)?;
        out.push(StreamEvent::Looping {
            name,
            times: REPLY_CALL_COPIES_MAX,
        });
        let firsts = std::mem::take(&mut self.copies.firsts);
        let calls = std::mem::take(&mut self.calls)
            .finish()
            .into_iter()
            .filter(|call| firsts.contains(&call.id))
            .collect();
        Some(done(calls))
    }

    /// Passes on what the text reader made of the content: prose as
    /// content, calls as fragments into the same accumulator native calls
    /// go to. Their bytes were charged as content already. Returns the
    /// failure when a call is one too many.
    fn take_pieces(
        &mut self,
        pieces: Vec<TextPiece>,
        out: &mut Vec<StreamEvent>,
    ) -> Option<StreamEvent> {
        for piece in pieces {
            let (name, arguments) = match piece {
                TextPiece::Prose(text) => {
                    push_text(out, text, StreamEvent::Content);
                    continue;
                }
                TextPiece::CallStarted(name) => {
                    self.text_calls += 1;
                    (Some(name), None)
                }
                TextPiece::Arguments(text) => (None, Some(text)),
            };
            let fragment = WireToolCallDelta {
                index: Some(TEXT_CALL_INDEX_BASE + self.text_calls.saturating_sub(1)),
                id: None,
                kind: name.as_ref().map(|_| "function".to_string()),
                function: Some(WireFunctionDelta { name, arguments }),
            };
            if let Err(AccumulatorError::TooManyCalls { limit }) = self.calls.feed(&[fragment]) {
                return Some(StreamEvent::Failed(TransportError::TooManyToolCalls {
                    limit,
                }));
            }
            if let Some(end) = self.report_calls(out) {
                return Some(end);
            }
        }
        None
    }

    /// Reports the call the text reader holds, when it is a new one or its
    /// arguments grew by another progress step, as announced calls are.
    fn report_held(&mut self, out: &mut Vec<StreamEvent>) {
        let Some(call) = self.text.as_ref().and_then(TextCalls::held_call) else {
            return;
        };
        let reported = Some((call.nth, progress_step(call.bytes)));
        if self.held != reported {
            self.held = reported;
            out.push(StreamEvent::ToolCallHeld {
                name: call.name.to_string(),
                bytes: call.bytes,
            });
        }
    }

    /// Ends text reading, passing on what the reader still held; the
    /// failure when that was one call too many.
    fn finish_text(&mut self, out: &mut Vec<StreamEvent>) -> Option<StreamEvent> {
        let mut reader = self.text.take()?;
        let mut pieces = Vec::new();
        reader.finish(&mut pieces);
        self.take_pieces(pieces, out)
    }

    /// Handles one chat SSE event's data, adding what it says to `out`;
    /// returns the stream's final event when this one ends it.
    fn on_event(&mut self, data: &str, out: &mut Vec<StreamEvent>) -> Option<StreamEvent> {
        let data = data.trim();
        if data == "[DONE]" {
            return Some(self.on_done(out));
        }
        if data.is_empty() {
            return None;
        }
        let chunk: ChatChunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                return Some(StreamEvent::Failed(TransportError::MalformedChunk {
                    detail: format!("{e}; frame: {}", classify::excerpt(data)),
                }));
            }
        };
        if chunk.error.is_some() {
            return Some(StreamEvent::Failed(classify::in_stream_error(
                data.as_bytes(),
            )));
        }
        self.on_chunk(chunk, data.len(), out)
    }

    /// Handles one event of another wire's stream: the frames `wire` makes
    /// of it (in `frames`, left empty), as chat's would be handled.
    fn on_frames(
        &mut self,
        wire: &mut Reader,
        data: &str,
        frames: &mut Vec<Frame>,
        out: &mut Vec<StreamEvent>,
    ) -> Option<StreamEvent> {
        wire.read(data, frames);
        // An event that adds nothing to the reply (a ping, a part's
        // opening) is spent from the cap as a comment is.
        if frames.is_empty() {
            return self.count(data.len());
        }
        let mut end = None;
        for frame in frames.drain(..) {
            if end.is_some() {
                continue;
            }
            end = match frame {
                Frame::Chunk(chunk) => self.on_chunk(*chunk, data.len(), out),
                Frame::Done => Some(self.on_done(out)),
                Frame::Failed(e) => Some(StreamEvent::Failed(e)),
                Frame::Carried(item) => self.count(item.to_string().len()).or_else(|| {
                    out.push(StreamEvent::Carried(item));
                    None
                }),
            };
        }
        end
    }

    /// The end of a whole reply: what text reading held, then its calls.
    fn on_done(&mut self, out: &mut Vec<StreamEvent>) -> StreamEvent {
        if let Some(end) = self.finish_text(out) {
            return end;
        }
        done(std::mem::take(&mut self.calls).finish())
    }

    /// Handles one chunk, `size` bytes as sent.
    fn on_chunk(
        &mut self,
        chunk: ChatChunk,
        size: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Option<StreamEvent> {
        // A frame that adds nothing to the reply (an empty delta, a role
        // alone, prompt progress) is spent from the cap as a comment is:
        // data frames that say nothing cannot go on for ever either.
        if !adds_to_reply(&chunk)
            && let Some(end) = self.count(size)
        {
            return Some(end);
        }
        if let Some(p) = chunk.prompt_progress {
            out.push(StreamEvent::PromptProgress(PromptProgress {
                total: p.total,
                cache: p.cache,
                processed: p.processed,
                elapsed_ms: p.time_ms.max(0.0) as u64,
            }));
        }
        if let Some(choice) = chunk.choices.into_iter().next() {
            let delta = choice.delta;
            let reasoning = [delta.reasoning_content, delta.reasoning]
                .into_iter()
                .flatten()
                .find(|text| !text.is_empty());
            if let Some(text) = reasoning {
                if let Some(end) = self.count(text.len()) {
                    return Some(end);
                }
                push_text(out, text, StreamEvent::Reasoning);
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                if let Some(end) = self.count(text.len()) {
                    return Some(end);
                }
                match self.text.as_mut() {
                    Some(reader) => {
                        let mut pieces = Vec::new();
                        reader.feed(&text, &mut pieces);
                        if let Some(end) = self.take_pieces(pieces, out) {
                            return Some(end);
                        }
                        self.report_held(out);
                    }
                    None => push_text(out, text, StreamEvent::Content),
                }
            }
            if !delta.tool_calls.is_empty() {
                // The server sends native calls: they are the reply's calls,
                // and the content is no longer read for more.
                if let Some(end) = self.finish_text(out) {
                    return Some(end);
                }
                let fed = self.calls.feed(&delta.tool_calls);
                if let Some(end) = self.report_calls(out) {
                    return Some(end);
                }
                let end = match fed {
                    Ok(bytes) => self.count(bytes),
                    Err(AccumulatorError::TooManyCalls { limit }) => {
                        Some(StreamEvent::Failed(TransportError::TooManyToolCalls {
                            limit,
                        }))
                    }
                };
                if end.is_some() {
                    return end;
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finished = true;
                out.push(StreamEvent::Finish(reason.into()));
            }
        }
        if let Some(u) = chunk.usage {
            // OpenAI says what it read from its cache in the usage;
            // llama.cpp in the timings of the same chunk.
            let cached = u
                .prompt_tokens_details
                .map(|d| d.cached_tokens)
                .or(chunk.timings.map(|t| t.cache_n))
                .unwrap_or_default();
            out.push(StreamEvent::Usage(Usage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.total_tokens,
                cached_tokens: cached,
            }));
        }
        None
    }
}

/// Whether a chunk carries any of the reply: text, reasoning, a call's
/// fragment, a finish or usage.
fn adds_to_reply(chunk: &ChatChunk) -> bool {
    let filled = |text: &Option<String>| text.as_ref().is_some_and(|t| !t.is_empty());
    chunk.usage.is_some()
        || chunk.choices.first().is_some_and(|choice| {
            let delta = &choice.delta;
            choice.finish_reason.is_some()
                || !delta.tool_calls.is_empty()
                || filled(&delta.content)
                || filled(&delta.reasoning_content)
                || filled(&delta.reasoning)
        })
}

/// Appends text to the last event when it is text of the same kind, else
/// adds a new event.
fn push_text(out: &mut Vec<StreamEvent>, text: String, kind: fn(String) -> StreamEvent) {
    match (out.last_mut(), kind(String::new())) {
        (Some(StreamEvent::Content(prev)), StreamEvent::Content(_))
        | (Some(StreamEvent::Reasoning(prev)), StreamEvent::Reasoning(_)) => prev.push_str(&text),
        _ => out.push(kind(text)),
    }
}

/// The end of a complete reply, with its calls, their arguments parsed
/// ([`AssembledCall::into_request`]).
fn done(calls: Vec<AssembledCall>) -> StreamEvent {
    let tool_calls = calls.into_iter().map(AssembledCall::into_request).collect();
    StreamEvent::Done { tool_calls }
}

/// llama-server builds before late 2025 send a failure as an SSE field
/// of its own (`error: {...}`), which the SSE parser drops (the request
/// would read as answered with nothing): each such line of `lines` (whole
/// lines) is handed on as the data of a chunk that carries the error.
fn error_field_as_data(lines: Bytes) -> Bytes {
    const FIELD: &[u8] = b"error:";
    if memchr::memmem::find(&lines, FIELD).is_none() {
        return lines;
    }
    let mut out = Vec::with_capacity(lines.len() + 16);
    let mut rest = &lines[..];
    while !rest.is_empty() {
        let (line, tail) = rest.split_at(memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len()));
        let end = match tail {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        match line.strip_prefix(FIELD).map(<[u8]>::trim_ascii) {
            Some(value) => {
                out.extend_from_slice(b"data: {\"error\":");
                // Anything but a JSON object or string goes as a string.
                if matches!(value.first(), Some(b'{' | b'"'))
                    && serde_json::from_slice::<serde::de::IgnoredAny>(value).is_ok()
                {
                    out.extend_from_slice(value);
                } else {
                    let words = String::from_utf8_lossy(value);
                    out.extend_from_slice(serde_json::Value::from(words).to_string().as_bytes());
                }
                out.push(b'}');
            }
            None => out.extend_from_slice(line),
        }
        out.extend_from_slice(&tail[..end]);
        rest = &tail[end..];
    }
    Bytes::from(out)
}

fn stream_error(e: EventStreamError<GuardError>) -> TransportError {
    match e {
        EventStreamError::Transport(e) => guard_failure(e),
        other => TransportError::MalformedChunk {
            detail: other.to_string(),
        },
    }
}

/// What a failure of the guarded body (or of the reply's budget) tells
/// the person.
fn guard_failure(e: GuardError) -> TransportError {
    match e {
        GuardError::Idle(after) => TransportError::IdleTimeout { after },
        GuardError::FrameTooLarge(limit) => TransportError::FrameTooLarge { limit },
        GuardError::ReplyTooLarge(limit) => TransportError::ReplyTooLarge { limit },
        GuardError::Read(e) => TransportError::ReadFailed {
            detail: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A chunk carrying the whole call `index`, id and all.
    fn call_chunk(index: u32, name: &str, arguments: &str) -> String {
        serde_json::json!({"choices": [{"delta": {"tool_calls": [{
            "index": index,
            "id": format!("id{index}"),
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }]}}]})
        .to_string()
    }

    /// A call's arguments text is parsed once, where the stream assembles
    /// it: the loop stop (which reads each call once the next one starts)
    /// and the end of the reply share that parse, and the agent is handed
    /// the value, which nothing parses again. It was parsed up to four
    /// times: for the loop stop, at the end of the reply, and by the agent
    /// twice (to encode it again for the assistant message, and to
    /// validate it). ADR 0042.
    #[test]
    fn each_calls_arguments_are_parsed_once() {
        let setup = EpisodeSetup::native(MadeUpIds::calls(1));
        let mut reader = EpisodeReader::new(setup, ReplyBudget::new(REPLY_MAX_BYTES));
        let mut out = Vec::new();
        let calls = [
            ("read_file", r#"{"path":"a"}"#),
            ("grep", r#"{"pattern":"x"}"#),
            ("list_directory", "{}"),
        ];
        for (index, (name, arguments)) in (0..).zip(calls) {
            let chunk = call_chunk(index, name, arguments);
            assert!(reader.on_event(&chunk, &mut out).is_none());
        }
        let Some(StreamEvent::Done { tool_calls }) = reader.on_event("[DONE]", &mut out) else {
            panic!("{out:?}")
        };
        assert_eq!(tool_calls.len(), 3);
        assert!(tool_calls.iter().all(|c| c.arguments.object().is_some()));
        assert_eq!(super::super::tool_calls::parses(), calls.len());
    }
}
