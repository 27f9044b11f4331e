//! `pg-appenders`: appends per second of many threads on a PostgreSQL store, on one
//! archive and on one archive per thread, with the lock conflicts they retried.
//!
//! ```text
//! pg-appenders URL [THREADS=16] [SECONDS=5] [SHAPES=1,THREADS] [STORES=1]
//! ```
//!
//! Each thread registers subscribers in a loop (retrying lock conflicts after a 200 µs
//! pause) for SECONDS (fractions allowed), once per shape: a shape is a number of archives
//! the threads share (thread `t` on archive `t % archives`), by default all on one archive,
//! then each on its own. With STORES above 1, the process opens that many stores on the
//! URL and thread `t` calls through store `t % STORES` (as several clients of one
//! process would). Prints one JSON object per shape, with the COMMITs the stores'
//! group-commit pipeline (which they share) sent per append (0 with `group_commit=off`).
//!
//! The stores take their options from URL as given, so the defaults unless it sets them: a
//! pool of 8 connections and half of them as group-commit lanes. With `group_commit=off`
//! give it `pool_max_size=THREADS`, or the threads queue for connections.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use attrflow::flows::chunked_subscriber::SubscriberArchive;
use attrflow::store::PostgresStore;
use attrflow::{Error, Runtime};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The pause before retrying a lock conflict: short, but long enough that waiting
/// threads do not spin the CPU away from the server on a small machine.
const CONFLICT_PAUSE: Duration = Duration::from_micros(200);

fn main() -> BenchResult<()> {
    let mut argv = std::env::args().skip(1);
    let url = argv
        .next()
        .ok_or("usage: pg-appenders URL [THREADS=16] [SECONDS=5] [SHAPES=1,THREADS] [STORES=1]")?;
    let threads: u64 = argv.next().map_or(Ok(16), |t| t.parse())?;
    let seconds: f64 = argv.next().map_or(Ok(5.0), |s| s.parse())?;
    let shapes: Vec<u64> = match argv.next() {
        Some(shapes) => shapes
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?,
        None => vec![1, threads],
    };
    let stores: u64 = argv.next().map_or(Ok(1), |s| s.parse())?;
    if !seconds.is_finite() || seconds <= 0.0 || shapes.contains(&0) || stores == 0 {
        return Err(
            "SECONDS must be positive, every shape at least one archive, STORES at least one"
                .into(),
        );
    }
    let schema = format!("bench_{}", std::process::id());
    let separator = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{separator}schema={schema}");
    let stores: Vec<Arc<PostgresStore>> = (0..stores)
        .map(|_| PostgresStore::open(&url).map(Arc::new))
        .collect::<Result<_, _>>()?;
    let runtimes: Vec<Runtime> = stores
        .iter()
        .map(|store| Runtime::new(store.clone()))
        .collect();
    for flows in shapes {
        run(
            &runtimes,
            &stores,
            threads,
            flows,
            Duration::from_secs_f64(seconds),
        )?;
    }
    Ok(())
}

fn run(
    runtimes: &[Runtime],
    stores: &[Arc<PostgresStore>],
    threads: u64,
    flows: u64,
    length: Duration,
) -> BenchResult<()> {
    let flow_ids: Vec<String> = (0..flows)
        .map(|f| format!("bench-{threads}-{flows}-{f}"))
        .collect();
    for flow_id in &flow_ids {
        SubscriberArchive::new(&runtimes[0], flow_id).start()?;
    }
    // Stores opened with one URL share their lanes: the first store's count is all of them.
    let commits = || stores[0].group_stats().commits;
    let before = commits();
    let appends = AtomicU64::new(0);
    let conflicts = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    thread::scope(|s| -> BenchResult<()> {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (flow_ids, appends, conflicts, stop) = (&flow_ids, &appends, &conflicts, &stop);
                s.spawn(move || -> Result<(), Error> {
                    let flow_id = &flow_ids[(t % flows) as usize];
                    let runtime = &runtimes[(t % runtimes.len() as u64) as usize];
                    let archive = SubscriberArchive::new(runtime, flow_id);
                    let mut k = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let id = format!("t{t}-{k}");
                        match archive.register(&id, "bench@example.com") {
                            Ok(_) => {
                                appends.fetch_add(1, Ordering::Relaxed);
                                k += 1;
                            }
                            Err(Error::LockConflict(_)) => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                                thread::sleep(CONFLICT_PAUSE);
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        thread::sleep(length);
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker.join().map_err(|_| "a worker panicked")??;
        }
        Ok(())
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let appends = appends.load(Ordering::Relaxed);
    let commits = commits() - before;
    println!(
        "{}",
        serde_json::json!({
            "threads": threads,
            "flows": flows,
            "stores": runtimes.len(),
            "seconds": elapsed,
            "appends": appends,
            "appends_per_second": appends as f64 / elapsed,
            "lock_conflicts": conflicts.load(Ordering::Relaxed),
            "commits_per_append": commits as f64 / appends.max(1) as f64,
        })
    );
    Ok(())
}
