//! SIGKILL at random moments, concentrated around the chunk rollover, never loses or
//! duplicates an acknowledged append and never corrupts the store.
//!
//! A child process (this test binary run again, the `#[ignore]`d test below) appends
//! subscribers one after another and prints each sequence after `register` returned, so a
//! printed sequence is an acknowledged one. The parent picks a target among records 95–105
//! of a chunk, kills the child (SIGKILL) a random few microseconds after reading that
//! acknowledgement, while the next append is somewhere in its transaction, then checks the
//! file: `PRAGMA integrity_check` ok, every acknowledged record stored exactly once under
//! its sequence, sequences dense, `current` at most one chunk, every archive named by its
//! first sequence and full, the state's next sequence the last + 1 (see
//! [`common::invariants`]). The next child appends to the same file, so a kill that left a
//! lock behind would stall it.
//!
//! Each store takes [`KILLS_PER_STORE`] kills, then a fresh one starts, so checking stays
//! cheap. The seed is printed (and replayed with `ATTRFLOW_TEST_SEED`); `ATTRFLOW_CRASH_KILLS`
//! raises the number of kills for a longer run by hand.
//!
//! The same rounds run on PostgreSQL (the `#[ignore]`d PostgreSQL-only test, run by
//! `make test` against its server): there the rows are read back from the store's schema
//! with a PostgreSQL row reader, and a kill mid-transaction must leave no row lock behind.
//!
//! Under group commit with many concurrent appenders (the backend under test): a child runs
//! [`APPENDERS`] threads appending to one archive, so their calls share COMMITs, and is
//! killed after a random number of acknowledgements; with `--features fault-injection` a
//! child is also armed to kill itself right after a group's COMMIT returned and before any
//! of its members is answered. Either way every acknowledged append is stored exactly once,
//! sequences stay dense, and only appends in flight (at most one per appender) may be stored
//! unacknowledged.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use attrflow::flows::chunked_subscriber::{
    Subscriber, SubscriberArchive, FLOW_ID, SUBSCRIBER_CHUNK_SIZE,
};
use attrflow::Runtime;
use common::invariants::assert_store_archive_sound;
use common::seeded_rng::SeededRng;
use common::{Backend, OpenedStore, TestStore};

const CHILD_TEST: &str = "child_process_appends_until_killed";
const STORE_URL_ENV: &str = "ATTRFLOW_TEST_CRASH_STORE";
const ROUND_ENV: &str = "ATTRFLOW_TEST_CRASH_ROUND";
const KILLS_ENV: &str = "ATTRFLOW_CRASH_KILLS";
const ACK_MARKER: &str = "<ack>";

const CONCURRENT_CHILD_TEST: &str = "child_process_appends_from_many_threads_until_killed";
/// Set for a child that kills itself after this many group COMMITs (`fault-injection`).
const KILL_AFTER_COMMITS_ENV: &str = "ATTRFLOW_TEST_CRASH_KILL_AFTER_COMMITS";
/// Threads appending at once in a child of the group-commit rounds.
const APPENDERS: usize = 8;

const KILLS_PER_STORE: u32 = 50;
/// The records of a chunk the kills aim at: 95–100 of it and 1–5 of the next (101–105).
const WINDOW_BEFORE: u64 = 6;
const WINDOW_AFTER: u64 = 5;
/// The longest pause between reading the target's acknowledgement and the kill.
const MAX_DELAY_MICROS: u64 = 400;

/// Whether `sequence` is among records 95–105 around a chunk boundary.
fn near_rollover(sequence: u64) -> bool {
    let place = (sequence - 1) % SUBSCRIBER_CHUNK_SIZE + 1;
    place > SUBSCRIBER_CHUNK_SIZE - WINDOW_BEFORE
        || place <= WINDOW_AFTER && sequence > SUBSCRIBER_CHUNK_SIZE
}

/// A random target at or after `next`, inside the first rollover window from `next` on.
fn pick_target(rng: &mut SeededRng, next: u64) -> u64 {
    let start = (next..).find(|&s| near_rollover(s)).unwrap_or(next);
    let end = (start..)
        .take_while(|&s| near_rollover(s))
        .last()
        .unwrap_or(start);
    rng.in_range(start..=end)
}

/// The acknowledgement a line of a child's output carries, if any.
fn acknowledgement(line: std::io::Result<String>) -> Option<Subscriber> {
    let line = line.expect("read the child's output");
    let (_, json) = line.split_once(ACK_MARKER)?;
    Some(serde_json::from_str(json).expect("an acknowledgement"))
}

/// What the parent learnt from one child.
struct Round {
    acked: Vec<Subscriber>,
}

/// Runs one child on `url` until it acknowledges `target`, kills it after `delay`, and
/// returns every acknowledgement it printed (including those after the target).
fn kill_round(url: &str, round: u32, target: u64, delay: Duration) -> Round {
    let mut child = common::spawn_test_process(
        CHILD_TEST,
        &[(STORE_URL_ENV, url), (ROUND_ENV, &round.to_string())],
    );
    let stdout = BufReader::new(child.stdout.take().expect("the child's stdout"));
    let mut acked = Vec::new();
    let mut killed = false;
    for line in stdout.lines() {
        let Some(subscriber) = acknowledgement(line) else {
            continue;
        };
        let reached = subscriber.sequence >= target;
        acked.push(subscriber);
        if reached && !killed {
            std::thread::sleep(delay);
            child.kill().expect("SIGKILL the child");
            killed = true;
        }
    }
    let status = child.wait().expect("reap the child");
    assert!(
        killed,
        "round {round}: the child ended by itself ({status})"
    );
    Round { acked }
}

/// Runs `default_kills` kills (or `ATTRFLOW_CRASH_KILLS`) on fresh stores made by `new_store`,
/// which also gives the URL the children open the store with.
fn crash_rounds(test: &str, default_kills: u32, new_store: impl Fn() -> (TestStore, String)) {
    let kills = std::env::var(KILLS_ENV)
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(default_kills);
    let mut rng = SeededRng::from_env_or_clock(test);
    let started = Instant::now();
    let mut kills_done = 0;
    let mut appends = 0;
    let mut unacknowledged_commits = 0;
    while kills_done < kills {
        let (t, url) = new_store();
        t.archive().start().unwrap();
        let mut acked: BTreeMap<u64, Subscriber> = BTreeMap::new();
        let mut next = 1;
        for _ in 0..KILLS_PER_STORE.min(kills - kills_done) {
            let target = pick_target(&mut rng, next);
            let delay = Duration::from_micros(rng.in_range(0..=MAX_DELAY_MICROS));
            let round = kill_round(&url, kills_done, target, delay);
            let last_acked = round.acked.last().map_or(0, |s| s.sequence);
            for subscriber in round.acked {
                let sequence = subscriber.sequence;
                if let Some(earlier) = acked.insert(sequence, subscriber) {
                    panic!("kill {kills_done}: sequence {sequence} acknowledged twice, first as {earlier:?}");
                }
            }
            let summary = assert_store_archive_sound(&t, FLOW_ID, &acked);
            let stored = summary.subscribers.len() as u64;
            assert!(
                stored == last_acked || stored == last_acked + 1,
                "kill {kills_done}: {stored} stored after the last acknowledgement {last_acked}; \
                 only the one append in flight may be stored unacknowledged"
            );
            if stored > last_acked {
                // Committed, then killed before it was printed: it stays, unacknowledged.
                acked.insert(stored, summary.subscribers[stored as usize - 1].clone());
                unacknowledged_commits += 1;
            }
            appends += stored + 1 - next;
            next = stored + 1;
            kills_done += 1;
        }
    }
    println!(
        "{test}: {kills_done} kills, {appends} appends, {unacknowledged_commits} killed between \
         commit and acknowledgement, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// A fresh SQLite file, opened by the children at `synchronous`.
fn sqlite_store(synchronous: &str) -> (TestStore, String) {
    let t = TestStore::sqlite_fast();
    let url = format!("sqlite:{}?synchronous={synchronous}", t.path.display());
    (t, url)
}

#[test]
fn sigkill_near_rollover_loses_nothing_acknowledged_with_synchronous_normal() {
    crash_rounds("crash_normal", 1000, || sqlite_store("normal"));
}

#[test]
fn sigkill_near_rollover_loses_nothing_acknowledged_with_synchronous_full() {
    crash_rounds("crash_full", 100, || sqlite_store("full"));
}

#[test]
#[ignore = "PostgreSQL only"]
fn sigkill_near_rollover_loses_nothing_acknowledged_on_postgresql() {
    crash_rounds("crash_postgres", 100, || {
        let t = TestStore::new();
        assert_eq!(
            t.backend(),
            Backend::Postgres,
            "run with ATTRFLOW_TEST_BACKEND=postgres"
        );
        let url = t.url.clone();
        (t, url)
    });
}

/// The rounds of the group-commit crash tests on one store of the backend under test: each
/// child runs [`APPENDERS`] concurrent appenders; it is killed once it acknowledged a random
/// 20 to 80 appends, or (`kill_after_commits`) kills itself right after a random COMMIT.
fn concurrent_crash_rounds(test: &str, rounds: u32, kill_after_commits: bool) {
    let mut rng = SeededRng::from_env_or_clock(test);
    let started = Instant::now();
    let t = TestStore::new();
    t.archive().start().unwrap();
    let mut acked: BTreeMap<u64, Subscriber> = BTreeMap::new();
    let mut unacknowledged_commits = 0;
    for round in 0..rounds {
        let round_env = round.to_string();
        let commits = rng.in_range(2..=12).to_string();
        let mut env = vec![(STORE_URL_ENV, t.url.as_str()), (ROUND_ENV, &round_env)];
        if kill_after_commits {
            env.push((KILL_AFTER_COMMITS_ENV, &commits));
        }
        let mut child = common::spawn_test_process(CONCURRENT_CHILD_TEST, &env);
        let stdout = BufReader::new(child.stdout.take().expect("the child's stdout"));
        let target = rng.in_range(20..=80);
        let delay = Duration::from_micros(rng.in_range(0..=MAX_DELAY_MICROS));
        let mut this_round = 0;
        let mut killed = false;
        for line in stdout.lines() {
            let Some(subscriber) = acknowledgement(line) else {
                continue;
            };
            let sequence = subscriber.sequence;
            if let Some(earlier) = acked.insert(sequence, subscriber) {
                panic!(
                    "round {round}: sequence {sequence} acknowledged twice, first as {earlier:?}"
                );
            }
            this_round += 1;
            if !kill_after_commits && this_round >= target && !killed {
                std::thread::sleep(delay);
                child.kill().expect("SIGKILL the child");
                killed = true;
            }
        }
        let status = child.wait().expect("reap the child");
        assert_eq!(
            status.signal(),
            Some(9),
            "round {round}: the child was not killed by SIGKILL ({status})"
        );
        let summary = assert_store_archive_sound(&t, FLOW_ID, &acked);
        let unacknowledged: Vec<&Subscriber> = summary
            .subscribers
            .iter()
            .filter(|s| !acked.contains_key(&s.sequence))
            .collect();
        assert!(
            unacknowledged.len() <= APPENDERS,
            "round {round}: {} appends stored unacknowledged; at most one per appender was in flight",
            unacknowledged.len()
        );
        if kill_after_commits {
            assert!(
                !unacknowledged.is_empty(),
                "round {round}: killed right after a COMMIT, yet every stored append was answered"
            );
        }
        unacknowledged_commits += unacknowledged.len();
        for subscriber in unacknowledged {
            acked.insert(subscriber.sequence, subscriber.clone());
        }
    }
    println!(
        "{test}: {rounds} kills, {} appends, {unacknowledged_commits} committed but not answered, {:.1} s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn sigkill_amid_concurrent_appenders_under_group_commit_loses_nothing_acknowledged() {
    concurrent_crash_rounds("crash_grouped", 20, false);
}

/// Needs `--features fault-injection` (scripts/test.sh runs it on both backends).
#[test]
#[cfg(feature = "fault-injection")]
fn a_sigkill_between_a_groups_commit_and_its_replies_loses_nothing_acknowledged() {
    concurrent_crash_rounds("crash_after_commit", 10, true);
}

/// The child side of the group-commit crash tests: [`APPENDERS`] threads append until the
/// process is killed; does nothing run on its own.
#[test]
#[ignore = "a child process of the SIGKILL crash tests"]
fn child_process_appends_from_many_threads_until_killed() {
    let (Ok(url), Ok(round)) = (std::env::var(STORE_URL_ENV), std::env::var(ROUND_ENV)) else {
        return;
    };
    let store = OpenedStore::open(&url);
    #[cfg(feature = "fault-injection")]
    if let Some(commits) = std::env::var(KILL_AFTER_COMMITS_ENV)
        .ok()
        .and_then(|c| c.parse().ok())
    {
        store
            .faults()
            .kill_at(attrflow::store::fault::FaultPoint::AfterCommit, commits);
    }
    let runtime = Runtime::new(store.as_store());
    std::thread::scope(|s| {
        for appender in 0..APPENDERS {
            let (runtime, round) = (&runtime, &round);
            s.spawn(move || {
                let archive = SubscriberArchive::new(runtime, FLOW_ID);
                for k in 1.. {
                    let id = format!("round-{round}-{appender}-{k:05}");
                    let subscriber = common::retry_lock_conflicts(|| {
                        archive.register(&id, &format!("{id}@example.com"))
                    })
                    .unwrap_or_else(|e| panic!("append {k} of round {round}: {e}"));
                    println!(
                        "{ACK_MARKER}{}",
                        serde_json::to_string(&subscriber).unwrap()
                    );
                }
            });
        }
    });
}

/// The child side of the tests above: appends until killed; does nothing run on its own.
#[test]
#[ignore = "a child process of the SIGKILL crash tests"]
fn child_process_appends_until_killed() {
    let (Ok(url), Ok(round)) = (std::env::var(STORE_URL_ENV), std::env::var(ROUND_ENV)) else {
        return;
    };
    let runtime = Runtime::open(&url).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    for k in 1.. {
        let id = format!("round-{round}-{k:05}");
        let subscriber = archive
            .register(&id, &format!("{id}@example.com"))
            .unwrap_or_else(|e| panic!("append {k} of round {round}: {e}"));
        println!(
            "{ACK_MARKER}{}",
            serde_json::to_string(&subscriber).unwrap()
        );
    }
}
