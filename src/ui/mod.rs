//! The UI task: screen state with a pure `update` and `view`, and the loop
//! that reads the terminal and the agent's events. It knows the `protocol`
//! and nothing of HTTP, files or processes.

pub mod app;
pub mod editor;
pub mod entry;
pub mod input;
pub mod keys;
pub mod markdown;
pub mod mcp;
pub mod mention;
pub mod mode;
pub mod notify;
pub mod picker;
pub mod slash;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod transcript;
pub mod update;
pub mod view;
pub mod width;
pub mod wrap;
