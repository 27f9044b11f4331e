//! The follow cursor (`attrflow::flows::follow`), on the backend under test: it delivers
//! every record once, oldest first, resuming exactly after the last record it delivered:
//! across chunk boundaries, across a chunk-size change and across a trim of chunks it
//! already read. When the next record it needs was trimmed it fails with `PageTrimmed`
//! and keeps its place; opened from the start, it begins at the oldest retained record.
//! It keeps to the run it first read. Nothing here asserts how long anything took.

mod common;

use std::time::Duration;

use attrflow::chunked_log::{Trim, MAX_TAIL_TIMEOUT};
use attrflow::flows::app_log::AppLog;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, FLOW_TYPE};
use attrflow::flows::follow::FollowCursor;
use attrflow::{Error, IdReusePolicy, StartFlowOptions};
use common::{expected_subscriber, register_in_order, TestStore};
use serde_json::json;

/// Steps `cursor` until it has delivered sequence `last`; every sequence delivered, in order.
fn follow_until(archive: &SubscriberArchive<'_>, cursor: &mut FollowCursor, last: u64) -> Vec<u64> {
    let mut delivered = Vec::new();
    while cursor.after() < last {
        for subscriber in archive.follow_next(cursor, MAX_TAIL_TIMEOUT).unwrap() {
            assert_eq!(subscriber, expected_subscriber(subscriber.sequence));
            delivered.push(subscriber.sequence);
        }
    }
    delivered
}

#[test]
fn a_cursor_resumes_exactly_after_its_last_delivery_across_chunk_boundaries() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=250);
    // 7 a step: steps end inside chunks and straddle the boundaries at 100 and 200.
    let mut cursor = FollowCursor::new(0, 7, None).unwrap();
    assert_eq!(
        follow_until(&archive, &mut cursor, 250),
        (1..=250).collect::<Vec<_>>()
    );
    assert_eq!(cursor.after(), 250);
    // Caught up: a step that times out delivers nothing and keeps the place.
    assert!(archive
        .follow_next(&mut cursor, Duration::ZERO)
        .unwrap()
        .is_empty());
    assert_eq!(cursor.after(), 250);
    register_in_order(&archive, 251..=260);
    assert_eq!(
        follow_until(&archive, &mut cursor, 260),
        (251..=260).collect::<Vec<_>>()
    );
    // A cursor opened after a given sequence starts just after it.
    let mut cursor = FollowCursor::new(99, 3, None).unwrap();
    let first = archive.follow_next(&mut cursor, Duration::ZERO).unwrap();
    let sequences: Vec<u64> = first.iter().map(|s| s.sequence).collect();
    assert_eq!(sequences, vec![100, 101, 102]);
}

#[test]
fn a_cursor_resumes_across_a_chunk_size_change() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=150);
    let mut cursor = FollowCursor::new(0, 30, None).unwrap();
    assert_eq!(
        follow_until(&archive, &mut cursor, 120),
        (1..=120).collect::<Vec<_>>()
    );
    // From the next boundary (200) on, chunks hold 7 subscribers.
    archive.change_chunk_size(7).unwrap();
    register_in_order(&archive, 151..=240);
    assert_eq!(
        follow_until(&archive, &mut cursor, 240),
        (121..=240).collect::<Vec<_>>()
    );
}

#[test]
fn a_trim_behind_the_cursor_changes_nothing_and_a_trim_past_it_is_page_trimmed() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=350);
    let mut behind = FollowCursor::new(0, 50, None).unwrap();
    assert_eq!(
        follow_until(&archive, &mut behind, 250),
        (1..=250).collect::<Vec<_>>()
    );
    let mut lagging = FollowCursor::new(0, 50, None).unwrap();
    assert_eq!(
        follow_until(&archive, &mut lagging, 50),
        (1..=50).collect::<Vec<_>>()
    );
    // Drops the chunks 1–100 and 101–200.
    archive.trim(Trim::DropBefore(201)).unwrap();
    // The cursor past the trim goes on after its last delivery, not at the oldest record.
    assert_eq!(
        follow_until(&archive, &mut behind, 350),
        (251..=350).collect::<Vec<_>>()
    );
    // The lagging cursor's next record (51) is gone: a typed error naming the oldest
    // retained sequence, and the cursor keeps its place.
    let trimmed = archive
        .follow_next(&mut lagging, Duration::ZERO)
        .unwrap_err();
    assert!(
        matches!(
            trimmed,
            Error::PageTrimmed {
                oldest_sequence: 201,
                ..
            }
        ),
        "{trimmed:?}"
    );
    assert_eq!(lagging.after(), 50);
    // A follower that accepts the gap opens a cursor after the oldest retained sequence.
    let mut resumed = FollowCursor::new(200, 50, lagging.run_id().map(str::to_owned)).unwrap();
    assert_eq!(
        follow_until(&archive, &mut resumed, 350),
        (201..=350).collect::<Vec<_>>()
    );
    // Opened from the start, a cursor begins at the oldest retained record.
    let mut from_start = FollowCursor::new(0, 50, None).unwrap();
    assert_eq!(
        follow_until(&archive, &mut from_start, 350),
        (201..=350).collect::<Vec<_>>()
    );
}

#[test]
fn a_cursor_keeps_to_the_run_it_first_read() {
    let t = TestStore::fast();
    let archive = t.archive();
    let run = archive.start().unwrap();
    register_in_order(&archive, 1..=3);
    let mut cursor = FollowCursor::new(0, 10, None).unwrap();
    assert_eq!(follow_until(&archive, &mut cursor, 3), vec![1, 2, 3]);
    assert_eq!(cursor.run_id(), Some(run.as_str()));
    // Started again: a new run, whose sequences count from 1 again.
    let options = StartFlowOptions::new().id_reuse_policy(IdReusePolicy::TerminateIfRunning);
    t.runtime.start_flow(FLOW_TYPE, FLOW_ID, &options).unwrap();
    register_in_order(&archive, 1..=5);
    let error = archive
        .follow_next(&mut cursor, Duration::ZERO)
        .unwrap_err();
    assert!(matches!(error, Error::RunNotCurrent { .. }), "{error:?}");
    assert_eq!(cursor.after(), 3);
}

#[test]
fn an_app_log_cursor_follows_one_log_across_chunks_and_trims() {
    let t = TestStore::fast();
    let logs = AppLog::new(&t.runtime, "app");
    logs.start().unwrap();
    let records: Vec<_> = (1..=230).map(|n| json!({ "n": n })).collect();
    logs.append_batch("audit", records, None).unwrap();
    logs.append("other", json!("not followed")).unwrap();
    let mut cursor = FollowCursor::new(0, 40, None).unwrap();
    let mut delivered = Vec::new();
    while cursor.after() < 150 {
        delivered.extend(
            logs.follow_next("audit", &mut cursor, MAX_TAIL_TIMEOUT)
                .unwrap(),
        );
    }
    // Drop the first chunk (1–100): behind the cursor.
    logs.trim("audit", Trim::DropBefore(101)).unwrap();
    while cursor.after() < 230 {
        delivered.extend(
            logs.follow_next("audit", &mut cursor, MAX_TAIL_TIMEOUT)
                .unwrap(),
        );
    }
    let sequences: Vec<u64> = delivered.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=230).collect::<Vec<_>>());
    assert!(delivered.iter().all(|e| e.record["n"] == json!(e.sequence)));
    // From the start of the trimmed log: its oldest retained entry.
    let mut from_start = FollowCursor::new(0, 10, None).unwrap();
    let first = logs
        .follow_next("audit", &mut from_start, Duration::ZERO)
        .unwrap();
    assert_eq!(first[0].sequence, 101);
}
