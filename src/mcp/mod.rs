//! The MCP client: the tools of the servers a person configured (their
//! database, issue tracker, browser, docs server) offered beside the
//! built-ins as `mcp__SERVER__TOOL`, under the same approvals, bounds and
//! sandbox. `config` reads the tables (the person's choice about a
//! project's `.mcp.json` is kept by `crate::trust`), `connection` speaks the protocol
//! through the official SDK, `servers` keeps each server's state,
//! `tool` is one tool as the registry takes it, `result` turns an answer
//! into text, `names` makes the names providers take; `cli` is
//! `dashfloat mcp list|get|add|remove`. ADR 0045.

pub mod cli;
pub mod config;
mod connection;
pub mod names;
pub mod result;
mod servers;
mod tool;

pub use connection::{MESSAGE_MAX_BYTES, SERVER_TOOLS_MAX, TOOL_PAGES_MAX};
pub use servers::{McpServers, RESTARTS_MAX};
pub use tool::{DESCRIPTION_MAX_CHARS, McpTool, SCHEMA_MAX_BYTES};
