//! A full disk is a typed storage error that names the cause; the append that met it wrote
//! nothing, and appends succeed again once space returns. The disk is made full with
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
