//! Appends from many threads at once: the Rust side of the Python clients' concurrency
//! figure (16 `AsyncClient` tasks against 16 threads doing the same appends).

use std::time::Instant;

use attrflow::flows::chunked_subscriber::SubscriberArchive;
use attrflow::store::Synchronous;
use attrflow::Runtime;
use serde_json::Value;

use crate::args::Args;
use crate::populate::{delivery_address, open_runtime, remove_store, subscriber_id};
use crate::report::Report;
use crate::BenchResult;

/// The flow ID of worker `worker`'s own archive: workers never contend for a lock, so the
/// figure is the store's and the callers' concurrency, not lock retries.
pub fn flow_id(worker: u64) -> String {
    format!("concurrent-{worker:02}")
}

/// `concurrent-appends --dir D [--workers 16] [--appends 50] [--repeats R]`: appends per
/// second of `workers` threads, each registering `appends` subscribers on its own archive,
/// on a fresh store at `synchronous=NORMAL` and at `FULL` (reported as
/// `appends_per_s@normal` and `appends_per_s@full`).
pub fn run(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let workers = args.number("workers", 16u64)?;
    let appends = args.number("appends", 50u64)?;
    let repeats = args.number("repeats", 5u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("workers", workers);
    report.config("appends", appends);
    for _ in 0..repeats {
        for (label, synchronous) in [("normal", Synchronous::Normal), ("full", Synchronous::Full)] {
            let path = dir.join(format!("concurrent-{label}.db"));
            remove_store(&path)?;
            let runtime = open_runtime(&path, synchronous)?;
            let rate = appends_per_second(&runtime, workers, appends)?;
            report.push(&format!("appends_per_s@{label}"), "ops/s", rate);
            drop(runtime);
            remove_store(&path)?;
        }
    }
    Ok(report.into_json())
}

fn appends_per_second(runtime: &Runtime, workers: u64, appends: u64) -> BenchResult<f64> {
    appends_per_second_after(runtime, workers, appends, |_| Ok(()))
}

/// Appends per second of `workers` threads, each registering `appends` subscribers on its
/// own archive, started and then handed to `prepare` (untimed).
pub fn appends_per_second_after(
    runtime: &Runtime,
    workers: u64,
    appends: u64,
    prepare: impl Fn(&SubscriberArchive<'_>) -> BenchResult<()>,
) -> BenchResult<f64> {
    let ids: Vec<String> = (0..workers).map(flow_id).collect();
    for id in &ids {
        let archive = SubscriberArchive::new(runtime, id);
        archive.start()?;
        prepare(&archive)?;
    }
    let started = Instant::now();
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| {
                scope.spawn(move || {
                    let archive = SubscriberArchive::new(runtime, id);
                    for sequence in 1..=appends {
                        archive
                            .register(&subscriber_id(sequence), &delivery_address(sequence))
                            .map_err(|e| e.to_string())?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err("a worker panicked".to_owned()))
            })
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    for outcome in outcomes {
        outcome?;
    }
    Ok((workers * appends) as f64 / elapsed)
}
