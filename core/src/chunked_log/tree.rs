//! A chunked log's Merkle tree (issue 53; docs/verifiable-logs.md), stored beside its
//! records: off until switched on ([`ChunkedLog::switch_on_tree`]), then kept by every
//! append in its own transaction (its frontier in the log state, its full tiles as
//! instances `<chunk prefix>tree-<level>-<index>` of the chunk map). Every rule of the tree
//! is [`crate::verifiable`]'s; this file only says where its hashes are stored.

use serde::{Deserialize, Serialize};

use super::state::LogState;
use super::token::CURRENT_CHUNK;
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::definition::{LockTarget, MapInstance};
use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::verifiable::hashing::{leaf_bytes, leaf_hash};
use crate::verifiable::tiles::{
    tile_key, Frontier, StoredFrontier, StoredTree, Tile, MAX_TILES_PER_CALL, TILE_WIDTH,
};
use crate::verifiable::{LogTree, VerifiableError};

/// Input of a switching-on call: tiles of the tree built so far by reading the log, and,
/// once the read reached the open chunk, the frontier it ended with.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SwitchOnInput {
    /// Full tiles to store (at most [`MAX_TILES_PER_CALL`]).
    pub tiles: Vec<Tile>,
    /// The frontier after the last record read, when the read is complete.
    pub frontier: Option<StoredFrontier>,
}

/// What a switching-on call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SwitchOnOutcome {
    /// Whether the log is verifiable now.
    pub done: bool,
    /// Its tree size when done, else the frontier's size the call was given (0 without).
    pub tree_size: u64,
}

impl ChunkedLog {
    /// One step of switching the log's tree on (the RPC needs
    /// [`ChunkedLog::appending`]'s locks and load). A log already verifiable stays as it is
    /// (`done`, whatever the input). Otherwise the input's tiles are stored and, given a
    /// frontier that reaches the open chunk, the open chunk's remaining records are added
    /// to it and the tree is on from here: every later append keeps it. A frontier that ends
    /// before the open chunk (the log grew since it was read) is `done: false`, to read on.
    /// A log whose oldest records were trimmed cannot be switched on
    /// ([`VerifiableError::Trimmed`]): its tree must cover every record from sequence 1.
    pub fn switch_on_tree(
        &self,
        ctx: &mut RpcContext<'_>,
        input: SwitchOnInput,
    ) -> Result<SwitchOnOutcome> {
        let open = self.open_chunk(ctx)?;
        if let Some(tree) = &open.state.tree {
            return Ok(SwitchOnOutcome {
                done: true,
                tree_size: tree.size,
            });
        }
        if open.state.oldest_sequence > 1 {
            return Err(VerifiableError::Trimmed {
                sequence: 1,
                oldest_sequence: open.state.oldest_sequence,
            }
            .into());
        }
        if input.tiles.len() > MAX_TILES_PER_CALL {
            return Err(Error::invalid_input(format!(
                "a switching-on call stores at most {MAX_TILES_PER_CALL} tiles, got {}",
                input.tiles.len()
            )));
        }
        for tile in &input.tiles {
            let value = serde_json::json!({ "hashes": tile.hashes });
            Tile::decode_stored(&tile_key(tile.level, tile.index), &value).map_err(|_| {
                Error::invalid_input(format!(
                    "tile {}: a tile holds {TILE_WIDTH} base64 SHA-256 hashes",
                    tile_key(tile.level, tile.index)
                ))
            })?;
            self.write_tile(ctx, tile)?;
        }
        let Some(stored) = input.frontier else {
            return Ok(SwitchOnOutcome {
                done: false,
                tree_size: 0,
            });
        };
        let mut frontier = Frontier::parse(&stored)
            .map_err(|why| Error::invalid_input(format!("frontier: {why}")))?;
        let first = open.first_sequence();
        let next = open.state.next_sequence;
        if frontier.size() + 1 < first {
            return Ok(SwitchOnOutcome {
                done: false,
                tree_size: frontier.size(),
            });
        }
        if frontier.size() >= next {
            return Err(Error::invalid_input(format!(
                "frontier of tree size {} is beyond the log's {} records",
                frontier.size(),
                next - 1
            )));
        }
        let current: Vec<serde_json::Value> =
            self.records_as(ctx, CURRENT_CHUNK)?.unwrap_or_default();
        let skip = (frontier.size() + 1 - first) as usize;
        for record in current.iter().skip(skip) {
            for tile in frontier.append(leaf_hash(&leaf_bytes(record)))? {
                self.write_tile(ctx, &tile)?;
            }
        }
        let mut state = open.state;
        let tree_size = frontier.size();
        state.tree = Some(frontier.to_stored());
        self.write_state(ctx, &state)?;
        Ok(SwitchOnOutcome {
            done: true,
            tree_size,
        })
    }

    /// Adds the record `text` (its stored JSON) to the tree of a verifiable log, staging the
    /// tiles it completes.
    pub(super) fn append_leaf(
        &self,
        ctx: &mut RpcContext<'_>,
        frontier: &mut Frontier,
        text: &str,
    ) -> Result<()> {
        for tile in frontier.append(leaf_hash(text.as_bytes()))? {
            self.write_tile(ctx, &tile)?;
        }
        Ok(())
    }

    fn write_tile(&self, ctx: &mut RpcContext<'_>, tile: &Tile) -> Result<()> {
        ctx.set_map_instance_json(
            self.chunk_map,
            &self.chunk_key(&tile_key(tile.level, tile.index)),
            tile.stored_json(),
        )
    }

    /// The log's tree as flow `flow_id` stores it now, read lock-free from committed state
    /// (its state, then the tiles a call needs, all from the flow's current run).
    /// `describe` names the log in the error for a log that is not verifiable.
    pub fn stored_tree<'a>(
        &self,
        runtime: &'a Runtime,
        flow_id: &'a str,
        describe: &str,
    ) -> Result<LogTree<'a>> {
        let flow = runtime
            .store()
            .flow(flow_id)?
            .ok_or_else(|| Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            })?;
        let target = if self.name.is_empty() {
            LockTarget::Attribute(self.state_attribute.to_owned())
        } else {
            LockTarget::MapInstance(MapInstance {
                map: self.state_attribute.to_owned(),
                instance: self.name.clone(),
            })
        };
        let run_id = flow.run_id;
        let state: LogState = match runtime.get_attribute(flow_id, &target, Some(&run_id))? {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| Error::storage(format!("stored log state is invalid: {e}")))?,
            None => LogState::default(),
        };
        let Some(stored) = &state.tree else {
            return Err(VerifiableError::NotVerifiable {
                log: describe.to_owned(),
            }
            .into());
        };
        let frontier = Frontier::from_stored(stored)?;
        let log = self.clone();
        let tree = StoredTree::new(frontier, move |level, index| {
            let instance = log.chunk_key(&tile_key(level, index));
            let target = LockTarget::MapInstance(MapInstance {
                map: log.chunk_map.to_owned(),
                instance: instance.clone(),
            });
            let Some(json) = runtime.get_attribute(flow_id, &target, Some(&run_id))? else {
                return Ok(None);
            };
            let physical = format!("{}/{instance}", log.chunk_map);
            let value: serde_json::Value = serde_json::from_str(&json)
                .map_err(|e| Error::storage(format!("stored tile {physical:?}: {e}")))?;
            Tile::decode_stored(&physical, &value).map(Some)
        });
        Ok(LogTree::new(tree, state.oldest_sequence))
    }
}
