//! `attrflow-bench`: measures attrflow and its in-process baselines and prints the results
//! as one JSON object on stdout, for `bench/run.py` to put side by side.
//!
//! ```text
//! attrflow-bench fsync          --dir D [--samples N]
//! attrflow-bench append-growth  --dir D [--sizes 1000,100000] [--appends N] [--naive-appends N] [--repeats R]
//! attrflow-bench durable        --dir D [--history N] [--appends N] [--repeats R]
//! attrflow-bench native-rates   --dir D [--history N] [--calls N] [--repeats R]
//! attrflow-bench concurrent-appends --dir D [--workers N] [--appends N] [--repeats R]
//! attrflow-bench populate       --store PATH --records N
//! attrflow-bench concurrency    --dir D [--threads 16] [--seconds S] [--repeats R] [--latency-calls N] [--only MODE.SHAPE] [--commit-delay-us N]
//! attrflow-bench tail-latency   --dir D [--records N] [--interval-ms I] [--repeats R]
//! attrflow-bench tail-writer    --store PATH [--records N] [--interval-ms I]
//! attrflow-bench trim-cost      --dir D [--sizes 10000,100000,1000000] [--chunks C] [--trims T] [--repeats R]
//! attrflow-bench verifiable     --dir D [--workers 16] [--appends 50] [--proof-sizes 1000,1000000] [--proofs N] [--repeats R]
//! ```
//!
//! Every figure is reported once per repeat, so the caller can give a median and a spread;
//! the systems compared in one figure run interleaved, repeat by repeat, in this process.

mod args;
mod concurrency;
mod concurrent;
mod fsync;
mod naive_log;
mod populate;
mod raw_sqlite;
mod report;
mod scenarios;
mod tailing;
mod timing;
mod verifiable;

use std::process::ExitCode;

use args::Args;

/// What the binary's functions fail with: any error, shown to the user as text.
pub type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const USAGE: &str =
    "usage: attrflow-bench <fsync|append-growth|durable|native-rates|concurrent-appends|populate|concurrency|tail-latency|tail-writer|trim-cost|verifiable> [--option value]...";

fn main() -> ExitCode {
    match run() {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("attrflow-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> BenchResult<serde_json::Value> {
    let mut argv = std::env::args().skip(1);
    let command = argv.next().ok_or(USAGE)?;
    let args = Args::parse(argv)?;
    let report = match command.as_str() {
        "fsync" => fsync::run(&args)?,
        "append-growth" => scenarios::append_growth(&args)?,
        "durable" => scenarios::durable(&args)?,
        "native-rates" => scenarios::native_rates(&args)?,
        "concurrent-appends" => concurrent::run(&args)?,
        "populate" => populate::run(&args)?,
        "concurrency" => concurrency::run(&args)?,
        "tail-latency" => tailing::tail_latency(&args)?,
        "tail-writer" => tailing::tail_writer(&args)?,
        "trim-cost" => tailing::trim_cost(&args)?,
        "verifiable" => verifiable::run(&args)?,
        other => return Err(format!("unknown command {other:?}; {USAGE}").into()),
    };
    args.reject_unused()?;
    Ok(report)
}
