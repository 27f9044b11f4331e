//! The disk's durability floor: how long a small write plus fsync takes in the store's
//! folder. A `synchronous=FULL` commit in WAL mode pays at least one of these.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};

use serde_json::Value;

use crate::args::Args;
use crate::report::Report;
use crate::timing::{latencies_us, median};
use crate::BenchResult;

const BLOCK: [u8; 4096] = [0x5a; 4096];

/// Times `--samples` rounds of (overwrite 4 KiB + fdatasync) and of (append 4 KiB + fsync)
/// on a scratch file in `--dir`, `--repeats` times.
pub fn run(args: &Args) -> BenchResult<Value> {
    let dir = args.path("dir")?;
    let samples = args.number("samples", 200u64)?;
    let repeats = args.number("repeats", 5u64)?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("fsync-probe.bin");
    let mut report = Report::new();
    report.config("samples", samples);
    for _ in 0..repeats {
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)?;
        let overwrite = latencies_us(samples, |_| {
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&BLOCK)?;
            file.sync_data()?;
            Ok(())
        })?;
        let append = latencies_us(samples, |_| {
            file.seek(SeekFrom::End(0))?;
            file.write_all(&BLOCK)?;
            file.sync_all()?;
            Ok(())
        })?;
        report.push("overwrite_fdatasync_us", "us", median(&overwrite));
        report.push("append_fsync_us", "us", median(&append));
    }
    std::fs::remove_file(&path)?;
    Ok(report.into_json())
}
