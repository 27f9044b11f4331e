//! Random histories of single, batch and idempotent appends, chunk-size changes, trims and
//! a switch-on at a random point, on the backend under test: after every step the stored
//! tree's head equals an independent recomputation (`TreeHashes`) over the records as
//! `export` writes them; at the end the export equals the model's retained records, proofs
//! from the stored tree check against that root, and `verify_tree` on the stored values
//! agrees.

mod common;

use attrflow::chunked_log::Trim;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, LOG};
use attrflow::limits::MAX_READ_RECORDS;
use attrflow::verifiable::{leaf_bytes, leaf_hash, TreeHashes};
use common::{delivery_address, subscriber_id, TestStore};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

#[derive(Debug, Clone)]
enum Step {
    Single,
    Batch(u64),
    /// An idempotent append, called twice with the same key.
    Once,
    ChangeSize(u64),
    KeepNewest(u64),
    SwitchOn,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            3 => Just(Step::Single),
            3 => (1u64..70).prop_map(Step::Batch),
            2 => Just(Step::Once),
            1 => (1u64..20).prop_map(Step::ChangeSize),
            1 => (1u64..150).prop_map(Step::KeepNewest),
            1 => Just(Step::SwitchOn),
        ],
        1..25,
    )
}

fn exported(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

fn export(archive: &SubscriberArchive<'_>) -> Vec<Value> {
    let mut records = Vec::new();
    let mut next = 1;
    loop {
        let read = match archive.read_from(next, MAX_READ_RECORDS, None) {
            Err(attrflow::Error::PageTrimmed {
                oldest_sequence, ..
            }) => {
                next = oldest_sequence;
                continue;
            }
            read => read.unwrap(),
        };
        if read.subscribers.is_empty() {
            return records;
        }
        records.extend(read.subscribers.iter().map(exported));
        next = read.next_sequence;
    }
}

fn run(steps: &[Step]) -> Result<(), TestCaseError> {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    // Every record ever appended, as export writes it, oldest first.
    let mut model: Vec<Value> = Vec::new();
    let mut verifiable = false;
    let mut trimmed = false;
    for (i, step) in steps.iter().enumerate() {
        let n = model.len() as u64 + 1;
        match *step {
            Step::Single => {
                let s = archive
                    .register(&subscriber_id(n), &delivery_address(n))
                    .unwrap();
                model.push(exported(&s));
            }
            Step::Batch(count) => {
                let batch: Vec<NewSubscriber> = (n..n + count)
                    .map(|n| NewSubscriber::new(subscriber_id(n), delivery_address(n)))
                    .collect();
                let appended = archive.register_batch(&batch, None).unwrap();
                model.extend(appended.iter().map(exported));
            }
            Step::Once => {
                let key = format!("key-{i}");
                let s = archive
                    .register_once(&key, &subscriber_id(n), &delivery_address(n))
                    .unwrap();
                let again = archive
                    .register_once(&key, &subscriber_id(n), &delivery_address(n))
                    .unwrap();
                prop_assert_eq!(&again, &s);
                model.push(exported(&s));
            }
            Step::ChangeSize(size) => {
                archive.change_chunk_size(size).unwrap();
            }
            Step::KeepNewest(keep) => {
                let outcome = archive.trim(Trim::KeepNewest(keep)).unwrap();
                trimmed |= outcome.dropped_chunks > 0;
            }
            Step::SwitchOn => {
                if trimmed && !verifiable {
                    let refused = archive.make_verifiable();
                    prop_assert!(
                        matches!(
                            refused,
                            Err(attrflow::Error::RecordTrimmed { sequence: 1, .. })
                        ),
                        "{:?}",
                        refused
                    );
                } else {
                    archive.make_verifiable().unwrap();
                    verifiable = true;
                }
            }
        }
        if verifiable {
            let mut tree = TreeHashes::new();
            for record in &model {
                tree.append(leaf_hash(&leaf_bytes(record)));
            }
            prop_assert_eq!(
                archive.tree_head().unwrap(),
                tree.tree_head(model.len() as u64).unwrap()
            );
        }
    }
    let retained = export(&archive);
    prop_assert_eq!(&retained[..], &model[model.len() - retained.len()..]);
    let values = t.stored_values(FLOW_ID);
    LOG.verify(&values)
        .map_err(|v| TestCaseError::fail(v.to_string()))?;
    let recomputed = LOG
        .verify_tree(&values)
        .map_err(|v| TestCaseError::fail(v.to_string()))?;
    prop_assert_eq!(recomputed.is_some(), verifiable);
    if let Some(tree) = recomputed {
        let size = model.len() as u64;
        let head = archive.tree_head().unwrap();
        prop_assert_eq!(tree.tree_head(size).unwrap(), head);
        let oldest = size - retained.len() as u64 + 1;
        for sequence in [oldest, (oldest + size) / 2, size] {
            if sequence == 0 || sequence > size {
                continue;
            }
            let proof = archive.inclusion_proof(sequence, None).unwrap();
            let leaf = leaf_hash(&leaf_bytes(&model[sequence as usize - 1]));
            proof.verify(&leaf, &head.root_hash).unwrap();
        }
        let half = size / 2;
        let consistency = archive.consistency_proof(half, size).unwrap();
        consistency
            .verify(&tree.tree_head(half).unwrap().root_hash, &head.root_hash)
            .unwrap();
    }
    Ok(())
}

#[test]
fn random_histories_keep_the_stored_tree_equal_to_a_recomputation_from_export() {
    let mut runner = TestRunner::new(Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    });
    runner.run(&steps(), |steps| run(&steps)).unwrap();
}
