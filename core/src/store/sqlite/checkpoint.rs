//! Checkpoints off the committing caller's path, at `synchronous=NORMAL`.
//!
//! SQLite's default (`wal_autocheckpoint`) runs a checkpoint inside the COMMIT that takes
//! the write-ahead log past 1,000 frames: that caller copies the log's pages into the
//! database file and, at NORMAL, first fsyncs the whole log (about 4 MB that no commit has
//! synced). One append in about 240 then took 9–18 ms instead of about 0.1 ms, a third of a
//! lone NORMAL appender's time (bench/notes/4-redis.md). At FULL every commit has
//! synced the log already, the commit's checkpoint only copies pages, and SQLite keeps it
//! (`SqliteStore::watch_log`).
//!
//! At NORMAL every connection of the store reports the log's length after each of its
//! commits (`sqlite3_wal_hook`, which also turns the automatic checkpoint off), and past
//! [`CHECKPOINT_FRAMES`] it asks the file's [`Checkpointer`]: a thread with a connection of
//! its own, started at the first request, ended with the file's last store in the process.
//! It checkpoints in three steps:
//!
//! 1. `PASSIVE`: copies every frame it can and syncs, without waiting for or blocking
//!    anyone: writers go on committing meanwhile. This is the long step (about 12 ms for
//!    a 4 MB log on the disk of bench/notes/4-redis.md).
//! 2. `PASSIVE` again: copies and syncs the frames committed during step 1 (about 5 ms
//!    there), still blocking no one.
//! 3. `RESTART`: waits for the writer of the moment to commit, then, holding the write
//!    lock, copies the frames committed during step 2, syncs the log and the database file,
//!    and waits for readers to leave the log, so that the next writer starts the log over
//!    from its beginning. Writers wait for this short step (through their busy handler,
//!    `busy_wait.rs`, as for another process's writer). Without it, a log that is never
//!    caught up while writers keep committing would grow without bound. Step 2 keeps it
//!    short: this step copies and syncs what committed during the step before it. Measured
//!    with a lone NORMAL appender (bench/notes/4-redis.md), it held the write lock
//!    2.4–4.9 ms after one `PASSIVE`, 1.5–3.6 ms after two.
//!    A writer of this process that finds the file busy while this step runs waits for
//!    the step's end on [`Restarts`] (`restarts.rs`) rather than in its busy handler's
//!    sleeps (which end about a quarter of the wait late, and each sleep takes longer than
//!    it asks on a virtual machine): the thread wakes it as the step ends (`busy_wait.rs`).
//!
//! A checkpoint changes what the database file holds, never what a reader sees or what
//! survives a crash: the same frames are copied as SQLite's own checkpoint would copy, in
//! the same crash-safe way. A step that fails (the disk full, say) or is kept from completing
//! (a reader holding an old snapshot) leaves the log as it was; the thread rests, 20 ms at
//! first and twice as long after each further failure up to 1 s, and the next commit past
//! the mark asks again. Other processes on the file run checkpointers of their own; SQLite
//! lets one run at a time and the others' steps return busy.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::sync::{Condvar, Mutex};
use rusqlite::Connection;

use super::restarts::Restarts;

/// The log length, in frames (pages), past which a commit asks for a checkpoint: SQLite's
/// own default for `wal_autocheckpoint`.
const CHECKPOINT_FRAMES: i32 = 1000;

/// How long the `RESTART` step waits for the writer of the moment, then for readers (while
/// it holds the write lock, so writers wait too), before it gives up until the next request.
const RESTART_WAIT: Duration = Duration::from_millis(20);

/// How long the thread rests after a step that did not complete (a reader kept a snapshot
/// of the log, say): the first rest, doubled after each further such step up to
/// [`LONGEST_REST`], back to this after a checkpoint that completed. A reader holding its
/// snapshot for long (another process's long query, say) then keeps writers waiting for
/// at most `RESTART_WAIT` in every `LONGEST_REST`, instead of attempt after attempt.
const FIRST_REST: Duration = Duration::from_millis(20);

/// The longest rest between two checkpoints that did not complete.
const LONGEST_REST: Duration = Duration::from_secs(1);

/// What the committing connections and the checkpoint thread share.
#[derive(Debug, Default)]
struct Requests {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// A commit took the log past the mark since the thread last looked.
    requested: bool,
    /// The file's last store in this process is gone: the thread ends.
    closed: bool,
}

/// The checkpoint thread of one file in this process.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    path: PathBuf,
    requests: Arc<Requests>,
    restarts: Arc<Restarts>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Checkpointer {
    /// A checkpointer for the file at `path`; its thread starts at the first request.
    pub(crate) fn new(path: &Path) -> Self {
        Checkpointer {
            path: path.to_owned(),
            requests: Arc::default(),
            restarts: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// The `RESTART` steps of this file's checkpoint thread, for writers to wait on.
    pub(crate) fn restarts(&self) -> &Arc<Restarts> {
        &self.restarts
    }

    /// Makes `conn` report its commits' log length to this checkpointer instead of
    /// checkpointing itself.
    pub(crate) fn watch(self: &Arc<Self>, conn: &mut Connection) -> rusqlite::Result<()> {
        let checkpointer = Arc::downgrade(self);
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, frames| {
            if frames >= CHECKPOINT_FRAMES {
                if let Some(checkpointer) = checkpointer.upgrade() {
                    checkpointer.request();
                }
            }
            Ok(())
        }))
    }

    /// Asks for a checkpoint (several requests before the thread looks make one).
    fn request(&self) {
        {
            let mut state = self.requests.state.lock();
            if state.requested {
                return;
            }
            state.requested = true;
        }
        let mut thread = self.thread.lock();
        if thread.is_none() {
            let requests = Arc::clone(&self.requests);
            let restarts = Arc::clone(&self.restarts);
            let path = self.path.clone();
            match std::thread::Builder::new()
                .name("attrflow-checkpoint".into())
                .spawn(move || run(&path, &requests, &restarts))
            {
                Ok(handle) => *thread = Some(handle),
                // Without the thread the log is checkpointed by SQLite when the last
                // connection closes; the next request tries again.
                Err(error) => {
                    self.requests.state.lock().requested = false;
                    tracing::warn!(path = %self.path.display(), %error, "cannot start the checkpoint thread");
                }
            }
            return;
        }
        self.requests.wake.notify_one();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.requests.state.lock().closed = true;
        self.requests.wake.notify_one();
        if let Some(thread) = self.thread.get_mut().take() {
            let _ = thread.join();
        }
    }
}

/// The checkpoint thread: one three-step checkpoint per batch of requests, until closed.
fn run(path: &Path, requests: &Requests, restarts: &Restarts) {
    let mut conn: Option<Connection> = None;
    let mut rest = FIRST_REST;
    loop {
        {
            let mut state = requests.state.lock();
            while !state.requested && !state.closed {
                state = requests.wake.wait(state);
            }
            if state.closed {
                return;
            }
            state.requested = false;
        }
        if conn.is_none() {
            conn = match open(path) {
                Ok(opened) => Some(opened),
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "cannot open a connection to checkpoint");
                    continue;
                }
            };
        }
        let Some(conn) = &conn else { continue };
        let completed = ["PASSIVE", "PASSIVE", "RESTART"].into_iter().try_for_each(|step| {
            let outcome = if step == "RESTART" {
                restarts.run(|| checkpoint(conn, step))
            } else {
                checkpoint(conn, step)
            };
            outcome.map_err(|error| {
                tracing::debug!(path = %path.display(), step, %error, "checkpoint step did not complete");
            })
        });
        if completed.is_ok() {
            rest = FIRST_REST;
        } else {
            // Resting, the thread still ends at once when the store goes.
            let state = requests.state.lock();
            drop(
                requests
                    .wake
                    .wait_while_for(state, |state| !state.closed, rest),
            );
            rest = (rest * 2).min(LONGEST_REST);
        }
    }
}

/// The checkpoint thread's connection: it never writes rows. Its `synchronous` setting is
/// what a checkpoint syncs by; FULL (like NORMAL in WAL mode) syncs the log before copying
/// and the database file after.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    super::busy_wait::install(&conn, RESTART_WAIT)?;
    conn.execute_batch("PRAGMA synchronous=FULL;")?;
    Ok(conn)
}

/// One `PRAGMA wal_checkpoint(step)`; an error when another connection kept it from
/// completing (busy) or it failed.
fn checkpoint(conn: &Connection, step: &str) -> rusqlite::Result<()> {
    let busy: i64 = conn.query_row(&format!("PRAGMA wal_checkpoint({step})"), [], |row| {
        row.get(0)
    })?;
    if busy != 0 {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some(format!("wal_checkpoint({step}) was kept from completing")),
        ));
    }
    Ok(())
}
