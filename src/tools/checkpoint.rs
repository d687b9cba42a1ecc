//! Checkpoints: the state each turn's `write_file` and `edit_file` calls
//! found before they first changed a file, so `/undo`, `/redo` and rewind
//! can put it back. The tools capture; the agent decides when to restore,
//! through [`survey`] (what a restore would do, shown for approval) and
//! [`restore`] (doing it, file by file, through the same path policy and
//! atomic write as the tools). Commands are not tracked.
//! `docs/decisions/0035-checkpoints.md`.

use std::io::Read;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::protocol::{PreviewKind, PreviewLine};
use crate::stable_hash::{ContentHash, HashKind, content_hash, hash_with};

use super::edit::EDIT_MAX_FILE_BYTES;
use super::guard::file_hash;
use super::preview::{diff, heading, line};
use super::{Approved, Parents, Stat, Workspace, WriteError};

/// The most bytes of earlier file content all checkpoints of a session
/// keep (16 MiB). Past it the oldest turns are forgotten; a file that
/// cannot fit even then is recorded as not restorable. The session file
/// carries them, so this also bounds what every save writes.
pub(crate) const CHECKPOINT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The most turns whose changes are kept; older ones are forgotten.
const CHECKPOINT_MAX_TURNS: usize = 100;

/// A file's state as a checkpoint keeps it: what a restore puts back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileState {
    /// There was no file.
    Absent,
    /// A regular file with this content and mode.
    File {
        /// Its bytes.
        #[serde(with = "encoded")]
        content: Vec<u8>,
        /// Its permission bits.
        mode: u32,
    },
    /// What was there is not kept, and cannot be restored.
    NotKept {
        /// Why, as the person reads it ("over 8 MiB").
        why: String,
    },
}

impl FileState {
    /// The content kept: empty for no file, or one not kept.
    fn content(&self) -> &[u8] {
        match self {
            FileState::File { content, .. } => content,
            FileState::Absent | FileState::NotKept { .. } => &[],
        }
    }

    fn kept_bytes(&self) -> u64 {
        self.content().len() as u64
    }
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The file, relative to the project's root.
    pub path: String,
    /// What it was before the turn first changed it.
    pub before: FileState,
    /// A hash of the content the turn left ([`None`]: no file), to tell
    /// whether the file changed since; compared by hashing the file again
    /// with the function that made it (ADR 0040).
    pub after: Option<ContentHash>,
    /// The folders the turn made for the file it created, relative to the
    /// root, deepest first: `/undo` removes each once it is empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made_dirs: Vec<String>,
}

/// The files one turn changed, in the order it first changed them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnChanges {
    /// The turn, numbered within the session.
    pub turn: u64,
    /// Its files.
    pub files: Vec<FileChange>,
}

impl TurnChanges {
    /// Several turns (oldest first) as one: each file's state before the
    /// first of them, and what the last of them left.
    pub fn merged(turns: Vec<TurnChanges>) -> Option<TurnChanges> {
        let turn = turns.first()?.turn;
        let mut files: Vec<FileChange> = Vec::new();
        for change in turns.into_iter().flat_map(|t| t.files) {
            match files.iter_mut().find(|f| f.path == change.path) {
                Some(kept) => kept.after = change.after,
                None => files.push(change),
            }
        }
        Some(TurnChanges { turn, files })
    }
}

/// A session's checkpoints, as saved with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointLog {
    /// The turn the file tools capture into now.
    #[serde(default)]
    pub turn: u64,
    /// The turn number of each prompt of the conversation, oldest first,
    /// so a rewind knows which turns it drops.
    #[serde(default)]
    pub prompt_turns: Vec<u64>,
    /// Turns whose changes `/undo` can revert, oldest first.
    #[serde(default)]
    pub done: Vec<TurnChanges>,
    /// What `/undo` reverted, which `/redo` re-applies, newest last.
    #[serde(default)]
    pub undone: Vec<TurnChanges>,
    /// The last turn that ran a command the read-only analyser did not
    /// clear, so `/undo` says commands are not undone only after one ran.
    /// A log saved before this was kept assumes every turn ran one.
    #[serde(default = "every_turn")]
    pub last_command_turn: u64,
}

fn every_turn() -> u64 {
    u64::MAX
}

impl CheckpointLog {
    /// The log of a session saved before checkpoints were kept: nothing
    /// to restore, and any turn may have run a command.
    pub fn before_checkpoints() -> Self {
        Self {
            last_command_turn: every_turn(),
            ..Self::default()
        }
    }

    /// Whether a command that may have changed files ran in `turn` or
    /// after it: a restore from `turn` does not undo what it did.
    pub fn commands_since(&self, turn: u64) -> bool {
        self.last_command_turn >= turn
    }

    /// Applies one change: live through [`Kept`], which records it for
    /// the journal, and again when a journal is read, so both build the
    /// same log.
    pub fn apply(&mut self, op: CheckpointOp) {
        match op {
            CheckpointOp::BeginTurn { prompt } => self.begin_turn(prompt),
            CheckpointOp::Align { prompts } => self.align(prompts),
            CheckpointOp::TakeFromPrompt { index } => {
                self.take_from_prompt(index);
            }
            CheckpointOp::PushDone { turn } => self.push_done(turn),
            CheckpointOp::PushUndone { turn } => {
                self.push_undone(turn);
            }
            CheckpointOp::PopDone => {
                self.done.pop();
            }
            CheckpointOp::PopUndone => {
                self.undone.pop();
            }
            CheckpointOp::Forget => {
                self.done.clear();
                self.undone.clear();
            }
            CheckpointOp::Capture { change } => {
                self.current().files.push(change);
                self.evict(0);
            }
            CheckpointOp::MadeDirs { path, dirs } => {
                if let Some(change) = self.current().files.iter_mut().find(|f| f.path == path) {
                    change.made_dirs = dirs;
                }
            }
            CheckpointOp::CommandRan => self.last_command_turn = self.turn,
            CheckpointOp::Landed { path, after } => {
                if let Some(change) = self.current().files.iter_mut().find(|f| f.path == path) {
                    change.after = Some(after);
                }
            }
        }
    }

    /// Starts the next turn for the person's words about to be appended;
    /// a point to rewind to when they count as a prompt.
    fn begin_turn(&mut self, prompt: bool) {
        // The count may come from a session file: one at the top stays there.
        self.turn = self.turn.saturating_add(1);
        if prompt {
            self.prompt_turns.push(self.turn);
        }
    }

    /// Keeps the turn numbers of the last `prompts` prompts, after
    /// earlier ones were summarised away (or, for a session saved before
    /// checkpoints, numbers them as turns that changed nothing).
    fn align(&mut self, prompts: usize) {
        let have = self.prompt_turns.len();
        if have > prompts {
            self.prompt_turns.drain(..have - prompts);
        } else {
            let missing = vec![0; prompts - have];
            self.prompt_turns.splice(..0, missing);
        }
    }

    /// The turns from prompt `index` (0-based) on, taken out of `done`;
    /// the prompts from it on are forgotten.
    fn take_from_prompt(&mut self, index: usize) -> Vec<TurnChanges> {
        let Some(&first) = self.prompt_turns.get(index) else {
            return Vec::new();
        };
        self.prompt_turns.truncate(index);
        let at = self.done.partition_point(|t| t.turn < first);
        self.done.split_off(at)
    }

    /// Keeps `turn` among the turns `/undo` reverts (a redo, or a restore
    /// that was declined), in turn order.
    fn push_done(&mut self, turn: TurnChanges) {
        let at = self.done.partition_point(|t| t.turn <= turn.turn);
        self.done.insert(at, turn);
        self.evict(0);
    }

    /// Keeps `turn` as what `/redo` re-applies next (an undo, or a redo
    /// that was declined), within the bounds: older redos go first, then
    /// the oldest turns; whether it was kept (not when it alone is past
    /// them).
    fn push_undone(&mut self, turn: TurnChanges) -> bool {
        self.undone.push(turn);
        self.evict(1);
        !self.undone.is_empty()
    }

    fn kept_bytes(&self) -> u64 {
        self.done
            .iter()
            .chain(&self.undone)
            .flat_map(|t| &t.files)
            .map(|f| f.before.kept_bytes())
            .sum()
    }

    /// Forgets the oldest redos but the newest `kept_redos`, then the
    /// oldest turns, then those redos, until the bounds hold; the current
    /// turn is never forgotten.
    fn evict(&mut self, kept_redos: usize) {
        while self.done.len() > CHECKPOINT_MAX_TURNS {
            self.done.remove(0);
        }
        while self.kept_bytes() > CHECKPOINT_MAX_BYTES {
            if self.undone.len() > kept_redos {
                self.undone.remove(0);
            } else if self.done.len() > 1 {
                self.done.remove(0);
            } else if !self.undone.is_empty() {
                self.undone.remove(0);
            } else {
                break;
            }
        }
    }

    /// The files the current turn changed so far.
    fn current_files(&self) -> impl Iterator<Item = &FileChange> {
        self.done
            .last()
            .filter(|t| t.turn == self.turn)
            .into_iter()
            .flat_map(|t| &t.files)
    }

    /// The current turn's changes, begun if this is its first.
    fn current(&mut self) -> &mut TurnChanges {
        let turn = self.turn;
        if self.done.last().is_none_or(|t| t.turn != turn) {
            // A new change makes what was undone unreachable.
            self.undone.clear();
            self.done.push(TurnChanges {
                turn,
                files: Vec::new(),
            });
        }
        let last = self.done.len() - 1;
        &mut self.done[last]
    }
}

/// One change to a session's checkpoints, as its journal keeps it
/// (ADR 0040): the methods [`CheckpointLog::apply`] calls make it, live
/// and when the journal is read, so the log read back is the log that
/// was kept. A
/// file's earlier content is written once, when it is captured; what
/// eviction forgets follows from the bounds and is not written at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum CheckpointOp {
    /// The next turn begins; a rewind point when `prompt`.
    BeginTurn {
        /// The person's words count as a prompt.
        prompt: bool,
    },
    /// Only the last `prompts` prompts are left (compaction).
    Align {
        /// How many.
        prompts: usize,
    },
    /// A rewind to prompt `index` took its turns.
    TakeFromPrompt {
        /// The prompt, 0-based.
        index: usize,
    },
    /// `/undo` can revert `turn` (again).
    PushDone {
        /// Its changes.
        turn: TurnChanges,
    },
    /// `/redo` can re-apply `turn`.
    PushUndone {
        /// Its changes.
        turn: TurnChanges,
    },
    /// `/undo` took the latest turn.
    PopDone,
    /// `/redo` took the latest undone turn.
    PopUndone,
    /// Every turn's changes are forgotten (a session resumed in another
    /// project).
    Forget,
    /// The current turn first changes a file.
    Capture {
        /// What it was.
        change: FileChange,
    },
    /// The folders made for a file the current turn created.
    MadeDirs {
        /// The file, by its path in the project.
        path: String,
        /// The folders, deepest first.
        dirs: Vec<String>,
    },
    /// A command the read-only analyser did not clear runs in the
    /// current turn.
    CommandRan,
    /// A file tool wrote a file the current turn changes.
    Landed {
        /// The file, by its path in the project.
        path: String,
        /// The hash of what it left.
        after: ContentHash,
    },
}

/// The session's checkpoints, shared by every clone of a
/// [`ToolContext`](super::ToolContext): the file tools add to them, the
/// agent restores from them.
#[derive(Debug, Clone, Default)]
pub struct Checkpoints {
    kept: Arc<Mutex<Kept>>,
}

/// The log as the agent and the tools hold it: read through `Deref`,
/// changed only by its methods, each of which is a [`CheckpointOp`] kept
/// for the journal while recording is on.
#[derive(Debug, Default)]
pub struct Kept {
    log: CheckpointLog,
    /// The changes since the last save; `None` while nothing is saved
    /// (so nothing piles up).
    ops: Option<Vec<CheckpointOp>>,
}

impl Deref for Kept {
    type Target = CheckpointLog;

    fn deref(&self) -> &CheckpointLog {
        &self.log
    }
}

impl Kept {
    /// Keeps `op` for the journal, then makes it.
    fn record(&mut self, op: CheckpointOp) {
        if let Some(ops) = &mut self.ops {
            ops.push(op.clone());
        }
        self.log.apply(op);
    }

    /// Keeps `op` for the journal; the caller makes it with the method
    /// [`CheckpointLog::apply`] calls for it, to have what it returns.
    fn noted(&mut self, op: CheckpointOp) -> &mut CheckpointLog {
        if let Some(ops) = &mut self.ops {
            ops.push(op);
        }
        &mut self.log
    }

    /// Starts the next turn for the person's words about to be appended;
    /// a point to rewind to when they count as a prompt.
    pub fn begin_turn(&mut self, prompt: bool) {
        self.record(CheckpointOp::BeginTurn { prompt });
    }

    /// Keeps the turn numbers of the last `prompts` prompts, after
    /// earlier ones were summarised away.
    pub fn align(&mut self, prompts: usize) {
        self.record(CheckpointOp::Align { prompts });
    }

    /// The turns from prompt `index` (0-based) on, taken out of `done`;
    /// the prompts from it on are forgotten.
    pub fn take_from_prompt(&mut self, index: usize) -> Vec<TurnChanges> {
        self.noted(CheckpointOp::TakeFromPrompt { index })
            .take_from_prompt(index)
    }

    /// Keeps `turn` among the turns `/undo` reverts (a redo, or a restore
    /// that was declined), in turn order.
    pub fn push_done(&mut self, turn: TurnChanges) {
        self.record(CheckpointOp::PushDone { turn });
    }

    /// Keeps `turn` as what `/redo` re-applies next, within the bounds;
    /// whether it was kept (not when it alone is past them).
    pub fn push_undone(&mut self, turn: TurnChanges) -> bool {
        self.record(CheckpointOp::PushUndone { turn });
        !self.log.undone.is_empty()
    }

    /// The latest turn `/undo` can revert, taken.
    pub fn pop_done(&mut self) -> Option<TurnChanges> {
        if self.log.done.is_empty() {
            return None;
        }
        self.noted(CheckpointOp::PopDone).done.pop()
    }

    /// The latest turn `/redo` can re-apply, taken.
    pub fn pop_undone(&mut self) -> Option<TurnChanges> {
        if self.log.undone.is_empty() {
            return None;
        }
        self.noted(CheckpointOp::PopUndone).undone.pop()
    }

    /// Forgets every turn's changes (their paths name another project's
    /// files).
    pub fn forget_changes(&mut self) {
        self.record(CheckpointOp::Forget);
    }

    /// The changes since the last call, for the journal; from now on they
    /// are recorded when `recording`, and not otherwise.
    pub fn take_ops(&mut self, recording: bool) -> Vec<CheckpointOp> {
        let ops = self.ops.take().unwrap_or_default();
        self.ops = recording.then(Vec::new);
        ops
    }
}

impl Checkpoints {
    /// The log, held until the guard drops (not across an await).
    pub fn lock(&self) -> MutexGuard<'_, Kept> {
        // Every change is one call that leaves the log valid.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the log: a session was opened, or a new one begun. What
    /// was recorded of the old one is dropped; recording stays as it was.
    pub fn replace(&self, log: CheckpointLog) {
        let mut kept = self.lock();
        kept.log = log;
        if kept.ops.is_some() {
            kept.ops = Some(Vec::new());
        }
    }

    /// Before a file tool first changes `real` in this turn: keeps what
    /// `before` says it was (called only then). Files over
    /// [`EDIT_MAX_FILE_BYTES`] and files that do not fit in
    /// [`CHECKPOINT_MAX_BYTES`] are kept as not restorable.
    pub fn capture(&self, ws: &dyn Workspace, real: &Path, before: impl FnOnce() -> FileState) {
        let (path, named) = relative(ws, real);
        let mut kept = self.lock();
        if kept.current_files().any(|f| f.path == path) {
            return;
        }
        let before = if named {
            before()
        } else {
            not_kept("its name is not UTF-8")
        };
        // What does not fit beside this turn's own files is not kept, and
        // costs no earlier turn its undo; what does, earlier turns make
        // room for.
        let this_turn: u64 = kept.current_files().map(|f| f.before.kept_bytes()).sum();
        let before = if this_turn + before.kept_bytes() > CHECKPOINT_MAX_BYTES {
            not_kept(&format!(
                "the checkpoints' {} MiB were full",
                CHECKPOINT_MAX_BYTES >> 20
            ))
        } else {
            before
        };
        kept.record(CheckpointOp::Capture {
            change: FileChange {
                path,
                before,
                after: None,
                made_dirs: Vec::new(),
            },
        });
    }

    /// A file tool made the folders `dirs` (deepest first) for the file
    /// `real` it created: kept with the file's change when the turn
    /// created it, so `/undo` removes them too.
    pub fn made_dirs(&self, ws: &dyn Workspace, real: &Path, dirs: &[PathBuf]) {
        let (path, _) = relative(ws, real);
        let mut kept = self.lock();
        let created = kept.current_files().any(|change| {
            change.path == path && change.before == FileState::Absent && change.made_dirs.is_empty()
        });
        if created {
            let dirs = dirs.iter().map(|dir| relative(ws, dir).0).collect();
            kept.record(CheckpointOp::MadeDirs { path, dirs });
        }
    }

    /// A call is about to run: one whose changes are beyond `/undo` (a
    /// command the read-only analyser did not clear, a run-time tool's
    /// call that does more than read) is kept in mind for `/undo`'s
    /// notice.
    pub fn starting(&self, run: &Approved) {
        if let Approved::Call(call) = run
            && call.beyond_undo()
        {
            self.lock().record(CheckpointOp::CommandRan);
        }
    }

    /// What `look` makes of what `real` was before the current turn
    /// first changed it (looked at in place, under the lock), or [`None`]
    /// when the turn has not changed it: a write that would undo the
    /// turn's own change is told apart by it (ADR 0051).
    pub fn before_this_turn<T>(
        &self,
        ws: &dyn Workspace,
        real: &Path,
        look: impl FnOnce(&FileState) -> T,
    ) -> Option<T> {
        let (path, _) = relative(ws, real);
        let kept = self.lock();
        kept.current_files()
            .find(|f| f.path == path)
            .map(|f| look(&f.before))
    }

    /// After a file tool wrote `real`: what it left.
    pub fn landed(&self, ws: &dyn Workspace, real: &Path, data: &[u8]) {
        let (path, _) = relative(ws, real);
        let after = content_hash(data);
        let mut kept = self.lock();
        if kept.current_files().any(|f| f.path == path) {
            kept.record(CheckpointOp::Landed { path, after });
        }
    }
}

/// The state of an existing regular file `real` whose metadata is `meta`,
/// as a checkpoint keeps it.
pub fn state_of(ws: &dyn Workspace, real: &Path, meta: &Stat) -> FileState {
    if meta.len > EDIT_MAX_FILE_BYTES {
        return too_large();
    }
    match read_bounded(ws, real) {
        Ok(Some(content)) => FileState::File {
            content,
            mode: meta.mode,
        },
        Ok(None) => too_large(),
        Err(e) => not_kept(&format!("it could not be read: {e}")),
    }
}

/// The content of regular file `real`, `None` past [`EDIT_MAX_FILE_BYTES`].
fn read_bounded(ws: &dyn Workspace, real: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let mut data = Vec::new();
    ws.open_regular(real)?
        .take(EDIT_MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)?;
    Ok((data.len() as u64 <= EDIT_MAX_FILE_BYTES).then_some(data))
}

fn too_large() -> FileState {
    not_kept(&format!("over {} MiB", EDIT_MAX_FILE_BYTES >> 20))
}

fn not_kept(why: &str) -> FileState {
    FileState::NotKept {
        why: why.to_owned(),
    }
}

/// `real` relative to the root, and whether that is its exact name.
fn relative(ws: &dyn Workspace, real: &Path) -> (String, bool) {
    let rel = real.strip_prefix(ws.root()).unwrap_or(real);
    match rel.to_str() {
        Some(name) => (name.to_owned(), true),
        None => (rel.to_string_lossy().into_owned(), false),
    }
}

/// How a file a restore would touch stands now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// As the turn left it: restoring loses nothing.
    AsLeft,
    /// Changed since the turn (by hand, a command, another tool):
    /// restoring overwrites that, so it waits for its own approval.
    ChangedSince,
    /// It cannot be restored; it is left as it is.
    Unrestorable(String),
}

/// One file of a restore, surveyed.
#[derive(Debug, Clone)]
pub struct Surveyed {
    /// The file, relative to the root.
    pub path: String,
    /// Where it stands now.
    pub standing: Standing,
    /// What the restore puts back.
    target: FileState,
    /// What it is now, kept for the way back (`/redo` after `/undo`).
    now: FileState,
    /// A hash of it now ([`None`]: no file), by the function of the hash
    /// the turn recorded, checked again just before writing.
    now_hash: Option<ContentHash>,
    /// That function.
    kind: HashKind,
    /// The folders made for it, removed with it once empty.
    made_dirs: Vec<String>,
}

impl Surveyed {
    /// The preview lines of restoring it: a header and the diff.
    pub fn preview(&self, ws: &dyn Workspace) -> Vec<PreviewLine> {
        let path = &self.path;
        let real = ws.resolve(path).unwrap_or_else(|_| ws.root().join(path));
        if let Standing::Unrestorable(why) = &self.standing {
            return vec![line(
                PreviewKind::Marker,
                &format!("{path}: not restorable ({why}); left as it is"),
            )];
        }
        let verb = match (&self.now, &self.target) {
            (FileState::Absent, _) => "recreate",
            (_, FileState::Absent) => "remove",
            _ => "restore",
        };
        let mut lines = heading(format!("{verb} {path}"), ws, &real);
        if self.standing == Standing::ChangedSince {
            lines.push(line(
                PreviewKind::Marker,
                "(changed since that turn: restoring overwrites those changes)",
            ));
        }
        lines.extend(diff(self.now.content(), self.target.content()));
        lines
    }
}

/// What a restore of `changes` would do to each file, read from the
/// files as they are now. Reads files: run it off the agent's task.
pub fn survey(ws: &dyn Workspace, changes: &TurnChanges) -> Vec<Surveyed> {
    changes
        .files
        .iter()
        .map(|change| {
            // Compared with what the turn left: hashed as that was.
            let kind = change.after.map_or(HashKind::Xxh3, ContentHash::kind);
            let (now, now_hash, problem) = match look(ws, &change.path, kind) {
                Ok((now, hash)) => (now, hash, None),
                Err(why) => (not_kept(&why), None, Some(why)),
            };
            let standing = match (&change.before, problem) {
                (_, Some(why)) => Standing::Unrestorable(why),
                (FileState::NotKept { why }, None) => Standing::Unrestorable(why.clone()),
                (_, None) if now_hash == change.after => Standing::AsLeft,
                (_, None) => Standing::ChangedSince,
            };
            Surveyed {
                path: change.path.clone(),
                standing,
                target: change.before.clone(),
                now,
                now_hash,
                kind,
                made_dirs: change.made_dirs.clone(),
            }
        })
        .collect()
}

/// A file as it is now: its state and its hash by the function `kind`;
/// why not, when it is refused by the path policy or is not a regular
/// file.
fn look(
    ws: &dyn Workspace,
    path: &str,
    kind: HashKind,
) -> Result<(FileState, Option<ContentHash>), String> {
    let real = ws.resolve(path).map_err(|e| e.to_string())?;
    let meta = match ws.lstat(&real) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((FileState::Absent, None)),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    if !meta.is_file() {
        return Err("it is no longer a regular file".to_owned());
    }
    let state = state_of(ws, &real, &meta);
    let hash = match &state {
        FileState::File { content, .. } => Some(hash_with(kind, content)),
        // Not kept (past the bound): hashed as the guard does, unread.
        FileState::Absent | FileState::NotKept { .. } => now_hash(ws, &real, kind)?,
    };
    Ok((state, hash))
}

/// The hash of the file `real` as it is now by the function `kind`
/// ([`None`]: no file), in bounded pieces.
fn now_hash(
    ws: &dyn Workspace,
    real: &Path,
    kind: HashKind,
) -> Result<Option<ContentHash>, String> {
    file_hash(ws, real, kind).map_err(|e| format!("cannot read it: {e}"))
}

/// How restoring one file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// It holds what the checkpoint kept: "restored", "removed",
    /// "recreated".
    Done(&'static str),
    /// It was left as it is, and why.
    Left(String),
}

/// Restores each surveyed file, one atomic write or removal each: a file
/// is either wholly as it was or wholly as the checkpoint kept it. A file
/// that changed since the survey is left. Returns each file's outcome and
/// the changes that undo this restore. Writes files: run it off the
/// agent's task.
pub fn restore(
    ws: &dyn Workspace,
    files: &[Surveyed],
) -> (Vec<(String, Restored)>, Vec<FileChange>) {
    let mut outcomes = Vec::new();
    let mut back = Vec::new();
    let mut made_dirs: Vec<&str> = Vec::new();
    for file in files {
        let outcome = restore_one(ws, file);
        if let Restored::Done(_) = outcome {
            if file.target == FileState::Absent {
                made_dirs.extend(file.made_dirs.iter().map(String::as_str));
            }
            back.push(FileChange {
                path: file.path.clone(),
                before: file.now.clone(),
                after: match &file.target {
                    FileState::File { content, .. } => Some(content_hash(content)),
                    FileState::Absent | FileState::NotKept { .. } => None,
                },
                made_dirs: file.made_dirs.clone(),
            });
        }
        outcomes.push((file.path.clone(), outcome));
    }
    // The folders made for the files removed, once all are gone (several
    // files of a turn may share a new folder), deepest first; one that is
    // not empty, or no longer there, stays as it is.
    let depth = |dir: &str| Path::new(dir).components().count();
    made_dirs.sort_by(|a, b| depth(b).cmp(&depth(a)).then(a.cmp(b)));
    made_dirs.dedup();
    for dir in made_dirs {
        if let Ok(dir) = ws.resolve(dir) {
            let _ = ws.remove_empty_dir(&dir);
        }
    }
    (outcomes, back)
}

fn restore_one(ws: &dyn Workspace, file: &Surveyed) -> Restored {
    if let Standing::Unrestorable(why) = &file.standing {
        return Restored::Left(format!("not restorable ({why})"));
    }
    let real = match ws.resolve(&file.path) {
        Ok(real) => real,
        Err(e) => return Restored::Left(e.to_string()),
    };
    match now_hash(ws, &real, file.kind) {
        Ok(hash) if hash == file.now_hash => {}
        Ok(_) => return Restored::Left("it changed while the restore was shown".to_owned()),
        Err(why) => return Restored::Left(why),
    }
    let done = match (&file.target, &file.now) {
        (FileState::File { content, mode }, now) => ws
            .write_atomic(&real, content, Some(*mode), Parents::Create)
            .map(|()| {
                if *now == FileState::Absent {
                    "recreated"
                } else {
                    "restored"
                }
            })
            .map_err(|e| match e {
                WriteError::Parents(e) | WriteError::Write(e) => e,
            }),
        (FileState::Absent, FileState::Absent) => Ok("already absent"),
        (FileState::Absent, _) => ws.remove_file(&real).map(|()| "removed"),
        (FileState::NotKept { why }, _) => {
            return Restored::Left(format!("not restorable ({why})"));
        }
    };
    match done {
        Ok(verb) => Restored::Done(verb),
        Err(e) => Restored::Left(format!("cannot write it: {e}; it is as it was")),
    }
}

/// File content in a session file: as text when it is UTF-8, else as
/// base64.
mod encoded {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Out<'a> {
        Text(&'a str),
        Base64(String),
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum In {
        Text(String),
        Base64(String),
    }

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Out::Text(text),
            Err(_) => Out::Base64(STANDARD.encode(bytes)),
        }
        .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        match In::deserialize(d)? {
            In::Text(text) => Ok(text.into_bytes()),
            In::Base64(encoded) => STANDARD.decode(encoded).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::tools::LocalWorkspace;

    fn kept(path: &str, bytes: usize) -> FileChange {
        FileChange {
            path: path.to_owned(),
            before: FileState::File {
                content: vec![b'x'; bytes],
                mode: 0o644,
            },
            after: Some(ContentHash::Xxh3(1)),
            made_dirs: Vec::new(),
        }
    }

    fn turn(turn: u64, files: Vec<FileChange>) -> TurnChanges {
        TurnChanges { turn, files }
    }

    #[test]
    fn only_a_files_first_change_in_a_turn_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ws = LocalWorkspace::new(dir.path());
        let real = dir.path().join("a.txt");
        let checkpoints = Checkpoints::default();
        checkpoints.lock().begin_turn(true);
        checkpoints.capture(&ws, &real, || FileState::Absent);
        checkpoints.landed(&ws, &real, b"one");
        checkpoints.capture(&ws, &real, || unreachable!("kept already"));
        checkpoints.landed(&ws, &real, b"two");
        let log = checkpoints.lock().clone();
        assert_eq!(log.done.len(), 1);
        assert_eq!(
            log.done[0].files,
            [FileChange {
                path: "a.txt".into(),
                before: FileState::Absent,
                after: Some(content_hash(b"two")),
                made_dirs: Vec::new(),
            }]
        );
    }

    #[test]
    fn a_new_change_forgets_what_was_undone() {
        let dir = tempfile::tempdir().unwrap();
        let ws = LocalWorkspace::new(dir.path());
        let checkpoints = Checkpoints::default();
        checkpoints
            .lock()
            .log
            .undone
            .push(turn(1, vec![kept("a", 1)]));
        checkpoints.lock().begin_turn(true);
        checkpoints.capture(&ws, &dir.path().join("b"), || FileState::Absent);
        assert!(checkpoints.lock().undone.is_empty());
    }

    #[test]
    fn past_the_byte_bound_the_oldest_go_first_and_the_current_turn_stays() {
        let dir = tempfile::tempdir().unwrap();
        let ws = LocalWorkspace::new(dir.path());
        let checkpoints = Checkpoints::default();
        let half = usize::try_from(CHECKPOINT_MAX_BYTES / 2).unwrap();
        {
            let log = &mut checkpoints.lock().log;
            log.undone.push(turn(1, vec![kept("u", 10)]));
            log.done.push(turn(2, vec![kept("a", half)]));
            log.done.push(turn(3, vec![kept("b", half)]));
            log.turn = 3;
        }
        // Still turn 3: what was undone goes first, then turn 2.
        let big = || FileState::File {
            content: vec![b'y'; 100],
            mode: 0o600,
        };
        checkpoints.capture(&ws, &dir.path().join("c"), big);
        let log = checkpoints.lock().clone();
        assert!(log.undone.is_empty());
        assert_eq!(log.done.iter().map(|t| t.turn).collect::<Vec<_>>(), [3]);
        assert!(log.kept_bytes() <= CHECKPOINT_MAX_BYTES);
        // A file that cannot fit beside the current turn's is not kept.
        checkpoints.capture(&ws, &dir.path().join("d"), || FileState::File {
            content: vec![b'z'; half + 1],
            mode: 0o600,
        });
        let log = checkpoints.lock().clone();
        let last = log.done[0].files.last().unwrap();
        assert_eq!(last.path, "d");
        assert!(matches!(&last.before, FileState::NotKept { why } if why.contains("full")));
    }

    #[test]
    fn a_file_that_cannot_fit_beside_its_turn_costs_no_earlier_turn() {
        let dir = tempfile::tempdir().unwrap();
        let ws = LocalWorkspace::new(dir.path());
        let checkpoints = Checkpoints::default();
        let half = usize::try_from(CHECKPOINT_MAX_BYTES / 2).unwrap();
        {
            let log = &mut checkpoints.lock().log;
            log.done.push(turn(1, vec![kept("small", 10)]));
            log.done
                .push(turn(2, vec![kept("a", half - 10), kept("b", half - 10)]));
            log.turn = 2;
        }
        checkpoints.capture(&ws, &dir.path().join("c"), || FileState::File {
            content: vec![b'c'; 100],
            mode: 0o600,
        });
        let log = checkpoints.lock().clone();
        assert_eq!(log.done.iter().map(|t| t.turn).collect::<Vec<_>>(), [1, 2]);
        let last = log.done[1].files.last().unwrap();
        assert!(matches!(&last.before, FileState::NotKept { why } if why.contains("full")));
    }

    #[test]
    fn what_an_undo_keeps_for_redo_stays_within_the_byte_bound() {
        let half = usize::try_from(CHECKPOINT_MAX_BYTES / 2).unwrap();
        let mut log = CheckpointLog::default();
        log.done.push(turn(2, vec![kept("a", half)]));
        log.undone.push(turn(1, vec![kept("u", half)]));
        assert!(log.push_undone(turn(3, vec![kept("b", 10)])));
        assert_eq!(log.undone.iter().map(|t| t.turn).collect::<Vec<_>>(), [3]);
        assert!(log.kept_bytes() <= CHECKPOINT_MAX_BYTES);
        // The newest redo goes before older turns only when it alone is
        // past the bound.
        let mut log = CheckpointLog::default();
        log.done.push(turn(1, vec![kept("a", half)]));
        log.done.push(turn(2, vec![kept("c", 10)]));
        assert!(log.push_undone(turn(3, vec![kept("b", half)])));
        assert_eq!(log.done.iter().map(|t| t.turn).collect::<Vec<_>>(), [2]);
        let whole = usize::try_from(CHECKPOINT_MAX_BYTES).unwrap();
        assert!(!log.push_undone(turn(4, vec![kept("d", whole + 1)])));
        assert!(log.undone.is_empty());
        assert_eq!(log.done.iter().map(|t| t.turn).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn past_the_turn_bound_the_oldest_turn_is_forgotten() {
        let mut log = CheckpointLog::default();
        for n in 1..=CHECKPOINT_MAX_TURNS as u64 + 1 {
            log.push_done(turn(n, vec![kept("a", 1)]));
        }
        assert_eq!(log.done.len(), CHECKPOINT_MAX_TURNS);
        assert_eq!(log.done[0].turn, 2);
    }

    #[test]
    fn turns_merge_to_the_first_state_and_the_last_result() {
        let mut first = kept("a", 1);
        first.after = Some(ContentHash::Xxh3(10));
        let mut again = kept("a", 2);
        again.after = Some(ContentHash::Xxh3(20));
        let merged = TurnChanges::merged(vec![
            turn(4, vec![first.clone()]),
            turn(5, vec![kept("b", 3), again]),
        ])
        .unwrap();
        assert_eq!(merged.turn, 4);
        assert_eq!(merged.files.len(), 2);
        assert_eq!(merged.files[0].before, first.before);
        assert_eq!(merged.files[0].after, Some(ContentHash::Xxh3(20)));
        assert_eq!(TurnChanges::merged(Vec::new()), None);
    }

    #[test]
    fn prompts_map_to_turns_through_compaction_and_rewind() {
        let mut log = CheckpointLog::default();
        for _ in 0..4 {
            log.begin_turn(true);
        }
        log.done = vec![turn(2, vec![kept("a", 1)]), turn(4, vec![kept("b", 1)])];
        // Two prompts summarised away.
        log.align(2);
        assert_eq!(log.prompt_turns, [3, 4]);
        // A session saved before checkpoints: its prompts changed nothing.
        let mut old = CheckpointLog::default();
        old.align(2);
        assert_eq!(old.prompt_turns, [0, 0]);
        // Rewinding to the second prompt left takes turn 4 on.
        let taken = log.take_from_prompt(1);
        assert_eq!(taken.iter().map(|t| t.turn).collect::<Vec<_>>(), [4]);
        assert_eq!(log.prompt_turns, [3]);
        assert_eq!(log.done.len(), 1);
        assert!(log.take_from_prompt(5).is_empty());
    }

    #[test]
    fn content_is_saved_as_text_or_base64_and_read_back_the_same() {
        let mut log = CheckpointLog::default();
        log.done.push(turn(
            1,
            vec![
                kept("t", 3),
                FileChange {
                    path: "b".into(),
                    before: FileState::File {
                        content: vec![0xff, 0x00, b'a'],
                        mode: 0o755,
                    },
                    after: None,
                    made_dirs: Vec::new(),
                },
            ],
        ));
        let json = serde_json::to_string(&log).unwrap();
        assert!(json.contains(r#""text":"xxx""#), "{json}");
        assert!(json.contains(r#""base64":"/wBh""#), "{json}");
        assert_eq!(serde_json::from_str::<CheckpointLog>(&json).unwrap(), log);
        let bad = json.replace("/wBh", "/w*h");
        assert!(serde_json::from_str::<CheckpointLog>(&bad).is_err());
    }
}
