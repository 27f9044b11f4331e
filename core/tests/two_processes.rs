//! Several processes appending to one archive in one SQLite file lose nothing and give no
//! sequence twice: each append reads `current` and writes it back inside one SQLite write
//! transaction, so a second process waits for the first instead of reading a stale chunk.
//!
//! The test binary runs itself again as the child processes (the `#[ignore]`d test below,
//! selected with `--exact … --ignored`), handing them the database path in an environment
//! variable. Children open the store, say they are ready, and all start appending when the
//! parent writes a line to their stdin, so their appends overlap.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::process::Child;

use attrflow::flows::chunked_subscriber::{Subscriber, SubscriberArchive, FLOW_ID};
use attrflow::retry::RetryPolicy;
use attrflow::Runtime;
use common::{all_subscribers, TestStore};

const CHILDREN: u64 = 3;
const APPENDS_PER_CHILD: u64 = 80;
const TOTAL: u64 = CHILDREN * APPENDS_PER_CHILD;

const CHILD_TEST: &str = "child_process_appends_to_the_shared_archive";
const DB_PATH_ENV: &str = "ATTRFLOW_TEST_SHARED_DB";
const CHILD_INDEX_ENV: &str = "ATTRFLOW_TEST_CHILD_INDEX";

/// Markers in a child's stdout, found anywhere in a line because the test harness prints
/// its own text around a test's output.
const READY_MARKER: &str = "<child ready>";
const APPENDED_MARKER: &str = "<appended>";

/// How often a child retries an append whose wait for the other processes' write lock ran
/// out (each wait lasts the store's busy timeout).
const CHILD_ATTEMPTS: u32 = 20;

fn child_subscriber_id(child: u64, k: u64) -> String {
    format!("process-{child}-subscriber-{k:03}")
}

fn spawn_child(path: &str, child: u64) -> Child {
    common::spawn_test_process(
        CHILD_TEST,
        &[(DB_PATH_ENV, path), (CHILD_INDEX_ENV, &child.to_string())],
    )
}

/// Reads a child's stdout until it reports it is ready.
fn wait_until_ready(lines: &mut impl Iterator<Item = String>, child: u64) {
    for line in lines.by_ref() {
        if line.contains(READY_MARKER) {
            return;
        }
    }
    panic!("child {child} ended before it was ready");
}

#[test]
fn appends_from_several_processes_get_every_sequence_exactly_once() {
    let t = TestStore::new();
    t.archive().start().unwrap();
    let path = t.url.clone();

    let mut children: Vec<_> = (0..CHILDREN)
        .map(|child| {
            let mut process = spawn_child(&path, child);
            let stdout = std::io::BufReader::new(process.stdout.take().unwrap());
            let mut lines = stdout.lines().map(|line| line.expect("read child output"));
            wait_until_ready(&mut lines, child);
            (child, process, lines)
        })
        .collect();
    for (_, process, _) in &mut children {
        let mut stdin = process.stdin.take().unwrap();
        writeln!(stdin, "go").expect("start a child");
    }

    let mut returned: BTreeMap<u64, Subscriber> = BTreeMap::new();
    for (child, mut process, lines) in children {
        let mut appended = Vec::new();
        for line in lines {
            if let Some((_, json)) = line.split_once(APPENDED_MARKER) {
                let subscriber: Subscriber = serde_json::from_str(json).unwrap();
                appended.push(subscriber);
            }
        }
        assert!(process.wait().unwrap().success(), "child {child} failed");

        assert_eq!(appended.len() as u64, APPENDS_PER_CHILD, "child {child}");
        for (k, subscriber) in (1..).zip(&appended) {
            assert_eq!(subscriber.subscriber_id, child_subscriber_id(child, k));
        }
        assert!(
            appended.windows(2).all(|w| w[0].sequence < w[1].sequence),
            "one process's appends keep their order"
        );
        for subscriber in appended {
            let sequence = subscriber.sequence;
            if let Some(earlier) = returned.insert(sequence, subscriber) {
                panic!("sequence {sequence} was given twice, first to {earlier:?}");
            }
        }
    }
    assert_eq!(
        returned.keys().copied().collect::<Vec<_>>(),
        (1..=TOTAL).collect::<Vec<_>>(),
        "the sequences handed out are exactly 1..={TOTAL}"
    );

    let stored = all_subscribers(&t.archive());
    assert_eq!(
        stored,
        returned.into_values().collect::<Vec<_>>(),
        "the archive holds every returned subscriber, once, in sequence order"
    );
    let ids: BTreeSet<_> = stored.iter().map(|s| s.subscriber_id.as_str()).collect();
    assert_eq!(ids.len() as u64, TOTAL, "every subscriber is stored once");
    let open_chunk = (TOTAL - 1) % 100 + 1;
    assert_eq!(
        t.archive().page("current").unwrap().subscribers.len() as u64,
        open_chunk
    );
}

/// The child side of the test above; does nothing when run on its own.
#[test]
#[ignore = "a child process of appends_from_several_processes_get_every_sequence_exactly_once"]
fn child_process_appends_to_the_shared_archive() {
    let (Ok(path), Ok(child)) = (std::env::var(DB_PATH_ENV), std::env::var(CHILD_INDEX_ENV)) else {
        return;
    };
    let child: u64 = child.parse().unwrap();
    let runtime = Runtime::open(&path).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);

    println!("{READY_MARKER}");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();

    for k in 1..=APPENDS_PER_CHILD {
        let id = child_subscriber_id(child, k);
        let subscriber = archive
            .with_retry_policy(
                RetryPolicy::DEFAULT
                    .with_max_attempts(CHILD_ATTEMPTS)
                    .unwrap(),
            )
            .register(&id, &format!("{id}@example.com"))
            .unwrap();
        let json = serde_json::to_string(&subscriber).unwrap();
        println!("{APPENDED_MARKER}{json}");
        // Between appends the file's write lock is free for a moment, so the other
        // processes (asleep in SQLite's busy handler) get their turns and the appends
        // interleave instead of running one process after another.
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
