//! The figures measured inside one Rust process.

use attrflow::chunked_log::archive_token;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
use attrflow::store::Synchronous;
use attrflow::Runtime;
use serde_json::Value;

use crate::args::Args;
use crate::naive_log;
use crate::populate::{delivery_address, fresh_archive, open_runtime, remove_store, subscriber_id};
use crate::raw_sqlite::RawChunkedLog;
use crate::report::Report;
use crate::timing::{calls_per_second, latencies_us, median};
use crate::BenchResult;

const DEFAULT_SIZES: [u64; 5] = [1_000, 3_000, 10_000, 30_000, 100_000];

/// Register latency against history length, for the chunked archive and for the
/// single-Attribute log, each on a fresh store per size and repeat (`synchronous=NORMAL`,
/// so the figure is the append's own work rather than the disk's fsync).
pub fn append_growth(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let sizes = args.numbers("sizes", &DEFAULT_SIZES)?;
    let appends = args.number("appends", 200u64)?;
    let naive_appends = args.number("naive-appends", 10u64)?;
    let repeats = args.number("repeats", 5u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("sizes", sizes.clone());
    report.config("appends", appends);
    report.config("naive_appends", naive_appends);
    let mut naive_over_limit: Vec<u64> = Vec::new();
    for _ in 0..repeats {
        for &size in &sizes {
            let path = dir.join("growth-chunked.db");
            let runtime = fresh_archive(&path, Synchronous::Normal, size)?;
            let latencies = register_latencies(&runtime, size, appends)?;
            report.push(
                &format!("chunked_register_us@{size}"),
                "us",
                median(&latencies),
            );
            drop(runtime);
            remove_store(&path)?;

            let path = dir.join("growth-naive.db");
            remove_store(&path)?;
            let runtime = open_runtime(&path, Synchronous::Normal)?;
            match naive_latencies(&runtime, size, naive_appends) {
                Ok(latencies) => {
                    report.push(&format!("naive_append_us@{size}"), "us", median(&latencies))
                }
                Err(error) if over_value_limit(error.as_ref()) => {
                    if !naive_over_limit.contains(&size) {
                        naive_over_limit.push(size);
                    }
                }
                Err(error) => return Err(error),
            }
            drop(runtime);
            remove_store(&path)?;
        }
    }
    report.config("naive_over_limit", naive_over_limit);
    Ok(report.into_json())
}

/// Appends to a naive log holding `history` records; fails once the whole history no
/// longer fits in one stored value.
fn naive_latencies(runtime: &Runtime, history: u64, count: u64) -> BenchResult<Vec<f64>> {
    naive_log::start(runtime, history)?;
    latencies_us(count, |n| {
        let sequence = history + n + 1;
        naive_log::append_one(
            runtime,
            &subscriber_id(sequence),
            &delivery_address(sequence),
        )
    })
}

/// Whether `error` is attrflow refusing a value over `limits::MAX_VALUE_BYTES`: the naive
/// log's single value outgrew what one stored value may hold.
fn over_value_limit(error: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        error.downcast_ref::<attrflow::Error>(),
        Some(attrflow::Error::InvalidInput(message)) if message.starts_with("stored value")
    )
}

fn register_latencies(runtime: &Runtime, history: u64, count: u64) -> BenchResult<Vec<f64>> {
    let archive = SubscriberArchive::new(runtime, FLOW_ID);
    latencies_us(count, |n| {
        let sequence = history + n + 1;
        archive.register(&subscriber_id(sequence), &delivery_address(sequence))?;
        Ok(())
    })
}

/// Durable appends: attrflow's `register` through the Rust API against the same two-row
/// commit on raw rusqlite, at `synchronous=FULL` and `NORMAL`. Within each repeat the two
/// alternate in [`DURABLE_BATCHES`] batches, so a burst of another tenant's disk traffic
/// lands on both rather than on one.
pub fn durable(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let history = args.number("history", 1_000u64)?;
    let appends = args.number("appends", 200u64)?;
    let repeats = args.number("repeats", 5u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("history", history);
    report.config("appends", appends);
    report.config("batches", DURABLE_BATCHES);
    for _ in 0..repeats {
        for (label, synchronous) in [("full", Synchronous::Full), ("normal", Synchronous::Normal)] {
            let ours_path = dir.join(format!("durable-{label}-attrflow.db"));
            let raw_path = dir.join(format!("durable-{label}-raw.db"));
            let runtime = fresh_archive(&ours_path, synchronous, history)?;
            let mut raw = RawChunkedLog::create(&raw_path, synchronous, history)?;
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            let mut registered = history;
            for batch in 0..DURABLE_BATCHES {
                let count =
                    appends / DURABLE_BATCHES + u64::from(batch < appends % DURABLE_BATCHES);
                ours.extend(register_latencies(&runtime, registered, count)?);
                registered += count;
                theirs.extend(latencies_us(count, |_| raw.append())?);
            }
            report.push(&format!("attrflow_append_us@{label}"), "us", median(&ours));
            report.push(
                &format!("attrflow_appends_per_s@{label}"),
                "ops/s",
                rate(&ours),
            );
            report.push(&format!("raw_append_us@{label}"), "us", median(&theirs));
            report.push(
                &format!("raw_appends_per_s@{label}"),
                "ops/s",
                rate(&theirs),
            );
            drop((runtime, raw));
            remove_store(&ours_path)?;
            remove_store(&raw_path)?;
        }
    }
    Ok(report.into_json())
}

/// How many alternating batches a durable repeat is split into.
const DURABLE_BATCHES: u64 = 10;

fn rate(latencies_us: &[f64]) -> f64 {
    let total: f64 = latencies_us.iter().sum();
    if total > 0.0 {
        latencies_us.len() as f64 * 1e6 / total
    } else {
        0.0
    }
}

/// Rust-native calls per second of `register` and of an archived page read
/// (`synchronous=NORMAL`), the reference for the Python clients.
pub fn native_rates(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let history = args.number("history", 1_000u64)?;
    let calls = args.number("calls", 1_000u64)?;
    let repeats = args.number("repeats", 5u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("history", history);
    report.config("calls", calls);
    for _ in 0..repeats {
        let path = dir.join("native-rates.db");
        let runtime = fresh_archive(&path, Synchronous::Normal, history)?;
        report.push(
            "register_per_s",
            "ops/s",
            register_rate(&runtime, history, calls)?,
        );
        report.push("page_per_s", "ops/s", page_rate(&runtime, calls)?);
        drop(runtime);
        remove_store(&path)?;
    }
    Ok(report.into_json())
}

fn register_rate(runtime: &Runtime, history: u64, calls: u64) -> BenchResult<f64> {
    let archive = SubscriberArchive::new(runtime, FLOW_ID);
    calls_per_second(calls, |n| {
        let sequence = history + n + 1;
        archive.register(&subscriber_id(sequence), &delivery_address(sequence))?;
        Ok(())
    })
}

fn page_rate(runtime: &Runtime, calls: u64) -> BenchResult<f64> {
    let archive = SubscriberArchive::new(runtime, FLOW_ID);
    let token = archive_token(101)?;
    calls_per_second(calls, |_| {
        let page = archive.page(&token)?;
        if page.subscribers.len() != 100 {
            return Err(format!("page {token} held {} subscribers", page.subscribers.len()).into());
        }
        Ok(())
    })
}
