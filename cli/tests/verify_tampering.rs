//! `attrflow verify` on a verifiable log whose SQLite file was edited behind attrflow's
//! back: an edited field, a removed record, two swapped records and a chunk replaced by
//! another log's are each reported with the first bad sequence (exit code 1); an honest
//! log passes; `--checkpoint` checks the log against a checkpoint signed earlier.

mod common;

use std::path::Path;
use std::process::Output;

use common::{attrflow, stdout as ok};

const CHUNK: &str = "log_chunks/audit.00000000000000000101";

fn failure(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn export_lines(from: u64, to: u64, tag: &str) -> String {
    (from..=to)
        .map(|n| format!("{{\"record\":{{\"n\":{n},\"tag\":\"{tag}\"}},\"sequence\":{n}}}\n"))
        .collect()
}

/// A store with two app-log flows `f` and `g`, each with a verifiable log `audit` of 250
/// records (switched on after 120 of them).
fn store(path: &Path) -> String {
    let store = path.display().to_string();
    for flow in ["f", "g"] {
        let import = ["-s", &store, "import", flow, "--log", "audit"];
        ok(&attrflow(&import, export_lines(1, 120, flow).as_bytes()));
        ok(&attrflow(
            &["-s", &store, "verifiable", flow, "--log", "audit"],
            b"",
        ));
        ok(&attrflow(&import, export_lines(121, 250, flow).as_bytes()));
    }
    store
}

fn tampered(dir: &Path, name: &str, sql: &str) -> String {
    let path = dir.join(name);
    let store = store(&path);
    let conn = rusqlite::Connection::open(&path).expect("sqlite opens");
    let changed = conn.execute(sql, [CHUNK]).expect("store edited");
    assert_eq!(changed, 1, "{sql}");
    store
}

#[test]
fn an_honest_verifiable_log_passes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = store(&dir.path().join("honest.db"));
    let out = ok(&attrflow(&["-s", &store, "verify"], b""));
    assert_eq!(
        out,
        "ok: 2 flows, 2 chunked logs, 500 records\n\
         ok: 2 verifiable logs, every record's leaf matches its stored tree\n"
    );
}

#[test]
fn tampering_is_reported_with_the_first_bad_sequence() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "edited",
            "UPDATE attribute_values SET value = json_set(value, '$.entries[4].record.n', 999) \
             WHERE flow_id = 'f' AND name = ?1",
            105,
        ),
        (
            "removed",
            "UPDATE attribute_values SET value = json_remove(value, '$.entries[7]') \
             WHERE flow_id = 'f' AND name = ?1",
            108,
        ),
        (
            "swapped",
            "UPDATE attribute_values SET value = json_set(value, \
             '$.entries[2]', json(json_extract(value, '$.entries[3]')), \
             '$.entries[3]', json(json_extract(value, '$.entries[2]'))) \
             WHERE flow_id = 'f' AND name = ?1",
            103,
        ),
        (
            "replaced",
            "UPDATE attribute_values SET value = (SELECT value FROM attribute_values \
             WHERE flow_id = 'g' AND name = ?1) WHERE flow_id = 'f' AND name = ?1",
            101,
        ),
    ];
    for (name, sql, first_bad) in cases {
        let store = tampered(dir.path(), &format!("{name}.db"), sql);
        let error = failure(&attrflow(&["-s", &store, "verify"], b""));
        assert!(
            error.contains(&format!(
                "{CHUNK}: record {first_bad} does not match the stored tree"
            )),
            "{name}: {error}"
        );
    }
}

#[test]
fn verify_checks_the_log_against_an_earlier_signed_checkpoint() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("c.db");
    let store = store(&path);
    let keys = ok(&attrflow(&["keygen", "audit"], b""));
    let (signer, verifier) = keys.trim_end().split_once('\n').expect("two lines");
    let key = dir.path().join("key");
    std::fs::write(&key, signer).expect("key written");
    let note = ok(&attrflow(
        &[
            "-s",
            &store,
            "checkpoint",
            "f",
            "--log",
            "audit",
            "--key",
            &key.display().to_string(),
        ],
        b"",
    ));
    let checkpoint = dir.path().join("checkpoint");
    std::fs::write(&checkpoint, &note).expect("checkpoint written");
    let checkpoint = checkpoint.display().to_string();
    let import = ["-s", &store, "import", "f", "--log", "audit"];
    ok(&attrflow(&import, export_lines(251, 260, "f").as_bytes()));
    let out = ok(&attrflow(
        &[
            "-s",
            &store,
            "verify",
            "--checkpoint",
            &checkpoint,
            "--verifier-key",
            verifier,
        ],
        b"",
    ));
    assert!(
        out.starts_with(
            "ok: consistent with the checkpoint of attrflow/f/audit at tree size 250\n"
        ),
        "{out}"
    );

    // Another key's verifier: the signature does not check.
    let other = ok(&attrflow(&["keygen", "other"], b""));
    let other_verifier = other.lines().nth(1).expect("verifier line");
    let error = failure(&attrflow(
        &[
            "-s",
            &store,
            "verify",
            "--checkpoint",
            &checkpoint,
            "--verifier-key",
            other_verifier,
        ],
        b"",
    ));
    assert!(error.contains("checkpoint file"), "{error}");
    let error = failure(&attrflow(
        &[
            "-s",
            &store,
            "verify",
            "--checkpoint",
            &checkpoint,
            "--verifier-key",
            "nonsense",
        ],
        b"",
    ));
    assert!(error.contains("malformed key"), "{error}");

    // A history rewritten whole (records and tree consistent with each other, so the
    // content check passes), and one cut short: the checkpoint tells.
    for (name, records, expected) in [
        (
            "rewritten",
            260,
            "its root at tree size 250 differs from the checkpoint's",
        ),
        (
            "cut",
            200,
            "the checkpoint's tree size 250 is beyond the log's 200 records",
        ),
    ] {
        let other = dir.path().join(format!("{name}.db")).display().to_string();
        let import = ["-s", &other, "import", "f", "--log", "audit"];
        ok(&attrflow(
            &import,
            export_lines(1, records, name).as_bytes(),
        ));
        ok(&attrflow(
            &["-s", &other, "verifiable", "f", "--log", "audit"],
            b"",
        ));
        let error = failure(&attrflow(
            &[
                "-s",
                &other,
                "verify",
                "--checkpoint",
                &checkpoint,
                "--verifier-key",
                verifier,
            ],
            b"",
        ));
        assert!(error.contains(expected), "{name}: {error}");
    }
}
