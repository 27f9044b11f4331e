//! The invariants a subscriber archive must satisfy after anything: a killed process, a
//! failed commit, a full disk, racing writers. Read from the stored rows themselves (not
//! through attrflow), so a bug in the read path cannot hide a bug in the write path.
//!
//! Reading is per backend ([`StoredArchive::read_sqlite`], [`StoredArchive::read_postgres`]);
//! checking is not, so another backend only needs a reader of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use attrflow::chunked_log::IDEMPOTENCY_INSTANCE;
use attrflow::flows::chunked_subscriber::{
    archive_chunk_token, Subscriber, ARCHIVE_STATE_ATTRIBUTE, SUBSCRIBER_CHUNKS_MAP,
    SUBSCRIBER_CHUNK_SIZE,
};
use serde_json::Value;

use super::{postgres_stored_values, sqlite_stored_values, Place, TestStore};

/// Every stored value of one archive flow, by physical name.
pub struct StoredArchive {
    values: BTreeMap<String, Value>,
}

/// What the stored archive holds, once its invariants are checked.
#[derive(Debug)]
pub struct ArchiveSummary {
    /// Every stored subscriber, in sequence order (sequences are 1..=len).
    pub subscribers: Vec<Subscriber>,
    /// Records in `current`.
    pub current_len: usize,
    /// Archived chunks.
    pub archives: usize,
}

impl StoredArchive {
    /// Reads the archive `flow_id` from the SQLite file at `path`, after checking the file
    /// with `PRAGMA integrity_check`.
    pub fn read_sqlite(path: &Path, flow_id: &str) -> Result<Self, String> {
        let conn = rusqlite::Connection::open(path).map_err(|e| format!("open: {e}"))?;
        let verdict: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .map_err(|e| format!("integrity_check: {e}"))?;
        if verdict != "ok" {
            return Err(format!("integrity_check: {verdict}"));
        }
        drop(conn);
        Ok(StoredArchive {
            values: sqlite_stored_values(path, flow_id),
        })
    }

    /// Reads the archive `flow_id` from `schema` of the PostgreSQL database at `url` (a
    /// driver URL: no attrflow parameters).
    pub fn read_postgres(url: &str, schema: &str, flow_id: &str) -> Self {
        StoredArchive {
            values: postgres_stored_values(url, schema, flow_id),
        }
    }

    /// Checks the layout and that every `acknowledged` subscriber (by sequence) is stored
    /// exactly once under its sequence:
    /// - sequences are dense from 1 and the state's next sequence is the last one + 1;
    /// - `current` holds at most one chunk;
    /// - every archive is named by its first sequence and holds exactly one full chunk;
    /// - the state names the newest archive;
    /// - no subscriber ID is stored twice.
    pub fn check(
        &self,
        acknowledged: &BTreeMap<u64, Subscriber>,
    ) -> Result<ArchiveSummary, String> {
        let chunk = SUBSCRIBER_CHUNK_SIZE as usize;
        let state = self.value(ARCHIVE_STATE_ATTRIBUTE)?;
        let next_sequence = state["nextSequence"]
            .as_u64()
            .ok_or_else(|| format!("state has no nextSequence: {state}"))?;
        let latest = state["latestArchivedChunkToken"]
            .as_str()
            .ok_or_else(|| format!("state has no latestArchivedChunkToken: {state}"))?;

        let prefix = format!("{SUBSCRIBER_CHUNKS_MAP}/");
        let mut subscribers = Vec::new();
        let mut archives = 0;
        let mut newest_archive = String::new();
        for (name, chunk_value) in self.values.range(prefix.clone()..) {
            let Some(key) = name.strip_prefix(&prefix) else {
                break;
            };
            // `current` is checked below; the idempotency window of keyed appends is no chunk.
            if key == "current" || key == IDEMPOTENCY_INSTANCE {
                continue;
            }
            let records = records(name, chunk_value)?;
            let first = subscribers.len() as u64 + 1;
            if Ok(key) != archive_chunk_token(first).as_deref() {
                return Err(format!("archive {key:?} where {first} was expected"));
            }
            if records.len() != chunk {
                return Err(format!("archive {key:?} holds {} records", records.len()));
            }
            subscribers.extend(records);
            archives += 1;
            newest_archive = key.to_owned();
        }
        if latest != newest_archive {
            return Err(format!(
                "state names archive {latest:?}, the newest is {newest_archive:?}"
            ));
        }
        let current = records(
            &format!("{prefix}current"),
            self.value(&format!("{prefix}current"))?,
        )?;
        if current.len() > chunk {
            return Err(format!("current holds {} records", current.len()));
        }
        let current_len = current.len();
        subscribers.extend(current);

        for (index, subscriber) in subscribers.iter().enumerate() {
            if subscriber.sequence != index as u64 + 1 {
                return Err(format!(
                    "sequence {} stored at place {}: not dense",
                    subscriber.sequence,
                    index + 1
                ));
            }
        }
        if next_sequence != subscribers.len() as u64 + 1 {
            return Err(format!(
                "next sequence {next_sequence} after {} records",
                subscribers.len()
            ));
        }
        let mut ids = BTreeSet::new();
        if let Some(twice) = subscribers
            .iter()
            .find(|s| !ids.insert(s.subscriber_id.as_str()))
        {
            return Err(format!("{:?} is stored twice", twice.subscriber_id));
        }
        for (sequence, acked) in acknowledged {
            let stored = subscribers.get(*sequence as usize - 1);
            if stored != Some(acked) {
                return Err(format!("acknowledged {acked:?} is stored as {stored:?}"));
            }
        }
        Ok(ArchiveSummary {
            subscribers,
            current_len,
            archives,
        })
    }

    fn value(&self, name: &str) -> Result<&Value, String> {
        self.values
            .get(name)
            .ok_or_else(|| format!("no stored {name:?}"))
    }
}

fn records(name: &str, chunk: &Value) -> Result<Vec<Subscriber>, String> {
    serde_json::from_value(chunk["subscribers"].clone())
        .map_err(|e| format!("{name:?} is not a subscriber chunk: {e}"))
}

/// Reads and checks the archive `flow_id` in the SQLite file at `path`, panicking with the
/// broken invariant.
pub fn assert_archive_sound(
    path: &Path,
    flow_id: &str,
    acknowledged: &BTreeMap<u64, Subscriber>,
) -> ArchiveSummary {
    StoredArchive::read_sqlite(path, flow_id)
        .and_then(|archive| archive.check(acknowledged))
        .unwrap_or_else(|broken| panic!("archive {flow_id:?} is broken: {broken}"))
}

/// Reads and checks the archive `flow_id` of the test store `t`, on whichever backend it is
/// (an SQLite file after `PRAGMA integrity_check`, or its PostgreSQL schema), panicking with
/// the broken invariant.
pub fn assert_store_archive_sound(
    t: &TestStore,
    flow_id: &str,
    acknowledged: &BTreeMap<u64, Subscriber>,
) -> ArchiveSummary {
    let stored = match &t.place {
        Place::Folder(_) => StoredArchive::read_sqlite(&t.path, flow_id),
        Place::Schema { base_url, schema } => {
            Ok(StoredArchive::read_postgres(base_url, schema, flow_id))
        }
    };
    stored
        .and_then(|archive| archive.check(acknowledged))
        .unwrap_or_else(|broken| panic!("archive {flow_id:?} is broken: {broken}"))
}
