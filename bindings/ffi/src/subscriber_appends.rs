//! Batch and idempotent registration, chunk-size changes and the idempotency window of the
//! [`SubscriberArchive`] client object.

use attrflow::chunked_log as log;
use attrflow::flows::chunked_subscriber::appends as core_appends;
use attrflow::flows::chunked_subscriber::layout as core_layout;

use crate::error::Result;
use crate::subscribers::{Subscriber, SubscriberArchive};

/// One subscriber of a batch, before it has a sequence.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct NewSubscriber {
    /// The subscriber's ID; required.
    pub subscriber_id: String,
    /// The subscriber's delivery address; required.
    pub delivery_address: String,
}

/// One layout of the archive: chunks of `chunk_size` subscribers from `from_sequence` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct ChunkLayout {
    /// The first sequence of the layout's first chunk.
    pub from_sequence: u64,
    /// Subscribers per chunk in this layout.
    pub chunk_size: u64,
}

/// The outcome of a chunk-size change.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ChunkSizeChange {
    /// The size asked for.
    pub chunk_size: u64,
    /// The first sequence of the first chunk with that size.
    pub from_sequence: u64,
    /// The archive's whole layout history afterwards, oldest first.
    pub layouts: Vec<ChunkLayout>,
}

/// How many keyed registrations the archive remembers, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct IdempotencyWindow {
    /// The newest keys kept, 1 to 10 000.
    pub max_keys: u32,
    /// The age in milliseconds after which a key is forgotten, at least 1.
    pub max_age_ms: u64,
}

impl From<NewSubscriber> for core_appends::NewSubscriber {
    fn from(new: NewSubscriber) -> Self {
        core_appends::NewSubscriber::new(new.subscriber_id, new.delivery_address)
    }
}

impl From<log::ChunkLayout> for ChunkLayout {
    fn from(layout: log::ChunkLayout) -> Self {
        ChunkLayout {
            from_sequence: layout.from_sequence,
            chunk_size: layout.chunk_size,
        }
    }
}

impl From<core_layout::ChunkSizeChange> for ChunkSizeChange {
    fn from(change: core_layout::ChunkSizeChange) -> Self {
        ChunkSizeChange {
            chunk_size: change.chunk_size,
            from_sequence: change.from_sequence,
            layouts: change.layouts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<IdempotencyWindow> for log::IdempotencyWindow {
    fn from(window: IdempotencyWindow) -> Self {
        log::IdempotencyWindow {
            max_keys: window.max_keys,
            max_age_ms: window.max_age_ms,
        }
    }
}

impl From<log::IdempotencyWindow> for IdempotencyWindow {
    fn from(window: log::IdempotencyWindow) -> Self {
        IdempotencyWindow {
            max_keys: window.max_keys,
            max_age_ms: window.max_age_ms,
        }
    }
}

/// The window of an archive that never set one: 100 keys, 24 hours.
#[uniffi::export]
pub fn default_idempotency_window() -> IdempotencyWindow {
    log::IdempotencyWindow::DEFAULT.into()
}

#[uniffi::export]
impl SubscriberArchive {
    /// Appends 1 to 1000 subscribers in one transaction (`RegisterSubscribers`), filling
    /// and archiving as many chunks as they need, and returns them with their sequences,
    /// oldest first. One bad subscriber fails the batch and stores nothing. With
    /// `idempotency_key`, a retry of the same batch returns the first call's subscribers.
    #[uniffi::method(default(idempotency_key = None))]
    pub fn register_batch(
        &self,
        subscribers: Vec<NewSubscriber>,
        idempotency_key: Option<String>,
    ) -> Result<Vec<Subscriber>> {
        let batch: Vec<_> = subscribers.into_iter().map(Into::into).collect();
        let stored = self
            .core()
            .register_batch(&batch, idempotency_key.as_deref())?;
        Ok(stored.into_iter().map(Into::into).collect())
    }

    /// Appends a subscriber under `idempotency_key` (`RegisterSubscriberOnce`): a retry with
    /// the same key and subscriber, from this or any other `Store` on the same file, returns
    /// the first call's subscriber with its sequence and appends nothing. The same key with
    /// another subscriber is `InvalidInput`.
    pub fn register_once(
        &self,
        idempotency_key: String,
        subscriber_id: String,
        delivery_address: String,
    ) -> Result<Subscriber> {
        let subscriber =
            self.core()
                .register_once(&idempotency_key, &subscriber_id, &delivery_address)?;
        Ok(subscriber.into())
    }

    /// Moves the archive to `chunk_size` (1 to 127) subscribers per chunk from the next
    /// chunk boundary (`ChangeSubscriberChunkSize`). Every token issued before keeps naming
    /// the same chunk.
    pub fn change_chunk_size(&self, chunk_size: u64) -> Result<ChunkSizeChange> {
        Ok(self.core().change_chunk_size(chunk_size)?.into())
    }

    /// Sets how many idempotency keys the archive remembers, and for how long
    /// (`SetSubscriberIdempotencyWindow`); returns the window set.
    pub fn set_idempotency_window(&self, window: IdempotencyWindow) -> Result<IdempotencyWindow> {
        Ok(self.core().set_idempotency_window(window.into())?.into())
    }
}
