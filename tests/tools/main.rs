//! The tools against real files in temporary directories and real
//! processes under `/bin/sh`: the path policy, each tool, validation,
//! previews, and the result bytes the model reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod confinement;
mod env;
mod exec;
mod list;
mod path_fuzz;
mod path_policy;
mod preview;
mod read;
mod results;
mod validation;
mod write_edit;
