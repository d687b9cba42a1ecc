//! The agent actor: owns the conversation, starts one stream task per model
//! episode, forwards what the model says to the UI, and keeps the
//! conversation valid on every way a turn can end. It never blocks on I/O
//! itself: requests run in stream tasks it can abort.

mod conversation;

pub use conversation::{Conversation, system_prompt};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::llm::stream::{self, Endpoint};
use crate::protocol::{AgentEvent, Phase, ReplyEnd, Severity, StreamEvent, UiCommand, Usage};

/// Stream events buffered between a stream task and the agent; the stream
/// task waits (and so reads no further from the socket) when it is full.
pub const STREAM_QUEUE: usize = 256;

/// What the agent needs to run.
#[derive(Debug)]
pub struct AgentSetup {
    /// Where requests go; `Err` holds why no client could be built, shown
    /// on each prompt.
    pub endpoint: Result<Endpoint, String>,
    /// The model name.
    pub model: String,
    /// The system prompt opening the conversation.
    pub system_prompt: String,
}

/// One model episode in flight.
struct Episode {
    events: mpsc::Receiver<StreamEvent>,
    task: JoinHandle<()>,
    content: String,
    reasoning: bool,
    usage: Option<Usage>,
    finish: Option<String>,
}

/// The actor's state.
struct Agent {
    setup: AgentSetup,
    conversation: Conversation,
    ui: mpsc::Sender<AgentEvent>,
    episode: Option<Episode>,
}

/// Runs the agent until the UI says quit or hangs up.
pub async fn run(
    setup: AgentSetup,
    commands: mpsc::Receiver<UiCommand>,
    ui: mpsc::Sender<AgentEvent>,
) {
    let conversation = Conversation::new(&setup.system_prompt);
    let agent = Agent {
        setup,
        conversation,
        ui,
        episode: None,
    };
    agent.run(commands).await;
}

impl Agent {
    async fn run(mut self, mut commands: mpsc::Receiver<UiCommand>) {
        loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    None | Some(UiCommand::Quit) => break,
                    Some(UiCommand::Prompt { text }) => self.prompt(text).await,
                    Some(UiCommand::Cancel) => self.end_episode(ReplyEnd::Interrupted).await,
                },
                ev = next_stream_event(&mut self.episode) => {
                    if !self.on_stream_event(ev).await {
                        break;
                    }
                }
            }
        }
        if let Some(episode) = self.episode.take() {
            episode.task.abort();
        }
    }

    /// Sends to the UI; false when the UI is gone and the agent should end.
    async fn emit(&self, event: AgentEvent) -> bool {
        self.ui.send(event).await.is_ok()
    }

    async fn system(&self, severity: Severity, text: String) -> bool {
        self.emit(AgentEvent::System { severity, text }).await
    }

    async fn prompt(&mut self, text: String) {
        if self.episode.is_some() {
            self.system(
                Severity::Notice,
                "a reply is still streaming; that prompt was not sent".to_string(),
            )
            .await;
            return;
        }
        self.conversation.push_user(text);
        self.start_episode().await;
    }

    async fn start_episode(&mut self) {
        let endpoint = match &self.setup.endpoint {
            Ok(endpoint) => endpoint.clone(),
            Err(why) => {
                self.system(Severity::Error, why.clone()).await;
                self.emit(AgentEvent::Phase(Phase::Idle)).await;
                self.emit(AgentEvent::TurnDone).await;
                return;
            }
        };
        let body = match self.conversation.request_body(&self.setup.model) {
            Ok(body) => body,
            Err(e) => {
                self.system(Severity::Error, format!("cannot encode the request: {e}"))
                    .await;
                self.emit(AgentEvent::TurnDone).await;
                return;
            }
        };
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let task = tokio::spawn(stream::run(endpoint, body, tx));
        self.episode = Some(Episode {
            events: rx,
            task,
            content: String::new(),
            reasoning: false,
            usage: None,
            finish: None,
        });
        self.emit(AgentEvent::Phase(Phase::Streaming)).await;
    }

    /// Handles one stream event; `None` means the stream task ended without
    /// saying how (it panicked or was dropped). False when the UI is gone.
    async fn on_stream_event(&mut self, event: Option<StreamEvent>) -> bool {
        let Some(episode) = self.episode.as_mut() else {
            return true;
        };
        match event {
            Some(StreamEvent::Content(text)) => {
                episode.content.push_str(&text);
                self.emit(AgentEvent::AssistantDelta(text)).await
            }
            Some(StreamEvent::Reasoning(text)) => {
                episode.reasoning = true;
                self.emit(AgentEvent::ReasoningDelta(text)).await
            }
            Some(StreamEvent::Usage(usage)) => {
                episode.usage = Some(usage);
                true
            }
            Some(StreamEvent::Finish(reason)) => {
                episode.finish = Some(reason);
                true
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
                self.system(Severity::Notice, text).await
            }
            Some(StreamEvent::Done) => {
                self.end_episode(ReplyEnd::Complete).await;
                true
            }
            Some(StreamEvent::Failed(err)) => {
                self.end_episode_with(ReplyEnd::Failed, Some(err.to_string()))
                    .await;
                true
            }
            None => {
                self.end_episode_with(
                    ReplyEnd::Failed,
                    Some("the stream task ended unexpectedly; the partial reply is kept".into()),
                )
                .await;
                true
            }
        }
    }

    async fn end_episode(&mut self, end: ReplyEnd) {
        self.end_episode_with(end, None).await;
    }

    /// Ends the episode in flight, if any: the partial or whole reply joins
    /// the conversation, the UI hears how it ended, and the turn is over.
    async fn end_episode_with(&mut self, end: ReplyEnd, error: Option<String>) {
        let Some(episode) = self.episode.take() else {
            return;
        };
        // Aborting drops the request future, which closes the connection:
        // the server stops generating for a reply nobody reads.
        episode.task.abort();
        let had_text = !episode.content.is_empty();
        if had_text {
            self.conversation.push_assistant(episode.content);
        }
        self.emit(AgentEvent::AssistantEnd(end)).await;
        if let Some(error) = error {
            self.system(Severity::Error, error).await;
        }
        if end == ReplyEnd::Complete && !had_text && !episode.reasoning {
            self.system(Severity::Notice, "[model returned nothing]".to_string())
                .await;
        }
        if end == ReplyEnd::Complete && episode.finish.as_deref() == Some("length") {
            self.system(
                Severity::Notice,
                "the reply reached the model's output limit (finish_reason: length) and was cut off"
                    .to_string(),
            )
            .await;
        }
        if let Some(usage) = episode.usage {
            self.emit(AgentEvent::Usage(usage)).await;
        }
        self.emit(AgentEvent::Phase(Phase::Idle)).await;
        self.emit(AgentEvent::TurnDone).await;
    }
}

async fn next_stream_event(episode: &mut Option<Episode>) -> Option<StreamEvent> {
    match episode {
        Some(episode) => episode.events.recv().await,
        None => std::future::pending().await,
    }
}
