//! The storage contract. A backend keeps flows and their values (JSON text, one row per
//! flow ID and physical name), takes fail-fast locks, and commits one RPC's writes
//! atomically, many RPCs per COMMIT through the group-commit pipeline
//! ([`group_commit`]). The rest of core never sees SQL.

pub mod fault;
pub mod group_commit;
mod lock_table;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod sqlite;
mod url;

pub use group_commit::{GroupBackend, GroupCommit, GroupLimits, GroupStats};
pub use lock_table::{LockGuard, LockTable};
#[cfg(feature = "postgres")]
pub use postgres::{
    ConnectionUrl, PostgresOptions, PostgresStore, SslMode, COMMIT_OUTCOME_UNKNOWN,
};
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
pub use url::{open_store, StoreUrl, MAX_COMMIT_DELAY, MAX_URL_TIMEOUT};

use crate::error::Result;

/// A flow as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowRecord {
    /// The flow's ID.
    pub flow_id: String,
    /// The registered flow type it runs.
    pub flow_type: String,
    /// The ID of its run.
    pub run_id: String,
}

/// The outcome of [`Store::start_flow`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartOutcome {
    /// The flow was created with its initial values.
    Started,
    /// A flow with this ID existed and the start replaced its run: the record given
    /// (the previous run's) and every value of it are gone, and the new run holds its
    /// initial values only.
    Replaced(FlowRecord),
    /// A flow with this ID already exists and was kept; nothing was written.
    AlreadyExists(FlowRecord),
}

/// Says whether [`Store::start_flow`] replaces the existing run of the flow, given its
/// record and its stored run state (the value of [`crate::lifecycle::RUN_STATE_NAME`], if
/// any), both read in the start's transaction: `None` keeps it, `Some` replaces it and
/// lists the values written beyond the initial ones. An error fails the start; nothing is
/// written.
pub type ReplaceRun<'a> =
    dyn Fn(&FlowRecord, Option<&str>) -> Result<Option<Vec<(String, String)>>> + Sync + 'a;

/// How an RPC call is isolated from other writers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// Take these physical names as fail-fast locks (sorted, deduplicated; possibly empty),
    /// read the snapshot and commit the writes in one exclusive transaction.
    Exclusive {
        /// Physical names to lock.
        locks: Vec<String>,
        /// Physical names the body will read first, locked or not, as the runtime planned
        /// the call: a store may read them with the flow as it takes the locks (PostgreSQL
        /// does, to save round trips). Only a hint, as for [`Isolation::Shared`].
        reads: Vec<String>,
        /// The AttributeMaps the body will load whole ([`SnapshotReader::read_map`]), as
        /// planned: a store may read them as it takes the locks (PostgreSQL does when the
        /// opening goes to the server). Only a hint, as `reads` is.
        maps: Vec<String>,
    },
    /// Read a snapshot of committed state without locks; commit any writes afterwards,
    /// only if every value read is unchanged by then (otherwise a retryable
    /// [`crate::Error::LockConflict`]), so no update is silently overwritten.
    Shared {
        /// Physical names the body will read first, as the runtime planned the call: a store
        /// may read them together with the flow, in the same snapshot (PostgreSQL does, to
        /// save round trips). Only a hint: the body may read other names too, and absent
        /// ones are left out as in any read.
        reads: Vec<String>,
        /// The AttributeMaps the body will load whole ([`SnapshotReader::read_map`]), as
        /// planned: a store may read them in the same snapshot before the body asks
        /// (PostgreSQL does). Only a hint, as `reads` is.
        maps: Vec<String>,
    },
}

/// One staged write: a JSON text, or `None` to delete.
pub type Write = (String, Option<String>);

/// Reads values inside one RPC's transaction.
pub trait SnapshotReader {
    /// The flow the RPC runs on.
    fn flow(&self) -> &FlowRecord;
    /// The stored JSON text of each name that holds a value; absent names are left out.
    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>>;
    /// Every instance of the AttributeMap `map` that holds a value: its physical name
    /// (`<map>/<instance>`) and stored JSON text, in name order (by bytes).
    fn read_map(&mut self, map: &str) -> Result<Vec<(String, String)>>;
}

/// The bounds of the physical names of `map`'s instances, by bytes: from `<map>/`
/// (included) to `<map>0` (excluded), `0` being the character after `/`.
pub(crate) fn map_name_range(map: &str) -> (String, String) {
    (format!("{map}/"), format!("{map}0"))
}

/// The body of one RPC call: reads the snapshot, runs the handler, returns the writes. It is
/// `Send`: the store may run it on another caller's thread (see [`group_commit`]).
pub type RpcBody<'a> = dyn FnMut(&mut dyn SnapshotReader) -> Result<Vec<Write>> + Send + 'a;

/// One RPC of a batch handed to [`Store::run_rpcs`]: what [`Store::run_rpc`] takes.
pub struct RpcCall<'c, 'b> {
    /// The flow the RPC runs on.
    pub flow_id: &'c str,
    /// How it is isolated from other writers.
    pub isolation: &'c Isolation,
    /// Its body.
    pub body: &'c mut RpcBody<'b>,
}

/// Notices commits made to a store through other connections (other runtimes, other
/// processes) more cheaply than reading again: a reader waiting for new records
/// ([`crate::chunked_log::tail`]) checks it between pauses and reads again only when it
/// reports a change.
pub trait ChangeWatch: Send {
    /// Whether a commit through another connection may have happened since the watch was
    /// made or last returned `true`. Never misses a commit; may report one that changed
    /// nothing the reader wants.
    fn changed(&mut self) -> Result<bool>;
}

/// A place flows live: an SQLite file, a PostgreSQL database.
pub trait Store: Send + Sync + 'static {
    /// Creates the flow and writes its initial values in one transaction. When a flow with
    /// this ID exists, `replace` decides: the existing run's record and values are replaced
    /// in that transaction by the new run's, its initial values and the values `replace`
    /// adds (the run state, which differs from every earlier one, so that every reader and
    /// process sees the new run at once), or nothing is written.
    fn start_flow(
        &self,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome>;

    /// Runs one RPC: takes the locks, hands the body a reader on the flow, and commits the
    /// writes it returns. Fails with [`crate::Error::FlowNotFound`] for an unknown flow ID,
    /// [`crate::Error::LockConflict`] when a lock is held; writes nothing when the body
    /// fails. Locks are released on every path.
    fn run_rpc(&self, flow_id: &str, isolation: &Isolation, body: &mut RpcBody<'_>) -> Result<()>;

    /// Runs independent RPCs (of any flows, from different callers) as [`Store::run_rpc`]
    /// would run each, and returns their results in order. A store that groups commits runs
    /// them as members of one group where it can (one thread, one COMMIT, no hand-off
    /// between them); the default runs them one after another.
    fn run_rpcs(&self, calls: &mut [RpcCall<'_, '_>]) -> Vec<Result<()>> {
        run_each(self, calls)
    }

    /// Whether [`Store::run_rpcs`] runs a batch as one group: a caller holding several
    /// calls at once (a binding's worker thread taking every queued call) then hands them
    /// over together; otherwise it gains more from running them on threads of their own.
    fn groups_batches(&self) -> bool {
        false
    }

    /// Whether a lock-free read runs in this process against local files, on a snapshot
    /// that waits for no writer, server or other call (an embedded store): a caller that
    /// must not wait may then run one itself ([`crate::Runtime::reads_in_place`]).
    fn reads_without_waiting(&self) -> bool {
        false
    }

    /// The flow with this ID, if it exists.
    fn flow(&self, flow_id: &str) -> Result<Option<FlowRecord>>;

    /// When the flow with this ID was started, in milliseconds since the Unix epoch, if it
    /// exists (read-only; for [`crate::Runtime::describe_flow`]).
    fn started_at_ms(&self, flow_id: &str) -> Result<Option<i64>>;

    /// Where the store lives, for messages (a path or a URL without credentials).
    fn location(&self) -> String;

    /// Every flow, by flow ID (read-only; for inspection tools). A backend that cannot list
    /// refuses with a storage error.
    fn list_flows(&self) -> Result<Vec<FlowRecord>> {
        Err(crate::error::Error::storage(format!(
            "store {} cannot list its flows",
            self.location()
        )))
    }

    /// Every stored value of the flow `flow_id`, as (physical name, JSON text), by name
    /// (read-only; for inspection tools).
    fn stored_values(&self, flow_id: &str) -> Result<Vec<(String, String)>> {
        Err(crate::error::Error::storage(format!(
            "store {} cannot list the values of flow {flow_id:?}",
            self.location()
        )))
    }

    /// A watch of commits made to this store through other connections, or `None` when the
    /// backend has none (a waiting reader then reads again after every pause). SQLite
    /// compares `PRAGMA data_version` on a connection of the watch's own. PostgreSQL has
    /// one with `notify=on` only: its writers then send a `NOTIFY` before each `COMMIT`
    /// (once per group) and the watch `LISTEN`s on a connection of its own; off (the
    /// default), none, since PostgreSQL holds a database-wide lock from a notifying commit
    /// to the end of its WAL flush, serializing the commits of every flow.
    fn watch_changes(&self) -> Result<Option<Box<dyn ChangeWatch>>> {
        Ok(None)
    }

    /// The backend's own consistency check of its files: `None` when it finds nothing
    /// wrong (or has no such check), else its first complaint. SQLite runs
    /// `PRAGMA integrity_check`.
    fn integrity_problem(&self) -> Result<Option<String>> {
        Ok(None)
    }
}

/// Runs `calls` one after another through [`Store::run_rpc`]: what a store that does not
/// group a batch does with one.
pub(crate) fn run_each<S: Store + ?Sized>(
    store: &S,
    calls: &mut [RpcCall<'_, '_>],
) -> Vec<Result<()>> {
    calls
        .iter_mut()
        .map(|call| store.run_rpc(call.flow_id, call.isolation, call.body))
        .collect()
}
