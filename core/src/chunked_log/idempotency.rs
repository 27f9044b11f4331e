//! Idempotent appends: an append made with an idempotency key is remembered, and a retry
//! with the same key and payload returns the records of the first call instead of
//! appending again.
//!
//! The remembered keys live in one instance of the chunk map, [`IDEMPOTENCY_INSTANCE`],
//! written in the same transaction as the append they describe: a call that committed
//! is remembered even if its caller never saw the reply (a crash between commit and
//! reply), and a call that failed is not. The instance is bounded by an
//! [`IdempotencyWindow`]: it keeps the newest `max_keys` keys, none older than
//! `max_age_ms`, and never more than [`MAX_REMEMBERED_RECORDS`] records or
//! [`MAX_REMEMBERED_BYTES`] bytes of JSON in all (a keyed batch counts its records; the
//! newest key is always kept), so large keyed batches can never grow it past the
//! stored-value limit and lock every keyed append out. A retry after its key left
//! the window is a new append.
//!
//! Cost: every keyed append reads and rewrites the whole instance, about 170 bytes a
//! remembered one-record key, so the default 100 keys add about as much as two 100-record
//! chunks to a keyed append (measured: a keyed append takes about 3 times a plain one with
//! 100 keys remembered, 13 times with 1000). Appends without a key never touch it. Choose
//! `max_keys` for the retry horizon you need: at N keyed appends a second, a key stays
//! for about `max_keys / N` seconds, never longer than `max_age_ms`. A key reused with
//! a different payload is an [`Error::InvalidInput`], never a silent second append.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ChunkedLog;
use crate::context::RpcContext;
use crate::definition::RpcDefinition;
use crate::error::{Error, Result};
use crate::limits::json_len;
use crate::typed::{decode_stored, encode};

/// The chunk-map instance holding the remembered idempotency keys. Not a page token.
pub const IDEMPOTENCY_INSTANCE: &str = "idempotency-keys";

pub use crate::limits::{MAX_IDEMPOTENCY_KEY_LEN, MAX_REMEMBERED_RECORDS, MAX_WINDOW_KEYS};

/// The most bytes of JSON the remembered keys take in all, whatever the window: half the
/// stored-value limit, so the newest key plus the ones kept with it always fit.
pub const MAX_REMEMBERED_BYTES: usize = crate::limits::MAX_VALUE_BYTES / 2;

/// How many keyed appends a log remembers, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdempotencyWindow {
    /// The newest keys kept, 1 to [`MAX_WINDOW_KEYS`].
    pub max_keys: u32,
    /// The age in milliseconds after which a key is forgotten, at least 1.
    pub max_age_ms: u64,
}

impl IdempotencyWindow {
    /// The window of a log that never set one: 100 keys, 24 hours.
    pub const DEFAULT: IdempotencyWindow = IdempotencyWindow {
        max_keys: 100,
        max_age_ms: 24 * 60 * 60 * 1_000,
    };

    /// Checks the window's bounds.
    pub fn validate(&self) -> Result<()> {
        if self.max_keys == 0 || self.max_keys > MAX_WINDOW_KEYS {
            return Err(Error::invalid_input(format!(
                "idempotency window maxKeys must be between 1 and {MAX_WINDOW_KEYS}, got {}",
                self.max_keys
            )));
        }
        if self.max_age_ms == 0 {
            return Err(Error::invalid_input(
                "idempotency window maxAgeMs must be at least 1",
            ));
        }
        Ok(())
    }
}

impl Default for IdempotencyWindow {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Checks an idempotency key: 1 to [`MAX_IDEMPOTENCY_KEY_LEN`] visible ASCII characters
/// (`!` to `~`), so it reads the same in every language and in an HTTP header.
pub fn validate_idempotency_key(key: &str) -> Result<()> {
    let visible = key.bytes().all(|b| b.is_ascii_graphic());
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN || !visible {
        return Err(Error::invalid_input(format!(
            "idempotency key must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} visible ASCII characters, got {key:?}"
        )));
    }
    Ok(())
}

/// One remembered keyed append.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyedAppend {
    key: String,
    fingerprint: String,
    recorded_at_ms: u64,
    records: Vec<Value>,
}

/// The remembered keys, oldest first.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RememberedKeys {
    keys: Vec<KeyedAppend>,
}

impl RememberedKeys {
    fn forget_expired(&mut self, window: IdempotencyWindow, now_ms: u64) {
        self.keys
            .retain(|entry| now_ms.saturating_sub(entry.recorded_at_ms) < window.max_age_ms);
        let excess = self.keys.len().saturating_sub(window.max_keys as usize);
        self.keys.drain(..excess);
        let mut records: usize = self.keys.iter().map(|entry| entry.records.len()).sum();
        let sizes: Vec<usize> = self.keys.iter().map(json_len).collect();
        let mut bytes: usize = sizes.iter().sum();
        let mut oldest_kept = 0;
        while (records > MAX_REMEMBERED_RECORDS || bytes > MAX_REMEMBERED_BYTES)
            && oldest_kept + 1 < self.keys.len()
        {
            records -= self.keys[oldest_kept].records.len();
            bytes -= sizes[oldest_kept];
            oldest_kept += 1;
        }
        self.keys.drain(..oldest_kept);
    }
}

/// A stable digest of a payload's JSON (FNV-1a, 64 bits), to tell a retry from a reuse of
/// its key without storing the payload twice.
fn fingerprint(payload: &Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in payload.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

impl ChunkedLog {
    /// [`ChunkedLog::appending`] plus the lock and load of [`IDEMPOTENCY_INSTANCE`]: what an
    /// RPC calling [`ChunkedLog::append_batch_once`] or [`ChunkedLog::append_once`] needs.
    pub fn appending_idempotent(&self, rpc: RpcDefinition) -> RpcDefinition {
        self.appending(rpc)
            .lock_map_instance(self.chunk_map, IDEMPOTENCY_INSTANCE)
            .load_map_instance(self.chunk_map, IDEMPOTENCY_INSTANCE)
    }

    /// The log's idempotency window ([`IdempotencyWindow::DEFAULT`] until one is set).
    pub fn idempotency_window(&self, ctx: &RpcContext<'_>) -> Result<IdempotencyWindow> {
        Ok(self.state(ctx)?.idempotency_window.unwrap_or_default())
    }

    /// Stores a new idempotency window in the log's state (the RPC locks the state). A
    /// smaller window forgets the keys outside it at the next keyed append.
    pub fn set_idempotency_window(
        &self,
        ctx: &mut RpcContext<'_>,
        window: IdempotencyWindow,
    ) -> Result<()> {
        window.validate()?;
        let mut state = self.state(ctx)?;
        state.idempotency_window = (window != IdempotencyWindow::DEFAULT).then_some(window);
        self.write_state(ctx, &state)
    }

    /// [`ChunkedLog::append_batch`] under an idempotency `key`: the first call with `key`
    /// appends and remembers the records; a later call with the same key and the same
    /// `payload` (the caller's input, as JSON) within the window returns those records and
    /// writes nothing. The same key with another payload is [`Error::InvalidInput`].
    ///
    /// The RPC needs [`ChunkedLog::appending_idempotent`]'s locks and loads.
    pub fn append_batch_once<I, R, F>(
        &self,
        ctx: &mut RpcContext<'_>,
        key: &str,
        payload: &Value,
        items: Vec<I>,
        make: F,
    ) -> Result<Vec<R>>
    where
        R: Serialize + DeserializeOwned,
        F: FnMut(u64, I) -> Result<R>,
    {
        validate_idempotency_key(key)?;
        let window = self.idempotency_window(ctx)?;
        let now = now_ms();
        let mut remembered = self.remembered_keys(ctx)?;
        remembered.forget_expired(window, now);
        let fingerprint = fingerprint(payload);
        if let Some(entry) = remembered.keys.iter().find(|entry| entry.key == key) {
            if entry.fingerprint != fingerprint {
                return Err(Error::invalid_input(format!(
                    "idempotency key {key:?} was already used with a different payload"
                )));
            }
            let physical = self.idempotency_physical_name();
            return entry
                .records
                .iter()
                .map(|record| decode_stored(&physical, record))
                .collect();
        }
        let records = self.append_batch(ctx, items, make)?;
        remembered.keys.push(KeyedAppend {
            key: key.to_owned(),
            fingerprint,
            recorded_at_ms: now,
            records: records
                .iter()
                .map(|record| encode("record", record))
                .collect::<Result<_>>()?,
        });
        remembered.forget_expired(window, now);
        ctx.set_map_instance(
            self.chunk_map,
            &self.chunk_key(IDEMPOTENCY_INSTANCE),
            encode("idempotency keys", &remembered)?,
        )?;
        Ok(records)
    }

    /// [`ChunkedLog::append`] under an idempotency `key`; see
    /// [`ChunkedLog::append_batch_once`].
    pub fn append_once<R, F>(
        &self,
        ctx: &mut RpcContext<'_>,
        key: &str,
        payload: &Value,
        make: F,
    ) -> Result<R>
    where
        R: Serialize + DeserializeOwned,
        F: FnOnce(u64) -> Result<R>,
    {
        let mut make = Some(make);
        let records = self.append_batch_once(ctx, key, payload, vec![()], |sequence, ()| {
            let make = make
                .take()
                .ok_or_else(|| Error::storage("a one-record append built two records"))?;
            make(sequence)
        })?;
        records
            .into_iter()
            .next()
            .ok_or_else(|| Error::storage(format!("idempotency key {key:?} remembers no record")))
    }

    fn remembered_keys(&self, ctx: &RpcContext<'_>) -> Result<RememberedKeys> {
        match ctx.map_instance(self.chunk_map, &self.chunk_key(IDEMPOTENCY_INSTANCE))? {
            Some(value) => decode_stored(&self.idempotency_physical_name(), value),
            None => Ok(RememberedKeys::default()),
        }
    }

    fn idempotency_physical_name(&self) -> String {
        format!(
            "{}/{}",
            self.chunk_map,
            self.chunk_key(IDEMPOTENCY_INSTANCE)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_visible_ascii_of_bounded_length() {
        for good in ["a", "order-17:retry", &"k".repeat(MAX_IDEMPOTENCY_KEY_LEN)] {
            assert!(validate_idempotency_key(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "with space",
            "tab\t",
            "é",
            &"k".repeat(MAX_IDEMPOTENCY_KEY_LEN + 1),
        ] {
            let error = validate_idempotency_key(bad).unwrap_err();
            assert!(matches!(error, Error::InvalidInput(_)), "{bad:?}");
        }
    }

    #[test]
    fn windows_are_bounded() {
        assert!(IdempotencyWindow::DEFAULT.validate().is_ok());
        for bad in [
            IdempotencyWindow {
                max_keys: 0,
                max_age_ms: 1,
            },
            IdempotencyWindow {
                max_keys: MAX_WINDOW_KEYS + 1,
                max_age_ms: 1,
            },
            IdempotencyWindow {
                max_keys: 1,
                max_age_ms: 0,
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn forgetting_keeps_the_newest_young_keys() {
        let entry = |key: &str, at| KeyedAppend {
            key: key.into(),
            fingerprint: String::new(),
            recorded_at_ms: at,
            records: Vec::new(),
        };
        let mut remembered = RememberedKeys {
            keys: vec![
                entry("old", 0),
                entry("a", 50),
                entry("b", 60),
                entry("c", 70),
            ],
        };
        let window = IdempotencyWindow {
            max_keys: 2,
            max_age_ms: 100,
        };
        remembered.forget_expired(window, 100);
        let keys: Vec<&str> = remembered.keys.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["b", "c"]);
    }

    #[test]
    fn remembered_records_are_bounded_but_the_newest_key_stays() {
        let entry = |key: &str, records: usize| KeyedAppend {
            key: key.into(),
            fingerprint: String::new(),
            recorded_at_ms: 0,
            records: vec![Value::Null; records],
        };
        let mut remembered = RememberedKeys {
            keys: vec![entry("a", 6_000), entry("b", 3_000), entry("c", 2_000)],
        };
        remembered.forget_expired(IdempotencyWindow::DEFAULT, 0);
        let keys: Vec<&str> = remembered.keys.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["b", "c"]);
        let mut one = RememberedKeys {
            keys: vec![entry("big", MAX_REMEMBERED_RECORDS + 1)],
        };
        one.forget_expired(IdempotencyWindow::DEFAULT, 0);
        assert_eq!(one.keys.len(), 1);
    }

    #[test]
    fn remembered_bytes_are_bounded_but_the_newest_key_stays() {
        let entry = |key: &str, bytes: usize| KeyedAppend {
            key: key.into(),
            fingerprint: String::new(),
            recorded_at_ms: 0,
            records: vec![Value::String("x".repeat(bytes))],
        };
        let third = MAX_REMEMBERED_BYTES / 3;
        let mut remembered = RememberedKeys {
            keys: vec![entry("a", third), entry("b", third), entry("c", third)],
        };
        remembered.forget_expired(IdempotencyWindow::DEFAULT, 0);
        let keys: Vec<&str> = remembered.keys.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["b", "c"]);
        let mut one = RememberedKeys {
            keys: vec![entry("big", MAX_REMEMBERED_BYTES + 1)],
        };
        one.forget_expired(IdempotencyWindow::DEFAULT, 0);
        assert_eq!(one.keys.len(), 1);
    }

    #[test]
    fn fingerprints_tell_payloads_apart() {
        let a = fingerprint(&json!({"id": "a"}));
        assert_eq!(a, fingerprint(&json!({"id": "a"})));
        assert_ne!(a, fingerprint(&json!({"id": "b"})));
        assert_eq!(a.len(), 16);
    }
}
