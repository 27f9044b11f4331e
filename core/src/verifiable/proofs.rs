//! Inclusion and consistency proofs (RFC 6962 §2.1) and their checks (RFC 9162 §2.1.3.2,
//! §2.1.4.2), the JSON shapes the CLI and the HTTP service print.

use super::error::VerifiableError;
use super::hashing::{node_hash, Hash};

/// That leaf `leaf_index` (record `leaf_index + 1`) is in the tree of `tree_size` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InclusionProof {
    /// The leaf's index (the record's sequence minus one).
    pub leaf_index: u64,
    /// The tree size the proof is for.
    pub tree_size: u64,
    /// The audit path, deepest first.
    pub hashes: Vec<Hash>,
}

/// That the tree of `from` leaves is a prefix of the tree of `to` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyProof {
    /// The smaller tree size.
    pub from: u64,
    /// The larger tree size.
    pub to: u64,
    /// The consistency path.
    pub hashes: Vec<Hash>,
}

impl InclusionProof {
    /// Checks the proof for `leaf` against `root` (the root of `tree_size`).
    pub fn verify(&self, leaf: &Hash, root: &Hash) -> Result<(), VerifiableError> {
        if self.leaf_index >= self.tree_size {
            return Err(VerifiableError::OutOfRange(format!(
                "leaf index {} is beyond tree size {}",
                self.leaf_index, self.tree_size
            )));
        }
        let (mut fn_, mut sn) = (self.leaf_index, self.tree_size - 1);
        let mut r = *leaf;
        for p in &self.hashes {
            if sn == 0 {
                return Err(mismatch("inclusion path is too long"));
            }
            if fn_ & 1 == 1 || fn_ == sn {
                r = node_hash(p, &r);
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            } else {
                r = node_hash(&r, p);
            }
            fn_ >>= 1;
            sn >>= 1;
        }
        if sn != 0 || r != *root {
            return Err(mismatch("inclusion path does not lead to the root"));
        }
        Ok(())
    }

    /// The JSON the CLI prints: `{"leafIndex":N-1,"treeSize":M,"hashes":["<base64>",…]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "leafIndex": self.leaf_index,
            "treeSize": self.tree_size,
            "hashes": base64_hashes(&self.hashes),
        })
    }
}

impl ConsistencyProof {
    /// Checks the proof between `from_root` (root of `from`) and `to_root` (root of `to`).
    pub fn verify(&self, from_root: &Hash, to_root: &Hash) -> Result<(), VerifiableError> {
        let (from, to) = (self.from, self.to);
        if from > to {
            return Err(VerifiableError::FromAfterTo { from, to });
        }
        if from == to || from == 0 {
            return if self.hashes.is_empty() && (from == 0 || from_root == to_root) {
                Ok(())
            } else {
                Err(mismatch(
                    "a proof between equal sizes is empty, roots equal",
                ))
            };
        }
        let mut path: Vec<Hash> = Vec::with_capacity(self.hashes.len() + 1);
        if from.is_power_of_two() {
            path.push(*from_root);
        }
        path.extend_from_slice(&self.hashes);
        let Some((first, rest)) = path.split_first() else {
            return Err(mismatch("consistency path is empty"));
        };
        let (mut fn_, mut sn) = (from - 1, to - 1);
        while fn_ & 1 == 1 {
            fn_ >>= 1;
            sn >>= 1;
        }
        let (mut fr, mut sr) = (*first, *first);
        for c in rest {
            if sn == 0 {
                return Err(mismatch("consistency path is too long"));
            }
            if fn_ & 1 == 1 || fn_ == sn {
                fr = node_hash(c, &fr);
                sr = node_hash(c, &sr);
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            } else {
                sr = node_hash(&sr, c);
            }
            fn_ >>= 1;
            sn >>= 1;
        }
        if sn != 0 || fr != *from_root || sr != *to_root {
            return Err(mismatch("consistency path does not lead to both roots"));
        }
        Ok(())
    }

    /// The JSON the CLI prints: `{"from":M1,"to":M2,"hashes":["<base64>",…]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "from": self.from,
            "to": self.to,
            "hashes": base64_hashes(&self.hashes),
        })
    }
}

fn base64_hashes(hashes: &[Hash]) -> Vec<String> {
    use base64::Engine as _;
    hashes
        .iter()
        .map(|hash| base64::engine::general_purpose::STANDARD.encode(hash))
        .collect()
}

fn mismatch(what: &str) -> VerifiableError {
    VerifiableError::ProofMismatch(what.to_owned())
}
