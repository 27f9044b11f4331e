//! The subscriber archive used directly from Rust: start it, register subscribers from
//! several threads with the retry-on-conflict loop an app writes, then page the whole
//! archive back, newest first, and check that every subscriber is there exactly once.
//!
//! ```sh
//! cargo run -p attrflow-rust-examples --example subscriber_archive -- data/archive.db
//! ```

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use attrflow::flows::chunked_subscriber::{Subscriber, SubscriberArchive, FLOW_ID};
use attrflow::{Error, Runtime};

const THREADS: u64 = 4;
const PER_THREAD: u64 = 60;

/// Registers one subscriber, retrying while another thread holds the archive's lock.
fn register(archive: &SubscriberArchive<'_>, id: &str) -> Result<Subscriber, Error> {
    let mut pause = Duration::from_millis(1);
    loop {
        match archive.register(id, &format!("{id}@example.com")) {
            Err(Error::LockConflict(_)) => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            done => return done,
        }
    }
}

fn run(store: &str) -> Result<(), Error> {
    let runtime = Runtime::open(store)?;
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    let run_id = archive.start()?; // idempotent: the same run ID on every start
    println!("archive {FLOW_ID} run {run_id} in {store}");
    let before = archive
        .page("current")?
        .subscribers
        .first()
        .map_or(0, |s| s.sequence);

    thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                scope.spawn(move || {
                    (0..PER_THREAD)
                        .map(|n| register(&archive, &format!("subscriber-{t}-{n:03}")))
                        .collect::<Result<Vec<_>, Error>>()
                })
            })
            .collect();
        workers.into_iter().try_for_each(|worker| {
            worker
                .join()
                .map_err(|_| Error::handler("a registering thread panicked"))?
                .map(drop)
        })
    })?;

    let mut sequences = BTreeSet::new();
    let mut token = String::from("current");
    while !token.is_empty() {
        let page = archive.page(&token)?;
        println!(
            "page {:>20}: {:>3} subscribers, newest {:?}",
            page.page_token,
            page.subscribers.len(),
            page.subscribers.first().map(|s| s.sequence)
        );
        sequences.extend(page.subscribers.iter().map(|s| s.sequence));
        token = page.next_page_token;
    }
    let expected: BTreeSet<u64> = (1..=before + THREADS * PER_THREAD).collect();
    if sequences != expected {
        return Err(Error::storage(format!(
            "paged {} distinct sequences, expected 1..={}",
            sequences.len(),
            expected.len()
        )));
    }
    println!("all {} subscribers paged back exactly once", expected.len());
    Ok(())
}

fn main() -> ExitCode {
    let store = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/attrflow.db".to_owned());
    match run(&store) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
