//! Approvals that are remembered (issue 39, ADR 0044): `a` in a
//! command's confirmation remembers its [`Rule`] — the program and the
//! words that choose what it does — for this project, and from then on a
//! line of that rule runs without asking, always in the workspace-write
//! sandbox. The rules live in dashfloat's configuration directory, keyed
//! by the project's real path ([`Store`]); `/permissions` lists and
//! removes them.

mod rule;
pub(crate) mod store;

pub use rule::{NoRule, Rule};
pub use store::{Store, StoreError};
