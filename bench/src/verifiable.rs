//! Verifiable logs (issue 53): what the tree costs an append, and what a proof costs as the
//! log grows.
//!
//! `verifiable --dir D [--workers 16] [--appends 50] [--proof-sizes 1000,1000000]
//! [--proofs 200] [--repeats R]`:
//! - `appends_per_s@off` / `appends_per_s@on`: `workers` threads, each registering
//!   `appends` subscribers on its own archive, at `synchronous=FULL`, the tree off or on
//!   (switched on while empty); the two interleaved repeat by repeat, each on a fresh store;
//!   `on_over_off` is their ratio per repeat.
//! - `proof_us@N`: the median latency of `proofs` inclusion proofs of spread-out records
//!   (tree size `N`) and `checkpoint_us@N` of as many tree heads, on an archive of `N`
//!   records switched on after it was written; `switch_on_s@N`: how long that switch-on took.

use std::time::Instant;

use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
use attrflow::store::Synchronous;
use serde_json::Value;

use crate::args::Args;
use crate::concurrent::appends_per_second_after;
use crate::populate::{fresh_archive, open_runtime, remove_store};
use crate::report::Report;
use crate::timing::{latencies_us, median};
use crate::BenchResult;

/// Runs the command; see the module docs.
pub fn run(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let workers = args.number("workers", 16u64)?;
    let appends = args.number("appends", 50u64)?;
    let sizes = args.numbers("proof-sizes", &[1_000, 1_000_000])?;
    let proofs = args.number("proofs", 200u64)?;
    let repeats = args.number("repeats", 3u64)?;
    std::fs::create_dir_all(&dir)?;
    let mut report = Report::new();
    report.config("workers", workers);
    report.config("appends", appends);
    report.config("proof_sizes", sizes.clone());
    report.config("proofs", proofs);
    for _ in 0..repeats {
        let mut rates = [0.0; 2];
        for (slot, label) in ["off", "on"].into_iter().enumerate() {
            let path = dir.join(format!("verifiable-{label}.db"));
            remove_store(&path)?;
            let runtime = open_runtime(&path, Synchronous::Full)?;
            let on = label == "on";
            rates[slot] = appends_per_second_after(&runtime, workers, appends, |archive| {
                if on {
                    archive.make_verifiable()?;
                }
                Ok(())
            })?;
            report.push(&format!("appends_per_s@{label}"), "ops/s", rates[slot]);
            drop(runtime);
            remove_store(&path)?;
        }
        report.push("on_over_off", "×", rates[1] / rates[0]);
    }
    for &size in &sizes {
        let path = dir.join(format!("verifiable-proofs-{size}.db"));
        remove_store(&path)?;
        let runtime = fresh_archive(&path, Synchronous::Normal, size)?;
        let archive = SubscriberArchive::new(&runtime, FLOW_ID);
        let started = Instant::now();
        archive.make_verifiable()?;
        let switch_on = started.elapsed().as_secs_f64();
        for _ in 0..repeats {
            report.push(&format!("switch_on_s@{size}"), "s", switch_on);
            let proof = latencies_us(proofs, |i| {
                // Spread over the log, the same records at every size's scale.
                let sequence = 1 + (i * 7_919) % size;
                archive.inclusion_proof(sequence, None)?;
                Ok(())
            })?;
            report.push(&format!("proof_us@{size}"), "us", median(&proof));
            let heads = latencies_us(proofs, |_| {
                archive.tree_head()?;
                Ok(())
            })?;
            report.push(&format!("checkpoint_us@{size}"), "us", median(&heads));
        }
        drop(runtime);
        remove_store(&path)?;
    }
    Ok(report.into_json())
}
