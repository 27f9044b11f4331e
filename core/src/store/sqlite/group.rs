//! The SQLite side of group commit ([`crate::store::group_commit`]).
//!
//! A group is one connection inside `BEGIN IMMEDIATE`: SQLite's write lock on the file is
//! taken when the group opens (waiting at most the busy timeout for another process) and
//! held until its COMMIT, so groups of different processes on one file are serialised as
//! single RPCs were. Each member runs inside `SAVEPOINT member`; a failed member is undone
//! with `ROLLBACK TO member`. When SQLite itself aborted the transaction (a full disk, an
//! I/O error), rolling back to the savepoint fails, and the pipeline fails the whole group.
//! Statements are prepared once per connection (`prepare_cached`) and reused by every
//! member, and a flow a group looked up is remembered for the file once that group's COMMIT
//! has returned (never before: the group may still fail), so the RPCs of later groups on it
//! skip the lookup. A flow never goes away and a stop is one of its values (read with the
//! rest), but a start may replace a flow's run ([`crate::store::Store::start_flow`]), and
//! with it the record's type and run ID. Such a start also counts one more in the file's
//! `user_version` (a number SQLite keeps in the file's header for the application, 0 in a
//! new file), in its own transaction. Every group reads that number once it holds the
//! write lock, and every lock-free read (outside a group) in its own snapshot; flows are
//! remembered under the number they were read at and used only by a transaction that read
//! the same number, and a higher number makes those remembered before forgotten, whichever
//! process or connection replaced a run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::{busy_wait, SqliteStore, TxReader};
use crate::error::{Error, Result};
use crate::lifecycle::RUN_STATE_NAME;
use crate::store::fault::FaultPoint;
use crate::store::group_commit::{GroupBackend, GroupLimits, Opening};
use crate::store::{
    FlowRecord, LockTable, ReplaceRun, RpcBody, SnapshotReader, StartOutcome, Write,
};

/// The open write transaction of one group: a connection inside `BEGIN IMMEDIATE`.
#[derive(Debug)]
pub struct SqliteGroup {
    conn: Connection,
    /// Flows this group looked up or created, remembered for the file when it commits.
    seen: Vec<FlowRecord>,
    /// The file's count of replaced runs (`user_version`) as this group sees it.
    generation: i64,
}

/// The flows of a file known to be committed, and the count of replaced runs
/// (`user_version`) they were read at (see the module docs).
#[derive(Debug, Default)]
pub(super) struct RememberedFlows {
    generation: i64,
    flows: HashMap<String, FlowRecord>,
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

    /// The flow, if this file remembers it as committed at `generation`.
    fn cached_flow(&self, generation: i64, flow_id: &str) -> Option<FlowRecord> {
        let known = self.shared.flows.lock();
        if known.generation != generation {
            return None;
        }
        known.flows.get(flow_id).cloned()
    }

    /// Remembers flows known to be committed at `generation`. A later generation than the
    /// one remembered makes those remembered before forgotten first; flows of an earlier
    /// one (a reader's older snapshot) are not remembered.
    fn remember_flows(&self, generation: i64, flows: impl IntoIterator<Item = FlowRecord>) {
        let mut known = self.shared.flows.lock();
        if generation > known.generation {
            known.flows.clear();
            known.generation = generation;
        } else if generation < known.generation {
            return;
        }
        for flow in flows {
            if known.flows.len() >= REMEMBERED_FLOWS {
                known.flows.clear();
            }
            known.flows.insert(flow.flow_id.clone(), flow);
        }
    }

    /// The file's count of replaced runs, read in the transaction open on `conn`.
    fn generation(&self, conn: &Connection) -> Result<i64> {
        conn.prepare_cached("PRAGMA user_version")
            .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
            .map_err(|e| self.sql_error("reading the count of replaced runs", e))
    }

    /// The flow of an RPC running in `group`: remembered, or looked up in the group.
    fn group_flow(&self, group: &mut SqliteGroup, flow_id: &str) -> Result<FlowRecord> {
        if let Some(flow) = self.cached_flow(group.generation, flow_id) {
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
        let generation = match self.generation(&conn) {
            Ok(generation) => generation,
            Err(error) => {
                let _ = conn.execute_batch("ROLLBACK");
                self.return_connection(conn);
                return Err(error);
            }
        };
        Ok(SqliteGroup {
            conn,
            seen: Vec::new(),
            generation,
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
        self.run_statement(&group.conn, "RELEASE member", "rolling back a call")?;
        // A replaced run that was rolled back with the member no longer counts.
        group.generation = self.generation(&group.conn)?;
        Ok(())
    }

    fn run_member(
        &self,
        group: &mut SqliteGroup,
        flow_id: &str,
        _: Opening<'_>,
        _maps: &[String],
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
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        let started_at_ms = crate::lifecycle::now_ms();
        let previous = match self.load_flow(&group.conn, &flow.flow_id)? {
            None => {
                self.record_run(
                    &group.conn,
                    "INSERT INTO flows (flow_id, flow_type, run_id, started_at_ms) \
                     VALUES (?1, ?2, ?3, ?4)",
                    flow,
                    started_at_ms,
                    "creating a flow",
                )?;
                None
            }
            Some(existing) => {
                let run_state = TxReader {
                    store: self,
                    tx: &group.conn,
                    flow: existing.clone(),
                }
                .read(&[RUN_STATE_NAME.to_owned()])?
                .pop()
                .map(|(_, json)| json);
                let Some(added) = replace(&existing, run_state.as_deref())? else {
                    return Ok(StartOutcome::AlreadyExists(existing));
                };
                self.replace_run(&group.conn, flow, started_at_ms)?;
                Some((existing, added))
            }
        };
        let added = previous
            .as_ref()
            .map_or(&[][..], |(_, added)| added.as_slice());
        let writes: Vec<Write> = initial
            .iter()
            .chain(added)
            .map(|(name, json)| (name.clone(), Some(json.clone())))
            .collect();
        self.apply_writes(&group.conn, &flow.flow_id, &writes)?;
        let Some((previous, _)) = previous else {
            group.seen.push(flow.clone());
            return Ok(StartOutcome::Started);
        };
        // Last, so that the count changes only with a replacement that holds. (Past
        // i32::MAX it starts again at 0; a process that remembered flows at a higher count
        // then never uses them again, which costs it a lookup per call, not a wrong one.)
        let generation = group.generation.wrapping_add(1) & i64::from(i32::MAX);
        self.run_statement(
            &group.conn,
            &format!("PRAGMA user_version = {generation}"),
            "counting a replaced run",
        )?;
        group.generation = generation;
        group.seen.push(flow.clone());
        Ok(StartOutcome::Replaced(previous))
    }

    /// Reads as the body asks: SQLite answers from its own pages, so reading ahead saves
    /// nothing.
    fn read_committed(
        &self,
        flow_id: &str,
        _ahead: (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>> {
        let mut conn = self.checkout()?;
        let tx = self.begin(&mut conn, TransactionBehavior::Deferred)?;
        let generation = self.generation(&tx)?;
        let flow = match self.cached_flow(generation, flow_id) {
            Some(flow) => flow,
            None => {
                let flow = self.require_flow(&tx, flow_id)?;
                self.remember_flows(generation, [flow.clone()]);
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
        let SqliteGroup {
            conn,
            seen,
            generation,
        } = group;
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
        self.remember_flows(generation, seen);
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
