//! Paging the subscriber archive: one chunk a page, newest record first, each page naming
//! the next older one. The main scenario is the Dex Go integration test
//! `TestSequentiallyChunkedAttributeMapArchivesAndPagesSubscribers`, step for step.

mod common;

use attrflow::flows::chunked_subscriber::{SubscriberPage, FLOW_ID, SUBSCRIBER_CHUNKS_MAP};
use attrflow::Error;
use common::{expected_subscriber, page_via_rpc, register_in_order, sequences, TestStore};
use serde_json::{json, Value};

const FIRST_ARCHIVE: &str = "00000000000000000001";
const SECOND_ARCHIVE: &str = "00000000000000000101";
const NEVER_WRITTEN_ARCHIVE: &str = "00000000000000000301";

/// Sequences `from` down to `to`, as a newest-first page lists them.
fn newest_first(from: u64, to: u64) -> Vec<u64> {
    (to..=from).rev().collect()
}

#[test]
fn a_page_passes_its_stored_subscribers_on_as_the_typed_page_would_encode_them() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    for n in 1..=150 {
        let id = format!("s-{n} \"quoted\" \u{00e9}\u{1F600}\t");
        archive.register(&id, &format!("{id}@example.com")).unwrap();
    }
    for token in ["current", FIRST_ARCHIVE] {
        // The output, as JSON, is the typed page's, whatever the order of its keys.
        let output = page_via_rpc(&t.runtime, FLOW_ID, token, token).unwrap();
        let page = archive.page(token).unwrap();
        assert_eq!(output, serde_json::to_value(&page).unwrap());
        assert_eq!(
            serde_json::from_value::<SubscriberPage>(output).unwrap(),
            page
        );
    }
}

#[test]
fn a_started_archive_has_an_empty_current_page_and_no_older_page() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();

    for token in ["current", ""] {
        let page = archive.page(token).unwrap();
        assert_eq!(page.page_token, "current", "token {token:?}");
        assert!(page.subscribers.is_empty(), "token {token:?}");
        assert_eq!(page.next_page_token, "", "token {token:?}");
    }
}

#[test]
fn two_hundred_and_one_subscribers_page_back_as_one_open_and_two_archived_chunks() {
    let t = TestStore::new();
    let archive = t.archive();
    archive.start().unwrap();
    assert!(archive.page("current").unwrap().subscribers.is_empty());

    register_in_order(&archive, 1..=201);

    let current = archive.page("current").unwrap();
    assert_eq!(current.page_token, "current");
    assert_eq!(current.subscribers, vec![expected_subscriber(201)]);
    assert_eq!(current.next_page_token, SECOND_ARCHIVE);

    let second = archive.page(&current.next_page_token).unwrap();
    assert_eq!(second.page_token, SECOND_ARCHIVE);
    assert_eq!(second.subscribers.len(), 100);
    assert_eq!(second.subscribers[0], expected_subscriber(200));
    assert_eq!(second.subscribers[99], expected_subscriber(101));
    assert_eq!(sequences(&second), newest_first(200, 101));
    assert_eq!(second.next_page_token, FIRST_ARCHIVE);

    let first = archive.page(&second.next_page_token).unwrap();
    assert_eq!(first.page_token, FIRST_ARCHIVE);
    assert_eq!(first.subscribers.len(), 100);
    assert_eq!(first.subscribers[0], expected_subscriber(100));
    assert_eq!(first.subscribers[99], expected_subscriber(1));
    assert_eq!(sequences(&first), newest_first(100, 1));
    assert_eq!(first.next_page_token, "");

    let missing = archive.page(NEVER_WRITTEN_ARCHIVE).unwrap_err();
    assert_eq!(
        missing,
        Error::PageNotFound(format!(
            "subscriber page {NEVER_WRITTEN_ARCHIVE:?} not found"
        ))
    );
    assert_eq!(
        missing.to_string(),
        r#"subscriber page "00000000000000000301" not found"#
    );
}

#[test]
fn raw_rpc_calls_that_load_the_page_per_call_return_camel_case_pages() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=201);

    let current = page_via_rpc(&t.runtime, FLOW_ID, "current", "current").unwrap();
    assert_eq!(
        current,
        json!({
            "pageToken": "current",
            "subscribers": [{
                "sequence": 201,
                "subscriberId": "subscriber-201",
                "deliveryAddress": "subscriber-201@example.com",
            }],
            "nextPageToken": SECOND_ARCHIVE,
        })
    );

    let second = page_via_rpc(&t.runtime, FLOW_ID, SECOND_ARCHIVE, SECOND_ARCHIVE).unwrap();
    let subscribers = second["subscribers"].as_array().unwrap();
    assert_eq!(subscribers.len(), 100);
    assert_eq!(subscribers[0]["sequence"], 200);
    assert_eq!(subscribers[99]["sequence"], 101);
    assert_eq!(second["nextPageToken"], FIRST_ARCHIVE);

    let first = page_via_rpc(&t.runtime, FLOW_ID, FIRST_ARCHIVE, FIRST_ARCHIVE).unwrap();
    let subscribers = first["subscribers"].as_array().unwrap();
    assert_eq!(subscribers.len(), 100);
    assert_eq!(subscribers[0]["sequence"], 100);
    assert_eq!(subscribers[99]["sequence"], 1);
    assert_eq!(first["nextPageToken"], "");

    let missing = page_via_rpc(
        &t.runtime,
        FLOW_ID,
        NEVER_WRITTEN_ARCHIVE,
        NEVER_WRITTEN_ARCHIVE,
    )
    .unwrap_err();
    assert_eq!(
        missing.to_string(),
        r#"subscriber page "00000000000000000301" not found"#
    );
}

#[test]
fn an_empty_token_reads_the_current_page() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=3);

    let by_empty = page_via_rpc(&t.runtime, FLOW_ID, "", "current").unwrap();
    let by_name = page_via_rpc(&t.runtime, FLOW_ID, "current", "current").unwrap();
    assert_eq!(by_empty, by_name);
    assert_eq!(by_empty["pageToken"], "current");
    assert_eq!(archive.page("").unwrap(), archive.page("current").unwrap());
}

#[test]
fn archived_pages_read_the_same_on_every_reread_and_after_later_appends() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=101);

    let first_read = archive.page(FIRST_ARCHIVE).unwrap();
    let stored_first_read = t
        .stored_values(FLOW_ID)
        .remove(&format!("{SUBSCRIBER_CHUNKS_MAP}/{FIRST_ARCHIVE}"))
        .unwrap();
    let reread = archive.page(FIRST_ARCHIVE).unwrap();
    assert_eq!(reread, first_read, "a retry of the same page");

    register_in_order(&archive, 102..=201);
    let after_appends = archive.page(FIRST_ARCHIVE).unwrap();
    assert_eq!(
        after_appends, first_read,
        "after another chunk was archived"
    );
    let stored_after_appends = t
        .stored_values(FLOW_ID)
        .remove(&format!("{SUBSCRIBER_CHUNKS_MAP}/{FIRST_ARCHIVE}"))
        .unwrap();
    assert_eq!(stored_after_appends, stored_first_read);
}

#[test]
fn malformed_tokens_are_rejected_by_the_rpc_and_name_the_token() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();

    for token in ["1", "archive", "00000000000000000002", "Current"] {
        // Load a valid instance so that only the token itself can be at fault.
        let err = page_via_rpc(&t.runtime, FLOW_ID, token, "current").unwrap_err();
        assert_eq!(
            err,
            Error::InvalidPageToken {
                token: token.to_owned()
            }
        );
        assert_eq!(err.to_string(), format!("invalid page token {token:?}"));
        assert_eq!(archive.page(token).unwrap_err(), err, "typed helper");
    }
}

#[test]
fn a_page_whose_chunk_was_not_loaded_is_not_loaded_rather_than_empty() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=101);

    // Without options the RPC plans the token's load (tests/rpc_plans.rs); options that
    // name a load win, so loading another chunk leaves this one unloaded.
    let wrong_chunk_loaded = page_via_rpc(&t.runtime, FLOW_ID, "current", FIRST_ARCHIVE);
    assert_eq!(
        wrong_chunk_loaded.unwrap_err(),
        Error::AttributeMapNotLoaded {
            physical_name: format!("{SUBSCRIBER_CHUNKS_MAP}/current")
        }
    );
}

#[test]
fn reading_a_page_writes_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=101);
    let before: Vec<(String, Value)> = t.stored_values(FLOW_ID).into_iter().collect();

    archive.page("current").unwrap();
    archive.page(FIRST_ARCHIVE).unwrap();
    archive.page(SECOND_ARCHIVE).unwrap_err();

    let after: Vec<(String, Value)> = t.stored_values(FLOW_ID).into_iter().collect();
    assert_eq!(after, before);
}
