//! The MCP servers a person configured: `[mcp_servers.NAME]` tables in
//! `config.toml`, spelled as Codex spells them so existing tables work,
//! and a project's `.mcp.json` (Claude Code's format), which is used only
//! once the person trusted it ([`super::trust`]). One bad table is a
//! problem named in the chat; the others still start. ADR 0045.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::tools::Sandbox;

/// How long a server may take to start and list its tools unless its
/// table says otherwise (Codex's default).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take unless the table says otherwise
/// (Codex's default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest startup or tool timeout a table may set: a day, as for
/// every other timeout (ADR 0005).
const TIMEOUT_MAX_SECS: f64 = 24.0 * 60.0 * 60.0;

/// Keys of Codex's tables that dashfloat reads past without a notice:
/// they change nothing here (OAuth is not supported; calls to one server
/// are serial anyway; a server that fails is always reported).
const IGNORED_KEYS: &[&str] = &[
    "required",
    "supports_parallel_tool_calls",
    "scopes",
    "oauth_resource",
    "experimental_environment",
];

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The name the person gave it: `[mcp_servers.NAME]` or the
    /// `.mcp.json` key.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// How long it may take to start and list its tools.
    pub startup_timeout: Duration,
    /// How long one call may take.
    pub tool_timeout: Duration,
    /// `enabled = false` keeps it configured but not started.
    pub enabled: bool,
    /// The only tools offered, when given (its own names, before
    /// `disabled_tools` takes any out).
    pub enabled_tools: Option<BTreeSet<String>>,
    /// Tools never offered.
    pub disabled_tools: BTreeSet<String>,
    /// Which tools run without asking.
    pub approval: Approval,
    /// The sandbox a stdio server runs in (`sandbox = "read-only"` or
    /// `"workspace-write"`); unconfined by default, as the person would
    /// run it.
    pub sandbox: Sandbox,
    /// Where the table came from.
    pub origin: Origin,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it (`env`), credentials or not.
        env: BTreeMap<String, String>,
        /// Variables of dashfloat's environment passed to it as they are
        /// (`env_vars`), credentials or not.
        env_vars: Vec<String>,
        /// Where it runs; the project's root when absent.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint's URL.
        url: String,
        /// The variable holding a bearer token sent with every request.
        bearer_token_env_var: Option<String>,
        /// Headers sent with every request.
        http_headers: BTreeMap<String, String>,
        /// Headers whose values come from variables: header → variable.
        env_http_headers: BTreeMap<String, String>,
    },
}

/// Which of a server's tools run without asking.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Approval {
    /// `default_tools_approval_mode = "approve"`: all of them.
    pub all: bool,
    /// `[mcp_servers.NAME.tools.TOOL] approval_mode = "approve"`: these.
    pub tools: BTreeSet<String>,
    /// `approval_mode = "prompt"` for these, whatever the default says.
    pub asked: BTreeSet<String>,
}

impl Approval {
    /// Whether a call of the server's tool `tool` (its own name) runs
    /// without asking.
    pub fn approves(&self, tool: &str) -> bool {
        !self.asked.contains(tool) && (self.all || self.tools.contains(tool))
    }
}

/// Where a server's table came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The person's own `config.toml`.
    Config,
    /// The project's `.mcp.json`, trusted by the person.
    Project,
}

impl ServerConfig {
    /// The variables of dashfloat's environment the server is given or
    /// sends: `env_vars`, `bearer_token_env_var`, `env_http_headers`.
    pub fn variables(&self) -> Vec<&str> {
        match &self.transport {
            Transport::Stdio { env_vars, .. } => env_vars.iter().map(String::as_str).collect(),
            Transport::Http {
                bearer_token_env_var,
                env_http_headers,
                ..
            } => bearer_token_env_var
                .iter()
                .chain(env_http_headers.values())
                .map(String::as_str)
                .collect(),
        }
    }

    /// Whether `tool` (the server's own name for it) is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.contains(tool))
            && !self.disabled_tools.contains(tool)
    }
}

/// A table that could not be used; the others still are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    /// The table is not of the expected shape.
    #[error("MCP server {name}: {detail}; it is not started")]
    Invalid {
        /// The server's name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// A key dashfloat does not know: read past.
    #[error("MCP server {name}: the key {key} is not one dashfloat knows; it is ignored")]
    UnknownKey {
        /// The server's name.
        name: String,
        /// The key.
        key: String,
    },
    /// `.mcp.json` is not valid.
    #[error("the project's .mcp.json cannot be used: {0}")]
    ProjectFile(String),
}

/// A `[mcp_servers.NAME]` table as written; every key optional.
#[derive(Debug, Default, Deserialize)]
struct RawTable {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: Vec<String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    startup_timeout_sec: Option<f64>,
    startup_timeout_ms: Option<u64>,
    tool_timeout_sec: Option<f64>,
    enabled: Option<bool>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    default_tools_approval_mode: Option<ApprovalMode>,
    #[serde(default)]
    tools: BTreeMap<String, RawTool>,
    sandbox: Option<SandboxLevel>,
    #[serde(flatten)]
    rest: BTreeMap<String, toml::Value>,
}

/// `[mcp_servers.NAME.tools.TOOL]`.
#[derive(Debug, Default, Deserialize)]
struct RawTool {
    approval_mode: Option<ApprovalMode>,
}

/// `approval_mode` as Codex spells it: `approve` runs the tool unasked;
/// `prompt` and `auto` (Codex's default) ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ApprovalMode {
    Auto,
    Prompt,
    Approve,
}

/// `sandbox` as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum SandboxLevel {
    Off,
    ReadOnly,
    WorkspaceWrite,
}

/// The servers of a config file's `mcp_servers` table, in name order,
/// each table read on its own: one that cannot be used is a problem and
/// left out.
pub fn from_toml(
    tables: BTreeMap<String, toml::Value>,
    problems: &mut Vec<McpConfigError>,
) -> Vec<ServerConfig> {
    tables
        .into_iter()
        .filter_map(|(name, value)| {
            let raw = match RawTable::deserialize(value) {
                Ok(raw) => raw,
                Err(e) => {
                    problems.push(McpConfigError::Invalid {
                        name,
                        detail: e.message().to_owned(),
                    });
                    return None;
                }
            };
            for key in raw.rest.keys() {
                if !IGNORED_KEYS.contains(&key.as_str()) {
                    problems.push(McpConfigError::UnknownKey {
                        name: name.clone(),
                        key: key.clone(),
                    });
                }
            }
            server(name, raw, Origin::Config)
                .map_err(|e| problems.push(e))
                .ok()
        })
        .collect()
}

/// A table made a server, or why it cannot be one.
fn server(name: String, raw: RawTable, origin: Origin) -> Result<ServerConfig, McpConfigError> {
    let invalid = |detail: &str| McpConfigError::Invalid {
        name: name.clone(),
        detail: detail.to_owned(),
    };
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(invalid(
            "the name must be non-empty, without control characters",
        ));
    }
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => return Err(invalid("give either command or url, not both")),
        (None, None) => return Err(invalid("give a command (stdio) or a url (HTTP)")),
        (Some(command), None) if command.trim().is_empty() => {
            return Err(invalid("the command is empty"));
        }
        (Some(command), None) => Transport::Stdio {
            command,
            args: raw.args,
            env: raw.env,
            env_vars: raw.env_vars,
            cwd: raw.cwd,
        },
        (None, Some(url)) => {
            let Some(url) = crate::base_url::usable(&url) else {
                return Err(invalid("the url must be an http:// or https:// URL"));
            };
            Transport::Http {
                url,
                bearer_token_env_var: raw.bearer_token_env_var,
                http_headers: raw.http_headers,
                env_http_headers: raw.env_http_headers,
            }
        }
    };
    let seconds = |secs: Option<f64>, what: &str, default: Duration| match secs {
        None => Ok(default),
        Some(s) if s > 0.0 && s <= TIMEOUT_MAX_SECS => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(invalid(&format!(
            "{what} = {s} is outside 0 < seconds <= {TIMEOUT_MAX_SECS}"
        ))),
    };
    let startup = raw
        .startup_timeout_sec
        .or(raw.startup_timeout_ms.map(|ms| ms as f64 / 1000.0));
    let startup_timeout = seconds(startup, "startup_timeout_sec", DEFAULT_STARTUP_TIMEOUT)?;
    let tool_timeout = seconds(
        raw.tool_timeout_sec,
        "tool_timeout_sec",
        DEFAULT_TOOL_TIMEOUT,
    )?;
    let mut approval = Approval {
        all: raw.default_tools_approval_mode == Some(ApprovalMode::Approve),
        ..Approval::default()
    };
    for (tool, setting) in raw.tools {
        match setting.approval_mode {
            Some(ApprovalMode::Approve) => approval.tools.insert(tool),
            Some(ApprovalMode::Prompt) => approval.asked.insert(tool),
            Some(ApprovalMode::Auto) | None => false,
        };
    }
    let sandbox = match raw.sandbox {
        None | Some(SandboxLevel::Off) => Sandbox::Unconfined,
        Some(SandboxLevel::ReadOnly) => Sandbox::ReadOnly,
        Some(SandboxLevel::WorkspaceWrite) => Sandbox::WorkspaceWrite,
    };
    Ok(ServerConfig {
        name,
        transport,
        startup_timeout,
        tool_timeout,
        enabled: raw.enabled.unwrap_or(true),
        enabled_tools: raw.enabled_tools.map(|tools| tools.into_iter().collect()),
        disabled_tools: raw.disabled_tools.into_iter().collect(),
        approval,
        sandbox,
        origin,
    })
}

/// `.mcp.json` as Claude Code writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProjectFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, ProjectServer>,
}

/// One server of `.mcp.json`: `command`/`args`/`env`, or `type` http
/// (or sse, which is taken as Streamable HTTP) with `url` and `headers`.
#[derive(Debug, Deserialize)]
struct ProjectServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// The servers of a project's `.mcp.json` text, in name order; a server
/// that cannot be used is a problem and left out, a file that is not
/// JSON of that shape is one problem.
pub fn from_project_file(text: &str, problems: &mut Vec<McpConfigError>) -> Vec<ServerConfig> {
    let file: ProjectFile = match serde_json::from_str(text) {
        Ok(file) => file,
        Err(e) => {
            problems.push(McpConfigError::ProjectFile(e.to_string()));
            return Vec::new();
        }
    };
    file.mcp_servers
        .into_iter()
        .filter_map(|(name, entry)| {
            if let Some(kind) = entry.kind.as_deref()
                && !matches!(kind, "stdio" | "http" | "sse" | "streamable-http")
            {
                problems.push(McpConfigError::Invalid {
                    name,
                    detail: format!("the type {kind:?} is not stdio or http"),
                });
                return None;
            }
            let raw = RawTable {
                command: entry.command,
                args: entry.args,
                env: entry.env,
                url: entry.url,
                http_headers: entry.headers,
                ..RawTable::default()
            };
            server(name, raw, Origin::Project)
                .map_err(|e| problems.push(e))
                .ok()
        })
        .collect()
}
