//! The configured MCP servers, each with its state: started in parallel
//! once the first frame is drawn, restarted on the next call after a
//! crash or a hang (at most [`RESTARTS_MAX`] times), restarted by hand
//! from `/mcp`. Every change of state or of a tool list bumps a
//! generation the agent watches: it reads the tools again at the next
//! turn, so the prefix stays byte-stable within one. ADR 0045.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rmcp::model::Tool;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::log::Log;
use crate::protocol::{McpServerState, McpServerView, McpToolView, Severity};
use crate::safe_text::strip_controls;
use crate::secret::Secret;
use crate::tools::{DynamicTool, ToolContext, ToolFailure};

use super::config::ServerConfig;
use super::connection::{self, CallError, Connection, Variables};
use super::tool::{McpTool, SCHEMA_MAX_BYTES};

/// Restarts of one server after it crashed or hung, at most, in one
/// session (3): a server that keeps failing stays failed, with why.
pub const RESTARTS_MAX: u32 = 3;
/// Notices kept for the agent to show, at most (64); a server that
/// keeps failing cannot grow the queue.
const NOTES_MAX: usize = 64;

/// One server's state.
enum State {
    /// `enabled = false`.
    Disabled,
    /// Being started (or restarted).
    Starting,
    /// Running: its connection.
    Ready {
        connection: Arc<Connection>,
        protocol: String,
    },
    /// It could not be started, or it stopped: why.
    Failed(String),
}

/// One configured server.
pub(super) struct Server {
    pub(super) config: ServerConfig,
    state: Mutex<State>,
    /// Its tools as last listed: still offered while it is restarted
    /// after a crash or a hang, so the model can call them again.
    listed: Mutex<Vec<Tool>>,
    restarts: AtomicU32,
    /// Held while (re)starting, so two calls do not start it twice.
    starting: tokio::sync::Mutex<()>,
    servers: Weak<Inner>,
}

/// What every server shares: where tools run, the log, the notices and
/// the generation.
struct Inner {
    servers: Mutex<Vec<Arc<Server>>>,
    ctx: ToolContext,
    /// The values of the variables the servers' tables name, read at
    /// start-up (credentials are kept out of dashfloat's own environment,
    /// ADR 0013).
    vars: Variables,
    log: Log,
    notes: Mutex<Vec<(Severity, String)>>,
    generation: watch::Sender<u64>,
}

/// The configured servers. Cheap to clone.
#[derive(Clone)]
pub struct McpServers {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.inner.all().iter().map(|s| s.config.name.clone()))
            .finish()
    }
}

impl McpServers {
    /// The servers of `configs`, none started yet; their stdio processes
    /// run through `ctx`'s workspace, their stderr goes to `log`; `var`
    /// reads the variables their tables name, as dashfloat was started.
    pub fn new(
        configs: Vec<ServerConfig>,
        ctx: ToolContext,
        log: Log,
        var: impl Fn(&str) -> Option<String>,
    ) -> McpServers {
        let (generation, _) = watch::channel(0);
        let vars = configs
            .iter()
            .flat_map(ServerConfig::variables)
            .filter_map(|name| Some((name.to_owned(), Secret::new(var(name)?))))
            .collect();
        let servers = McpServers {
            inner: Arc::new(Inner {
                servers: Mutex::new(Vec::new()),
                ctx,
                vars,
                log,
                notes: Mutex::new(Vec::new()),
                generation,
            }),
        };
        servers.add(configs);
        servers
    }

    /// Adds servers (a project's `.mcp.json` once trusted), not started
    /// yet; one named as a server already there is left out, with a
    /// notice. Returns those added.
    pub fn add(&self, configs: Vec<ServerConfig>) -> Vec<String> {
        let mut added = Vec::new();
        for config in configs {
            let mut servers = self.inner.lock_servers();
            if servers.iter().any(|s| s.config.name == config.name) {
                drop(servers);
                self.inner.note(
                    Severity::Notice,
                    format!(
                        "MCP server {}: a server of that name is configured already; the second is left out",
                        strip_controls(&config.name)
                    ),
                );
                continue;
            }
            let state = if config.enabled {
                State::Starting
            } else {
                State::Disabled
            };
            added.push(config.name.clone());
            servers.push(Arc::new(Server {
                config,
                state: Mutex::new(state),
                listed: Mutex::new(Vec::new()),
                restarts: AtomicU32::new(0),
                starting: tokio::sync::Mutex::new(()),
                servers: Arc::downgrade(&self.inner),
            }));
        }
        added
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.lock_servers().is_empty()
    }

    /// Starts the enabled servers among `names` (every one when `None`),
    /// each in a task of its own.
    pub fn start(&self, names: Option<&[String]>) {
        for server in self.inner.all() {
            let wanted = names.is_none_or(|names| names.contains(&server.config.name));
            if server.config.enabled && wanted {
                tokio::spawn(async move { server.start().await });
            }
        }
    }

    /// Restarts the server named `name` by hand (`/mcp restart`), its
    /// restart count set back; false when there is none of that name.
    pub fn restart(&self, name: &str) -> bool {
        let Some(server) = self.inner.all().into_iter().find(|s| s.config.name == name) else {
            return false;
        };
        server.restarts.store(0, Ordering::Relaxed);
        tokio::spawn(async move { server.start().await });
        true
    }

    /// A receiver told of every change of a server's state or tools.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// Waits until no server is starting any more (for `dashfloat exec`,
    /// whose prompt must not go before the tools it may need); each
    /// start is bounded by its startup timeout.
    pub async fn settled(&self) {
        let mut changes = self.watch();
        while !self.starting().is_empty() {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// The names of the servers still starting.
    pub fn starting(&self) -> Vec<String> {
        self.inner
            .all()
            .iter()
            .filter(|s| matches!(*s.state(), State::Starting))
            .map(|s| s.config.name.clone())
            .collect()
    }

    /// The notices gathered since last asked: servers that failed, tools
    /// left out or renamed.
    pub fn take_notes(&self) -> Vec<(Severity, String)> {
        std::mem::take(&mut *self.inner.lock_notes())
    }

    /// The tools of every server that is ready, being started, or to be
    /// started again on the next call, as last listed, in configuration
    /// order, named
    /// `mcp__SERVER__TOOL` (made callable, unique among themselves and
    /// apart from `taken`), with notices for names that were changed.
    pub fn tools(&self, taken: impl Fn(&str) -> bool) -> Vec<Arc<McpTool>> {
        let mut out: Vec<Arc<McpTool>> = Vec::new();
        for server in self.inner.all() {
            if !server.offering() {
                continue;
            }
            let listed = server.listed().clone();
            for tool in listed {
                if !server.config.offers(&tool.name) {
                    continue;
                }
                let schema_bytes = serde_json::to_vec(&*tool.input_schema).map_or(0, |b| b.len());
                if schema_bytes > SCHEMA_MAX_BYTES {
                    self.inner.note(
                        Severity::Notice,
                        format!(
                            "MCP server {}: the tool {:?} is left out: its input schema is {} KiB, more than the {} KiB a tool may add to every request",
                            strip_controls(&server.config.name),
                            strip_controls(&tool.name),
                            schema_bytes / 1024,
                            SCHEMA_MAX_BYTES / 1024
                        ),
                    );
                    continue;
                }
                let wanted = super::names::tool_name(&server.config.name, &tool.name);
                let name = super::names::unique(wanted.clone(), |n| {
                    taken(n) || out.iter().any(|t| t.name() == n)
                });
                if name
                    != format!(
                        "{}{}__{}",
                        super::names::PREFIX,
                        server.config.name,
                        tool.name
                    )
                {
                    self.inner.note(
                        Severity::Notice,
                        format!(
                            "MCP server {}: the tool {:?} is offered as {name}",
                            strip_controls(&server.config.name),
                            strip_controls(&tool.name)
                        ),
                    );
                }
                out.push(Arc::new(McpTool::new(name, Arc::clone(&server), &tool)));
            }
        }
        out
    }

    /// What `/mcp` shows of each server.
    pub fn views(&self, cost: impl Fn(&str) -> u64) -> Vec<McpServerView> {
        self.inner
            .all()
            .iter()
            .map(|server| {
                let state = match &*server.state() {
                    State::Disabled => McpServerState::Disabled,
                    State::Starting => McpServerState::Starting,
                    State::Failed(why) => McpServerState::Failed(why.clone()),
                    State::Ready { protocol, .. } => McpServerState::Ready {
                        protocol: protocol.clone(),
                    },
                };
                let tools = server
                    .listed()
                    .iter()
                    .map(|tool| McpToolView {
                        name: strip_controls(&tool.name).into_owned(),
                        description: strip_controls(tool.description.as_deref().unwrap_or(""))
                            .lines()
                            .next()
                            .unwrap_or("")
                            .chars()
                            .take(120)
                            .collect(),
                        offered: server.config.offers(&tool.name),
                        read_only_hint: tool.annotations.as_ref().and_then(|a| a.read_only_hint)
                            == Some(true),
                        approved: server.config.approval.approves(&tool.name),
                    })
                    .collect();
                McpServerView {
                    name: strip_controls(&server.config.name).into_owned(),
                    state,
                    tokens: cost(&server.config.name),
                    tools,
                }
            })
            .collect()
    }
}

impl Inner {
    fn lock_servers(&self) -> MutexGuard<'_, Vec<Arc<Server>>> {
        self.servers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every server, as it is now.
    fn all(&self) -> Vec<Arc<Server>> {
        self.lock_servers().clone()
    }

    fn lock_notes(&self) -> MutexGuard<'_, Vec<(Severity, String)>> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn note(&self, severity: Severity, text: String) {
        let mut notes = self.lock_notes();
        if notes.len() < NOTES_MAX {
            notes.push((severity, text));
        }
    }

    fn changed(&self) {
        self.generation.send_modify(|g| *g += 1);
    }
}

impl Server {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn listed(&self) -> MutexGuard<'_, Vec<Tool>> {
        self.listed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether its tools are offered: unless it is disabled, or failed
    /// with no restart left (a call would only fail).
    fn offering(&self) -> bool {
        match &*self.state() {
            State::Disabled => false,
            State::Failed(_) => self.restarts.load(Ordering::Relaxed) < RESTARTS_MAX,
            State::Starting | State::Ready { .. } => true,
        }
    }

    fn set(&self, state: State) {
        *self.state() = state;
        if let Some(servers) = self.servers.upgrade() {
            servers.changed();
        }
    }

    /// Starts (or restarts) the server and lists its tools.
    async fn start(self: Arc<Self>) {
        let _one = self.starting.lock().await;
        let Some(servers) = self.servers.upgrade() else {
            return;
        };
        self.set(State::Starting);
        let weak = Arc::downgrade(&self);
        let on_list_changed = Box::new(move || {
            if let Some(server) = weak.upgrade() {
                tokio::spawn(server.relist());
            }
        });
        let name = strip_controls(&self.config.name).into_owned();
        match connection::connect(
            &self.config,
            &servers.ctx,
            &servers.vars,
            &servers.log,
            on_list_changed,
        )
        .await
        {
            Ok(started) => {
                if let Some(cut) = started.cut {
                    servers.note(Severity::Notice, format!("MCP server {name}: {cut}"));
                }
                servers.log.line(|| {
                    format!(
                        "mcp {name}: ready, protocol {}, {} tools",
                        started.protocol,
                        started.tools.len()
                    )
                });
                *self.listed() = started.tools;
                self.set(State::Ready {
                    connection: Arc::new(started.connection),
                    protocol: started.protocol,
                });
            }
            Err(e) => {
                let why = strip_controls(&e.to_string()).into_owned();
                servers.log.line(|| format!("mcp {name}: failed: {why}"));
                servers.note(Severity::Error, format!("MCP server {name} failed: {why}"));
                self.set(State::Failed(why));
            }
        }
    }

    /// Lists the tools again after the server said they changed.
    async fn relist(self: Arc<Self>) {
        let connection = match &*self.state() {
            State::Ready { connection, .. } => Arc::clone(connection),
            _ => return,
        };
        let Ok((listed, _)) = connection.list_tools().await else {
            return;
        };
        let current = matches!(&*self.state(), State::Ready { connection: now, .. } if Arc::ptr_eq(now, &connection));
        if current {
            *self.listed() = listed;
            if let Some(servers) = self.servers.upgrade() {
                servers.changed();
            }
        }
    }

    /// The live connection, the server restarted first when it crashed
    /// or hung (while restarts are left).
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
        for _ in 0..2 {
            let restart = match &*self.state() {
                State::Ready { connection, .. } if !connection.is_closed() => {
                    return Ok(Arc::clone(connection));
                }
                State::Disabled => return Err("it is disabled (enabled = false)".to_owned()),
                State::Starting => false,
                State::Ready { .. } | State::Failed(_) => true,
            };
            if restart {
                if self.restarts.fetch_add(1, Ordering::Relaxed) >= RESTARTS_MAX {
                    return Err(format!(
                        "it failed and was restarted {RESTARTS_MAX} times already; /mcp restart {} starts it again",
                        self.config.name
                    ));
                }
                Arc::clone(self).start().await;
            } else {
                // Another call or the launch is starting it: wait for it.
                drop(self.starting.lock().await);
            }
        }
        match &*self.state() {
            State::Ready { connection, .. } => Ok(Arc::clone(connection)),
            State::Failed(why) => Err(why.clone()),
            _ => Err("it is not running".to_owned()),
        }
    }

    /// Calls the server's tool `tool`, which the model knows as
    /// `offered`: what failed before the server answered is the call's
    /// failure.
    pub(super) async fn call(
        self: &Arc<Self>,
        offered: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        cancel: &CancellationToken,
        live: Option<watch::Sender<Vec<u8>>>,
    ) -> Result<rmcp::model::CallToolResult, ToolFailure> {
        let failed = |message: String| ToolFailure::ExecutionFailed {
            tool: offered.to_owned(),
            message,
        };
        let name = strip_controls(&self.config.name).into_owned();
        let connection = self
            .connection()
            .await
            .map_err(|why| failed(format!("the MCP server {name} is not running: {why}")))?;
        let timeout = self.config.tool_timeout;
        match connection
            .call(tool, arguments, timeout, cancel, live)
            .await
        {
            Ok(result) => Ok(result),
            Err(CallError::Cancelled) => Err(ToolFailure::Cancelled {
                tool: offered.to_owned(),
                output: None,
            }),
            Err(e @ (CallError::Closed | CallError::Timeout(_))) => {
                // A crashed or hung server is started again on the next
                // call: this connection is dropped (its process killed)
                // if it is still the current one.
                let mut state = self.state();
                if let State::Ready {
                    connection: now, ..
                } = &*state
                    && Arc::ptr_eq(now, &connection)
                {
                    *state = State::Failed(e.to_string());
                    drop(state);
                    if let Some(servers) = self.servers.upgrade() {
                        servers.changed();
                    }
                }
                Err(failed(format!(
                    "{e}; the MCP server {name} is started again on the next call"
                )))
            }
            Err(e) => Err(failed(format!("MCP server {name}: {e}"))),
        }
    }
}
