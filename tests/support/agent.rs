//! Drives the agent actor from a test: an endpoint for the scripted (or
//! real) server, and a harness that sends `UiCommand`s and collects
//! `AgentEvent`s.

use std::path::Path;
use std::time::Duration;

use dashfloat::agent::{self, AgentSetup, ApprovalPolicy, Approvals};
use dashfloat::llm::classify::RequestContext;
use dashfloat::llm::discover::Questions;
use dashfloat::llm::stream::Endpoint;
use dashfloat::protocol::{AgentEvent, CallId, Decision, UiCommand};
use dashfloat::tools::{Registry, ToolContext};
use tokio::sync::mpsc;

/// How long a test waits for one event before failing.
pub const EVENT_WAIT: Duration = Duration::from_secs(20);

/// An endpoint at `base_url` with short, test-friendly timeouts.
pub fn endpoint(base_url: &str) -> Endpoint {
    Endpoint {
        client: dashfloat::llm::build_client(Duration::from_secs(5), base_url)
            .expect("http client"),
        context: RequestContext {
            base_url: base_url.to_string(),
            model: "test-model".into(),
            key_var: "OPENAI_API_KEY".into(),
            request_timeout: Duration::from_secs(120),
            wire: dashfloat::llm::wires::Wire::Chat,
        },
        api_key: None,
        headers: Vec::new(),
        idle_timeout: Duration::from_secs(120),
    }
}

/// A running agent and its two channels.
pub struct AgentHarness {
    /// Commands to the agent.
    pub commands: mpsc::Sender<UiCommand>,
    /// Events from the agent.
    pub events: mpsc::Receiver<AgentEvent>,
    /// The agent's task.
    pub task: tokio::task::JoinHandle<()>,
    /// The working directory, when the harness made one.
    pub dir: Option<tempfile::TempDir>,
}

/// The setup tests use: tools rooted at `root`, the given policy, a short
/// command timeout.
pub fn setup(base_url: &str, root: &Path, approval: ApprovalPolicy) -> AgentSetup {
    let mut tools = ToolContext::new(root).expect("tool root");
    tools.exec_timeout = Duration::from_secs(30);
    AgentSetup {
        endpoint: Ok(endpoint(base_url)),
        model: "test-model".into(),
        system_prompt: "system prompt".into(),
        tools,
        registry: Registry::builtin(),
        // What this kernel's sandbox enforces, as at start-up; nothing
        // remembered unless a test gives the project a rules file.
        approval: Approvals::new(approval, dashfloat::agent::WorkspaceWrite::Probed),
        // Every command asks unless a test turns the analyser on.
        read_only: None,
        headless: false,
        max_steps: dashfloat::bounds::DEFAULT_MAX_STEPS,
        temperature: None,
        seed: None,
        log: dashfloat::log::Log::off(),
        // Scripts answer chat requests only, unless a test asks the server.
        questions: Questions::default(),
        // Large enough that no test compacts unless it sets a window.
        context_window: 128_000,
        max_output: None,
        compact_at: dashfloat::bounds::DEFAULT_COMPACT_AT,
        // Saving is off unless a test points it at a temporary directory.
        sessions: None,
        tool_syntax: dashfloat::llm::adapters::ToolSyntax::Auto,
        // Scripts answer the requests a test expects; a test of the
        // warm-up turns it on.
        warm_cache: false,
        // Files a prompt names are read first, as by default.
        attach_named_files: true,
        ask_to_act: true,
        ask_to_look: true,
        // Scripts expect the person's words alone; a test of the project
        // overview turns it on.
        project_overview: false,
        // No MCP server unless a test starts its own.
        mcp: None,
        mcp_trust: None,
        // The person's commands only where a test makes some.
        command_dirs: Vec::new(),
        // No hook unless a test configures its own.
        hooks: Vec::new(),
        hooks_trust: None,
    }
}

/// Starts an agent with `setup`.
pub fn start_with(setup: AgentSetup) -> AgentHarness {
    let (commands, command_rx) = mpsc::channel(8);
    let (event_tx, events) = mpsc::channel(4096);
    let task = tokio::spawn(agent::run(setup, command_rx, event_tx));
    AgentHarness {
        commands,
        events,
        task,
        dir: None,
    }
}

/// Starts an agent against `base_url` in a fresh temporary working
/// directory that lives as long as the harness.
pub fn start_in_temp(base_url: &str, approval: ApprovalPolicy) -> AgentHarness {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = start_with(setup(base_url, dir.path(), approval));
    harness.dir = Some(dir);
    harness
}

/// Starts an agent talking to `base_url` with tools rooted at `root`.
pub fn start(base_url: &str, root: &Path) -> AgentHarness {
    start_with(setup(base_url, root, ApprovalPolicy::Ask))
}

impl AgentHarness {
    /// Sends a command.
    pub async fn send(&self, cmd: UiCommand) {
        self.commands.send(cmd).await.expect("agent gone");
    }

    /// Sends a prompt.
    pub async fn prompt(&self, text: &str) {
        self.send(UiCommand::Prompt { text: text.into() }).await;
    }

    /// Answers a confirmation.
    pub async fn decide(&self, id: &CallId, decision: Decision) {
        self.send(UiCommand::Decide {
            id: id.clone(),
            decision,
        })
        .await;
    }

    /// Events until (and including) `TurnDone`.
    pub async fn turn(&mut self) -> Vec<AgentEvent> {
        self.until(|e| *e == AgentEvent::TurnDone).await
    }

    /// Events until one matches `pred` (included). The project's file
    /// listing and its custom commands, sent from their own task at start
    /// and after each turn, are left out unless `pred` asks for them:
    /// where they fall among the others is not fixed.
    pub async fn until(&mut self, pred: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        loop {
            let ev = tokio::time::timeout(EVENT_WAIT, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("no matching event; so far: {out:#?}"))
                .expect("agent hung up");
            let hit = pred(&ev);
            if !hit
                && matches!(
                    ev,
                    AgentEvent::ProjectFiles(_) | AgentEvent::CustomCommands { .. }
                )
            {
                continue;
            }
            out.push(ev);
            if hit {
                return out;
            }
        }
    }

    /// Waits for the next confirmation and returns its call id.
    pub async fn next_confirm(&mut self) -> (CallId, Vec<AgentEvent>) {
        let events = self.until(|e| matches!(e, AgentEvent::Confirm(_))).await;
        let Some(AgentEvent::Confirm(req)) = events.last() else {
            unreachable!()
        };
        (req.id.clone(), events)
    }
}

/// The reply text in a list of events.
pub fn reply_text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AssistantDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// The texts of the system entries in a list of events.
pub fn system_texts(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::System { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The commands remembered for the project at `root`, kept in
/// `config_dir` (a test's own), as start-up reads them: none yet.
pub fn remembered(config_dir: &Path, root: &Path) -> dashfloat::agent::Remembered {
    let store = dashfloat::permissions::Store::new(config_dir, root);
    dashfloat::agent::Remembered {
        rules: store.load().expect("rules"),
        store: Some(store),
    }
}

/// The tool results a request carried, each parsed from its JSON text, in
/// order.
pub fn tool_results(body: &serde_json::Value) -> Vec<serde_json::Value> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().expect("content")).expect("json"))
        .collect()
}
