//! The session writer: one thread that owns the open session's files,
//! fed by a bounded queue, so the agent never waits for a disk (ADR 0040).
//! Saves are written in the order they were queued: a snapshot where the
//! files start (a new session, or after a failure), else one journal
//! record each, appended and fsync'd. When the journal has grown as large
//! as the snapshot (and at least [`JOURNAL_COMPACT_MIN_BYTES`]), or the
//! writer stops, the session is read back from both and written as one
//! new snapshot, and the journal emptied: what a reader sees is the same
//! before and after, and the work of a save stays that of its step. The
//! writer holds the session's lock, so no other process writes the files
//! while saves are still queued for them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot, watch};

use crate::log::Log;

use super::{SESSION_FILE_MAX_BYTES, SessionError, SessionLock, SessionStore};

/// Saves queued for the writer; when it is this far behind, the agent
/// waits for it (backpressure, not growth). A save is one step's record
/// (at most a reply and a round's results) or, rarely, a snapshot.
const WRITE_QUEUE: usize = 32;

/// A journal shorter than this is never folded into the snapshot while
/// the session runs (1 MiB): a small session would otherwise rewrite its
/// snapshot every few steps. Past it, the journal is folded in once it is
/// as large as the snapshot, so what compaction costs, spread over the
/// records that led to it, is a constant share of each record's own
/// writing, however large the session. ADR 0040.
pub const JOURNAL_COMPACT_MIN_BYTES: u64 = 1024 * 1024;

/// The journal file's mode: the owner's only.
const JOURNAL_MODE: u32 = 0o600;

/// How the writer's saves are going, for the agent to report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterStatus {
    /// Saves that failed so far, counted.
    pub failures: u64,
    /// Why the open session is not being saved, until a save works again.
    pub failing: Option<String>,
}

/// What the agent asks of the writer.
enum Job {
    /// Session `id`'s files start afresh from `snapshot` (a new session,
    /// or one whose files fell behind a failed save); the writer locks it
    /// first unless it holds its lock already.
    Begin { id: String, snapshot: Vec<u8> },
    /// One record for session `id`'s journal.
    Append { id: String, line: Vec<u8> },
    /// Session `id` was opened: its files are written from now on, under
    /// `lock` (`None`: the lock held already, the same session reopened).
    Adopt {
        id: String,
        lock: Option<SessionLock>,
    },
    /// The session was left: its lock is let go once its saves are done.
    Release,
    /// Answered when every save queued before is on disk.
    Flush(oneshot::Sender<()>),
}

/// The agent's end of the writer thread.
#[derive(Debug)]
pub struct SessionWriter {
    jobs: mpsc::Sender<Job>,
    status: watch::Receiver<WriterStatus>,
    stopped: oneshot::Receiver<()>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Job::Begin { .. } => "Begin",
            Job::Append { .. } => "Append",
            Job::Adopt { .. } => "Adopt",
            Job::Release => "Release",
            Job::Flush(_) => "Flush",
        };
        f.write_str(name)
    }
}

impl SessionWriter {
    /// Starts the writer thread for sessions in `store`, noting what it
    /// does in `log`.
    pub fn start(store: SessionStore, log: Log) -> Result<Self, SessionError> {
        let (jobs, queue) = mpsc::channel(WRITE_QUEUE);
        let (report, status) = watch::channel(WriterStatus::default());
        let (done, stopped) = oneshot::channel();
        std::thread::Builder::new()
            .name("session-writer".into())
            .spawn(move || {
                Thread {
                    store,
                    log,
                    report,
                    held: None,
                    journal: None,
                }
                .run(queue);
                let _ = done.send(());
            })
            .map_err(|e| SessionError::Writer(e.to_string()))?;
        Ok(Self {
            jobs,
            status,
            stopped,
        })
    }

    async fn send(&self, job: Job) -> Result<(), SessionError> {
        self.jobs
            .send(job)
            .await
            .map_err(|_| SessionError::Writer("it stopped".into()))
    }

    /// Queues a snapshot that session `id`'s files start from.
    pub async fn begin(&self, id: &str, snapshot: Vec<u8>) -> Result<(), SessionError> {
        let id = id.to_owned();
        self.send(Job::Begin { id, snapshot }).await
    }

    /// Queues a record (a journal line, [`super::StepRecord::encode`]) for
    /// session `id`.
    pub async fn append(&self, id: &str, line: Vec<u8>) -> Result<(), SessionError> {
        let id = id.to_owned();
        self.send(Job::Append { id, line }).await
    }

    /// Session `id`, just opened under `lock`, is written from now on.
    pub async fn adopt(&self, id: &str, lock: Option<SessionLock>) -> Result<(), SessionError> {
        let id = id.to_owned();
        self.send(Job::Adopt { id, lock }).await
    }

    /// The open session is left: its lock goes once its saves are written.
    pub async fn release(&self) -> Result<(), SessionError> {
        self.send(Job::Release).await
    }

    /// Waits until every save queued so far is on disk (so a listing or a
    /// load sees them).
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.send(Job::Flush(done)).await.is_ok() {
            let _ = written.await;
        }
    }

    /// The status once it changes; `None` when the writer has stopped.
    pub async fn changed(&mut self) -> Option<WriterStatus> {
        self.status.changed().await.ok()?;
        Some(self.status.borrow_and_update().clone())
    }

    /// Stops the writer once every save is written, the journal folded
    /// into the snapshot, and the lock let go; waits for that.
    pub async fn finish(self) {
        let Self { jobs, stopped, .. } = self;
        drop(jobs);
        let _ = stopped.await;
    }
}

/// The writer thread's state.
struct Thread {
    store: SessionStore,
    log: Log,
    report: watch::Sender<WriterStatus>,
    /// The open session and its lock.
    held: Option<(String, SessionLock)>,
    /// Its journal, while the files are in step with the agent's saves:
    /// after a failure, records are dropped until a snapshot starts them
    /// again (a record only applies after every one before it).
    journal: Option<JournalFile>,
}

impl Thread {
    fn run(mut self, mut queue: mpsc::Receiver<Job>) {
        while let Some(job) = queue.blocking_recv() {
            match job {
                Job::Begin { id, snapshot } => {
                    let begun = self.lock(&id).and_then(|()| {
                        JournalFile::begin(&self.store, &id, &snapshot, self.log.clone())
                    });
                    let begun = begun.map(|journal| self.journal = Some(journal));
                    self.outcome(begun);
                }
                Job::Append { id, line } => {
                    if let Some(journal) = self.journal.as_mut().filter(|j| j.id == id) {
                        let appended = journal.append(&line);
                        if appended.is_err() {
                            self.journal = None;
                        }
                        self.outcome(appended);
                    }
                }
                Job::Adopt { id, lock } => {
                    self.journal = None;
                    match lock {
                        Some(lock) => self.held = Some((id.clone(), lock)),
                        None if self.held.as_ref().is_some_and(|(held, _)| *held == id) => {}
                        None => self.held = None,
                    }
                    let opened = JournalFile::open(&self.store, &id, self.log.clone())
                        .map(|journal| self.journal = Some(journal));
                    self.outcome(opened);
                }
                Job::Release => {
                    self.journal = None;
                    self.held = None;
                }
                Job::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
        if let Some(mut journal) = self.journal.take()
            && journal.journal_bytes > 0
            && let Err(e) = journal.compact()
        {
            self.log
                .line(|| format!("session {}: not compacted on quit: {e}", journal.id));
        }
    }

    /// Holds session `id`'s lock, taking it if another session's is held.
    fn lock(&mut self, id: &str) -> Result<(), SessionError> {
        if self.held.as_ref().is_some_and(|(held, _)| held == id) {
            return Ok(());
        }
        self.journal = None;
        self.held = None;
        self.held = Some((id.to_owned(), self.store.lock(id)?));
        Ok(())
    }

    /// Tells the agent how a save went, when that changes what it knows.
    fn outcome(&mut self, result: Result<(), SessionError>) {
        match result {
            Ok(()) => {
                self.report
                    .send_if_modified(|status| status.failing.take().is_some());
            }
            Err(e) => {
                self.log.line(|| format!("session save failed: {e}"));
                self.report.send_modify(|status| {
                    status.failures += 1;
                    status.failing = Some(e.to_string());
                });
            }
        }
    }
}

/// The open journal of a session whose snapshot is written: records are
/// appended to it, and it is folded into the snapshot when it has grown.
#[derive(Debug)]
pub struct JournalFile {
    store: SessionStore,
    id: String,
    file: File,
    journal_bytes: u64,
    snapshot_bytes: u64,
    /// The journal size at which it is next folded into the snapshot.
    compact_at: u64,
    log: Log,
}

impl JournalFile {
    /// Writes `snapshot` as session `id`'s snapshot (atomically) and
    /// starts its journal empty.
    pub fn begin(
        store: &SessionStore,
        id: &str,
        snapshot: &[u8],
        log: Log,
    ) -> Result<Self, SessionError> {
        store.write(id, snapshot)?;
        let mut journal = Self::open_file(store, id, log)?;
        journal.snapshot_bytes = snapshot.len() as u64;
        journal.empty()?;
        Ok(journal)
    }

    /// Opens session `id`'s journal to append to it. One that holds
    /// records is folded into the snapshot first, which also drops a last
    /// record a crash cut short (records appended after it would never be
    /// read).
    pub fn open(store: &SessionStore, id: &str, log: Log) -> Result<Self, SessionError> {
        let mut journal = Self::open_file(store, id, log)?;
        if journal.journal_bytes > 0 {
            journal.compact()?;
        }
        Ok(journal)
    }

    fn open_file(store: &SessionStore, id: &str, log: Log) -> Result<Self, SessionError> {
        let path = store.journal_of(id);
        let failed = |source| SessionError::Write {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(JOURNAL_MODE)
            .open(&path)
            .map_err(failed)?;
        let journal_bytes = file.metadata().map_err(failed)?.len();
        let snapshot_bytes = std::fs::metadata(store.path_of(id)).map_or(0, |m| m.len());
        let mut journal = Self {
            store: store.clone(),
            id: id.to_owned(),
            file,
            journal_bytes,
            snapshot_bytes,
            compact_at: 0,
            log,
        };
        journal.compact_at = journal.next_compaction();
        Ok(journal)
    }

    /// The journal size past which it is folded into the snapshot.
    fn next_compaction(&self) -> u64 {
        self.journal_bytes + JOURNAL_COMPACT_MIN_BYTES.max(self.snapshot_bytes)
    }

    fn failed(&self, source: std::io::Error) -> SessionError {
        SessionError::Write {
            path: self.store.journal_of(&self.id),
            source,
        }
    }

    /// Appends one record and fsyncs it; folds the journal into the
    /// snapshot once it has grown enough.
    pub fn append(&mut self, line: &[u8]) -> Result<(), SessionError> {
        let after = self.journal_bytes + line.len() as u64;
        if after > SESSION_FILE_MAX_BYTES {
            return Err(SessionError::TooLargeToSave { bytes: after });
        }
        self.file
            .write_all(line)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| self.failed(e))?;
        self.journal_bytes = after;
        if self.journal_bytes >= self.compact_at
            && let Err(e) = self.compact()
        {
            // The records are written: only the folding failed. It is
            // tried again once the journal has grown as much again.
            self.compact_at = self.next_compaction();
            let id = &self.id;
            self.log
                .line(|| format!("session {id}: not compacted: {e}"));
        }
        Ok(())
    }

    /// Reads the session back (snapshot and journal) and writes it as one
    /// snapshot, then empties the journal. A crash between the two leaves
    /// records the new snapshot holds; they are skipped when read.
    pub fn compact(&mut self) -> Result<(), SessionError> {
        let started = Instant::now();
        let session = self.store.load(&self.id)?;
        let snapshot = session.record().encode()?;
        self.store.write(&self.id, &snapshot)?;
        let folded = self.journal_bytes;
        self.snapshot_bytes = snapshot.len() as u64;
        self.empty()?;
        let (id, ms) = (&self.id, started.elapsed().as_secs_f64() * 1000.0);
        self.log.line(|| {
            format!(
                "session {id}: {folded} bytes of journal folded into a snapshot of {} bytes in {ms:.1} ms",
                snapshot.len()
            )
        });
        Ok(())
    }

    /// Empties the journal (its records are in the snapshot).
    fn empty(&mut self) -> Result<(), SessionError> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.sync_all())
            .map_err(|e| self.failed(e))?;
        self.journal_bytes = 0;
        self.compact_at = self.next_compaction();
        Ok(())
    }
}
