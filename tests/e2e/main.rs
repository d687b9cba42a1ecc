//! End to end: the real `dashfloat` binary in a pseudo-terminal against
//! the scripted server, and (ignored unless `scripts/test` runs them) the
//! agent and the binary against the real local model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod llm;
mod pty;
mod secrets;
