//! The built-in app log (`ChunkedLogFlow`): named logs of JSON records in one flow, paged
//! newest first with the chunked-log token rules, each log independent of the others.

mod common;

use std::collections::BTreeSet;
use std::sync::Barrier;

use attrflow::flows::app_log::{
    named_log, AppLog, LogPage, FLOW_TYPE as APP_LOG_FLOW, GET_LOG_PAGE, LOG_CHUNKS_MAP,
    LOG_STATES_MAP,
};
use attrflow::Error;
use common::{patient_retry, TestStore};
use serde_json::json;

const FLOW: &str = "app-logs";

fn append_numbers(log: &AppLog<'_>, name: &str, numbers: std::ops::RangeInclusive<u64>) {
    for n in numbers {
        let entry = log
            .append(name, json!({ "n": n, "text": format!("message {n}") }))
            .unwrap();
        assert_eq!(entry.sequence, n);
    }
}

fn page_numbers(page: &attrflow::flows::app_log::LogPage) -> Vec<u64> {
    page.entries.iter().map(|e| e.sequence).collect()
}

#[test]
fn two_hundred_and_one_records_page_back_newest_first_in_three_chunks() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    assert!(log.page("chat", "current").unwrap().entries.is_empty());

    append_numbers(&log, "chat", 1..=201);

    let current = log.page("chat", "").unwrap();
    assert_eq!(current.page_token, "current");
    assert_eq!(page_numbers(&current), vec![201]);
    assert_eq!(
        current.entries[0].record,
        json!({"n": 201, "text": "message 201"})
    );
    assert_eq!(current.next_page_token, "00000000000000000101");
    let second = log.page("chat", &current.next_page_token).unwrap();
    assert_eq!(page_numbers(&second), (101..=200).rev().collect::<Vec<_>>());
    assert_eq!(second.next_page_token, "00000000000000000001");
    let first = log.page("chat", &second.next_page_token).unwrap();
    assert_eq!(page_numbers(&first), (1..=100).rev().collect::<Vec<_>>());
    assert_eq!(first.next_page_token, "");
}

#[test]
fn a_page_passes_its_stored_entries_on_as_the_typed_page_would_encode_them() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    let records = [
        json!({"text": "quote \" backslash \\ tab \t", "zeta": 1, "alpha": [1.5, -0.0, 1e300]}),
        json!({"emoji": "\u{1F600} \u{00e9}", "control": "\u{0001}\n", "nested": {"b": null, "a": true}}),
        json!("a bare string"),
        json!(12345678901234567u64),
    ];
    for (n, record) in (1..=101).zip(records.iter().cycle()) {
        assert_eq!(log.append("chat", record.clone()).unwrap().sequence, n);
    }
    for token in ["current", "00000000000000000001"] {
        // The output, as JSON, is the typed page's, whatever the order of its keys.
        let input = json!({"log": "chat", "pageToken": token});
        let options = named_log("chat").page_options(token).unwrap();
        let output = (t.runtime)
            .invoke_rpc(APP_LOG_FLOW, FLOW, GET_LOG_PAGE, input, &options)
            .unwrap();
        let page = log.page("chat", token).unwrap();
        assert_eq!(output, serde_json::to_value(&page).unwrap());
        assert_eq!(serde_json::from_value::<LogPage>(output).unwrap(), page);
    }
}

#[test]
fn logs_of_one_flow_are_independent_and_stored_under_their_names() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    append_numbers(&log, "audit", 1..=3);
    append_numbers(&log, "chat.42", 1..=2);

    assert_eq!(
        page_numbers(&log.page("audit", "current").unwrap()),
        vec![3, 2, 1]
    );
    assert_eq!(
        page_numbers(&log.page("chat.42", "current").unwrap()),
        vec![2, 1]
    );
    assert!(log
        .page("never-written", "current")
        .unwrap()
        .entries
        .is_empty());

    let stored = t.stored_values(FLOW);
    assert_eq!(
        stored[&format!("{LOG_STATES_MAP}/audit")],
        json!({"nextSequence": 4, "latestArchivedChunkToken": ""})
    );
    let chunk = &stored[&format!("{LOG_CHUNKS_MAP}/chat.42.current")];
    assert_eq!(chunk["entries"][1]["sequence"], 2);
}

#[test]
fn bad_tokens_names_and_records_are_typed_errors_and_write_nothing() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    append_numbers(&log, "audit", 1..=1);
    let before = t.stored_values(FLOW);

    assert_eq!(
        log.page("audit", "7").unwrap_err(),
        Error::InvalidPageToken { token: "7".into() }
    );
    assert_eq!(
        log.page("audit", "00000000000000000101").unwrap_err(),
        Error::PageNotFound(r#"log "audit" page "00000000000000000101" not found"#.into())
    );
    assert!(matches!(
        log.append("a/b", json!(1)),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        log.append(" ", json!(1)),
        Err(Error::InvalidInput(_))
    ));
    assert_eq!(
        log.append("audit", json!(null)).unwrap_err(),
        Error::invalid_input("record is required")
    );
    assert_eq!(t.stored_values(FLOW), before);
}

#[test]
fn a_log_of_a_flow_never_started_is_flow_not_found() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, "missing");
    assert!(matches!(
        log.append("audit", json!(1)),
        Err(Error::FlowNotFound { .. })
    ));
}

#[test]
fn concurrent_appends_with_retry_get_dense_sequences() {
    let t = TestStore::fast();
    let log = AppLog::new(&t.runtime, FLOW);
    log.start().unwrap();
    let threads = 8;
    let per_thread = 15;
    let barrier = Barrier::new(threads);
    let sequences: BTreeSet<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    (0..per_thread)
                        .map(|i| {
                            log.with_retry_policy(patient_retry())
                                .append("shared", json!([thread, i]))
                                .unwrap()
                                .sequence
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let expected: BTreeSet<u64> = (1..=(threads * per_thread) as u64).collect();
    assert_eq!(sequences, expected);
    assert_eq!(log.page("shared", "current").unwrap().entries.len(), 20);
}
