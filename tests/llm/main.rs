//! The model's side of the wire: the stream task against the scripted
//! server, the frame cutter, the tool-call accumulator, credentials on the
//! way to the provider, and the scripted server itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod guarded;
mod secrets;
mod stream;
mod support_selftest;
mod tool_calls;
