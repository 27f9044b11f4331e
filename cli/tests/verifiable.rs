//! The verifiable-log commands end to end (`keygen`, `verifiable`, `checkpoint`, `prove`) on a real store file.

mod common;

use attrflow::verifiable::{Checkpoint, NoteVerifier};
use serde_json::Value;

use common::{attrflow, stdout};

#[test]
fn keygen_checkpoint_and_proofs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("s.db").display().to_string();
    let records: String = (1..=5)
        .map(|n| format!("{{\"record\":{{\"n\":{n}}},\"sequence\":{n}}}\n"))
        .collect();
    stdout(&attrflow(
        &["-s", &store, "import", "f", "--log", "audit"],
        records.as_bytes(),
    ));

    let keys = stdout(&attrflow(&["keygen", "demo"], b""));
    let (signer, verifier) = keys.split_once('\n').expect("two lines");
    assert!(signer.starts_with("PRIVATE+KEY+demo+"));
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, signer).expect("key written");
    let key = key_file.display().to_string();

    let off = attrflow(
        &[
            "-s",
            &store,
            "prove",
            "f",
            "--log",
            "audit",
            "--sequence",
            "1",
        ],
        b"",
    );
    assert_eq!(off.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&off.stderr).contains("log \"audit\" is not verifiable"),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    for _ in 0..2 {
        let head: Value = serde_json::from_str(&stdout(&attrflow(
            &["-s", &store, "verifiable", "f", "--log", "audit"],
            b"",
        )))
        .expect("JSON");
        assert_eq!(head["treeSize"], 5);
    }

    let note = stdout(&attrflow(
        &[
            "-s",
            &store,
            "checkpoint",
            "f",
            "--log",
            "audit",
            "--key",
            &key,
        ],
        b"",
    ));
    let verifier = NoteVerifier::from_key_text(verifier).expect("verifier key");
    let checkpoint = Checkpoint::open(&note, &verifier).expect("signed by the key");
    assert!(note.starts_with("attrflow/f/audit\n5\n"), "{note}");
    drop(checkpoint);

    let inclusion: Value = serde_json::from_str(&stdout(&attrflow(
        &[
            "-s",
            &store,
            "prove",
            "f",
            "--log",
            "audit",
            "--sequence",
            "2",
        ],
        b"",
    )))
    .expect("JSON");
    assert_eq!(inclusion["leafIndex"], 1);
    assert_eq!(inclusion["treeSize"], 5);
    assert_eq!(inclusion["hashes"].as_array().map(Vec::len), Some(3));

    let consistency: Value = serde_json::from_str(&stdout(&attrflow(
        &[
            "-s", &store, "prove", "f", "--log", "audit", "--from", "2", "--to", "5",
        ],
        b"",
    )))
    .expect("JSON");
    assert_eq!(
        (consistency["from"].clone(), consistency["to"].clone()),
        (2.into(), 5.into())
    );

    let beyond = attrflow(
        &[
            "-s",
            &store,
            "prove",
            "f",
            "--log",
            "audit",
            "--sequence",
            "9",
        ],
        b"",
    );
    assert_eq!(beyond.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&beyond.stderr).contains("beyond tree size 5"));
    let backwards = attrflow(
        &[
            "-s", &store, "prove", "f", "--log", "audit", "--from", "5", "--to", "2",
        ],
        b"",
    );
    assert_eq!(backwards.status.code(), Some(1));
    let bad_key = dir.path().join("bad");
    std::fs::write(&bad_key, "not a key").expect("written");
    let bad = attrflow(
        &[
            "-s",
            &store,
            "checkpoint",
            "f",
            "--log",
            "audit",
            "--key",
            &bad_key.display().to_string(),
        ],
        b"",
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("PRIVATE+KEY+"));
}
