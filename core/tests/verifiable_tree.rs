//! The verifiable-log primitives (docs/verifiable-logs.md): RFC 6962 roots and proofs
//! against an independent recursive computation, every size and leaf up to 70 and random
//! larger ones; signed notes and key texts against Go's `sumdb/note` documented example.

use attrflow::verifiable::{
    generate_key, leaf_hash, node_hash, Checkpoint, ConsistencyProof, Hash, InclusionProof,
    NoteSigner, NoteVerifier, TreeHashes, TreeHead, VerifiableError,
};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// RFC 6962 §2.1 `MTH`, by its definition.
fn mth(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => Sha256::digest([]).into(),
        1 => leaves[0],
        n => {
            let k = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
            node_hash(&mth(&leaves[..k]), &mth(&leaves[k..]))
        }
    }
}

fn leaves(n: u64) -> Vec<Hash> {
    (0..n)
        .map(|i| leaf_hash(format!("{{\"n\":{i}}}").as_bytes()))
        .collect()
}

fn tree(leaves: &[Hash]) -> TreeHashes {
    let mut tree = TreeHashes::new();
    for leaf in leaves {
        tree.append(*leaf);
    }
    tree
}

#[test]
fn roots_and_proofs_agree_with_rfc_6962_for_every_small_size() {
    let all = leaves(70);
    let t = tree(&all);
    for size in 0..=70u64 {
        let head = t.tree_head(size).unwrap();
        let root = mth(&all[..size as usize]);
        assert_eq!(head.root_hash, root, "root of size {size}");
        for index in 0..size {
            let proof = InclusionProof {
                leaf_index: index,
                tree_size: size,
                hashes: t.inclusion_path(index, size).unwrap(),
            };
            proof.verify(&all[index as usize], &root).unwrap();
            let wrong = leaf_hash(b"not a record");
            assert!(proof.verify(&wrong, &root).is_err());
        }
        for from in 0..=size {
            let proof = ConsistencyProof {
                from,
                to: size,
                hashes: t.consistency_path(from, size).unwrap(),
            };
            let from_root = mth(&all[..from as usize]);
            proof.verify(&from_root, &root).unwrap();
            if from > 0 && from < size {
                assert!(proof.verify(&leaf_hash(b"x"), &root).is_err());
            }
        }
    }
}

#[test]
fn an_append_stores_one_hash_per_completed_subtree() {
    let mut t = TreeHashes::new();
    let all = leaves(8);
    let added: Vec<usize> = all.iter().map(|leaf| t.append(*leaf).len()).collect();
    assert_eq!(added, vec![1, 2, 1, 3, 1, 2, 1, 4]);
    assert_eq!(t.stored(3, 0), Some(mth(&all)));
}

#[test]
fn requests_beyond_the_tree_are_typed_errors_naming_what_was_wrong() {
    let t = tree(&leaves(5));
    let error = t.inclusion_path(5, 5).unwrap_err();
    assert_eq!(
        error,
        VerifiableError::OutOfRange("sequence 6 is beyond tree size 5".to_owned())
    );
    assert!(matches!(
        t.tree_head(6),
        Err(VerifiableError::OutOfRange(message)) if message.contains("tree size 6")
    ));
    assert_eq!(
        t.consistency_path(4, 3).unwrap_err(),
        VerifiableError::FromAfterTo { from: 4, to: 3 }
    );
    assert!(matches!(
        t.consistency_path(3, 9),
        Err(VerifiableError::OutOfRange(_))
    ));
}

proptest! {
    #[test]
    fn larger_trees_agree_with_rfc_6962(size in 1u64..3000, pick in any::<(u64, u64)>()) {
        let all = leaves(size);
        let t = tree(&all);
        let root = mth(&all);
        prop_assert_eq!(t.tree_head(size).unwrap().root_hash, root);
        let index = pick.0 % size;
        let proof = InclusionProof {
            leaf_index: index,
            tree_size: size,
            hashes: t.inclusion_path(index, size).unwrap(),
        };
        prop_assert!(proof.verify(&all[index as usize], &root).is_ok());
        let from = pick.1 % (size + 1);
        let proof = ConsistencyProof {
            from,
            to: size,
            hashes: t.consistency_path(from, size).unwrap(),
        };
        prop_assert!(proof.verify(&mth(&all[..from as usize]), &root).is_ok());
    }
}

/// The example in the documentation of `golang.org/x/mod/sumdb/note`.
const GO_SIGNER: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_VERIFIER: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

#[test]
fn keys_and_notes_match_go_sumdb_note() {
    let signer = NoteSigner::from_key_text(GO_SIGNER).unwrap();
    assert_eq!(signer.key_text(), GO_SIGNER);
    assert_eq!(signer.verifier().key_text(), GO_VERIFIER);
    assert_eq!(signer.sign(GO_TEXT).unwrap(), GO_NOTE);
    let verifier = NoteVerifier::from_key_text(&format!("{GO_VERIFIER}\n")).unwrap();
    assert_eq!(verifier.open(GO_NOTE).unwrap(), GO_TEXT);
    let edited = GO_NOTE.replace("cryptography", "cryptographY");
    assert!(matches!(
        verifier.open(&edited),
        Err(VerifiableError::MalformedNote(message)) if message.contains("does not verify")
    ));
}

#[test]
fn malformed_keys_are_typed_errors() {
    for text in [
        "",
        "PRIVATE+KEY+",
        "PRIVATE+KEY+name+zzzzzzzz+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        "PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEK",
        GO_VERIFIER,
    ] {
        assert!(
            matches!(
                NoteSigner::from_key_text(text),
                Err(VerifiableError::MalformedKey(_))
            ),
            "{text:?}"
        );
    }
    assert!(matches!(
        NoteVerifier::from_key_text(GO_SIGNER),
        Err(VerifiableError::MalformedKey(_))
    ));
}

#[test]
fn checkpoints_round_trip_and_malformed_ones_are_typed_errors() {
    let (signer_text, verifier_text) = generate_key("attrflow-test").unwrap();
    let signer = NoteSigner::from_key_text(&signer_text).unwrap();
    let verifier = NoteVerifier::from_key_text(&verifier_text).unwrap();
    let all = leaves(3);
    let checkpoint = Checkpoint {
        origin: "attrflow/app-logs/chat".to_owned(),
        head: TreeHead {
            tree_size: 3,
            root_hash: mth(&all),
        },
    };
    let note = checkpoint.sign(&signer).unwrap();
    assert!(note.starts_with("attrflow/app-logs/chat\n3\n"));
    assert_eq!(Checkpoint::open(&note, &verifier).unwrap(), checkpoint);
    for text in [
        "",
        "origin\n",
        "origin\nx\nAAAA\n",
        "origin\n3\nAAAA\n",
        "origin\n3\n",
    ] {
        assert!(
            matches!(
                Checkpoint::parse(text),
                Err(VerifiableError::MalformedCheckpoint(_))
            ),
            "{text:?}"
        );
    }
    let (_, other) = generate_key("other").unwrap();
    let other = NoteVerifier::from_key_text(&other).unwrap();
    assert!(matches!(
        Checkpoint::open(&note, &other),
        Err(VerifiableError::MalformedNote(_))
    ));
}
