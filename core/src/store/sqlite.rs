//! The embedded store: one SQLite file (bundled SQLite, WAL journal).
//!
//! Locks are fail-fast within a process (a [`LockTable`] shared by every store opened on the
//! same file). Writing RPCs go through the file's group-commit pipeline
//! ([`super::group_commit`]): the RPCs of one process run back to back, each in its own
//! savepoint, inside one `BEGIN IMMEDIATE` transaction that one COMMIT makes durable. A
//! second *process* appending to the same flow waits on SQLite's write lock (a bounded busy
//! wait) instead of reading a stale chunk. Either way no update is lost or duplicated.
//! Because a handler runs inside the open write transaction, it cannot itself write through
//! the same file (start a flow, call a writing RPC): such a call fails at once instead of
//! waiting on itself. The write path is in `sqlite/group.rs`.

mod busy_wait;
mod checkpoint;
mod group;
mod mutexes;
mod restarts;
mod wal_writes;
use self::group::RememberedFlows;
pub use self::group::SqliteGroup;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::sync::Mutex;
use rusqlite::{
    params, Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};

use self::checkpoint::Checkpointer;
use super::fault::{FaultPlan, FaultPoint};
use super::group_commit::{GroupCommit, GroupLimits, GroupStats};
use super::{
    ChangeWatch, FlowRecord, Isolation, LockTable, ReplaceRun, RpcBody, RpcCall, SnapshotReader,
    StartOutcome, Store, Write,
};
use crate::error::{Error, Result};
use crate::fork;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA_V1: &str = "
CREATE TABLE flows (
    flow_id       TEXT PRIMARY KEY NOT NULL,
    flow_type     TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL
);
CREATE TABLE attribute_values (
    flow_id TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (flow_id, name)
);
";

/// How hard SQLite works to make a commit survive a power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// `synchronous=FULL`: every commit is fsynced before it is acknowledged. An
    /// acknowledged append survives a process crash *and* a power loss. The default.
    #[default]
    Full,
    /// `synchronous=NORMAL`: in WAL mode commits survive a process crash, but the last
    /// commits before a power loss or OS crash may roll back. Faster: fsync happens at
    /// checkpoints, not at every commit.
    Normal,
}

impl Synchronous {
    /// Parses `full` or `normal` (any case).
    pub fn parse(text: &str) -> Result<Self> {
        match text.to_ascii_lowercase().as_str() {
            "full" => Ok(Synchronous::Full),
            "normal" => Ok(Synchronous::Normal),
            _ => Err(Error::invalid_input(format!(
                "synchronous must be \"full\" or \"normal\", not {text:?}"
            ))),
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// How long an open step that found the file locked pauses before it tries again.
const OPEN_RETRY_PAUSE: Duration = Duration::from_millis(5);

/// Whether SQLite refused a step because another connection holds a lock on the file.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Settings of an SQLite store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Durability of each commit.
    pub synchronous: Synchronous,
    /// How long a writer waits for another *process* to release the file's write lock
    /// before the call fails with a retryable [`Error::LockConflict`].
    pub busy_timeout: Duration,
    /// Connections kept open for reuse.
    pub max_idle_connections: usize,
    /// Bounds of a commit group (URL parameters `group_max_calls`, `group_max_bytes`,
    /// `commit_delay_us`).
    pub group: GroupLimits,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Full,
            busy_timeout: Duration::from_secs(5),
            max_idle_connections: 8,
            group: GroupLimits::default(),
        }
    }
}

/// What every store opened on one file in this process shares.
#[derive(Debug)]
struct FileShared {
    locks: Arc<LockTable>,
    pipeline: GroupCommit<SqliteGroup>,
    /// Flows known to be committed, so that an RPC in a group need not look its flow up
    /// again: see `sqlite/group.rs`.
    flows: Mutex<RememberedFlows>,
    /// Checkpoints the file's log on a thread of its own (`sqlite/checkpoint.rs`).
    checkpointer: Arc<Checkpointer>,
}

impl FileShared {
    fn new(path: &Path) -> Self {
        FileShared {
            locks: Arc::default(),
            pipeline: GroupCommit::default(),
            flows: Mutex::default(),
            checkpointer: Arc::new(Checkpointer::new(path)),
        }
    }
}

/// The [`FileShared`] of each file, by the process that opened it and the file's
/// canonical path.
type Files = BTreeMap<(u32, PathBuf), Weak<FileShared>>;

/// Every [`FileShared`] of this process, and those a `fork()`ed child inherited, locked.
/// Held across `fork()` (see `crate::fork`), so a child that opens a store finds it free.
fn files() -> std::sync::MutexGuard<'static, Files> {
    static FILES: fork::Mutex<Files> = fork::Mutex::new(BTreeMap::new());
    // A map of weak references, whole at every step: what a panicking holder left is usable.
    FILES.lock()
}

/// The [`FileShared`] of `path` in this process. Keyed by process as well: a child made by
/// `fork()` inherits this map with its parent's entries, whose locks no thread of the child
/// will ever release, and refuses the files they name (`refuse_if_open_before_fork`).
fn shared_for(path: &Path) -> Arc<FileShared> {
    let mut files = files();
    files.retain(|_, shared| shared.strong_count() > 0);
    let key = (std::process::id(), path.to_owned());
    if let Some(shared) = files.get(&key).and_then(Weak::upgrade) {
        return shared;
    }
    let shared = Arc::new(FileShared::new(path));
    files.insert(key, Arc::downgrade(&shared));
    shared
}

/// Fails if a process this one was `fork()`ed from has the file at `path` open.
///
/// SQLite keeps the locks of a file per process, in records every connection of the
/// process on that file shares, and a child inherits its parent's records (with the
/// connections that never close in the child) while the locks themselves, held by the
/// parent, are not the child's. A connection the child opened would take none of the locks
/// those records say the process holds, so other processes would not see them: measured, a
/// parent closing its client deleted the log the child's client was appending to, and a
/// new process found none of the 47 appends the child made after that close, each
/// acknowledged.
fn refuse_if_open_before_fork(path: &Path) -> Result<()> {
    let here = std::process::id();
    let files = files();
    let opened_in = files.iter().find_map(|((pid, open_path), shared)| {
        (*pid != here && open_path == path && shared.strong_count() > 0).then_some(*pid)
    });
    match opened_in {
        None => Ok(()),
        Some(parent) => Err(Error::storage(format!(
            "store {} is open in process {parent}, which this process was fork()ed from: \
             SQLite's locks cannot cross fork(), and a store opened here could lose writes; \
             open it in a process that did not inherit it (a fresh process, or \
             multiprocessing's \"spawn\" or \"forkserver\"), or fork before opening it",
            path.display()
        ))),
    }
}

/// A store in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    options: SqliteOptions,
    shared: Arc<FileShared>,
    idle: Mutex<Vec<Connection>>,
    faults: Arc<FaultPlan>,
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens (creating if needed) the store at `path`, creating missing parent folders and
    /// bringing the schema up to date.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        // Before anything in the process initialises SQLite: see `sqlite/mutexes.rs`.
        mutexes::install();
        let path = path.as_ref();
        if path.as_os_str().is_empty() {
            return Err(Error::invalid_input("store path must not be empty"));
        }
        if path.is_dir() {
            return Err(Error::storage(format!(
                "store {} is a folder; name a database file, such as {}",
                path.display(),
                path.join("attrflow.db").display()
            )));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::storage(format!("cannot create folder {}: {e}", parent.display()))
            })?;
        }
        if let Ok(canonical) = std::fs::canonicalize(path) {
            refuse_if_open_before_fork(&canonical)?;
        }
        let mut store = SqliteStore {
            path: path.to_owned(),
            options,
            shared: Arc::new(FileShared::new(path)),
            idle: Mutex::new(Vec::new()),
            faults: Arc::default(),
        };
        let conn = store.connect()?;
        store.migrate(conn)?;
        let canonical = std::fs::canonicalize(path).map_err(|e| {
            Error::storage(format!("cannot resolve store path {}: {e}", path.display()))
        })?;
        store.shared = shared_for(&canonical);
        // The connection that brought the schema up to date reported to the placeholder's
        // checkpointer; from now on it reports to the file's.
        let mut idle = std::mem::take(store.idle.get_mut());
        for conn in &mut idle {
            store.watch_log(conn)?;
        }
        *store.idle.get_mut() = idle;
        Ok(store)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &SqliteOptions {
        &self.options
    }

    /// The faults injected into this store's commits (for tests that prove failure paths).
    #[cfg(feature = "fault-injection")]
    pub fn faults(&self) -> &FaultPlan {
        &self.faults
    }

    /// Groups committed on this file in this process so far, and the calls they held (for
    /// tests and benchmarks: fewer commits than calls means groups formed).
    pub fn group_stats(&self) -> GroupStats {
        self.shared.pipeline.stats()
    }

    /// Locks held in this process on this file now (for tests and diagnostics).
    pub fn held_lock_count(&self) -> usize {
        self.shared.locks.held_count()
    }

    fn connect(&self) -> Result<Connection> {
        let opened = if wal_writes::register() {
            Connection::open_with_flags_and_vfs(
                &self.path,
                OpenFlags::default(),
                wal_writes::VFS_NAME,
            )
        } else {
            Connection::open(&self.path)
        };
        let mut conn = opened.map_err(|e| self.sql_error("opening", e))?;
        busy_wait::install(&conn, self.options.busy_timeout)
            .map_err(|e| self.sql_error("setting busy timeout", e))?;
        self.refuse_foreign_database(&conn)?;
        // Reading the mode takes no lock once the file is in WAL mode; switching it needs an
        // exclusive lock, for which SQLite's busy handler does not always wait (another
        // connection may be switching the same fresh file), so that step waits here.
        let current: String = self.while_opening("reading the journal mode", || {
            conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))
        })?;
        let mode = if current.eq_ignore_ascii_case("wal") {
            current
        } else {
            self.while_opening("enabling WAL", || {
                conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            })?
        };
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::storage(format!(
                "store {}: SQLite refused WAL journal mode (got {mode:?})",
                self.path.display()
            )));
        }
        conn.execute_batch(&format!(
            "PRAGMA synchronous={};",
            self.options.synchronous.pragma()
        ))
        .map_err(|e| self.sql_error("setting synchronous", e))?;
        FaultPlan::attach(&self.faults, &mut conn)
            .map_err(|e| self.sql_error("installing the fault hook", e))?;
        self.watch_log(&mut conn)?;
        Ok(conn)
    }

    /// Refuses, before anything is written to it (its journal mode included), an SQLite
    /// database of another program: one that holds tables, indexes, views or triggers but no
    /// attrflow schema. An empty file, or one attrflow made, passes. (attrflow creates its
    /// schema table and its other tables in one transaction, so no reader sees one without
    /// the other.)
    fn refuse_foreign_database(&self, conn: &Connection) -> Result<()> {
        let (ours, objects): (bool, i64) = self.while_opening("reading the schema", || {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'attrflow_schema'), \
                        (SELECT count(*) FROM sqlite_master)",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })?;
        if ours || objects == 0 {
            return Ok(());
        }
        Err(Error::storage(format!(
            "store {}: the file is an SQLite database of another program ({objects} tables, \
             indexes or other objects and no attrflow schema); attrflow leaves it untouched: \
             open a new or an attrflow file",
            self.path.display()
        )))
    }

    /// At `synchronous=NORMAL`, makes `conn` leave checkpoints to the file's checkpoint
    /// thread (`sqlite/checkpoint.rs`): there SQLite's own checkpoint, run by the commit
    /// that fills the log, fsyncs the whole log first, a stall of milliseconds for that
    /// caller. At FULL every commit has synced the log already, so the commit's own
    /// checkpoint only copies pages; measured, moving it to the thread did not pay there
    /// (bench/notes/4-redis.md), and SQLite keeps it.
    fn watch_log(&self, conn: &mut Connection) -> Result<()> {
        if self.options.synchronous == Synchronous::Normal {
            self.shared
                .checkpointer
                .watch(conn)
                .map_err(|e| self.sql_error("watching the log", e))?;
        }
        Ok(())
    }

    /// Runs one step of opening the store, retrying it while another connection holds a
    /// lock it needs, until the busy timeout has passed. SQLite's own busy handler does not
    /// cover every such step (a journal-mode switch, a read during WAL recovery), so
    /// without this an open could fail at once with a claim of a long wait.
    fn while_opening<T>(
        &self,
        doing: &str,
        mut step: impl FnMut() -> rusqlite::Result<T>,
    ) -> Result<T> {
        let started = Instant::now();
        loop {
            match step() {
                Err(e) if is_busy(&e) => {
                    let waited = started.elapsed();
                    if waited >= self.options.busy_timeout {
                        return Err(self.open_busy(doing));
                    }
                    let left = self.options.busy_timeout - waited;
                    std::thread::sleep(OPEN_RETRY_PAUSE.min(left));
                }
                other => return other.map_err(|e| self.sql_error(doing, e)),
            }
        }
    }

    /// The error of an open step that waited out the busy timeout.
    fn open_busy(&self, doing: &str) -> Error {
        Error::LockConflict(format!(
            "store {} is busy: waited {:?} (its busy timeout) for another connection to \
             release its lock on the file, while {doing}; retry",
            self.path.display(),
            self.options.busy_timeout
        ))
    }

    /// Brings the schema up to date. A store whose schema is current is only read, so it
    /// opens while another connection holds the write lock (inside a long RPC).
    fn migrate(&self, mut conn: Connection) -> Result<()> {
        match self.schema_version(&conn)? {
            Some(SCHEMA_VERSION) => {}
            Some(other) => return Err(self.unknown_schema(other)),
            None => {
                // BEGIN IMMEDIATE waits in SQLite's busy handler.
                let doing = "creating the schema";
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(|e| match is_busy(&e) {
                        true => self.open_busy(doing),
                        false => self.sql_error(doing, e),
                    })?;
                tx.execute_batch(
                    "CREATE TABLE IF NOT EXISTS attrflow_schema (
                         id INTEGER PRIMARY KEY CHECK (id = 1),
                         version INTEGER NOT NULL
                     );",
                )
                .map_err(|e| self.sql_error("creating schema table", e))?;
                let version: Option<i64> = tx
                    .query_row(
                        "SELECT version FROM attrflow_schema WHERE id = 1",
                        [],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(|e| self.sql_error("reading schema version", e))?;
                match version {
                    // Another connection created it while this one waited.
                    Some(SCHEMA_VERSION) => {}
                    Some(other) => return Err(self.unknown_schema(other)),
                    None => {
                        tx.execute_batch(SCHEMA_V1)
                            .map_err(|e| self.sql_error("creating schema", e))?;
                        tx.execute(
                            "INSERT INTO attrflow_schema (id, version) VALUES (1, ?1)",
                            [SCHEMA_VERSION],
                        )
                        .map_err(|e| self.sql_error("recording schema version", e))?;
                    }
                }
                tx.commit()
                    .map_err(|e| self.sql_error("committing migration", e))?;
            }
        }
        self.checkin(conn);
        Ok(())
    }

    /// The schema version stored in the file, read without taking the write lock; `None`
    /// for a file without one.
    fn schema_version(&self, conn: &Connection) -> Result<Option<i64>> {
        self.while_opening("reading the schema version", || {
            let has_table: bool = conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'attrflow_schema')",
                [],
                |r| r.get(0),
            )?;
            if !has_table {
                return Ok(None);
            }
            conn.query_row(
                "SELECT version FROM attrflow_schema WHERE id = 1",
                [],
                |r| r.get(0),
            )
            .optional()
        })
    }

    fn unknown_schema(&self, version: i64) -> Error {
        Error::storage(format!(
            "store {} has schema version {version}; this attrflow reads version {SCHEMA_VERSION}",
            self.path.display()
        ))
    }

    fn checkout(&self) -> Result<PooledConnection<'_>> {
        Ok(PooledConnection {
            store: self,
            conn: Some(self.take_connection()?),
        })
    }

    fn checkin(&self, conn: Connection) {
        let mut idle = self.idle.lock();
        if idle.len() < self.options.max_idle_connections {
            idle.push(conn);
        }
    }

    fn sql_error(&self, doing: &str, error: rusqlite::Error) -> Error {
        let path = self.path.display();
        match error.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::LockConflict(format!(
                "store {path} is busy: another process held its write lock for over {:?} while {doing}; retry",
                self.options.busy_timeout
            )),
            Some(ErrorCode::DiskFull) => {
                Error::StorageFull(format!("store {path}: disk full while {doing}; nothing was written"))
            }
            Some(ErrorCode::NotADatabase) => Error::storage(format!(
                "store {path} is not an SQLite database (while {doing})"
            )),
            _ => Error::storage(format!("store {path}: {doing}: {error}")),
        }
    }

    fn begin<'c>(
        &self,
        conn: &'c mut Connection,
        behavior: TransactionBehavior,
    ) -> Result<Transaction<'c>> {
        conn.transaction_with_behavior(behavior)
            .map_err(|e| self.sql_error("beginning a transaction", e))
    }

    fn load_flow(&self, conn: &Connection, flow_id: &str) -> Result<Option<FlowRecord>> {
        let mut stmt = conn
            .prepare_cached("SELECT flow_type, run_id FROM flows WHERE flow_id = ?1")
            .map_err(|e| self.sql_error("reading a flow", e))?;
        stmt.query_row([flow_id], |row| {
            Ok(FlowRecord {
                flow_id: flow_id.to_owned(),
                flow_type: row.get(0)?,
                run_id: row.get(1)?,
            })
        })
        .optional()
        .map_err(|e| self.sql_error("reading a flow", e))
    }

    fn require_flow(&self, conn: &Connection, flow_id: &str) -> Result<FlowRecord> {
        self.load_flow(conn, flow_id)?
            .ok_or_else(|| Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            })
    }

    /// Replaces the run of the existing flow `flow.flow_id` with `flow`'s, started at
    /// `started_at_ms`: its record changes and every value of the previous run is deleted.
    fn replace_run(&self, conn: &Connection, flow: &FlowRecord, started_at_ms: i64) -> Result<()> {
        conn.prepare_cached("DELETE FROM attribute_values WHERE flow_id = ?1")
            .and_then(|mut stmt| stmt.execute([&flow.flow_id]))
            .map_err(|e| self.sql_error("deleting the previous run's values", e))?;
        self.record_run(
            conn,
            "UPDATE flows SET flow_type = ?2, run_id = ?3, started_at_ms = ?4 WHERE flow_id = ?1",
            flow,
            started_at_ms,
            "recording a new run",
        )
    }

    /// Runs `sql` (an insert or update of the flows table taking the flow ID, type, run ID
    /// and start time as `?1`…`?4`) for `flow`'s run, started at `started_at_ms`.
    fn record_run(
        &self,
        conn: &Connection,
        sql: &str,
        flow: &FlowRecord,
        started_at_ms: i64,
        doing: &str,
    ) -> Result<()> {
        conn.prepare_cached(sql)
            .and_then(|mut stmt| {
                stmt.execute(params![
                    flow.flow_id,
                    flow.flow_type,
                    flow.run_id,
                    started_at_ms
                ])
            })
            .map(drop)
            .map_err(|e| self.sql_error(doing, e))
    }

    /// Writes `writes` of `flow_id`; returns the bytes written (names plus JSON).
    fn apply_writes(&self, conn: &Connection, flow_id: &str, writes: &[Write]) -> Result<usize> {
        let mut upsert = conn
            .prepare_cached(
                "INSERT INTO attribute_values (flow_id, name, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (flow_id, name) DO UPDATE SET value = excluded.value",
            )
            .map_err(|e| self.sql_error("writing a value", e))?;
        // Most calls delete nothing: the delete is prepared (taken from the cache) on the
        // first one.
        let mut delete = None;
        self.faults.check(FaultPoint::BeforeWrites)?;
        let mut bytes = 0;
        for (written, (name, value)) in writes.iter().enumerate() {
            if written == 1 {
                self.faults.check(FaultPoint::AfterFirstWrite)?;
            }
            bytes += name.len() + value.as_ref().map_or(0, String::len);
            match value {
                Some(json) => upsert.execute(params![flow_id, name, json]),
                None => {
                    let delete = match &mut delete {
                        Some(delete) => delete,
                        None => delete.insert(
                            conn.prepare_cached(
                                "DELETE FROM attribute_values WHERE flow_id = ?1 AND name = ?2",
                            )
                            .map_err(|e| self.sql_error("deleting a value", e))?,
                        ),
                    };
                    delete.execute(params![flow_id, name])
                }
            }
            .map_err(|e| self.sql_error("writing a value", e))?;
        }
        Ok(bytes)
    }
}

impl Store for SqliteStore {
    fn start_flow(
        &self,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        self.shared
            .pipeline
            .start_flow(self, flow, initial, replace)
    }

    fn run_rpc(&self, flow_id: &str, isolation: &Isolation, body: &mut RpcBody<'_>) -> Result<()> {
        self.shared.pipeline.run_rpc(self, flow_id, isolation, body)
    }

    fn run_rpcs(&self, calls: &mut [RpcCall<'_, '_>]) -> Vec<Result<()>> {
        self.shared.pipeline.run_rpcs(self, calls)
    }

    fn groups_batches(&self) -> bool {
        true
    }

    fn reads_without_waiting(&self) -> bool {
        // A read opens its own snapshot of the WAL on a connection of its own: writers,
        // including another process's, never hold it up.
        true
    }

    fn flow(&self, flow_id: &str) -> Result<Option<FlowRecord>> {
        let mut conn = self.checkout()?;
        let tx = self.begin(&mut conn, TransactionBehavior::Deferred)?;
        self.load_flow(&tx, flow_id)
    }

    fn started_at_ms(&self, flow_id: &str) -> Result<Option<i64>> {
        let conn = self.checkout()?;
        conn.query_row(
            "SELECT started_at_ms FROM flows WHERE flow_id = ?1",
            [flow_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(|e| self.sql_error("reading when a flow started", e))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn list_flows(&self) -> Result<Vec<FlowRecord>> {
        let conn = self.checkout()?;
        let mut stmt = conn
            .prepare("SELECT flow_id, flow_type, run_id FROM flows ORDER BY flow_id")
            .map_err(|e| self.sql_error("listing flows", e))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(FlowRecord {
                    flow_id: row.get(0)?,
                    flow_type: row.get(1)?,
                    run_id: row.get(2)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sql_error("listing flows", e));
        rows
    }

    fn stored_values(&self, flow_id: &str) -> Result<Vec<(String, String)>> {
        let conn = self.checkout()?;
        let mut stmt = conn
            .prepare("SELECT name, value FROM attribute_values WHERE flow_id = ?1 ORDER BY name")
            .map_err(|e| self.sql_error("listing values", e))?;
        let rows = stmt
            .query_map([flow_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sql_error("listing values", e));
        rows
    }

    fn watch_changes(&self) -> Result<Option<Box<dyn ChangeWatch>>> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)
            .map_err(|e| self.sql_error("opening a change watch", e))?;
        busy_wait::install(&conn, self.options.busy_timeout)
            .map_err(|e| self.sql_error("setting busy timeout", e))?;
        let mut watch = SqliteChangeWatch {
            conn,
            version: 0,
            location: self.location(),
        };
        watch.version = watch.data_version()?;
        Ok(Some(Box::new(watch)))
    }

    fn integrity_problem(&self) -> Result<Option<String>> {
        let conn = self.checkout()?;
        let verdict: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .map_err(|e| self.sql_error("checking integrity", e))?;
        Ok((verdict != "ok").then_some(verdict))
    }
}

/// A read-only connection of its own whose `PRAGMA data_version` moves whenever another
/// connection to the file (of this process or another) commits: one cheap query, no table
/// read, per check.
struct SqliteChangeWatch {
    conn: Connection,
    version: i64,
    location: String,
}

impl SqliteChangeWatch {
    fn data_version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(|e| {
                Error::storage(format!(
                    "store {}: reading PRAGMA data_version: {e}",
                    self.location
                ))
            })
    }
}

impl ChangeWatch for SqliteChangeWatch {
    fn changed(&mut self) -> Result<bool> {
        let version = self.data_version()?;
        let changed = version != self.version;
        self.version = version;
        Ok(changed)
    }
}

/// A connection that goes back to the pool when dropped.
struct PooledConnection<'s> {
    store: &'s SqliteStore,
    conn: Option<Connection>,
}

impl std::ops::Deref for PooledConnection<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("connection present until drop")
    }
}

impl std::ops::DerefMut for PooledConnection<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("connection present until drop")
    }
}

impl Drop for PooledConnection<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if conn.is_autocommit() {
                self.store.checkin(conn);
            }
        }
    }
}

struct TxReader<'t> {
    store: &'t SqliteStore,
    tx: &'t Connection,
    flow: FlowRecord,
}

impl SnapshotReader for TxReader<'_> {
    fn flow(&self) -> &FlowRecord {
        &self.flow
    }

    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT value FROM attribute_values WHERE flow_id = ?1 AND name = ?2")
            .map_err(|e| self.store.sql_error("reading values", e))?;
        let mut found = Vec::with_capacity(physical_names.len());
        for name in physical_names {
            let value: Option<String> = stmt
                .query_row(params![self.flow.flow_id, name], |row| row.get(0))
                .optional()
                .map_err(|e| self.store.sql_error("reading values", e))?;
            if let Some(value) = value {
                found.push((name.clone(), value));
            }
        }
        Ok(found)
    }

    fn read_map(&mut self, map: &str) -> Result<Vec<(String, String)>> {
        let (from, to) = super::map_name_range(map);
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT name, value FROM attribute_values
                 WHERE flow_id = ?1 AND name >= ?2 AND name < ?3 ORDER BY name",
            )
            .map_err(|e| self.store.sql_error("reading a map", e))?;
        let rows = stmt
            .query_map(params![self.flow.flow_id, from, to], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .map_err(|e| self.store.sql_error("reading a map", e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.store.sql_error("reading a map", e))
    }
}
