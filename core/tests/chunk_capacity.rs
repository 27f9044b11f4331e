//! No chunk size and no record size leaves a chunked log unable to append: every size a log
//! accepts holds a full chunk of the largest records in one stored value, a size beyond
//! that is refused, and a log stored with a larger (legacy) size closes its open chunk
//! early, with tokens that stay exact.

mod common;

use attrflow::chunked_log::{archive_token, LEGACY_MAX_CHUNK_SIZE, MAX_CHUNK_SIZE};
use attrflow::flows::app_log::AppLog;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::{Subscriber, FLOW_ID};
use attrflow::limits::MAX_RECORD_BYTES;
use attrflow::Error;
use common::{all_subscribers, TestStore};
use proptest::prelude::*;
use serde_json::json;

/// A subscriber whose record, as stored, is about `record_bytes` long (at most the limit).
fn subscriber(n: u64, record_bytes: usize) -> NewSubscriber {
    // `{"sequence":N,"subscriberId":"…","deliveryAddress":"…"}` is about 80 bytes besides
    // the two texts.
    let text = record_bytes.saturating_sub(80).clamp(2, MAX_RECORD_BYTES);
    let id = format!("{n}-{}", "i".repeat(text / 2));
    let address = format!("{n}@{}", "a".repeat(text - text / 2));
    NewSubscriber::new(id, address)
}

/// Registers `count` subscribers in batches of at most `batch` (each batch also kept under
/// the RPC input limit), checking each one's sequence.
fn register(t: &TestStore, count: u64, record_bytes: usize, batch: usize) -> Vec<NewSubscriber> {
    let archive = t.archive();
    let per_call = batch.min(1_000_000 / (record_bytes + 100)).max(1);
    let all: Vec<_> = (1..=count).map(|n| subscriber(n, record_bytes)).collect();
    let mut next = 1;
    for chunk in all.chunks(per_call) {
        let stored = archive.register_batch(chunk, None).unwrap();
        for subscriber in stored {
            assert_eq!(subscriber.sequence, next);
            next += 1;
        }
    }
    all
}

fn expected(all: &[NewSubscriber]) -> Vec<Subscriber> {
    all.iter()
        .zip(1..)
        .map(|(new, sequence)| Subscriber {
            sequence,
            subscriber_id: new.subscriber_id.clone(),
            delivery_address: new.delivery_address.clone(),
        })
        .collect()
}

/// Starts an archive, registers `after` subscribers, changes its chunk size to `chunk_size`
/// and registers across three chunk boundaries of the new size in batches of at most
/// `batch`, then checks the newest page and a walk of every page back to sequence 1.
fn keeps_appending(chunk_size: u64, record_bytes: usize, batch: usize, after: u64) {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    // A few registrations first, so the change waits for a chunk boundary sometimes.
    let mut all = register(&t, after, record_bytes, batch);
    let change = archive.change_chunk_size(chunk_size).unwrap();
    let count = change.from_sequence - 1 + 3 * chunk_size + 1;
    let more: Vec<_> = (after + 1..=count)
        .map(|n| subscriber(n, record_bytes))
        .collect();
    for chunk in more.chunks(batch.min(1_000_000 / (record_bytes + 100)).max(1)) {
        archive.register_batch(chunk, None).unwrap();
    }
    all.extend(more);
    let newest = archive.page("current").unwrap();
    assert_eq!(newest.subscribers[0].sequence, count);
    assert_eq!(all_subscribers(&archive), expected(&all));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Whatever chunk size is set and whatever the records' size, appends keep succeeding
    /// across three chunk boundaries and the pages walk back to sequence 1.
    #[test]
    fn every_accepted_chunk_size_keeps_appending(
        chunk_size in prop_oneof![Just(MAX_CHUNK_SIZE), Just(1u64), 1..=MAX_CHUNK_SIZE],
        record_bytes in prop_oneof![Just(MAX_RECORD_BYTES), 100..=MAX_RECORD_BYTES],
        batch in 1usize..=300,
        after in 0u64..3,
    ) {
        keeps_appending(chunk_size, record_bytes, batch, after);
    }
}

/// A case the property once found: full chunks of the largest records, appended three at a
/// time, whose commits were large enough to fill the log writes SQLite's store gathers
/// (`store/sqlite/wal_writes.rs`).
#[test]
fn full_chunks_of_the_largest_records_appended_in_threes() {
    keeps_appending(127, MAX_RECORD_BYTES, 3, 0);
}

#[test]
fn a_chunk_size_whose_full_chunk_cannot_be_stored_is_refused() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    for bad in [MAX_CHUNK_SIZE + 1, LEGACY_MAX_CHUNK_SIZE] {
        assert_eq!(
            archive.change_chunk_size(bad).unwrap_err(),
            Error::InvalidInput(format!(
                "chunk size must be between 1 and {MAX_CHUNK_SIZE}, got {bad}"
            ))
        );
    }
}

#[test]
fn app_logs_take_the_largest_records_across_three_chunks() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, "app");
    log.start().unwrap();
    let text = "x".repeat(MAX_RECORD_BYTES / 2 - 200);
    for n in 1..=301u64 {
        let record = json!({"n": n, "a": text, "b": text});
        assert_eq!(log.append("big", record).unwrap().sequence, n);
    }
    let mut token = "current".to_owned();
    let mut sequences = Vec::new();
    while !token.is_empty() {
        let page = log.page("big", &token).unwrap();
        sequences.extend(page.entries.iter().map(|entry| entry.sequence));
        token = page.next_page_token;
    }
    assert_eq!(sequences, (1..=301).rev().collect::<Vec<_>>());
}

/// A store written when chunk sizes up to 10,000 were accepted: the archive's layout moved
/// to 10,000 at sequence 101.
fn legacy_archive() -> TestStore {
    let t = TestStore::sqlite_fast();
    let archive = t.archive();
    archive.start().unwrap();
    register(&t, 100, 100, 100);
    let state = json!({
        "nextSequence": 101,
        "latestArchivedChunkToken": "",
        "layouts": [
            {"fromSequence": 1, "chunkSize": 100},
            {"fromSequence": 101, "chunkSize": LEGACY_MAX_CHUNK_SIZE},
        ],
    });
    let conn = rusqlite::Connection::open(&t.path).unwrap();
    let updated = conn
        .execute(
            "UPDATE attribute_values SET value = ?1 WHERE flow_id = ?2 AND name = ?3",
            (state.to_string(), FLOW_ID, "subscriber_archive_state"),
        )
        .unwrap();
    assert_eq!(updated, 1);
    drop(conn);
    t.reopen()
}

#[test]
fn a_legacy_oversized_layout_closes_its_chunk_early_and_keeps_appending() {
    let t = legacy_archive();
    let archive = t.archive();
    // 100 records in chunk 1..100 (still `current`, it was never archived since the state
    // above was written while it was open) then the largest records.
    let more: Vec<_> = (101..=101 + 3 * MAX_CHUNK_SIZE)
        .map(|n| subscriber(n, MAX_RECORD_BYTES))
        .collect();
    for chunk in more.chunks(50) {
        archive.register_batch(chunk, None).unwrap();
    }
    let last = 101 + 3 * MAX_CHUNK_SIZE;
    let newest = archive.page("current").unwrap();
    assert_eq!(newest.subscribers[0].sequence, last);
    let layouts = t.stored_values(FLOW_ID)["subscriber_archive_state"]["layouts"].clone();
    assert_eq!(
        layouts,
        json!([
            {"fromSequence": 1, "chunkSize": 100},
            {"fromSequence": 101, "chunkSize": LEGACY_MAX_CHUNK_SIZE},
            {"fromSequence": 101 + MAX_CHUNK_SIZE, "chunkSize": MAX_CHUNK_SIZE},
        ])
    );
    // Every page's token is exact: the legacy chunk's early end is a boundary, the old
    // grid beyond it is not.
    assert!(archive.page(&archive_token(101).unwrap()).is_ok());
    assert!(archive
        .page(&archive_token(101 + MAX_CHUNK_SIZE).unwrap())
        .is_ok());
    assert!(matches!(
        archive.page(&archive_token(101 + LEGACY_MAX_CHUNK_SIZE).unwrap()),
        Err(Error::InvalidPageToken { .. })
    ));
    let sequences: Vec<u64> = all_subscribers(&archive)
        .iter()
        .map(|s| s.sequence)
        .collect();
    assert_eq!(sequences, (1..=last).collect::<Vec<_>>());
}
