//! At `synchronous=NORMAL` the write-ahead log is checkpointed by a thread of the store's
//! own, not by the commit that fills it: the log still starts over while an appender keeps
//! committing (it does not grow without bound), nothing committed is lost, and the thread
//! ends with the store. One test in its own binary, so that no other test's store has a
//! checkpoint thread of its own while it counts them.

mod common;

use std::path::Path;

use attrflow::flows::chunked_subscriber::FLOW_ID;
use common::{all_subscribers, expected_subscriber, register_in_order, TestStore};

/// Appends committed one at a time: each rewrites the open chunk, about 17 KB of log, so a
/// log never started over would reach about 100 MB.
const APPENDS: u64 = 6_000;

/// What the log may reach: SQLite's own mark (1,000 frames, about 4 MB) plus what commits
/// add while the checkpoint thread copies and syncs, with room for a slow disk.
const MOST_LOG_BYTES: u64 = 32 << 20;

fn log_bytes(database: &Path) -> u64 {
    let mut log = database.as_os_str().to_owned();
    log.push("-wal");
    std::fs::metadata(log).map_or(0, |meta| meta.len())
}

/// Threads of this process named like the checkpoint thread (Linux cuts names to 15 bytes).
fn checkpoint_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "attrflow-checkp")
        .count()
}

#[test]
fn at_normal_the_log_starts_over_while_an_appender_commits_and_its_thread_ends_with_the_store() {
    let t = TestStore::sqlite_fast();
    let archive = t.archive();
    archive.start().unwrap();
    let mut largest = 0;
    for sequence in 1..=APPENDS {
        register_in_order(&archive, sequence..=sequence);
        largest = largest.max(log_bytes(&t.path));
    }
    assert!(
        largest <= MOST_LOG_BYTES,
        "the log reached {largest} bytes over {APPENDS} appends"
    );
    assert!(
        checkpoint_threads() >= 1,
        "a checkpoint thread ran for the store"
    );

    let t = t.reopen();
    assert_eq!(
        all_subscribers(&t.archive()),
        (1..=APPENDS).map(expected_subscriber).collect::<Vec<_>>(),
        "every append of flow {FLOW_ID} is there after reopening"
    );
    drop(t);
    assert_eq!(
        checkpoint_threads(),
        0,
        "the checkpoint thread ends with its store"
    );
}
