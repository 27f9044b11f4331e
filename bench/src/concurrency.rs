//! Concurrency: many threads appending at once at `synchronous=FULL`, with group commit
//! and with one COMMIT per call (`group_max_calls=1`, the store's behaviour without group
//! commit), on one flow and on as many flows as threads.
//!
//! Per shape and mode: appends per second, lock conflicts per 1,000 appends (each retried
//! at once), COMMITs (fsyncs) per append from the store's own counter, and bytes written
//! per append (WAL frames and checkpoints, from `/proc/self/io`). Then the latency
//! of a single appender, grouped, per call and grouped with a commit delay (taking turns
//! call by call), so the cost group commit adds to a lone caller is a ratio measured in the
//! same run, and so is what a commit delay adds.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use attrflow::flows::chunked_subscriber::SubscriberArchive;
use attrflow::store::{GroupLimits, SqliteOptions, SqliteStore, Synchronous};
use attrflow::{Error, Runtime};
use serde_json::Value;

use crate::args::Args;
use crate::populate::{delivery_address, remove_store, subscriber_id};
use crate::report::Report;
use crate::timing::median;
use crate::BenchResult;

/// The two ways the store commits: grouped (the default) and one COMMIT per call.
const MODES: [(&str, Option<usize>); 2] = [("grouped", None), ("per_call", Some(1))];

/// The commit delay of the lone appender's third mode, `delayed`: what waiting for more
/// callers costs a caller who is alone.
const LONE_COMMIT_DELAY: Duration = Duration::from_micros(100);

/// Runs the concurrency figures.
pub fn run(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let threads = args.number("threads", 16usize)?;
    let seconds = args.number("seconds", 3.0f64)?;
    let repeats = args.number("repeats", 3u64)?;
    let latency_calls = args.number("latency-calls", 300u64)?;
    // Profiling one figure: `--only grouped.many_flows` runs that shape and mode alone;
    // `--commit-delay-us N` gives the grouped mode's appenders a commit delay;
    // `--chunk-size N` gives every archive that chunk size before the appends.
    let only = args.text("only");
    let commit_delay = Duration::from_micros(args.number("commit-delay-us", 0u64)?);
    let chunk_size = args.number("chunk-size", 0u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("threads", threads);
    report.config("seconds", seconds);
    report.config("synchronous", "full");
    if chunk_size != 0 {
        report.config("chunk_size", chunk_size);
    }
    let duration = Duration::from_secs_f64(seconds);
    let path = dir.join("concurrency.db");
    for _ in 0..repeats {
        for (shape, flows) in [("one_flow", 1), ("many_flows", threads)] {
            for (mode, max_calls) in MODES {
                if only
                    .as_ref()
                    .is_some_and(|o| *o != format!("{mode}.{shape}"))
                {
                    continue;
                }
                remove_store(&path)?;
                let group = GroupLimits {
                    commit_delay: max_calls.map_or(commit_delay, |_| Duration::ZERO),
                    ..limits(max_calls)
                };
                let run = appenders(&path, group, threads, flows, chunk_size, duration)?;
                remove_store(&path)?;
                let appends = run.appends.max(1) as f64;
                report.push(
                    &format!("{mode}.{shape}.appends_per_s"),
                    "ops/s",
                    run.appends as f64 / run.elapsed.as_secs_f64(),
                );
                report.push(
                    &format!("{mode}.{shape}.conflicts_per_1000"),
                    "count",
                    run.conflicts as f64 * 1000.0 / appends,
                );
                report.push(
                    &format!("{mode}.{shape}.commits_per_append"),
                    "ratio",
                    run.commits as f64 / appends,
                );
                report.push(
                    &format!("{mode}.{shape}.written_per_append"),
                    "bytes",
                    run.written as f64 / appends,
                );
            }
        }
        if only.is_some() {
            continue;
        }
        for (mode, latencies) in single_appender(&dir, latency_calls)? {
            report.push(
                &format!("{mode}.single_append_us"),
                "us",
                median(&latencies),
            );
        }
    }
    Ok(report.into_json())
}

/// The latency of each of `calls` appends of a lone appender per mode (the two of
/// [`MODES`], and grouped with a commit delay of [`LONE_COMMIT_DELAY`]), the modes taking
/// turns call by call (each on a file of its own), so that a disk or a machine whose speed
/// drifts weighs on all alike.
fn single_appender(dir: &Path, calls: u64) -> BenchResult<Vec<(&'static str, Vec<f64>)>> {
    let mut modes: Vec<(&str, GroupLimits)> = MODES
        .iter()
        .map(|&(mode, max_calls)| (mode, limits(max_calls)))
        .collect();
    let delayed = GroupLimits {
        commit_delay: LONE_COMMIT_DELAY,
        ..GroupLimits::default()
    };
    modes.push(("delayed", delayed));
    let mut archives = Vec::new();
    for (mode, limits) in modes {
        let path = dir.join(format!("single-{mode}.db"));
        remove_store(&path)?;
        let (runtime, _) = open(&path, limits)?;
        SubscriberArchive::new(&runtime, "single").start()?;
        archives.push((mode, path, runtime, Vec::new()));
    }
    for n in 1..=calls {
        for (_, _, runtime, latencies) in &mut archives {
            let archive = SubscriberArchive::new(runtime, "single");
            let started = Instant::now();
            archive.register(&subscriber_id(n), &delivery_address(n))?;
            latencies.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    let mut figures = Vec::new();
    for (mode, path, runtime, latencies) in archives {
        drop(runtime);
        remove_store(&path)?;
        figures.push((mode, latencies));
    }
    Ok(figures)
}

/// What one timed run of concurrent appenders did.
struct Run {
    appends: u64,
    conflicts: u64,
    commits: u64,
    written: u64,
    elapsed: Duration,
}

/// The default group bounds, with at most `max_calls` members when given.
fn limits(max_calls: Option<usize>) -> GroupLimits {
    GroupLimits {
        max_members: max_calls.unwrap_or(GroupLimits::default().max_members),
        ..GroupLimits::default()
    }
}

fn open(path: &Path, group: GroupLimits) -> BenchResult<(Runtime, Arc<SqliteStore>)> {
    let options = SqliteOptions {
        synchronous: Synchronous::Full,
        group,
        ..SqliteOptions::default()
    };
    let store = Arc::new(SqliteStore::open_with(path, options)?);
    Ok((Runtime::new(store.clone()), store))
}

/// `threads` threads appending for `duration` to `flows` archives (thread `i` to archive
/// `i % flows`), each retrying its lock conflicts at once; with a `chunk_size` other than
/// 0, every archive has that chunk size from its first record.
fn appenders(
    path: &Path,
    group: GroupLimits,
    threads: usize,
    flows: usize,
    chunk_size: u64,
    duration: Duration,
) -> BenchResult<Run> {
    let (runtime, store) = open(path, group)?;
    let flow_ids: Vec<String> = (0..flows).map(|f| format!("archive-{f}")).collect();
    for flow_id in &flow_ids {
        let archive = SubscriberArchive::new(&runtime, flow_id);
        archive.start()?;
        if chunk_size != 0 {
            archive.change_chunk_size(chunk_size)?;
        }
    }
    let next = AtomicU64::new(1);
    let appends = AtomicU64::new(0);
    let conflicts = AtomicU64::new(0);
    let before = store.group_stats().commits;
    let written_before = bytes_written()?;
    let started = Instant::now();
    let deadline = started + duration;
    let failed: Vec<String> = thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let archive = SubscriberArchive::new(&runtime, &flow_ids[t % flows]);
                let (next, appends, conflicts) = (&next, &appends, &conflicts);
                s.spawn(move || -> Result<(), String> {
                    while Instant::now() < deadline {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        loop {
                            match archive.register(&subscriber_id(n), &delivery_address(n)) {
                                Ok(_) => break,
                                Err(Error::LockConflict(_)) => {
                                    conflicts.fetch_add(1, Ordering::Relaxed);
                                    thread::yield_now();
                                }
                                Err(other) => return Err(other.to_string()),
                            }
                        }
                        appends.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|w| {
                w.join()
                    .map_or(Some("a thread panicked".into()), Result::err)
            })
            .collect()
    });
    let elapsed = started.elapsed();
    let written = bytes_written()? - written_before;
    if let Some(error) = failed.first() {
        return Err(format!("an appender failed: {error}").into());
    }
    Ok(Run {
        appends: appends.into_inner(),
        conflicts: conflicts.into_inner(),
        commits: store.group_stats().commits - before,
        written,
        elapsed,
    })
}

/// Bytes this process has handed to `write` calls so far (`wchar` of `/proc/self/io`): the
/// WAL frames of every COMMIT and the pages checkpoints copy into the database file.
fn bytes_written() -> BenchResult<u64> {
    let io = std::fs::read_to_string("/proc/self/io")?;
    io.lines()
        .find_map(|line| line.strip_prefix("wchar:"))
        .and_then(|value| value.trim().parse().ok())
        .ok_or_else(|| "/proc/self/io has no wchar line".into())
}
