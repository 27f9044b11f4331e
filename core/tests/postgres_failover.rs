//! A PostgreSQL failover under traffic, on a pg_auto_failover formation (a monitor, a
//! primary and a synchronous secondary on loopback, started by
//! scripts/pg_auto_failover.sh). Several processes append with idempotency keys through a
//! multi-host URL (`target_session_attrs=read-write`); the primary is SIGKILLed in the
//! middle of the traffic and the monitor promotes the secondary. Then: appends resume
//! within a bounded time, every acknowledged append is stored exactly once with the
//! sequence it was acknowledged with, sequences stay dense, and appends retried after an
//! unknown COMMIT outcome are not stored twice.
//!
//! Ignored in the ordinary passes; scripts/test.sh starts a formation and runs it with
//! `ATTRFLOW_TEST_FAILOVER_URL` set (`-- --ignored --exact
//! appends_survive_a_primary_failover_exactly_once`). The test binary runs itself again as
//! the appending processes (the other ignored test).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use attrflow::chunked_log::IdempotencyWindow;
use attrflow::flows::chunked_subscriber::{Subscriber, SubscriberArchive, FLOW_ID};
use attrflow::store::COMMIT_OUTCOME_UNKNOWN;
use attrflow::{Error, Runtime};
use common::all_subscribers;
use common::invariants::StoredArchive;

const FAILOVER_URL_ENV: &str = "ATTRFLOW_TEST_FAILOVER_URL";
const CHILD_TEST: &str = "child_appends_through_a_failover";
const CHILD_URL_ENV: &str = "ATTRFLOW_TEST_FAILOVER_CHILD_URL";
const CHILD_ENV: &str = "ATTRFLOW_TEST_FAILOVER_CHILD";

const PROCESSES: u64 = 3;
const THREADS: u64 = 2;
const APPENDS_PER_THREAD: u64 = 30;
/// Acknowledged appends before the primary is killed.
const ACKS_BEFORE_KILL: usize = 30;
/// How long one append may keep failing before a child gives up: far beyond a failover
/// with the formation's lowered monitor timers (seconds), short enough to end a stuck run.
const APPEND_DEADLINE: Duration = Duration::from_secs(120);

const READY_MARKER: &str = "<child ready>";
const ACKED_MARKER: &str = "<acked>";
const UNKNOWN_MARKER: &str = "<commit outcome unknown>";

fn script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/pg_auto_failover.sh"
    )
    .to_owned()
}

fn run_script(command: &str) {
    let status = Command::new("bash")
        .args([&script(), command])
        .status()
        .expect("run scripts/pg_auto_failover.sh");
    assert!(
        status.success(),
        "scripts/pg_auto_failover.sh {command} failed"
    );
}

fn key(child: u64, thread: u64, k: u64) -> String {
    format!("p{child}-t{thread}-{k:03}")
}

/// What a child reported: its acknowledged appends, and the keys whose COMMIT outcome it
/// did not know (and retried).
#[derive(Default)]
struct Report {
    acked: Vec<(Instant, Subscriber)>,
    unknown: Vec<String>,
}

#[test]
#[ignore = "needs a pg_auto_failover formation (scripts/pg_auto_failover.sh)"]
fn appends_survive_a_primary_failover_exactly_once() {
    let base = std::env::var(FAILOVER_URL_ENV).unwrap_or_else(|_| {
        panic!("{FAILOVER_URL_ENV} names no formation; scripts/pg_auto_failover.sh starts one")
    });
    let schema = format!("failover_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{base}&schema={schema}");
    let runtime = Runtime::open(&url).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    archive.start().unwrap();
    archive
        .set_idempotency_window(IdempotencyWindow {
            max_keys: 1_000,
            ..IdempotencyWindow::DEFAULT
        })
        .unwrap();

    let (acks_tx, acks_rx) = mpsc::channel::<Instant>();
    let mut children = Vec::new();
    for child in 0..PROCESSES {
        let mut process = common::spawn_test_process(
            CHILD_TEST,
            &[(CHILD_URL_ENV, &url), (CHILD_ENV, &child.to_string())],
        );
        let mut lines = BufReader::new(process.stdout.take().expect("piped stdout"))
            .lines()
            .map_while(Result::ok);
        assert!(
            lines.by_ref().any(|line| line.contains(READY_MARKER)),
            "child {child} ended before it was ready"
        );
        let acks_tx = acks_tx.clone();
        let reader = thread::spawn(move || {
            let mut report = Report::default();
            for line in lines {
                if let Some((_, json)) = line.split_once(ACKED_MARKER) {
                    let now = Instant::now();
                    report
                        .acked
                        .push((now, serde_json::from_str(json).expect("a subscriber")));
                    let _ = acks_tx.send(now);
                } else if let Some((_, key)) = line.split_once(UNKNOWN_MARKER) {
                    report.unknown.push(key.to_owned());
                }
            }
            report
        });
        children.push((process, reader));
    }
    drop(acks_tx);
    for (process, _) in &mut children {
        writeln!(process.stdin.take().expect("piped stdin"), "go").expect("start a child");
    }

    // Kill the primary once the traffic is flowing.
    for _ in 0..ACKS_BEFORE_KILL {
        acks_rx.recv().expect("the children acknowledge appends");
    }
    run_script("kill-primary");
    let killed_at = Instant::now();

    let mut acked = Vec::new();
    let mut unknown = Vec::new();
    for (child, (mut process, reader)) in (0..).zip(children) {
        assert!(process.wait().unwrap().success(), "child {child} failed");
        let report = reader.join().unwrap();
        assert_eq!(
            report.acked.len() as u64,
            THREADS * APPENDS_PER_THREAD,
            "child {child} got every append acknowledged"
        );
        acked.extend(report.acked);
        unknown.extend(report.unknown);
    }
    let resumed_at = acked
        .iter()
        .map(|(at, _)| *at)
        .filter(|at| *at > killed_at)
        .min()
        .expect("appends were acknowledged after the kill");
    let outage = resumed_at - killed_at;
    eprintln!(
        "failover: appends resumed {outage:?} after the primary was killed; {} calls had an \
         unknown commit outcome and were retried with their key",
        unknown.len()
    );
    assert!(
        outage < APPEND_DEADLINE,
        "appends resumed {outage:?} after the kill"
    );

    // The secondary is the primary now; bring the killed node back as its standby.
    run_script("restart-killed");

    let stored = all_subscribers(&SubscriberArchive::new(
        &Runtime::open(&url).unwrap(),
        FLOW_ID,
    ));
    let sequences: Vec<u64> = stored.iter().map(|s| s.sequence).collect();
    let total = PROCESSES * THREADS * APPENDS_PER_THREAD;
    assert_eq!(
        sequences,
        (1..=total).collect::<Vec<_>>(),
        "dense sequences, one per append, none stored twice"
    );
    let by_sequence: BTreeMap<u64, &Subscriber> = stored.iter().map(|s| (s.sequence, s)).collect();
    for (_, subscriber) in &acked {
        assert_eq!(
            by_sequence.get(&subscriber.sequence),
            Some(&subscriber),
            "an acknowledged append is stored as acknowledged"
        );
    }
    // The same, read from the rows on the new primary (not through attrflow).
    let acknowledged: BTreeMap<u64, Subscriber> =
        acked.iter().map(|(_, s)| (s.sequence, s.clone())).collect();
    let summary = StoredArchive::read_postgres(&base, &schema, FLOW_ID)
        .check(&acknowledged)
        .unwrap_or_else(|e| panic!("the stored archive breaks an invariant: {e}"));
    assert_eq!(summary.subscribers.len() as u64, total);
    let ids: BTreeSet<&str> = stored.iter().map(|s| s.subscriber_id.as_str()).collect();
    assert_eq!(ids.len() as u64, total, "no append is stored twice");
    for key in &unknown {
        assert!(ids.contains(key.as_str()), "retried {key} is stored once");
    }
}

/// The appending side: `THREADS` threads each append `APPENDS_PER_THREAD` subscribers under
/// idempotency keys, retrying each (with its key) through the failover. Does nothing when
/// run on its own.
#[test]
#[ignore = "a child process of appends_survive_a_primary_failover_exactly_once"]
fn child_appends_through_a_failover() {
    let (Ok(url), Ok(child)) = (std::env::var(CHILD_URL_ENV), std::env::var(CHILD_ENV)) else {
        return;
    };
    let child: u64 = child.parse().unwrap();
    let runtime = Runtime::open(&url).unwrap();
    println!("{READY_MARKER}");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    thread::scope(|s| {
        for thread in 0..THREADS {
            let runtime = &runtime;
            s.spawn(move || {
                let archive = SubscriberArchive::new(runtime, FLOW_ID);
                for k in 1..=APPENDS_PER_THREAD {
                    let id = key(child, thread, k);
                    let address = format!("{id}@example.com");
                    let started = Instant::now();
                    let subscriber = loop {
                        match archive.register_once(&id, &id, &address) {
                            Ok(subscriber) => break subscriber,
                            Err(e @ (Error::LockConflict(_) | Error::Storage(_)))
                                if started.elapsed() < APPEND_DEADLINE =>
                            {
                                if e.to_string().contains(COMMIT_OUTCOME_UNKNOWN) {
                                    println!("{UNKNOWN_MARKER}{id}");
                                }
                                let pause = if e.is_retryable() { 20 } else { 200 };
                                thread::sleep(Duration::from_millis(pause));
                            }
                            Err(e) => panic!("appending {id}: {e}"),
                        }
                    };
                    let json = serde_json::to_string(&subscriber).unwrap();
                    println!("{ACKED_MARKER}{json}");
                }
            });
        }
    });
}
