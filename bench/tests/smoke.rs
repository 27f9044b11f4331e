//! Runs every command of the benchmark binary at the smallest sizes, so the harness keeps
//! working between full `make bench` runs.

use std::process::Command;

use serde_json::Value;

fn bench(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_attrflow-bench"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn repeats(report: &Value, series: &str) -> Vec<f64> {
    report["series"][series]["repeats"]
        .as_array()
        .unwrap_or_else(|| panic!("no series {series} in {report}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn assert_positive(report: &Value, series: &str, count: usize) {
    let values = repeats(report, series);
    assert_eq!(values.len(), count, "{series}");
    assert!(values.iter().all(|v| *v > 0.0), "{series}: {values:?}");
}

#[test]
fn every_command_reports_one_positive_value_per_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();

    let fsync = bench(&[
        "fsync",
        "--dir",
        dir_arg,
        "--samples",
        "3",
        "--repeats",
        "2",
    ]);
    assert_positive(&fsync, "append_fsync_us", 2);
    assert_positive(&fsync, "overwrite_fdatasync_us", 2);

    let growth = bench(&[
        "append-growth",
        "--dir",
        dir_arg,
        "--sizes",
        "1,150",
        "--appends",
        "3",
        "--naive-appends",
        "2",
        "--repeats",
        "2",
    ]);
    for series in ["chunked_register_us", "naive_append_us"] {
        assert_positive(&growth, &format!("{series}@1"), 2);
        assert_positive(&growth, &format!("{series}@150"), 2);
    }

    let durable = bench(&[
        "durable",
        "--dir",
        dir_arg,
        "--history",
        "99",
        "--appends",
        "3",
        "--repeats",
        "1",
    ]);
    for series in ["attrflow_appends_per_s", "raw_appends_per_s"] {
        assert_positive(&durable, &format!("{series}@full"), 1);
        assert_positive(&durable, &format!("{series}@normal"), 1);
    }

    let rates = bench(&[
        "native-rates",
        "--dir",
        dir_arg,
        "--history",
        "200",
        "--calls",
        "3",
        "--repeats",
        "1",
    ]);
    assert_positive(&rates, "register_per_s", 1);
    assert_positive(&rates, "page_per_s", 1);

    let store = dir.path().join("populated.db");
    let populated = bench(&[
        "populate",
        "--store",
        store.to_str().unwrap(),
        "--records",
        "250",
    ]);
    assert_eq!(populated["records"], 250);
    assert!(store.is_file());
}

#[test]
fn tail_latency_and_trim_cost_report_one_positive_value_per_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();

    let tail = bench(&[
        "tail-latency",
        "--dir",
        dir_arg,
        "--records",
        "5",
        "--interval-ms",
        "2",
        "--repeats",
        "2",
    ]);
    for mode in ["in_process", "cross_process"] {
        assert_positive(&tail, &format!("{mode}_p50_us"), 2);
        assert_positive(&tail, &format!("{mode}_p99_us"), 2);
    }

    let trim = bench(&[
        "trim-cost",
        "--dir",
        dir_arg,
        "--sizes",
        "300,1000",
        "--chunks",
        "1",
        "--trims",
        "2",
        "--repeats",
        "2",
    ]);
    assert_positive(&trim, "trim_ms@300", 2);
    assert_positive(&trim, "trim_ms@1000", 2);
}

#[test]
fn unknown_commands_and_options_are_refused_by_name() {
    for (args, message) in [
        (&["frobnicate"][..], "unknown command \"frobnicate\""),
        (
            &["fsync", "--dir", ".", "--colour", "red"][..],
            "unknown option --colour",
        ),
        (
            &["populate", "--records", "x", "--store", "s"][..],
            "--records must be a number",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_attrflow-bench"))
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
