//! The MCP client against real servers the tests start: one written with
//! the official Python SDK (stdio and Streamable HTTP), a hostile one
//! speaking raw JSON-RPC, and the published reference server
//! `@modelcontextprotocol/server-everything`; `scripts/mcp-servers`
//! installs what they need the first time. Then the agent end to end
//! against the scripted model server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod agent;
mod binary;
mod config;
mod hostile;
mod servers;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use dashfloat::log::Log;
use dashfloat::mcp::config::{ServerConfig, from_toml};
use dashfloat::mcp::{McpServers, McpTool};
use dashfloat::tools::{DynamicOutput, DynamicTool, ToolContext, ToolFailure};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// What `scripts/mcp-servers install` installed.
pub struct Installed {
    /// The venv's python, with the SDK.
    pub python: String,
    /// The command line of server-everything over stdio.
    pub everything: Vec<String>,
}

/// Installs the servers' needs once (the script holds a lock across
/// test processes) and says where they are.
pub fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let script = repo().join("scripts/mcp-servers");
        let out = std::process::Command::new(&script)
            .arg("install")
            .output()
            .expect("run scripts/mcp-servers");
        assert!(
            out.status.success(),
            "scripts/mcp-servers install failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("no {key}= in {text}"))
                .to_owned()
        };
        Installed {
            python: value("python"),
            everything: value("everything").split(' ').map(str::to_owned).collect(),
        }
    })
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A server's path under `tests/mcp/servers`.
pub fn server_script(name: &str) -> String {
    repo()
        .join("tests/mcp/servers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The configs a `[mcp_servers]` TOML text gives (every table must be
/// valid).
pub fn configs(toml_text: &str) -> Vec<ServerConfig> {
    let mut parsed: toml::Table = toml::from_str(toml_text).unwrap();
    let Some(toml::Value::Table(servers)) = parsed.remove("mcp_servers") else {
        panic!("no mcp_servers in {toml_text}");
    };
    let mut problems = Vec::new();
    let configs = from_toml(servers.into_iter().collect(), &mut problems);
    assert_eq!(problems, [], "{toml_text}");
    configs
}

/// A TOML string literal of `text`.
pub fn lit(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The `[mcp_servers.NAME]` table of the SDK server over stdio, logging
/// to `log`, with `extra` lines added.
pub fn sdk_table(name: &str, log: &Path, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = [{}, \"--transport\", \"stdio\"]\n{extra}\n[mcp_servers.{name}.env]\nMCP_TEST_LOG = {}\n",
        lit(&installed().python),
        lit(&server_script("sdk_server.py")),
        lit(&log.to_string_lossy()),
    )
}

/// The table of the hostile server in `mode`, logging to `log`.
pub fn hostile_table(name: &str, mode: &str, log: &Path, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = [{}, {}]\n{extra}\n[mcp_servers.{name}.env]\nMCP_TEST_LOG = {}\n",
        lit(&installed().python),
        lit(&server_script("hostile.py")),
        lit(mode),
        lit(&log.to_string_lossy()),
    )
}

/// The servers of `configs`, their tools run in `root`, started, and
/// waited for until none is starting.
pub async fn started(configs: Vec<ServerConfig>, root: &Path) -> McpServers {
    let servers = McpServers::new(configs, ToolContext::new(root).unwrap(), Log::off(), |k| {
        std::env::var(k).ok()
    });
    servers.start(None);
    tokio::time::timeout(Duration::from_secs(60), servers.settled())
        .await
        .expect("servers settle");
    servers
}

/// The tool offered as `name`.
pub fn tool(servers: &McpServers, name: &str) -> std::sync::Arc<McpTool> {
    let tools = servers.tools(|_| false);
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            panic!("no tool {name}; there are {names:?}")
        })
}

/// Runs `tool` with `arguments` in `root`.
pub async fn call(
    tool: &McpTool,
    arguments: Value,
    root: &Path,
) -> Result<DynamicOutput, ToolFailure> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let ctx = ToolContext::new(root).unwrap();
    tool.run(&arguments, &ctx, &CancellationToken::new()).await
}

/// The JSON events a test server logged so far.
pub fn events(log: &Path) -> Vec<Map<String, Value>> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Waits (up to 20 s) until the log holds an event `pred` accepts.
pub async fn wait_for_event(log: &Path, pred: impl Fn(&Map<String, Value>) -> bool) {
    for _ in 0..200 {
        if events(log).iter().any(&pred) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no such event in {:#?}", events(log));
}
