//! The screen without a terminal: the pure update, the editor, the
//! markdown renderer, the wrapping engine, snapshots drawn on ratatui's
//! `TestBackend`, and control bytes kept off the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod control_bytes;
mod editor;
mod markdown;
mod screens;
mod update;
mod wrap;
