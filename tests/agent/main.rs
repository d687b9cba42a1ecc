//! The agent actor against the scripted server (turns, tool calls,
//! confirmations), the repeat detector, the configuration it starts from,
//! and the sessions it saves and opens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod auto;
mod checkpoints;
mod commands;
mod compaction;
mod config;
mod custom_commands;
mod grounding;
mod hooks;
mod images;
mod instructions;
mod journal;
mod mentions;
mod overview;
mod overview_sent;
mod permissions;
mod read_only;
mod registry;
mod remembered;
mod repeat;
mod sessions;
mod tools;
mod turns;
mod warm;
mod wipe;
mod wires;
