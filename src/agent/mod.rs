//! The agent actor: owns the conversation and the tool loop. It starts one
//! stream task per model episode and one task per tool call (and per
//! preview), forwards what happens to the UI as [`AgentEvent`]s, decides
//! which calls wait for the person, and keeps the conversation valid on
//! every way a turn can end. It never blocks on I/O itself.

mod acting;
pub(crate) mod budget;
pub(crate) mod compact;
pub(crate) mod conversation;
mod episode;
mod hooks;
pub(crate) mod images;
pub mod instructions;
mod looking;
mod mcp;
mod mentions;
mod opening;
mod outcome;
mod permissions;
mod policy;
mod priming;
mod project_overview;
pub(crate) mod repeat;
mod restoring;
mod round;
mod saving;
mod server;
mod tickets;
mod trusting;
mod turn;
mod turn_results;

pub use budget::Budget;

pub(crate) use budget::{COMPACT_AT_MAX, COMPACT_AT_MIN, DEFAULT_COMPACT_AT};
pub use conversation::{AssistantCall, Conversation, Pruned, system_prompt};
pub use policy::{ApprovalPolicy, Approvals, Remembered, SandboxScope, WorkspaceWrite};
pub use priming::{PRIME_TIMEOUT, Primed, prime};
pub use repeat::{Repeat, RepeatDetector};

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle, JoinSet};

use crate::hooks::{Hook, Ran, SessionSource, StopReason};
use crate::llm::adapters::{OfferedTools, ToolSyntax};
use crate::llm::discover::{self, Questions};
use crate::llm::slots::{self, SlotAction, SlotError};
use crate::llm::stream::{self, Endpoint, EndpointError};
use crate::llm::tool_calls::MadeUpIds;
use crate::llm::wire::{Image, Role, Sampling};
use crate::llm::wires::Wire;
use crate::log::Log;
use crate::mcp::McpServers;
use crate::protocol::{AgentEvent, PROMPT_MAX_BYTES, Phase, Severity, TransportError, UiCommand};
use crate::session::SessionSetup;
use crate::tools::{Analyser, Registry, ToolContext};
use crate::trust::TrustStore;

use conversation::{AnswerNow, ToolOffer};
use episode::EpisodeEnd;
use restoring::Direction;
use round::{Round, ToolEvent};
use saving::{Saving, next_writer_status};
use server::ServerFacts;
use tickets::Tickets;
use turn::{Progress, ServerEvent, Turn, Wanted};

/// Stream events buffered between a stream task and the agent; the stream
/// task waits (and so reads no further from the socket) when it is full.
pub(crate) const STREAM_QUEUE: usize = 256;
/// Tool and preview results buffered for the agent; at most one per call
/// of an episode is ever outstanding, and an episode has at most 64.
const TOOL_QUEUE: usize = 64;
/// How long looking up the files a prompt names may take before the
/// prompt goes on without them (ADR 0038).
const ATTACH_LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
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
    /// The model every request asks for: the one place it is kept, stamped
    /// on the endpoint each time it is used ([`Agent::endpoint`]).
    pub model: String,
    /// The system prompt opening the conversation.
    pub system_prompt: String,
    /// Where tools run.
    pub tools: ToolContext,
    /// The tools the model is offered: the built-ins, and those
    /// registered at run time (ADR 0042).
    pub registry: Registry,
    /// Which calls wait for the person, which sandbox a command runs in,
    /// and the commands remembered for the project (ADR 0014, 0044).
    pub approval: Approvals,
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
    /// A prompt that asks for a change or a run, answered first in words
    /// with no call and no question, is followed by one ask to act
    /// (ADR 0049).
    pub ask_to_act: bool,
    /// A question about a name, answered with that name when no tool
    /// result has shown it, is followed by one ask to look (ADR 0049).
    pub ask_to_look: bool,
    /// A new conversation's first prompt goes out with an overview of
    /// the project (ADR 0048).
    pub project_overview: bool,
    /// The MCP servers whose tools are offered beside the built-ins;
    /// `None` when they are off (`--no-mcp`). ADR 0045.
    pub mcp: Option<McpServers>,
    /// Where the person's trust of the project's `.mcp.json` is kept;
    /// `None` without a configuration directory.
    pub mcp_trust: Option<TrustStore>,
    /// The person's directories of custom commands, in the order their
    /// names win (ADR 0053); the project's are found in it.
    pub command_dirs: Vec<std::path::PathBuf>,
    /// The hooks that run: the person's, then a trusted project's
    /// (ADR 0054).
    pub hooks: Vec<Hook>,
    /// Where the person's trust of the project's `.dashfloat/config.toml`
    /// is kept; `None` without a configuration directory.
    pub hooks_trust: Option<TrustStore>,
}

/// Whose words a prompt is: the person's own (typed, pasted, piped to
/// `exec`, or a command of theirs), or a project's custom command's.
/// Only the person's may name an image outside the project (ADR 0055).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Words {
    /// The person's.
    Person,
    /// A project's command file's.
    Project,
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
    /// What the agent is doing for the person; changed only through its
    /// transitions (`turn.rs`).
    turn: Turn,
    /// How far the turn for the latest prompt has gone.
    progress: Progress,
    /// Whose words the latest prompt is.
    words: Words,
    repeats: RepeatDetector,
    /// The numbers handed out: episodes, previews, restores.
    tickets: Tickets,
    budget: Budget,
    /// What is known of the server.
    server: ServerFacts,
    /// The warm-up request in flight, stopped by any real request.
    warming: Option<JoinHandle<Warmed>>,
    /// The walk listing the project's files for the UI; no other starts
    /// while it runs.
    listing: Option<JoinHandle<()>>,
    /// The project overview the open conversation's first prompt takes
    /// (ADR 0048).
    overview: project_overview::Pending,
    /// A saved session was just opened: the warm-up first asks the server
    /// to restore the slot saved with it.
    restore_slot: bool,
    /// A request of the open session was sent: its slot is worth saving.
    sent_since_open: bool,
    saving: Saving,
    /// The MCP servers' generation the offered tools were read at.
    mcp_generation: Option<u64>,
    /// Hooks that run beside the turn (`session_start`); dropped, they
    /// are killed.
    side_hooks: JoinSet<Vec<Ran>>,
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

/// The next change of the MCP servers; `None` once no change can come,
/// and never when there are no servers.
async fn next_change(changes: &mut Option<tokio::sync::watch::Receiver<u64>>) -> Option<()> {
    match changes {
        Some(changes) => match changes.changed().await {
            Ok(()) => Some(()),
            Err(_) => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// The text of the error entry for a task that ended without reporting:
/// a panic (with its message) or an abort. A bug in one task is told in
/// the chat; it never takes the screen down.
pub fn task_failure(task: &str, err: &JoinError) -> String {
    format!("internal error: the {task} task failed: {err}")
}

async fn run_actor(
    setup: AgentSetup,
    commands: mpsc::Receiver<UiCommand>,
    ui: mpsc::Sender<AgentEvent>,
) {
    let (agent, tool_rx) = Agent::new(setup, ui);
    agent.run(commands, tool_rx).await;
}

impl Agent {
    /// The agent as `setup` says, before its start-up has run, telling
    /// `ui` what happens; and the receiving end of its tools' results.
    fn new(
        mut setup: AgentSetup,
        ui: mpsc::Sender<AgentEvent>,
    ) -> (Self, mpsc::Receiver<ToolEvent>) {
        let (tool_tx, tool_rx) = mpsc::channel(TOOL_QUEUE);
        let budget = Budget::new(setup.context_window, setup.max_output, setup.compact_at);
        let saving = Saving::new(setup.sessions.take(), &setup.log);
        // What changes the checkpoints is kept for the journal while
        // saving is on (ADR 0040).
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
            turn: Turn::Idle,
            progress: Progress::default(),
            words: Words::Person,
            repeats: RepeatDetector::default(),
            tickets: Tickets::default(),
            budget,
            server: ServerFacts::default(),
            warming: None,
            listing: None,
            overview: project_overview::Pending::default(),
            restore_slot: false,
            sent_since_open: false,
            mcp_generation: None,
            side_hooks: JoinSet::new(),
        };
        (agent, tool_rx)
    }

    async fn run(
        mut self,
        mut commands: mpsc::Receiver<UiCommand>,
        mut tool_rx: mpsc::Receiver<ToolEvent>,
    ) {
        self.start_mcp();
        let mut mcp_changes = self.setup.mcp.as_ref().map(McpServers::watch);
        self.open_at_start().await;
        self.build_overview();
        self.announce_session().await;
        self.read_instructions().await;
        self.tell_sandbox().await;
        self.start_session_hooks(SessionSource::Startup);
        self.discover().await;
        self.warm_opening().await;
        self.list_files();
        loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    None | Some(UiCommand::Quit) => {
                        self.settle_round(&mut tool_rx).await;
                        break;
                    }
                    Some(UiCommand::Prompt { text }) => self.prompt(text, Words::Person).await,
                    Some(UiCommand::ProjectPrompt { text }) => {
                        self.prompt(text, Words::Project).await;
                    }
                    Some(UiCommand::Cancel) => self.cancel().await,
                    Some(UiCommand::Decide { id, decision }) => self.decide(&id, decision).await,
                    Some(UiCommand::SetModel { name }) => self.set_model(name).await,
                    Some(UiCommand::SetApproval(policy)) => self.set_approval(policy).await,
                    Some(UiCommand::ListPermissions) => self.list_permissions().await,
                    Some(UiCommand::ForgetPermission { rule }) => self.forget_permission(rule).await,
                    Some(UiCommand::Compact { focus }) => self.compact_now(focus).await,
                    Some(UiCommand::Clear) => self.clear().await,
                    Some(UiCommand::Resume { id }) => self.resume(id).await,
                    Some(UiCommand::ListSessions { all }) => self.list_sessions(all).await,
                    Some(UiCommand::Undo) => self.step(Direction::Undo).await,
                    Some(UiCommand::Redo) => self.step(Direction::Redo).await,
                    Some(UiCommand::ListPrompts) => self.list_prompts().await,
                    Some(UiCommand::Rewind { prompt }) => self.rewind(prompt).await,
                    Some(UiCommand::ListMcp) => self.list_mcp().await,
                    Some(UiCommand::RestartMcp { name }) => self.restart_mcp(name).await,
                    Some(UiCommand::TrustMcp) => self.trust_mcp().await,
                    Some(UiCommand::ListHooks) => self.list_hooks().await,
                    Some(UiCommand::TrustHooks) => self.trust_hooks().await,
                },
                Some(()) = next_change(&mut mcp_changes) => self.tell_mcp_notes().await,
                ev = self.turn.next_server_event() => match ev {
                    ServerEvent::Reply(ev) => self.on_stream_event(ev).await,
                    ServerEvent::Summary(ev) => self.on_summary_event(ev).await,
                    ServerEvent::Hooks(ends) => self.turn_hooks_ended(ends).await,
                },
                Some(ends) = self.side_hooks.join_next() => self.side_hooks_ended(ends).await,
                Some(ev) = tool_rx.recv() => self.on_tool_event(ev).await,
                status = next_writer_status(&mut self.saving) => self.writer_said(status).await,
            }
        }
        // A request cut short leaves the server reading it into a slot
        // half filled: nothing worth saving, and the save would wait for
        // the read to end.
        let server_busy = self.turn.server_busy()
            || self
                .warming
                .as_ref()
                .is_some_and(|task| !task.is_finished());
        self.stop_warming();
        if let Some(listing) = self.listing.take() {
            listing.abort();
        }
        match std::mem::take(&mut self.turn) {
            Turn::Streaming(episode) => episode.abort(),
            Turn::Running(round) => round.cancel_all(),
            Turn::Compacting(compaction) => compaction.abort(),
            Turn::Hooking(hooking) => hooking.abort(),
            Turn::Idle | Turn::Restoring(_) => {}
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
    /// discovery timeouts. Failures only reach the log, and are returned
    /// for `dashfloat prime-cache` to tell.
    async fn discover(&mut self) -> Vec<String> {
        let questions = self.setup.questions;
        let Some(endpoint) = self.endpoint() else {
            return Vec::new();
        };
        if questions == Questions::default() {
            return Vec::new();
        }
        let answers = discover::ask(&endpoint, &self.setup.model, questions).await;
        for problem in &answers.problems {
            self.setup
                .log
                .line(|| format!("discovery: {problem} (the configured values stand)"));
        }
        let mut model = None;
        match answers.served.as_slice() {
            [only] => {
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
        self.server.llama_cpp = answers.llama_cpp;
        self.server.template_result_opener = answers.result_opener;
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
        answers.problems
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

    /// Probes once (off the async threads) what the kernel sandbox can
    /// enforce here and, when a part is missing, says once what is not
    /// enforced (ADR 0043).
    async fn tell_sandbox(&mut self) {
        let notice = tokio::task::spawn_blocking(|| crate::tools::sandbox::support().notice());
        match notice.await {
            Ok(Some(text)) => self.system(Severity::Notice, text).await,
            Ok(None) => {}
            Err(err) => {
                let text = task_failure("sandbox probe", &err);
                self.system(Severity::Notice, text).await;
            }
        }
    }

    /// `/model NAME`: every request from the next on asks for `name`,
    /// which may take the images the last one refused (ADR 0055).
    async fn set_model(&mut self, name: String) {
        self.setup.model.clone_from(&name);
        self.server.images_refused = false;
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
    /// runs, so a stricter policy applies to it at once). A policy this
    /// kernel cannot give (`auto` without the workspace-write sandbox) is
    /// refused with what is missing, and the policy stays.
    async fn set_approval(&mut self, policy: ApprovalPolicy) {
        if let Err(why) = self.setup.approval.admit(policy) {
            self.system(Severity::Error, why).await;
            return;
        }
        self.setup.approval.policy = policy;
        let mode = self.setup.approval.mode();
        self.system(
            Severity::Notice,
            format!(
                "approval policy: {} (commands it runs: sandbox {})",
                policy.name(),
                mode.sandbox
            ),
        )
        .await;
        self.emit(AgentEvent::ApprovalChanged(mode)).await;
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

    /// Whether `wanted` is taken now; if not, a notice says why.
    async fn admit(&mut self, wanted: Wanted) -> bool {
        match self.turn.admit(wanted) {
            Ok(()) => true,
            Err(notice) => {
                self.system(Severity::Notice, notice).await;
                false
            }
        }
    }

    /// The body of the request `conversation` makes; with `answer_now`,
    /// one that asks for an answer, not a call.
    fn encode(
        &self,
        conversation: &Conversation,
        answer_now: Option<AnswerNow>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        conversation.request_body(&self.setup.model, self.offer(), self.sampling(), answer_now)
    }

    /// How requests offer the tools: in the API, or in the prompt once the
    /// server refused that (ADR 0031).
    fn offer(&self) -> ToolOffer<'_> {
        match self.server.prompted {
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
            return_progress: self.server.llama_cpp,
            stop: self.server.stop(),
        }
    }

    async fn prompt(&mut self, text: String, words: Words) {
        if !self.admit(Wanted::Prompt).await {
            return;
        }
        self.words = words;
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
        self.submit_prompt(text).await;
    }

    /// Runs a turn for the person's words, already in the saved log: the
    /// files they name are read first (ADR 0038), then the model is asked.
    /// What the prompt's hooks `added` follows the words; nothing in it is
    /// read as a name, nor asked or acted on as the person's (ADR 0054).
    async fn run_prompt(&mut self, text: String, added: Option<String>) {
        self.setup
            .log
            .line(|| format!("prompt: {} bytes", text.len()));
        self.refresh_mcp_tools().await;
        let (attached, images) = self.attach(&text).await;
        let images = self.take_images(images).await;
        self.open_with_overview().await;
        self.take_words(text, added, images);
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
    /// it names none in the project, and the images it names (ADR 0055).
    /// The names are looked up on the blocking pool, for at most
    /// [`ATTACH_LOOKUP_TIMEOUT`]: a stalled mount delays the prompt, never
    /// stops it. The calls' ids are made up as for calls that come
    /// without one.
    async fn attach(&mut self, text: &str) -> (Round, Vec<Result<Image, images::LeftOut>>) {
        let ids = MadeUpIds::attached(self.tickets.upcoming_episode());
        let workspace = Arc::clone(&self.setup.tools.workspace);
        let (text, bare) = (text.to_owned(), self.setup.attach_named_files);
        let outside = self.words == Words::Person;
        let lookup = tokio::task::spawn_blocking(move || {
            mentions::attach(&*workspace, &text, bare, outside, ids)
        });
        let attached = match tokio::time::timeout(ATTACH_LOOKUP_TIMEOUT, lookup).await {
            Ok(Ok(attached)) => attached,
            Ok(Err(e)) => {
                self.setup
                    .log
                    .line(|| format!("files named: {}", task_failure("file lookup", &e)));
                mentions::Attached::default()
            }
            Err(_) => {
                self.setup
                    .log
                    .line(|| "files named: the lookup took too long; none attached".to_owned());
                mentions::Attached::default()
            }
        };
        if !attached.calls.is_empty() {
            self.tickets.next_episode();
        }
        let round = Round::for_person(
            attached.calls,
            &self.setup.approval,
            &self.setup.registry,
            &self.setup.tools,
        );
        (round, attached.images)
    }

    /// The images a prompt goes with, of those it named: a line for each
    /// in the log, with its size, or a notice of why it is left out — it
    /// was not read, the model refused images earlier, or the
    /// conversation holds all the images it keeps (ADR 0055).
    async fn take_images(&mut self, named: Vec<Result<Image, images::LeftOut>>) -> Vec<Image> {
        let mut held = self.conversation.image_bytes();
        let mut taken = Vec::new();
        for image in named {
            match image.and_then(|image| images::admit(image, held, self.server.images_refused)) {
                Ok(image) => {
                    held += image.data.len();
                    let line = format!(
                        "image {} ({})",
                        image.name,
                        images::size(images::file_bytes(&image))
                    );
                    self.system(Severity::Notice, line).await;
                    taken.push(image);
                }
                Err(why) => self.system(Severity::Notice, why.to_string()).await,
            }
        }
        taken
    }

    /// The person's words join the conversation, and a turn starts for
    /// them: the repeat counts, the answer-now flag and the step count
    /// start again, the checkpoints begin a turn (what rewind undoes; a
    /// rewind point only for words that count as a prompt, so the points
    /// stay in step with [`Conversation::prompts`]), and so do the files
    /// seen. `images` go with the words (ADR 0055), and what hooks
    /// `added` after them, which the checks of the words do not read.
    fn take_words(&mut self, text: String, added: Option<String>, images: Vec<Image>) {
        self.repeats.reset();
        let tool_texts: Vec<&str> = self
            .conversation
            .messages()
            .iter()
            .filter(|m| m.role == Role::Tool)
            .filter_map(|m| m.content.as_deref())
            .collect();
        let unseen = looking::unseen_names(&text, &tool_texts);
        self.progress = Progress {
            asks_to_act: acting::asks_to_act(&text),
            only_asks: acting::only_asks(&text),
            unseen,
            stop: Some(StopReason::Complete),
            ..Progress::default()
        };
        let text = match added {
            Some(added) => format!("{text}\n\n{added}"),
            None => text,
        };
        self.conversation.push_prompt(text, images);
        let prompt = self
            .conversation
            .messages()
            .last()
            .is_some_and(conversation::is_prompt);
        self.setup.tools.checkpoints.lock().begin_turn(prompt);
        self.setup.tools.known.begin_turn();
    }

    async fn cancel(&mut self) {
        self.progress.ending(StopReason::Interrupted);
        match &self.turn {
            Turn::Streaming(_) => self.end_episode(EpisodeEnd::Interrupted).await,
            Turn::Running(_) => self.cancel_round().await,
            Turn::Compacting(_) => self.cancel_compaction().await,
            Turn::Restoring(_) => self.cancel_restore().await,
            Turn::Hooking(_) => self.cancel_hooks().await,
            Turn::Idle => {
                // Nothing runs: confirm it, so a UI that believes otherwise
                // (a prompt it could not deliver) returns to idle.
                self.emit(AgentEvent::Phase(Phase::Idle)).await;
                self.emit(AgentEvent::TurnDone).await;
            }
        }
    }

    /// The API requests speak (chat when no client could be built: there
    /// are no requests then).
    fn wire(&self) -> Wire {
        self.setup
            .endpoint
            .as_ref()
            .map_or(Wire::Chat, |endpoint| endpoint.context.wire)
    }

    /// Where requests go, asking for the model in force; `None` when no
    /// client could be built.
    fn endpoint(&self) -> Option<Endpoint> {
        let mut endpoint = self.setup.endpoint.as_ref().ok()?.clone();
        endpoint.context.model.clone_from(&self.setup.model);
        Some(endpoint)
    }

    /// Where requests go; when no client could be built, the entry saying
    /// why, the turn ended, and `None`.
    async fn endpoint_or_end_turn(&mut self) -> Option<Endpoint> {
        match &self.setup.endpoint {
            Ok(_) => self.endpoint(),
            Err(why) => {
                let text = why.to_string();
                self.system(Severity::Error, text).await;
                self.progress.ending(StopReason::Failed);
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
                self.progress.ending(StopReason::Failed);
                self.end_turn().await;
                None
            }
        }
    }

    /// [`Agent::warm_cache`] for a conversation just opened, once its
    /// project overview is built (at most a moment's wait), so the
    /// warm-up can send that ahead too.
    async fn warm_opening(&mut self) {
        if self.setup.warm_cache && !self.setup.headless {
            self.settle_overview().await;
        }
        self.warm_cache();
    }

    /// While the person types: sends the conversation as it stands,
    /// asking for one token, so the server reads it into its prompt cache
    /// now rather than after the next prompt (ADR 0032). On llama.cpp a
    /// saved slot spares most of the reading (ADR 0034): a session just
    /// opened from its file restores the slot saved with it; otherwise the
    /// slot of the fixed prefix is restored, and only what follows the
    /// prefix is read. A new session's warm-up that had to read the prefix
    /// saves it. A new conversation's project overview, ready to go out
    /// with the first prompt, is then sent ahead after the prefix, so the
    /// first prompt's reading is the person's words alone; the prefix's
    /// slot stays the same for every project (ADR 0048). Invisible; an
    /// outcome only reaches the log (and the task's result, which
    /// `dashfloat prime-cache` reports).
    fn warm_cache(&mut self) {
        self.stop_warming();
        let resumed = std::mem::take(&mut self.restore_slot);
        let Some(endpoint) = self.endpoint() else {
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
        let opening = self
            .overview_ready()
            .filter(|_| prefix_only)
            .and_then(|overview| {
                let mut opened = self.conversation.clone();
                opened.push_user(overview.text.clone());
                self.warm_body(&opened)
            });
        let log = self.setup.log.clone();
        self.warming = Some(tokio::spawn(async move {
            let restore =
                async |file: &str| slot_logged(&endpoint, SlotAction::Restore, file, &log).await;
            if let Some(file) = &session
                && restore(file).await.is_ok()
            {
                return Warmed::SessionRestored;
            }
            let prefix_restored = match &prefix {
                Some(file) => restore(file).await.ok(),
                None => None,
            };
            let warmed = match prefix_restored.filter(|_| prefix_only) {
                Some(tokens) => Warmed::PrefixRestored { tokens },
                None => {
                    let secs = match warm_logged(&endpoint, &body, "", &log).await {
                        Ok(secs) => secs,
                        Err(e) => return Warmed::Failed(e),
                    };
                    let saved = match prefix.filter(|_| prefix_only) {
                        Some(file) => {
                            Some(slot_logged(&endpoint, SlotAction::Save, &file, &log).await)
                        }
                        None => None,
                    };
                    Warmed::Read { secs, saved }
                }
            };
            if let Some(opening) = opening {
                let _ = warm_logged(&endpoint, &opening, " with the project overview", &log).await;
            }
            warmed
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
            .request_body(&self.setup.model, self.offer(), sampling, None)
            .ok()
    }

    /// Whether the server's slot is saved and restored: a llama.cpp server
    /// on which the warm-up is on, the same idle work kept across runs
    /// (ADR 0034).
    fn slots_on(&self) -> bool {
        self.server.llama_cpp && self.setup.warm_cache && !self.setup.headless
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
        let command_dirs = self.setup.command_dirs.clone();
        self.listing = Some(tokio::spawn(async move {
            let walk = tokio::task::spawn_blocking(move || {
                let found = crate::commands::find(&*workspace, &command_dirs);
                (crate::tools::project_files(&*workspace), found)
            });
            if let Ok((files, found)) = walk.await {
                let _ = ui.send(AgentEvent::ProjectFiles(files)).await;
                let _ = ui
                    .send(AgentEvent::CustomCommands {
                        found: found.commands,
                        problems: found.problems,
                    })
                    .await;
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

    /// The turn is over: its `stop` hooks run first when a prompt started
    /// it (the turn then closes when they end), else it closes now.
    async fn end_turn(&mut self) {
        if !self.start_stop_hooks().await {
            self.close_turn().await;
        }
    }

    /// The turn closes: idle, done; then the session is saved. Its
    /// results kept whole are let go.
    async fn close_turn(&mut self) {
        self.progress.results.clear();
        self.emit(AgentEvent::Phase(Phase::Idle)).await;
        self.emit(AgentEvent::TurnDone).await;
        self.list_files();
        // After the UI is told, so the person never waits for the disk; a
        // prompt sent meanwhile is read once the save is done.
        self.save().await;
    }
}

/// Sends the warm-up request `body` (`what` says what it holds beyond
/// the conversation), and writes how that went to the log; how long the
/// server took to read it, in seconds, or why it did not.
async fn warm_logged(
    endpoint: &Endpoint,
    body: &[u8],
    what: &str,
    log: &Log,
) -> Result<f64, TransportError> {
    let started = std::time::Instant::now();
    log.line(|| format!("cache warm-up{what}: {} bytes", body.len()));
    let warmed = stream::warm(endpoint, body).await;
    let secs = started.elapsed().as_secs_f64();
    match &warmed {
        Ok(()) => log.line(|| format!("cache warm-up{what}: done in {secs:.1}s")),
        Err(e) => log.line(|| format!("cache warm-up{what}: failed after {secs:.1}s: {e}")),
    }
    warmed.map(|()| secs)
}

/// How a warm-up ended (ADR 0032, 0034). A session only logs it;
/// `dashfloat prime-cache` reports it.
#[derive(Debug)]
enum Warmed {
    /// The slot saved with the session just opened was restored: nothing
    /// was read.
    SessionRestored,
    /// The conversation is the fixed prefix alone, and its saved slot was
    /// restored: nothing was read.
    PrefixRestored {
        /// The tokens the server restored.
        tokens: u64,
    },
    /// The server read the conversation, in `secs`; for the fixed prefix
    /// alone, whether it then saved the slot (the tokens written).
    Read {
        secs: f64,
        saved: Option<Result<u64, SlotError>>,
    },
    /// The warm-up request failed.
    Failed(TransportError),
}

/// Asks the server to save or restore its slot as `file`, and writes how
/// that went to the log; the tokens written or read (ADR 0034).
async fn slot_logged(
    endpoint: &Endpoint,
    action: SlotAction,
    file: &str,
    log: &Log,
) -> Result<u64, SlotError> {
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
    outcome
}
