//! Chunk-size migration: an archive moved from 100 to 50 to 125 subscribers per chunk keeps
//! every token it ever issued valid and naming the same page, walks its pages across the
//! changes without gaps or overlaps, and accepts exactly the boundaries of every layout.

mod common;

use attrflow::chunked_log::{archive_token, ChunkLayout, MAX_CHUNK_SIZE};
use attrflow::flows::chunked_subscriber::{SubscriberPage, FLOW_ID};
use attrflow::Error;
use common::{all_subscribers, expected_subscriber, register_in_order, sequences, TestStore};
use serde_json::json;

/// The pages of the migrated archive, newest first: (token, newest, oldest sequence).
const GOLDEN_PAGES: [(&str, u64, u64); 9] = [
    ("current", 801, 801),
    ("00000000000000000676", 800, 676),
    ("00000000000000000551", 675, 551),
    ("00000000000000000426", 550, 426),
    ("00000000000000000301", 425, 301),
    ("00000000000000000251", 300, 251),
    ("00000000000000000201", 250, 201),
    ("00000000000000000101", 200, 101),
    ("00000000000000000001", 100, 1),
];

fn layout(from_sequence: u64, chunk_size: u64) -> ChunkLayout {
    ChunkLayout {
        from_sequence,
        chunk_size,
    }
}

/// Registers 1..=801 with changes to 50 (asked at 150, mid-chunk) and to 125 (asked at
/// 300, with the open chunk full). Returns pages read before each change.
fn migrate(t: &TestStore) -> Vec<SubscriberPage> {
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=150);
    let before_first_change = vec![archive.page("00000000000000000001").unwrap()];

    let to_50 = archive.change_chunk_size(50).unwrap();
    assert_eq!(
        to_50.from_sequence, 201,
        "the open chunk 101..200 keeps 100"
    );
    assert_eq!(to_50.layouts, [layout(1, 100), layout(201, 50)]);
    register_in_order(&archive, 151..=300);

    let to_125 = archive.change_chunk_size(125).unwrap();
    assert_eq!(to_125.from_sequence, 301);
    assert_eq!(
        to_125.layouts,
        [layout(1, 100), layout(201, 50), layout(301, 125)]
    );
    register_in_order(&archive, 301..=801);
    before_first_change
}

#[test]
fn old_tokens_keep_their_pages_and_the_walk_crosses_every_layout() {
    let t = TestStore::fast();
    let before = migrate(&t);
    let archive = t.archive();

    assert_eq!(archive.page("00000000000000000001").unwrap(), before[0]);
    let mut token = "current".to_owned();
    for (golden_token, newest, oldest) in GOLDEN_PAGES {
        assert_eq!(token, golden_token);
        let page = archive.page(&token).unwrap();
        assert_eq!(page.page_token, golden_token);
        assert_eq!(
            sequences(&page),
            (oldest..=newest).rev().collect::<Vec<_>>(),
            "page {golden_token}"
        );
        token = page.next_page_token;
    }
    assert_eq!(token, "", "the oldest page names no older one");
    assert_eq!(
        all_subscribers(&archive),
        (1..=801).map(expected_subscriber).collect::<Vec<_>>()
    );
}

#[test]
fn token_validation_accepts_exactly_the_boundaries_of_every_layout() {
    let t = TestStore::fast();
    migrate(&t);
    let archive = t.archive();
    let stored = [1, 101, 201, 251, 301, 426, 551, 676];
    let future = [801, 926, 1051, 1176, 1301];
    for sequence in 1..=1400 {
        let token = archive_token(sequence).unwrap();
        match archive.page(&token) {
            Ok(page) => assert!(stored.contains(&sequence), "{token} gave {page:?}"),
            Err(Error::PageNotFound(message)) => {
                assert!(future.contains(&sequence), "{token}: {message}");
                assert_eq!(message, format!("subscriber page {token:?} not found"));
            }
            Err(Error::InvalidPageToken { token: named }) => {
                assert!(!stored.contains(&sequence) && !future.contains(&sequence));
                assert_eq!(named, token);
            }
            Err(other) => panic!("{token} gave {other:?}"),
        }
    }
}

#[test]
fn the_layout_history_is_stored_in_the_state_and_survives_reopening() {
    let t = TestStore::fast();
    migrate(&t);
    let state = &t.stored_values(FLOW_ID)["subscriber_archive_state"];
    assert_eq!(
        *state,
        json!({
            "nextSequence": 802,
            "latestArchivedChunkToken": "00000000000000000676",
            "layouts": [
                {"fromSequence": 1, "chunkSize": 100},
                {"fromSequence": 201, "chunkSize": 50},
                {"fromSequence": 301, "chunkSize": 125},
            ],
        })
    );
    let t = t.reopen();
    let page = t.archive().page("00000000000000000301").unwrap();
    assert_eq!(page.subscribers.len(), 125);
    assert_eq!(page.next_page_token, "00000000000000000251");
}

#[test]
fn an_archive_that_never_changed_stores_the_seed_state() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=101);
    let state = &t.stored_values(FLOW_ID)["subscriber_archive_state"];
    assert_eq!(
        *state,
        json!({"nextSequence": 102, "latestArchivedChunkToken": "00000000000000000001"})
    );
    let change = archive.change_chunk_size(100).unwrap();
    assert_eq!(
        change.layouts,
        [layout(1, 100)],
        "no change, nothing stored"
    );
    assert_eq!(t.stored_values(FLOW_ID)["subscriber_archive_state"], *state);
}

#[test]
fn an_empty_archive_changes_at_once_and_an_unreached_change_can_be_replaced() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    assert_eq!(archive.change_chunk_size(3).unwrap().from_sequence, 1);
    register_in_order(&archive, 1..=4);
    assert_eq!(
        archive.page("current").unwrap().next_page_token,
        archive_token(1).unwrap()
    );

    assert_eq!(archive.change_chunk_size(5).unwrap().from_sequence, 7);
    let replaced = archive.change_chunk_size(2).unwrap();
    assert_eq!(replaced.layouts, [layout(1, 3), layout(7, 2)]);
    register_in_order(&archive, 5..=9);
    let newest = archive.page("current").unwrap();
    assert_eq!(sequences(&newest), [9]);
    assert_eq!(newest.next_page_token, archive_token(7).unwrap());
    assert_eq!(
        sequences(&archive.page(&archive_token(7).unwrap()).unwrap()),
        [8, 7]
    );
    assert_eq!(
        archive
            .page(&archive_token(4).unwrap())
            .unwrap()
            .next_page_token,
        archive_token(1).unwrap()
    );
}

#[test]
fn invalid_sizes_are_refused_and_change_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=3);
    let before = t.stored_values(FLOW_ID);
    for bad in [0, MAX_CHUNK_SIZE + 1, u64::MAX] {
        assert_eq!(
            archive.change_chunk_size(bad).unwrap_err(),
            Error::InvalidInput(format!(
                "chunk size must be between 1 and {MAX_CHUNK_SIZE}, got {bad}"
            ))
        );
    }
    assert_eq!(t.stored_values(FLOW_ID), before);
    assert_eq!(t.held_locks(), 0);
}

/// The stored-log checks of inspection tools follow the layout history: the migrated
/// archive verifies, and each sequence maps to the token of the page that holds it.
#[test]
fn verify_and_page_tokens_follow_the_layouts() {
    let t = TestStore::fast();
    migrate(&t);
    let values: std::collections::BTreeMap<String, serde_json::Value> = t
        .runtime
        .store()
        .stored_values(FLOW_ID)
        .unwrap()
        .into_iter()
        .map(|(name, json)| (name, serde_json::from_str(&json).unwrap()))
        .collect();
    let log = attrflow::flows::chunked_subscriber::LOG;
    let summary = log.verify(&values).unwrap();
    // Every golden page but `current` is an archive.
    assert_eq!(
        (summary.records, summary.archives),
        (801, GOLDEN_PAGES.len() as u64 - 1)
    );
    for (token, newest, oldest) in GOLDEN_PAGES {
        for sequence in [newest, oldest] {
            assert_eq!(log.page_token_of(&values, sequence).unwrap(), token);
        }
    }
    assert_eq!(log.page_token_of(&values, 5_000).unwrap(), "current");

    let mut broken = values.clone();
    let chunk = "subscriber_chunks/00000000000000000251";
    broken.get_mut(chunk).unwrap()["subscribers"]
        .as_array_mut()
        .unwrap()
        .pop();
    let violation = log.verify(&broken).unwrap_err();
    assert_eq!(violation.location, chunk);
    assert_eq!(
        violation.reason,
        "holds 49 records; its layout's chunk size is 50"
    );
}
