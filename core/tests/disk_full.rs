//! A full disk is a typed storage error that names the cause, for every call of the commit
//! group that met it; the appends that met it wrote nothing, every acknowledged one is
//! stored, and appends succeed again once space returns. The disk is made full with
//! SQLite's own `PRAGMA max_page_count` on every connection of the store, so SQLite's pager
//! really runs out of pages (`SQLITE_FULL`), exactly as on a full file system.
//!
//! Needs `--features fault-injection` (for the page cap).

mod common;

use std::collections::BTreeMap;

use attrflow::flows::chunked_subscriber::{Subscriber, FLOW_ID};
use attrflow::Error;
use common::invariants::assert_archive_sound;
use common::{filler_id, register_in_order, TestStore};

/// More appends than a database capped at its current size can take.
const ENOUGH_TO_FILL: u64 = 5_000;

fn page_count(path: &std::path::Path) -> u32 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA page_count", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn a_full_disk_is_a_storage_error_writes_nothing_and_appends_resume_when_space_returns() {
    let t = TestStore::sqlite_fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=150);
    let mut acked: BTreeMap<u64, Subscriber> = BTreeMap::new();

    t.store
        .sqlite()
        .faults()
        .limit_pages(Some(page_count(&t.path) + 2));
    let refused = t.register_until_refused(151..=ENOUGH_TO_FILL, &mut acked);
    let Some((n, error)) = refused else {
        panic!("{ENOUGH_TO_FILL} appends fit in a capped database");
    };
    let Error::StorageFull(message) = &error else {
        panic!("a full disk gave {error:?}");
    };
    assert!(message.contains("disk full"), "{message}");
    assert!(message.contains(t.path.to_str().unwrap()), "{message}");
    assert_eq!(t.held_locks(), 0);

    let again = archive.register("while-full", "while-full@example.com");
    assert!(matches!(again, Err(Error::StorageFull(_))), "{again:?}");

    t.store.sqlite().faults().limit_pages(None);
    let id = filler_id(n);
    let resumed = archive.register(&id, &format!("{id}@example.com")).unwrap();
    assert_eq!(resumed.sequence, n);
    acked.insert(resumed.sequence, resumed);
    let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
    assert_eq!(summary.subscribers.len() as u64, n);
}

/// Appending threads at once.
const WRITERS: u64 = 16;

#[test]
fn many_writers_meeting_a_full_disk_each_get_a_storage_error_and_lose_no_acknowledged_append() {
    // A commit delay gathers the writers' calls into groups of several members, so a group
    // meets the full disk with members beside the one whose write fails.
    let t = TestStore::fast_with_url_parameters("commit_delay_us=1000");
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=150);
    t.store
        .sqlite()
        .faults()
        .limit_pages(Some(page_count(&t.path) + 2));

    // Each writer appends its own subscribers (writer w the numbers 151 + w, 151 + w +
    // WRITERS, …) until the disk refuses one: every member of the group that met the full
    // disk gets a full disk, not a generic storage error.
    let outcomes: Vec<(BTreeMap<u64, Subscriber>, Error)> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let archive = t.archive();
                s.spawn(move || {
                    let mut acked = BTreeMap::new();
                    for n in (151 + w..=ENOUGH_TO_FILL).step_by(WRITERS as usize) {
                        let id = filler_id(n);
                        match archive.register(&id, &format!("{id}@example.com")) {
                            Ok(subscriber) => {
                                acked.insert(subscriber.sequence, subscriber);
                            }
                            Err(Error::LockConflict(_)) => {}
                            Err(error) => return (acked, error),
                        }
                    }
                    panic!("{ENOUGH_TO_FILL} appends fit in a capped database");
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut acked = BTreeMap::new();
    for (writer_acked, error) in outcomes {
        let Error::StorageFull(message) = &error else {
            panic!("a full disk gave a writer {error:?}");
        };
        assert!(message.contains("disk full"), "{message}");
        acked.extend(writer_acked);
    }
    assert_eq!(t.held_locks(), 0);
    // Every acknowledged append is stored, sequences dense, nothing else half-written.
    let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
    assert_eq!(summary.subscribers.len(), 150 + acked.len());

    // Once space returns, every writer appends again, after the last acknowledged one.
    t.store.sqlite().faults().limit_pages(None);
    let resumed: Vec<Subscriber> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let archive = t.archive();
                s.spawn(move || {
                    let id = format!("after-the-disk-filled-{w}");
                    archive.register(&id, &format!("{id}@example.com")).unwrap()
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for subscriber in resumed {
        acked.insert(subscriber.sequence, subscriber);
    }
    let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
    assert_eq!(summary.subscribers.len(), 150 + acked.len());
}
