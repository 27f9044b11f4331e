//! A chunked log's tree, and what its clients answer from it: the tree head, a signed
//! checkpoint, inclusion and consistency proofs. The clients (`AppLog`, `SubscriberArchive`)
//! hand in how to read their log forward; every rule is here, once.

use serde_json::Value;

use super::checkpoint::Checkpoint;
use super::error::VerifiableError;
use super::hashing::{leaf_bytes, leaf_hash};
use super::note::NoteSigner;
use super::proofs::{ConsistencyProof, InclusionProof};
use super::tree::{TreeHashes, TreeHead};
use crate::Result;

/// A read forward of a log: the records (as `attrflow export` writes them) from a sequence
/// on and the sequence after them; an empty read ends the log.
pub type ReadForward<'a> = dyn FnMut(u64) -> Result<(Vec<Value>, u64)> + 'a;

/// The default checkpoint origin of a log: `attrflow/<flow ID>/<log>`.
pub fn default_origin(flow_id: &str, log: &str) -> String {
    format!("attrflow/{flow_id}/{log}")
}

/// The tree of a log, from sequence 1 to its newest record.
pub struct LogTree {
    hashes: TreeHashes,
}

impl LogTree {
    /// Builds the tree from a read forward of the whole log. A log whose oldest records a
    /// trim dropped is [`VerifiableError::Trimmed`].
    pub fn read(read: &mut ReadForward<'_>) -> Result<Self> {
        let mut hashes = TreeHashes::new();
        let mut next = 1u64;
        loop {
            let (records, after) = match read(next) {
                Err(crate::Error::PageTrimmed {
                    oldest_sequence, ..
                }) => {
                    return Err(VerifiableError::Trimmed {
                        sequence: next,
                        oldest_sequence,
                    }
                    .into());
                }
                read => read?,
            };
            if records.is_empty() {
                break;
            }
            for record in &records {
                hashes.append(leaf_hash(&leaf_bytes(record)));
            }
            next = after;
        }
        Ok(Self { hashes })
    }

    /// The stored hashes.
    pub fn hashes(&self) -> &TreeHashes {
        &self.hashes
    }

    /// The newest tree head.
    pub fn head(&self) -> Result<TreeHead> {
        Ok(self.hashes.tree_head(self.hashes.size())?)
    }

    /// The tree head signed by `signer` as a C2SP checkpoint with `origin`.
    pub fn checkpoint(&self, signer: &NoteSigner, origin: &str) -> Result<String> {
        let checkpoint = Checkpoint {
            origin: origin.to_owned(),
            head: self.head()?,
        };
        Ok(checkpoint.sign(signer)?)
    }

    /// The inclusion proof of record `sequence` in the tree of `tree_size` records (the
    /// newest size when `None`).
    pub fn inclusion_proof(&self, sequence: u64, tree_size: Option<u64>) -> Result<InclusionProof> {
        let tree_size = tree_size.unwrap_or(self.hashes.size());
        if sequence == 0 {
            return Err(VerifiableError::OutOfRange(
                "sequences start at 1: there is no record 0".to_owned(),
            )
            .into());
        }
        let hashes = self.hashes.inclusion_path(sequence - 1, tree_size)?;
        Ok(InclusionProof {
            leaf_index: sequence - 1,
            tree_size,
            hashes,
        })
    }

    /// The consistency proof between tree sizes `from` and `to`.
    pub fn consistency_proof(&self, from: u64, to: u64) -> Result<ConsistencyProof> {
        let hashes = self.hashes.consistency_path(from, to)?;
        Ok(ConsistencyProof { from, to, hashes })
    }
}
