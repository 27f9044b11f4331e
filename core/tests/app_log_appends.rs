//! Batch and idempotent appends to app logs (`AppendLogRecords`, `AppendLogRecordOnce`):
//! the chunked-log rules of the subscriber archive, per named log, in the app log's layout.

mod common;

use attrflow::chunked_log::IDEMPOTENCY_INSTANCE;
use attrflow::flows::app_log::{AppLog, LogEntry, LOG_CHUNKS_MAP, LOG_STATES_MAP};
use attrflow::Error;
use common::TestStore;
use serde_json::{json, Value};

const FLOW: &str = "app-logs";

fn records(numbers: std::ops::RangeInclusive<u64>) -> Vec<Value> {
    numbers.map(|n| json!({ "n": n })).collect()
}

fn sequences(entries: &[LogEntry]) -> Vec<u64> {
    entries.iter().map(|e| e.sequence).collect()
}

fn all_sequences(log: &AppLog<'_>, name: &str) -> (Vec<String>, Vec<u64>) {
    let (mut tokens, mut sequences) = (Vec::new(), Vec::new());
    let mut token = "current".to_owned();
    while !token.is_empty() {
        let page = log.page(name, &token).unwrap();
        tokens.push(page.page_token);
        sequences.extend(page.entries.iter().map(|e| e.sequence));
        token = page.next_page_token;
    }
    (tokens, sequences)
}

#[test]
fn a_batch_crossing_two_boundaries_is_stored_in_the_app_log_layout() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    log.append("chat", json!({"n": 1})).unwrap();
    let batch = log.append_batch("chat", records(2..=215), None).unwrap();
    assert_eq!(sequences(&batch), (2..=215).collect::<Vec<_>>());
    assert_eq!(batch[0].record, json!({"n": 2}));
    assert_eq!(log.append("chat", json!({"n": 216})).unwrap().sequence, 216);

    let (tokens, all) = all_sequences(&log, "chat");
    assert_eq!(
        tokens,
        ["current", "00000000000000000101", "00000000000000000001"]
    );
    assert_eq!(all, (1..=216).rev().collect::<Vec<_>>());

    let stored = t.stored_values(FLOW);
    assert_eq!(
        stored[&format!("{LOG_STATES_MAP}/chat")],
        json!({"nextSequence": 217, "latestArchivedChunkToken": "00000000000000000101"})
    );
    for key in [
        "chat.current",
        "chat.00000000000000000001",
        "chat.00000000000000000101",
    ] {
        assert!(
            stored.contains_key(&format!("{LOG_CHUNKS_MAP}/{key}")),
            "{key}"
        );
    }
    assert!(!stored.contains_key(&format!("{LOG_CHUNKS_MAP}/chat.{IDEMPOTENCY_INSTANCE}")));
}

#[test]
fn keyed_appends_retried_from_another_runtime_return_the_first_entries() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    let first = log
        .append_once("audit", "login-1", json!({"user": "ada"}))
        .unwrap();
    let batch = log
        .append_batch("audit", records(1..=120), Some("import-1"))
        .unwrap();
    assert_eq!(sequences(&batch), (2..=121).collect::<Vec<_>>());

    let (_store, runtime) = t.open_again();
    let again = AppLog::new(&runtime, FLOW);
    assert_eq!(
        again
            .append_once("audit", "login-1", json!({"user": "ada"}))
            .unwrap(),
        first
    );
    assert_eq!(
        again
            .append_batch("audit", records(1..=120), Some("import-1"))
            .unwrap(),
        batch
    );
    assert_eq!(
        all_sequences(&log, "audit").1,
        (1..=121).rev().collect::<Vec<_>>()
    );

    // Keys are per log: the same key in another log is another append.
    assert_eq!(
        log.append_once("chat", "login-1", json!({"user": "ada"}))
            .unwrap()
            .sequence,
        1
    );
    let stored = t.stored_values(FLOW);
    assert!(stored.contains_key(&format!("{LOG_CHUNKS_MAP}/audit.{IDEMPOTENCY_INSTANCE}")));
    assert!(stored.contains_key(&format!("{LOG_CHUNKS_MAP}/chat.{IDEMPOTENCY_INSTANCE}")));
}

#[test]
fn bad_batches_and_keys_are_invalid_input_and_write_nothing() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    log.append_once("audit", "k", json!(1)).unwrap();
    let before = t.stored_values(FLOW);

    assert!(matches!(
        log.append_once("audit", "k", json!(2)),
        Err(Error::InvalidInput(_))
    ));
    assert_eq!(
        log.append_batch("audit", records(1..=1001), None)
            .unwrap_err(),
        Error::invalid_input("a batch holds at most 1000 records, got 1001")
    );
    assert_eq!(
        log.append_batch("audit", Vec::new(), Some("k2"))
            .unwrap_err(),
        Error::invalid_input("a batch needs at least one record")
    );
    assert_eq!(
        log.append_batch("audit", vec![json!(1), Value::Null], None)
            .unwrap_err(),
        Error::invalid_input("records[1]: record is required")
    );
    for key in ["", "has space", "clé"] {
        assert!(matches!(
            log.append_once("audit", key, json!(1)),
            Err(Error::InvalidInput(_))
        ));
    }
    assert!(matches!(
        log.append_batch("a/b", records(1..=2), None),
        Err(Error::InvalidInput(_))
    ));
    assert_eq!(t.stored_values(FLOW), before);
}
