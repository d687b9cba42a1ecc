//! Sending the project overview (ADR 0048): built on the blocking pool
//! when a conversation opens (at start-up and on `/clear`), it joins the
//! conversation as a message of dashfloat's own just before the person's
//! first words, and goes out with them as one user message. The system
//! prompt and the tools — the fixed prefix every project shares, and whose
//! saved slot serves them all (ADR 0034) — stay as they are. The warm-up
//! sends it ahead too, once the prefix is in the server's cache
//! (`Agent::warm_cache`).

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::overview::{self, Overview};
use crate::protocol::Severity;

use super::{Agent, task_failure};

/// How long a prompt, or the warm-up, waits for an overview still being
/// built before it goes on without one (2 s): it is ready within
/// milliseconds unless the project sits on a stalled mount.
const OVERVIEW_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The overview for the conversation about to start.
#[derive(Debug, Default)]
pub(super) enum Pending {
    /// None: it is off, was sent, or the conversation opened with
    /// messages of its own (a saved session).
    #[default]
    No,
    /// Being built on the blocking pool.
    Building(JoinHandle<Option<Overview>>),
    /// Built; `None` when there was nothing to say, or it took too long.
    Ready(Option<Overview>),
}

impl Agent {
    /// Starts building the overview for the conversation just opened,
    /// when it is on and the conversation holds only the system prompt.
    pub(super) fn build_overview(&mut self) {
        if let Pending::Building(building) = std::mem::take(&mut self.overview) {
            building.abort();
        }
        if !self.setup.project_overview || self.conversation.messages().len() != 1 {
            return;
        }
        let ws = Arc::clone(&self.setup.tools.workspace);
        let build = tokio::task::spawn_blocking(move || overview::build(ws.as_ref()));
        self.overview = Pending::Building(build);
    }

    /// Waits for the overview being built, at most [`OVERVIEW_WAIT`]; a
    /// build that fails or takes longer is left out (and noted in the
    /// log).
    pub(super) async fn settle_overview(&mut self) {
        let Pending::Building(building) = &mut self.overview else {
            return;
        };
        let built = match tokio::time::timeout(OVERVIEW_WAIT, building).await {
            Ok(Ok(built)) => built,
            Ok(Err(e)) => {
                let why = task_failure("project overview", &e);
                self.setup.log.line(|| why);
                None
            }
            Err(_) => {
                self.setup.log.line(|| {
                    "project overview: not built in time; the conversation opens without it"
                        .to_owned()
                });
                None
            }
        };
        self.overview = Pending::Ready(built);
    }

    /// The overview ready to open the conversation, if any.
    pub(super) fn overview_ready(&self) -> Option<&Overview> {
        match &self.overview {
            Pending::Ready(ready) => ready.as_ref(),
            Pending::No | Pending::Building(_) => None,
        }
    }

    /// Before the person's first words of a conversation: the overview
    /// joins it, and a notice tells the person what was sent.
    pub(super) async fn open_with_overview(&mut self) {
        if self.conversation.messages().len() != 1 {
            return;
        }
        self.settle_overview().await;
        let Pending::Ready(Some(overview)) = std::mem::take(&mut self.overview) else {
            return;
        };
        self.setup
            .log
            .line(|| format!("project overview sent:\n{}", overview.text));
        let facts = if overview.headline.is_empty() {
            String::new()
        } else {
            format!(": {}", overview.headline)
        };
        let notice = format!(
            "project overview sent with the prompt ({} lines{facts})",
            overview.lines()
        );
        self.conversation.push_user(overview.text);
        self.system(Severity::Notice, notice).await;
    }
}

#[cfg(test)]
mod tests {
    use crate::agent::conversation::{Conversation, is_prompt};
    use crate::overview::OVERVIEW_OPENING;

    /// The overview is dashfloat's note, not a prompt of the person's: a
    /// rewind, `/undo` and the prompt list pass over it.
    #[test]
    fn the_overview_is_no_prompt_of_the_persons() {
        let mut c = Conversation::new("system");
        c.push_user(format!(
            "{OVERVIEW_OPENING}\n<project_overview>\n</project_overview>"
        ));
        c.push_user("hi".to_owned());
        assert!(!is_prompt(&c.messages()[1]));
        assert_eq!(c.prompts().map(|(at, _)| at).collect::<Vec<_>>(), [2]);
    }
}
