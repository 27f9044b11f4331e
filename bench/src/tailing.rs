//! Tailing and trimming a chunked log.
//!
//! `tail-latency`: a writer appends to an app log at a steady pace while a tailer waits in
//! `AppLog::tail`; each record carries the wall-clock time taken just before its append
//! call, and the tailer's latency is the time from then to the moment it holds the record.
//! The writer is a thread of the tailer's process (woken on commit) or another process
//! (this binary again, as `tail-writer`), on the same SQLite file.
//!
//! `trim-cost`: successive trims of the same number of chunks from archives of growing
//! length; a trim deletes the chunks it drops, so its cost should not follow the length.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use attrflow::chunked_log::Trim;
use attrflow::flows::app_log::AppLog;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, SUBSCRIBER_CHUNK_SIZE};
use attrflow::store::Synchronous;
use attrflow::Runtime;
use serde_json::{json, Value};

use crate::args::Args;
use crate::populate::{fresh_archive, open_runtime, remove_store};
use crate::report::Report;
use crate::timing::{median, percentile};
use crate::BenchResult;

/// The app log flow the tail benchmark writes to.
const TAIL_FLOW: &str = "bench-tail";
/// The log within it.
const TAIL_LOG: &str = "events";
/// The field of each record holding its send time, in nanoseconds since the Unix epoch.
const SENT_FIELD: &str = "sentNs";
/// What the writer process prints once its store is open.
const READY: &str = "ready";
/// How long the tailer waits in one call before asking again.
const TAIL_TIMEOUT: Duration = Duration::from_secs(5);
/// At most this many records per tail call.
const TAIL_LIMIT: u64 = 100;

/// Nanoseconds since the Unix epoch: a clock both processes share.
fn now_ns() -> BenchResult<u64> {
    Ok(u64::try_from(
        SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos(),
    )?)
}

/// Appends `records` records to the tail log, one every `interval`, each stamped with
/// the time just before its append call.
fn write_steadily(runtime: &Runtime, records: u64, interval: Duration) -> BenchResult<()> {
    let logs = AppLog::new(runtime, TAIL_FLOW);
    let started = Instant::now();
    for index in 0..records {
        let due = started + interval * u32::try_from(index)?;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        logs.append(TAIL_LOG, json!({ SENT_FIELD: now_ns()? }))?;
    }
    Ok(())
}

/// Tails the log from the start until it has received `records` records; returns each
/// one's latency from its send time, in microseconds, checking they come in order.
fn tail_latencies(runtime: &Runtime, records: u64) -> BenchResult<Vec<f64>> {
    let logs = AppLog::new(runtime, TAIL_FLOW);
    let mut latencies = Vec::with_capacity(usize::try_from(records)?);
    let mut after = 0;
    while after < records {
        let read = logs.tail(TAIL_LOG, after, TAIL_LIMIT, TAIL_TIMEOUT, None)?;
        if read.entries.is_empty() {
            return Err(format!("no record after {after} within {TAIL_TIMEOUT:?}").into());
        }
        let received = now_ns()?;
        for entry in &read.entries {
            if entry.sequence != after + 1 {
                return Err(format!("got {} after {after}", entry.sequence).into());
            }
            after = entry.sequence;
            let sent = entry.record[SENT_FIELD]
                .as_u64()
                .ok_or("a record without its send time")?;
            latencies.push(received.saturating_sub(sent) as f64 / 1e3);
        }
    }
    Ok(latencies)
}

/// A fresh store at `path` holding an empty tail log.
fn fresh_tail_store(path: &Path) -> BenchResult<Runtime> {
    remove_store(path)?;
    let runtime = open_runtime(path, Synchronous::Normal)?;
    AppLog::new(&runtime, TAIL_FLOW).start()?;
    Ok(runtime)
}

/// `tail-latency --dir D [--records N] [--interval-ms I] [--repeats R]`: p50 and p99 of
/// commit-to-delivery latency with the writer in the tailer's process and in another.
pub fn tail_latency(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let records = args.number("records", 500u64)?;
    let interval = Duration::from_millis(args.number("interval-ms", 10u64)?);
    let repeats = args.number("repeats", 3u64)?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("tail.db");
    let mut report = Report::new();
    report.config("records", records);
    report.config("interval_ms", u64::try_from(interval.as_millis())?);
    report.config("synchronous", "normal");
    for _ in 0..repeats {
        let runtime = fresh_tail_store(&path)?;
        let latencies = thread::scope(|scope| {
            let writer = scope
                .spawn(|| write_steadily(&runtime, records, interval).map_err(|e| e.to_string()));
            let latencies = tail_latencies(&runtime, records);
            let written = writer.join().map_err(|_| "the writer thread panicked")?;
            written?;
            latencies
        })?;
        push_percentiles(&mut report, "in_process", &latencies);
        drop(runtime);

        let runtime = fresh_tail_store(&path)?;
        let latencies = across_processes(&runtime, &path, records, interval)?;
        push_percentiles(&mut report, "cross_process", &latencies);
        drop(runtime);
        remove_store(&path)?;
    }
    Ok(report.into_json())
}

fn push_percentiles(report: &mut Report, prefix: &str, latencies: &[f64]) {
    report.push(
        &format!("{prefix}_p50_us"),
        "us",
        percentile(latencies, 0.50),
    );
    report.push(
        &format!("{prefix}_p99_us"),
        "us",
        percentile(latencies, 0.99),
    );
}

/// Starts this binary as `tail-writer` on `path`, tails what it appends, and waits for it.
fn across_processes(
    runtime: &Runtime,
    path: &Path,
    records: u64,
    interval: Duration,
) -> BenchResult<Vec<f64>> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("tail-writer")
        .args(["--store", &path.display().to_string()])
        .args(["--records", &records.to_string()])
        .args(["--interval-ms", &interval.as_millis().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout of the writer")?).lines();
    match lines.next() {
        Some(Ok(line)) if line == READY => {}
        other => return Err(format!("the writer did not start: {other:?}").into()),
    }
    writeln!(child.stdin.take().ok_or("no stdin of the writer")?, "go")?;
    let latencies = tail_latencies(runtime, records);
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("the writer process failed: {status}").into());
    }
    latencies
}

/// `tail-writer --store PATH [--records N] [--interval-ms I]`: the writing process of
/// `tail-latency`; prints `ready`, waits for a line on stdin, then appends.
pub fn tail_writer(args: &Args) -> BenchResult<Value> {
    let path = args.path("store")?;
    let records = args.number("records", 500u64)?;
    let interval = Duration::from_millis(args.number("interval-ms", 10u64)?);
    let runtime = open_runtime(&path, Synchronous::Normal)?;
    println!("{READY}");
    std::io::stdout().flush()?;
    let mut go = String::new();
    std::io::stdin().read_line(&mut go)?;
    write_steadily(&runtime, records, interval)?;
    Ok(json!({ "appended": records }))
}

/// `trim-cost --dir D [--sizes 10000,100000,1000000] [--chunks 10] [--trims 5] [--repeats R]`:
/// the median time of a trim dropping `chunks` chunks, on an archive of each size.
pub fn trim_cost(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let sizes = args.numbers("sizes", &[10_000, 100_000, 1_000_000])?;
    let chunks = args.number("chunks", 10u64)?;
    let trims = args.number("trims", 5u64)?;
    let repeats = args.number("repeats", 3u64)?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("trim.db");
    let mut report = Report::new();
    report.config("sizes", sizes.clone());
    report.config("chunks", chunks);
    report.config("trims", trims);
    report.config("chunk_size", SUBSCRIBER_CHUNK_SIZE);
    for _ in 0..repeats {
        for &size in &sizes {
            if (trims * chunks + 1) * SUBSCRIBER_CHUNK_SIZE > size {
                return Err(format!(
                    "{trims} trims of {chunks} chunks need more than {size} records"
                )
                .into());
            }
            let runtime = fresh_archive(&path, Synchronous::Normal, size)?;
            let archive = SubscriberArchive::new(&runtime, FLOW_ID);
            let mut samples = Vec::new();
            for trim in 1..=trims {
                let before = trim * chunks * SUBSCRIBER_CHUNK_SIZE + 1;
                let started = Instant::now();
                let outcome = archive.trim(Trim::DropBefore(before))?;
                samples.push(started.elapsed().as_secs_f64() * 1e3);
                if outcome.dropped_chunks != chunks || outcome.oldest_sequence != before {
                    return Err(format!("trim before {before} did {outcome:?}").into());
                }
            }
            report.push(&format!("trim_ms@{size}"), "ms", median(&samples));
            drop(runtime);
            remove_store(&path)?;
        }
    }
    Ok(report.into_json())
}
