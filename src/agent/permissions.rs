//! The commands remembered for the project, as the agent changes and
//! shows them: `a` in a confirmation adds one, `/permissions` lists them
//! and `/permissions remove` forgets one (ADR 0044). The rules file is
//! read and written off the agent's task; what goes wrong is a chat
//! entry, and what was remembered holds for this session all the same.

use crate::permissions::{Rule, Store, StoreError};
use crate::protocol::Severity;

use super::Agent;

/// How the list names the sandbox the remembered commands run in.
const RUNS_IN: &str = "they run unasked, in the workspace-write sandbox";

impl Agent {
    /// Remembers `rule` for the project: at once for this session, and in
    /// the rules file.
    pub(super) async fn remember(&mut self, rule: Rule) {
        let remembered = &mut self.setup.approval.remembered;
        if !remembered.rules.contains(&rule) {
            remembered.rules.push(rule.clone());
        }
        let Some(store) = remembered.store.clone() else {
            return;
        };
        let kept = {
            let rule = rule.clone();
            on_file(store, move |store| store.add(&rule)).await
        };
        match kept {
            Ok(rules) => {
                self.setup.approval.remembered.rules = rules;
                let text = format!(
                    "remembered `{rule}` for this project: {RUNS_IN} (/permissions lists them)"
                );
                self.system(Severity::Notice, text).await;
            }
            Err(why) => {
                let text = format!("`{rule}` is remembered for this session only: {why}");
                self.system(Severity::Error, text).await;
            }
        }
    }

    /// `/permissions`: the commands remembered for the project.
    pub(super) async fn list_permissions(&mut self) {
        let remembered = &self.setup.approval.remembered;
        let text = match (&remembered.store, remembered.rules.as_slice()) {
            (None, _) => {
                "no command can be remembered: neither XDG_CONFIG_HOME nor HOME is set".to_owned()
            }
            (Some(store), []) => format!(
                "no command is remembered for {} (a in a command's confirmation remembers one)",
                store.project().display()
            ),
            (Some(store), rules) => {
                let listed: Vec<String> = rules
                    .iter()
                    .enumerate()
                    .map(|(i, rule)| format!("  {}. {rule}", i + 1))
                    .collect();
                format!(
                    "remembered for {} ({RUNS_IN}; /permissions remove N forgets one):\n{}",
                    store.project().display(),
                    listed.join("\n")
                )
            }
        };
        let text = match self.setup.approval.workspace_write.get() {
            Err(why) if !remembered.rules.is_empty() => {
                format!("{text}\nnone applies here, as it would run unsandboxed: {why}")
            }
            _ => text,
        };
        self.system(Severity::Notice, text).await;
    }

    /// `/permissions remove RULE`: forgets the rule named by its number
    /// in the list or by its words.
    pub(super) async fn forget_permission(&mut self, named: String) {
        let rules = &self.setup.approval.remembered.rules;
        let by_number = named
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| rules.get(i).cloned());
        let Some(rule) = by_number.or_else(|| named.parse::<Rule>().ok()) else {
            let text = format!("`{named}` is not a remembered command; /permissions lists them");
            return self.system(Severity::Error, text).await;
        };
        let held = rules.contains(&rule);
        self.setup.approval.remembered.rules.retain(|r| *r != rule);
        let removed = match self.setup.approval.remembered.store.clone() {
            None => Ok(held),
            Some(store) => {
                let rule = rule.clone();
                on_file(store, move |store| store.remove(&rule))
                    .await
                    .map(|(rules, on_file)| {
                        self.setup.approval.remembered.rules = rules;
                        held || on_file
                    })
            }
        };
        let (severity, text) = match removed {
            Ok(true) => (
                Severity::Notice,
                format!("forgot `{rule}`: it asks again from now on"),
            ),
            Ok(false) => (
                Severity::Error,
                format!("`{rule}` is not remembered; /permissions lists what is"),
            ),
            Err(why) => (
                Severity::Error,
                format!("`{rule}` is forgotten for this session only: {why}"),
            ),
        };
        self.system(severity, text).await;
    }
}

/// Runs `work` on the rules file off the agent's task.
async fn on_file<T: Send + 'static>(
    store: Store,
    work: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(move || work(&store)).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(super::task_failure("rules file", &e)),
    }
}
