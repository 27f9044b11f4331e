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
        message(app.inclusion_proof("chat", 1, None).unwrap_err()),
        "log \"chat\" is not verifiable: switch it on first (make_verifiable, or \
         `attrflow verifiable FLOW [--log LOG]`)"
    );
    app.make_verifiable("chat").unwrap();
    assert_eq!(
        message(app.inclusion_proof("chat", 4, None).unwrap_err()),
        "sequence 4 is beyond tree size 3"
    );
    assert!(message(app.inclusion_proof("chat", 0, None).unwrap_err()).contains("no record 0"));
    assert!(message(app.consistency_proof("chat", 3, 2).unwrap_err())
        .contains("from must not exceed to"));
    assert!(message(app.consistency_proof("chat", 1, 9).unwrap_err()).contains("tree size 9"));
}

#[test]
fn every_later_append_keeps_the_stored_tree_exact() {
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW);
    app.start().unwrap();
    let mut records: Vec<Value> = (1..=7).map(|n| json!({ "n": n })).collect();
    app.append_batch("audit", records.clone(), None).unwrap();
    assert_eq!(
        app.make_verifiable("audit").unwrap(),
        exported_tree(&records).tree_head(7).unwrap()
    );
    // Idempotent: a second switch-on changes nothing.
    assert_eq!(app.make_verifiable("audit").unwrap().tree_size, 7);
    for n in 8..=140 {
        let record = json!({ "n": n });
        match n % 3 {
            0 => {
                app.append("audit", record.clone()).unwrap();
            }
            1 => {
                app.append_once("audit", &format!("key-{n}"), record.clone())
                    .unwrap();
                // The same key again appends nothing.
                app.append_once("audit", &format!("key-{n}"), record.clone())
                    .unwrap();
            }
            _ => {
                app.append_batch("audit", vec![record.clone()], None)
                    .unwrap();
            }
        }
        records.push(record);
        let expected = exported_tree(&records);
        let size = records.len() as u64;
        assert_eq!(
            app.tree_head("audit").unwrap(),
            expected.tree_head(size).unwrap()
        );
    }
    let expected = exported_tree(&records);
    for sequence in [1, 16, 17, 100, 140] {
        let proof = app.inclusion_proof("audit", sequence, None).unwrap();
        assert_eq!(
            proof.hashes,
            expected.inclusion_path(sequence - 1, 140).unwrap()
        );
    }
    for from in [1, 15, 16, 64, 139] {
        assert_eq!(
            app.consistency_proof("audit", from, 140).unwrap().hashes,
            expected.consistency_path(from, 140).unwrap()
        );
    }
}

#[test]
fn a_trim_keeps_the_tree_and_names_the_oldest_retained_record() {
    use attrflow::chunked_log::Trim;
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW);
    app.start().unwrap();
    let records: Vec<Value> = (1..=250).map(|n| json!(n)).collect();
    app.append_batch("audit", records.clone(), None).unwrap();
    let before = app.make_verifiable("audit").unwrap();
    app.trim("audit", Trim::DropBefore(201)).unwrap();
    assert_eq!(app.tree_head("audit").unwrap(), before);
    let trimmed = app.inclusion_proof("audit", 3, None).unwrap_err();
    assert_eq!(
        trimmed.to_string(),
        "record 3 was trimmed; the oldest retained sequence is 201"
    );
    assert_eq!(
        trimmed,
        Error::RecordTrimmed {
            sequence: 3,
            oldest_sequence: 201
        }
    );
    let expected = exported_tree(&records);
    let proof = app.inclusion_proof("audit", 201, Some(250)).unwrap();
    assert_eq!(proof.hashes, expected.inclusion_path(200, 250).unwrap());
    assert_eq!(
        app.consistency_proof("audit", 3, 250).unwrap().hashes,
        expected.consistency_path(3, 250).unwrap()
    );
    // A log trimmed before it was switched on cannot be: its tree starts at sequence 1.
    app.append_batch("other", records.clone(), None).unwrap();
    app.trim("other", Trim::DropBefore(101)).unwrap();
    let trimmed = app.make_verifiable("other").unwrap_err();
    assert_eq!(
        trimmed.to_string(),
        "record 1 was trimmed; the oldest retained sequence is 101"
    );
    assert_eq!(
        trimmed,
        Error::RecordTrimmed {
            sequence: 1,
            oldest_sequence: 101
        }
    );
}

#[test]
fn concurrent_appenders_keep_the_tree_exact() {
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW).with_retry_policy(common::patient_retry());
    app.start().unwrap();
    app.append("audit", json!({ "first": true })).unwrap();
    app.make_verifiable("audit").unwrap();
    std::thread::scope(|s| {
        for writer in 0..8 {
            s.spawn(move || {
                for n in 0..15 {
                    let record = json!({ "writer": writer, "n": n });
                    if n % 2 == 0 {
                        app.append("audit", record).unwrap();
                    } else {
                        app.append_batch("audit", vec![record.clone(), record], None)
                            .unwrap();
                    }
                }
            });
        }
    });
    // The records as read back (their order is the log's), recomputed independently.
    let read = app.read_from("audit", 1, 1000, None).unwrap();
    let mut tree = TreeHashes::new();
    for entry in &read.entries {
        tree.append(leaf_hash(&leaf_bytes(
            &serde_json::to_value(entry).unwrap(),
        )));
    }
    assert_eq!(tree.size(), 1 + 8 * (8 + 7 * 2));
    assert_eq!(
        app.tree_head("audit").unwrap(),
        tree.tree_head(tree.size()).unwrap()
    );
}

#[test]
fn a_malformed_switch_on_step_is_invalid_input_and_stores_nothing() {
    use attrflow::flows::app_log::{FLOW_TYPE, MAKE_LOG_VERIFIABLE};
    use attrflow::RpcInvokeOptions;
    let t = TestStore::fast();
    let app = AppLog::new(&t.runtime, FLOW);
    app.start().unwrap();
    app.append_batch("chat", vec![json!(1), json!(2), json!(3)], None)
        .unwrap();
    let before = t.stored_values(FLOW);
    let call = |input: Value| match t.runtime.invoke_rpc_output(
        FLOW_TYPE,
        FLOW,
        MAKE_LOG_VERIFIABLE,
        input,
        &RpcInvokeOptions::new(),
    ) {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected invalid input, got {other:?}"),
    };
    let short_tile =
        json!({"log": "chat", "tiles": [{"level": 0, "index": 0, "hashes": ["AA=="]}]});
    assert_eq!(
        call(short_tile),
        "tile tree-0-0: a tile holds 16 base64 SHA-256 hashes"
    );
    let beyond = json!({"log": "chat", "frontier": {"size": 9, "partial": []}});
    assert_eq!(
        call(beyond),
        "frontier: the partial tiles do not match the tree size"
    );
    let partial = base64_of(&[0u8; 32 * 4]);
    let beyond = json!({"log": "chat", "frontier": {"size": 4, "partial": [partial]}});
    assert_eq!(
        call(beyond),
        "frontier of tree size 4 is beyond the log's 3 records"
    );
    assert_eq!(t.stored_values(FLOW), before);
    assert!(app.tree_head("chat").is_err());
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
