//! `pg-readers`: page reads per second of threads on a PostgreSQL store, one at a time per
//! thread, each a lock-free RPC reading one snapshot.
//!
//! ```text
//! pg-readers URL [THREADS=1,16] [SECONDS=3]
//! ```
//!
//! Fills one archive with 150 subscribers (one archived chunk of 100, 50 in `current`),
//! then, for each thread count, every thread reads pages in a loop for SECONDS (fractions
//! allowed), taking turns between the archived page and `current`. Prints one JSON object
//! per thread count. The store takes its options from URL as given (a pool of 8
//! connections unless it says otherwise), in a schema of its own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use attrflow::chunked_log::archive_token;
use attrflow::flows::chunked_subscriber::SubscriberArchive;
use attrflow::store::PostgresStore;
use attrflow::Runtime;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const USAGE: &str = "usage: pg-readers URL [THREADS=1,16] [SECONDS=3]";

fn main() -> BenchResult<()> {
    let mut argv = std::env::args().skip(1);
    let url = argv.next().ok_or(USAGE)?;
    let threads: Vec<u64> = match argv.next() {
        Some(counts) => counts
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?,
        None => vec![1, 16],
    };
    let seconds: f64 = argv.next().map_or(Ok(3.0), |s| s.parse())?;
    if !seconds.is_finite() || seconds <= 0.0 || threads.contains(&0) {
        return Err(format!("SECONDS must be positive and THREADS at least one; {USAGE}").into());
    }
    let schema = format!("bench_{}", std::process::id());
    let separator = if url.contains('?') { '&' } else { '?' };
    let store = PostgresStore::open(&format!("{url}{separator}schema={schema}"))?;
    let runtime = Runtime::new(std::sync::Arc::new(store));
    let archive = SubscriberArchive::new(&runtime, "readers");
    archive.start()?;
    for n in 1..=150 {
        archive.register(&format!("subscriber-{n:07}"), "reader@example.com")?;
    }
    let archived = archive_token(1)?;
    for count in threads {
        let reads = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        thread::scope(|s| -> BenchResult<()> {
            let workers: Vec<_> = (0..count)
                .map(|_| {
                    let (runtime, archived, reads, stop) = (&runtime, &archived, &reads, &stop);
                    s.spawn(move || -> Result<(), attrflow::Error> {
                        let archive = SubscriberArchive::new(runtime, "readers");
                        let mut turn = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            let token = if turn % 2 == 0 { archived } else { "current" };
                            archive.page(token)?;
                            reads.fetch_add(1, Ordering::Relaxed);
                            turn += 1;
                        }
                        Ok(())
                    })
                })
                .collect();
            thread::sleep(Duration::from_secs_f64(seconds));
            stop.store(true, Ordering::Relaxed);
            for worker in workers {
                worker.join().map_err(|_| "a reader thread panicked")??;
            }
            Ok(())
        })?;
        let elapsed = started.elapsed().as_secs_f64();
        let reads = reads.load(Ordering::Relaxed);
        println!(
            "{}",
            serde_json::json!({
                "threads": count,
                "reads": reads,
                "reads_per_s": (reads as f64 / elapsed).round(),
                "mean_latency_us": (elapsed * 1e6 * count as f64 / reads.max(1) as f64).round(),
            })
        );
    }
    Ok(())
}
