//! A record's limit follows the chunk size of the layout its sequence falls in: a log with
//! small chunks takes large records (a 40 KB tool output), one with the default 100 does
//! not, a batch is checked record by record against the layout each lands in, and a
//! refused record stores nothing of its call.

mod common;

use attrflow::flows::app_log::{AppLog, ENTRY_OVERHEAD_BYTES};
use attrflow::limits::{chunk_size_for_record, record_limit, MAX_CHUNK_SIZE, MAX_VALUE_BYTES};
use attrflow::Error;
use common::TestStore;
use serde_json::{json, Value};

fn invalid_input_message<T: std::fmt::Debug>(result: attrflow::Result<T>) -> String {
    match result {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

/// Every entry of `log`, newest first, walking its pages.
fn all_records(log: &AppLog<'_>, name: &str) -> Vec<(u64, Value)> {
    let mut token = "current".to_owned();
    let mut records = Vec::new();
    while !token.is_empty() {
        let page = log.page(name, &token).unwrap();
        records.extend(page.entries.into_iter().map(|e| (e.sequence, e.record)));
        token = page.next_page_token;
    }
    records
}

/// A record `{"output": "…"}` whose entry at `sequence` is exactly `bytes` bytes as
/// compact JSON.
fn record_of(bytes: usize, sequence: u64) -> Value {
    let entry = format!(r#"{{"sequence":{sequence},"record":{{"output":""}}}}"#);
    json!({"output": "x".repeat(bytes - entry.len())})
}

#[test]
fn a_batch_is_checked_against_the_layout_each_record_lands_in() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, "agents");
    log.start().unwrap();
    let small: Vec<Value> = (1..=98).map(|n| json!({"n": n})).collect();
    log.append_batch("chat", small, None).unwrap();
    // The change waits for the boundary at 101: sequences 99 and 100 keep the old limit.
    let change = log
        .fit_records("chat", 52_376 - ENTRY_OVERHEAD_BYTES)
        .unwrap();
    assert_eq!(
        (change.chunk_size, change.record_limit, change.from_sequence),
        (20, 52_376, 101)
    );
    assert_eq!(
        log.fit_records("chat", 52_377 - ENTRY_OVERHEAD_BYTES)
            .unwrap()
            .chunk_size,
        19
    );
    assert_eq!(log.change_chunk_size("chat", 20).unwrap().chunk_size, 20);
    // Asking again for the size in effect writes nothing.
    let before = t.stored_values("agents");
    assert_eq!(
        log.change_chunk_size("chat", 20).unwrap().from_sequence,
        101
    );
    assert_eq!(t.stored_values("agents"), before);
    let tool_output = json!({"output": "é".repeat(20_000)});
    let before = t.stored_values("agents");
    let refused = log.append_batch("chat", vec![json!(99), tool_output.clone()], None);
    assert_eq!(
        invalid_input_message(refused),
        "record is 40039 bytes as JSON; the limit of a log with chunks of 100 records is \
         10474 bytes (a smaller chunk size allows larger records: 26 or less for this one)"
    );
    assert_eq!(t.stored_values("agents"), before);

    let batch = vec![json!(99), json!(100), tool_output.clone()];
    let entries = log.append_batch("chat", batch, None).unwrap();
    assert_eq!(entries[2].sequence, 101);
    let over = record_of(record_limit(20) + 1, 102);
    let before = t.stored_values("agents");
    let message = invalid_input_message(log.append("chat", over));
    assert!(
        message.contains("the limit of a log with chunks of 20 records is 52376 bytes"),
        "{message}"
    );
    assert_eq!(t.stored_values("agents"), before);

    let records = all_records(&log, "chat");
    assert_eq!(records.len(), 101);
    assert_eq!(records[0], (101, tool_output));
}

#[test]
fn full_chunks_of_each_sizes_largest_records_roll_over_and_read_back() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, "agents");
    log.start().unwrap();
    for chunk_size in [1, 8, MAX_CHUNK_SIZE] {
        let name = format!("log-{chunk_size}");
        let change = log.change_chunk_size(&name, chunk_size).unwrap();
        assert_eq!(
            (change.from_sequence, change.record_limit),
            (1, record_limit(chunk_size))
        );
        assert_eq!(chunk_size_for_record(change.record_limit), Some(chunk_size));
        let count = 2 * chunk_size + 1;
        for n in 1..=count {
            let record = record_of(record_limit(chunk_size), n);
            assert_eq!(log.append(&name, record).unwrap().sequence, n);
        }
        let records = all_records(&log, &name);
        assert_eq!(records.len() as u64, count);
        let limit = record_limit(chunk_size);
        assert!(records.iter().all(|(n, r)| *r == record_of(limit, *n)));
        let stored = t.stored_values("agents");
        let chunk = &stored[&format!("log_chunks/{name}.00000000000000000001")];
        assert!(chunk.to_string().len() <= MAX_VALUE_BYTES);
    }
}

#[test]
fn a_chunk_size_change_names_exactly_one_of_size_and_record_bytes() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, "agents");
    log.start().unwrap();
    let message =
        invalid_input_message(log.fit_records("chat", record_limit(1) - ENTRY_OVERHEAD_BYTES + 1));
    assert_eq!(
        message,
        "maxRecordBytes 1047509 is over the largest record any log takes, 1047508 bytes (at \
         chunk size 1)"
    );
    let message = invalid_input_message(log.change_chunk_size("chat", 0));
    assert_eq!(message, "give exactly one of chunkSize and maxRecordBytes");
}
