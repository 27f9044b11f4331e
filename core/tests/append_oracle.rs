//! Threads in several processes append at once, to one flow and spread over many flows,
//! while a reader pages through every flow again and again. A list-append oracle checks
//! the outcome:
//! - every acknowledged append is stored exactly once, under the sequence it was given;
//! - every read of a flow is a dense prefix 1..=n (no reader sees k+1 without k);
//! - a later read extends an earlier one and never changes it (nothing acknowledged moves
//!   or disappears).
//!
//! The test binary runs itself again as the appending processes (the `#[ignore]`d test).
//! It runs on the backend under test: an SQLite file, or a PostgreSQL schema in the
//! PostgreSQL pass of `make test`, read back with a PostgreSQL row reader.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use attrflow::flows::chunked_subscriber::{Subscriber, SubscriberArchive};
use attrflow::Runtime;
use common::invariants::assert_store_archive_sound;
use common::{all_subscribers, retry_lock_conflicts, TestStore};

const CHILD_TEST: &str = "child_process_appends_from_threads";
const STORE_URL_ENV: &str = "ATTRFLOW_TEST_ORACLE_STORE";
const CHILD_INDEX_ENV: &str = "ATTRFLOW_TEST_ORACLE_CHILD";
const FLOWS_ENV: &str = "ATTRFLOW_TEST_ORACLE_FLOWS";
const ACK_MARKER: &str = "<ack>";

const PROCESSES: u64 = 3;
const THREADS_PER_PROCESS: u64 = 4;
const APPENDS_PER_THREAD: u64 = 40;
const TOTAL: u64 = PROCESSES * THREADS_PER_PROCESS * APPENDS_PER_THREAD;

/// What one reader has seen of each flow so far.
#[derive(Default)]
struct ReadOracle {
    seen: BTreeMap<String, Vec<Subscriber>>,
    reads: u64,
}

impl ReadOracle {
    /// Checks one full read of `flow` (oldest first) against the rules and the reads before.
    fn observe(&mut self, flow: &str, read: Vec<Subscriber>) {
        for (place, subscriber) in (1..).zip(&read) {
            assert_eq!(
                subscriber.sequence, place,
                "a read of {flow:?} is not dense: {} at place {place}",
                subscriber.sequence
            );
        }
        let earlier = self.seen.entry(flow.to_owned()).or_default();
        assert!(
            read.len() >= earlier.len() && read[..earlier.len()] == earlier[..],
            "a read of {flow:?} ({} records) does not extend the earlier one ({})",
            read.len(),
            earlier.len()
        );
        *earlier = read;
        self.reads += 1;
    }
}

/// Runs the children against `flows`, reading all the while, and checks the oracle.
fn run_oracle(flows: &[String]) {
    let t = TestStore::fast();
    for flow in flows {
        SubscriberArchive::new(&t.runtime, flow).start().unwrap();
    }
    let flow_list = flows.join(",");
    let children: Vec<_> = (0..PROCESSES)
        .map(|child| {
            common::spawn_test_process(
                CHILD_TEST,
                &[
                    (STORE_URL_ENV, &t.url),
                    (CHILD_INDEX_ENV, &child.to_string()),
                    (FLOWS_ENV, &flow_list),
                ],
            )
        })
        .collect();

    let done = AtomicBool::new(false);
    let (acked, oracle) = thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut oracle = ReadOracle::default();
            while !done.load(Ordering::SeqCst) {
                for flow in flows {
                    oracle.observe(
                        flow,
                        all_subscribers(&SubscriberArchive::new(&t.runtime, flow)),
                    );
                }
            }
            oracle
        });
        let mut acked: BTreeMap<String, BTreeMap<u64, Subscriber>> = BTreeMap::new();
        for mut child in children {
            let stdout = BufReader::new(child.stdout.take().unwrap());
            for line in stdout.lines() {
                let line = line.unwrap();
                let Some((_, ack)) = line.split_once(ACK_MARKER) else {
                    continue;
                };
                let (flow, json) = ack.split_once('\t').unwrap();
                let subscriber: Subscriber = serde_json::from_str(json).unwrap();
                let sequence = subscriber.sequence;
                let by_flow = acked.entry(flow.to_owned()).or_default();
                if let Some(earlier) = by_flow.insert(sequence, subscriber) {
                    panic!("{flow:?} gave sequence {sequence} twice, first to {earlier:?}");
                }
            }
            assert!(
                child.wait().unwrap().success(),
                "an appending process failed"
            );
        }
        done.store(true, Ordering::SeqCst);
        (acked, reader.join().unwrap())
    });

    let mut stored_total = 0;
    for flow in flows {
        let acked_here = acked.get(flow).cloned().unwrap_or_default();
        let summary = assert_store_archive_sound(&t, flow, &acked_here);
        assert_eq!(
            summary.subscribers.len(),
            acked_here.len(),
            "{flow:?} stores exactly the acknowledged appends"
        );
        let mut final_read = ReadOracle {
            seen: oracle.seen.clone(),
            reads: 0,
        };
        final_read.observe(flow, summary.subscribers);
        stored_total += acked_here.len() as u64;
    }
    assert_eq!(stored_total, TOTAL);
    assert!(oracle.reads > 0, "the reader read while the appends ran");
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn threads_in_several_processes_appending_to_one_flow_satisfy_the_append_oracle() {
    run_oracle(&["oracle-one".to_owned()]);
}

#[test]
fn threads_in_several_processes_appending_to_many_flows_satisfy_the_append_oracle() {
    let flows: Vec<String> = (0..5).map(|f| format!("oracle-{f}")).collect();
    run_oracle(&flows);
}

/// The child side of the tests above; does nothing when run on its own.
#[test]
#[ignore = "a child process of the append oracle tests"]
fn child_process_appends_from_threads() {
    let (Ok(url), Ok(child), Ok(flows)) = (
        std::env::var(STORE_URL_ENV),
        std::env::var(CHILD_INDEX_ENV),
        std::env::var(FLOWS_ENV),
    ) else {
        return;
    };
    let child: u64 = child.parse().unwrap();
    let flows: Vec<&str> = flows.split(',').collect();
    let runtime = Runtime::open(&url).unwrap();
    thread::scope(|s| {
        for thread in 0..THREADS_PER_PROCESS {
            let (runtime, flows) = (&runtime, &flows);
            s.spawn(move || {
                for k in 0..APPENDS_PER_THREAD {
                    let flow = flows[((child + thread + k) % flows.len() as u64) as usize];
                    let archive = SubscriberArchive::new(runtime, flow);
                    let id = format!("p{child}-t{thread}-{k:03}");
                    let subscriber = retry_lock_conflicts(|| {
                        archive.register(&id, &format!("{id}@example.com"))
                    })
                    .unwrap_or_else(|e| panic!("{id}: {e}"));
                    let json = serde_json::to_string(&subscriber).unwrap();
                    println!("{ACK_MARKER}{flow}\t{json}");
                }
            });
        }
    });
}
