//! The `concurrency` command at its smallest: every figure once per repeat, and appends
//! that really shared COMMITs counted as such; every append writes its WAL frames.

use std::process::Command;

use serde_json::Value;

#[test]
fn the_concurrency_command_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_attrflow-bench"))
        .args(["concurrency", "--dir"])
        .arg(dir.path())
        .args(["--threads", "4", "--seconds", "0.1", "--repeats", "1"])
        .args(["--latency-calls", "3"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    for mode in ["grouped", "per_call", "delayed"] {
        let name = format!("{mode}.single_append_us");
        assert_eq!(
            report["series"][&name]["repeats"].as_array().unwrap().len(),
            1,
            "{name}"
        );
    }
    for mode in ["grouped", "per_call"] {
        for shape in ["one_flow", "many_flows"] {
            for figure in ["appends_per_s", "commits_per_append", "written_per_append"] {
                let name = format!("{mode}.{shape}.{figure}");
                let values = report["series"][&name]["repeats"].as_array().unwrap();
                assert_eq!(values.len(), 1, "{name}");
                assert!(values[0].as_f64().unwrap() > 0.0, "{name}");
            }
        }
    }
    let per_call = report["series"]["per_call.one_flow.commits_per_append"]["repeats"][0]
        .as_f64()
        .unwrap();
    assert_eq!(
        per_call, 1.0,
        "group_max_calls=1 commits every call on its own"
    );
}
