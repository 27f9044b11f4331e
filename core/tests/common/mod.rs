//! Helpers shared by the integration tests: a fresh store of the backend under test (an
//! SQLite file, or a PostgreSQL schema), the subscriber names of the Dex scenarios,
//! retry-on-conflict loops, direct reads of the database, and a checkpoint that parks a
//! handler (with its locks held) until the test lets it go.
//!
//! Every test file compiles this module as its own copy and uses only part of it.
#![allow(dead_code)]

pub mod invariants;
pub mod seeded_rng;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use attrflow::flows::chunked_subscriber::{
    self, Subscriber, SubscriberArchive, SubscriberPage, FLOW_ID,
};
use attrflow::retry::RetryPolicy;
use attrflow::store::{
    FlowRecord, GroupStats, PostgresStore, SqliteOptions, SqliteStore, Store, StoreUrl, Synchronous,
};
use attrflow::{Error, Result, RpcInvokeOptions, Runtime};
use serde_json::{json, Value};
use tempfile::TempDir;

/// How often a test call may meet a lock conflict before the test gives up. With the
/// pauses of [`retry_lock_conflicts`] that is minutes of conflicts, far beyond what any
/// scenario here needs: reaching it means a lock was never released.
pub const MAX_CONFLICTS: u32 = 100_000;

/// The core's retry policy, patient enough for every scenario here: [`MAX_CONFLICTS`]
/// attempts, pauses below 1 µs doubling to 2 ms (about a millisecond each once the bound
/// is reached, so a slow disk cannot make a waiting thread run out of tries), ten minutes.
pub fn patient_retry() -> RetryPolicy {
    RetryPolicy::new(
        MAX_CONFLICTS,
        Duration::from_micros(1),
        Duration::from_millis(2),
        Duration::from_secs(600),
    )
    .expect("a valid policy")
}

/// The backend the tests run on: SQLite unless `ATTRFLOW_TEST_BACKEND=postgres`, which
/// runs every test that opens its store through [`TestStore`] against the PostgreSQL
/// server named by `ATTRFLOW_TEST_POSTGRES_URL` (each store in a fresh schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A fresh SQLite file in a temporary folder.
    Sqlite,
    /// A fresh schema in the test PostgreSQL database.
    Postgres,
}

impl Backend {
    /// The backend chosen for this test run. An unknown name, or `postgres` without a
    /// server URL, fails the test instead of quietly testing SQLite again.
    pub fn under_test() -> Self {
        match std::env::var(BACKEND_ENV).as_deref() {
            Err(_) | Ok("") | Ok("sqlite") => Backend::Sqlite,
            Ok("postgres") => Backend::Postgres,
            Ok(other) => panic!("{BACKEND_ENV}={other:?}: expected sqlite or postgres"),
        }
    }
}

/// Selects the backend of [`Backend::under_test`].
pub const BACKEND_ENV: &str = "ATTRFLOW_TEST_BACKEND";
/// The PostgreSQL database the `postgres` backend creates its schemas in.
pub const POSTGRES_URL_ENV: &str = "ATTRFLOW_TEST_POSTGRES_URL";

fn postgres_base_url() -> String {
    std::env::var(POSTGRES_URL_ENV).unwrap_or_else(|_| {
        panic!(
            "{BACKEND_ENV}=postgres needs {POSTGRES_URL_ENV} (scripts/postgres.sh starts a server and sets it)"
        )
    })
}

/// The store of a [`TestStore`], typed, so tests can ask it how many locks are held.
#[derive(Debug, Clone)]
pub enum OpenedStore {
    /// An SQLite store.
    Sqlite(Arc<SqliteStore>),
    /// A PostgreSQL store.
    Postgres(Arc<PostgresStore>),
}

impl OpenedStore {
    /// Opens the store a test store URL names.
    pub fn open(url: &str) -> Self {
        match StoreUrl::parse(url).expect("a valid test store URL") {
            StoreUrl::Sqlite { path, options } => OpenedStore::Sqlite(Arc::new(
                SqliteStore::open_with(path, options).expect("open the store"),
            )),
            StoreUrl::Postgres { url, options } => OpenedStore::Postgres(Arc::new(
                PostgresStore::open_with(&url, options).expect("open the store"),
            )),
        }
    }

    /// The store as the runtime takes it.
    pub fn as_store(&self) -> Arc<dyn Store> {
        match self {
            OpenedStore::Sqlite(store) => store.clone(),
            OpenedStore::Postgres(store) => store.clone(),
        }
    }

    /// Locks held on this store in this process now.
    pub fn held_lock_count(&self) -> usize {
        match self {
            OpenedStore::Sqlite(store) => store.held_lock_count(),
            OpenedStore::Postgres(store) => store.held_lock_count(),
        }
    }

    /// Groups committed through this store so far, the calls they held, and the callers
    /// waiting for a turn now.
    pub fn group_stats(&self) -> GroupStats {
        match self {
            OpenedStore::Sqlite(store) => store.group_stats(),
            OpenedStore::Postgres(store) => store.group_stats(),
        }
    }

    /// The faults injected into this store's commits.
    #[cfg(feature = "fault-injection")]
    pub fn faults(&self) -> &attrflow::store::fault::FaultPlan {
        match self {
            OpenedStore::Sqlite(store) => store.faults(),
            OpenedStore::Postgres(store) => store.faults(),
        }
    }

    /// The flow with this ID, if it was started.
    pub fn flow(&self, flow_id: &str) -> Result<Option<FlowRecord>> {
        self.as_store().flow(flow_id)
    }

    /// The SQLite store, for tests of SQLite itself (opened with [`TestStore::sqlite`] or
    /// [`TestStore::sqlite_fast`]).
    pub fn sqlite(&self) -> &Arc<SqliteStore> {
        match self {
            OpenedStore::Sqlite(store) => store,
            OpenedStore::Postgres(_) => {
                panic!("an SQLite-only test opened its store with TestStore::new or ::fast")
            }
        }
    }
}

/// Where a test store lives; removed when the [`TestStore`] is dropped.
enum Place {
    /// A temporary folder holding the SQLite file.
    Folder(TempDir),
    /// A schema of its own in the test database.
    Schema { base_url: String, schema: String },
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Place::Schema { base_url, schema } = self {
            if let Ok(mut client) = postgres::Client::connect(base_url, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
            }
        }
    }
}

/// A runtime over a fresh store of the backend under test ([`Backend::under_test`]) that
/// lives as long as this: a new SQLite file in a temporary folder, or a new schema in the
/// test PostgreSQL database.
pub struct TestStore {
    /// The store URL that opens this store, as a front end or a child process would.
    pub url: String,
    /// The SQLite file (meaningful on the SQLite backend only).
    pub path: PathBuf,
    /// The store.
    pub store: OpenedStore,
    /// The runtime over `store`, with the built-in flow types registered.
    pub runtime: Runtime,
    /// Dropped last, removing the folder or the schema.
    place: Place,
}

impl TestStore {
    /// A store with the default (fully synchronous) options.
    pub fn new() -> Self {
        Self::with_options(SqliteOptions::default())
    }

    /// A store that skips the fsync at each commit on SQLite. For tests that append many
    /// records and assert nothing about power loss.
    pub fn fast() -> Self {
        Self::with_options(SqliteOptions {
            synchronous: Synchronous::Normal,
            ..SqliteOptions::default()
        })
    }

    /// [`TestStore::fast`] with `parameters` added to the store URL on the PostgreSQL
    /// backend (`group_lanes=1`, say); the SQLite backend ignores them.
    pub fn fast_with_postgres_parameters(parameters: &str) -> Self {
        match Backend::under_test() {
            Backend::Sqlite => Self::fast(),
            Backend::Postgres => Self::postgres_with(parameters),
        }
    }

    /// [`TestStore::fast`] with `parameters` added to its store URL on either backend (group
    /// bounds, say); on PostgreSQL with `group_lanes=1` too, so that calls on different flows
    /// share groups there as they do on SQLite.
    pub fn fast_with_url_parameters(parameters: &str) -> Self {
        match Backend::under_test() {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("create a temporary folder");
                let path = dir.path().join("attrflow.db");
                let url = format!("sqlite:{}?synchronous=normal&{parameters}", path.display());
                Self::open_in(url, path, Place::Folder(dir))
            }
            Backend::Postgres => Self::postgres_with(&format!("group_lanes=1&{parameters}")),
        }
    }

    /// A store with the given SQLite options (used by the SQLite backend only).
    pub fn with_options(options: SqliteOptions) -> Self {
        match Backend::under_test() {
            Backend::Sqlite => Self::sqlite_with(options),
            Backend::Postgres => Self::postgres(),
        }
    }

    /// An SQLite store whatever the backend under test, for tests of SQLite itself.
    pub fn sqlite() -> Self {
        Self::sqlite_with(SqliteOptions::default())
    }

    /// [`TestStore::sqlite`] without the fsync at each commit, for SQLite-only tests that
    /// append many records and assert nothing about power loss.
    pub fn sqlite_fast() -> Self {
        Self::sqlite_with(SqliteOptions {
            synchronous: Synchronous::Normal,
            ..SqliteOptions::default()
        })
    }

    fn sqlite_with(options: SqliteOptions) -> Self {
        let dir = tempfile::tempdir().expect("create a temporary folder");
        let path = dir.path().join("attrflow.db");
        let url = format!(
            "sqlite:{}?synchronous={}&busy_timeout_ms={}",
            path.display(),
            match options.synchronous {
                Synchronous::Full => "full",
                Synchronous::Normal => "normal",
            },
            options.busy_timeout.as_millis()
        );
        Self::open_in(url, path, Place::Folder(dir))
    }

    fn postgres() -> Self {
        Self::postgres_with("")
    }

    fn postgres_with(parameters: &str) -> Self {
        let base_url = postgres_base_url();
        let schema = format!("test_{}", uuid::Uuid::new_v4().simple());
        let separator = if base_url.contains('?') { '&' } else { '?' };
        let mut url = format!("{base_url}{separator}schema={schema}");
        if !parameters.is_empty() {
            url = format!("{url}&{parameters}");
        }
        Self::open_in(url, PathBuf::new(), Place::Schema { base_url, schema })
    }

    /// Which backend this store is on.
    pub fn backend(&self) -> Backend {
        match self.place {
            Place::Folder(_) => Backend::Sqlite,
            Place::Schema { .. } => Backend::Postgres,
        }
    }

    /// Drops the runtime and the store (closing every connection) and opens the same store
    /// again, as a restarted process would.
    pub fn reopen(self) -> Self {
        let TestStore {
            url,
            path,
            store,
            runtime,
            place,
        } = self;
        drop(runtime);
        drop(store);
        Self::open_in(url, path, place)
    }

    fn open_in(url: String, path: PathBuf, place: Place) -> Self {
        let (store, runtime) = open(&url);
        TestStore {
            url,
            path,
            store,
            runtime,
            place,
        }
    }

    /// A second, independent store and runtime on the same store, as another part of the
    /// same process would open it.
    pub fn open_again(&self) -> (OpenedStore, Runtime) {
        open(&self.url)
    }

    /// The subscriber archive under the pattern's flow ID.
    pub fn archive(&self) -> SubscriberArchive<'_> {
        SubscriberArchive::new(&self.runtime, FLOW_ID)
    }

    /// The flow with this ID as the store records it, if it was started.
    pub fn flow(&self, flow_id: &str) -> Option<FlowRecord> {
        self.store.flow(flow_id).expect("read the flow record")
    }

    /// Registers a filler subscriber for each of `numbers` in turn, each acknowledged one
    /// kept in `acked`, until one is refused: returns its number and error, after checking
    /// that it stored nothing. `None` when every registration succeeded.
    pub fn register_until_refused(
        &self,
        numbers: impl IntoIterator<Item = u64>,
        acked: &mut BTreeMap<u64, Subscriber>,
    ) -> Option<(u64, Error)> {
        let archive = self.archive();
        for n in numbers {
            let before = self.stored_values(FLOW_ID);
            match archive.register(&filler_id(n), &format!("{}@example.com", filler_id(n))) {
                Ok(subscriber) => {
                    acked.insert(subscriber.sequence, subscriber);
                }
                Err(error) => {
                    assert_eq!(self.stored_values(FLOW_ID), before, "nothing partial");
                    return Some((n, error));
                }
            }
        }
        None
    }

    /// Locks held on this store in this process now.
    pub fn held_locks(&self) -> usize {
        self.store.held_lock_count()
    }

    /// Where the store lives, as its messages name it.
    pub fn location(&self) -> String {
        self.store.as_store().location()
    }

    /// Every value stored for `flow_id`, by physical name, read straight from the database
    /// with a connection of the test's own (not through attrflow).
    pub fn stored_values(&self, flow_id: &str) -> BTreeMap<String, Value> {
        let rows = match &self.place {
            Place::Folder(_) => sqlite_rows(&self.path, flow_id),
            Place::Schema { base_url, schema } => postgres_rows(base_url, schema, flow_id),
        };
        decode_rows(rows)
    }

    /// Overwrites the schema version the store records, as a newer attrflow would.
    pub fn set_schema_version(&self, version: i64) {
        match &self.place {
            Place::Folder(_) => {
                let conn = rusqlite::Connection::open(&self.path).expect("open the store file");
                conn.execute("UPDATE attrflow_schema SET version = ?1", [version])
                    .expect("set the schema version");
            }
            Place::Schema { base_url, schema } => {
                let mut client = postgres::Client::connect(base_url, postgres::NoTls)
                    .expect("connect to the test database");
                client
                    .execute(
                        &format!("UPDATE \"{schema}\".attrflow_schema SET version = $1"),
                        &[&version],
                    )
                    .expect("set the schema version");
            }
        }
    }
}

fn open(url: &str) -> (OpenedStore, Runtime) {
    let store = OpenedStore::open(url);
    let runtime = Runtime::new(store.as_store());
    (store, runtime)
}

fn sqlite_rows(path: &Path, flow_id: &str) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(path).expect("open the store file");
    let mut stmt = conn
        .prepare("SELECT name, value FROM attribute_values WHERE flow_id = ?1 ORDER BY name")
        .expect("prepare the read");
    let rows = stmt
        .query_map([flow_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .expect("read the values");
    rows.map(|row| row.expect("read a row")).collect()
}

fn postgres_rows(base_url: &str, schema: &str, flow_id: &str) -> Vec<(String, String)> {
    let mut client =
        postgres::Client::connect(base_url, postgres::NoTls).expect("connect to the test database");
    client
        .query(
            &format!(
                "SELECT name, value FROM \"{schema}\".attribute_values WHERE flow_id = $1 ORDER BY name"
            ),
            &[&flow_id],
        )
        .expect("read the values")
        .iter()
        .map(|row| {
            let name: Vec<u8> = row.get(0);
            (String::from_utf8(name).expect("names are UTF-8"), row.get(1))
        })
        .collect()
}

/// `subscriber-%03d`, as the Dex scenarios name subscriber `n`.
pub fn subscriber_id(n: u64) -> String {
    format!("subscriber-{n:03}")
}

/// `subscriber-%03d@example.com`, the delivery address of subscriber `n`.
pub fn delivery_address(n: u64) -> String {
    format!("subscriber-{n:03}@example.com")
}

/// The subscriber the archive should hold as sequence `n` when subscribers were registered
/// in order 1, 2, 3, …
pub fn expected_subscriber(n: u64) -> Subscriber {
    Subscriber {
        sequence: n,
        subscriber_id: subscriber_id(n),
        delivery_address: delivery_address(n),
    }
}

/// The ID of the `n`-th filler subscriber of [`TestStore::register_until_refused`].
pub fn filler_id(n: u64) -> String {
    format!("filler-{n:05}")
}

/// Registers subscribers `numbers` one after another and checks each gets its number as
/// its sequence.
pub fn register_in_order(archive: &SubscriberArchive<'_>, numbers: impl IntoIterator<Item = u64>) {
    for n in numbers {
        let subscriber = archive
            .register(&subscriber_id(n), &delivery_address(n))
            .unwrap_or_else(|e| panic!("registering subscriber {n}: {e}"));
        assert_eq!(subscriber, expected_subscriber(n));
    }
}

/// Calls `call` until it returns anything but [`Error::LockConflict`], retrying only lock
/// conflicts.
pub fn retry_lock_conflicts<T>(call: impl FnMut() -> Result<T>) -> Result<T> {
    match patient_retry().run(call) {
        Err(Error::LockConflict(message)) => {
            panic!("still a lock conflict after {MAX_CONFLICTS} tries: {message}")
        }
        other => other,
    }
}

/// Registers subscriber `n` (named as the Dex scenarios name it), retrying lock conflicts
/// only, and returns what the archive stored.
pub fn register_retrying(archive: &SubscriberArchive<'_>, n: u64) -> Subscriber {
    retry_lock_conflicts(|| archive.register(&subscriber_id(n), &delivery_address(n)))
        .unwrap_or_else(|e| panic!("registering subscriber {n}: {e}"))
}

/// The sequences of a page, in page order (newest first).
pub fn sequences(page: &SubscriberPage) -> Vec<u64> {
    page.subscribers.iter().map(|s| s.sequence).collect()
}

/// Reads every page from `current` back to the oldest archive and returns every
/// subscriber, oldest first.
pub fn all_subscribers(archive: &SubscriberArchive<'_>) -> Vec<Subscriber> {
    let mut newest_first = Vec::new();
    let mut token = "current".to_owned();
    loop {
        let page = archive
            .page(&token)
            .unwrap_or_else(|e| panic!("reading page {token:?}: {e}"));
        newest_first.extend(page.subscribers);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    newest_first.reverse();
    newest_first
}

/// Calls `GetSubscriberPage` through [`Runtime::invoke_rpc`] itself, loading the chunk
/// `instance` per call, and returns the raw JSON output.
pub fn page_via_rpc(
    runtime: &Runtime,
    flow_id: &str,
    page_token: &str,
    instance: &str,
) -> Result<Value> {
    runtime.invoke_rpc(
        chunked_subscriber::FLOW_TYPE,
        flow_id,
        chunked_subscriber::GET_SUBSCRIBER_PAGE,
        json!({ "pageToken": page_token }),
        &RpcInvokeOptions::new()
            .load_attribute_map_instance(chunked_subscriber::SUBSCRIBER_CHUNKS_MAP, instance),
    )
}

/// Starts this test binary again as a child process that runs only the (ignored) test
/// `test_name`, with `env` set. The child's stdin and stdout are piped to the caller.
pub fn spawn_test_process(test_name: &str, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(std::env::current_exe().expect("the test binary's path"));
    command
        .args(["--exact", test_name, "--nocapture", "--ignored"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().expect("start a child process")
}

/// Creates a checkpoint: the [`Checkpoint`] stays with the test, the [`Pause`] goes into a
/// handler.
pub fn checkpoint() -> (Checkpoint, Pause) {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    (
        Checkpoint {
            entered: entered_rx,
            release: Some(release_tx),
        },
        Pause {
            entered: entered_tx,
            release: Mutex::new(release_rx),
        },
    )
}

/// The test's side of a checkpoint.
///
/// Dropping it releases the handler too, so a failing assertion never leaves a handler
/// parked (and a scoped thread unjoinable) forever.
pub struct Checkpoint {
    entered: Receiver<()>,
    release: Option<Sender<()>>,
}

impl Checkpoint {
    /// Blocks until a handler has reached [`Pause::wait`], holding its locks.
    pub fn wait_until_entered(&self) {
        self.entered
            .recv()
            .expect("the paused handler was dropped before it was entered");
    }

    /// Lets the parked handler (and any later one) run to its end.
    pub fn release(&mut self) {
        self.release = None;
    }
}

/// The handler's side of a checkpoint.
pub struct Pause {
    entered: Sender<()>,
    release: Mutex<Receiver<()>>,
}

impl Pause {
    /// Tells the test the handler is running, then waits until the test releases it.
    pub fn wait(&self) {
        // The test may already be gone (it failed); then there is no one to tell or wait for.
        let _ = self.entered.send(());
        let release = self.release.lock().unwrap_or_else(|e| e.into_inner());
        // Nothing is ever sent: the test releases by dropping the sender, which ends recv.
        let _ = release.recv();
    }
}

/// Every value stored for `flow_id` in the SQLite file at `path`, by physical name, read
/// with a connection of the test's own.
pub fn sqlite_stored_values(path: &Path, flow_id: &str) -> BTreeMap<String, Value> {
    decode_rows(sqlite_rows(path, flow_id))
}

/// Every stored value of `flow_id` in `schema` of the PostgreSQL database at `url`, read
/// straight from its table.
pub fn postgres_stored_values(url: &str, schema: &str, flow_id: &str) -> BTreeMap<String, Value> {
    decode_rows(postgres_rows(url, schema, flow_id))
}

fn decode_rows(rows: Vec<(String, String)>) -> BTreeMap<String, Value> {
    rows.into_iter()
        .map(|(name, json)| {
            let value = serde_json::from_str(&json).expect("stored values are JSON");
            (name, value)
        })
        .collect()
}
