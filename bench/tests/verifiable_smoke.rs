//! The `verifiable` command at its smallest: every figure once per repeat, and positive.

use std::process::Command;

use serde_json::Value;

#[test]
fn the_verifiable_command_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_attrflow-bench"))
        .args(["verifiable", "--dir"])
        .arg(dir.path())
        .args(["--workers", "2", "--appends", "20", "--repeats", "1"])
        .args(["--proof-sizes", "100,1000", "--proofs", "5"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut names = vec![
        "appends_per_s@off".to_owned(),
        "appends_per_s@on".to_owned(),
        "on_over_off".to_owned(),
    ];
    for size in [100, 1000] {
        for figure in ["proof_us", "checkpoint_us", "switch_on_s"] {
            names.push(format!("{figure}@{size}"));
        }
    }
    for name in names {
        let values = report["series"][&name]["repeats"].as_array().unwrap();
        assert_eq!(values.len(), 1, "{name}");
        assert!(values[0].as_f64().unwrap() > 0.0, "{name}");
    }
}
