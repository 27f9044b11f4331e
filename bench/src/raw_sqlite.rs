//! The baseline a user would write by hand on rusqlite: the same table, the same two rows
//! (log state and open chunk) read, changed and written back in one `BEGIN IMMEDIATE`
//! transaction, with the same journal mode and `synchronous` setting, and no runtime.

use std::path::Path;

use attrflow::chunked_log::{archive_token, LogState};
use attrflow::flows::chunked_subscriber::SUBSCRIBER_CHUNK_SIZE;
use attrflow::store::Synchronous;
use rusqlite::{params, Connection, TransactionBehavior};
use serde_json::Value;

use crate::populate::{chunk, remove_store, subscriber};
use crate::BenchResult;

const STATE: &str = "state";
const CURRENT: &str = "chunks/current";
const UPSERT: &str = "INSERT INTO log_values (name, value) VALUES (?1, ?2)
                      ON CONFLICT (name) DO UPDATE SET value = excluded.value";
const SELECT: &str = "SELECT value FROM log_values WHERE name = ?1";

/// A chunked log kept directly in one SQLite table.
#[derive(Debug)]
pub struct RawChunkedLog {
    conn: Connection,
}

impl RawChunkedLog {
    /// A fresh log at `path` whose open chunk holds the newest of `records` records.
    pub fn create(path: &Path, synchronous: Synchronous, records: u64) -> BenchResult<Self> {
        remove_store(path)?;
        let conn = Connection::open(path)?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("SQLite refused WAL mode: {mode}").into());
        }
        let sync = match synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        };
        conn.execute_batch(&format!(
            "PRAGMA synchronous={sync};
             CREATE TABLE log_values (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);"
        ))?;
        let size = SUBSCRIBER_CHUNK_SIZE;
        let archived = records.saturating_sub(1) / size;
        let state = LogState {
            next_sequence: records + 1,
            latest_archived_chunk_token: String::new(),
            ..LogState::default()
        };
        conn.execute(UPSERT, params![STATE, serde_json::to_string(&state)?])?;
        let open = chunk(archived * size + 1, records).to_string();
        conn.execute(UPSERT, params![CURRENT, open])?;
        Ok(RawChunkedLog { conn })
    }

    /// Appends one record: read state and open chunk, archive a full chunk, push, write.
    pub fn append(&mut self) -> BenchResult<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (state_text, chunk_text): (String, String) = {
            let mut select = tx.prepare_cached(SELECT)?;
            let state = select.query_row([STATE], |row| row.get(0))?;
            let chunk = select.query_row([CURRENT], |row| row.get(0))?;
            (state, chunk)
        };
        let mut state: LogState = serde_json::from_str(&state_text)?;
        let mut open: Value = serde_json::from_str(&chunk_text)?;
        let records = open
            .get_mut("subscribers")
            .and_then(Value::as_array_mut)
            .ok_or("the open chunk has no subscribers list")?;
        let sequence = state.next_sequence;
        {
            let mut upsert = tx.prepare_cached(UPSERT)?;
            if records.len() as u64 >= SUBSCRIBER_CHUNK_SIZE {
                let token = archive_token(sequence - records.len() as u64)?;
                upsert.execute(params![format!("chunks/{token}"), chunk_text])?;
                state.latest_archived_chunk_token = token;
                records.clear();
            }
            records.push(serde_json::to_value(subscriber(sequence))?);
            state.next_sequence = sequence + 1;
            upsert.execute(params![CURRENT, serde_json::to_string(&open)?])?;
            upsert.execute(params![STATE, serde_json::to_string(&state)?])?;
        }
        tx.commit()?;
        Ok(())
    }
}
