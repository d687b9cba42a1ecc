//! `dashfloat prime-cache`: the fixed prefix of a new session (system
//! prompt, the project's instructions, tool schemas) read into a local
//! llama-server's cache and saved as its slot before the first session
//! starts, so that even the first prompt of the first run is served from
//! a saved slot. It is the agent's own start-up — instructions, discovery,
//! the new session's warm-up — without a screen, so the slot file it saves
//! is named by the very bytes a session started in the same directory with
//! the same configuration sends (ADR 0034). The project overview
//! (ADR 0048) is no part of that prefix: the session sends it ahead
//! itself, after restoring the prefix.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{Agent, AgentSetup, Warmed, task_failure};

/// The longest priming may take in all. Its steps have bounds of their
/// own (discovery, the slot actions, the warm-up's request and idle
/// timeouts), but a configuration may raise the last to hours, and a
/// script that a person waits for runs this: reading the prefix takes
/// about 20 s on two cores.
pub const PRIME_TIMEOUT: Duration = Duration::from_secs(300);

/// What priming did.
#[derive(Debug)]
pub enum Primed {
    /// The server had the prefix's slot saved already, and restored it.
    Restored {
        /// The slot file.
        file: String,
        /// The tokens it holds.
        tokens: u64,
    },
    /// The server read the prefix and saved its slot.
    Saved {
        /// The slot file.
        file: String,
        /// The tokens saved.
        tokens: u64,
        /// How long the reading took, in seconds.
        secs: f64,
    },
    /// The server read the prefix (its cache holds it until the next
    /// request) but did not save it.
    NotSaved {
        /// The slot file asked for.
        file: String,
        /// How long the reading took, in seconds.
        secs: f64,
        /// What the server said.
        why: String,
    },
    /// The cache warm-up is off: no session restores a saved prefix, so
    /// there is nothing to do.
    Off,
    /// The server did not answer as llama.cpp does (or did not answer):
    /// only llama.cpp saves its slot.
    NoSlots {
        /// What discovery ran into, if anything.
        why: String,
    },
    /// The prefix could not be read.
    Failed(String),
    /// [`PRIME_TIMEOUT`] ran out.
    TimedOut,
}

impl Primed {
    /// Whether the server now has the prefix's slot saved, or there was
    /// nothing to do.
    pub fn succeeded(&self) -> bool {
        matches!(self, Self::Restored { .. } | Self::Saved { .. } | Self::Off)
    }
}

impl std::fmt::Display for Primed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Restored { file, tokens } => write!(
                f,
                "the fixed prompt was saved before: the server restored {file} ({tokens} tokens)"
            ),
            Self::Saved { file, tokens, secs } => write!(
                f,
                "the server read the fixed prompt in {secs:.1} s and saved it as {file} ({tokens} tokens)"
            ),
            Self::NotSaved { file, secs, why } => write!(
                f,
                "the server read the fixed prompt in {secs:.1} s but did not save it as {file}: {why}"
            ),
            Self::Off => write!(
                f,
                "nothing to do: the cache warm-up is off (--warm-cache, warm_cache), so no session restores a saved prompt"
            ),
            Self::NoSlots { why } if why.is_empty() => write!(
                f,
                "nothing done: the server is not llama.cpp, the only one that saves its cache"
            ),
            Self::NoSlots { why } => write!(
                f,
                "nothing done: the server did not answer as llama.cpp, the only one that saves its cache ({why})"
            ),
            Self::Failed(why) => write!(f, "the server did not read the fixed prompt: {why}"),
            Self::TimedOut => write!(
                f,
                "gave up after {} s: the server had not read and saved the fixed prompt",
                PRIME_TIMEOUT.as_secs()
            ),
        }
    }
}

/// Starts as an interactive session started with `setup` would — reads
/// the project's instructions, asks the server what it is and which model
/// it serves — and runs its warm-up of the new conversation: the server
/// restores the prefix's slot if it saved it before, else reads the
/// prefix and saves it. Nothing is shown; what happened is returned (and
/// written to the log). Bounded by [`PRIME_TIMEOUT`].
pub async fn prime(setup: AgentSetup) -> Primed {
    let deadline = tokio::time::Instant::now() + PRIME_TIMEOUT;
    // No one watches: what the start-up would show is dropped.
    let (ui, _) = mpsc::channel(1);
    let (mut agent, _results) = Agent::new(setup, ui);
    if let Err(why) = &agent.setup.endpoint {
        return Primed::Failed(why.to_string());
    }
    let start_up = async {
        agent.read_instructions().await;
        agent.discover().await
    };
    let Ok(problems) = tokio::time::timeout_at(deadline, start_up).await else {
        return Primed::TimedOut;
    };
    let Some(file) = agent.prefix_slot_file() else {
        return if agent.setup.warm_cache {
            Primed::NoSlots {
                why: problems.join("; "),
            }
        } else {
            Primed::Off
        };
    };
    agent.warm_cache();
    let Some(mut warming) = agent.warming.take() else {
        return Primed::Failed("the warm-up did not start".to_owned());
    };
    let warmed = match tokio::time::timeout_at(deadline, &mut warming).await {
        Err(_) => {
            warming.abort();
            return Primed::TimedOut;
        }
        Ok(Err(e)) => return Primed::Failed(task_failure("warm-up", &e)),
        Ok(Ok(warmed)) => warmed,
    };
    match warmed {
        Warmed::PrefixRestored { tokens } => Primed::Restored { file, tokens },
        Warmed::Read {
            secs,
            saved: Some(Ok(tokens)),
        } => Primed::Saved { file, tokens, secs },
        Warmed::Read {
            secs,
            saved: Some(Err(e)),
        } => Primed::NotSaved {
            file,
            secs,
            why: e.to_string(),
        },
        Warmed::Failed(e) => Primed::Failed(e.to_string()),
        // A new conversation has no session slot, and its warm-up always
        // asks to save the prefix's.
        other @ (Warmed::SessionRestored | Warmed::Read { saved: None, .. }) => {
            Primed::Failed(format!("the warm-up ended unexpectedly: {other:?}"))
        }
    }
}
