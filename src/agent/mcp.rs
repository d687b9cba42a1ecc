//! The agent's side of the MCP servers (ADR 0045): it starts them with
//! itself, offers their tools from the next turn after any change (never
//! within a turn, so the prefix stays byte-stable while the turn runs),
//! says what failed or was left out, and answers `/mcp`.

use std::sync::Arc;

use crate::llm::adapters::OfferedTools;
use crate::mcp::config::from_project_file;
use crate::protocol::{AgentEvent, Severity};
use crate::safe_text::strip_controls;
use crate::tools::{DynamicTool, Registry};

use super::Agent;
use super::turn::Wanted;

impl Agent {
    /// Starts the configured servers, each in a task of its own: nothing
    /// waits for them.
    pub(super) fn start_mcp(&mut self) {
        if let Some(servers) = &self.setup.mcp {
            servers.start(None);
        }
    }

    /// Before a turn's first request: the tools of the servers as they
    /// are now, when anything changed since the last turn; notices for
    /// servers still starting (this prompt goes without their tools).
    /// `dashfloat exec` first waits for every server to have started or
    /// failed, as its one prompt may need them.
    pub(super) async fn refresh_mcp_tools(&mut self) {
        let Some(servers) = self.setup.mcp.clone() else {
            return;
        };
        if self.setup.headless {
            servers.settled().await;
        }
        self.tell_mcp_notes().await;
        let starting = servers.starting();
        if !starting.is_empty() {
            let names = shown(&starting);
            self.system(
                Severity::Notice,
                format!(
                    "MCP servers still starting: {names}; this prompt goes without their tools"
                ),
            )
            .await;
        }
        let generation = *servers.watch().borrow();
        if self.mcp_generation == Some(generation) {
            return;
        }
        self.mcp_generation = Some(generation);
        let mut registry = Registry::builtin();
        let builtin = registry.clone();
        let tools = servers.tools(|name| builtin.contains(name));
        let mut refused = Vec::new();
        for tool in tools {
            let server = tool.server_name().to_owned();
            if let Err(e) = registry.register(tool as Arc<dyn DynamicTool>) {
                refused.push(format!("MCP server {}: {e}", strip_controls(&server)));
            }
        }
        self.tell_mcp_notes().await;
        for text in refused {
            self.system(Severity::Notice, text).await;
        }
        self.tool_catalogue = registry.definitions();
        self.offered = Arc::new(OfferedTools::from_definitions(&self.tool_catalogue));
        self.setup.registry = registry;
    }

    /// Shows what the servers noted since last asked (a server that
    /// failed, tools left out or renamed).
    pub(super) async fn tell_mcp_notes(&mut self) {
        let Some(servers) = &self.setup.mcp else {
            return;
        };
        for (severity, text) in servers.take_notes() {
            self.system(severity, text).await;
        }
    }

    /// `/mcp`: each server's state and tools, and what its offered tools
    /// cost every request in tokens.
    pub(super) async fn list_mcp(&mut self) {
        let Some(servers) = self.setup.mcp.clone() else {
            self.system(
                Severity::Notice,
                "MCP servers are off in this session (--no-mcp)",
            )
            .await;
            return;
        };
        let definitions = self.tool_catalogue.as_array().cloned().unwrap_or_default();
        let budget = &self.budget;
        let views = servers.views(|server| {
            let prefix = format!("{}{server}__", crate::mcp::names::PREFIX);
            let bytes: usize = definitions
                .iter()
                .filter(|d| {
                    d["function"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with(&prefix))
                })
                .map(|d| d.to_string().len())
                .sum();
            budget.tokens(bytes)
        });
        self.emit(AgentEvent::McpServers(views)).await;
    }

    /// `/mcp restart NAME`.
    pub(super) async fn restart_mcp(&mut self, name: String) {
        let restarted = self
            .setup
            .mcp
            .as_ref()
            .is_some_and(|servers| servers.restart(&name));
        let shown = strip_controls(&name).into_owned();
        if restarted {
            self.system(
                Severity::Notice,
                format!("starting MCP server {shown} again; its tools are offered from the next prompt once it is ready"),
            )
            .await;
        } else {
            self.system(
                Severity::Error,
                format!("there is no MCP server named {shown}; /mcp lists them"),
            )
            .await;
        }
    }

    /// `/mcp trust`: the project's `.mcp.json` as it is now is trusted,
    /// and its servers start.
    pub(super) async fn trust_mcp(&mut self) {
        if !self.admit(Wanted::Trust("/mcp trust")).await {
            return;
        }
        let (Some(servers), Some(trust)) = (self.setup.mcp.clone(), self.setup.mcp_trust.clone())
        else {
            self.system(
                Severity::Error,
                "MCP servers are off in this session, or there is no configuration directory to keep the trust in",
            )
            .await;
            return;
        };
        let Some(configs) = self.trust_project_file(&trust, from_project_file).await else {
            return;
        };
        let added = servers.add(configs);
        servers.start(Some(&added));
        self.tell_mcp_notes().await;
        let names = shown(&added);
        self.system(
            Severity::Notice,
            format!("this project's .mcp.json is trusted as it is now; starting: {names}"),
        )
        .await;
    }
}

/// Servers' names as a notice shows them: cleaned, joined by commas.
fn shown(names: &[String]) -> String {
    names
        .iter()
        .map(|n| strip_controls(n).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}
