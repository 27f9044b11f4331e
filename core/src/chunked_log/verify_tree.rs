//! The content check of a verifiable log as it is stored (`attrflow verify`): every leaf
//! recomputed from the stored records, in stored order, against the stored tree, and the
//! stored tree (its tiles and frontier) against the tree those leaves make. An edited,
//! removed, moved or foreign record shows as the first sequence whose leaf differs.

use std::collections::BTreeMap;

use serde_json::Value;

use super::verify::{violation, Violation};
use super::ChunkedLog;
use crate::verifiable::hashing::{leaf_bytes, leaf_hash};
use crate::verifiable::tiles::{tile_key, Frontier, StoredTree, Tile};
use crate::verifiable::{Checkpoint, HashSource, NoteVerifier, TreeHashes, TreeHead};

impl ChunkedLog {
    /// Checks the tree of the log stored in `values` (one flow's stored values) and returns
    /// it recomputed, or `None` for a log that is not verifiable. The first record (oldest
    /// first, as stored) whose leaf differs from the stored tree's is named by its sequence;
    /// records a trim dropped count by their stored leaves.
    pub fn verify_tree(
        &self,
        values: &BTreeMap<String, Value>,
    ) -> Result<Option<TreeHashes>, Violation> {
        let (state_name, state, _) = self.stored_state(values)?;
        let Some(stored) = &state.tree else {
            return Ok(None);
        };
        let frontier =
            Frontier::from_stored(stored).map_err(|e| violation(&state_name, e.to_string()))?;
        let stored_tree = StoredTree::new(frontier, |level, index| {
            let physical = self.tile_physical(level, index);
            values
                .get(&physical)
                .map(|value| Tile::decode_stored(&physical, value))
                .transpose()
        });
        let records = state.next_sequence - 1;
        if stored_tree.size() != records {
            return Err(violation(
                &state_name,
                format!(
                    "the tree covers {} records; the log holds {records}",
                    stored_tree.size()
                ),
            ));
        }
        let stored_leaf = |sequence: u64, location: &str| {
            stored_tree
                .stored(0, sequence - 1)
                .map_err(|e| violation(location, e.to_string()))?
                .ok_or_else(|| {
                    violation(
                        location,
                        format!("record {sequence} is beyond the stored tree"),
                    )
                })
        };
        let mut leaves = Vec::with_capacity(records as usize);
        for sequence in 1..state.oldest_sequence.min(records + 1) {
            leaves.push(stored_leaf(sequence, &state_name)?);
        }
        let (archives, current) = self.stored_chunks(values);
        let chunks = archives
            .iter()
            .map(|(name, _, value)| (*name, *value))
            .chain(current);
        for (name, chunk) in chunks {
            let Some(Value::Array(chunk_records)) = chunk.get(self.records_field) else {
                return Err(violation(
                    name,
                    format!("has no {:?} list", self.records_field),
                ));
            };
            for record in chunk_records {
                let sequence = leaves.len() as u64 + 1;
                let leaf = leaf_hash(&leaf_bytes(record));
                if sequence > records || leaf != stored_leaf(sequence, name)? {
                    return Err(violation(
                        name,
                        format!(
                            "record {sequence} does not match the stored tree (a record was \
                             edited, removed, moved or replaced)"
                        ),
                    ));
                }
                leaves.push(leaf);
            }
        }
        if leaves.len() as u64 != records {
            return Err(violation(
                &state_name,
                format!(
                    "record {} is missing: the tree covers {records}",
                    leaves.len() + 1
                ),
            ));
        }
        // The stored tree must be the one these leaves make, tile for tile.
        let mut rebuilt = Frontier::new();
        let mut tree = TreeHashes::new();
        for leaf in leaves {
            tree.append(leaf);
            let tiles = rebuilt
                .append(leaf)
                .map_err(|e| violation(&state_name, e.to_string()))?;
            for tile in tiles {
                let physical = self.tile_physical(tile.level, tile.index);
                let expected = serde_json::json!({ "hashes": tile.hashes });
                if values.get(&physical) != Some(&expected) {
                    return Err(violation(
                        &physical,
                        "the tile differs from the tree the records make",
                    ));
                }
            }
        }
        if rebuilt.to_stored() != *stored {
            return Err(violation(
                &state_name,
                "the tree's frontier differs from the tree the records make",
            ));
        }
        Ok(Some(tree))
    }

    fn tile_physical(&self, level: u32, index: u64) -> String {
        format!(
            "{}/{}",
            self.chunk_map,
            self.chunk_key(&tile_key(level, index))
        )
    }
}

/// Checks a signed checkpoint (`note`, signed by `verifier`) against `tree`, a log's tree
/// recomputed by [`ChunkedLog::verify_tree`]: the log still holds the checkpoint's tree
/// size and its root at that size is the checkpoint's, so the log the checkpoint saw is a
/// prefix of the stored one. Returns the checkpoint.
pub fn check_checkpoint(
    tree: &TreeHashes,
    note: &str,
    verifier: &NoteVerifier,
) -> Result<Checkpoint, String> {
    let checkpoint = Checkpoint::open(note, verifier).map_err(|e| e.to_string())?;
    let TreeHead {
        tree_size,
        root_hash,
    } = checkpoint.head;
    let head = tree.tree_head(tree_size).map_err(|_| {
        format!(
            "the checkpoint's tree size {tree_size} is beyond the log's {} records: \
             records were removed",
            tree.size()
        )
    })?;
    if head.root_hash != root_hash {
        return Err(format!(
            "the log is not consistent with the checkpoint: its root at tree size \
             {tree_size} differs from the checkpoint's (history was rewritten)"
        ));
    }
    Ok(checkpoint)
}
