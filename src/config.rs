//! Provider, model and limits, resolved once at start-up with the precedence
//! flags > environment > config file > defaults (ADR 0005).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use serde::Deserialize;

use crate::agent::{
    ApprovalPolicy, COMPACT_AT_MAX, COMPACT_AT_MIN, DEFAULT_COMPACT_AT, DEFAULT_MAX_STEPS,
    SandboxScope,
};
use crate::hooks::{Hook, HookConfigError, Whose};
use crate::llm::adapters::ToolSyntax;
use crate::llm::discover::Questions;
use crate::llm::wires::Wire;
use crate::mcp::config::{McpConfigError, ServerConfig};
use crate::protocol::Price;
use crate::secret::{Secret, redact_userinfo};
use crate::session::OpenSession;
use crate::tools::{EXEC_DEFAULT_MAX_TIMEOUT, EXEC_DEFAULT_TIMEOUT};
use crate::ui::notify::Notify;

/// The base URL used when no provider is configured: the local llama-server
/// that `scripts/local-model` starts.
pub const LOCAL_BASE_URL: &str = "http://127.0.0.1:8088/v1";
/// The model name sent to the local server (llama-server serves one model
/// whatever the name; this is the alias `scripts/local-model` gives it).
pub const LOCAL_MODEL: &str = "qwen2.5-coder-1.5b";
/// The local model's context window in tokens (the server's `-c`), when
/// none is configured and the server does not say (ADR 0020).
pub const LOCAL_CONTEXT_WINDOW: u64 = 8192;
/// Context window assumed for a configured provider when none is given and
/// the server does not say (ADR 0020).
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// How long to wait for a connection (the response headers wait for the
/// longer of this and the idle timeout).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stream may send no data before it is closed (keep-alive
/// comments are no data; ADR 0007). Generous because a local model on two
/// busy cores can take a while for its first token.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The shortest request, idle or command timeout accepted (1 s). ADR 0005.
const TIMEOUT_MIN: Duration = Duration::from_secs(1);
/// The longest request, idle or command timeout accepted (24 h): every
/// deadline must fit the clock. ADR 0005.
const TIMEOUT_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest `dashfloat exec --timeout` accepted, in seconds: the
/// longest timeout any setting takes ([`TIMEOUT_MAX`]).
const EXEC_RUN_TIMEOUT_MAX_SECS: u64 = TIMEOUT_MAX.as_secs();

/// Command-line flags. Every flag also reads an environment variable; a flag
/// given on the command line wins over the variable.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "dashfloat",
    version,
    about = "A fast, light, full-screen terminal coding agent for any OpenAI-compatible endpoint.",
    after_help = "Without a configured provider dashfloat talks to a local llama-server at \
http://127.0.0.1:8088/v1 (start it with scripts/local-model).\n\
Config file: $XDG_CONFIG_HOME/dashfloat/config.toml (default ~/.config/dashfloat/config.toml) \
with keys base_url, model, api_key_env, context_window, max_output, compact_at, request_timeout_secs, \
idle_timeout_secs, max_steps, exec_timeout_secs, exec_timeout_max_secs, temperature, seed, save_sessions, auto_allow_read_only, attach_named_files, ask_to_act, ask_to_look, project_overview, tool_syntax, wire, notify, warm_cache, [prices.\"MODEL\"] (input, cached_input, output: dollars per million tokens), \
sandbox (\"always\": commands you approve run in the workspace-write sandbox too), sandbox_deny_read (paths sandboxed commands may not read), a [headers] \
table, an [exec] table with pass_env (variables handed to commands on purpose) and \
[mcp_servers.NAME] tables (MCP servers, spelled as Codex spells them; see `dashfloat mcp`) and \
[[hooks]] tables (event, command, tools, timeout: shell commands run on the agent's events; see docs/hooks.md).\n\
Commands remembered with `a` are kept in $XDG_CONFIG_HOME/dashfloat/permissions/.\n\
Sessions are saved in $XDG_CONFIG_HOME/dashfloat/sessions/ (default \
~/.config/dashfloat/sessions/).\n\
Precedence: flags > environment > config file > defaults. The API key is only ever read \
from the environment variable named by --api-key-env, and only sent to a base URL you \
configured, never to the local default."
)]
pub struct Cli {
    /// Chat-completions base URL, e.g. https://api.openai.com/v1
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL", global = true)]
    pub base_url: Option<String>,
    /// Model name sent with each request [default: the one the server serves, if it serves one]
    #[arg(long, env = "DASHFLOAT_MODEL", value_name = "NAME", global = true)]
    pub model: Option<String>,
    /// Name of the environment variable holding the API key [default: OPENAI_API_KEY, or ANTHROPIC_API_KEY on the anthropic wire]
    #[arg(long, env = "DASHFLOAT_API_KEY_ENV", value_name = "VAR", global = true)]
    pub api_key_env: Option<String>,
    /// The model's context window in tokens (for the status bar) [default: asked of the server]
    #[arg(
        long,
        env = "DASHFLOAT_CONTEXT_WINDOW",
        value_name = "TOKENS",
        global = true
    )]
    pub context_window: Option<u64>,
    /// Tokens of the window kept free for the reply [default: 1/8 of the window, at least 512]
    #[arg(
        long,
        env = "DASHFLOAT_MAX_OUTPUT",
        value_name = "TOKENS",
        global = true
    )]
    pub max_output: Option<u64>,
    /// Share of the window past which the conversation is compacted [default: 0.8]
    #[arg(
        long,
        env = "DASHFLOAT_COMPACT_AT",
        value_name = "FRACTION",
        global = true
    )]
    pub compact_at: Option<f64>,
    /// Seconds to wait for a connection and response headers [default: 60]
    #[arg(
        long,
        env = "DASHFLOAT_REQUEST_TIMEOUT",
        value_name = "SECS",
        global = true
    )]
    pub request_timeout: Option<u64>,
    /// Seconds a stream may go without data (keep-alive comments do not count) before it is closed [default: 120]
    #[arg(
        long,
        env = "DASHFLOAT_IDLE_TIMEOUT",
        value_name = "SECS",
        global = true
    )]
    pub idle_timeout: Option<u64>,
    /// Which tool calls wait for your y / Esc.
    #[arg(long, env = "DASHFLOAT_APPROVAL", value_enum, default_value_t = ApprovalFlag::Ask, global = true)]
    pub approval: ApprovalFlag,
    /// Model steps (requests) in one turn before dashfloat stops and asks [default: 16]
    #[arg(long, env = "DASHFLOAT_MAX_STEPS", value_name = "N", global = true)]
    pub max_steps: Option<u32>,
    /// Sampling temperature sent with each request [default: the provider's]
    #[arg(long, env = "DASHFLOAT_TEMPERATURE", value_name = "T", global = true)]
    pub temperature: Option<f32>,
    /// Sampling seed sent with each request, for repeatable runs [default: none]
    #[arg(long, env = "DASHFLOAT_SEED", value_name = "N", global = true)]
    pub seed: Option<u64>,
    /// Seconds a command may run before its process group is killed [default: 30]
    #[arg(
        long,
        env = "DASHFLOAT_EXEC_TIMEOUT",
        value_name = "SECS",
        global = true
    )]
    pub exec_timeout: Option<u64>,
    /// The longest time limit the model may ask for one command [default: 1800]
    #[arg(
        long,
        env = "DASHFLOAT_EXEC_TIMEOUT_MAX",
        value_name = "SECS",
        global = true
    )]
    pub exec_timeout_max: Option<u64>,
    /// The API requests speak: chat (chat completions), responses (OpenAI Responses) or anthropic (Anthropic Messages) [default: anthropic for https://api.anthropic.com, else chat]
    #[arg(
        long,
        env = "DASHFLOAT_WIRE",
        value_name = "WIRE",
        value_enum,
        global = true
    )]
    pub wire: Option<Wire>,
    /// How you are told, while the terminal has no focus, that a turn ended or a call waits: bell, osc9, osc777 (desktop notifications) or off [default: bell]
    #[arg(
        long,
        env = "DASHFLOAT_NOTIFY",
        value_name = "HOW",
        value_enum,
        global = true
    )]
    pub notify: Option<Notify>,
    /// How tool calls written as text are read: auto, native, fenced, hermes, mistral, llama, deepseek or glm [default: auto]
    #[arg(
        long,
        env = "DASHFLOAT_TOOL_SYNTAX",
        value_name = "SYNTAX",
        value_parser = parse_tool_syntax,
        global = true
    )]
    pub tool_syntax: Option<ToolSyntax>,
    /// Send the conversation ahead to the server while you type, so its
    /// prompt cache holds it: on or off [default: on for a server on this
    /// machine, off for a remote one]
    #[arg(
        long,
        env = "DASHFLOAT_WARM_CACHE",
        value_name = "ON|OFF",
        value_parser = clap::builder::BoolishValueParser::new(),
        global = true
    )]
    pub warm_cache: Option<bool>,
    /// Write a log of what the agent does to this file (off by default).
    #[arg(long, env = "DASHFLOAT_LOG", value_name = "PATH", global = true)]
    pub log: Option<PathBuf>,
    /// Extra request header, "Name: value" (repeatable). Taken out of the
    /// command line at start, so other processes cannot read it there.
    #[arg(long = "header", value_name = "NAME: VALUE", global = true)]
    pub headers: Vec<String>,
    /// Config file to read instead of the default location.
    #[arg(long, env = "DASHFLOAT_CONFIG", value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,
    /// Resume the latest saved session of this directory.
    #[arg(
        short = 'c',
        long = "continue",
        conflicts_with = "resume",
        global = true
    )]
    pub continue_latest: bool,
    /// Resume the saved session ID; without an ID, pick one from a list.
    #[arg(long, value_name = "ID", num_args = 0..=1, global = true)]
    pub resume: Option<Option<String>>,
    /// With --resume or `sessions`: every directory's sessions, not only this one's.
    #[arg(long, global = true)]
    pub all: bool,
    /// Do not save this session (config: save_sessions = false).
    #[arg(long, global = true)]
    pub no_save: bool,
    /// Start no MCP server this time: their tools are not offered.
    #[arg(long, global = true)]
    pub no_mcp: bool,
    /// What to do instead of starting a session.
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// The subcommands: each runs instead of the full-screen session.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum CliCommand {
    /// List the saved sessions of this directory (--all: of every directory), newest first.
    Sessions {
        /// Print them as a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Run one turn without the full screen: the prompt from the argument,
    /// or from stdin when it is absent or `-`; the reply on stdout.
    #[command(
        after_help = "Exit status: 0 answered; 1 the turn failed (stream or endpoint error, \
--max-steps reached); 2 bad usage or configuration (no prompt was sent); 124 --timeout ran \
out; 130 interrupted (SIGINT, SIGTERM, SIGHUP).\n\
Under --approval ask no one can approve a write, edit or command: it is not run, and the \
model is told how to allow it. Every other flag works before or after `exec`. ADR 0028."
    )]
    Exec(ExecArgs),
    /// List, show, add and remove the MCP servers of the config file, as
    /// `codex mcp` does.
    #[command(
        after_help = "Exit status: 0 done; 1 failed (no server of that name, one already there, \
the config file cannot be read, written or would not read back); 2 bad usage. A change keeps the \
rest of the file — comments, order, spacing — as it is. ADR 0045."
    )]
    Mcp {
        /// What to do.
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Have a local llama-server read dashfloat's fixed prompt and save it,
    /// so the first prompt of the next session is served from its cache.
    ///
    /// Starts as a session in this directory with this configuration would
    /// (the project's instructions, the server's model), then asks the
    /// server to restore the fixed prompt's saved slot; if it has none, it
    /// reads the prompt (about 20 s on two cores) and saves it.
    /// scripts/local-model runs it when scripts/dashfloat starts the server.
    #[command(
        name = "prime-cache",
        after_help = "Prints one line saying what was done. Exit status: 0 the server restored or \
saved the fixed prompt, or the cache warm-up is off (nothing to do); 1 it did not (not a llama.cpp \
server, one started without --slot-save-path, unreachable, or not done in 5 minutes). ADR 0034."
    )]
    PrimeCache,
}

/// `dashfloat mcp`'s subcommands, as `codex mcp` has them. ADR 0045.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum McpCommand {
    /// List the servers of the config file and of this directory's .mcp.json.
    ///
    /// One a line: name, whether enabled, where it comes from (the config
    /// file, or the .mcp.json and whether you trusted it), its command line
    /// or URL with the names of its variables or headers (never their
    /// values), which tools are offered and which run unasked.
    #[command(after_help = MCP_JSON_FIELDS)]
    List {
        /// Print them as a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Show one server in full: the config file's, else this directory's
    /// .mcp.json's.
    ///
    /// The values of `env` and `http_headers` are shown as *****.
    #[command(after_help = MCP_JSON_FIELDS)]
    Get {
        /// The server's name.
        name: String,
        /// Print it as a JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Add a stdio or Streamable HTTP server to the config file.
    #[command(
        override_usage = "dashfloat mcp add NAME [--env KEY=VALUE]... -- COMMAND [ARGS]...\n       \
dashfloat mcp add NAME --url URL [--bearer-token-env-var VAR]"
    )]
    Add(McpAddArgs),
    /// Remove a server from the config file.
    Remove {
        /// The server's name.
        name: String,
    },
}

/// What `dashfloat mcp list --json` and `get --json` print of a server.
const MCP_JSON_FIELDS: &str = "With --json, a server is an object with:
  name
  source                 \"config\", or \"project\": this directory's .mcp.json
  trusted                true for the config file's; for the project's, whether you trusted the
                         .mcp.json as it is now (/mcp trust): an untrusted one is not started
  enabled                false: configured but not started
  transport              {\"type\": \"stdio\", command, args, env, env_vars, cwd (or null)}, or
                         {\"type\": \"streamable_http\", url (credentials in it redacted),
                         bearer_token_env_var (or null), http_headers, env_http_headers}; env and
                         http_headers map each name to \"*****\", never to its value
  startup_timeout_sec, tool_timeout_sec
  enabled_tools          the only tools offered, or null: all
  disabled_tools         tools never offered
  approval               {\"default\": \"approve\" or \"prompt\", \"approve\": [tools run unasked],
                         \"prompt\": [tools always asked]}
  sandbox                \"off\", \"read-only\" or \"workspace-write\"";

/// `dashfloat mcp add`'s arguments, as `codex mcp add` takes them:
/// either the command after `--`, or `--url`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(group(
    clap::ArgGroup::new("transport")
        .args(["command", "url"])
        .required(true)
        .multiple(false)
))]
pub struct McpAddArgs {
    /// The server's name: letters, digits, `_` and `-`.
    #[arg(value_parser = crate::mcp::cli::server_name)]
    pub name: String,
    /// A variable set for the stdio server, KEY=VALUE (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = crate::mcp::cli::env_pair, conflicts_with = "url")]
    pub env: Vec<(String, String)>,
    /// The URL of a Streamable HTTP server (http:// or https://).
    #[arg(long, value_name = "URL", value_parser = crate::mcp::cli::server_url)]
    pub url: Option<String>,
    /// The variable holding a bearer token sent to the HTTP server.
    #[arg(long, value_name = "VAR", requires = "url", conflicts_with = "command")]
    pub bearer_token_env_var: Option<String>,
    /// The stdio server's program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `dashfloat exec`'s own flags; every other flag is dashfloat's and may
/// come before or after `exec`. ADR 0028.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ExecArgs {
    /// One JSON object per line on stdout (docs/exec-json.md) instead of
    /// the reply's text.
    #[arg(long)]
    pub json: bool,
    /// Seconds the whole run may take; then the turn is cancelled and
    /// dashfloat exits with status 124.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=EXEC_RUN_TIMEOUT_MAX_SECS))]
    pub timeout: Option<u64>,
    /// The prompt; absent or `-`: read from stdin.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
}

impl Cli {
    /// The config file: `--config` (or `DASHFLOAT_CONFIG`), else the
    /// default location; `None` when no variable names one.
    pub fn config_path(&self, env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        self.config.clone().or_else(|| default_config_path(env))
    }

    /// Which session the command line opens: `--continue`, `--resume ID`,
    /// `--resume` (the picker), or a new one.
    pub fn open_session(&self) -> OpenSession {
        match (&self.resume, self.continue_latest) {
            (Some(Some(id)), _) => OpenSession::Resume(id.clone()),
            (Some(None), _) => OpenSession::Pick { all: self.all },
            (None, true) => OpenSession::Continue,
            (None, false) => OpenSession::New,
        }
    }
}

/// `--approval` as it is spelled; [`Config::load`] turns it into the
/// agent's [`ApprovalPolicy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ApprovalFlag {
    /// Ask before every write, edit and command (the default).
    #[default]
    Ask,
    /// Apply file edits and writes inside the project without asking; still
    /// ask before every command, and before a write or edit that lands in
    /// the repository's own files (`.git`).
    AutoEdit,
    /// As auto-edit, and run commands without asking inside the
    /// workspace-write sandbox (no network, writes only in the project);
    /// a command the model wants run outside it asks.
    Auto,
    /// Run everything without asking. Named so nobody picks it by accident;
    /// the status bar warns while it is active.
    #[value(name = "dangerously-approve-all")]
    DangerouslyApproveAll,
}

impl From<ApprovalFlag> for ApprovalPolicy {
    fn from(flag: ApprovalFlag) -> Self {
        match flag {
            ApprovalFlag::Ask => ApprovalPolicy::Ask,
            ApprovalFlag::AutoEdit => ApprovalPolicy::AutoEdit,
            ApprovalFlag::Auto => ApprovalPolicy::Auto,
            ApprovalFlag::DangerouslyApproveAll => ApprovalPolicy::DangerouslyApproveAll,
        }
    }
}

/// The config file's contents; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    context_window: Option<u64>,
    max_output: Option<u64>,
    compact_at: Option<f64>,
    request_timeout_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
    max_steps: Option<u32>,
    exec_timeout_secs: Option<u64>,
    exec_timeout_max_secs: Option<u64>,
    temperature: Option<f32>,
    seed: Option<u64>,
    save_sessions: Option<bool>,
    auto_allow_read_only: Option<bool>,
    attach_named_files: Option<bool>,
    ask_to_act: Option<bool>,
    ask_to_look: Option<bool>,
    project_overview: Option<bool>,
    tool_syntax: Option<ToolSyntax>,
    wire: Option<Wire>,
    notify: Option<Notify>,
    warm_cache: Option<bool>,
    sandbox: Option<SandboxScope>,
    #[serde(default)]
    sandbox_deny_read: Vec<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    exec: ExecFileConfig,
    #[serde(default)]
    mcp_servers: BTreeMap<String, toml::Value>,
    #[serde(default)]
    hooks: Vec<toml::Value>,
    #[serde(default)]
    prices: BTreeMap<String, FilePrice>,
}

/// A model's `[prices."MODEL"]` table: US dollars per million tokens.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePrice {
    input: f64,
    /// Prompt tokens read from the cache; `input` when not given.
    cached_input: Option<f64>,
    output: f64,
}

impl FilePrice {
    /// The price in millionths of a dollar, when every figure is one.
    fn price(&self) -> Option<Price> {
        let micro = |dollars: f64| {
            (dollars.is_finite() && (0.0..=PRICE_MAX_DOLLARS).contains(&dollars))
                .then(|| (dollars * 1e6).round() as u64)
        };
        Some(Price {
            input: micro(self.input)?,
            cached_input: micro(self.cached_input.unwrap_or(self.input))?,
            output: micro(self.output)?,
        })
    }
}

/// The highest price taken, in dollars per million tokens: above it a
/// figure is a mistake, not a price.
const PRICE_MAX_DOLLARS: f64 = 1_000_000.0;

/// The config file's `[exec]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecFileConfig {
    #[serde(default)]
    pass_env: Vec<String>,
}

/// A config problem. None stops dashfloat: each becomes a chat entry and the
/// defaults stand in for what could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The config file exists but could not be read.
    #[error("cannot read the config file {path}: {detail}; using defaults")]
    Read {
        /// The config file, as the message names it.
        path: String,
        /// The OS's words.
        detail: String,
    },
    /// The config file is not valid TOML of the expected shape.
    #[error("the config file {path} is invalid: {detail}; using defaults")]
    Parse {
        /// The config file, as the message names it.
        path: String,
        /// The parser's words.
        detail: String,
    },
    /// A `--header` value without a colon.
    #[error("ignoring header {0:?}: write it as \"Name: value\"")]
    Header(String),
    /// A base URL that is not http(s) (its credentials redacted).
    #[error("the base URL {0:?} is not an http:// or https:// URL; using {LOCAL_BASE_URL}")]
    BaseUrl(String),
    /// A timeout outside [`TIMEOUT_MIN`] ..= [`TIMEOUT_MAX`].
    #[error(
        "the {setting} of {secs} s is outside {} s ..= {} s; using {} s",
        TIMEOUT_MIN.as_secs(),
        TIMEOUT_MAX.as_secs(),
        default.as_secs()
    )]
    Timeout {
        /// Which timeout, in words.
        setting: &'static str,
        /// The seconds given.
        secs: u64,
        /// What stands instead.
        default: Duration,
    },
    /// A `compact_at` outside [`COMPACT_AT_MIN`] ..= [`COMPACT_AT_MAX`].
    #[error(
        "compact_at {0} is outside {COMPACT_AT_MIN} ..= {COMPACT_AT_MAX}; using {DEFAULT_COMPACT_AT}"
    )]
    CompactAt(String),
    /// The key variable is set for a remote provider but empty.
    #[error("{0} is set but empty; requests go without an API key")]
    EmptyKey(String),
    /// The model was given as an empty name.
    #[error("the model name is empty; it is taken as not given")]
    EmptyModel,
    /// An `[mcp_servers.NAME]` table that cannot be used as it is.
    #[error(transparent)]
    Mcp(#[from] McpConfigError),
    /// A `[[hooks]]` table that cannot be used as it is.
    #[error(transparent)]
    Hook(#[from] HookConfigError),
    /// A `sandbox_deny_read` path is neither absolute nor in the home.
    #[error(
        "sandbox_deny_read: {0:?} is neither an absolute path nor one starting ~/; it is left out"
    )]
    SandboxDenyRead(String),
    /// A price in `[prices."MODEL"]` is not a number of dollars.
    #[error(
        "prices.{0:?}: each price must be dollars per million tokens, from 0 to 1000000; this model's prices are left out"
    )]
    Price(String),
}

/// Everything the rest of dashfloat needs to know about the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Base URL without a trailing slash.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The variable the key came from (named in 401 messages).
    pub api_key_env: String,
    /// The key itself, if the variable is set and a provider is configured
    /// (the built-in local default gets no key: anyone may listen there).
    /// Never written anywhere.
    pub api_key: Option<Secret>,
    /// Context window in tokens: the configured one, else a default the
    /// server's own answer may replace (ADR 0020).
    pub context_window: u64,
    /// Whether the window was configured (flag, environment or file): then
    /// the server is not asked.
    pub context_window_configured: bool,
    /// Tokens kept free for the reply, if configured (ADR 0021).
    pub max_output: Option<u64>,
    /// The share of the window past which the conversation is compacted
    /// (ADR 0021).
    pub compact_at: f64,
    /// Whether the model was configured (flag, environment or file): if
    /// not, and a provider was, the server is asked what it serves.
    pub model_configured: bool,
    /// Connect + response-header timeout.
    pub request_timeout: Duration,
    /// How long a stream may send no data (ADR 0007).
    pub idle_timeout: Duration,
    /// Extra request headers; their values may be credentials.
    pub headers: Vec<(String, Secret)>,
    /// Whether a provider was configured (false: the local default).
    pub provider_configured: bool,
    /// Which calls wait for the person (flag or env only: a config file
    /// cannot silently turn confirmations off).
    pub approval: ApprovalPolicy,
    /// Model steps per turn.
    pub max_steps: u32,
    /// Command time limit.
    pub exec_timeout: Duration,
    /// The longest time limit a call may ask for; never below
    /// `exec_timeout`.
    pub exec_timeout_max: Duration,
    /// Sampling temperature, if set.
    pub temperature: Option<f32>,
    /// Sampling seed, if set.
    pub seed: Option<u64>,
    /// Variables handed to commands on purpose, though they are credentials.
    pub pass_env: Vec<String>,
    /// Whether sessions are saved (`--no-save` and `save_sessions = false`
    /// turn it off). ADR 0022.
    pub save_sessions: bool,
    /// Whether command lines the analyser shows to be read-only run
    /// without asking under `ask` and `auto-edit` (`auto_allow_read_only
    /// = false` turns it off). ADR 0025.
    pub auto_allow_read_only: bool,
    /// Whether a file a prompt names without `@` (`config.toml`) is read
    /// for the model before it starts, as `@config.toml` always is
    /// (`attach_named_files = false` turns it off). ADR 0038.
    pub attach_named_files: bool,
    /// Whether a prompt that asks for a change or a run, answered first
    /// in words with no call, is followed by one ask to act
    /// (`ask_to_act = false` turns it off). ADR 0049.
    pub ask_to_act: bool,
    /// Whether a question about a name, answered with that name when no
    /// tool result has shown it, is followed by one ask to look
    /// (`ask_to_look = false` turns it off). ADR 0049.
    pub ask_to_look: bool,
    /// Whether a new conversation's first prompt goes out with an
    /// overview of the project: its name, version, description, test
    /// command and the top of its tree (`project_overview = false` turns
    /// it off). ADR 0048.
    pub project_overview: bool,
    /// How tool calls written as text are read (ADR 0027).
    pub tool_syntax: ToolSyntax,
    /// The API the requests speak (ADR 0052).
    pub wire: Wire,
    /// How the person is told that a turn ended or a call waits while the
    /// terminal has no focus (ADR 0056).
    pub notify: Notify,
    /// What each model costs, as `[prices."MODEL"]` says (ADR 0052).
    pub prices: BTreeMap<String, Price>,
    /// Whether the conversation is sent ahead while the person types, so
    /// the server's prompt cache holds it (ADR 0032).
    pub warm_cache: bool,
    /// Paths a sandboxed command may not read, besides the credential
    /// locations it never reads (`sandbox_deny_read`, `~/` expanded).
    /// ADR 0043.
    pub sandbox_deny_read: Vec<PathBuf>,
    /// Which commands run in the workspace-write sandbox: those nobody
    /// approved, or every one (`sandbox = "always"`). The file can only
    /// make it stricter. ADR 0044.
    pub sandbox: SandboxScope,
    /// The MCP servers of the config file's `[mcp_servers.NAME]` tables
    /// (ADR 0045); none under `--no-mcp`.
    pub mcp_servers: Vec<ServerConfig>,
    /// `--no-mcp`: no MCP server starts, not even a trusted project's.
    pub mcp_off: bool,
    /// The hooks of the config file's `[[hooks]]` tables (ADR 0054).
    pub hooks: Vec<Hook>,
}

/// dashfloat's own directory of settings: `$XDG_CONFIG_HOME/dashfloat`,
/// else `~/.config/dashfloat`; `None` when neither variable is set.
pub fn config_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("dashfloat"))
}

/// The default config file location: `config.toml` in [`config_dir`].
pub fn default_config_path(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    Some(config_dir(env)?.join("config.toml"))
}

impl Config {
    /// Loads the config: reads the file named by the flags (or the default
    /// location) and resolves it against the flags and `env`. Problems come
    /// back beside a usable config.
    pub fn load(cli: &Cli, env: impl Fn(&str) -> Option<String>) -> (Config, Vec<ConfigError>) {
        let path = cli.config_path(&env);
        let file_text = match path.as_deref().map(std::fs::read_to_string) {
            Some(Ok(text)) => Some(Ok(text)),
            Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound && cli.config.is_none() => {
                None
            }
            Some(Err(e)) => Some(Err(ConfigError::Read {
                path: display(path.as_deref()),
                detail: e.to_string(),
            })),
            None => None,
        };
        Self::resolve(cli, env, file_text, &display(path.as_deref()))
    }

    /// Resolves flags (which already carry their environment variables),
    /// the config file's text and the key variable into a config. Pure.
    pub fn resolve(
        cli: &Cli,
        env: impl Fn(&str) -> Option<String>,
        file_text: Option<Result<String, ConfigError>>,
        file_name: &str,
    ) -> (Config, Vec<ConfigError>) {
        let mut problems = Vec::new();
        let file = file_config(file_text, file_name, &mut problems);
        let timeouts = Timeouts::resolve(cli, &file, &mut problems);
        let accepted_url = accepted_base_url(cli.base_url.clone().or(file.base_url), &mut problems);
        let provider_configured = accepted_url.is_some();
        let base_url = accepted_url.unwrap_or_else(|| LOCAL_BASE_URL.to_string());
        let local = crate::base_url::is_loopback(&base_url);
        let configured_model = match cli.model.clone().or(file.model) {
            Some(name) if name.trim().is_empty() => {
                problems.push(ConfigError::EmptyModel);
                None
            }
            other => other,
        };
        let model_configured = configured_model.is_some();
        let model = configured_model.unwrap_or_else(|| LOCAL_MODEL.to_string());
        let configured_window = cli.context_window.or(file.context_window);
        let context_window_configured = configured_window.is_some();
        let context_window = configured_window.unwrap_or(if provider_configured {
            DEFAULT_CONTEXT_WINDOW
        } else {
            LOCAL_CONTEXT_WINDOW
        });
        let compact_at = match cli.compact_at.or(file.compact_at) {
            None => DEFAULT_COMPACT_AT,
            Some(share) if (COMPACT_AT_MIN..=COMPACT_AT_MAX).contains(&share) => share,
            Some(share) => {
                problems.push(ConfigError::CompactAt(share.to_string()));
                DEFAULT_COMPACT_AT
            }
        };
        let wire = cli
            .wire
            .or(file.wire)
            .unwrap_or_else(|| Wire::for_base_url(&base_url));
        let api_key_env = cli
            .api_key_env
            .clone()
            .or(file.api_key_env)
            .unwrap_or_else(|| wire.default_key_env().to_string());
        // Whatever listens on the local default's port gets no key: any
        // local user could have bound it first.
        let api_key = match env(&api_key_env).filter(|_| provider_configured) {
            Some(k) if k.trim().is_empty() => {
                problems.push(ConfigError::EmptyKey(api_key_env.clone()));
                None
            }
            other => other.map(|k| Secret::new(k.trim().to_string())),
        };
        let headers = headers(file.headers, &cli.headers, &mut problems);
        let prices = file
            .prices
            .iter()
            .filter_map(|(model, price)| match price.price() {
                Some(price) => Some((model.clone(), price)),
                None => {
                    problems.push(ConfigError::Price(model.clone()));
                    None
                }
            })
            .collect();
        let sandbox_deny_read = deny_read(file.sandbox_deny_read, env("HOME"), &mut problems);
        let mcp_off = cli.no_mcp;
        let mut mcp_problems = Vec::new();
        let mcp_servers = if mcp_off {
            Vec::new()
        } else {
            crate::mcp::config::from_toml(file.mcp_servers, &mut mcp_problems)
        };
        problems.extend(mcp_problems.into_iter().map(ConfigError::Mcp));
        let mut hook_problems = Vec::new();
        let hooks = crate::hooks::from_toml(file.hooks, Whose::Person, &mut hook_problems);
        problems.extend(hook_problems.into_iter().map(ConfigError::Hook));
        let config = Config {
            base_url,
            model,
            api_key_env,
            api_key,
            context_window,
            context_window_configured,
            max_output: cli.max_output.or(file.max_output),
            compact_at,
            model_configured,
            request_timeout: timeouts.request,
            idle_timeout: timeouts.idle,
            headers,
            provider_configured,
            approval: cli.approval.into(),
            max_steps: cli
                .max_steps
                .or(file.max_steps)
                .unwrap_or(DEFAULT_MAX_STEPS)
                .max(1),
            exec_timeout: timeouts.exec,
            exec_timeout_max: timeouts.exec_max,
            temperature: cli.temperature.or(file.temperature),
            seed: cli.seed.or(file.seed),
            pass_env: file.exec.pass_env,
            save_sessions: !cli.no_save && file.save_sessions.unwrap_or(true),
            auto_allow_read_only: file.auto_allow_read_only.unwrap_or(true),
            attach_named_files: file.attach_named_files.unwrap_or(true),
            ask_to_act: file.ask_to_act.unwrap_or(true),
            ask_to_look: file.ask_to_look.unwrap_or(true),
            project_overview: file.project_overview.unwrap_or(true),
            tool_syntax: cli.tool_syntax.or(file.tool_syntax).unwrap_or_default(),
            wire,
            notify: cli.notify.or(file.notify).unwrap_or_default(),
            prices,
            warm_cache: cli.warm_cache.or(file.warm_cache).unwrap_or(local),
            sandbox_deny_read,
            sandbox: file.sandbox.unwrap_or_default(),
            mcp_servers,
            mcp_off,
            hooks,
        };
        (config, problems)
    }

    /// What the server is to be asked at start-up: the window unless one
    /// was configured; the models served unless a model was configured or
    /// the base URL is the local default, whose model name is fixed by
    /// `scripts/local-model` (ADR 0020); what kind of server it is when
    /// the cache is warmed for it, as it is by default on this machine: a
    /// llama.cpp server's slot is then saved and restored (ADR 0034).
    pub fn questions(&self) -> Questions {
        Questions {
            window: !self.context_window_configured,
            models: self.provider_configured && !self.model_configured,
            kind: self.warm_cache,
        }
    }

    /// The provider's host (and port), for the status bar: never the
    /// credentials a base URL may carry.
    pub fn host(&self) -> String {
        crate::base_url::host(&self.base_url)
    }
}

/// The config file's settings: none when there is no file; a file that
/// cannot be read or parsed is a problem, and the defaults stand.
fn file_config(
    file_text: Option<Result<String, ConfigError>>,
    file_name: &str,
    problems: &mut Vec<ConfigError>,
) -> FileConfig {
    match file_text {
        None => FileConfig::default(),
        Some(Err(e)) => {
            problems.push(e);
            FileConfig::default()
        }
        Some(Ok(text)) => toml::from_str(&text).unwrap_or_else(|e: toml::de::Error| {
            problems.push(ConfigError::Parse {
                path: file_name.to_string(),
                detail: e.message().to_string(),
            });
            FileConfig::default()
        }),
    }
}

/// The base URL configured, if it is one requests can go to. Only a URL
/// that is used counts as configured: one refused here is a problem and
/// falls back to the local default, which must get no key either.
fn accepted_base_url(
    configured: Option<String>,
    problems: &mut Vec<ConfigError>,
) -> Option<String> {
    let url = configured?;
    match crate::base_url::usable(&url) {
        Some(usable) => Some(usable.trim_end_matches('/').to_string()),
        None => {
            problems.push(ConfigError::BaseUrl(redact_userinfo(&url).into_owned()));
            None
        }
    }
}

/// The four time limits, each from its flag, else the file, else its
/// default; one out of bounds is a problem and the default stands.
struct Timeouts {
    request: Duration,
    idle: Duration,
    exec: Duration,
    exec_max: Duration,
}

impl Timeouts {
    fn resolve(cli: &Cli, file: &FileConfig, problems: &mut Vec<ConfigError>) -> Timeouts {
        let mut secs = |setting, flag: Option<u64>, file: Option<u64>, default| {
            let Some(secs) = flag.or(file) else {
                return default;
            };
            let given = Duration::from_secs(secs);
            if (TIMEOUT_MIN..=TIMEOUT_MAX).contains(&given) {
                given
            } else {
                problems.push(ConfigError::Timeout {
                    setting,
                    secs,
                    default,
                });
                default
            }
        };
        let request = secs(
            "request timeout",
            cli.request_timeout,
            file.request_timeout_secs,
            DEFAULT_REQUEST_TIMEOUT,
        );
        let idle = secs(
            "idle timeout",
            cli.idle_timeout,
            file.idle_timeout_secs,
            DEFAULT_IDLE_TIMEOUT,
        );
        let exec = secs(
            "exec timeout",
            cli.exec_timeout,
            file.exec_timeout_secs,
            EXEC_DEFAULT_TIMEOUT,
        );
        let exec_max = secs(
            "longest exec timeout",
            cli.exec_timeout_max,
            file.exec_timeout_max_secs,
            EXEC_DEFAULT_MAX_TIMEOUT,
        )
        .max(exec);
        Timeouts {
            request,
            idle,
            exec,
            exec_max,
        }
    }
}

/// The file's `[headers]`, then each `--header "Name: value"` replacing a
/// header of the same name; a flag without a name is a problem.
fn headers(
    file: BTreeMap<String, String>,
    flags: &[String],
    problems: &mut Vec<ConfigError>,
) -> Vec<(String, Secret)> {
    let mut headers: Vec<(String, Secret)> = file
        .into_iter()
        .map(|(name, value)| (name, Secret::new(value)))
        .collect();
    for raw in flags {
        match raw.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                let name = name.trim().to_string();
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                headers.push((name, Secret::new(value.trim().to_string())));
            }
            _ => problems.push(ConfigError::Header(raw.clone())),
        }
    }
    headers
}

/// `--tool-syntax` as clap reads it.
/// The `sandbox_deny_read` paths: absolute ones as they are, `~/x` in
/// `home`; any other is a problem and left out.
fn deny_read(
    paths: Vec<String>,
    home: Option<String>,
    problems: &mut Vec<ConfigError>,
) -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(paths.len());
    for raw in paths {
        let path = match (raw.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) if Path::new(home).is_absolute() => Path::new(home).join(rest),
            (Some(_), _) => PathBuf::new(),
            (None, _) => PathBuf::from(&raw),
        };
        if path.is_absolute() {
            out.push(path);
        } else {
            problems.push(ConfigError::SandboxDenyRead(raw));
        }
    }
    out
}

fn parse_tool_syntax(name: &str) -> Result<ToolSyntax, crate::llm::adapters::AdapterError> {
    name.parse()
}

fn display(path: Option<&Path>) -> String {
    path.map_or_else(|| "(none)".to_string(), |p| p.display().to_string())
}
