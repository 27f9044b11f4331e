//! Verifiable logs on the clients (docs/verifiable-logs.md), on the real store (SQLite, or
//! PostgreSQL with `ATTRFLOW_TEST_BACKEND=postgres`): roots over the export form of the
//! records, proofs that check, signed checkpoints, typed errors.

mod common;

use attrflow::flows::app_log::AppLog;
use attrflow::verifiable::{
    generate_key, leaf_bytes, leaf_hash, Checkpoint, NoteSigner, NoteVerifier, TreeHashes,
};
use attrflow::Error;
use common::TestStore;
use serde_json::{json, Value};

const FLOW: &str = "app-logs";

/// The tree recomputed from the records as `attrflow export` writes them.
fn exported_tree(records: &[Value]) -> TreeHashes {
    let mut tree = TreeHashes::new();
    for (i, record) in records.iter().enumerate() {
        let line = json!({ "record": record, "sequence": i as u64 + 1 });
        tree.append(leaf_hash(&leaf_bytes(&line)));
    }
    tree
}

#[test]
fn an_app_log_proves_its_records_and_signs_checkpoints() {
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW);
    app.start().unwrap();
    let records: Vec<Value> = (1..=250)
        .map(|n| json!({ "n": n, "text": "é\n" }))
        .collect();
    app.append("chat", records[0].clone()).unwrap();
    app.append_batch("chat", records[1..].to_vec(), None)
        .unwrap();
    let expected = exported_tree(&records);

    let head = app.make_verifiable("chat").unwrap();
    assert_eq!(head, expected.tree_head(250).unwrap());
    assert_eq!(app.tree_head("chat").unwrap(), head);

    let proof = app.inclusion_proof("chat", 101, Some(200)).unwrap();
    assert_eq!((proof.leaf_index, proof.tree_size), (100, 200));
    let leaf = leaf_hash(&leaf_bytes(
        &json!({ "record": records[100], "sequence": 101 }),
    ));
    proof
        .verify(&leaf, &expected.tree_head(200).unwrap().root_hash)
        .unwrap();
    let consistency = app.consistency_proof("chat", 7, 250).unwrap();
    consistency
        .verify(&expected.tree_head(7).unwrap().root_hash, &head.root_hash)
        .unwrap();

    let (signer, verifier) = generate_key("attrflow-test").unwrap();
    let signer = NoteSigner::from_key_text(&signer).unwrap();
    let verifier = NoteVerifier::from_key_text(&verifier).unwrap();
    let note = app.checkpoint("chat", &signer, None).unwrap();
    let checkpoint = Checkpoint::open(&note, &verifier).unwrap();
    assert_eq!(checkpoint.origin, "attrflow/app-logs/chat");
    assert_eq!(checkpoint.head, head);
}

#[test]
fn proofs_beyond_the_tree_are_invalid_input_naming_what_was_wrong() {
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW);
    app.start().unwrap();
    app.append_batch("chat", vec![json!(1), json!(2), json!(3)], None)
        .unwrap();
    let message = |error: Error| match error {
        Error::InvalidInput(message) => message,
        other => panic!("expected invalid input, got {other:?}"),
    };
    assert_eq!(
        message(app.inclusion_proof("chat", 4, None).unwrap_err()),
        "sequence 4 is beyond tree size 3"
    );
    assert!(message(app.inclusion_proof("chat", 0, None).unwrap_err()).contains("no record 0"));
    assert!(message(app.consistency_proof("chat", 3, 2).unwrap_err())
        .contains("from must not exceed to"));
    assert!(message(app.consistency_proof("chat", 1, 9).unwrap_err()).contains("tree size 9"));
}
