//! What `/mcp` shows: each MCP server's state (starting, ready with its
//! tools, failed with why, disabled), what its offered tools cost every
//! request, and each tool with what the person may need to know of it.
//! Made from the agent's plain answer; the names and descriptions were
//! cleaned of control characters before they left the agent. ADR 0045.

use crate::protocol::{McpServerState, McpServerView};

/// The listing, one line a server and one a tool.
pub fn listing(servers: &[McpServerView]) -> String {
    if servers.is_empty() {
        return "no MCP servers are configured: add one with `dashfloat mcp add NAME -- COMMAND` \
or a [mcp_servers.NAME] table in config.toml"
            .to_owned();
    }
    let mut out = String::from("MCP servers (/mcp restart NAME starts one again):");
    for server in servers {
        let state = match &server.state {
            McpServerState::Disabled => "disabled (enabled = false)".to_owned(),
            McpServerState::Starting => "starting".to_owned(),
            McpServerState::Failed(why) => format!("failed: {why}"),
            McpServerState::Ready { protocol } => {
                let offered = server.tools.iter().filter(|t| t.offered).count();
                let of = if offered == server.tools.len() {
                    String::new()
                } else {
                    format!(" of {} listed", server.tools.len())
                };
                format!(
                    "ready, {offered} tools{of} (~{} tokens a request), protocol {protocol}",
                    server.tokens
                )
            }
        };
        out.push_str(&format!("\n• {}: {state}", server.name));
        for tool in &server.tools {
            let mut marks = Vec::new();
            if !tool.offered {
                marks.push("not offered");
            }
            if tool.approved {
                marks.push("runs unasked");
            }
            if tool.read_only_hint {
                marks.push("says it only reads");
            }
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!(" [{}]", marks.join(", "))
            };
            out.push_str(&format!("\n    {}{marks} {}", tool.name, tool.description));
        }
    }
    out
}
