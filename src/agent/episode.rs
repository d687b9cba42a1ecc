//! One model episode: a request sent, its reply streamed in and shown,
//! and how it ended handed on to the turn — its calls to a round, a
//! request that did not fit to compaction, refused tools to the prompt.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::hooks::StopReason;
use crate::llm::adapters::{OfferedTools, Syntax, ToolSyntax};
use crate::llm::stream::{self, EpisodeSetup};
use crate::llm::tool_calls::MadeUpIds;
use crate::protocol::{
    AgentEvent, CallArguments, CallId, FinishReason, Phase, ReplyEnd, Severity, StreamEvent,
    ToolCallRequest, TransportError, Usage,
};

use super::acting::{self, ACT_NOW_NOTE};
use super::conversation::{AnswerNow, NOTE_PREFIX};
use super::looking;
use super::round::{Abandon, Round};
use super::turn::Searches;
use super::{Agent, STREAM_QUEUE, task_failure};

/// One model episode in flight.
pub(super) struct Episode {
    events: mpsc::Receiver<StreamEvent>,
    task: JoinHandle<()>,
    content: String,
    reasoning: bool,
    /// The request's size as the budget counts it, to calibrate the
    /// budget with its usage.
    body_bytes: usize,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    /// What the wire requires be sent back with the reply, bounded as
    /// the reply is (ADR 0052).
    carried: Vec<serde_json::Value>,
    /// Calls whose id and name arrived; each is answered if the stream
    /// does not complete. A complete stream's `Done` names the calls to
    /// answer: all of these, or, after a loop stop, each distinct one once.
    announced: Vec<(CallId, String)>,
}

impl Episode {
    /// Stops the request: dropping its future closes the connection, so
    /// the server stops generating a reply nobody reads.
    pub(super) fn abort(&self) {
        self.task.abort();
    }

    /// The stream task's next event; `None` once it ended.
    pub(super) async fn next_event(&mut self) -> Option<StreamEvent> {
        self.events.recv().await
    }
}

/// How an episode ended, as the agent handles it.
pub(super) enum EpisodeEnd {
    /// The reply is whole, with the calls it made.
    Complete(Vec<ToolCallRequest>),
    /// The person interrupted it.
    Interrupted,
    /// The stream task said why it failed.
    Failed(TransportError),
    /// The stream task ended without a last event: what its end says (a
    /// panic's message).
    Lost(String),
}

/// How a failed episode is recovered from, instead of ending the turn.
enum Recover {
    /// The request did not fit: compact and retry (this error otherwise).
    Wall(String),
    /// The server refused the API's tools: offer them in the prompt.
    PromptedTools,
    /// The model refused images (the provider's words): send the prompt
    /// again without them.
    WithoutImages(String),
}

impl Agent {
    /// Whether the next request asks for an answer, not a call: the last
    /// step of a turn does, and so does one after a repeat that gave
    /// nothing new, as a turn should end with an answer (ADR 0015). The
    /// ask stands until a reply comes: a retry of this step asks too.
    /// When every search of the turn found nothing, the ask says so.
    pub(super) fn answers_now(&self) -> Option<AnswerNow> {
        let asks = self.progress.answer_now || self.progress.steps + 1 >= self.setup.max_steps;
        asks.then_some(match self.progress.searches {
            Searches::NothingFound => AnswerNow::NothingFound,
            Searches::None | Searches::Found => AnswerNow::Plain,
        })
    }

    /// Sends the conversation as it stands: the budget was looked at
    /// already ([`Agent::next_request`]).
    pub(super) async fn start_episode(&mut self) {
        let answer_now = self.answers_now();
        let encoded = self.encode(&self.conversation, answer_now);
        let Some(body) = self.body_or_end_turn(encoded).await else {
            return;
        };
        self.send(body, answer_now.is_some()).await;
    }

    /// Starts the episode that sends `body`, the conversation as it
    /// stands encoded, asking for an answer when `answer_now`.
    pub(super) async fn send(&mut self, body: Vec<u8>, answer_now: bool) {
        self.stop_warming();
        let Some(endpoint) = self.endpoint_or_end_turn().await else {
            return;
        };
        let step = self.progress.steps + 1;
        let episode = self.tickets.next_episode();
        self.sent_since_open = true;
        self.setup
            .log
            .line(|| format!("request: step {step} of the turn, {} bytes", body.len()));
        // Ids the agent makes up for calls that came without one are unique
        // per episode, so a result can never be matched to another round's
        // call.
        let ids = MadeUpIds::calls(episode);
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let body_bytes = self.conversation.counted_len(body.len());
        let setup = EpisodeSetup {
            ids,
            // Calls offered in the prompt come back as text, whatever the
            // setting said of native ones.
            tool_syntax: match (self.server.prompted, self.setup.tool_syntax) {
                (Some(_), ToolSyntax::Native) => ToolSyntax::Auto,
                (_, setting) => setting,
            },
            // No call is read from the text of a reply asked to answer.
            tools: if answer_now {
                Arc::new(OfferedTools::default())
            } else {
                Arc::clone(&self.offered)
            },
            quoted: Arc::new(self.conversation.quoted_calls(&self.offered)),
        };
        let task = tokio::spawn(stream::run(endpoint, body, setup, tx));
        self.turn.stream(Episode {
            events: rx,
            task,
            content: String::new(),
            reasoning: false,
            body_bytes,
            usage: None,
            finish: None,
            carried: Vec::new(),
            announced: Vec::new(),
        });
        self.emit(AgentEvent::Phase(Phase::Streaming)).await;
    }

    /// Handles one stream event; `None` means the stream task ended without
    /// saying how (it panicked or was dropped).
    pub(super) async fn on_stream_event(&mut self, event: Option<StreamEvent>) {
        let Some(episode) = self.turn.episode_mut() else {
            return;
        };
        match event {
            Some(StreamEvent::Content(text)) => {
                episode.content.push_str(&text);
                self.emit(AgentEvent::AssistantDelta(text)).await;
            }
            Some(StreamEvent::Reasoning(text)) => {
                episode.reasoning = true;
                self.emit(AgentEvent::ReasoningDelta(text)).await;
            }
            Some(StreamEvent::Usage(usage)) => episode.usage = Some(usage),
            Some(StreamEvent::Carried(item)) => episode.carried.push(item),
            Some(StreamEvent::Finish(reason)) => episode.finish = Some(reason),
            Some(StreamEvent::ToolCallStarted { id, name }) => {
                episode.announced.push((id, name.clone()));
                self.emit(AgentEvent::ToolCallWriting { name, bytes: 0 })
                    .await;
            }
            // Only until the reply starts: a late frame would put the
            // status bar back to reading.
            Some(StreamEvent::PromptProgress(progress)) => {
                if episode.content.is_empty() && !episode.reasoning && episode.announced.is_empty()
                {
                    self.emit(AgentEvent::ReadingPrompt(progress)).await;
                }
            }
            Some(StreamEvent::ToolCallProgress { id, bytes }) => {
                let name = episode.announced.iter().find(|(i, _)| *i == id);
                if let Some((_, name)) = name {
                    let name = name.clone();
                    self.emit(AgentEvent::ToolCallWriting { name, bytes }).await;
                }
            }
            // Shown as a call being written, but not announced: it may
            // still turn out to be prose, and needs no result until then.
            Some(StreamEvent::ToolCallHeld { name, bytes }) => {
                self.emit(AgentEvent::ToolCallWriting { name, bytes }).await;
            }
            Some(StreamEvent::Looping { name, times }) => {
                let text = format!(
                    "the model wrote the same {name} call {times} times in one reply; \
                     the reply was stopped there, and each of its calls runs once"
                );
                self.system(Severity::Notice, text).await;
            }
            Some(StreamEvent::Retrying {
                attempt,
                wait,
                reason,
            }) => {
                let text = format!(
                    "{reason} — retrying in {:.0}s (retry {attempt} of {})",
                    wait.as_secs_f64().ceil(),
                    stream::RETRY_MAX
                );
                self.system(Severity::Notice, text).await;
            }
            Some(StreamEvent::Done { tool_calls }) => {
                self.end_episode(EpisodeEnd::Complete(tool_calls)).await;
            }
            Some(StreamEvent::Failed(err)) => {
                self.end_episode(EpisodeEnd::Failed(err)).await;
            }
            None => {
                // The task dropped its sender without a last event, so it
                // is ending: its JoinError says how.
                let why = match (&mut episode.task).await {
                    Err(err) => task_failure("stream", &err),
                    Ok(()) => "the stream task ended unexpectedly".into(),
                };
                self.end_episode(EpisodeEnd::Lost(why)).await;
            }
        }
    }

    /// Ends the episode in flight: the reply (whole or partial) and its
    /// calls join the conversation, the UI hears how it ended, and the turn
    /// goes on to the calls or ends. Calls announced by a stream that did
    /// not complete are answered at once, so the conversation stays valid.
    pub(super) async fn end_episode(&mut self, end: EpisodeEnd) {
        let Some(episode) = self.turn.end_streaming() else {
            return;
        };
        // Aborting drops the request future, which closes the connection:
        // the server stops generating for a reply nobody reads.
        episode.task.abort();
        if let Some(usage) = episode.usage {
            self.budget.report(episode.body_bytes, usage.prompt_tokens);
            self.saving.add_usage(usage);
            // Each step, so the context meter follows a long turn.
            self.emit(AgentEvent::Usage(usage)).await;
            self.emit(AgentEvent::Totals(self.saving.usage)).await;
        }
        let reply_end = match &end {
            EpisodeEnd::Complete(_) => ReplyEnd::Complete,
            EpisodeEnd::Interrupted => ReplyEnd::Interrupted,
            EpisodeEnd::Failed(_) | EpisodeEnd::Lost(_) => ReplyEnd::Failed,
        };
        self.setup.log.line(|| {
            format!(
                "reply: {reply_end:?}, {} bytes, finish {:?}, usage {:?}",
                episode.content.len(),
                episode.finish,
                episode.usage
            )
        });
        self.emit(AgentEvent::AssistantEnd(reply_end)).await;
        // The provider said the request does not fit: compacted and
        // retried once a turn, the entry shown only if there is nothing
        // to compact.
        let mut recover = None;
        match &end {
            EpisodeEnd::Failed(TransportError::ToolsRefused { .. })
                if self.server.prompted.is_none() && episode.announced.is_empty() =>
            {
                recover = Some(Recover::PromptedTools);
            }
            EpisodeEnd::Failed(TransportError::ImagesRefused { message, .. })
                if self.conversation.image_bytes() > 0 && episode.announced.is_empty() =>
            {
                recover = Some(Recover::WithoutImages(message.clone()));
            }
            EpisodeEnd::Failed(why) => {
                if let TransportError::ContextExceeded { window, .. } = why {
                    if let Some(window) = *window {
                        self.budget.set_window(window);
                        self.emit(AgentEvent::SessionFacts {
                            model: None,
                            context_window: Some(self.budget.window()),
                        })
                        .await;
                    }
                    if !self.progress.wall_retried && episode.announced.is_empty() {
                        recover = Some(Recover::Wall(why.to_string()));
                    }
                }
                if recover.is_none() {
                    self.progress.ending(StopReason::Failed);
                    self.system(Severity::Error, why.to_string()).await;
                }
            }
            EpisodeEnd::Lost(why) => {
                self.progress.ending(StopReason::Failed);
                self.system(Severity::Error, format!("{why}; the partial reply is kept"))
                    .await;
            }
            EpisodeEnd::Complete(_) | EpisodeEnd::Interrupted => {}
        }
        // A request the server refused and that is sent again is no step
        // of the model's; every reply, whole or not, is one.
        if recover.is_none() {
            self.progress.steps += 1;
            self.progress.answer_now = false;
        }
        let calls = match end {
            EpisodeEnd::Complete(calls) => calls,
            EpisodeEnd::Interrupted | EpisodeEnd::Failed(_) | EpisodeEnd::Lost(_) => episode
                .announced
                .iter()
                .map(|(id, name)| ToolCallRequest {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: CallArguments::Json(serde_json::Value::Object(Default::default())),
                    error: None,
                })
                .collect(),
        };
        // White space alone says nothing: it is neither shown as an
        // answer nor sent back.
        let had_text = !episode.content.trim().is_empty();
        let advised = reply_end == ReplyEnd::Complete && acting::only_advises(&episode.content);
        let unfounded = (reply_end == ReplyEnd::Complete)
            .then(|| looking::unfounded(&self.progress.unseen, &episode.content))
            .flatten()
            .map(|name| name.text().to_owned());
        if reply_end == ReplyEnd::Complete && !had_text && !episode.reasoning && calls.is_empty() {
            self.system(Severity::Notice, "[model returned nothing]")
                .await;
        }
        if reply_end == ReplyEnd::Complete && episode.finish == Some(FinishReason::Length) {
            self.system(
                Severity::Notice,
                "the reply reached the model's output limit (finish_reason: length) and was cut off",
            )
            .await;
        }
        let round = Round::new(
            calls,
            &self.setup.approval,
            &self.setup.registry,
            (&self.setup.tools, self.progress.only_asks),
        );
        // An empty reply is not sent back: it would teach the model nothing
        // and some providers refuse an assistant message with no content.
        if had_text || !round.is_empty() {
            self.conversation
                .push_reply(episode.content, round.assistant_calls(), episode.carried);
        }
        if round.is_empty() {
            match recover {
                Some(Recover::Wall(error)) => self.recover_from_wall(error).await,
                Some(Recover::PromptedTools) => self.offer_tools_in_the_prompt().await,
                Some(Recover::WithoutImages(why)) => self.send_without_images(why).await,
                None if advised && self.may_ask_to_act() => self.ask_to_act().await,
                None => match unfounded.filter(|_| self.may_ask_to_look()) {
                    Some(name) => self.ask_to_look(&name).await,
                    None => self.end_turn().await,
                },
            }
            return;
        }
        match reply_end {
            ReplyEnd::Complete => self.start_round(round).await,
            ReplyEnd::Interrupted => self.abandon_round(round, Abandon::Interrupted).await,
            ReplyEnd::Failed => self.abandon_round(round, Abandon::Failed).await,
        }
    }

    /// Whether the reply just received, words with no call and no
    /// question, is to be followed by the ask to act: the turn's first, to
    /// a prompt that asks for a change or a run, with steps left for it.
    fn may_ask_to_act(&self) -> bool {
        let progress = &self.progress;
        self.setup.ask_to_act
            && progress.asks_to_act
            && !progress.nudged
            && progress.steps == 1
            && progress.steps < self.setup.max_steps
    }

    /// Asks the model, once a turn, to do what it described (ADR 0049).
    async fn ask_to_act(&mut self) {
        self.progress.nudged = true;
        self.conversation
            .push_user(format!("{NOTE_PREFIX}{ACT_NOW_NOTE}"));
        self.system(
            Severity::Notice,
            "the model answered in words; asked it once to make the change or run the command",
        )
        .await;
        self.next_request().await;
    }

    /// Whether the answer just received, which names something the
    /// prompt asked about that no tool result showed, is to be followed
    /// by the ask to look: once a turn, to a question (a request to act
    /// names what it makes), with steps left for it.
    fn may_ask_to_look(&self) -> bool {
        let progress = &self.progress;
        self.setup.ask_to_look
            && !progress.asks_to_act
            && !progress.looked
            && progress.steps < self.setup.max_steps
    }

    /// Asks the model, once a turn, to look for what its answer named
    /// (ADR 0049).
    async fn ask_to_look(&mut self, name: &str) {
        self.progress.looked = true;
        self.conversation
            .push_user(format!("{NOTE_PREFIX}{}", looking::look_note(name)));
        self.system(
            Severity::Notice,
            format!("the answer names `{name}`, which no tool result showed; asked the model once to look for it"),
        )
        .await;
        self.next_request().await;
    }

    /// The model refused images (`message`, in the provider's words):
    /// each image in the conversation becomes a note that it was left
    /// out, the same step is sent again, and later prompts go without
    /// theirs until `/model` chooses another (ADR 0055).
    async fn send_without_images(&mut self, message: String) {
        self.server.images_refused = true;
        self.conversation.leave_out_images();
        self.system(
            Severity::Notice,
            format!(
                "the model does not take images ({message}); the prompt is sent again without \
                 them, and later prompts go without theirs (/model chooses another model)"
            ),
        )
        .await;
        self.save().await;
        self.start_episode().await;
    }

    /// The server refused the API's tools: the same step is sent again
    /// with them in the prompt, and so is every later one (ADR 0031).
    async fn offer_tools_in_the_prompt(&mut self) {
        let syntax = match self.setup.tool_syntax {
            ToolSyntax::Only(syntax) => syntax,
            ToolSyntax::Auto | ToolSyntax::Native => Syntax::Fenced,
        };
        self.server.prompted = Some(syntax);
        self.system(
            Severity::Notice,
            format!(
                "the server refused the request's tools; offering them in the prompt instead \
                 ({} syntax) for the rest of this run",
                syntax.name()
            ),
        )
        .await;
        self.start_episode().await;
    }
}
