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

impl TreeHead {
    /// The JSON the CLI prints: `{"treeSize":N,"rootHash":"<base64>"}`.
    pub fn to_json(&self) -> serde_json::Value {
        use base64::Engine as _;
        serde_json::json!({
            "treeSize": self.tree_size,
            "rootHash": base64::engine::general_purpose::STANDARD.encode(self.root_hash),
        })
    }
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
        tree_head(self, tree_size)
    }

    /// The audit path of leaf `leaf_index` in the tree of `tree_size` leaves (RFC 6962
    /// §2.1.1 `PATH`), deepest first.
    pub fn inclusion_path(
        &self,
        leaf_index: u64,
        tree_size: u64,
    ) -> Result<Vec<Hash>, VerifiableError> {
        inclusion_path(self, leaf_index, tree_size)
    }

    /// The consistency path between sizes `from` and `to` (RFC 6962 §2.1.2 `PROOF`);
    /// empty when `from` is 0 or equals `to`.
    pub fn consistency_path(&self, from: u64, to: u64) -> Result<Vec<Hash>, VerifiableError> {
        consistency_path(self, from, to)
    }
}

impl HashSource for TreeHashes {
    type Error = VerifiableError;

    fn size(&self) -> u64 {
        TreeHashes::size(self)
    }

    fn stored(&self, level: u32, index: u64) -> Result<Option<Hash>, VerifiableError> {
        Ok(TreeHashes::stored(self, level, index))
    }
}

/// Where a tree's stored hashes come from: memory ([`TreeHashes`]) or a store's tiles
/// ([`super::tiles::StoredTree`]). Every root and proof is computed from these alone, by
/// the functions below, once for every source.
pub trait HashSource {
    /// What a read of a stored hash may fail with.
    type Error: From<VerifiableError>;
    /// The number of leaves.
    fn size(&self) -> u64;
    /// The stored hash at `level`, `index` (covering leaves `[index·2^level,
    /// (index+1)·2^level)`), `None` when that subtree is not complete.
    fn stored(&self, level: u32, index: u64) -> Result<Option<Hash>, Self::Error>;
}

/// The tree head of `source` at `tree_size` (any size up to its size).
pub fn tree_head<S: HashSource + ?Sized>(source: &S, tree_size: u64) -> Result<TreeHead, S::Error> {
    check_size(source, tree_size)?;
    let root_hash = if tree_size == 0 {
        empty_root()
    } else {
        subtree(source, 0, tree_size)?
    };
    Ok(TreeHead {
        tree_size,
        root_hash,
    })
}

/// The audit path of leaf `leaf_index` in the tree of `tree_size` leaves (RFC 6962
/// §2.1.1 `PATH`), deepest first.
pub fn inclusion_path<S: HashSource + ?Sized>(
    source: &S,
    leaf_index: u64,
    tree_size: u64,
) -> Result<Vec<Hash>, S::Error> {
    check_size(source, tree_size)?;
    if leaf_index >= tree_size {
        return Err(VerifiableError::OutOfRange(format!(
            "sequence {} is beyond tree size {tree_size}",
            leaf_index + 1
        ))
        .into());
    }
    let mut out = Vec::new();
    path(source, leaf_index, 0, tree_size, &mut out)?;
    Ok(out)
}

/// The consistency path between sizes `from` and `to` (RFC 6962 §2.1.2 `PROOF`); empty
/// when `from` is 0 or equals `to`.
pub fn consistency_path<S: HashSource + ?Sized>(
    source: &S,
    from: u64,
    to: u64,
) -> Result<Vec<Hash>, S::Error> {
    if from > to {
        return Err(VerifiableError::FromAfterTo { from, to }.into());
    }
    check_size(source, to)?;
    let mut out = Vec::new();
    if from > 0 && from < to {
        subproof(source, from, 0, to, true, &mut out)?;
    }
    Ok(out)
}

fn check_size<S: HashSource + ?Sized>(source: &S, tree_size: u64) -> Result<(), S::Error> {
    if tree_size > source.size() {
        return Err(VerifiableError::OutOfRange(format!(
            "tree size {tree_size} is beyond the log's tree size {}",
            source.size()
        ))
        .into());
    }
    Ok(())
}

/// `MTH(D[lo:hi])`, from stored hashes; `lo` is aligned to the largest power of two
/// below `hi - lo` (RFC 6962's recursion keeps it so).
fn subtree<S: HashSource + ?Sized>(source: &S, lo: u64, hi: u64) -> Result<Hash, S::Error> {
    let n = hi - lo;
    if n.is_power_of_two() {
        let level = n.trailing_zeros();
        if let Some(hash) = source.stored(level, lo >> level)? {
            return Ok(hash);
        }
        if n == 1 {
            return Err(VerifiableError::OutOfRange(format!(
                "leaf {lo} is beyond the tree's size {}",
                source.size()
            ))
            .into());
        }
    }
    let k = split(n);
    Ok(node_hash(
        &subtree(source, lo, lo + k)?,
        &subtree(source, lo + k, hi)?,
    ))
}

fn path<S: HashSource + ?Sized>(
    source: &S,
    m: u64,
    lo: u64,
    hi: u64,
    out: &mut Vec<Hash>,
) -> Result<(), S::Error> {
    let n = hi - lo;
    if n == 1 {
        return Ok(());
    }
    let k = split(n);
    if m < k {
        path(source, m, lo, lo + k, out)?;
        out.push(subtree(source, lo + k, hi)?);
    } else {
        path(source, m - k, lo + k, hi, out)?;
        out.push(subtree(source, lo, lo + k)?);
    }
    Ok(())
}

fn subproof<S: HashSource + ?Sized>(
    source: &S,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    out: &mut Vec<Hash>,
) -> Result<(), S::Error> {
    let n = hi - lo;
    if m == n {
        if !whole {
            out.push(subtree(source, lo, hi)?);
        }
        return Ok(());
    }
    let k = split(n);
    if m <= k {
        subproof(source, m, lo, lo + k, whole, out)?;
        out.push(subtree(source, lo + k, hi)?);
    } else {
        subproof(source, m - k, lo + k, hi, false, out)?;
        out.push(subtree(source, lo, lo + k)?);
    }
    Ok(())
}

/// The largest power of two below `n` (`n >= 2`).
fn split(n: u64) -> u64 {
    1u64 << (63 - (n - 1).leading_zeros())
}
