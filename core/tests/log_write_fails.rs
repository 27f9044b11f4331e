//! A write to the write-ahead log that the file system refuses fails the append that made
//! it, leaves nothing of it stored, and the store takes appends again once writes succeed.
//!
//! The store writes a commit's log frames in one call, gathered by its VFS
//! (`store/sqlite/wal_writes.rs`): this proves the error of that gathered write reaches
//! the COMMIT, rather than SQLite publishing a commit whose frames never reached the file.
//! The file system refuses for real: the process's file-size limit (`RLIMIT_FSIZE`, with
//! `SIGXFSZ` ignored) makes the write that would take the log past it fail with `EFBIG`.
//! One test in its own binary, since the limit holds for the whole process.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use attrflow::flows::chunked_subscriber::{Subscriber, FLOW_ID};
use attrflow::Error;
use common::invariants::assert_archive_sound;
use common::{filler_id, TestStore};

/// Bytes the log may grow by once the limit is set: a few appends' worth (each about 17 KB).
const ROOM: u64 = 64 << 10;

/// More appends than [`ROOM`] can take.
const ENOUGH_TO_FILL: u64 = 100;

fn log_bytes(database: &Path) -> u64 {
    let mut log = database.as_os_str().to_owned();
    log.push("-wal");
    std::fs::metadata(log).map_or(0, |meta| meta.len())
}

/// Sets this process's file-size limit (`None`: none).
fn limit_file_size(bytes: Option<u64>) {
    let limit = bytes.unwrap_or(libc::RLIM_INFINITY);
    let limits = libc::rlimit {
        rlim_cur: limit,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on values owned here.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limits), 0);
    }
}

#[test]
fn a_refused_log_write_fails_its_append_stores_nothing_and_appends_resume() {
    let t = TestStore::sqlite();
    let archive = t.archive();
    archive.start().unwrap();
    let mut acked: BTreeMap<u64, Subscriber> = BTreeMap::new();
    assert!(t.register_until_refused(1..=20, &mut acked).is_none());

    // Fresh, the log only grows (SQLite starts it over after 1,000 frames), so it soon
    // reaches the limit.
    limit_file_size(Some(log_bytes(&t.path) + ROOM));
    let refused = t.register_until_refused(21..=ENOUGH_TO_FILL, &mut acked);
    limit_file_size(None);
    let Some((n, error)) = refused else {
        panic!("{ENOUGH_TO_FILL} appends fit in a log limited to {ROOM} more bytes");
    };
    assert!(
        matches!(error, Error::Storage(_) | Error::StorageFull(_)),
        "a refused write gave {error:?}"
    );
    assert!(
        error.to_string().contains(t.path.to_str().unwrap()),
        "{error}"
    );
    assert_eq!(t.held_locks(), 0);

    let id = filler_id(n);
    let resumed = archive.register(&id, &format!("{id}@example.com")).unwrap();
    assert_eq!(resumed.sequence, n);
    acked.insert(resumed.sequence, resumed);
    let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
    assert_eq!(summary.subscribers.len() as u64, n);
}
