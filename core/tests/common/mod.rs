//! Helpers shared by the integration tests: a store in a temporary folder, the subscriber
//! names of the Dex scenarios, retry-on-conflict loops, direct reads of the SQLite file, and
//! a checkpoint that parks a handler (with its locks held) until the test lets it go.
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
use attrflow::store::{FlowRecord, SqliteOptions, SqliteStore, Store, Synchronous};
use attrflow::{Error, Result, RpcInvokeOptions, Runtime};
use serde_json::{json, Value};
use tempfile::TempDir;

/// How often a test call may meet a lock conflict before the test gives up. With the
/// pauses of [`retry_lock_conflicts`] that is minutes of conflicts, far beyond what any
/// scenario here needs: reaching it means a lock was never released.
pub const MAX_CONFLICTS: u32 = 100_000;

/// Conflicts retried at once (yielding the thread, as the Dex Go test does with
/// `runtime.Gosched`) before each further retry waits a millisecond, so that a slow disk
/// cannot make a waiting thread run out of tries.
const QUICK_RETRIES: u32 = 100;

/// A runtime over a fresh SQLite file in a temporary folder that lives as long as this.
pub struct TestStore {
    /// The database file.
    pub path: PathBuf,
    /// The store, kept typed so tests can ask it how many locks are held.
    pub store: Arc<SqliteStore>,
    /// The runtime over `store`, with the built-in flow types registered.
    pub runtime: Runtime,
    /// What `store` was opened with.
    pub options: SqliteOptions,
    /// Dropped last, removing the folder.
    _dir: TempDir,
}

impl TestStore {
    /// A store with the default (fully synchronous) options.
    pub fn new() -> Self {
        Self::with_options(SqliteOptions::default())
    }

    /// A store that skips the fsync at each commit. For tests that append many records and
    /// assert nothing about power loss.
    pub fn fast() -> Self {
        Self::with_options(SqliteOptions {
            synchronous: Synchronous::Normal,
            ..SqliteOptions::default()
        })
    }

    /// A store with the given options.
    pub fn with_options(options: SqliteOptions) -> Self {
        let dir = tempfile::tempdir().expect("create a temporary folder");
        let path = dir.path().join("attrflow.db");
        Self::open_in(dir, path, options)
    }

    /// Drops the runtime and the store (closing every connection) and opens the same file
    /// again, as a restarted process would.
    pub fn reopen(self) -> Self {
        let TestStore {
            path,
            store,
            runtime,
            options,
            _dir: dir,
        } = self;
        drop(runtime);
        drop(store);
        Self::open_in(dir, path, options)
    }

    fn open_in(dir: TempDir, path: PathBuf, options: SqliteOptions) -> Self {
        let (store, runtime) = open(&path, &options);
        TestStore {
            path,
            store,
            runtime,
            options,
            _dir: dir,
        }
    }

    /// A second, independent store and runtime on the same file, as another part of the
    /// same process would open it.
    pub fn open_again(&self) -> (Arc<SqliteStore>, Runtime) {
        open(&self.path, &self.options)
    }

    /// The subscriber archive under the pattern's flow ID.
    pub fn archive(&self) -> SubscriberArchive<'_> {
        SubscriberArchive::new(&self.runtime, FLOW_ID)
    }

    /// The flow with this ID as the store records it, if it was started.
    pub fn flow(&self, flow_id: &str) -> Option<FlowRecord> {
        self.store.flow(flow_id).expect("read the flow record")
    }

    /// Locks held on this store's file in this process now.
    pub fn held_locks(&self) -> usize {
        self.store.held_lock_count()
    }
}

fn open(path: &Path, options: &SqliteOptions) -> (Arc<SqliteStore>, Runtime) {
    let store = Arc::new(SqliteStore::open_with(path, options.clone()).expect("open the store"));
    let runtime = Runtime::new(store.clone());
    (store, runtime)
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
pub fn retry_lock_conflicts<T>(mut call: impl FnMut() -> Result<T>) -> Result<T> {
    for attempt in 0..MAX_CONFLICTS {
        match call() {
            Err(Error::LockConflict(_)) if attempt < QUICK_RETRIES => std::thread::yield_now(),
            Err(Error::LockConflict(_)) => std::thread::sleep(Duration::from_millis(1)),
            other => return other,
        }
    }
    panic!("still a lock conflict after {MAX_CONFLICTS} tries: a lock was never released");
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

/// Every value stored for `flow_id`, by physical name, read straight from the SQLite file
/// with a connection of the test's own (not through attrflow).
pub fn stored_values(path: &Path, flow_id: &str) -> BTreeMap<String, Value> {
    let conn = rusqlite::Connection::open(path).expect("open the store file");
    let mut stmt = conn
        .prepare("SELECT name, value FROM attribute_values WHERE flow_id = ?1 ORDER BY name")
        .expect("prepare the read");
    let rows = stmt
        .query_map([flow_id], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .expect("read the values");
    rows.map(|row| {
        let (name, json) = row.expect("read a row");
        let value = serde_json::from_str(&json).expect("stored values are JSON");
        (name, value)
    })
    .collect()
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
