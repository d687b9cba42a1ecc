//! The agent actor: owns the conversation and the tool loop. It starts one
//! stream task per model episode and one task per tool call (and per
//! preview), forwards what happens to the UI as [`AgentEvent`]s, decides
//! which calls wait for the person, and keeps the conversation valid on
//! every way a turn can end. It never blocks on I/O itself.

mod budget;
mod compact;
mod conversation;
pub mod instructions;
mod mentions;
mod opening;
mod outcome;
mod policy;
mod repeat;
mod restoring;
mod round;
mod saving;

pub use budget::{
    BYTES_PER_TOKEN_MAX, BYTES_PER_TOKEN_MIN, BYTES_PER_TOKEN_START, Budget, COMPACT_AT_MAX,
    COMPACT_AT_MIN, DEFAULT_COMPACT_AT, KEEP_DIVISOR, OUTPUT_RESERVE_DIVISOR,
    OUTPUT_RESERVE_MAX_DIVISOR, OUTPUT_RESERVE_MIN, PRUNE_TARGET_DIVISOR,
};
pub use compact::{
    RESULT_CUT_MIN_BYTES, SUMMARY_INPUT_SHARE, SUMMARY_MAX_DIVISOR, SUMMARY_PROMPT,
    SUMMARY_RESULT_MAX_BYTES,
};
pub use conversation::{
    ANSWER_NOW_PROMPT, AssistantCall, Conversation, PRUNED_ARGUMENTS_MAX_CHARS, PRUNED_TAIL,
    Pruned, SUMMARY_PREFIX, system_prompt,
};
pub use policy::ApprovalPolicy;
pub use repeat::{
    FAILED_REPEAT_NOTICE, FAILED_REPEAT_RETRIES, REPEAT_MAX_KEYS, REPEAT_THRESHOLDS, Repeat,
    RepeatDetector,
};

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle, JoinSet};

use crate::llm::adapters::{OfferedTools, Syntax, ToolSyntax};
use crate::llm::discover::{self, Questions};
use crate::llm::slots::{self, SlotAction};
use crate::llm::stream::{self, Endpoint, EndpointError, EpisodeSetup};
use crate::llm::tool_calls::MadeUpIds;
use crate::llm::wire::Sampling;
use crate::log::Log;
use crate::protocol::{
    AgentEvent, CallArguments, CallId, FinishReason, PROMPT_MAX_BYTES, Phase, ReplyEnd, Severity,
    StreamEvent, ToolCallRequest, TransportError, UiCommand, Usage,
};
use crate::session::SessionSetup;
use crate::tools::{Analyser, Registry, ToolContext};

use compact::{Compaction, next_summary_event};
use conversation::ToolOffer;
use restoring::{Direction, Restoring};
use round::{Abandon, Round, ToolEvent};
use saving::{Saving, next_writer_status};

/// Stream events buffered between a stream task and the agent; the stream
/// task waits (and so reads no further from the socket) when it is full.
pub const STREAM_QUEUE: usize = 256;
/// Tool and preview results buffered for the agent; at most one per call
/// of an episode is ever outstanding, and an episode has at most 64.
pub const TOOL_QUEUE: usize = 64;
/// How long looking up the files a prompt names may take before the
/// prompt goes on without them (ADR 0038).
pub const ATTACH_LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// Model episodes in one turn before the agent stops and asks the person.
/// Small local models often call a tool again after every result instead
/// of answering; this is what ends such a turn.
pub const DEFAULT_MAX_STEPS: u32 = 16;

/// What the agent needs to run.
#[derive(Debug)]
pub struct AgentSetup {
    /// Where requests go; `Err` holds why no client could be built, shown
    /// on each prompt.
    pub endpoint: Result<Endpoint, EndpointError>,
    /// The model name.
    pub model: String,
    /// The system prompt opening the conversation.
    pub system_prompt: String,
    /// Where tools run.
    pub tools: ToolContext,
    /// The tools the model is offered: the built-ins, and those
    /// registered at run time (ADR 0042).
    pub registry: Registry,
    /// Which calls wait for the person.
    pub approval: ApprovalPolicy,
    /// The analyser that lets read-only command lines run without asking
    /// under `ask` and `auto-edit`; `None` asks for every command
    /// (`auto_allow_read_only = false`). ADR 0025.
    pub read_only: Option<Analyser>,
    /// No one is there to confirm a call (`dashfloat exec`): a call that
    /// would wait for the person is answered as not run instead, with how
    /// to allow it (ADR 0028). Read-only command lines still run unasked.
    pub headless: bool,
    /// Episodes per turn before stopping.
    pub max_steps: u32,
    /// Sampling temperature, if set.
    pub temperature: Option<f32>,
    /// Sampling seed, if set (repeatable runs of the task suite).
    pub seed: Option<u64>,
    /// Where the agent notes what it does (off by default).
    pub log: Log,
    /// What to ask the server before the first prompt (ADR 0020).
    pub questions: Questions,
    /// The model's context window in tokens, until the server says
    /// otherwise (ADR 0020, 0021).
    pub context_window: u64,
    /// Tokens kept free for the reply; `None`: the default share of the
    /// window (ADR 0021).
    pub max_output: Option<u64>,
    /// The share of the window past which the conversation is compacted
    /// (ADR 0021).
    pub compact_at: f64,
    /// Where sessions are saved and which to open first; `None` keeps
    /// nothing and lists nothing (ADR 0022).
    pub sessions: Option<SessionSetup>,
    /// How tool calls the model writes as text are read (ADR 0027).
    pub tool_syntax: ToolSyntax,
    /// Send the conversation ahead whenever a session opens, so the
    /// server's prompt cache holds it before the first prompt (ADR 0032).
    pub warm_cache: bool,
    /// Files a prompt names without `@` are read for the model too, not
    /// only those named with it (ADR 0038).
    pub attach_named_files: bool,
}

/// One model episode in flight.
struct Episode {
    events: mpsc::Receiver<StreamEvent>,
    task: JoinHandle<()>,
    content: String,
    reasoning: bool,
    /// The request's size, to calibrate the budget with its usage.
    body_bytes: usize,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    /// Calls whose id and name arrived; each is answered if the stream
    /// does not complete. A complete stream's `Done` names the calls to
    /// answer: all of these, or, after a loop stop, each distinct one once.
    announced: Vec<(CallId, String)>,
}

/// How an episode ended, as the agent handles it.
enum EpisodeEnd {
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

/// The actor's state.
struct Agent {
    setup: AgentSetup,
    tool_catalogue: serde_json::Value,
    /// The catalogue's names and parameter types, for reading text calls.
    offered: Arc<OfferedTools>,
    conversation: Conversation,
    ui: mpsc::Sender<AgentEvent>,
    tool_tx: mpsc::Sender<ToolEvent>,
    episode: Option<Episode>,
    round: Option<Round>,
    repeats: RepeatDetector,
    /// The next request asks for an answer, not a call: the model repeated
    /// a call that gave it nothing new (ADR 0015).
    answer_now: bool,
    steps: u32,
    episodes_started: u64,
    /// Preview tasks started, counted: each task's ticket.
    previews_started: u64,
    budget: Budget,
    compaction: Option<Compaction>,
    /// This turn already compacted and retried after the provider said a
    /// request did not fit: the next such error is shown.
    wall_retried: bool,
    /// The server refused the API's tools: from then on they are offered
    /// in the prompt, calls written in this syntax (ADR 0031).
    prompted: Option<Syntax>,
    /// The warm-up request in flight, stopped by any real request.
    warming: Option<JoinHandle<()>>,
    /// The walk listing the project's files for the UI; no other starts
    /// while it runs.
    listing: Option<JoinHandle<()>>,
    /// The server is llama.cpp: requests ask it how far it has read, and
    /// its slot may be saved with the session (ADR 0034).
    llama_cpp: bool,
    /// The marker the server's chat template opens a tool result with:
    /// requests stop where the model starts to write one, unless tools
    /// offered in the prompt bring their syntax's own marker.
    template_result_opener: Option<&'static str>,
    /// A saved session was just opened: the warm-up first asks the server
    /// to restore the slot saved with it.
    restore_slot: bool,
    /// A request of the open session was sent: its slot is worth saving.
    sent_since_open: bool,
    saving: Saving,
    /// A `/undo`, `/redo` or rewind waiting for the person (ADR 0035).
    restoring: Option<Restoring>,
    /// Restore confirmations shown, counted: each one's id.
    restores_started: u64,
}

/// Runs the agent until the UI says quit or hangs up. The actor runs as a
/// task of its own, so that if it panics the UI hears why in an error
/// entry before the channel closes; dropping this future aborts it.
pub async fn run(
    setup: AgentSetup,
    commands: mpsc::Receiver<UiCommand>,
    ui: mpsc::Sender<AgentEvent>,
) {
    let report = ui.clone();
    let mut actor = JoinSet::new();
    actor.spawn(run_actor(setup, commands, ui));
    if let Some(Err(err)) = actor.join_next().await {
        let failure = AgentEvent::System {
            severity: Severity::Error,
            text: task_failure("agent", &err),
        };
        let _ = report.send(failure).await;
    }
}

/// The text of the error entry for a task that ended without reporting:
/// a panic (with its message) or an abort. A bug in one task is told in
/// the chat; it never takes the screen down.
pub fn task_failure(task: &str, err: &JoinError) -> String {
    format!("internal error: the {task} task failed: {err}")
}

async fn run_actor(
    mut setup: AgentSetup,
    commands: mpsc::Receiver<UiCommand>,
    ui: mpsc::Sender<AgentEvent>,
) {
    let (tool_tx, tool_rx) = mpsc::channel(TOOL_QUEUE);
    let budget = Budget::new(setup.context_window, setup.max_output, setup.compact_at);
    let saving = Saving::new(setup.sessions.take(), &setup.log);
    // What changes the checkpoints is kept for the journal while saving
    // is on (ADR 0040).
    setup.tools.checkpoints.lock().take_ops(saving.on());
    let tool_catalogue = setup.registry.definitions();
    let agent = Agent {
        saving,
        conversation: Conversation::new(&setup.system_prompt),
        offered: Arc::new(OfferedTools::from_definitions(&tool_catalogue)),
        tool_catalogue,
        setup,
        ui,
        tool_tx,
        episode: None,
        round: None,
        repeats: RepeatDetector::default(),
        answer_now: false,
        steps: 0,
        episodes_started: 0,
        previews_started: 0,
        budget,
        compaction: None,
        wall_retried: false,
        prompted: None,
        warming: None,
        listing: None,
        llama_cpp: false,
        template_result_opener: None,
        restore_slot: false,
        sent_since_open: false,
        restoring: None,
        restores_started: 0,
    };
    agent.run(commands, tool_rx).await;
}

impl Agent {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<UiCommand>,
        mut tool_rx: mpsc::Receiver<ToolEvent>,
    ) {
        self.open_at_start().await;
        self.announce_session().await;
        self.read_instructions().await;
        self.discover().await;
        self.warm_cache();
        self.list_files();
        loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    None | Some(UiCommand::Quit) => {
                        self.settle_round(&mut tool_rx).await;
                        break;
                    }
                    Some(UiCommand::Prompt { text }) => self.prompt(text).await,
                    Some(UiCommand::Cancel) => self.cancel().await,
                    Some(UiCommand::Decide { id, decision }) => self.decide(&id, decision).await,
                    Some(UiCommand::SetModel { name }) => self.set_model(name).await,
                    Some(UiCommand::SetApproval(policy)) => self.set_approval(policy).await,
                    Some(UiCommand::Compact { focus }) => self.compact_now(focus).await,
                    Some(UiCommand::Clear) => self.clear().await,
                    Some(UiCommand::Resume { id }) => self.resume(id).await,
                    Some(UiCommand::ListSessions { all }) => self.list_sessions(all).await,
                    Some(UiCommand::Undo) => self.step(Direction::Undo).await,
                    Some(UiCommand::Redo) => self.step(Direction::Redo).await,
                    Some(UiCommand::ListPrompts) => self.list_prompts().await,
                    Some(UiCommand::Rewind { prompt }) => self.rewind(prompt).await,
                },
                ev = next_stream_event(&mut self.episode) => self.on_stream_event(ev).await,
                ev = next_summary_event(&mut self.compaction) => self.on_summary_event(ev).await,
                Some(ev) = tool_rx.recv() => self.on_tool_event(ev).await,
                status = next_writer_status(&mut self.saving) => self.writer_said(status).await,
            }
        }
        // A request cut short leaves the server reading it into a slot
        // half filled: nothing worth saving, and the save would wait for
        // the read to end.
        let server_busy = self.episode.is_some()
            || self.compaction.is_some()
            || self
                .warming
                .as_ref()
                .is_some_and(|task| !task.is_finished());
        self.stop_warming();
        if let Some(listing) = self.listing.take() {
            listing.abort();
        }
        if let Some(episode) = self.episode.take() {
            episode.task.abort();
        }
        if let Some(round) = self.round.take() {
            round.cancel_all();
        }
        if let Some(compaction) = self.compaction.take() {
            compaction.abort();
        }
        if !server_busy {
            self.save_slot().await;
        }
        // Every save written, the journal folded into the snapshot.
        self.saving.finish().await;
    }

    /// Asks the server what the configuration left open — the window, the
    /// model — and tells the UI what it learned. Runs on this task while
    /// the first frame shows; a prompt sent meanwhile waits at most the
    /// discovery timeouts. Failures only reach the log.
    async fn discover(&mut self) {
        let questions = self.setup.questions;
        let Ok(endpoint) = &mut self.setup.endpoint else {
            return;
        };
        if questions == Questions::default() {
            return;
        }
        let answers = discover::ask(endpoint, &self.setup.model, questions).await;
        for problem in &answers.problems {
            self.setup
                .log
                .line(|| format!("discovery: {problem} (the configured values stand)"));
        }
        let mut model = None;
        match answers.served.as_slice() {
            [only] => {
                endpoint.context.model.clone_from(only);
                self.setup.model.clone_from(only);
                model = Some(only.clone());
            }
            [] => {}
            several => {
                let more = if answers.more_served { ", …" } else { "" };
                let text = format!(
                    "the server serves several models: {}{more}. dashfloat asks for `{}`; choose another with --model NAME",
                    several.join(", "),
                    self.setup.model
                );
                self.system(Severity::Notice, text).await;
            }
        }
        // The window as taken (bounded), so the header shows the one used.
        let window = answers.context_window.map(|window| {
            self.budget.set_window(window);
            self.budget.window()
        });
        self.llama_cpp = answers.llama_cpp;
        self.template_result_opener = answers.result_opener;
        if model.is_some() || window.is_some() {
            self.setup.log.line(|| {
                format!(
                    "discovered: model {model:?}, context window {:?}",
                    answers.context_window
                )
            });
            self.emit(AgentEvent::SessionFacts {
                model,
                context_window: window,
            })
            .await;
        }
    }

    /// Reads the project's instructions (off the async threads) into the
    /// system prompt, before the first request — also of a session opened
    /// at start-up, after whose restored log a line names the files. A
    /// file that cannot be read is a notice, not a failure.
    async fn read_instructions(&mut self) {
        let ws = Arc::clone(&self.setup.tools.workspace);
        let env = self.setup.tools.command_env();
        let read = move || instructions::read(ws.as_ref(), env);
        let found = match tokio::task::spawn_blocking(read).await {
            Ok(found) => found,
            Err(err) => {
                let text = task_failure("project instructions", &err);
                self.system(Severity::Notice, text).await;
                return;
            }
        };
        if let Some(notice) = found.notice() {
            self.system(Severity::Notice, notice).await;
        }
        for unreadable in &found.unreadable {
            self.system(Severity::Notice, unreadable.to_string()).await;
        }
        if !found.text.is_empty() {
            self.setup.system_prompt.push_str(&found.text);
            self.conversation
                .set_system_prompt(&self.setup.system_prompt);
        }
    }

    /// `/model NAME`: every request from the next on asks for `name`.
    async fn set_model(&mut self, name: String) {
        if let Ok(endpoint) = &mut self.setup.endpoint {
            endpoint.context.model.clone_from(&name);
        }
        self.setup.model.clone_from(&name);
        self.system(
            Severity::Notice,
            format!("the model is now `{name}`, from the next request on"),
        )
        .await;
        self.emit(AgentEvent::SessionFacts {
            model: Some(name),
            context_window: None,
        })
        .await;
    }

    /// `/approval POLICY`: which calls wait for the person, from the next
    /// round on (a call of a round in flight is judged again before it
    /// runs, so a stricter policy applies to it at once).
    async fn set_approval(&mut self, policy: ApprovalPolicy) {
        self.setup.approval = policy;
        self.system(
            Severity::Notice,
            format!("approval policy: {}", policy.name()),
        )
        .await;
        self.emit(AgentEvent::ApprovalChanged(policy)).await;
    }

    /// Records what the event shows in the session's log, and sends it to
    /// the UI. A UI that hung up is noticed by the command channel closing,
    /// so a failed send needs no handling here.
    async fn emit(&mut self, event: AgentEvent) {
        self.saving.record(&event);
        let _ = self.ui.send(event).await;
    }

    async fn system(&mut self, severity: Severity, text: impl Into<String>) {
        let text = text.into();
        self.setup.log.line(|| format!("{severity:?}: {text}"));
        self.emit(AgentEvent::System { severity, text }).await;
    }

    fn busy(&self) -> bool {
        self.episode.is_some()
            || self.round.is_some()
            || self.compaction.is_some()
            || self.restoring.is_some()
    }

    /// The body of the request `conversation` makes; with `answer_now`,
    /// one that asks for an answer, not a call.
    fn encode(
        &self,
        conversation: &Conversation,
        answer_now: bool,
    ) -> Result<Vec<u8>, serde_json::Error> {
        conversation.request_body(&self.setup.model, self.offer(), self.sampling(), answer_now)
    }

    /// How requests offer the tools: in the API, or in the prompt once the
    /// server refused that (ADR 0031).
    fn offer(&self) -> ToolOffer<'_> {
        match self.prompted {
            Some(syntax) => ToolOffer::Prompt(syntax, &self.tool_catalogue),
            None => ToolOffer::Api(&self.tool_catalogue),
        }
    }

    /// The sampling fields of every request: the reply is bounded by the
    /// budget's reserve, the share of the window kept free for it.
    fn sampling(&self) -> Sampling {
        Sampling {
            temperature: self.setup.temperature,
            seed: self.setup.seed,
            max_tokens: Some(self.budget.reserve()),
            return_progress: self.llama_cpp,
            stop: self
                .prompted
                .and_then(Syntax::result_opener)
                .or(self.template_result_opener)
                .map(|opener| [opener]),
        }
    }

    async fn prompt(&mut self, text: String) {
        if self.busy() {
            self.system(
                Severity::Notice,
                "the agent is still busy; that prompt was not sent (↑ in the input brings it back)",
            )
            .await;
            return;
        }
        if text.len() as u64 > PROMPT_MAX_BYTES {
            // The input box and `exec` stop such a prompt first; whatever
            // else drives the agent gets the same answer.
            self.system(
                Severity::Error,
                format!(
                    "a prompt holds at most {} MiB; that one was not sent",
                    PROMPT_MAX_BYTES >> 20
                ),
            )
            .await;
            self.emit(AgentEvent::Phase(Phase::Idle)).await;
            self.emit(AgentEvent::TurnDone).await;
            return;
        }
        self.saving.record_prompt(&text);
        self.run_prompt(text).await;
    }

    /// Runs a turn for the person's words, already in the saved log: the
    /// files they name are read first (ADR 0038), then the model is asked.
    async fn run_prompt(&mut self, text: String) {
        self.setup
            .log
            .line(|| format!("prompt: {} bytes", text.len()));
        let attached = self.attach(&text).await;
        self.take_words(text);
        self.save().await;
        if attached.is_empty() {
            self.next_request().await;
        } else {
            self.conversation
                .push_assistant(String::new(), attached.assistant_calls());
            self.start_round(attached).await;
        }
    }

    /// The round that reads the files `text` names (ADR 0038), empty when
    /// it names none in the project. The names are looked up on the
    /// blocking pool, for at most [`ATTACH_LOOKUP_TIMEOUT`]: a stalled
    /// mount delays the prompt, never stops it. The calls' ids are made
    /// up as for calls that come without one.
    async fn attach(&mut self, text: &str) -> Round {
        let ids = MadeUpIds::attached(self.episodes_started + 1);
        let workspace = Arc::clone(&self.setup.tools.workspace);
        let (text, bare) = (text.to_owned(), self.setup.attach_named_files);
        let lookup =
            tokio::task::spawn_blocking(move || mentions::attach(&*workspace, &text, bare, ids));
        let requests = match tokio::time::timeout(ATTACH_LOOKUP_TIMEOUT, lookup).await {
            Ok(Ok(requests)) => requests,
            Ok(Err(e)) => {
                self.setup
                    .log
                    .line(|| format!("files named: {}", task_failure("file lookup", &e)));
                Vec::new()
            }
            Err(_) => {
                self.setup
                    .log
                    .line(|| "files named: the lookup took too long; none attached".to_owned());
                Vec::new()
            }
        };
        if !requests.is_empty() {
            self.episodes_started += 1;
        }
        Round::for_person(requests, &self.setup.registry, &self.setup.tools)
    }

    /// The person's words join the conversation, and a turn starts for
    /// them: the repeat counts, the answer-now flag and the step count
    /// start again, the checkpoints begin a turn (what rewind undoes; a
    /// rewind point only for words that count as a prompt, so the points
    /// stay in step with [`Conversation::prompts`]), and so do the files
    /// seen.
    fn take_words(&mut self, text: String) {
        self.repeats.reset();
        self.answer_now = false;
        self.steps = 0;
        self.wall_retried = false;
        self.conversation.push_user(text);
        let prompt = self
            .conversation
            .messages()
            .last()
            .is_some_and(conversation::is_prompt);
        self.setup.tools.checkpoints.lock().begin_turn(prompt);
        self.setup.tools.known.begin_turn();
    }

    async fn cancel(&mut self) {
        if self.episode.is_some() {
            self.end_episode(EpisodeEnd::Interrupted).await;
        } else if self.round.is_some() {
            self.cancel_round().await;
        } else if self.compaction.is_some() {
            self.cancel_compaction().await;
        } else if self.restoring.is_some() {
            self.cancel_restore().await;
        } else {
            // Nothing runs: confirm it, so a UI that believes otherwise
            // (a prompt it could not deliver) returns to idle.
            self.emit(AgentEvent::Phase(Phase::Idle)).await;
            self.emit(AgentEvent::TurnDone).await;
        }
    }

    /// Where requests go; when no client could be built, the entry saying
    /// why, the turn ended, and `None`.
    async fn endpoint_or_end_turn(&mut self) -> Option<Endpoint> {
        match &self.setup.endpoint {
            Ok(endpoint) => Some(endpoint.clone()),
            Err(why) => {
                let text = why.to_string();
                self.system(Severity::Error, text).await;
                self.end_turn().await;
                None
            }
        }
    }

    /// A request body; when it could not be encoded, the entry saying why,
    /// the turn ended, and `None`.
    async fn body_or_end_turn(
        &mut self,
        encoded: Result<Vec<u8>, serde_json::Error>,
    ) -> Option<Vec<u8>> {
        match encoded {
            Ok(body) => Some(body),
            Err(e) => {
                self.system(Severity::Error, format!("cannot encode the request: {e}"))
                    .await;
                self.end_turn().await;
                None
            }
        }
    }

    /// While the person types: sends the conversation as it stands,
    /// asking for one token, so the server reads it into its prompt cache
    /// now rather than after the next prompt (ADR 0032). On llama.cpp a
    /// saved slot spares most of the reading (ADR 0034): a session just
    /// opened from its file restores the slot saved with it; otherwise the
    /// slot of the fixed prefix is restored, and only what follows the
    /// prefix is read. A new session's warm-up that had to read the prefix
    /// saves it. Invisible; an outcome only reaches the log.
    fn warm_cache(&mut self) {
        self.stop_warming();
        let resumed = std::mem::take(&mut self.restore_slot);
        let Ok(endpoint) = &self.setup.endpoint else {
            return;
        };
        if !self.setup.warm_cache || self.setup.headless {
            return;
        }
        let Some(body) = self.warm_body(&self.conversation) else {
            return;
        };
        let session = self.slot_file().filter(|_| resumed);
        let prefix_only = self.conversation.messages().len() == 1;
        // A conversation of the prefix alone is its own prefix request.
        let prefix = if prefix_only {
            self.slots_on()
                .then(|| slots::prefix_file_name(&body, &self.setup.model))
        } else {
            self.prefix_slot_file()
        };
        let (endpoint, log) = (endpoint.clone(), self.setup.log.clone());
        self.warming = Some(tokio::spawn(async move {
            let started = std::time::Instant::now();
            let restore =
                async |file: &str| slot_logged(&endpoint, SlotAction::Restore, file, &log).await;
            if let Some(file) = &session
                && restore(file).await
            {
                return;
            }
            let prefix_restored = match &prefix {
                Some(file) => restore(file).await,
                None => false,
            };
            if prefix_restored && prefix_only {
                return;
            }
            log.line(|| format!("cache warm-up: {} bytes", body.len()));
            if let Err(e) = stream::warm(&endpoint, &body).await {
                let secs = started.elapsed().as_secs_f64();
                log.line(|| format!("cache warm-up: failed after {secs:.1}s: {e}"));
                return;
            }
            let secs = started.elapsed().as_secs_f64();
            log.line(|| format!("cache warm-up: done in {secs:.1}s"));
            if let Some(file) = prefix.filter(|_| prefix_only) {
                slot_logged(&endpoint, SlotAction::Save, &file, &log).await;
            }
        }));
    }

    /// The warm-up request for `conversation`: the real request's body,
    /// asking for one token.
    fn warm_body(&self, conversation: &Conversation) -> Option<Vec<u8>> {
        let sampling = Sampling {
            max_tokens: Some(1),
            ..self.sampling()
        };
        conversation
            .request_body(&self.setup.model, self.offer(), sampling, false)
            .ok()
    }

    /// Whether the server's slot is saved and restored: a llama.cpp server
    /// on which the warm-up is on, the same idle work kept across runs
    /// (ADR 0034).
    fn slots_on(&self) -> bool {
        self.llama_cpp && self.setup.warm_cache && !self.setup.headless
    }

    /// The file the slot of a new session's fixed prefix is saved under,
    /// when slots are on.
    fn prefix_slot_file(&self) -> Option<String> {
        if !self.slots_on() {
            return None;
        }
        let fresh = Conversation::new(&self.setup.system_prompt);
        let body = self.warm_body(&fresh)?;
        Some(slots::prefix_file_name(&body, &self.setup.model))
    }

    /// Tells the UI the project's files, for completing `@` (ADR 0038):
    /// walked on the blocking pool, sent when done. While one walk runs
    /// no other starts (a walk cannot be stopped, and one stalled on a
    /// mount must not gather more behind it). Not in headless runs, which
    /// have no input box.
    fn list_files(&mut self) {
        let walking = self.listing.as_ref().is_some_and(|l| !l.is_finished());
        if self.setup.headless || walking {
            return;
        }
        let (workspace, ui) = (Arc::clone(&self.setup.tools.workspace), self.ui.clone());
        self.listing = Some(tokio::spawn(async move {
            let walk =
                tokio::task::spawn_blocking(move || crate::tools::project_files(&*workspace));
            if let Ok(files) = walk.await {
                let _ = ui.send(AgentEvent::ProjectFiles(files)).await;
            }
        }));
    }

    /// Stops the warm-up, if any: a real request is about to be sent, and
    /// the server should read that one, not finish the warm-up first.
    fn stop_warming(&mut self) {
        if let Some(task) = self.warming.take() {
            task.abort();
        }
    }

    /// Whether the next request asks for an answer, not a call: the last
    /// step of a turn does, and so does one after a repeat that gave
    /// nothing new, as a turn should end with an answer (ADR 0015). The
    /// ask stands until a reply comes: a retry of this step asks too.
    fn answers_now(&self) -> bool {
        self.answer_now || self.steps + 1 >= self.setup.max_steps
    }

    /// Sends the conversation as it stands: the budget was looked at
    /// already ([`Agent::next_request`]).
    async fn start_episode(&mut self) {
        let answer_now = self.answers_now();
        let encoded = self.encode(&self.conversation, answer_now);
        let Some(body) = self.body_or_end_turn(encoded).await else {
            return;
        };
        self.send(body, answer_now).await;
    }

    /// Starts the episode that sends `body`, the conversation as it
    /// stands encoded, asking for an answer when `answer_now`.
    async fn send(&mut self, body: Vec<u8>, answer_now: bool) {
        self.stop_warming();
        let Some(endpoint) = self.endpoint_or_end_turn().await else {
            return;
        };
        self.steps += 1;
        self.episodes_started += 1;
        self.sent_since_open = true;
        self.setup.log.line(|| {
            format!(
                "request: step {} of the turn, {} bytes",
                self.steps,
                body.len()
            )
        });
        // Ids the agent makes up for calls that came without one are unique
        // per episode, so a result can never be matched to another round's
        // call.
        let ids = MadeUpIds::calls(self.episodes_started);
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let body_bytes = body.len();
        let setup = EpisodeSetup {
            ids,
            // Calls offered in the prompt come back as text, whatever the
            // setting said of native ones.
            tool_syntax: match (self.prompted, self.setup.tool_syntax) {
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
        self.episode = Some(Episode {
            events: rx,
            task,
            content: String::new(),
            reasoning: false,
            body_bytes,
            usage: None,
            finish: None,
            announced: Vec::new(),
        });
        self.emit(AgentEvent::Phase(Phase::Streaming)).await;
    }

    /// Handles one stream event; `None` means the stream task ended without
    /// saying how (it panicked or was dropped).
    async fn on_stream_event(&mut self, event: Option<StreamEvent>) {
        let Some(episode) = self.episode.as_mut() else {
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
    async fn end_episode(&mut self, end: EpisodeEnd) {
        let Some(episode) = self.episode.take() else {
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
                if self.prompted.is_none() && episode.announced.is_empty() =>
            {
                recover = Some(Recover::PromptedTools);
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
                    if !self.wall_retried && episode.announced.is_empty() {
                        recover = Some(Recover::Wall(why.to_string()));
                    }
                }
                if recover.is_none() {
                    self.system(Severity::Error, why.to_string()).await;
                }
            }
            EpisodeEnd::Lost(why) => {
                self.system(Severity::Error, format!("{why}; the partial reply is kept"))
                    .await;
            }
            EpisodeEnd::Complete(_) | EpisodeEnd::Interrupted => {}
        }
        if recover.is_none() {
            self.answer_now = false;
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
            self.setup.approval,
            &self.setup.registry,
            &self.setup.tools,
        );
        // An empty reply is not sent back: it would teach the model nothing
        // and some providers refuse an assistant message with no content.
        if had_text || !round.is_empty() {
            self.conversation
                .push_assistant(episode.content, round.assistant_calls());
        }
        if round.is_empty() {
            match recover {
                Some(Recover::Wall(error)) => self.recover_from_wall(error).await,
                Some(Recover::PromptedTools) => self.offer_tools_in_the_prompt().await,
                None => self.end_turn().await,
            }
            return;
        }
        match reply_end {
            ReplyEnd::Complete => self.start_round(round).await,
            ReplyEnd::Interrupted => self.abandon_round(round, Abandon::Interrupted).await,
            ReplyEnd::Failed => self.abandon_round(round, Abandon::Failed).await,
        }
    }

    /// The server refused the API's tools: the same step is sent again
    /// with them in the prompt, and so is every later one (ADR 0031).
    async fn offer_tools_in_the_prompt(&mut self) {
        let syntax = match self.setup.tool_syntax {
            ToolSyntax::Only(syntax) => syntax,
            ToolSyntax::Auto | ToolSyntax::Native => Syntax::Fenced,
        };
        self.prompted = Some(syntax);
        self.system(
            Severity::Notice,
            format!(
                "the server refused the request's tools; offering them in the prompt instead \
                 ({} syntax) for the rest of this run",
                syntax.name()
            ),
        )
        .await;
        // The refused request was no step of the model's.
        self.steps = self.steps.saturating_sub(1);
        self.start_episode().await;
    }

    /// The turn is over: idle, done; then the session is saved.
    async fn end_turn(&mut self) {
        self.emit(AgentEvent::Phase(Phase::Idle)).await;
        self.emit(AgentEvent::TurnDone).await;
        self.list_files();
        // After the UI is told, so the person never waits for the disk; a
        // prompt sent meanwhile is read once the save is done.
        self.save().await;
    }
}

/// How a failed episode is recovered from, instead of ending the turn.
enum Recover {
    /// The request did not fit: compact and retry (this error otherwise).
    Wall(String),
    /// The server refused the API's tools: offer them in the prompt.
    PromptedTools,
}

/// Asks the server to save or restore its slot as `file`, and writes how
/// that went to the log; whether it did (ADR 0034).
async fn slot_logged(endpoint: &Endpoint, action: SlotAction, file: &str, log: &Log) -> bool {
    let started = std::time::Instant::now();
    let outcome = slots::act(endpoint, action, file).await;
    let secs = started.elapsed().as_secs_f64();
    let (done, not_done) = match action {
        SlotAction::Save => ("saved to", "not saved to"),
        SlotAction::Restore => ("restored from", "not restored from"),
    };
    log.line(|| match &outcome {
        Ok(tokens) => format!("slot {done} {file}: {tokens} tokens in {secs:.1}s"),
        Err(e) => format!("slot {not_done} {file}: {e}"),
    });
    outcome.is_ok()
}

async fn next_stream_event(episode: &mut Option<Episode>) -> Option<StreamEvent> {
    match episode {
        Some(episode) => episode.events.recv().await,
        None => std::future::pending().await,
    }
}
