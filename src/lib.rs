//! dashfloat: a full-screen terminal coding agent for OpenAI-compatible
//! chat-completions endpoints. The binary wires these modules together; the
//! library exists so `tests/` and `benches/` can drive each part.
//!
//! Start with [`protocol`]: the messages the four kinds of task exchange.

pub mod agent;
pub mod base_url;
pub mod bounds;
pub mod commands;
pub mod config;
pub mod exec;
pub mod hooks;
pub mod launch;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod memory;
pub mod overview;
pub mod own_files;
pub mod permissions;
pub mod protocol;
pub mod safe_text;
pub mod secret;
pub mod session;
pub mod stable_hash;
pub mod tools;
pub mod trust;
pub mod ui;
