//! A commit that fails at any point (before the rows are written, after only the first,
//! before `COMMIT`, inside SQLite's `COMMIT`) leaves the store exactly as it was, holds no
//! lock, and the same call succeeds when retried; a commit whose success the caller never
//! heard of (the fault after `COMMIT`) is stored once, whole. Faults are injected at chosen
//! points, so these cases are proven without timing luck; around the chunk rollover too,
//! where one append writes three rows.
//!
//! Needs `--features fault-injection`.

mod common;

use std::collections::BTreeMap;

use attrflow::flows::chunked_subscriber::{Subscriber, FLOW_ID};
use attrflow::store::fault::FaultPoint;
use attrflow::Error;
use common::invariants::assert_archive_sound;
use common::seeded_rng::SeededRng;
use common::{delivery_address, expected_subscriber, register_in_order, subscriber_id, TestStore};

/// Appends before the fault, chosen so the failing append is an ordinary one (50), the last
/// of a chunk (100) and the rollover append (101).
const FAULTED_APPENDS: [u64; 3] = [50, 100, 101];

fn is_storage(error: &Error) -> bool {
    matches!(error, Error::Storage(_))
}

#[test]
fn a_commit_failing_anywhere_before_it_is_durable_leaves_nothing_and_the_retry_succeeds() {
    for point in FaultPoint::ALL
        .into_iter()
        .filter(|p| *p != FaultPoint::AfterCommit)
    {
        for n in FAULTED_APPENDS {
            let t = TestStore::sqlite_fast();
            let archive = t.archive();
            archive.start().unwrap();
            register_in_order(&archive, 1..n);
            let before = t.stored_values(FLOW_ID);

            t.store.sqlite().faults().fail_at(point, 0);
            let failed = archive.register(&subscriber_id(n), &delivery_address(n));
            assert!(
                failed.as_ref().is_err_and(is_storage),
                "append {n}, fault {point}: {failed:?}"
            );
            assert_eq!(
                t.store.sqlite().faults().fired(),
                1,
                "append {n}, fault {point}"
            );
            assert_eq!(
                t.stored_values(FLOW_ID),
                before,
                "append {n}, fault {point}: the store changed"
            );
            assert_eq!(t.held_locks(), 0);

            register_in_order(&archive, n..=n);
            let acked: BTreeMap<u64, Subscriber> =
                (1..=n).map(|k| (k, expected_subscriber(k))).collect();
            let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
            assert_eq!(summary.subscribers.len() as u64, n);
        }
    }
}

#[test]
fn a_commit_the_caller_never_heard_of_is_stored_once_and_whole() {
    for n in FAULTED_APPENDS {
        let t = TestStore::sqlite_fast();
        let archive = t.archive();
        archive.start().unwrap();
        register_in_order(&archive, 1..n);

        t.store
            .sqlite()
            .faults()
            .fail_at(FaultPoint::AfterCommit, 0);
        let unheard = archive.register(&subscriber_id(n), &delivery_address(n));
        assert!(unheard.as_ref().is_err_and(is_storage), "{unheard:?}");
        assert_eq!(t.held_locks(), 0);

        let acked: BTreeMap<u64, Subscriber> =
            (1..=n).map(|k| (k, expected_subscriber(k))).collect();
        assert_archive_sound(&t.path, FLOW_ID, &acked);
        register_in_order(&archive, n + 1..=n + 1);
    }
}

#[test]
fn a_failed_start_creates_no_flow_and_the_retry_starts_it() {
    for point in [
        FaultPoint::BeforeWrites,
        FaultPoint::AfterFirstWrite,
        FaultPoint::AtCommit,
    ] {
        let t = TestStore::sqlite_fast();
        t.store.sqlite().faults().fail_at(point, 0);
        let failed = t.archive().start();
        assert!(
            failed.as_ref().is_err_and(is_storage),
            "{point}: {failed:?}"
        );
        assert!(t.flow(FLOW_ID).is_none(), "{point}: a flow was created");
        assert!(t.stored_values(FLOW_ID).is_empty());
        t.archive().start().unwrap();
        register_in_order(&t.archive(), 1..=1);
    }
}

/// Random faults over 600 appends (six rollovers): every acknowledged append is stored once
/// under its sequence, every refused one is absent or (after the commit) stored once.
#[test]
fn random_faults_over_many_rollovers_keep_every_invariant() {
    let mut rng = SeededRng::from_env_or_clock("random_faults_over_many_rollovers");
    let t = TestStore::sqlite_fast();
    let archive = t.archive();
    archive.start().unwrap();
    let mut acked = BTreeMap::new();
    let mut unheard = 0;
    for k in 1..=600u64 {
        if rng.in_range(0..=3) == 0 {
            let point = FaultPoint::ALL[rng.in_range(0..=4) as usize];
            t.store.sqlite().faults().fail_at(point, 0);
        }
        let id = format!("random-{k:04}");
        match archive.register(&id, &format!("{id}@example.com")) {
            Ok(subscriber) => {
                acked.insert(subscriber.sequence, subscriber);
            }
            Err(Error::Storage(message)) if message.contains("after commit") => unheard += 1,
            Err(Error::Storage(_)) => {}
            Err(other) => panic!("append {k}: {other:?}"),
        }
        t.store.sqlite().faults().clear();
    }
    let summary = assert_archive_sound(&t.path, FLOW_ID, &acked);
    assert_eq!(
        summary.subscribers.len(),
        acked.len() + unheard,
        "exactly the acknowledged appends and the unheard commits are stored"
    );
    assert_eq!(t.held_locks(), 0);
}
