//! A chunked log's tree, and what its clients answer from it: the tree head, a signed
//! checkpoint, inclusion and consistency proofs, each read from the stored hashes
//! ([`StoredTree`]); and switching a log's tree on by reading its records once
//! ([`switch_on`]). The clients (`AppLog`, `SubscriberArchive`) hand in how to read and
//! call; every rule is here, once.

use serde_json::Value;

use super::checkpoint::Checkpoint;
use super::error::VerifiableError;
use super::hashing::{leaf_bytes, leaf_hash};
use super::note::NoteSigner;
use super::proofs::{ConsistencyProof, InclusionProof};
use super::tiles::{Frontier, StoredTree, MAX_TILES_PER_CALL};
use super::tree::{consistency_path, inclusion_path, tree_head, HashSource, TreeHead};
use crate::chunked_log::{SwitchOnInput, SwitchOnOutcome};
use crate::Result;

/// A read forward of a log: the records (as `attrflow export` writes them) from a sequence
/// on and the sequence after them; an empty read ends the log.
pub type ReadForward<'a> = dyn FnMut(u64) -> Result<(Vec<Value>, u64)> + 'a;

/// One switching-on RPC call.
pub type SwitchOnCall<'a> = dyn FnMut(SwitchOnInput) -> Result<SwitchOnOutcome> + 'a;

/// The default checkpoint origin of a log: `attrflow/<flow ID>/<log>`.
pub fn default_origin(flow_id: &str, log: &str) -> String {
    format!("attrflow/{flow_id}/{log}")
}

/// Switches a log's tree on: reads it forward once from sequence 1, building the tree,
/// and hands its full tiles to `call` [`MAX_TILES_PER_CALL`] at a time, then the frontier;
/// the call adds the open chunk's records and switches the tree on in the transaction that
/// checks the frontier reaches them (a log that grew meanwhile is read on). Each call is
/// bounded; a log already verifiable costs one call. A log whose oldest records a trim
/// dropped is [`VerifiableError::Trimmed`].
pub fn switch_on(read: &mut ReadForward<'_>, call: &mut SwitchOnCall<'_>) -> Result<()> {
    if call(SwitchOnInput::default())?.done {
        return Ok(());
    }
    let mut frontier = Frontier::new();
    let mut tiles = Vec::new();
    loop {
        let next = frontier.size() + 1;
        let (records, _) = match read(next) {
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
            let outcome = call(SwitchOnInput {
                tiles: std::mem::take(&mut tiles),
                frontier: Some(frontier.to_stored()),
            })?;
            if outcome.done {
                return Ok(());
            }
            continue;
        }
        for record in &records {
            tiles.extend(frontier.append(leaf_hash(&leaf_bytes(record)))?);
            if tiles.len() >= MAX_TILES_PER_CALL {
                let batch = tiles.split_off(0);
                if call(SwitchOnInput {
                    tiles: batch,
                    frontier: None,
                })?
                .done
                {
                    return Ok(());
                }
            }
        }
    }
}

/// The tree of a log as stored, from sequence 1 to its newest record.
pub struct LogTree<'a> {
    tree: StoredTree<'a>,
    oldest_sequence: u64,
}

impl<'a> LogTree<'a> {
    /// The tree `tree` of a log whose oldest retained record is `oldest_sequence`.
    pub fn new(tree: StoredTree<'a>, oldest_sequence: u64) -> Self {
        LogTree {
            tree,
            oldest_sequence,
        }
    }

    /// The stored hashes.
    pub fn hashes(&self) -> &StoredTree<'a> {
        &self.tree
    }

    /// The newest tree head.
    pub fn head(&self) -> Result<TreeHead> {
        tree_head(&self.tree, self.tree.size())
    }

    /// The tree head at `tree_size` (up to the newest).
    pub fn head_at(&self, tree_size: u64) -> Result<TreeHead> {
        tree_head(&self.tree, tree_size)
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
    /// newest size when `None`). A record a trim dropped is [`VerifiableError::Trimmed`].
    pub fn inclusion_proof(&self, sequence: u64, tree_size: Option<u64>) -> Result<InclusionProof> {
        let tree_size = tree_size.unwrap_or(self.tree.size());
        if sequence == 0 {
            return Err(VerifiableError::OutOfRange(
                "sequences start at 1: there is no record 0".to_owned(),
            )
            .into());
        }
        if sequence < self.oldest_sequence {
            return Err(VerifiableError::Trimmed {
                sequence,
                oldest_sequence: self.oldest_sequence,
            }
            .into());
        }
        let hashes = inclusion_path(&self.tree, sequence - 1, tree_size)?;
        Ok(InclusionProof {
            leaf_index: sequence - 1,
            tree_size,
            hashes,
        })
    }

    /// The consistency proof between tree sizes `from` and `to`.
    pub fn consistency_proof(&self, from: u64, to: u64) -> Result<ConsistencyProof> {
        let hashes = consistency_path(&self.tree, from, to)?;
        Ok(ConsistencyProof { from, to, hashes })
    }
}
