//! The shared store: one PostgreSQL database (or one schema in it) that many processes on
//! many hosts use at once.
//!
//! Writing RPCs of one process go through the store's group-commit pipeline
//! ([`super::group_commit`], the PostgreSQL side in `postgres/group.rs`) unless the URL says
//! `group_commit=off`: concurrent RPCs share one transaction and one COMMIT round trip on
//! one pooled connection, each in a savepoint of its own, taking its row locks inside it
//! (or with the calls queued beside it, just before it runs: `postgres/group.rs`).
//! With `group_commit=off`, every RPC runs in one transaction on one pooled connection.
//! Either way:
//!
//! - an exclusive RPC runs at `REPEATABLE READ`. It takes its locks as row locks on
//!   `attribute_locks` with `FOR UPDATE NOWAIT`, so a lock another transaction holds fails
//!   at once with [`Error::LockConflict`] (SQLSTATE `55P03`); a row that does not exist yet
//!   it creates first, claiming it with an advisory try-lock so that one another
//!   transaction is creating is a conflict at once too (`pool::CREATE_LOCK_ROWS`). It bumps
//!   the rows it locked:
//!   a transaction whose snapshot was taken before the previous holder committed fails with
//!   a serialization error (`40001`), also a retryable lock conflict, instead of reading a
//!   stale value. The same first statement takes a share lock on the flow's row, which a
//!   stop and a new run of the flow update: they wait for the transaction, and a
//!   transaction whose snapshot predates one fails with a serialization error instead of
//!   writing into a stopped or a new run. Values are read, the handler runs, and its
//!   writes commit together, or they are rolled back and nothing is written;
//! - a shared RPC reads one consistent snapshot (`REPEATABLE READ READ ONLY`) on a pooled
//!   connection of its own, in one round trip (`postgres/snapshot.rs`), and commits any
//!   writes afterwards: grouped, only if every value it read is unchanged by then; with
//!   `group_commit=off`, in a transaction of its own, last writer wins, if the flow's run
//!   is still the one it read and not stopped.
//!
//! A process that dies while it holds locks closes its connections; the server aborts its
//! transaction and the locks are free again. A peer that hangs without closing its
//! connection is cut off by the server's `idle_in_transaction_session_timeout` and TCP
//! keepalives, both set on every connection (see [`PostgresOptions`]).

mod errors;
mod group;
mod held;
mod notify;
mod options;
mod pool;
mod schema;
mod snapshot;
mod tls;
mod unsent;

pub use group::PostgresGroup;
pub use options::{PostgresOptions, SslMode, DEFAULT_GROUP_LANES, KNOWN_PARAMETERS};
pub use schema::SCHEMA_VERSION;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use postgres::{GenericClient, IsolationLevel, SimpleQueryMessage, SimpleQueryRow, Transaction};

use self::errors::Errors;
pub use self::errors::COMMIT_OUTCOME_UNKNOWN;
use self::pool::{Connection, Pool, Statements};
use self::unsent::Unsent;
use super::fault::FaultPlan;
use super::group_commit::{GroupCommit, GroupStats, Opening};
use super::{
    FlowRecord, Isolation, LockTable, ReplaceRun, RpcBody, RpcCall, SnapshotReader, StartOutcome,
    Store, Write,
};
use crate::error::{Error, Result};
use crate::lifecycle::RUN_STATE_NAME;

/// How long a new connection may take to open unless the URL says (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle time before the client's first TCP keepalive probe unless the URL says
/// (`keepalives_idle`).
const DEFAULT_KEEPALIVES_IDLE: Duration = Duration::from_secs(30);
/// Time between the client's keepalive probes unless the URL says (`keepalives_interval`).
const DEFAULT_KEEPALIVES_INTERVAL: Duration = Duration::from_secs(10);
/// Unanswered probes after which the client drops the connection unless the URL says
/// (`keepalives_retries`).
const DEFAULT_KEEPALIVES_RETRIES: u32 = 3;

/// A `postgresql://` URL as the driver reads it (attrflow's own parameters taken out).
/// Its `Debug` form hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectionUrl(String);

impl ConnectionUrl {
    /// Wraps a driver URL.
    pub fn new(url: impl Into<String>) -> Self {
        ConnectionUrl(url.into())
    }

    /// The URL with its password replaced by `***`.
    pub fn redacted(&self) -> String {
        super::url::redact(&self.0)
    }

    fn config(&self) -> Result<postgres::Config> {
        let (base, query) = self.0.split_once('?').unwrap_or((&self.0, ""));
        // The driver knows sslmode=disable|prefer|require only, and no sslrootcert: TLS is
        // set up by attrflow (see `tls`).
        let driver_query: Vec<String> = query
            .split('&')
            .filter(|pair| !pair.is_empty() && !pair.starts_with("sslrootcert="))
            .map(|pair| match pair.strip_prefix("sslmode=") {
                Some(mode) => SslMode::parse(&self.redacted(), mode)
                    .map(|mode| format!("sslmode={}", mode.driver_value())),
                None => Ok(pair.to_owned()),
            })
            .collect::<Result<_>>()?;
        let driver_url = if driver_query.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", driver_query.join("&"))
        };
        let mut config = postgres::Config::from_str(&driver_url)
            .map_err(|e| Error::invalid_input(format!("store URL {:?}: {e}", self.redacted())))?;
        let given = |key: &str| {
            query
                .split('&')
                .any(|pair| pair.split('=').next() == Some(key))
        };
        if !given("connect_timeout") {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if !given("keepalives_idle") {
            config.keepalives_idle(DEFAULT_KEEPALIVES_IDLE);
        }
        if !given("keepalives_interval") {
            config.keepalives_interval(DEFAULT_KEEPALIVES_INTERVAL);
        }
        if !given("keepalives_retries") {
            config.keepalives_retries(DEFAULT_KEEPALIVES_RETRIES);
        }
        if !given("application_name") {
            config.application_name("attrflow");
        }
        Ok(config)
    }
}

impl std::fmt::Debug for ConnectionUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ConnectionUrl")
            .field(&self.redacted())
            .finish()
    }
}

thread_local! {
    /// The stores (by address) in whose write this thread is now, inside a handler.
    static WRITING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread's write on one store; dropping it ends the write.
struct WriteScope {
    key: usize,
}

impl Drop for WriteScope {
    fn drop(&mut self) {
        WRITING.with(|writing| writing.borrow_mut().retain(|&key| key != self.key));
    }
}

/// The lanes of group commit that stores share.
type Lanes = Arc<[GroupCommit<PostgresGroup>]>;

/// The process, location and options of the stores that share one set of lanes.
type LanesKey = (u32, String, PostgresOptions);

/// The lock tables and lanes of this process's stores (and those a `fork()`ed child
/// inherited, keyed by the process that made them, so a child never shares a lock its
/// parent's threads held, nor a group on its parent's connection).
struct Registry {
    /// By process and location.
    locks: BTreeMap<(u32, String), Weak<LockTable>>,
    /// By process, location and options.
    lanes: Vec<(LanesKey, Weak<[GroupCommit<PostgresGroup>]>)>,
}

/// The [`Registry`], locked. Held across `fork()` (see `crate::fork`), so a child that
/// opens a store finds it free.
fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: crate::fork::Mutex<Registry> = crate::fork::Mutex::new(Registry {
        locks: BTreeMap::new(),
        lanes: Vec::new(),
    });
    // Maps of weak references, whole at every step: what a panicking holder left is usable.
    REGISTRY.lock()
}

/// The lock table and the lanes of a store opened on `location` with `options`.
///
/// Every store opened on one database (and schema) in this process shares one lock table
/// (and its held-lock count), as stores on one SQLite file do. Those opened with the same
/// options share their lanes too, as stores on one SQLite file share one pipeline: a call
/// through one store joins the group a call through another has open, so a lock released
/// early by one is taken by the other inside the same transaction, not refused by the
/// server because the first store's group holds its row until its COMMIT.
fn shared_for(location: &str, options: &PostgresOptions) -> (Arc<LockTable>, Lanes) {
    let mut registry = registry();
    registry.locks.retain(|_, table| table.strong_count() > 0);
    registry.lanes.retain(|(_, lanes)| lanes.strong_count() > 0);
    let process = std::process::id();
    let at = (process, location.to_owned());
    let locks = match registry.locks.get(&at).and_then(Weak::upgrade) {
        Some(table) => table,
        None => {
            let table = Arc::new(LockTable::new());
            registry.locks.insert(at, Arc::downgrade(&table));
            table
        }
    };
    let key = (process, location.to_owned(), options.clone());
    let found = registry
        .lanes
        .iter()
        .find(|(opened, _)| *opened == key)
        .and_then(|(_, lanes)| lanes.upgrade());
    let lanes = match found {
        Some(lanes) => lanes,
        None => {
            let lanes: Lanes = (0..options.lanes()).map(|_| GroupCommit::new()).collect();
            registry.lanes.push((key, Arc::downgrade(&lanes)));
            lanes
        }
    };
    (locks, lanes)
}

/// A store in a PostgreSQL database.
pub struct PostgresStore {
    location: String,
    options: PostgresOptions,
    pool: Arc<Pool>,
    /// What ends a writing transaction: `COMMIT`, after a `NOTIFY` with `notify=on`.
    commit_sql: String,
    locks: Arc<LockTable>,
    /// The group-commit pipelines (*lanes*), each with a transaction of its own; the RPCs
    /// of one flow always go through the same lane. Shared by the stores opened in this
    /// process with the same URL (see [`shared_for`]).
    lanes: Lanes,
    faults: Arc<FaultPlan>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Opens the store named by a `postgresql://` URL (see [`crate::store::StoreUrl`]).
    pub fn open(url: &str) -> Result<Self> {
        match super::StoreUrl::parse(url)? {
            super::StoreUrl::Postgres { url, options } => Self::open_with(&url, options),
            super::StoreUrl::Sqlite { .. } => Err(Error::invalid_input(format!(
                "store URL {:?} names an SQLite file, not a PostgreSQL database",
                super::url::redact(url)
            ))),
        }
    }

    /// Connects, creates the schema and its tables when missing (or migrates them), and
    /// keeps up to `options.pool_max_size` connections for the calls to come.
    pub fn open_with(url: &ConnectionUrl, options: PostgresOptions) -> Result<Self> {
        let config = url.config()?;
        let location = if options.schema == PostgresOptions::default().schema {
            url.redacted()
        } else {
            format!("{} (schema {})", url.redacted(), options.schema)
        };
        let tls = tls::connector(&location, options.ssl_mode, options.ssl_root_cert.as_ref())?;
        let pool = Arc::new(Pool::new(config, tls, options.clone(), location.clone()));
        let mut client = pool.connect_bare()?;
        schema::migrate(&mut client, &options.schema, &location)?;
        let (locks, lanes) = shared_for(&location, &options);
        Ok(PostgresStore {
            lanes,
            commit_sql: notify::commit_sql(&options.schema, options.notify),
            options,
            pool,
            locks,
            location,
            faults: Arc::default(),
        })
    }

    /// The options it was opened with.
    pub fn options(&self) -> &PostgresOptions {
        &self.options
    }

    /// Groups committed so far through this store's lanes (which stores opened in this
    /// process with the same URL share), and the calls they held (for tests and
    /// benchmarks: fewer commits than calls means groups formed). All zero with
    /// `group_commit=off`.
    pub fn group_stats(&self) -> GroupStats {
        self.lanes
            .iter()
            .map(GroupCommit::stats)
            .fold(GroupStats::default(), |sum, lane| GroupStats {
                commits: sum.commits + lane.commits,
                members: sum.members + lane.members,
                waiting: sum.waiting + lane.waiting,
            })
    }

    /// The lane of the flow `flow_id`: the same for every RPC of the flow, so a later RPC
    /// taking a lock an earlier one released early runs in the same transaction.
    fn lane(&self, flow_id: &str) -> &GroupCommit<PostgresGroup> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(flow_id, &mut hasher);
        let at = std::hash::Hasher::finish(&hasher) % self.lanes.len().max(1) as u64;
        &self.lanes[usize::try_from(at).unwrap_or(0)]
    }

    /// The faults injected into this store's group commits (for tests that prove failure
    /// paths): [`crate::store::fault::FaultPoint::AtCommit`] rolls a group back where its
    /// COMMIT would go; [`crate::store::fault::FaultPoint::AfterCommit`] fires once a
    /// group's COMMIT returned, before any member is answered.
    #[cfg(feature = "fault-injection")]
    pub fn faults(&self) -> &FaultPlan {
        &self.faults
    }

    /// Locks held through this store in this process now (for tests and diagnostics).
    pub fn held_lock_count(&self) -> usize {
        self.locks.held_count()
    }

    /// Marks this thread as writing to this store. A handler that writes through the store
    /// its own RPC runs in gets an error, as on SQLite: its write would commit on its own
    /// even if the RPC around it failed.
    fn write_scope(&self) -> Result<WriteScope> {
        let key = Arc::as_ptr(&self.locks) as usize;
        if WRITING.with(|writing| writing.borrow().contains(&key)) {
            return Err(Error::invalid_input(format!(
                "store {}: an RPC handler cannot write to the store it is running in \
                 (start a flow or call a writing RPC) before its own RPC returns",
                self.location
            )));
        }
        WRITING.with(|writing| writing.borrow_mut().push(key));
        Ok(WriteScope { key })
    }

    /// A name stored as bytes, as the string it was written from.
    fn text(&self, bytes: Vec<u8>) -> Result<String> {
        String::from_utf8(bytes).map_err(|e| {
            Error::storage(format!(
                "store {}: a stored name is not UTF-8: {e}",
                self.location
            ))
        })
    }

    /// Runs `call` on a pooled connection. A connection the server closed while it sat in
    /// the pool (a restart, a failover) fails at the call's first statement, before
    /// anything of the call ran: it is dropped with every idle one, and the call starts once
    /// more on a new connection.
    fn with_connection<T>(
        &self,
        mut call: impl FnMut(&mut postgres::Client, &Statements, Errors<'_>, &Cell<bool>) -> Result<T>,
    ) -> Result<T> {
        let mut retried = false;
        loop {
            let mut pooled = self.pool.get()?;
            let Connection {
                client,
                statements,
                broken,
                reused,
                untouched,
            } = pooled.get()?;
            untouched.set(true);
            let errors = Errors {
                location: &self.location,
                broken,
            };
            let result = call(client, statements, errors, untouched);
            if broken.get() {
                self.pool.discard_idle();
                if result.is_err() && untouched.get() && *reused && !retried {
                    retried = true;
                    continue;
                }
            }
            return result;
        }
    }

    fn begin<'c>(
        &self,
        client: &'c mut postgres::Client,
        errors: Errors<'_>,
        untouched: &Cell<bool>,
        isolation: IsolationLevel,
        read_only: bool,
    ) -> Result<Transaction<'c>> {
        let tx = client
            .build_transaction()
            .isolation_level(isolation)
            .read_only(read_only)
            .start()
            .map_err(errors.doing("beginning a transaction"))?;
        untouched.set(false);
        Ok(tx)
    }

    /// Commits a writing transaction, after a `NOTIFY` with `notify=on`.
    fn commit(&self, mut tx: Transaction<'_>) -> std::result::Result<(), postgres::Error> {
        if self.options.notify {
            tx.batch_execute(&notify::notify_sql(&self.options.schema))?;
        }
        tx.commit()
    }

    /// Runs `read` in a read-only transaction at `isolation` on a pooled connection.
    fn read_only<T>(
        &self,
        isolation: IsolationLevel,
        mut read: impl FnMut(&mut Transaction<'_>, &Statements, Errors<'_>) -> Result<T>,
    ) -> Result<T> {
        self.with_connection(|client, statements, errors, untouched| {
            let mut tx = self.begin(client, errors, untouched, isolation, true)?;
            let value = read(&mut tx, statements, errors)?;
            tx.commit().map_err(errors.doing("ending a read"))?;
            Ok(value)
        })
    }

    /// Runs `read`, one statement, on a pooled connection outside any transaction: a single
    /// statement reads one snapshot of committed state by itself, so it needs neither a
    /// `BEGIN` nor a `COMMIT` (two round trips saved). A read that fails on a connection the
    /// server closed while it sat in the pool goes again on a new one.
    fn read_one<T>(
        &self,
        mut read: impl FnMut(&mut postgres::Client, &Statements, Errors<'_>) -> Result<T>,
    ) -> Result<T> {
        self.with_connection(|client, statements, errors, _untouched| {
            read(client, statements, errors)
        })
    }

    fn load_flow(
        &self,
        client: &mut impl GenericClient,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
    ) -> Result<Option<(FlowRecord, RunState)>> {
        let row = client
            .query_opt(&statements.load_flow, &[&flow_id])
            .map_err(errors.doing("reading a flow"))?;
        row.map(|row| {
            let flow = FlowRecord {
                flow_id: flow_id.to_owned(),
                flow_type: self.text(row.get(0))?,
                run_id: row.get(1),
            };
            Ok((flow, row.get(2)))
        })
        .transpose()
    }

    fn require_flow(
        &self,
        tx: &mut Transaction<'_>,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
    ) -> Result<(FlowRecord, RunState)> {
        self.load_flow(tx, statements, errors, flow_id)?
            .ok_or_else(|| Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            })
    }

    fn apply_writes(
        &self,
        tx: &mut impl GenericClient,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
        writes: &[Write],
    ) -> Result<()> {
        let (mut names, mut values, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
        for (name, value) in writes {
            if name == RUN_STATE_NAME {
                tx.execute(&statements.close_run, &[&flow_id, value])
                    .map_err(errors.doing("recording the run's end"))?;
                continue;
            }
            match value {
                Some(json) => {
                    names.push(name.as_bytes());
                    values.push(json.as_str());
                }
                None => deleted.push(name.as_bytes()),
            }
        }
        if !names.is_empty() {
            tx.execute(&statements.upsert_values, &[&flow_id, &names, &values])
                .map_err(errors.doing("writing values"))?;
        }
        if !deleted.is_empty() {
            tx.execute(&statements.delete_values, &[&flow_id, &deleted])
                .map_err(errors.doing("deleting values"))?;
        }
        Ok(())
    }

    /// Writes `writes` and ends with `end` (a COMMIT, or the release of a savepoint), in
    /// one round trip when it can: the writes go as literals in one simple-query batch
    /// ending in `end`. Text holding a NUL character (which a simple query cannot carry)
    /// goes through the prepared statements instead. `end_error` maps a failure of the
    /// batch.
    #[allow(clippy::too_many_arguments)]
    fn write_and_end(
        &self,
        client: &mut postgres::Client,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
        writes: &[Write],
        end: &str,
        end_error: impl Fn(postgres::Error) -> Error,
    ) -> Result<()> {
        match end_batch(flow_id, writes, end) {
            Some(batch) => client.batch_execute(&batch).map_err(end_error),
            None => {
                self.apply_writes(client, statements, errors, flow_id, writes)?;
                client.batch_execute(end).map_err(end_error)
            }
        }
    }

    /// The first statement of an exclusive RPC (or group member): takes and bumps the lock
    /// rows of `locks`, reads the flow and the locked names' values. `None` when some lock
    /// rows do not exist yet.
    fn open_member(
        &self,
        client: &mut postgres::Client,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
        (locks, reads): Opening<'_>,
    ) -> Result<Option<(FlowRecord, Prefetched)>> {
        let row = client
            .query_opt(
                &statements.open_rpc,
                &[&flow_id, &as_bytes(locks), &as_bytes(reads)],
            )
            .map_err(|e| open_error(errors, flow_id, locks, e))?;
        let Some(row) = row else {
            return Err(Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            });
        };
        let locked: i64 = row.get(2);
        if usize::try_from(locked).unwrap_or(0) < locks.len() {
            return Ok(None);
        }
        let flow = FlowRecord {
            flow_id: flow_id.to_owned(),
            flow_type: self.text(row.get(0))?,
            run_id: row.get(1),
        };
        let mut prefetched = prefetch_slots(&[locks, reads].concat(), row.get(5));
        let known: Vec<Vec<u8>> = row.get(3);
        let values: Vec<String> = row.get(4);
        for (name, value) in known.into_iter().zip(values) {
            prefetched.insert(self.text(name)?, Some(value));
        }
        Ok(Some((flow, prefetched)))
    }

    /// Creates the lock rows of `locks` that flow `flow_id` lacks, in the open transaction
    /// on `client` (so its snapshot sees them, and it holds them until it ends). Another
    /// transaction creating one of them at the same moment holds that lock: a conflict at
    /// once, not a wait (see `pool::CREATE_LOCK_ROWS`).
    fn create_lock_rows(
        &self,
        client: &mut postgres::Client,
        statements: &Statements,
        errors: Errors<'_>,
        flow_id: &str,
        locks: &[String],
    ) -> Result<()> {
        let doing = "creating lock rows";
        let row = client
            .query_one(&statements.create_lock_rows, &[&flow_id, &as_bytes(locks)])
            .map_err(errors.doing(doing))?;
        let claimed_elsewhere: i64 = row.get(0);
        if claimed_elsewhere > 0 {
            return Err(Error::LockConflict(format!(
                "store {}: {doing} conflicted with a concurrent transaction (it is creating \
                 {claimed_elsewhere} of the {} lock rows of flow {flow_id:?}); retry",
                self.location,
                locks.len()
            )));
        }
        Ok(())
    }

    /// Creates the flow with its initial values in the open transaction on `tx`, or, when
    /// a flow with its ID exists, replaces its run if `replace` says so
    /// ([`Store::start_flow`]).
    #[allow(clippy::too_many_arguments)]
    fn insert_flow(
        &self,
        tx: &mut impl GenericClient,
        statements: &Statements,
        errors: Errors<'_>,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        let started_at_ms = crate::lifecycle::now_ms();
        let inserted = tx
            .execute(
                &statements.insert_flow,
                &[
                    &flow.flow_id,
                    &flow.flow_type.as_bytes(),
                    &flow.run_id,
                    &started_at_ms,
                ],
            )
            .map_err(errors.doing("creating a flow"))?;
        let mut outcome = StartOutcome::Started;
        let mut added = Vec::new();
        if inserted == 0 {
            let row = tx
                .query_opt(&statements.load_flow, &[&flow.flow_id])
                .map_err(errors.doing("reading a flow"))?;
            let Some(row) = row else {
                return Err(Error::LockConflict(format!(
                    "store {}: flow {:?} was being created by another call; retry",
                    self.location, flow.flow_id
                )));
            };
            let existing = FlowRecord {
                flow_id: flow.flow_id.clone(),
                flow_type: self.text(row.get(0))?,
                run_id: row.get(1),
            };
            let run_state: RunState = row.get(2);
            let Some(more) = replace(&existing, run_state.as_deref())? else {
                return Ok(StartOutcome::AlreadyExists(existing));
            };
            added = more;
            let replaced = tx
                .execute(
                    &statements.replace_run,
                    &[
                        &flow.flow_id,
                        &flow.flow_type.as_bytes(),
                        &flow.run_id,
                        &started_at_ms,
                        &existing.run_id,
                    ],
                )
                .map_err(errors.doing("replacing a flow's run"))?;
            if replaced == 0 {
                return Err(Error::LockConflict(format!(
                    "store {}: the run of flow {:?} was replaced by another call; retry",
                    self.location, flow.flow_id
                )));
            }
            outcome = StartOutcome::Replaced(existing);
        }
        let writes: Vec<Write> = initial
            .iter()
            .chain(&added)
            .map(|(name, json)| (name.clone(), Some(json.clone())))
            .collect();
        self.apply_writes(tx, statements, errors, &flow.flow_id, &writes)?;
        Ok(outcome)
    }

    /// An exclusive RPC in three round trips: BEGIN; one statement that takes the locks,
    /// reads the flow and the values of the names it locks or will read; the writes with
    /// the COMMIT. A read of any other name costs one more.
    fn run_exclusive(
        &self,
        flow_id: &str,
        (locks, reads): Opening<'_>,
        body: &mut RpcBody<'_>,
    ) -> Result<()> {
        let waiting = tracing::debug_span!(crate::metrics::SPAN_LOCK_WAIT, flow_id).entered();
        let _held = self.locks.try_lock_all(flow_id, locks)?;
        let _scope = self.write_scope()?;
        drop(waiting);
        let unread = unlocked_reads(locks, reads);
        self.with_connection(|client, statements, errors, untouched| {
            let mut created_lock_rows = false;
            loop {
                client
                    .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                    .map_err(errors.doing("beginning a transaction"))?;
                untouched.set(false);
                let mut open = OpenTransaction {
                    client: &mut *client,
                    done: false,
                };
                let opening = (locks, unread.as_slice());
                let opened = self.open_member(open.client, statements, errors, flow_id, opening)?;
                let Some((flow, prefetched)) = opened else {
                    drop(open);
                    if created_lock_rows {
                        return Err(Error::storage(format!(
                            "store {}: lock rows of flow {flow_id:?} vanished right after they were created",
                            self.location
                        )));
                    }
                    self.create_lock_rows(client, statements, errors, flow_id, locks)?;
                    created_lock_rows = true;
                    continue;
                };
                let tx = &mut *open.client;
                let writes = body(&mut TxReader::alone(
                    self,
                    tx,
                    (statements, errors),
                    flow,
                    prefetched,
                ))?;
                crate::metrics::timed_commit(1, || {
                    self.write_and_end(
                        open.client,
                        statements,
                        errors,
                        flow_id,
                        &writes,
                        &self.commit_sql,
                        errors.commit(),
                    )
                })?;
                open.done = true;
                return Ok(());
            }
        })
    }

    /// A lock-free RPC without group commit: the body runs on a snapshot, and its writes
    /// commit afterwards in a transaction of their own (last writer wins), only into the
    /// run the body read and only while that run is not stopped.
    fn run_shared(
        &self,
        flow_id: &str,
        ahead: (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<()> {
        let mut seen = None;
        let writes =
            self.read_snapshot(flow_id, ahead, &mut |reader: &mut dyn SnapshotReader| {
                let run_id = reader.flow().run_id.clone();
                let run_state = reader
                    .read(&[RUN_STATE_NAME.to_owned()])?
                    .pop()
                    .map(|(_, state)| state);
                seen = Some((run_id, run_state));
                body(reader)
            })?;
        if writes.is_empty() {
            return Ok(());
        }
        let _scope = self.write_scope()?;
        self.with_connection(|client, statements, errors, untouched| {
            let mut tx = self.begin(
                client,
                errors,
                untouched,
                IsolationLevel::ReadCommitted,
                false,
            )?;
            let now = tx
                .query_opt(&statements.lock_flow, &[&flow_id])
                .map_err(errors.doing("reading a flow"))?
                .map(|row| (row.get::<_, String>(0), row.get::<_, RunState>(1)));
            let Some(now) = now else {
                return Err(Error::FlowNotFound {
                    flow_id: flow_id.to_owned(),
                });
            };
            if seen.as_ref() != Some(&now) {
                return Err(Error::LockConflict(format!(
                    "flow {flow_id:?}: the flow's run was stopped or replaced after this \
                     lock-free RPC read it and before its writes could commit; nothing was \
                     written; retry"
                )));
            }
            self.apply_writes(&mut tx, statements, errors, flow_id, &writes)?;
            crate::metrics::timed_commit(1, || self.commit(tx)).map_err(errors.commit())
        })
    }
}

impl Store for PostgresStore {
    fn start_flow(
        &self,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        if self.options.group_commit {
            // The scope refuses a handler writing to its own store through another lane.
            let _scope = self.write_scope()?;
            return self
                .lane(&flow.flow_id)
                .start_flow(self, flow, initial, replace);
        }
        let _scope = self.write_scope()?;
        self.with_connection(|client, statements, errors, untouched| {
            let mut tx = self.begin(
                client,
                errors,
                untouched,
                IsolationLevel::ReadCommitted,
                false,
            )?;
            let started = self.insert_flow(&mut tx, statements, errors, flow, initial, replace)?;
            if !matches!(started, StartOutcome::AlreadyExists(_)) {
                crate::metrics::timed_commit(1, || self.commit(tx)).map_err(errors.commit())?;
            }
            Ok(started)
        })
    }

    fn run_rpc(&self, flow_id: &str, isolation: &Isolation, body: &mut RpcBody<'_>) -> Result<()> {
        if self.options.group_commit {
            let _scope = self.write_scope()?;
            return self.lane(flow_id).run_rpc(self, flow_id, isolation, body);
        }
        match isolation {
            Isolation::Exclusive { locks, reads, .. } => {
                self.run_exclusive(flow_id, (locks, reads), body)
            }
            Isolation::Shared { reads, maps } => self.run_shared(flow_id, (reads, maps), body),
        }
    }

    /// With group commit, a batch whose calls all fall in one lane runs as one group of that
    /// lane; any other batch runs call by call. Lanes commit in parallel, so a caller
    /// holding calls of many lanes gains from running them on as many threads, and
    /// [`Store::groups_batches`] stays `false`.
    fn run_rpcs(&self, calls: &mut [RpcCall<'_, '_>]) -> Vec<Result<()>> {
        let one_lane = calls.split_first().is_some_and(|(first, rest)| {
            let lane = self.lane(first.flow_id);
            rest.iter()
                .all(|call| std::ptr::eq(self.lane(call.flow_id), lane))
        });
        if self.options.group_commit && one_lane {
            let _scope = match self.write_scope() {
                Ok(scope) => scope,
                Err(error) => return calls.iter().map(|_| Err(error.clone())).collect(),
            };
            return self.lane(calls[0].flow_id).run_rpcs(self, calls);
        }
        super::run_each(self, calls)
    }

    fn flow(&self, flow_id: &str) -> Result<Option<FlowRecord>> {
        self.read_one(|client, statements, errors| {
            Ok(self
                .load_flow(client, statements, errors, flow_id)?
                .map(|(flow, _)| flow))
        })
    }

    fn started_at_ms(&self, flow_id: &str) -> Result<Option<i64>> {
        self.read_one(|client, statements, errors| {
            let row = client
                .query_opt(&statements.load_flow, &[&flow_id])
                .map_err(errors.doing("reading when a flow started"))?;
            Ok(row.map(|row| row.get(3)))
        })
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn watch_changes(&self) -> Result<Option<Box<dyn super::ChangeWatch>>> {
        if !self.options.notify {
            return Ok(None);
        }
        let watch = notify::PostgresChangeWatch::open(
            self.pool.clone(),
            &self.options.schema,
            &self.location,
        )?;
        Ok(Some(Box::new(watch)))
    }

    fn list_flows(&self) -> Result<Vec<FlowRecord>> {
        self.read_one(|client, _, errors| {
            let rows = client
                .query(
                    "SELECT flow_id, flow_type, run_id FROM flows ORDER BY flow_id",
                    &[],
                )
                .map_err(errors.doing("listing flows"))?;
            rows.into_iter()
                .map(|row| {
                    Ok(FlowRecord {
                        flow_id: row.get(0),
                        flow_type: self.text(row.get(1))?,
                        run_id: row.get(2),
                    })
                })
                .collect()
        })
    }

    fn stored_values(&self, flow_id: &str) -> Result<Vec<(String, String)>> {
        self.read_one(|client, _, errors| {
            // The run state, kept in the flow's row, is listed as the value it is.
            let rows = client
                .query(
                    "SELECT name, value FROM (
                         SELECT name, value FROM attribute_values WHERE flow_id = $1
                         UNION ALL
                         SELECT $2::bytea, closed_run FROM flows
                         WHERE flow_id = $1 AND closed_run IS NOT NULL
                     ) v ORDER BY name",
                    &[&flow_id, &RUN_STATE_NAME.as_bytes()],
                )
                .map_err(errors.doing("listing stored values"))?;
            rows.into_iter()
                .map(|row| Ok((self.text(row.get(0))?, row.get(1))))
                .collect()
        })
    }
}

/// Values read ahead in an RPC's snapshot, by name (`None`: no value stored).
type Prefetched = HashMap<String, Option<String>>;

/// The values of `names` that `prefetched` holds, and the names it does not know (a name
/// known absent is in neither).
fn look_up(prefetched: &Prefetched, names: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        match prefetched.get(name) {
            Some(Some(value)) => found.push((name.clone(), value.clone())),
            Some(None) => {}
            None => missing.push(name.clone()),
        }
    }
    (found, missing)
}

/// The instances of AttributeMaps read ahead whole (names and values, in name order), by
/// map.
type AheadMaps = HashMap<String, Vec<(String, String)>>;

/// The run state of a flow as its row holds it (a closed run, or the ID of a run that
/// replaced another; `None`: a first run, running): the core's value [`RUN_STATE_NAME`],
/// which this store keeps in the flow's row (schema version 3; the column is named
/// `closed_run` after what it first held).
type RunState = Option<String>;

/// What an RPC's opening statement reads ahead: its locks, none found yet, and the flow's
/// run state, read with the flow's row.
fn prefetch_slots(locks: &[String], run_state: RunState) -> Prefetched {
    locks
        .iter()
        .map(|name| (name.clone(), None))
        .chain([(RUN_STATE_NAME.to_owned(), run_state)])
        .collect()
}

struct TxReader<'a, C: GenericClient> {
    store: &'a PostgresStore,
    tx: &'a mut C,
    statements: &'a Statements,
    errors: Errors<'a>,
    flow: FlowRecord,
    /// Values read ahead in the same snapshot, and in a group those read since.
    prefetched: Prefetched,
    /// AttributeMaps read ahead whole in the same snapshot, each answered once (a body
    /// reads its maps before it writes).
    maps: AheadMaps,
    /// A group's statements not sent yet (earlier members' writes), which go before this
    /// reader's first query.
    unsent: Option<&'a mut Unsent>,
}

impl<'a, C: GenericClient> TxReader<'a, C> {
    /// A reader of one call's transaction on `tx`, outside any group.
    fn alone(
        store: &'a PostgresStore,
        tx: &'a mut C,
        (statements, errors): (&'a Statements, Errors<'a>),
        flow: FlowRecord,
        prefetched: Prefetched,
    ) -> Self {
        TxReader {
            store,
            tx,
            statements,
            errors,
            flow,
            prefetched,
            maps: AheadMaps::new(),
            unsent: None,
        }
    }

    /// This reader, answering the maps of `maps` from what was read ahead.
    fn with_maps(self, maps: AheadMaps) -> Self {
        TxReader { maps, ..self }
    }

    /// Sends the group's statements still waiting, so that a query sees their writes.
    fn send_unsent(&mut self) -> Result<()> {
        let batch = self.unsent.as_deref_mut().and_then(|u| u.take_batch(None));
        if let Some(batch) = batch {
            self.tx
                .batch_execute(&batch)
                .map_err(self.errors.doing("writing values"))?;
        }
        Ok(())
    }

    /// In a group: the statements still waiting, then `query` (an `EXECUTE` of
    /// `attrflow_values` or `attrflow_range`, answering one row per value: its name in hex,
    /// the value), in one simple-query round trip; the names and values. `None` outside a
    /// group, or without a `query` (a NUL in the flow ID, which a simple query cannot
    /// carry): the caller then sends what waits and reads with a prepared statement.
    fn read_behind_unsent(
        &mut self,
        query: Option<String>,
        doing: &'static str,
    ) -> Result<Option<Vec<(String, String)>>> {
        let (Some(unsent), Some(query)) = (self.unsent.as_deref_mut(), query) else {
            return Ok(None);
        };
        let batch = unsent
            .take_batch(Some(&query))
            .unwrap_or_else(|| query.clone());
        // A failure may lie in the writes that waited as well as in the read.
        let doing = if batch.len() > query.len() {
            format!("writing values, then {doing}")
        } else {
            doing.to_owned()
        };
        let messages = self
            .tx
            .simple_query(&batch)
            .map_err(self.errors.doing(&doing))?;
        self.store
            .named_values(&self.flow.flow_id, &rows_of(&messages))
            .map(Some)
    }
}

impl<C: GenericClient> SnapshotReader for TxReader<'_, C> {
    fn flow(&self) -> &FlowRecord {
        &self.flow
    }

    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>> {
        let (mut found, missing) = look_up(&self.prefetched, physical_names);
        if missing.is_empty() {
            return Ok(found);
        }
        let query = execute_on_flow("attrflow_values", &self.flow.flow_id, &[&missing]);
        let read = match self.read_behind_unsent(query, "reading values")? {
            Some(read) => read,
            None => {
                self.send_unsent()?;
                let rows = self
                    .tx
                    .query(
                        &self.statements.read_values,
                        &[&self.flow.flow_id, &as_bytes(&missing)],
                    )
                    .map_err(self.errors.doing("reading values"))?;
                rows.into_iter()
                    .map(|row| Ok((self.store.text(row.get(0))?, row.get(1))))
                    .collect::<Result<Vec<_>>>()?
            }
        };
        if self.unsent.is_some() {
            // Kept with the values read ahead: a group remembers what its members read.
            for name in missing {
                self.prefetched.insert(name, None);
            }
            for (name, value) in &read {
                self.prefetched.insert(name.clone(), Some(value.clone()));
            }
        }
        found.extend(read);
        Ok(found)
    }

    fn read_map(&mut self, map: &str) -> Result<Vec<(String, String)>> {
        if let Some(instances) = self.maps.remove(map) {
            return Ok(instances);
        }
        let query = execute_range(&self.flow.flow_id, map);
        if let Some(read) = self.read_behind_unsent(query, "reading a map")? {
            return Ok(read);
        }
        let (from, to) = crate::store::map_name_range(map);
        self.send_unsent()?;
        let rows = self
            .tx
            .query(
                &self.statements.read_range,
                &[&self.flow.flow_id, &from.as_bytes(), &to.as_bytes()],
            )
            .map_err(self.errors.doing("reading a map"))?;
        rows.into_iter()
            .map(|row| Ok((self.store.text(row.get(0))?, row.get(1))))
            .collect()
    }
}

/// A transaction begun with a plain BEGIN; rolled back when dropped before it is done.
struct OpenTransaction<'c> {
    client: &'c mut postgres::Client,
    done: bool,
}

impl Drop for OpenTransaction<'_> {
    fn drop(&mut self) {
        if !self.done && !self.client.is_closed() {
            // A failure here leaves the connection broken, and the pool drops it.
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

/// The writes of an RPC and `end` (its COMMIT, or the release of its savepoint) as one
/// simple-query batch of literals, or `None` when some text holds a NUL character. Each
/// write is an `EXECUTE` of a statement every connection prepared (`attrflow_put`,
/// `attrflow_drop`), so the server plans none of them again. Names go as hex `bytea`, text
/// in standard conforming quotes (the session sets `standard_conforming_strings`).
fn end_batch(flow_id: &str, writes: &[Write], end: &str) -> Option<String> {
    if carries_nul(flow_id, writes) {
        return None;
    }
    let flow = quote(flow_id);
    let mut batch = String::new();
    for (name, value) in writes {
        push_write(&mut batch, &flow, name, value.as_deref());
        batch.push(';');
    }
    batch.push_str(end);
    Some(batch)
}

/// Whether the flow ID or some write holds a NUL character, which a simple query cannot
/// carry.
fn carries_nul(flow_id: &str, writes: &[Write]) -> bool {
    let has_nul = |text: &str| text.contains('\0');
    has_nul(flow_id)
        || writes
            .iter()
            .any(|(name, value)| has_nul(name) || value.as_deref().is_some_and(has_nul))
}

/// Appends one write of flow `flow` (already quoted) to `batch` as an `EXECUTE` of the
/// statement every connection prepared for it, without a closing semicolon.
fn push_write(batch: &mut String, flow: &str, name: &str, value: Option<&str>) {
    use std::fmt::Write as _;
    // Writing to a String cannot fail.
    let _ = match value {
        Some(json) if name == RUN_STATE_NAME => {
            write!(batch, "EXECUTE attrflow_close({flow}, {})", quote(json))
        }
        None if name == RUN_STATE_NAME => write!(batch, "EXECUTE attrflow_close({flow}, NULL)"),
        Some(json) => write!(
            batch,
            "EXECUTE attrflow_put({flow}, {}, {})",
            bytea(name),
            quote(json)
        ),
        None => write!(batch, "EXECUTE attrflow_drop({flow}, {})", bytea(name)),
    };
}

/// The error of an RPC's opening statement: a lock row another transaction holds is a lock
/// conflict naming the keys.
fn open_error(
    errors: Errors<'_>,
    flow_id: &str,
    locks: &[String],
    error: postgres::Error,
) -> Error {
    match error.code() {
        Some(code) if *code == postgres::error::SqlState::LOCK_NOT_AVAILABLE => {
            Error::LockConflict(format!(
                "one or more attribute keys are locked: flow {flow_id:?}, {}",
                locks.join(", ")
            ))
        }
        _ => errors.doing("taking locks")(error),
    }
}

/// The bytes of a hex string (as `encode(…, 'hex')` writes them); `None` if it is not one.
fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect()
}

/// The names of `reads` an opening statement reads besides `locks`: neither the run state,
/// which the flow's row holds, nor a locked name, whose value is read with its lock.
fn unlocked_reads(locks: &[String], reads: &[String]) -> Vec<String> {
    reads
        .iter()
        .filter(|name| *name != RUN_STATE_NAME && !locks.contains(name))
        .cloned()
        .collect()
}

/// The rows of a simple-query batch's answers, every statement's in order.
fn rows_of(messages: &[SimpleQueryMessage]) -> Vec<&SimpleQueryRow> {
    messages
        .iter()
        .filter_map(|message| match message {
            SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .collect()
}

/// The rows each statement of a simple-query batch answered, one list per statement in
/// order, then an empty one (a statement that answers no rows has an empty list too).
fn answers_by_statement(messages: &[SimpleQueryMessage]) -> Vec<Vec<&SimpleQueryRow>> {
    let mut answers = vec![Vec::new()];
    for message in messages {
        match message {
            SimpleQueryMessage::CommandComplete(_) => answers.push(Vec::new()),
            SimpleQueryMessage::Row(row) => {
                if let Some(last) = answers.last_mut() {
                    last.push(row);
                }
            }
            _ => {}
        }
    }
    answers
}

/// `EXECUTE prepared('flow_id', ARRAY[…]::bytea[], …)`, one array of names as hex `bytea`
/// per list; `None` when the flow ID holds a NUL character, which a simple query cannot
/// carry.
fn execute_on_flow(prepared: &str, flow_id: &str, lists: &[&[String]]) -> Option<String> {
    if flow_id.contains('\0') {
        return None;
    }
    let mut sql = format!("EXECUTE {prepared}({}", quote(flow_id));
    for names in lists {
        let names: Vec<String> = names.iter().map(|name| bytea(name)).collect();
        sql.push_str(&format!(", ARRAY[{}]::bytea[]", names.join(", ")));
    }
    sql.push(')');
    Some(sql)
}

/// `EXECUTE attrflow_range(…)` of the instances of `map` in the flow `flow_id` (one row per
/// instance: its name in hex, its value, in name order); `None` when the flow ID holds a NUL
/// character, which a simple query cannot carry.
fn execute_range(flow_id: &str, map: &str) -> Option<String> {
    if flow_id.contains('\0') {
        return None;
    }
    let (from, to) = crate::store::map_name_range(map);
    Some(format!(
        "EXECUTE attrflow_range({}, {}, {})",
        quote(flow_id),
        bytea(&from),
        bytea(&to)
    ))
}

/// `text` as an SQL string literal (standard conforming strings).
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `name` as a hex `bytea` literal.
fn bytea(name: &str) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("'\\x{hex}'::bytea")
}

/// Names as the byte strings the tables hold.
fn as_bytes(names: &[String]) -> Vec<&[u8]> {
    names.iter().map(|name| name.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commit_batch_quotes_every_text_and_refuses_a_nul() {
        let writes = vec![
            ("a'b".to_owned(), Some(r#"{"x":"it's \\ here"}"#.to_owned())),
            ("gone".to_owned(), None),
        ];
        let batch = end_batch("f'1", &writes, "COMMIT").unwrap();
        assert_eq!(
            batch,
            "EXECUTE attrflow_put('f''1', '\\x612762'::bytea, '{\"x\":\"it''s \\\\ here\"}');\
             EXECUTE attrflow_drop('f''1', '\\x676f6e65'::bytea);COMMIT"
        );
        assert_eq!(end_batch("f\0", &writes, "COMMIT"), None);
        assert_eq!(end_batch("f", &[("n\0".to_owned(), None)], "COMMIT"), None);
    }

    /// Fails unless PostgreSQL tests are asked for (`ATTRFLOW_TEST_BACKEND=postgres` and a
    /// server, as scripts/test.sh runs them): the server's URL.
    fn test_server_url() -> String {
        assert_eq!(
            std::env::var("ATTRFLOW_TEST_BACKEND").as_deref(),
            Ok("postgres"),
            "a PostgreSQL-only test: run it with ATTRFLOW_TEST_BACKEND=postgres and a server \
             (scripts/postgres.sh), as scripts/test.sh does"
        );
        std::env::var("ATTRFLOW_TEST_POSTGRES_URL").expect("ATTRFLOW_TEST_POSTGRES_URL")
    }

    #[test]
    #[ignore = "PostgreSQL only"]
    fn a_connections_statements_keep_one_generic_plan_whatever_their_first_calls() {
        let base = test_server_url();
        let separator = if base.contains('?') { '&' } else { '?' };
        let url = format!(
            "{base}{separator}schema=generic_plans_{}",
            std::process::id()
        );
        let store = PostgresStore::open(&url).expect("the store opens");
        let mut pooled = store.pool.get().expect("a connection");
        let conn = pooled.get().expect("the connection");
        // One flow's calls, as 16 threads on one archive make them, then others'.
        for n in 0..20 {
            let flow = if n < 10 {
                "one".to_owned()
            } else {
                format!("flow-{n}")
            };
            conn.client
                .simple_query(&format!(
                    "BEGIN; EXECUTE attrflow_open('{flow}', ARRAY['\\x6e'::bytea]); \
                     EXECUTE attrflow_open_reading('{flow}', ARRAY['\\x6e'::bytea], \
                     ARRAY['\\x77'::bytea]); ROLLBACK; \
                     EXECUTE attrflow_peek('{flow}', ARRAY['\\x6e'::bytea, '\\x77'::bytea]); \
                     EXECUTE attrflow_values('{flow}', ARRAY['\\x6e'::bytea]); \
                     EXECUTE attrflow_range('{flow}', '\\x6d2f'::bytea, '\\x6d30'::bytea)"
                ))
                .expect("the opening statements run");
            let names: &[&[u8]] = &[b"n"];
            conn.client
                .query(&conn.statements.read_values, &[&flow, &names])
                .expect("the values are read");
        }
        let plans: Vec<(String, i64, i64)> = conn
            .client
            .query(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
                 WHERE generic_plans + custom_plans > 0
                   AND statement NOT LIKE '%pg_prepared_statements%'",
                &[],
            )
            .expect("the session's prepared statements")
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect();
        // Planned per call, each of the six (the two openings, the peek, a group's two
        // reads and the read of values) would have custom plans.
        assert_eq!(plans.len(), 6, "{plans:?}");
        assert!(
            plans
                .iter()
                .all(|&(_, generic, custom)| generic == 20 && custom == 0),
            "{plans:?}"
        );
    }

    #[test]
    fn a_multi_host_url_names_every_node_and_asks_for_the_primary() {
        let url = ConnectionUrl::new(
            "postgresql://app@db1:5432,db2:5433/app?target_session_attrs=read-write\
             &sslmode=verify-full&sslrootcert=/ca.pem",
        );
        let config = url.config().unwrap();
        assert_eq!(config.get_hosts().len(), 2);
        assert_eq!(config.get_ports(), [5432, 5433]);
        assert_eq!(
            config.get_target_session_attrs(),
            postgres::config::TargetSessionAttrs::ReadWrite
        );
        assert_eq!(config.get_ssl_mode(), postgres::config::SslMode::Require);
        let crate::store::StoreUrl::Postgres { options, .. } = crate::store::StoreUrl::parse(
            "postgresql://app@db1:5432,db2:5433/app?sslmode=verify-ca",
        )
        .unwrap() else {
            panic!("a PostgreSQL URL")
        };
        assert_eq!(options.ssl_mode, SslMode::VerifyCa);
    }
}
