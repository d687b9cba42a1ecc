//! One live connection to an MCP server, through the official SDK
//! (`rmcp`): a stdio child started through the workspace (its stderr
//! kept in the `--log` file, never on screen) or a Streamable HTTP
//! endpoint. It negotiates the protocol (`initialize`), lists the tools
//! page by page within bounds, calls one with progress and cancellation,
//! and tells its owner when the server's tool list changed. ADR 0045.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::log::Log;
use crate::secret::Secret;
use crate::tools::{Sandbox, Served, ToolContext};

use super::config::{ServerConfig, Transport};

/// The largest message read from a server (8 MiB): far beyond any
/// result the model is given ([`super::result::RESULT_MAX_BYTES`]), small
/// enough that a server writing without end cannot fill the memory. A
/// larger message is dropped and the call waiting for it fails.
pub const MESSAGE_MAX_BYTES: usize = 8 * 1024 * 1024;
/// Pages of `tools/list` read at most (100): a server whose list does
/// not end is listed this far, with a notice.
pub const TOOL_PAGES_MAX: usize = 100;
/// Tools kept of one server (1,000); the rest are left out with a notice.
pub const SERVER_TOOLS_MAX: usize = 1_000;
/// The most bytes of one line a server writes on its stderr that the log
/// keeps.
const STDERR_LINE_MAX_BYTES: usize = 4 * 1024;

/// Why a server could not be started or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The process could not be started.
    #[error("cannot start {command}: {detail}")]
    Start {
        /// The program.
        command: String,
        /// Why.
        detail: String,
    },
    /// The HTTP client or its headers could not be made.
    #[error("cannot reach {url}: {detail}")]
    Http {
        /// The endpoint.
        url: String,
        /// Why.
        detail: String,
    },
    /// The protocol handshake failed.
    #[error("the server did not complete the MCP handshake: {0}")]
    Handshake(String),
    /// Listing the tools failed.
    #[error("the server did not list its tools: {0}")]
    List(String),
    /// It took longer than its startup timeout.
    #[error("the server did not start within {0:?} (startup_timeout_sec)")]
    StartupTimeout(Duration),
}

/// Why a call failed before the server answered it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The person pressed Esc; the server was told.
    #[error("cancelled")]
    Cancelled,
    /// No answer within the tool timeout; the server was told.
    #[error("the server did not answer within {0:?} (tool_timeout_sec)")]
    Timeout(Duration),
    /// The connection ended (the server exited or closed it).
    #[error("the server stopped during the call")]
    Closed,
    /// The answer was larger than [`MESSAGE_MAX_BYTES`].
    #[error("the server's answer was larger than {} MiB and was dropped", MESSAGE_MAX_BYTES / (1024 * 1024))]
    TooLarge,
    /// The server answered with a JSON-RPC error.
    #[error("the server refused the call: {0}")]
    Refused(String),
}

/// The values of the variables servers' tables name, by name.
pub type Variables = HashMap<String, Secret<String>>;

/// What the server's notifications are handed to.
struct Shared {
    /// Where each call in flight shows its progress, by progress token.
    progress: Mutex<HashMap<ProgressToken, watch::Sender<Vec<u8>>>>,
    /// Told when a stdio message was dropped as too large.
    oversized: Notify,
    /// Told when the server says its tool list changed.
    on_list_changed: Box<dyn Fn() + Send + Sync>,
}

/// The client side of the protocol: answers the server's notifications.
#[derive(Clone)]
struct Handler(Arc<Shared>);

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let progress = self.0.progress.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(live) = progress.get(&params.progress_token) {
            live.send_replace(progress_line(&params).into_bytes());
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.0.on_list_changed)();
    }

    /// The newest revision with a handshake: servers answer with it or
    /// with an older one they speak (ADR 0045).
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("dashfloat", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// What a call's row shows of its progress: `step 3 of 10 (3/10)`.
fn progress_line(params: &ProgressNotificationParam) -> String {
    let amount = match params.total {
        Some(total) => format!("{}/{}", params.progress, total),
        None => format!("{}", params.progress),
    };
    match &params.message {
        Some(message) => format!("{message} ({amount})"),
        None => format!("progress {amount}"),
    }
}

/// A live connection.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    shared: Arc<Shared>,
    /// The stdio server's process: killed when the connection is dropped.
    _served: Option<Served>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

/// A started server's connection and its tools.
pub struct Started {
    /// The connection.
    pub connection: Connection,
    /// Its tools, as listed (at most [`SERVER_TOOLS_MAX`]).
    pub tools: Vec<Tool>,
    /// The protocol revision negotiated.
    pub protocol: String,
    /// What was left out of the list, for a notice.
    pub cut: Option<String>,
}

/// Starts `config`'s server (a stdio one through `ctx`'s workspace, with
/// the environment commands get), negotiates and lists its tools, within
/// its startup timeout. `on_list_changed` is called whenever the server
/// says its tool list changed.
pub async fn connect(
    config: &ServerConfig,
    ctx: &ToolContext,
    vars: &Variables,
    log: &Log,
    on_list_changed: Box<dyn Fn() + Send + Sync>,
) -> Result<Started, ConnectionError> {
    let shared = Arc::new(Shared {
        progress: Mutex::new(HashMap::new()),
        oversized: Notify::new(),
        on_list_changed,
    });
    let handler = Handler(Arc::clone(&shared));
    let work = async {
        let (service, served) = match &config.transport {
            Transport::Stdio { .. } => {
                let mut served = spawn(config, ctx, vars)?;
                let (stdin, stdout, stderr) = (
                    served.child.stdin.take(),
                    served.child.stdout.take(),
                    served.child.stderr.take(),
                );
                let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
                    return Err(ConnectionError::Handshake("no pipes to the server".into()));
                };
                if let Some(stderr) = stderr {
                    tokio::spawn(keep_stderr(stderr, config.name.clone(), log.clone()));
                }
                let guarded = LineGuard {
                    inner: stdout,
                    line: 0,
                    shared: Arc::clone(&shared),
                };
                let transport = AsyncRwTransport::new_client(guarded, stdin)
                    .with_max_line_length(MESSAGE_MAX_BYTES);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| ConnectionError::Handshake(e.to_string()))?;
                (service, Some(served))
            }
            Transport::Http {
                url,
                bearer_token_env_var,
                http_headers,
                env_http_headers,
            } => {
                let http = |detail: String| ConnectionError::Http {
                    url: url.clone(),
                    detail,
                };
                let client = crate::llm::build_client(config.startup_timeout, url)
                    .map_err(|e| http(e.to_string()))?;
                let mut headers = HashMap::new();
                let from_env = env_http_headers
                    .iter()
                    .filter_map(|(name, var)| Some((name, vars.get(var)?.expose().clone())));
                for (name, value) in http_headers
                    .iter()
                    .map(|(n, v)| (n, v.clone()))
                    .chain(from_env)
                {
                    let name = reqwest::header::HeaderName::try_from(name.as_str())
                        .map_err(|e| http(format!("the header {name:?}: {e}")))?;
                    let value = reqwest::header::HeaderValue::try_from(value)
                        .map_err(|e| http(format!("the value of {name}: {e}")))?;
                    headers.insert(name, value);
                }
                let mut transport_config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(headers)
                        .max_sse_event_size(MESSAGE_MAX_BYTES);
                transport_config.max_json_response_size = MESSAGE_MAX_BYTES;
                if let Some(var) = bearer_token_env_var {
                    let token = std::env::var(var)
                        .map_err(|_| http(format!("{var} (bearer_token_env_var) is not set")))?;
                    transport_config = transport_config.auth_header(token);
                }
                let transport =
                    StreamableHttpClientTransport::with_client(client, transport_config);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| ConnectionError::Handshake(e.to_string()))?;
                (service, None)
            }
        };
        let protocol = service
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default();
        let connection = Connection {
            service,
            shared: Arc::clone(&shared),
            _served: served,
        };
        let (tools, cut) = connection.list_tools().await?;
        Ok(Started {
            connection,
            tools,
            protocol,
            cut,
        })
    };
    tokio::time::timeout(config.startup_timeout, work)
        .await
        .unwrap_or(Err(ConnectionError::StartupTimeout(config.startup_timeout)))
}

impl Connection {
    /// The server's tools, page by page, at most [`TOOL_PAGES_MAX`] pages
    /// and [`SERVER_TOOLS_MAX`] tools; what was left out, in words.
    pub async fn list_tools(&self) -> Result<(Vec<Tool>, Option<String>), ConnectionError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..TOOL_PAGES_MAX {
            let page = self
                .service
                .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .map_err(|e| ConnectionError::List(e.to_string()))?;
            let room = SERVER_TOOLS_MAX - tools.len();
            let more = page.tools.len() > room;
            tools.extend(page.tools.into_iter().take(room));
            if more {
                return Ok((
                    tools,
                    Some(format!(
                        "it lists more than {SERVER_TOOLS_MAX} tools; the first {SERVER_TOOLS_MAX} are kept"
                    )),
                ));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok((tools, None)),
            }
        }
        Ok((
            tools,
            Some(format!(
                "its tool list went on past {TOOL_PAGES_MAX} pages; the tools of those pages are kept"
            )),
        ))
    }

    /// Calls `tool` with `arguments`: progress goes to `live` while it
    /// runs; Esc (`cancel`) and the timeout send the server
    /// `notifications/cancelled`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
        live: Option<watch::Sender<Vec<u8>>>,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.clone());
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let oversized = self.shared.oversized.notified();
        tokio::pin!(oversized);
        oversized.as_mut().enable();
        let mut handle = self
            .service
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|_| CallError::Closed)?;
        let token = handle.progress_token.clone();
        if let Some(live) = live {
            self.progress().insert(token.clone(), live);
        }
        let answer = tokio::select! {
            answer = &mut handle.rx => Some(answer),
            () = cancel.cancelled() => None,
            () = tokio::time::sleep(timeout) => None,
            () = &mut oversized => {
                self.progress().remove(&token);
                return Err(CallError::TooLarge);
            }
        };
        self.progress().remove(&token);
        let Some(answer) = answer else {
            let why = if cancel.is_cancelled() {
                "the person cancelled the call"
            } else {
                "the call timed out"
            };
            let cancelled = cancel.is_cancelled();
            let _ = handle.cancel(Some(why.to_owned())).await;
            return Err(if cancelled {
                CallError::Cancelled
            } else {
                CallError::Timeout(timeout)
            });
        };
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Ok(Ok(_)) => Err(CallError::Refused("an answer of another kind".to_owned())),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                Err(CallError::Refused(e.message.to_string()))
            }
            Ok(Err(_)) | Err(_) => Err(CallError::Closed),
        }
    }

    fn progress(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, watch::Sender<Vec<u8>>>> {
        self.shared
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the connection has ended (the server exited or closed it).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed()
    }
}

/// Starts a stdio server: its environment is a command's (credentials
/// removed, `[exec] pass_env` added), then its `env_vars` passed from
/// dashfloat's own, then its `env`; it runs in its `cwd` (the project's
/// root when absent; always the root when sandboxed).
fn spawn(
    config: &ServerConfig,
    ctx: &ToolContext,
    vars: &Variables,
) -> Result<Served, ConnectionError> {
    let Transport::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
    } = &config.transport
    else {
        return Err(ConnectionError::Handshake("not a stdio server".into()));
    };
    let mut environment: Vec<(OsString, OsString)> = ctx.command_env();
    let mut set = |name: OsString, value: OsString| {
        environment.retain(|(n, _)| *n != name);
        environment.push((name, value));
    };
    for name in env_vars {
        if let Some(value) = vars.get(name) {
            set(name.into(), value.expose().into());
        }
    }
    for (name, value) in env {
        set(name.into(), value.into());
    }
    let root = &ctx.root;
    let dir: PathBuf = match (cwd, config.sandbox) {
        (Some(cwd), Sandbox::Unconfined) => root.join(cwd),
        _ => root.clone(),
    };
    ctx.workspace
        .serve(Path::new(&dir), command, args, environment, config.sandbox)
        .map_err(|e| ConnectionError::Start {
            command: command.clone(),
            detail: e.to_string(),
        })
}

/// Copies what a stdio server writes on its stderr into the log, line by
/// line (each cut at [`STDERR_LINE_MAX_BYTES`]), until it closes it.
async fn keep_stderr(mut stderr: tokio::process::ChildStderr, server: String, log: Log) {
    let mut buf = [0u8; 4096];
    let mut line = Vec::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                let text = String::from_utf8_lossy(&line);
                log.line(|| format!("mcp {server} stderr: {text}"));
                line.clear();
            } else if line.len() < STDERR_LINE_MAX_BYTES {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        let text = String::from_utf8_lossy(&line);
        log.line(|| format!("mcp {server} stderr: {text}"));
    }
}

/// A stdio server's output, watched for lines longer than
/// [`MESSAGE_MAX_BYTES`]: the SDK drops such a line, and the call
/// waiting for it is told here instead of waiting for its timeout.
struct LineGuard<R> {
    inner: R,
    /// Bytes of the current line so far.
    line: usize,
    shared: Arc<Shared>,
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let read = &buf.filled()[before..];
            let mut line = self.line;
            let mut over = false;
            for chunk in read.split_inclusive(|&b| b == b'\n') {
                let was = line;
                line += chunk.len();
                over |= was <= MESSAGE_MAX_BYTES && line > MESSAGE_MAX_BYTES;
                if chunk.ends_with(b"\n") {
                    line = 0;
                }
            }
            self.line = line;
            if over {
                self.shared.oversized.notify_waiters();
            }
        }
        polled
    }
}
