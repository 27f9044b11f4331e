//! Tailing a chunked log, on the backend under test: a tail returns at once when records
//! after its sequence exist, returns nothing when its timeout passes, wakes for records
//! appended by another thread of the process and by another process, and, resumed from
//! the last sequence it returned, delivers every record once, in order. Pinned to the run
//! it read, a tail of a log whose flow was started again since fails instead of reading
//! the new run's records at the old run's position; an inspection's read forward (what
//! `attrflow export` uses) reads a stopped flow's log and keeps to its run the same way, as
//! does an inspection's page (what `attrflow page` walks).
//!
//! The test binary runs itself again as the appending process (the `#[ignore]`d test at
//! the end, selected with `--exact … --ignored`), handing it the store URL in an
//! environment variable. Nothing here asserts how long anything took.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::thread;
use std::time::Duration;

use attrflow::chunked_log::MAX_TAIL_TIMEOUT;
use attrflow::flows::app_log::{AppLog, FLOW_TYPE as APP_LOG_FLOW};
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, FLOW_TYPE};
use attrflow::{Error, IdReusePolicy, Runtime, StartFlowOptions, StopType};
use common::{
    expected_subscriber, register_in_order, register_retrying, spawn_test_process, Backend,
    TestStore,
};
use serde_json::json;

const APPENDER_TEST: &str = "child_appends_to_the_tailed_archive";
const URL_ENV: &str = "ATTRFLOW_TEST_TAIL_URL";
const FIRST_ENV: &str = "ATTRFLOW_TEST_TAIL_FIRST";
const LAST_ENV: &str = "ATTRFLOW_TEST_TAIL_LAST";
const READY_MARKER: &str = "<child ready>";

/// Tails the archive from `after` until it has received sequence `last`, resuming each
/// time from the last sequence received; returns every sequence received, in order.
fn tail_until(archive: &SubscriberArchive<'_>, mut after: u64, last: u64) -> Vec<u64> {
    let mut received = Vec::new();
    while after < last {
        let read = archive.tail(after, 7, MAX_TAIL_TIMEOUT, None).unwrap();
        for subscriber in &read.subscribers {
            assert_eq!(*subscriber, expected_subscriber(subscriber.sequence));
            received.push(subscriber.sequence);
        }
        after = read.next_sequence - 1;
    }
    received
}

#[test]
fn a_tail_returns_what_is_there_at_once_and_nothing_on_timeout() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=5);
    // With records there, even the longest timeout returns at once with them.
    let read = archive.tail(2, 10, MAX_TAIL_TIMEOUT, None).unwrap();
    let sequences: Vec<u64> = read.subscribers.iter().map(|s| s.sequence).collect();
    assert_eq!((sequences, read.next_sequence), (vec![3, 4, 5], 6));

    let empty = archive
        .tail(5, 10, Duration::from_millis(20), None)
        .unwrap();
    assert!(empty.subscribers.is_empty());
    assert_eq!(empty.next_sequence, 6);
    let empty = archive.tail(5, 10, Duration::ZERO, None).unwrap();
    assert!(empty.subscribers.is_empty());
}

/// Starts the flow `flow_id` of `flow_type` again, ending its running run; returns the
/// new run's ID.
fn start_again(runtime: &Runtime, flow_type: &str, flow_id: &str) -> String {
    let options = StartFlowOptions::new().id_reuse_policy(IdReusePolicy::TerminateIfRunning);
    runtime.start_flow(flow_type, flow_id, &options).unwrap()
}

/// The runs a [`Error::RunNotCurrent`] names: the one asked for and the flow's.
fn runs_named(result: attrflow::Result<impl std::fmt::Debug>) -> (String, String) {
    match result {
        Err(Error::RunNotCurrent {
            run_id,
            current_run_id,
            ..
        }) => (run_id, current_run_id),
        other => panic!("expected RunNotCurrent, got {other:?}"),
    }
}

#[test]
fn a_tail_pinned_to_its_run_refuses_the_run_that_replaced_it() {
    let t = TestStore::fast();
    let archive = t.archive();
    let first = archive.start().unwrap();
    register_in_order(&archive, 1..=5);
    let read = archive.tail(0, 10, Duration::ZERO, None).unwrap();
    assert_eq!(
        (read.subscribers.len(), read.run_id.as_str()),
        (5, first.as_str())
    );
    assert_eq!(archive.read_from(1, 2, Some(&first)).unwrap().run_id, first);

    // A new run counts its sequences from 1 again: sequence 6 of the new run is not the
    // record after the old run's 5.
    let second = start_again(&t.runtime, FLOW_TYPE, FLOW_ID);
    register_in_order(&archive, 1..=7);
    let runs = (first.clone(), second.clone());
    assert_eq!(
        runs_named(archive.tail(5, 10, MAX_TAIL_TIMEOUT, Some(&first))),
        runs
    );
    assert_eq!(runs_named(archive.read_from(6, 10, Some(&first))), runs);

    // Unpinned, a tail reads the flow's run and says which; pinned to it, it reads on.
    let read = archive.tail(5, 10, Duration::ZERO, None).unwrap();
    let sequences: Vec<u64> = read.subscribers.iter().map(|s| s.sequence).collect();
    assert_eq!(
        (sequences, read.run_id.as_str()),
        (vec![6, 7], second.as_str())
    );
    let read = archive.tail(0, 10, Duration::ZERO, Some(&second)).unwrap();
    assert_eq!(read.subscribers.len(), 7);
}

#[test]
fn a_waiting_tail_pinned_to_its_run_fails_when_the_flow_is_started_again() {
    let t = TestStore::fast();
    let archive = t.archive();
    let first = archive.start().unwrap();
    register_in_order(&archive, 1..=3);
    let (second, waited) = thread::scope(|scope| {
        let waiting = scope.spawn(|| archive.tail(3, 10, MAX_TAIL_TIMEOUT, Some(&first)));
        let second = start_again(&t.runtime, FLOW_TYPE, FLOW_ID);
        // The new run's appends wake the tail; none of them is delivered as the old
        // run's fourth and later records.
        register_in_order(&archive, 1..=5);
        (second, waiting.join().unwrap())
    });
    assert_eq!(runs_named(waited), (first, second));
}

#[test]
fn an_app_log_tail_pinned_to_its_run_refuses_the_run_that_replaced_it() {
    let t = TestStore::fast();
    let logs = AppLog::new(&t.runtime, "app");
    let first = logs.start().unwrap();
    logs.append("audit", json!({"n": 1})).unwrap();
    let read = logs.tail("audit", 0, 10, Duration::ZERO, None).unwrap();
    assert_eq!(read.run_id, first);
    let second = start_again(&t.runtime, APP_LOG_FLOW, "app");
    logs.append("audit", json!({"n": 1})).unwrap();
    logs.append("audit", json!({"n": 2})).unwrap();
    let runs = (first.clone(), second.clone());
    assert_eq!(
        runs_named(logs.tail("audit", 1, 10, Duration::ZERO, Some(&first))),
        runs
    );
    assert_eq!(
        runs_named(logs.read_from("audit", 2, 10, Some(&first))),
        runs
    );
    let read = logs
        .tail("audit", 1, 10, Duration::ZERO, Some(&second))
        .unwrap();
    assert_eq!((read.entries.len(), read.run_id), (1, second));
}

#[test]
fn an_inspection_reads_a_stopped_log_forward_and_by_pages_and_keeps_to_its_run() {
    let t = TestStore::fast();
    let archive = t.archive();
    let logs = AppLog::new(&t.runtime, "app");
    let first = archive.start().unwrap();
    let first_logs = logs.start().unwrap();
    register_in_order(&archive, 1..=4);
    logs.append("audit", json!({"n": 1})).unwrap();
    for flow_id in [FLOW_ID, "app"] {
        t.runtime
            .stop_flow(flow_id, StopType::Cancel, None)
            .unwrap();
    }
    // The flows' RPCs no longer serve their logs; an inspection still reads them forward.
    assert!(matches!(
        archive.read_from(1, 10, None),
        Err(Error::FlowNotActive { .. })
    ));
    let read = archive.inspect_read_from(2, 10, Some(&first)).unwrap();
    let sequences: Vec<u64> = read.subscribers.iter().map(|s| s.sequence).collect();
    assert_eq!((sequences, read.run_id), (vec![2, 3, 4], first.clone()));
    let read = logs.inspect_read_from("audit", 1, 10, None).unwrap();
    assert_eq!((read.entries.len(), read.run_id), (1, first_logs.clone()));
    let page = archive.inspect_page("current", Some(&first)).unwrap();
    assert_eq!(page.subscribers.len(), 4);
    let page = logs
        .inspect_page("audit", "current", Some(&first_logs))
        .unwrap();
    assert_eq!(page.entries.len(), 1);

    // Pinned to the stopped run, an inspection of the run that replaced it is refused.
    let second = start_again(&t.runtime, FLOW_TYPE, FLOW_ID);
    let second_logs = start_again(&t.runtime, APP_LOG_FLOW, "app");
    let runs = (first.clone(), second.clone());
    assert_eq!(
        runs_named(archive.inspect_read_from(1, 10, Some(&first))),
        runs
    );
    assert_eq!(
        runs_named(archive.inspect_page("current", Some(&first))),
        runs
    );
    assert_eq!(
        runs_named(logs.inspect_page("audit", "current", Some(&first_logs))),
        (first_logs, second_logs)
    );
    assert!(archive
        .inspect_read_from(1, 10, Some(&second))
        .unwrap()
        .subscribers
        .is_empty());
    let page = archive.inspect_page("current", Some(&second)).unwrap();
    assert!(page.subscribers.is_empty());
}

#[test]
fn a_tail_refuses_bad_values_naming_them() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let refused = |result: attrflow::Result<_>| match result {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        refused(archive.tail(0, 10, MAX_TAIL_TIMEOUT + Duration::from_secs(1), None)),
        "timeout must be from 0 to 60 seconds, not 61 seconds"
    );
    assert_eq!(
        refused(archive.tail(u64::MAX, 10, Duration::ZERO, None)),
        format!("after must be from 0 to {}, not {}", u64::MAX - 1, u64::MAX)
    );
    assert_eq!(
        refused(archive.tail(0, 0, Duration::ZERO, None)),
        "limit must be from 1 to 1000, not 0"
    );
}

#[test]
fn a_tail_wakes_for_appends_of_another_thread_and_never_repeats_a_record() {
    const LAST: u64 = 250;
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let received = thread::scope(|scope| {
        scope.spawn(|| {
            for n in 1..=LAST {
                register_retrying(&archive, n);
            }
        });
        tail_until(&archive, 0, LAST)
    });
    assert_eq!(received, (1..=LAST).collect::<Vec<_>>());
}

#[test]
fn a_tail_wakes_for_appends_through_another_runtime_on_the_same_store() {
    tail_through_another_runtime(TestStore::fast());
}

#[test]
fn a_tail_wakes_for_appends_through_another_runtime_with_notify_on() {
    if let Some(t) = notifying_postgres_store() {
        tail_through_another_runtime(t);
    }
}

/// A PostgreSQL store whose writers `NOTIFY` and whose tails `LISTEN` (`notify=on`), when
/// PostgreSQL is the backend under test.
fn notifying_postgres_store() -> Option<TestStore> {
    (Backend::under_test() == Backend::Postgres)
        .then(|| TestStore::fast_with_postgres_parameters("notify=on"))
}

fn tail_through_another_runtime(t: TestStore) {
    // Another runtime's commits do not raise this runtime's commit signal: the tail learns
    // of them from the store (SQLite's data_version watch; on PostgreSQL a LISTEN with
    // `notify=on`, else reading again).
    const LAST: u64 = 60;
    let archive = t.archive();
    archive.start().unwrap();
    let (_other_store, other_runtime) = t.open_again();
    let other = SubscriberArchive::new(&other_runtime, FLOW_ID);
    let received = thread::scope(|scope| {
        scope.spawn(|| {
            for n in 1..=LAST {
                register_retrying(&other, n);
            }
        });
        tail_until(&archive, 0, LAST)
    });
    assert_eq!(received, (1..=LAST).collect::<Vec<_>>());
}

#[test]
fn a_tail_sees_the_appends_of_another_process() {
    tail_another_process(TestStore::fast());
}

#[test]
fn a_tail_sees_the_appends_of_another_process_with_notify_on() {
    if let Some(t) = notifying_postgres_store() {
        tail_another_process(t);
    }
}

fn tail_another_process(t: TestStore) {
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=10);
    let mut child = spawn_test_process(
        APPENDER_TEST,
        &[(URL_ENV, &t.url), (FIRST_ENV, "11"), (LAST_ENV, "160")],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != READY_MARKER {
        line.clear();
        assert_ne!(
            stdout.read_line(&mut line).unwrap(),
            0,
            "the child ended early"
        );
    }
    writeln!(child.stdin.take().unwrap(), "go").unwrap();

    let received = tail_until(&archive, 10, 160);
    assert_eq!(received, (11..=160).collect::<Vec<_>>());
    assert!(child.wait().unwrap().success());
}

#[test]
fn an_app_log_tail_waits_for_its_own_log_only() {
    let t = TestStore::fast();
    let logs = AppLog::new(&t.runtime, "app");
    logs.start().unwrap();
    logs.append("audit", json!({"n": 1})).unwrap();
    let read = thread::scope(|scope| {
        scope.spawn(|| {
            logs.append("chat", json!({"n": 1})).unwrap();
            logs.append("audit", json!({"n": 2})).unwrap();
        });
        let mut read = logs.tail("audit", 1, 10, MAX_TAIL_TIMEOUT, None).unwrap();
        while read.entries.is_empty() {
            read = logs.tail("audit", 1, 10, MAX_TAIL_TIMEOUT, None).unwrap();
        }
        read
    });
    assert_eq!(read.entries.len(), 1);
    assert_eq!(read.entries[0].record, json!({"n": 2}));
    assert_eq!(read.next_sequence, 3);
}

/// The appending process of [`a_tail_sees_the_appends_of_another_process`]: opens the
/// store, says it is ready, waits for a line on stdin, then registers its range.
#[test]
#[ignore = "run by a_tail_sees_the_appends_of_another_process as a child process"]
fn child_appends_to_the_tailed_archive() {
    let (Ok(url), Ok(first), Ok(last)) = (
        std::env::var(URL_ENV),
        std::env::var(FIRST_ENV),
        std::env::var(LAST_ENV),
    ) else {
        return;
    };
    let runtime = Runtime::open(&url).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    println!("{READY_MARKER}");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    for n in first.parse::<u64>().unwrap()..=last.parse().unwrap() {
        register_retrying(&archive, n);
    }
}
