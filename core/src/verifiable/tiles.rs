//! The tree as a chunked log stores it, in tiles after C2SP tlog-tiles: the hashes at tree
//! level `T·H` (tile level `T`, height `H` = [`TILE_HEIGHT`]) are cut into tiles of
//! [`TILE_WIDTH`] hashes. A full tile is written once, in the transaction of the append that
//! completes it, and never again (`<chunk prefix>tree-<T>-<index>`); the partial tile of
//! each tile level (at most `W - 1` hashes) is the tree's [`Frontier`], kept in the log
//! state. So an append hashes O(log n), rewrites only the state it writes anyway and, one
//! append in `W`, adds a tile; a hash at a level between two tile levels is recomputed from
//! the `2^r ≤ W/2` hashes of one tile below it, as Go's `tlog.TileHashReader` does.

use std::cell::RefCell;
use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::hashing::{node_hash, Hash};
use super::tree::HashSource;
use crate::error::{Error, Result};

/// Tree levels per tile level.
pub const TILE_HEIGHT: u32 = 4;
/// Hashes per full tile: `2^TILE_HEIGHT`.
pub const TILE_WIDTH: u64 = 1 << TILE_HEIGHT;
/// The most tiles one switching-on call writes (bounds its transaction and its input).
pub const MAX_TILES_PER_CALL: usize = 64;

/// The chunk-map instance key (within a log's chunk prefix) of the full tile `index` of
/// tile level `level`: `tree-<level>-<index>` (no dot, so no log's key can look like it).
pub fn tile_key(level: u32, index: u64) -> String {
    format!("tree-{level}-{index}")
}

/// The tile level and index a chunk-map key (within a log's prefix) names, if it is a tile's.
pub fn parse_tile_key(key: &str) -> Option<(u32, u64)> {
    let rest = key.strip_prefix("tree-")?;
    let (level, index) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(level) || !digits(index) {
        return None;
    }
    Some((level.parse().ok()?, index.parse().ok()?))
}

/// One full tile: [`TILE_WIDTH`] hashes of tree level `level·H`, from index `index·W`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tile {
    /// The tile level.
    pub level: u32,
    /// The tile's index within its level.
    pub index: u64,
    /// Its hashes, base64, oldest first.
    pub hashes: Vec<String>,
}

impl Tile {
    /// The stored value of the tile: `{"hashes":["<base64>",…]}`.
    pub fn stored_json(&self) -> String {
        serde_json::json!({ "hashes": self.hashes }).to_string()
    }

    /// The hashes of a tile's stored value (`physical` names it in errors).
    pub fn decode_stored(physical: &str, value: &serde_json::Value) -> Result<Vec<Hash>> {
        let hashes = value
            .get("hashes")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| Error::storage(format!("stored tile {physical:?} has no hashes")))?;
        let hashes = hashes
            .iter()
            .map(|hash| hash.as_str().and_then(decode_hash))
            .collect::<Option<Vec<Hash>>>()
            .ok_or_else(|| {
                Error::storage(format!("stored tile {physical:?} holds a malformed hash"))
            })?;
        if hashes.len() as u64 != TILE_WIDTH {
            return Err(Error::storage(format!(
                "stored tile {physical:?} holds {} hashes, not {TILE_WIDTH}",
                hashes.len()
            )));
        }
        Ok(hashes)
    }
}

/// The tree's open edge as the log state stores it (`"tree"`): its size and, per tile level,
/// the partial tile's hashes, concatenated and in base64.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredFrontier {
    /// The leaves the tree covers (the log's records from sequence 1).
    pub size: u64,
    /// Per tile level, the partial tile's hashes concatenated, base64.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<String>,
}

/// The tree's open edge: its size and, per tile level, the hashes of the partial tile.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frontier {
    size: u64,
    partial: Vec<Vec<Hash>>,
}

impl Frontier {
    /// The empty tree's frontier.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Adds a leaf hash; returns the full tiles it completed (to be written), lowest first.
    pub fn append(&mut self, leaf: Hash) -> Result<Vec<Tile>> {
        let size = self
            .size
            .checked_add(1)
            .ok_or_else(|| Error::storage("the tree ran out of leaves".to_owned()))?;
        let mut tiles = Vec::new();
        let mut hash = leaf;
        let mut level = 0u32;
        loop {
            if self.partial.len() <= level as usize {
                self.partial.push(Vec::new());
            }
            let partial = &mut self.partial[level as usize];
            partial.push(hash);
            if partial.len() as u64 != TILE_WIDTH {
                break;
            }
            let full = std::mem::take(partial);
            // The hashes at this tile level after the append, the last of them in `full`.
            let count = size >> (level * TILE_HEIGHT);
            hash = fold(&full);
            tiles.push(Tile {
                level,
                index: count / TILE_WIDTH - 1,
                hashes: full.iter().map(|h| STANDARD.encode(h)).collect(),
            });
            level += 1;
        }
        self.size = size;
        Ok(tiles)
    }

    /// What the log state stores.
    pub fn to_stored(&self) -> StoredFrontier {
        StoredFrontier {
            size: self.size,
            partial: self
                .partial
                .iter()
                .map(|hashes| STANDARD.encode(hashes.concat()))
                .collect(),
        }
    }

    /// The frontier a log state stores; one that does not fit its size is a storage error.
    pub fn from_stored(stored: &StoredFrontier) -> Result<Self> {
        Self::parse(stored)
            .map_err(|why| Error::storage(format!("stored tree frontier is invalid: {why}")))
    }

    /// The frontier `stored` holds, or what is wrong with it.
    pub fn parse(stored: &StoredFrontier) -> std::result::Result<Self, String> {
        let corrupt = |why: &str| why.to_owned();
        let mut partial = Vec::with_capacity(stored.partial.len());
        for (level, text) in stored.partial.iter().enumerate() {
            let bytes = STANDARD
                .decode(text)
                .map_err(|_| corrupt("a partial tile is not base64"))?;
            if bytes.len() % 32 != 0 {
                return Err(corrupt("a partial tile is not whole hashes"));
            }
            let hashes: Vec<Hash> = bytes
                .chunks_exact(32)
                .map(|chunk| chunk.try_into().unwrap_or([0; 32]))
                .collect();
            let count = stored
                .size
                .checked_shr(level as u32 * TILE_HEIGHT)
                .unwrap_or(0);
            if hashes.len() as u64 != count % TILE_WIDTH {
                return Err(corrupt("a partial tile does not match the tree size"));
            }
            partial.push(hashes);
        }
        // Tile level `T` has an entry once a hash reached tree level `T·H`.
        let levels = (0..64 / TILE_HEIGHT)
            .take_while(|level| stored.size >> (level * TILE_HEIGHT) > 0)
            .count();
        if partial.len() != levels {
            return Err(corrupt("the partial tiles do not match the tree size"));
        }
        Ok(Frontier {
            size: stored.size,
            partial,
        })
    }

    /// The partial tile of tile level `level` (hashes from index `⌊count/W⌋·W` on).
    fn partial(&self, level: u32) -> &[Hash] {
        self.partial
            .get(level as usize)
            .map_or(&[][..], Vec::as_slice)
    }
}

/// A read of one full tile: (tile level, index) → its hashes, `None` when absent.
pub type ReadTile<'a> = dyn Fn(u32, u64) -> Result<Option<Vec<Hash>>> + 'a;

/// The tree a store holds: the frontier from the log state and its full tiles, read on
/// demand by `read_tile` (tile level, index → the tile's hashes, `None` when absent); each
/// tile is read at most once.
pub struct StoredTree<'a> {
    frontier: Frontier,
    read_tile: Box<ReadTile<'a>>,
    tiles: RefCell<HashMap<(u32, u64), Vec<Hash>>>,
}

impl<'a> StoredTree<'a> {
    /// The tree of `frontier` whose full tiles `read_tile` reads.
    pub fn new(
        frontier: Frontier,
        read_tile: impl Fn(u32, u64) -> Result<Option<Vec<Hash>>> + 'a,
    ) -> Self {
        StoredTree {
            frontier,
            read_tile: Box::new(read_tile),
            tiles: RefCell::new(HashMap::new()),
        }
    }

    /// The frontier.
    pub fn frontier(&self) -> &Frontier {
        &self.frontier
    }

    /// The hashes `[first, first + count)` of tile level `level`, all within one tile.
    fn base_hashes(&self, level: u32, first: u64, count: u64) -> Result<Vec<Hash>> {
        let tile = first / TILE_WIDTH;
        let offset = (first % TILE_WIDTH) as usize;
        let stored = self.frontier.size >> (level * TILE_HEIGHT);
        if tile == stored / TILE_WIDTH {
            return Ok(self.frontier.partial(level)[offset..offset + count as usize].to_vec());
        }
        if let Some(hashes) = self.tiles.borrow().get(&(level, tile)) {
            return Ok(hashes[offset..offset + count as usize].to_vec());
        }
        let hashes = (self.read_tile)(level, tile)?.ok_or_else(|| {
            Error::storage(format!(
                "the tree's tile {} is missing from the store",
                tile_key(level, tile)
            ))
        })?;
        let wanted = hashes[offset..offset + count as usize].to_vec();
        self.tiles.borrow_mut().insert((level, tile), hashes);
        Ok(wanted)
    }
}

impl HashSource for StoredTree<'_> {
    type Error = Error;

    fn size(&self) -> u64 {
        self.frontier.size
    }

    fn stored(&self, level: u32, index: u64) -> Result<Option<Hash>> {
        let tile_level = level / TILE_HEIGHT;
        let within = level % TILE_HEIGHT;
        let base = tile_level * TILE_HEIGHT;
        let Some(first) = index.checked_shl(within) else {
            return Ok(None);
        };
        let count = 1u64 << within;
        let stored = self.frontier.size.checked_shr(base).unwrap_or(0);
        if first.checked_add(count).map_or(true, |end| end > stored) {
            return Ok(None);
        }
        Ok(Some(fold(&self.base_hashes(tile_level, first, count)?)))
    }
}

/// The root of a complete subtree of `hashes` (a power of two of them).
fn fold(hashes: &[Hash]) -> Hash {
    let mut level = hashes.to_vec();
    while level.len() > 1 {
        level = level
            .chunks_exact(2)
            .map(|pair| node_hash(&pair[0], &pair[1]))
            .collect();
    }
    level[0]
}

/// A base64 hash, if it is one.
fn decode_hash(text: &str) -> Option<Hash> {
    STANDARD.decode(text).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verifiable::hashing::leaf_hash;
    use crate::verifiable::tree::{consistency_path, inclusion_path, tree_head};
    use crate::verifiable::TreeHashes;

    #[test]
    fn stored_tiles_answer_as_the_whole_tree_does() {
        let mut frontier = Frontier::new();
        let mut whole = TreeHashes::new();
        let mut store: HashMap<(u32, u64), Vec<Hash>> = HashMap::new();
        for n in 0..700u64 {
            let leaf = leaf_hash(&n.to_be_bytes());
            whole.append(leaf);
            for tile in frontier.append(leaf).unwrap() {
                let value: serde_json::Value = serde_json::from_str(&tile.stored_json()).unwrap();
                let hashes = Tile::decode_stored("t", &value).unwrap();
                assert!(store.insert((tile.level, tile.index), hashes).is_none());
            }
            let reread = Frontier::from_stored(&frontier.to_stored()).unwrap();
            assert_eq!(reread, frontier);
            let tree = StoredTree::new(reread, |level, index| {
                Ok(store.get(&(level, index)).cloned())
            });
            let size = n + 1;
            assert_eq!(
                tree_head(&tree, size).unwrap(),
                whole.tree_head(size).unwrap()
            );
            for m in [1, size / 2 + 1, size] {
                assert_eq!(
                    inclusion_path(&tree, m - 1, size).unwrap(),
                    whole.inclusion_path(m - 1, size).unwrap()
                );
                assert_eq!(
                    consistency_path(&tree, m, size).unwrap(),
                    whole.consistency_path(m, size).unwrap()
                );
            }
        }
        assert_eq!(store.len(), 700 / 16 + 700 / 256);
    }

    #[test]
    fn tile_keys_round_trip_and_nothing_else_parses() {
        assert_eq!(parse_tile_key(&tile_key(2, 41)), Some((2, 41)));
        for other in [
            "current",
            "00000000000000000101",
            "tree-1",
            "tree--1",
            "tree-a-1",
        ] {
            assert_eq!(parse_tile_key(other), None, "{other}");
        }
    }
}
