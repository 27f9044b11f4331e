//! The SQLite side of group commit ([`crate::store::group_commit`]).
//!
//! A group is one connection inside `BEGIN IMMEDIATE`: SQLite's write lock on the file is
//! taken when the group opens (waiting at most the busy timeout for another process) and
//! held until its COMMIT, so groups of different processes on one file are serialised as
//! single RPCs were. Each member runs inside `SAVEPOINT member`; a failed member is undone
//! with `ROLLBACK TO member`. When SQLite itself aborted the transaction (a full disk, an
//! I/O error), rolling back to the savepoint fails, and the pipeline fails the whole group.
//! Statements are prepared once per connection (`prepare_cached`) and reused by every
//! member, and a flow looked up once is remembered for the file once a COMMIT (or a
//! committed snapshot) has shown it to exist: a flow's record (type and run ID) never changes
//! and the flow never goes away (a stop is one of its values, read with the rest), so later
//! RPCs on it skip the lookup. A flow seen only inside a group is remembered when that
//! group commits, never before (the group may still fail).

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{params, Connection, TransactionBehavior};

use super::{busy_wait, SqliteStore, TxReader};
use crate::error::{Error, Result};
use crate::store::fault::FaultPoint;
use crate::store::group_commit::{GroupBackend, GroupLimits};
use crate::store::{FlowRecord, LockTable, RpcBody, StartOutcome, Write};

/// The open write transaction of one group: a connection inside `BEGIN IMMEDIATE`.
#[derive(Debug)]
pub struct SqliteGroup {
    conn: Connection,
    /// Flows this group looked up or created, remembered for the file when it commits.
    seen: Vec<FlowRecord>,
}

/// Flows remembered per file at most; past that the memory starts over.
const REMEMBERED_FLOWS: usize = 10_000;

impl SqliteStore {
    /// Runs one cached statement that returns no rows.
    fn run_statement(&self, conn: &Connection, sql: &str, doing: &str) -> Result<()> {
        conn.prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute([]))
            .map(drop)
            .map_err(|e| self.sql_error(doing, e))
    }

    /// A connection of the pool (or a new one), no longer tied to the pool.
    pub(super) fn take_connection(&self) -> Result<Connection> {
        let conn = match self.idle.lock().pop() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        self.faults
            .prepare(&conn)
            .map_err(|e| self.sql_error("preparing a connection", e))?;
        Ok(conn)
    }

    /// The flow, if this file remembers it as committed.
    fn cached_flow(&self, flow_id: &str) -> Option<FlowRecord> {
        self.shared.flows.lock().get(flow_id).cloned()
    }

    /// Remembers flows known to be committed.
    fn remember_flows(&self, flows: impl IntoIterator<Item = FlowRecord>) {
        let mut known = self.shared.flows.lock();
        for flow in flows {
            if known.len() >= REMEMBERED_FLOWS {
                known.clear();
            }
            known.insert(flow.flow_id.clone(), flow);
        }
    }

    /// The flow of an RPC running in `group`: remembered, or looked up in the group.
    fn group_flow(&self, group: &mut SqliteGroup, flow_id: &str) -> Result<FlowRecord> {
        if let Some(flow) = self.cached_flow(flow_id) {
            return Ok(flow);
        }
        let flow = self.require_flow(&group.conn, flow_id)?;
        group.seen.push(flow.clone());
        Ok(flow)
    }

    /// Returns a group's connection to the pool, unless a transaction is still open on it.
    fn return_connection(&self, conn: Connection) {
        if conn.is_autocommit() {
            self.checkin(conn);
        }
    }
}

impl GroupBackend for SqliteStore {
    type Group = SqliteGroup;

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn busy_timeout(&self) -> Duration {
        self.options.busy_timeout
    }

    fn limits(&self) -> GroupLimits {
        self.options.group
    }

    fn lock_table(&self) -> &Arc<LockTable> {
        &self.shared.locks
    }

    fn begin_group(&self) -> Result<SqliteGroup> {
        let conn = self.take_connection()?;
        busy_wait::behind_restarts(self.shared.checkpointer.restarts(), || {
            self.run_statement(&conn, "BEGIN IMMEDIATE", "beginning a transaction")
        })?;
        Ok(SqliteGroup {
            conn,
            seen: Vec::new(),
        })
    }

    fn savepoint(&self, group: &mut SqliteGroup) -> Result<()> {
        self.run_statement(&group.conn, "SAVEPOINT member", "setting a savepoint")
    }

    fn release_savepoint(&self, group: &mut SqliteGroup) -> Result<()> {
        self.run_statement(&group.conn, "RELEASE member", "releasing a savepoint")
    }

    fn rollback_to_savepoint(&self, group: &mut SqliteGroup) -> Result<()> {
        if group.conn.is_autocommit() {
            return Err(Error::storage(format!(
                "store {}: SQLite rolled the transaction back",
                self.path.display()
            )));
        }
        self.run_statement(&group.conn, "ROLLBACK TO member", "rolling back a call")?;
        self.run_statement(&group.conn, "RELEASE member", "rolling back a call")
    }

    fn run_member(
        &self,
        group: &mut SqliteGroup,
        flow_id: &str,
        _locks: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<usize> {
        let flow = self.group_flow(group, flow_id)?;
        let writes = body(&mut TxReader {
            store: self,
            tx: &group.conn,
            flow,
        })?;
        self.apply_writes(&group.conn, flow_id, &writes)
    }

    fn start_flow_member(
        &self,
        group: &mut SqliteGroup,
        flow: &FlowRecord,
        initial: &[(String, String)],
    ) -> Result<StartOutcome> {
        let known = match self.cached_flow(&flow.flow_id) {
            Some(known) => Some(known),
            None => self.load_flow(&group.conn, &flow.flow_id)?,
        };
        if let Some(existing) = known {
            return Ok(StartOutcome::AlreadyExists(existing));
        }
        let started_at_ms = crate::lifecycle::now_ms();
        group
            .conn
            .prepare_cached(
                "INSERT INTO flows (flow_id, flow_type, run_id, started_at_ms) \
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    flow.flow_id,
                    flow.flow_type,
                    flow.run_id,
                    started_at_ms
                ])
            })
            .map_err(|e| self.sql_error("creating a flow", e))?;
        let writes: Vec<Write> = initial
            .iter()
            .map(|(name, json)| (name.clone(), Some(json.clone())))
            .collect();
        self.apply_writes(&group.conn, &flow.flow_id, &writes)?;
        group.seen.push(flow.clone());
        Ok(StartOutcome::Started)
    }

    fn read_committed(&self, flow_id: &str, body: &mut RpcBody<'_>) -> Result<Vec<Write>> {
        let mut conn = self.checkout()?;
        let tx = self.begin(&mut conn, TransactionBehavior::Deferred)?;
        let flow = match self.cached_flow(flow_id) {
            Some(flow) => flow,
            None => {
                let flow = self.require_flow(&tx, flow_id)?;
                self.remember_flows([flow.clone()]);
                flow
            }
        };
        body(&mut TxReader {
            store: self,
            tx: &tx,
            flow,
        })
    }

    fn commit_group(&self, group: SqliteGroup) -> Result<()> {
        let SqliteGroup { conn, seen } = group;
        let committed = self
            .faults
            .check(FaultPoint::BeforeCommit)
            .and_then(|()| self.run_statement(&conn, "COMMIT", "committing"));
        if committed.is_err() && !conn.is_autocommit() {
            // A COMMIT that failed without ending the transaction (or was never sent) ends
            // here; if even that fails the connection is dropped, which rolls back.
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.return_connection(conn);
        committed?;
        self.remember_flows(seen);
        self.faults.check(FaultPoint::AfterCommit)
    }

    fn rollback_group(&self, group: SqliteGroup) {
        let SqliteGroup { conn, .. } = group;
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.return_connection(conn);
    }
}
