//! The stored hashes of a log's Merkle tree, as Go's `sumdb/tlog` stores them: the hash at
//! level `L`, index `i` covers leaves `[i·2^L, (i+1)·2^L)` (a complete subtree). Appending a
//! leaf stores its hash and the hashes of the subtrees it completes: O(log n) hashes, never
//! a re-read. Any tree size's root, and every proof, is read from these hashes alone.

use super::error::VerifiableError;
use super::hashing::{empty_root, node_hash, Hash};

/// A tree size and its RFC 6962 root hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeHead {
    /// The number of leaves (records) the tree covers.
    pub tree_size: u64,
    /// The tree's root hash (`SHA-256("")` for the empty tree).
    pub root_hash: Hash,
}

/// The stored hashes of one tree, level by level (`levels[L][i]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeHashes {
    levels: Vec<Vec<Hash>>,
}

impl TreeHashes {
    /// The empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.levels.first().map_or(0, |leaves| leaves.len() as u64)
    }

    /// Appends one leaf hash; returns the stored hashes it added as `(level, index, hash)`
    /// (the leaf's, then each completed subtree's), which is what a store writes.
    pub fn append(&mut self, leaf: Hash) -> Vec<(u32, u64, Hash)> {
        let mut added = Vec::new();
        let mut level = 0usize;
        let mut hash = leaf;
        loop {
            if self.levels.len() <= level {
                self.levels.push(Vec::new());
            }
            let index = self.levels[level].len() as u64;
            self.levels[level].push(hash);
            added.push((level as u32, index, hash));
            if index % 2 == 0 {
                break;
            }
            let left = self.levels[level][index as usize - 1];
            hash = node_hash(&left, &hash);
            level += 1;
        }
        added
    }

    /// The stored hash at `level`, `index`, if that subtree is complete.
    pub fn stored(&self, level: u32, index: u64) -> Option<Hash> {
        self.levels
            .get(level as usize)
            .and_then(|hashes| hashes.get(usize::try_from(index).ok()?))
            .copied()
    }

    /// The tree head at `tree_size` (any size up to [`TreeHashes::size`]).
    pub fn tree_head(&self, tree_size: u64) -> Result<TreeHead, VerifiableError> {
        self.check_size(tree_size)?;
        let root_hash = if tree_size == 0 {
            empty_root()
        } else {
            self.subtree(0, tree_size)
        };
        Ok(TreeHead {
            tree_size,
            root_hash,
        })
    }

    /// The audit path of leaf `leaf_index` in the tree of `tree_size` leaves (RFC 6962
    /// §2.1.1 `PATH`), deepest first.
    pub fn inclusion_path(
        &self,
        leaf_index: u64,
        tree_size: u64,
    ) -> Result<Vec<Hash>, VerifiableError> {
        self.check_size(tree_size)?;
        if leaf_index >= tree_size {
            return Err(VerifiableError::OutOfRange(format!(
                "sequence {} is beyond tree size {tree_size}",
                leaf_index + 1
            )));
        }
        let mut path = Vec::new();
        self.path(leaf_index, 0, tree_size, &mut path);
        Ok(path)
    }

    /// The consistency path between sizes `from` and `to` (RFC 6962 §2.1.2 `PROOF`);
    /// empty when `from` is 0 or equals `to`.
    pub fn consistency_path(&self, from: u64, to: u64) -> Result<Vec<Hash>, VerifiableError> {
        if from > to {
            return Err(VerifiableError::FromAfterTo { from, to });
        }
        self.check_size(to)?;
        let mut path = Vec::new();
        if from > 0 && from < to {
            self.subproof(from, 0, to, true, &mut path);
        }
        Ok(path)
    }

    fn check_size(&self, tree_size: u64) -> Result<(), VerifiableError> {
        if tree_size > self.size() {
            return Err(VerifiableError::OutOfRange(format!(
                "tree size {tree_size} is beyond the log's tree size {}",
                self.size()
            )));
        }
        Ok(())
    }

    /// `MTH(D[lo:hi])`, from stored hashes; `lo` is aligned to the largest power of two
    /// below `hi - lo` (RFC 6962's recursion keeps it so).
    fn subtree(&self, lo: u64, hi: u64) -> Hash {
        let n = hi - lo;
        if n.is_power_of_two() {
            let level = n.trailing_zeros();
            if let Some(hash) = self.stored(level, lo >> level) {
                return hash;
            }
        }
        let k = split(n);
        node_hash(&self.subtree(lo, lo + k), &self.subtree(lo + k, hi))
    }

    fn path(&self, m: u64, lo: u64, hi: u64, out: &mut Vec<Hash>) {
        let n = hi - lo;
        if n == 1 {
            return;
        }
        let k = split(n);
        if m < k {
            self.path(m, lo, lo + k, out);
            out.push(self.subtree(lo + k, hi));
        } else {
            self.path(m - k, lo + k, hi, out);
            out.push(self.subtree(lo, lo + k));
        }
    }

    fn subproof(&self, m: u64, lo: u64, hi: u64, whole: bool, out: &mut Vec<Hash>) {
        let n = hi - lo;
        if m == n {
            if !whole {
                out.push(self.subtree(lo, hi));
            }
            return;
        }
        let k = split(n);
        if m <= k {
            self.subproof(m, lo, lo + k, whole, out);
            out.push(self.subtree(lo + k, hi));
        } else {
            self.subproof(m - k, lo + k, hi, false, out);
            out.push(self.subtree(lo, lo + k));
        }
    }
}

/// The largest power of two below `n` (`n >= 2`).
fn split(n: u64) -> u64 {
    1u64 << (63 - (n - 1).leading_zeros())
}
