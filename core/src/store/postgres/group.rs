//! The PostgreSQL side of group commit ([`crate::store::group_commit`]).
//!
//! A group is one transaction at `REPEATABLE READ` on one connection taken out of the pool
//! for as long as the group is open. Each member runs inside a savepoint of its own and takes
//! its locks there, as row locks on `attribute_locks` with `FOR UPDATE NOWAIT` (bumping
//! them, as a lone RPC does). Rows locked by an earlier member of the same group belong to
//! the same transaction, so they do not conflict; rows held by another process's
//! transaction fail the member with a retryable [`Error::LockConflict`], and so does a row
//! another process changed after the group's snapshot was taken (SQLSTATE `40001`): in both
//! cases only the member's savepoint is rolled back and the group goes on.
//!
//! Round trips: a member opening a flow the group does not hold yet costs one, for its
//! locks, flow and the values it will read, locked or not (the statement a lone RPC opens
//! with); the group's `BEGIN` goes with its first member's. A member whose flow and locks
//! an earlier member of the group already took opens on what the group holds of them
//! instead (`postgres/held.rs`): no round trip, as the transaction would only read back its
//! own state. And when the
//! member about to run would open on the server while members of other flows queue behind
//! it, the turn holder opens them all in one round trip first
//! ([`GroupBackend::open_ahead`]), so each then opens on what the group holds. Members'
//! savepoints and writes wait in the group (`postgres/unsent.rs`) and go with the next
//! statement the group sends (an opening, a read of a value the group does not hold, or
//! the `COMMIT`) in one simple-query round trip; a value written again by a later member of
//! the same batch goes once. So a group of appends costs two round trips, whether its
//! calls go to one flow or to many, and whether or not they read values they do not lock;
//! a member opening on the server reads the AttributeMaps it loads whole in the same round
//! trip, after its opening statement; one that reads what no opening read (a map loaded
//! whole by a member opened ahead or on what the group holds) costs one more, which carries
//! what waited before it.
//!
//! Savepoints are numbered (`m0`, `m1`, …): a member's batch runs `SAVEPOINT mN`, its
//! statements, and later `RELEASE SAVEPOINT mN`, so a batch that failed says by itself
//! where it failed: when a member's own statement failed after the writes before it ran,
//! `ROLLBACK TO SAVEPOINT mN` undoes that member alone; when the writes before it failed,
//! `mN` was never set, the rollback fails, and with it the whole group (nothing of it is
//! committed), so no member's writes are ever undone after it was counted in. A member
//! that failed before anything of it reached the server (one opened on what the group
//! holds) has its `SAVEPOINT` taken back unsent: no round trip. Openings ahead run in a
//! savepoint of their own between two members, so a member rolled back later keeps the
//! locks taken for the others; when one fails (a lock another transaction holds) they are
//! all undone and each member opens by itself, and when the writes sent with them failed
//! the transaction is lost and the next member fails the group with that error.
//!
//! Failures keep the promises of a lone RPC: a connection found broken by the group's first
//! batch (the one holding its `BEGIN`), before anything ran, is dropped with the idle ones
//! and the batch goes again on a new connection; a connection lost in the middle of a group fails every member with a
//! retryable [`Error::LockConflict`] (nothing of it was committed); a connection lost while
//! the `COMMIT` was on its way fails every member with a storage error saying
//! [`super::COMMIT_OUTCOME_UNKNOWN`].
//!
//! Readers outside the group (lock-free RPCs, page reads) run on other pooled connections
//! at `REPEATABLE READ READ ONLY`: they see committed groups only.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use postgres::SimpleQueryRow;

use super::errors::Errors;
use super::held::HeldFlows;
use super::pool::{Connection, Pool, Statements};
use super::unsent::Unsent;
use super::{answers_by_statement, execute_on_flow, execute_range, open_error};
use super::{unlocked_reads, AheadMaps, PostgresStore, Prefetched, TxReader};
use crate::error::{Error, Result};
use crate::store::fault::FaultPoint;
use crate::store::group_commit::{GroupBackend, GroupLimits, Opening, Upcoming};
use crate::store::{FlowRecord, LockTable, ReplaceRun, RpcBody, StartOutcome, Write};

/// The open transaction of one group, on a connection out of the pool until the group ends.
pub struct PostgresGroup {
    /// The pool `conn` came from, and goes back to: stores opened in one process with the
    /// same URL share their lanes, so a group opened through one store may end through
    /// another.
    pool: Arc<Pool>,
    conn: Connection,
    /// The number of the savepoint the running (or next) member runs in: `m{savepoint}`.
    savepoint: u64,
    /// Why the transaction was lost outside any member (opening members ahead): every
    /// member from then on fails with it, and so does the group.
    lost: Option<Error>,
    /// What waits to go with the next batch: the group's `BEGIN`, the writes of the
    /// members since and the releases of their savepoints.
    unsent: Unsent,
    /// The flows whose locks and values the transaction holds, so that a member needing
    /// no more opens without a round trip.
    held: HeldFlows,
    /// Nothing was sent yet: the next batch carries the `BEGIN`.
    unbegun: bool,
}

impl std::fmt::Debug for PostgresGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresGroup")
            .field("savepoint", &self.savepoint)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// The error mapping of a connection whose `broken` flag this is.
    fn errors<'c>(&'c self, broken: &'c Cell<bool>) -> Errors<'c> {
        Errors {
            location: &self.location,
            broken,
        }
    }

    /// A group connection's client, statements and error mapping.
    fn parts<'c>(
        &'c self,
        conn: &'c mut Connection,
    ) -> (&'c mut postgres::Client, &'c Statements, Errors<'c>) {
        let Connection {
            client,
            statements,
            broken,
            ..
        } = conn;
        (client, statements, self.errors(broken))
    }

    /// Runs `sql` (no rows) on the group's connection, after the statements still waiting;
    /// a failure with writes waiting loses the group.
    fn group_batch(&self, group: &mut PostgresGroup, sql: &str, doing: &str) -> Result<()> {
        let batch = group.unsent.take_batch(Some(sql)).unwrap_or_default();
        self.send(group, |conn| {
            conn.client
                .batch_execute(&batch)
                .map_err(self.errors(&conn.broken).doing(doing))
        })
    }

    /// Sends one batch on the group's connection with `send`. The group's first batch
    /// carries its `BEGIN`: when it finds that the pooled connection broke while it sat idle
    /// (a server restart), nothing ran, and it is sent once more on a new connection.
    fn send<T>(
        &self,
        group: &mut PostgresGroup,
        mut send: impl FnMut(&mut Connection) -> Result<T>,
    ) -> Result<T> {
        let first = std::mem::take(&mut group.unbegun);
        let sent = send(&mut group.conn);
        if sent.is_err() && first && group.conn.broken.get() && group.conn.reused {
            let fresh = group.pool.take()?;
            end_group(&group.pool, std::mem::replace(&mut group.conn, fresh));
            return send(&mut group.conn);
        }
        sent
    }

    /// Opens a member (see `open_member`) in one round trip with the statements waiting,
    /// reading the AttributeMaps `maps` whole after it (`Ok(None)` inside when some lock
    /// rows do not exist yet); `None` when the flow ID holds a NUL character, which a simple
    /// query cannot carry. The maps read are the member's own: members before it in the
    /// group sent their writes first, and none after it has run yet.
    fn open_in_batch(
        &self,
        group: &mut PostgresGroup,
        flow_id: &str,
        (locks, reads): Opening<'_>,
        maps: &[String],
    ) -> Option<Result<Option<Opened>>> {
        let mut open = open_statement(flow_id, (locks, reads))?;
        for map in maps {
            open.push_str("; ");
            open.push_str(&execute_range(flow_id, map)?);
        }
        let batch = group.unsent.take_batch(Some(&open)).unwrap_or_default();
        // A failure here is this member's when the writes before it ran; else the rollback
        // to its savepoint, which they set, fails and takes the group with it.
        let messages = self.send(group, |conn| {
            conn.client
                .simple_query(&batch)
                .map_err(|e| open_error(self.errors(&conn.broken), flow_id, locks, e))
        });
        Some(messages.and_then(|messages| {
            // The opening's rows, then each map's, are the last statements' answers.
            let answers = answers_by_statement(&messages);
            let at = (answers.len().checked_sub(maps.len() + 2))
                .ok_or_else(|| self.unexpected_answer(flow_id))?;
            let Some((flow, prefetched)) =
                self.opened_rows(flow_id, (locks, reads), &answers[at])?
            else {
                return Ok(None);
            };
            let mut ahead = AheadMaps::new();
            for (map, rows) in maps.iter().zip(&answers[at + 1..]) {
                ahead.insert(map.clone(), self.named_values(flow_id, rows)?);
            }
            Ok(Some((flow, prefetched, ahead)))
        }))
    }

    /// Opens the flows of `upcoming` members the group does not hold yet, two or more of
    /// them, in one round trip after the statements waiting (see
    /// [`GroupBackend::open_ahead`]), and records what it took in `held`. The openings run
    /// in a savepoint of their own outside any member's, so a member rolled back later
    /// keeps them. A flow not found or lacking lock rows is left for its member to open
    /// (and to fail, or to create them); when an opening fails (a lock another transaction
    /// holds), all are undone and each member opens by itself; when the writes sent before
    /// them failed, the transaction is lost (`lost`).
    fn open_members_ahead(&self, group: &mut PostgresGroup, upcoming: &[Upcoming]) {
        // Per flow, every lock its members take and every name they read, once.
        let mut wanted: Vec<(&str, Vec<String>, Vec<String>)> = Vec::new();
        for (flow_id, locks, reads) in upcoming {
            if group.held.holds(flow_id, locks) {
                continue;
            }
            let at = match wanted.iter().position(|(flow, ..)| flow == flow_id) {
                Some(at) => at,
                None => {
                    wanted.push((flow_id, Vec::new(), Vec::new()));
                    wanted.len() - 1
                }
            };
            let (_, all_locks, all_reads) = &mut wanted[at];
            add_new(all_locks, locks);
            add_new(all_reads, reads);
        }
        for (_, locks, reads) in &mut wanted {
            *reads = unlocked_reads(locks, reads);
        }
        let opens: Option<Vec<String>> = wanted
            .iter()
            .map(|(flow_id, locks, reads)| open_statement(flow_id, (locks, reads)))
            .collect();
        let Some(opens) = opens.filter(|opens| opens.len() >= 2) else {
            return;
        };
        let sql = format!(
            "SAVEPOINT ahead;{};RELEASE SAVEPOINT ahead",
            opens.join(";")
        );
        let batch = group.unsent.take_batch(Some(&sql)).unwrap_or_default();
        let sent = self.send(group, |conn| {
            conn.client
                .simple_query(&batch)
                .map_err(self.errors(&conn.broken).doing("opening calls"))
        });
        let messages = match sent {
            Ok(messages) => messages,
            Err(error) => {
                let undo = "ROLLBACK TO SAVEPOINT ahead; RELEASE SAVEPOINT ahead";
                if self.group_batch(group, undo, "opening calls").is_err() {
                    group.lost = Some(error);
                }
                return;
            }
        };
        // One list of rows per statement; the openings are the last but one.
        let mut statements = answers_by_statement(&messages);
        statements.pop();
        let Some(first) = statements.len().checked_sub(wanted.len() + 1) else {
            return;
        };
        for ((flow_id, locks, reads), rows) in wanted.iter().zip(&statements[first..]) {
            if let Ok(Some((flow, prefetched))) = self.opened_rows(flow_id, (locks, reads), rows) {
                group.held.record(flow, locks, prefetched, Vec::new());
            }
        }
    }

    /// Opens a member on the server: takes and bumps its lock rows (creating the missing
    /// ones), reads the flow and the values of the names it locks or will read, after the
    /// statements waiting, and, when it can in the same round trip, the AttributeMaps
    /// `maps` whole.
    fn open_on_server(
        &self,
        group: &mut PostgresGroup,
        flow_id: &str,
        (locks, reads): Opening<'_>,
        maps: &[String],
    ) -> Result<Opened> {
        let unread = unlocked_reads(locks, reads);
        let opening = (locks, unread.as_slice());
        let opened = match self.open_in_batch(group, flow_id, opening, maps) {
            Some(opened) => opened?,
            None => {
                // A NUL in the flow ID: what waits goes first, on its own.
                self.send_unsent(group)?;
                let (client, statements, errors) = self.parts(&mut group.conn);
                self.open_member(client, statements, errors, flow_id, opening)?
                    .map(|(flow, prefetched)| (flow, prefetched, AheadMaps::new()))
            }
        };
        if let Some(opened) = opened {
            return Ok(opened);
        }
        // Created inside the group's transaction, so its snapshot sees them.
        let (client, statements, errors) = self.parts(&mut group.conn);
        self.create_lock_rows(client, statements, errors, flow_id, locks)?;
        self.open_member(client, statements, errors, flow_id, opening)?
            .map(|(flow, prefetched)| (flow, prefetched, AheadMaps::new()))
            .ok_or_else(|| {
                Error::storage(format!(
                    "store {}: lock rows of flow {flow_id:?} vanished right after they were created",
                    self.location
                ))
            })
    }

    /// Sends the statements waiting, if any, on their own.
    fn send_unsent(&self, group: &mut PostgresGroup) -> Result<()> {
        match group.unsent.take_batch(None) {
            Some(batch) => self.send(group, |conn| {
                conn.client
                    .batch_execute(&batch)
                    .map_err(self.errors(&conn.broken).doing("writing values"))
            }),
            None => Ok(()),
        }
    }

    /// The flow and prefetched values of `attrflow_open`'s rows (text, names in hex), or
    /// `None` when a lock row is missing.
    fn opened_rows(
        &self,
        flow_id: &str,
        (locks, reads): Opening<'_>,
        rows: &[&SimpleQueryRow],
    ) -> Result<Option<(FlowRecord, Prefetched)>> {
        let Some(first) = rows.first() else {
            return Err(Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            });
        };
        let locked: usize = first
            .get(2)
            .and_then(|count| count.parse().ok())
            .ok_or_else(|| self.unexpected_answer(flow_id))?;
        if locked < locks.len() {
            return Ok(None);
        }
        self.flow_and_values(flow_id, &[locks, reads].concat(), rows)
            .map(Some)
    }
}

/// A member opened: its flow, the values read ahead and the AttributeMaps read ahead whole.
type Opened = (FlowRecord, Prefetched, AheadMaps);

/// Adds to `all` the names of `more` it lacks.
fn add_new(all: &mut Vec<String>, more: &[String]) {
    for name in more {
        if !all.contains(name) {
            all.push(name.clone());
        }
    }
}

/// The statement opening a member of flow `flow_id` taking `locks` and reading `reads`
/// besides them (`Statements::open_rpc` as one row per value found, names and flow types
/// in hex: `attrflow_open`, or `attrflow_open_reading` when there are such reads);
/// `None` when the flow ID holds a NUL character, which a simple query cannot carry.
fn open_statement(flow_id: &str, (locks, reads): Opening<'_>) -> Option<String> {
    if reads.is_empty() {
        execute_on_flow("attrflow_open", flow_id, &[locks])
    } else {
        execute_on_flow("attrflow_open_reading", flow_id, &[locks, reads])
    }
}

/// Gives a group's connection back to its pool; a broken one is dropped with the idle ones
/// (opened to the same server).
fn end_group(pool: &Pool, conn: Connection) {
    if conn.broken.get() {
        pool.discard_idle();
    }
    pool.put_back(conn);
}

impl GroupBackend for PostgresStore {
    type Group = PostgresGroup;

    fn location(&self) -> String {
        self.location.clone()
    }

    fn busy_timeout(&self) -> Duration {
        self.options.pool_timeout
    }

    fn limits(&self) -> GroupLimits {
        self.options.group
    }

    fn lock_table(&self) -> &Arc<LockTable> {
        &self.locks
    }

    /// A COMMIT here is a round trip to the server, which on a small host shares its CPUs
    /// with this process: members watching for their answers slowed 16 appenders on 16
    /// archives on a local server (bench/notes/7-postgresql.md), so they sleep until
    /// answered.
    fn forewarns_members(&self) -> bool {
        false
    }

    fn begin_group(&self) -> Result<PostgresGroup> {
        // The BEGIN goes with the first member's opening statement.
        Ok(PostgresGroup {
            conn: self.pool.take()?,
            pool: Arc::clone(&self.pool),
            savepoint: 0,
            lost: None,
            unsent: Unsent::with("BEGIN ISOLATION LEVEL REPEATABLE READ"),
            held: HeldFlows::default(),
            unbegun: true,
        })
    }

    /// Waits to go with the member's first statement: a member costs no round trip of its
    /// own for its savepoint.
    fn savepoint(&self, group: &mut PostgresGroup) -> Result<()> {
        if let Some(lost) = &group.lost {
            return Err(lost.clone());
        }
        group
            .unsent
            .push_sql(&format!("SAVEPOINT m{}", group.savepoint));
        Ok(())
    }

    /// Waits to go with the next statement the group sends.
    fn release_savepoint(&self, group: &mut PostgresGroup) -> Result<()> {
        group
            .unsent
            .push_sql(&format!("RELEASE SAVEPOINT m{}", group.savepoint));
        group.savepoint += 1;
        Ok(())
    }

    fn rollback_to_savepoint(&self, group: &mut PostgresGroup) -> Result<()> {
        if let Some(lost) = &group.lost {
            return Err(lost.clone());
        }
        let at = group.savepoint;
        group.savepoint += 1;
        if group.unsent.unpush_sql(&format!("SAVEPOINT m{at}")) {
            // Nothing of the member reached the server: there is nothing to undo.
            return Ok(());
        }
        // The savepoint does not exist when the writes that came before it in the same
        // batch failed: then this fails, and the group with it.
        let rollback = format!("ROLLBACK TO SAVEPOINT m{at}; RELEASE SAVEPOINT m{at}");
        self.group_batch(group, &rollback, "rolling back a call")
    }

    fn wants_ahead(&self, group: &PostgresGroup, flow_id: &str, locks: &[String]) -> bool {
        group.lost.is_none() && !group.held.holds(flow_id, locks)
    }

    fn open_ahead(&self, group: &mut PostgresGroup, upcoming: &[Upcoming]) {
        self.open_members_ahead(group, upcoming);
    }

    fn run_member(
        &self,
        group: &mut PostgresGroup,
        flow_id: &str,
        opening: Opening<'_>,
        maps: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<usize> {
        let (locks, _) = opening;
        let (flow, prefetched, ahead_maps) = match group.held.open(flow_id, locks) {
            // The transaction holds every lock already: the member opens on what it holds,
            // and its savepoint and the writes before it wait for the next round trip.
            Some((flow, prefetched)) => (flow, prefetched, AheadMaps::new()),
            None => self.open_on_server(group, flow_id, opening, maps)?,
        };
        let PostgresGroup { conn, unsent, .. } = &mut *group;
        let (client, statements, errors) = self.parts(conn);
        let mut reader = TxReader {
            store: self,
            tx: &mut *client,
            statements,
            errors,
            flow,
            prefetched,
            maps: ahead_maps,
            unsent: Some(unsent),
        };
        let writes = body(&mut reader)?;
        let TxReader {
            flow, prefetched, ..
        } = reader;
        // Sent with the next member's opening statement, a read, or the COMMIT.
        if !group.unsent.push_writes(flow_id, &writes) {
            self.send_unsent(group)?;
            let (client, statements, errors) = self.parts(&mut group.conn);
            self.apply_writes(client, statements, errors, flow_id, &writes)?;
        }
        let written = written_bytes(&writes);
        group.held.record(flow, locks, prefetched, writes);
        Ok(written)
    }

    fn start_flow_member(
        &self,
        group: &mut PostgresGroup,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        // A new run replaces the flow's values and run state.
        group.held.forget(&flow.flow_id);
        self.send_unsent(group)?;
        let (client, statements, errors) = self.parts(&mut group.conn);
        self.insert_flow(client, statements, errors, flow, initial, replace)
    }

    fn read_committed(
        &self,
        flow_id: &str,
        ahead: (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>> {
        self.read_snapshot(flow_id, ahead, body)
    }

    fn commit_group(&self, group: PostgresGroup) -> Result<()> {
        let PostgresGroup {
            mut conn,
            mut unsent,
            pool,
            ..
        } = group;
        let errors = self.errors(&conn.broken);
        let committed = match self.faults.check(FaultPoint::AtCommit) {
            // An injected failure of the COMMIT itself: the server rolls the group back.
            Err(injected) => conn
                .client
                .batch_execute("ROLLBACK")
                .map_err(errors.doing("rolling back"))
                .and(Err(injected)),
            // The last members' writes and the COMMIT, in one round trip.
            Ok(()) => conn
                .client
                .batch_execute(
                    &unsent
                        .take_batch(Some(&self.commit_sql))
                        .unwrap_or_default(),
                )
                .map_err(errors.commit()),
        };
        if committed.is_err() && !conn.broken.get() && !conn.client.is_closed() {
            // Writes that failed before the COMMIT leave the transaction open and aborted.
            let _ = conn
                .client
                .batch_execute("ROLLBACK")
                .map_err(errors.doing("rolling back"));
        }
        end_group(&pool, conn);
        // Committed, and no member answered yet: a fault here is a connection lost right
        // after the COMMIT (or, armed to kill, a crash before any reply).
        committed.and_then(|()| self.faults.check(FaultPoint::AfterCommit))
    }

    fn rollback_group(&self, group: PostgresGroup) {
        let PostgresGroup {
            mut conn,
            unbegun,
            pool,
            ..
        } = group;
        if !unbegun && !conn.broken.get() && !conn.client.is_closed() {
            // A failure here marks the connection broken, and the pool drops it.
            let _ = conn
                .client
                .batch_execute("ROLLBACK")
                .map_err(self.errors(&conn.broken).doing("rolling back"));
        }
        end_group(&pool, conn);
    }
}

/// The bytes a member writes (names plus JSON), counted against the group's bound.
fn written_bytes(writes: &[Write]) -> usize {
    writes
        .iter()
        .map(|(name, value)| name.len() + value.as_ref().map_or(0, String::len))
        .sum()
}
