//! Opening a store: concurrent first opens of one fresh file all succeed (each waits, within
//! the busy timeout, for the others to enable WAL and create the schema), and opening a
//! store whose schema is current only reads, so it succeeds while another connection holds
//! the file's write lock.

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use attrflow::store::{SqliteOptions, SqliteStore};
use rusqlite::Connection;

/// Fresh files each opened by [`OPENERS`] threads at once.
const FRESH_FILES: usize = 15;
/// Connections racing to open each fresh file.
const OPENERS: usize = 4;

#[test]
fn concurrent_first_opens_of_a_fresh_file_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for file in 0..FRESH_FILES {
        let path = dir.path().join(format!("fresh-{file}.sqlite"));
        let barrier = Arc::new(Barrier::new(OPENERS));
        let openers: Vec<_> = (0..OPENERS)
            .map(|_| {
                let path = path.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    SqliteStore::open(&path).map(|_| ())
                })
            })
            .collect();
        for opener in openers {
            if let Err(error) = opener.join().unwrap() {
                failures.push(error.to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} opens failed: {failures:?}",
        failures.len(),
        FRESH_FILES * OPENERS
    );
}

/// Opens `path` with a short busy timeout while another connection (as another process
/// inside a long handler would) holds the file's write lock for the whole open.
fn open_while_the_write_lock_is_held(path: &Path) -> attrflow::Result<SqliteStore> {
    let mut holder = Connection::open(path).unwrap();
    holder.execute_batch("PRAGMA journal_mode=WAL").unwrap();
    let tx = holder
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    tx.execute_batch("CREATE TABLE held (x INTEGER)").unwrap();
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(200),
        ..SqliteOptions::default()
    };
    let opened = SqliteStore::open_with(path, options);
    tx.rollback().unwrap();
    opened
}

#[test]
fn opening_a_current_store_does_not_need_the_write_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    let opened = open_while_the_write_lock_is_held(&path);
    assert!(opened.is_ok(), "{opened:?}");
}

#[test]
fn an_open_that_waits_out_its_busy_timeout_says_what_it_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    // A file whose schema does not exist yet: creating it needs the write lock.
    let error = open_while_the_write_lock_is_held(&path).unwrap_err();
    let message = error.to_string();
    assert!(error.is_retryable(), "{message}");
    assert!(message.contains("200ms"), "{message}");
    assert!(message.contains("creating the schema"), "{message}");
}
