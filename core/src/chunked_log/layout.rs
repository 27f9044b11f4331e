//! The layout history of a chunked log: from which sequence which chunk size applies.
//!
//! A log starts with one layout, `{from 1, the ChunkedLog's chunk size}`. Changing the chunk
//! size adds a layout that starts at a chunk boundary, so every chunk, old or new, lies
//! wholly inside one layout and every archive token ever handed out keeps naming the same
//! chunk. A log whose state stores no history (every store written before layouts existed)
//! reads as the single default layout.
//!
//! Chunk sizes are 1 to [`MAX_CHUNK_SIZE`], the most records of the largest size that fit
//! in one stored value, so an open chunk can always take its next record. Stores written
//! before that bound may hold layouts of up to [`LEGACY_MAX_CHUNK_SIZE`]: such a layout's
//! open chunk closes once it holds [`MAX_CHUNK_SIZE`] records (or at its next append, when
//! it already holds more), and the log continues from there with a layout of at most
//! [`MAX_CHUNK_SIZE`]. That closing point is stored as a layout, so tokens stay exact.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::limits::{MAX_CHUNK_SIZE, MAX_LAYOUTS};

/// The largest chunk size stores written before [`MAX_CHUNK_SIZE`] existed may hold; read
/// only, never accepted for a new layout.
pub const LEGACY_MAX_CHUNK_SIZE: u64 = 10_000;

/// One layout: chunks of `chunk_size` records, the first starting at `from_sequence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkLayout {
    /// The first sequence of the layout's first chunk (a boundary of the layout before).
    pub from_sequence: u64,
    /// Records per chunk in this layout.
    pub chunk_size: u64,
}

/// A log's layouts, oldest first; never empty, the first always starts at sequence 1, and
/// no two neighbours have the same chunk size. A layout starts at a chunk boundary of the
/// one before, unless that one is a legacy layout (chunk size over [`MAX_CHUNK_SIZE`]),
/// whose open chunk may close early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutHistory {
    layouts: Vec<ChunkLayout>,
}

/// Checks a requested chunk size: 1 to [`MAX_CHUNK_SIZE`].
pub fn validate_chunk_size(chunk_size: u64) -> Result<()> {
    if chunk_size == 0 || chunk_size > MAX_CHUNK_SIZE {
        return Err(Error::invalid_input(format!(
            "chunk size must be between 1 and {MAX_CHUNK_SIZE}, got {chunk_size}"
        )));
    }
    Ok(())
}

impl LayoutHistory {
    /// The history of a log that never changed its chunk size.
    pub fn single(chunk_size: u64) -> Self {
        LayoutHistory {
            layouts: vec![ChunkLayout {
                from_sequence: 1,
                chunk_size,
            }],
        }
    }

    /// The history a log state stores (`stored`), or the single default layout when it
    /// stores none. A stored history that breaks the rules is a storage error.
    pub fn from_stored(stored: &[ChunkLayout], default_chunk_size: u64) -> Result<Self> {
        if stored.is_empty() {
            return Ok(Self::single(default_chunk_size));
        }
        let corrupt =
            |why: &str| Error::storage(format!("stored chunk layout history is invalid: {why}"));
        // A legacy layout's early close adds one layout beyond the bound.
        if stored.len() > MAX_LAYOUTS + 1 {
            return Err(corrupt("too many layouts"));
        }
        if stored[0].from_sequence != 1 {
            return Err(corrupt("the first layout does not start at sequence 1"));
        }
        for layout in stored {
            if layout.chunk_size == 0 || layout.chunk_size > LEGACY_MAX_CHUNK_SIZE {
                return Err(corrupt("a chunk size is out of range"));
            }
        }
        for pair in stored.windows(2) {
            let (older, newer) = (pair[0], pair[1]);
            let boundary = newer.from_sequence > older.from_sequence
                && (older.chunk_size > MAX_CHUNK_SIZE
                    || (newer.from_sequence - older.from_sequence) % older.chunk_size == 0);
            if !boundary {
                return Err(corrupt("a layout does not start at a chunk boundary"));
            }
        }
        Ok(LayoutHistory {
            layouts: stored.to_vec(),
        })
    }

    /// The layouts, oldest first.
    pub fn layouts(&self) -> &[ChunkLayout] {
        &self.layouts
    }

    /// What a log state stores: nothing while the log has its default single layout, so
    /// such a state stays byte-identical to one written before layouts existed.
    pub fn to_stored(&self, default_chunk_size: u64) -> Vec<ChunkLayout> {
        if *self == Self::single(default_chunk_size) {
            Vec::new()
        } else {
            self.layouts.clone()
        }
    }

    /// The layout the chunk holding (or starting at) `sequence` belongs to.
    pub fn layout_at(&self, sequence: u64) -> ChunkLayout {
        let index = self
            .layouts
            .partition_point(|layout| layout.from_sequence <= sequence);
        self.layouts[index.saturating_sub(1)]
    }

    /// The chunk size of the chunk starting at `first_sequence`.
    pub fn chunk_size_at(&self, first_sequence: u64) -> u64 {
        self.layout_at(first_sequence).chunk_size
    }

    /// Whether a chunk starts at `sequence` in this history.
    pub fn is_boundary(&self, sequence: u64) -> bool {
        if sequence == 0 {
            return false;
        }
        let layout = self.layout_at(sequence);
        (sequence - layout.from_sequence) % layout.chunk_size == 0
    }

    /// The first sequence of the chunk just before the chunk starting at `first_sequence`,
    /// `None` for the first chunk.
    pub fn previous_boundary(&self, first_sequence: u64) -> Option<u64> {
        if first_sequence <= 1 {
            return None;
        }
        let last = first_sequence - 1;
        let layout = self.layout_at(last);
        let offset = (last - layout.from_sequence) / layout.chunk_size * layout.chunk_size;
        Some(layout.from_sequence + offset)
    }

    /// The first sequence after the archived chunk starting at `first_sequence`: where its
    /// layout's chunk size ends it, or where the next layout starts when that comes first
    /// (a legacy layout's chunk closed early). `None` past `u64::MAX`.
    pub fn next_boundary(&self, first_sequence: u64) -> Option<u64> {
        let end = first_sequence.checked_add(self.chunk_size_at(first_sequence));
        let next_layout = self
            .layouts
            .iter()
            .map(|layout| layout.from_sequence)
            .find(|&from| from > first_sequence);
        match (end, next_layout) {
            (Some(end), Some(next)) => Some(end.min(next)),
            (end, next) => end.or(next),
        }
    }

    /// How many records the open chunk starting at `first_sequence` takes before it
    /// closes: its layout's chunk size, or at most [`MAX_CHUNK_SIZE`] in a legacy layout.
    pub fn capacity_at(&self, first_sequence: u64) -> u64 {
        self.chunk_size_at(first_sequence).min(MAX_CHUNK_SIZE)
    }

    /// Where the open chunk starting at `current_first` and holding `current_len` records
    /// closes: after its layout's chunk size, or for a legacy layout after
    /// [`MAX_CHUNK_SIZE`] records (at its next append when it already holds more).
    fn closing_point(&self, current_first: u64, current_len: u64) -> Option<u64> {
        let size = self.chunk_size_at(current_first);
        let len = if size > MAX_CHUNK_SIZE {
            current_len.max(MAX_CHUNK_SIZE)
        } else {
            size
        };
        current_first.checked_add(len)
    }

    /// Records that the open chunk starting at `current_first`, in a legacy layout, closes
    /// early at `next_sequence`: the log continues there with the size of a pending change,
    /// or [`MAX_CHUNK_SIZE`], so no later chunk is ever too large.
    pub fn close_legacy_chunk(&mut self, current_first: u64, next_sequence: u64) {
        let pending = self
            .layouts
            .iter()
            .find(|layout| layout.from_sequence > current_first)
            .map(|layout| layout.chunk_size);
        self.layouts
            .retain(|layout| layout.from_sequence <= current_first);
        self.layouts.push(ChunkLayout {
            from_sequence: next_sequence,
            chunk_size: pending.unwrap_or(MAX_CHUNK_SIZE).min(MAX_CHUNK_SIZE),
        });
    }

    /// Moves the log to `chunk_size` for the chunks after the open one (starting at
    /// `current_first`, holding `current_len` records), or from `current_first` itself
    /// when the open chunk is still empty. Returns the sequence the new size applies from.
    ///
    /// The open chunk keeps the size it was opened with, so no chunk ever straddles two
    /// layouts. A change not yet in effect (its boundary not yet reached) is replaced by a
    /// later one; a change back to the size already in effect cancels it.
    pub fn change_chunk_size(
        &mut self,
        current_first: u64,
        current_len: u64,
        chunk_size: u64,
    ) -> Result<u64> {
        validate_chunk_size(chunk_size)?;
        self.layouts
            .retain(|layout| layout.from_sequence <= current_first);
        let from_sequence = if current_len == 0 {
            self.layouts
                .retain(|layout| layout.from_sequence < current_first);
            current_first
        } else {
            self.closing_point(current_first, current_len)
                .ok_or_else(|| {
                    Error::invalid_input("the log has no sequences left for a new chunk size")
                })?
        };
        let before = self.layouts.last().map(|layout| layout.chunk_size);
        if before != Some(chunk_size) {
            if self.layouts.len() >= MAX_LAYOUTS {
                return Err(Error::invalid_input(format!(
                    "the log already has {MAX_LAYOUTS} chunk layouts, the most it keeps"
                )));
            }
            self.layouts.push(ChunkLayout {
                from_sequence,
                chunk_size,
            });
        }
        Ok(from_sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 for the first two chunks, then 50 for two chunks, then 120.
    fn migrated() -> LayoutHistory {
        let mut history = LayoutHistory::single(100);
        assert_eq!(history.change_chunk_size(101, 50, 50).unwrap(), 201);
        assert_eq!(history.change_chunk_size(251, 50, 120).unwrap(), 301);
        history
    }

    #[test]
    fn boundaries_follow_every_layout() {
        let history = migrated();
        let boundaries: Vec<u64> = (1..=900).filter(|s| history.is_boundary(*s)).collect();
        assert_eq!(boundaries, [1, 101, 201, 251, 301, 421, 541, 661, 781]);
        assert!(!history.is_boundary(0));
    }

    #[test]
    fn previous_boundaries_walk_back_across_layouts() {
        let history = migrated();
        let mut walked = vec![781];
        while let Some(previous) = history.previous_boundary(*walked.last().unwrap()) {
            walked.push(previous);
        }
        assert_eq!(walked, [781, 661, 541, 421, 301, 251, 201, 101, 1]);
    }

    #[test]
    fn next_boundaries_walk_forward_across_layouts() {
        let history = migrated();
        let mut walked = vec![1];
        while *walked.last().unwrap() < 781 {
            walked.push(history.next_boundary(*walked.last().unwrap()).unwrap());
        }
        assert_eq!(walked, [1, 101, 201, 251, 301, 421, 541, 661, 781]);
        assert_eq!(LayoutHistory::single(1).next_boundary(u64::MAX), None);
    }

    #[test]
    fn an_unreached_change_is_replaced_or_cancelled() {
        let mut history = LayoutHistory::single(100);
        history.change_chunk_size(1, 1, 50).unwrap();
        history.change_chunk_size(1, 1, 20).unwrap();
        assert_eq!(history.layouts()[1].chunk_size, 20);
        history.change_chunk_size(1, 1, 100).unwrap();
        assert_eq!(history, LayoutHistory::single(100));
        assert!(history.to_stored(100).is_empty());
    }

    #[test]
    fn an_empty_log_changes_at_once() {
        let mut history = LayoutHistory::single(100);
        assert_eq!(history.change_chunk_size(1, 0, 7).unwrap(), 1);
        assert_eq!(history, LayoutHistory::single(7));
    }

    #[test]
    fn sizes_and_history_length_are_bounded() {
        let mut history = LayoutHistory::single(100);
        for bad in [0, MAX_CHUNK_SIZE + 1] {
            let error = history.change_chunk_size(1, 1, bad).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("chunk size must be between 1 and {MAX_CHUNK_SIZE}, got {bad}")
            );
        }
        let mut first = 1;
        for n in 1..MAX_LAYOUTS as u64 {
            first = history.change_chunk_size(first, 1, 1 + n % 2).unwrap();
        }
        assert_eq!(history.layouts().len(), MAX_LAYOUTS);
        assert!(history.change_chunk_size(first, 1, 9).is_err());
    }

    #[test]
    fn stored_histories_are_checked() {
        let bad = [ChunkLayout {
            from_sequence: 2,
            chunk_size: 10,
        }];
        assert!(LayoutHistory::from_stored(&bad, 100).is_err());
        let off_boundary = [
            ChunkLayout {
                from_sequence: 1,
                chunk_size: 10,
            },
            ChunkLayout {
                from_sequence: 15,
                chunk_size: 5,
            },
        ];
        assert!(LayoutHistory::from_stored(&off_boundary, 100).is_err());
        let good = migrated();
        assert_eq!(
            LayoutHistory::from_stored(&good.to_stored(100), 100).unwrap(),
            good
        );
    }

    #[test]
    fn a_legacy_layout_closes_its_chunk_early_and_tokens_stay_exact() {
        let legacy = [
            ChunkLayout {
                from_sequence: 1,
                chunk_size: 100,
            },
            ChunkLayout {
                from_sequence: 201,
                chunk_size: LEGACY_MAX_CHUNK_SIZE,
            },
        ];
        let mut history = LayoutHistory::from_stored(&legacy, 100).unwrap();
        assert_eq!(history.capacity_at(201), MAX_CHUNK_SIZE);
        // A change asked while the legacy chunk is open applies where it closes.
        let from = history.change_chunk_size(201, 5, 10).unwrap();
        assert_eq!(from, 201 + MAX_CHUNK_SIZE);
        history.close_legacy_chunk(201, from);
        assert_eq!(history.layouts()[2].chunk_size, 10);
        let stored = history.to_stored(100);
        assert_eq!(LayoutHistory::from_stored(&stored, 100).unwrap(), history);
        assert!(history.is_boundary(201) && history.is_boundary(from));
        assert!(history.is_boundary(from + 10) && !history.is_boundary(from + 5));
        assert!(!history.is_boundary(201 + LEGACY_MAX_CHUNK_SIZE));
        assert_eq!(history.previous_boundary(from), Some(201));
        assert_eq!(history.previous_boundary(from + 10), Some(from));
        assert_eq!(history.next_boundary(201), Some(from));
        assert_eq!(history.next_boundary(from), Some(from + 10));
        // A legacy chunk already over the bound closes at its next append.
        let mut full = LayoutHistory::from_stored(&legacy, 100).unwrap();
        full.close_legacy_chunk(201, 201 + 500);
        assert_eq!(full.chunk_size_at(701), MAX_CHUNK_SIZE);
        assert_eq!(full.previous_boundary(701), Some(201));
    }
}
