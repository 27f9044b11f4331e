//! A log's retention applied by every append, on the backend under test: over 10,000
//! appends (single and batched, across a chunk-size change) the log always holds at least
//! its bound, once it has had that many records, and less than its bound plus one chunk,
//! and every invariant of the stored log holds after each call.

mod common;

use attrflow::chunked_log::{archive_token, LogState, Retention};
use attrflow::flows::app_log::AppLog;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::{FLOW_ID, LOG};
use attrflow::Error;
use common::{all_subscribers, delivery_address, expected_subscriber, subscriber_id, TestStore};
use serde_json::{json, Value};

/// The stored state of the archive and the number of records it holds, after checking
/// every invariant of the stored log.
fn checked(t: &TestStore) -> (LogState, u64) {
    let values = t.stored_values(FLOW_ID);
    let summary = LOG.verify(&values).unwrap();
    let state: LogState =
        serde_json::from_value(values["subscriber_archive_state"].clone()).unwrap();
    (state, summary.records)
}

#[test]
fn over_ten_thousand_appends_the_log_stays_within_one_chunk_of_its_bound() {
    const KEEP: u64 = 250;
    const APPENDS: u64 = 10_000;
    // The largest chunk the archive ever has: 100 before the change to 37.
    const LARGEST_CHUNK: u64 = 100;
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let set = archive.set_retention(Some(KEEP)).unwrap();
    assert_eq!(set.retention, Some(Retention { keep_newest: KEEP }));
    assert_eq!(set.trimmed.dropped_chunks, 0);

    let mut next = 1;
    let mut call = 0;
    let mut changed = false;
    while next <= APPENDS {
        if next > APPENDS / 2 && !changed {
            archive.change_chunk_size(37).unwrap();
            changed = true;
        }
        // Batches of 1 to 13, so chunk boundaries fall anywhere in a call.
        let size = (call % 13 + 1).min(APPENDS + 1 - next);
        call += 1;
        if size == 1 {
            let subscriber = archive
                .register(&subscriber_id(next), &delivery_address(next))
                .unwrap();
            assert_eq!(subscriber.sequence, next);
        } else {
            let batch: Vec<NewSubscriber> = (next..next + size)
                .map(|n| NewSubscriber::new(subscriber_id(n), delivery_address(n)))
                .collect();
            let registered = archive.register_batch(&batch, None).unwrap();
            assert_eq!(registered.first().map(|s| s.sequence), Some(next));
        }
        next += size;

        let (state, records) = checked(&t);
        assert_eq!(state.next_sequence, next);
        assert!(
            records >= KEEP.min(next - 1),
            "after {} appends the log holds {records} records",
            next - 1
        );
        assert!(
            records < KEEP + LARGEST_CHUNK,
            "after {} appends the log holds {records} records",
            next - 1
        );
    }

    let (state, records) = checked(&t);
    let kept = all_subscribers(&archive);
    assert_eq!(kept.len() as u64, records);
    assert_eq!(
        kept,
        (state.oldest_sequence..=APPENDS)
            .map(expected_subscriber)
            .collect::<Vec<_>>()
    );
    assert!(matches!(
        archive.page(&archive_token(1).unwrap()),
        Err(Error::PageTrimmed { oldest_sequence, .. }) if oldest_sequence == state.oldest_sequence
    ));

    // Without a retention the archive keeps everything again.
    let cleared = archive.set_retention(None).unwrap();
    assert_eq!(cleared.retention, None);
    let batch: Vec<NewSubscriber> = (APPENDS + 1..=APPENDS + 200)
        .map(|n| NewSubscriber::new(subscriber_id(n), delivery_address(n)))
        .collect();
    archive.register_batch(&batch, None).unwrap();
    assert_eq!(checked(&t).1, records + 200);
    assert_eq!(checked(&t).0.retention, None);
}

#[test]
fn a_retention_is_checked_and_applies_to_one_app_log_at_once_and_on_append() {
    let t = TestStore::fast();
    let logs = AppLog::new(&t.runtime, "app");
    logs.start().unwrap();
    for log in ["audit", "chat"] {
        let records: Vec<Value> = (1..=450).map(|n| json!({"n": n})).collect();
        logs.append_batch(log, records, None).unwrap();
    }
    assert!(matches!(
        logs.set_retention("audit", Some(0)),
        Err(Error::InvalidInput(message)) if message.starts_with("keepNewest must be from 1 to ")
    ));

    // 450 entries: dropping 1, 101 and 201 leaves 150.
    let set = logs.set_retention("audit", Some(150)).unwrap();
    assert_eq!(
        (set.trimmed.dropped_chunks, set.trimmed.oldest_sequence),
        (3, 301)
    );
    let records: Vec<Value> = (451..=560).map(|n| json!({"n": n})).collect();
    logs.append_batch("audit", records.clone(), None).unwrap();
    logs.append_batch("chat", records, None).unwrap();
    // 260 entries from 301: dropping 301 leaves 160.
    let read = logs.read_from("audit", 401, 5, None).unwrap();
    assert_eq!(read.entries[0].sequence, 401);
    assert!(matches!(
        logs.read_from("audit", 400, 5, None),
        Err(Error::PageTrimmed {
            oldest_sequence: 401,
            ..
        })
    ));
    // The other log keeps every entry.
    assert_eq!(logs.read_from("chat", 1, 3, None).unwrap().entries.len(), 3);
}
