//! Stores that already hold a long history, written in one batch at start instead of one
//! append at a time, so a benchmark at 100,000 or 1,000,000 records starts in seconds.
//!
//! The chunked archive is started with its chunks and state as initial values, laid out
//! exactly as that many `RegisterSubscriber` calls would have left them.

use std::path::Path;

use attrflow::chunked_log::{archive_token, LogState, CURRENT_CHUNK};
use attrflow::flows::chunked_subscriber::{
    Subscriber, ARCHIVE_STATE_ATTRIBUTE, FLOW_ID, FLOW_TYPE, SUBSCRIBER_CHUNKS_MAP,
    SUBSCRIBER_CHUNK_SIZE,
};
use attrflow::store::{SqliteOptions, SqliteStore, Synchronous};
use attrflow::{Runtime, StartFlowOptions};
use serde_json::{json, Value};

use crate::args::Args;
use crate::BenchResult;

/// The field of a subscriber chunk that holds its records.
const SUBSCRIBERS_FIELD: &str = "subscribers";

/// The subscriber with sequence `sequence`, as every benchmark registers it.
pub fn subscriber(sequence: u64) -> Subscriber {
    Subscriber {
        sequence,
        subscriber_id: subscriber_id(sequence),
        delivery_address: delivery_address(sequence),
    }
}

/// The subscriber ID registered `sequence`-th.
pub fn subscriber_id(sequence: u64) -> String {
    format!("subscriber-{sequence:07}")
}

/// The delivery address registered `sequence`-th.
pub fn delivery_address(sequence: u64) -> String {
    format!("subscriber-{sequence:07}@example.com")
}

/// A runtime on the SQLite file `path` with `synchronous`.
pub fn open_runtime(path: &Path, synchronous: Synchronous) -> BenchResult<Runtime> {
    let options = SqliteOptions {
        synchronous,
        ..SqliteOptions::default()
    };
    Ok(Runtime::new(std::sync::Arc::new(SqliteStore::open_with(
        path, options,
    )?)))
}

/// A subscriber chunk holding the records `first..=last`, oldest first.
pub fn chunk(first: u64, last: u64) -> Value {
    let records: Vec<Subscriber> = (first..=last).map(subscriber).collect();
    json!({ SUBSCRIBERS_FIELD: records })
}

/// Starts the subscriber archive under [`FLOW_ID`] holding subscribers `1..=records`.
pub fn start_archive(runtime: &Runtime, records: u64) -> BenchResult<()> {
    let size = SUBSCRIBER_CHUNK_SIZE;
    let mut options = StartFlowOptions::new();
    if records > 0 {
        let archived = (records - 1) / size;
        for index in 0..archived {
            let first = index * size + 1;
            options = options.with_map_instance(
                SUBSCRIBER_CHUNKS_MAP,
                archive_token(first)?,
                chunk(first, first + size - 1),
            );
        }
        options = options.with_map_instance(
            SUBSCRIBER_CHUNKS_MAP,
            CURRENT_CHUNK,
            chunk(archived * size + 1, records),
        );
        let state = LogState {
            next_sequence: records + 1,
            latest_archived_chunk_token: match archived {
                0 => String::new(),
                n => archive_token((n - 1) * size + 1)?,
            },
            ..LogState::default()
        };
        options = options.with_attribute(ARCHIVE_STATE_ATTRIBUTE, serde_json::to_value(state)?);
    }
    runtime.start_flow(FLOW_TYPE, FLOW_ID, &options)?;
    Ok(())
}

/// A fresh store at `path` (any old one is removed) holding `records` subscribers.
pub fn fresh_archive(path: &Path, synchronous: Synchronous, records: u64) -> BenchResult<Runtime> {
    remove_store(path)?;
    let runtime = open_runtime(path, synchronous)?;
    start_archive(&runtime, records)?;
    Ok(runtime)
}

/// Removes an SQLite file and its WAL and shared-memory files, if present.
pub fn remove_store(path: &Path) -> BenchResult<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

/// `populate --store PATH --records N`: writes a fresh store for the Python and HTTP
/// benchmarks.
pub fn run(args: &Args) -> BenchResult<Value> {
    let path = args.path("store")?;
    let records = args.number("records", 1000u64)?;
    fresh_archive(&path, Synchronous::Normal, records)?;
    Ok(json!({"store": path.display().to_string(), "records": records}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use attrflow::flows::chunked_subscriber::SubscriberArchive;

    /// A batch-written archive pages and appends exactly as one built by registering.
    #[test]
    fn a_populated_archive_continues_where_registering_would() {
        let dir = tempfile::tempdir().unwrap();
        for records in [0, 1, 100, 101, 250] {
            let path = dir.path().join(format!("populated-{records}.db"));
            let runtime = fresh_archive(&path, Synchronous::Normal, records).unwrap();
            let archive = SubscriberArchive::new(&runtime, FLOW_ID);
            let mut seen = Vec::new();
            let mut token = "current".to_owned();
            while !token.is_empty() {
                let page = archive.page(&token).unwrap();
                seen.extend(page.subscribers.iter().map(|s| s.sequence));
                token = page.next_page_token;
            }
            let expected: Vec<u64> = (1..=records).rev().collect();
            assert_eq!(seen, expected, "{records} records");
            let next = archive.register("next", "next@example.com").unwrap();
            assert_eq!(next.sequence, records + 1);
            assert_eq!(archive.page("current").unwrap().subscribers[0], next);
        }
    }
}
