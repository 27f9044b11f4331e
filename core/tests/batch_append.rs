//! `RegisterSubscribers`: a batch crossing several chunk boundaries commits as one
//! transaction, a batch with one bad subscriber stores nothing, and batch sizes are bounded.

mod common;

use attrflow::chunked_log::MAX_BATCH_SIZE;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::FLOW_ID;
use attrflow::Error;
use common::{
    all_subscribers, delivery_address, expected_subscriber, register_in_order, sequences,
    subscriber_id, TestStore,
};

fn batch(numbers: impl IntoIterator<Item = u64>) -> Vec<NewSubscriber> {
    numbers
        .into_iter()
        .map(|n| NewSubscriber::new(subscriber_id(n), delivery_address(n)))
        .collect()
}

#[test]
fn a_batch_fills_and_archives_several_chunks_in_one_call() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=40);
    let registered = archive.register_batch(&batch(41..=390), None).unwrap();
    assert_eq!(
        registered,
        (41..=390).map(expected_subscriber).collect::<Vec<_>>()
    );
    let stored = t.stored_values(FLOW_ID);
    for token in [
        "00000000000000000001",
        "00000000000000000101",
        "00000000000000000201",
    ] {
        assert!(
            stored.contains_key(&format!("subscriber_chunks/{token}")),
            "{token}"
        );
    }
    let newest = archive.page("current").unwrap();
    assert_eq!(sequences(&newest), (301..=390).rev().collect::<Vec<_>>());
    assert_eq!(newest.next_page_token, "00000000000000000201");
    register_in_order(&archive, 391..=391);
    assert_eq!(
        all_subscribers(&archive),
        (1..=391).map(expected_subscriber).collect::<Vec<_>>()
    );
}

#[test]
fn a_batch_crosses_a_chunk_size_change() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=10);
    assert_eq!(archive.change_chunk_size(30).unwrap().from_sequence, 101);
    archive.register_batch(&batch(11..=200), None).unwrap();
    let newest = archive.page("current").unwrap();
    assert_eq!(sequences(&newest), (191..=200).rev().collect::<Vec<_>>());
    assert_eq!(newest.next_page_token, "00000000000000000161");
    assert_eq!(
        all_subscribers(&archive),
        (1..=200).map(expected_subscriber).collect::<Vec<_>>()
    );
}

#[test]
fn one_bad_subscriber_fails_the_whole_batch_and_stores_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=5);
    let before = t.stored_values(FLOW_ID);
    let mut subscribers = batch(6..=305);
    subscribers[249].delivery_address.clear();
    assert_eq!(
        archive.register_batch(&subscribers, None).unwrap_err(),
        Error::InvalidInput("subscribers[249]: deliveryAddress is required".into())
    );
    assert_eq!(t.stored_values(FLOW_ID), before);
    assert_eq!(t.held_locks(), 0);
    register_in_order(&archive, 6..=6);
}

#[test]
fn batch_sizes_are_bounded() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let too_many = batch(1..=MAX_BATCH_SIZE as u64 + 1);
    assert_eq!(
        archive.register_batch(&too_many, None).unwrap_err(),
        Error::InvalidInput(format!(
            "a batch holds at most {MAX_BATCH_SIZE} records, got {}",
            MAX_BATCH_SIZE + 1
        ))
    );
    assert_eq!(
        archive.register_batch(&[], None).unwrap_err(),
        Error::InvalidInput("a batch needs at least one record".into())
    );
    assert!(archive.page("current").unwrap().subscribers.is_empty());
    let most = archive
        .register_batch(&too_many[..MAX_BATCH_SIZE], None)
        .unwrap();
    assert_eq!(most.len(), MAX_BATCH_SIZE);
    assert_eq!(
        archive.page("current").unwrap().next_page_token,
        "00000000000000000801"
    );
}
