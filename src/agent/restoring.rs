//! `/undo`, `/redo` and rewind: putting files back from the session's
//! checkpoints, each change shown for approval first, and dropping the
//! conversation from an earlier prompt on. The files are surveyed and
//! written on the blocking pool, awaited: a restore is a few small files,
//! and nothing else runs while the person is asked. ADR 0035.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::protocol::{
    AgentEvent, CallId, ConfirmRequest, Decision, Phase, PreviewKind, PreviewLine, Severity,
};
use crate::tools::{
    self, CHECKPOINT_MAX_BYTES, Restored, Standing, Surveyed, TurnChanges, Workspace,
};

use super::conversation::NOTE_PREFIX;
use super::turn::Wanted;
use super::{Agent, task_failure};

/// Which way a restore goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// `/undo`: back to before the latest turn that changed files.
    Undo,
    /// `/redo`: forward again to what the last `/undo` reverted.
    Redo,
    /// A rewind's offer: back to before the turns it dropped.
    Rewind,
}

/// What a restore or rewind says when a command ran in the turns it
/// reverts, or after them.
const COMMANDS_NOT_UNDONE: &str =
    "the commands run since that turn are not undone: only write_file and edit_file are tracked";

/// A restore waiting for the person.
pub(super) struct Restoring {
    direction: Direction,
    /// The changes being restored, kept whole should none be applied.
    source: TurnChanges,
    /// A command ran in the turns it reverts (or after them), which no
    /// restore undoes.
    commands_ran: bool,
    /// The confirmation shown now, and its files.
    asking: (CallId, Vec<Surveyed>),
    /// Confirmations still to show: the files changed since the turn.
    waiting: VecDeque<(Vec<PreviewLine>, Vec<Surveyed>)>,
    position: usize,
    of: usize,
    /// How each file ended.
    outcomes: Vec<(String, Restored)>,
    /// What undoes what was applied.
    back: Vec<tools::FileChange>,
    /// Some file could be restored: a restore that applied nothing keeps
    /// the changes for another try; one of only unrestorable files drops
    /// them, so the next `/undo` steps further back.
    restorable: bool,
}

impl Restoring {
    /// Whether `id` is the confirmation this restore shows.
    pub(super) fn asks(&self, id: &str) -> bool {
        self.asking.0 == id
    }
}

impl Agent {
    /// `/undo` (the latest turn that changed files) or `/redo` (what the
    /// last `/undo` reverted).
    pub(super) async fn step(&mut self, direction: Direction) {
        let (name, none) = match direction {
            Direction::Redo => (
                "redo",
                "/undo has not reverted anything since the last change",
            ),
            Direction::Undo | Direction::Rewind => (
                "undo",
                "no turn of this session changed a file with write_file or edit_file (commands are not tracked)",
            ),
        };
        if !self.admit(Wanted::Restore(name)).await {
            return;
        }
        let last = {
            let mut log = self.setup.tools.checkpoints.lock();
            match direction {
                Direction::Redo => log.pop_undone(),
                Direction::Undo | Direction::Rewind => log.pop_done(),
            }
        };
        match last {
            Some(changes) => {
                let commands_ran = direction != Direction::Redo
                    && self
                        .setup
                        .tools
                        .checkpoints
                        .lock()
                        .commands_since(changes.turn);
                self.start_restore(direction, changes, commands_ran).await
            }
            None => self.nothing_to(&format!("{name}: {none}")).await,
        }
    }

    /// `/rewind` and Esc Esc: the prompts to choose from.
    pub(super) async fn list_prompts(&mut self) {
        if !self.admit(Wanted::Restore("rewind")).await {
            return;
        }
        let list = self
            .conversation
            .prompts()
            .map(|(_, text)| text.to_owned())
            .collect();
        self.emit(AgentEvent::Prompts { list }).await;
        self.emit(AgentEvent::TurnDone).await;
    }

    /// Drops the conversation from prompt `index` on; offers to undo what
    /// the dropped turns changed.
    pub(super) async fn rewind(&mut self, index: usize) {
        if !self.admit(Wanted::Restore("rewind")).await {
            return;
        }
        let Some((at, text)) = self
            .conversation
            .prompts()
            .nth(index)
            .map(|(at, text)| (at, text.to_owned()))
        else {
            return self
                .nothing_to("rewind to: that prompt is no longer in the conversation")
                .await;
        };
        let dropped = self.conversation.prompts().count() - index;
        self.conversation.truncate(at);
        // The model no longer saw what the dropped turns read.
        self.setup.tools.known.clear();
        self.budget.forget_report();
        let (turns, commands_ran) = {
            let mut log = self.setup.tools.checkpoints.lock();
            // The rewound turns start at the prompt's, whether or not it
            // changed a file.
            let since = log.prompt_turns.get(index).copied().unwrap_or_default();
            (log.take_from_prompt(index), log.commands_since(since))
        };
        self.emit(AgentEvent::Rewound { text }).await;
        let turns_word = if dropped == 1 { "turn" } else { "turns" };
        let changes = TurnChanges::merged(turns);
        // With files to restore, the restore's own notice says it.
        let commands = if commands_ran && changes.is_none() {
            format!("; {COMMANDS_NOT_UNDONE}")
        } else {
            String::new()
        };
        self.system(
            Severity::Notice,
            format!(
                "rewound to prompt {}: its {dropped} {turns_word} are no longer sent to the model (the log above keeps them); the prompt is back in the input box{commands}",
                index + 1
            ),
        )
        .await;
        self.save().await;
        match changes {
            Some(changes) => {
                self.start_restore(Direction::Rewind, changes, commands_ran)
                    .await
            }
            None => self.emit(AgentEvent::TurnDone).await,
        }
    }

    async fn nothing_to(&mut self, what: &str) {
        self.system(Severity::Notice, format!("nothing to {what}"))
            .await;
        self.emit(AgentEvent::TurnDone).await;
    }

    /// Surveys `changes` and asks about the first group of files: those
    /// as the turn left them (with the unrestorable named), then those
    /// changed since, which wait for an approval of their own.
    async fn start_restore(
        &mut self,
        direction: Direction,
        changes: TurnChanges,
        commands_ran: bool,
    ) {
        let ws: Arc<dyn Workspace> = Arc::clone(&self.setup.tools.workspace);
        let surveyed = {
            let changes = changes.clone();
            tokio::task::spawn_blocking(move || {
                let files = tools::survey(ws.as_ref(), &changes);
                let (changed, rest): (Vec<_>, Vec<_>) = files
                    .into_iter()
                    .partition(|f| f.standing == Standing::ChangedSince);
                [(rest, false), (changed, true)]
                    .into_iter()
                    .filter(|(files, _)| !files.is_empty())
                    .map(|(files, changed)| {
                        let mut lines = vec![title(direction, changed)];
                        lines.extend(files.iter().flat_map(|f| f.preview(ws.as_ref())));
                        (lines, files)
                    })
                    .collect::<VecDeque<_>>()
            })
            .await
        };
        let mut waiting = match surveyed {
            Ok(groups) => groups,
            Err(e) => {
                self.put_back(direction, changes);
                self.system(Severity::Error, task_failure("restore", &e))
                    .await;
                return self.emit(AgentEvent::TurnDone).await;
            }
        };
        let of = waiting.len();
        let Some((preview, files)) = waiting.pop_front() else {
            return self.nothing_to("restore: no file is recorded").await;
        };
        let id = self.tickets.next_restore();
        let restorable = files
            .iter()
            .chain(waiting.iter().flat_map(|(_, files)| files))
            .any(|f| !matches!(f.standing, Standing::Unrestorable(_)));
        let mut restoring = Restoring {
            direction,
            source: changes,
            commands_ran,
            asking: (id.clone(), files),
            waiting,
            position: 1,
            of,
            outcomes: Vec::new(),
            back: Vec::new(),
            restorable,
        };
        // Nothing to approve when no file can be restored: only said.
        if !restorable {
            let files = std::mem::take(&mut restoring.asking.1);
            // Touches no file: each is only reported as not restorable.
            let (outcomes, _) = tools::restore(self.setup.tools.workspace.as_ref(), &files);
            restoring.outcomes = outcomes;
            return self.finish_restore(restoring).await;
        }
        self.turn.restore(restoring);
        self.ask(id, preview, 1, of).await;
    }

    async fn ask(&mut self, id: CallId, preview: Vec<PreviewLine>, position: usize, of: usize) {
        let request = ConfirmRequest {
            id,
            preview,
            position,
            of,
            remember: None,
        };
        self.emit(AgentEvent::Confirm(request)).await;
        self.emit(AgentEvent::Phase(Phase::Confirming)).await;
    }

    /// The person's answer to a restore's confirmation. Words sent instead
    /// of an answer decline what is still asked, as Esc does, and are
    /// then the next prompt.
    pub(super) async fn restore_decided(&mut self, decision: Decision) {
        if let Decision::Redirect(words) = decision {
            // Saved where the screen shows them: before the restore's report.
            self.saving.record_prompt(&words);
            self.cancel_restore().await;
            return self.run_prompt(words, None).await;
        }
        let Some(mut restoring) = self.turn.end_restoring() else {
            return;
        };
        let files = std::mem::take(&mut restoring.asking.1);
        match decision {
            // Nothing of a restore is remembered: `a` is `y` here.
            Decision::Approve | Decision::Remember => {
                self.emit(AgentEvent::Phase(Phase::Executing)).await;
                let ws = Arc::clone(&self.setup.tools.workspace);
                let restored =
                    tokio::task::spawn_blocking(move || tools::restore(ws.as_ref(), &files)).await;
                match restored {
                    Ok((outcomes, back)) => {
                        restoring.outcomes.extend(outcomes);
                        restoring.back.extend(back);
                    }
                    Err(e) => {
                        self.system(Severity::Error, task_failure("restore", &e))
                            .await;
                    }
                }
            }
            Decision::Reject | Decision::Redirect(_) => restoring.outcomes.extend(kept(files)),
        }
        match restoring.waiting.pop_front() {
            Some((preview, files)) => {
                let id = self.tickets.next_restore();
                restoring.asking = (id.clone(), files);
                restoring.position += 1;
                let (position, of) = (restoring.position, restoring.of);
                self.turn.restore(restoring);
                self.ask(id, preview, position, of).await;
            }
            None => self.finish_restore(restoring).await,
        }
    }

    /// Esc or Ctrl+C during a restore: what is still asked is declined.
    pub(super) async fn cancel_restore(&mut self) {
        if let Some(mut restoring) = self.turn.end_restoring() {
            let left = std::mem::take(&mut restoring.asking.1)
                .into_iter()
                .chain(restoring.waiting.drain(..).flat_map(|(_, files)| files));
            let outcomes = kept(left);
            restoring.outcomes.extend(outcomes);
            self.finish_restore(restoring).await;
        }
    }

    /// Says what the restore did, keeps the way back, tells the model,
    /// and ends.
    async fn finish_restore(&mut self, restoring: Restoring) {
        let Restoring {
            direction,
            source,
            commands_ran,
            outcomes,
            back,
            restorable,
            ..
        } = restoring;
        let applied: Vec<String> = outcomes
            .iter()
            .filter_map(|(path, outcome)| match outcome {
                Restored::Done(verb) => Some(format!("{verb} {path}")),
                Restored::Left(_) => None,
            })
            .collect();
        let mut redo_lost = false;
        if back.is_empty() {
            if restorable {
                self.put_back(direction, source);
            }
        } else {
            let undone = TurnChanges {
                turn: source.turn,
                files: back,
            };
            let mut log = self.setup.tools.checkpoints.lock();
            match direction {
                Direction::Undo | Direction::Rewind => redo_lost = !log.push_undone(undone),
                Direction::Redo => log.push_done(undone),
            }
        }
        let mut report: Vec<String> = outcomes
            .iter()
            .map(|(path, outcome)| match outcome {
                Restored::Done(verb) => format!("{verb} {path}"),
                Restored::Left(why) => format!("{path}: left as it is — {why}"),
            })
            .collect();
        if commands_ran {
            report.push(COMMANDS_NOT_UNDONE.to_owned());
        }
        if redo_lost {
            report.push(format!(
                "/redo cannot bring it back: what it replaced is over the {} MiB the checkpoints keep",
                CHECKPOINT_MAX_BYTES >> 20
            ));
        }
        let heading = match direction {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
            Direction::Rewind => "undo of the rewound turns",
        };
        self.system(
            Severity::Notice,
            format!("{heading}:\n{}", report.join("\n")),
        )
        .await;
        if !applied.is_empty() {
            let what = match direction {
                Direction::Redo => "re-applied file changes that an undo had reverted",
                Direction::Undo | Direction::Rewind => {
                    "undid the file changes of an earlier turn; those files are as they were before it"
                }
            };
            self.conversation.push_user(format!(
                "{NOTE_PREFIX}The person {what}: {}.",
                applied.join(", ")
            ));
        }
        self.emit(AgentEvent::Phase(Phase::Idle)).await;
        self.emit(AgentEvent::TurnDone).await;
        self.save().await;
    }

    /// Returns changes nothing was applied from to where they came from.
    fn put_back(&self, direction: Direction, changes: TurnChanges) {
        let mut log = self.setup.tools.checkpoints.lock();
        match direction {
            Direction::Undo | Direction::Rewind => log.push_done(changes),
            Direction::Redo => {
                log.push_undone(changes);
            }
        }
    }
}

/// The outcomes of files the person chose to keep as they are.
fn kept(files: impl IntoIterator<Item = Surveyed>) -> Vec<(String, Restored)> {
    files
        .into_iter()
        .map(|f| (f.path, Restored::Left("you kept it as it is".to_owned())))
        .collect()
}

/// The first line of a restore's confirmation.
fn title(direction: Direction, changed_since: bool) -> PreviewLine {
    let text = match (direction, changed_since) {
        (_, true) => {
            "these files changed after that turn: y overwrites those changes too · n keeps them"
        }
        (Direction::Undo, false) => "undo: put these files back as they were before the turn",
        (Direction::Redo, false) => "redo: put these files back as the undone turn left them",
        (Direction::Rewind, false) => {
            "undo the files the rewound turns changed as well? y undo files too · n conversation only"
        }
    };
    PreviewLine {
        kind: PreviewKind::Header,
        text: text.to_owned(),
    }
}
