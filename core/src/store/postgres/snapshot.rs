//! Lock-free reads of committed state on PostgreSQL, in one round trip.
//!
//! A lock-free RPC ([`crate::store::Isolation::Shared`]) reads one snapshot: its flow, the
//! values the runtime planned for it (the flow's Attributes, its run state, the AttributeMap
//! instances it loads) and the AttributeMaps it loads whole. One simple-query batch starts a
//! read-only `REPEATABLE READ` transaction, runs `attrflow_peek` (the flow's row with those
//! values), one `attrflow_range` per map and `COMMIT`: the whole read is one round trip, and
//! the connection goes back to the pool before the body runs, its answers taken from what
//! the batch read.
//!
//! The plan is a hint: a body that reads anything else (a name or a map the plan did not
//! list) cannot be answered from that snapshot, which has ended. Its run is then discarded
//! (the runtime's bodies read before their handler runs, so no handler has run) and the
//! body runs again on a transaction held open for it: the same batch without the
//! `COMMIT`, its other reads in that transaction, a second round trip to end it. A flow ID
//! holding a NUL character, which a simple query cannot carry, is read statement by
//! statement.

use std::cell::Cell;

use postgres::{SimpleQueryMessage, SimpleQueryRow};

use super::errors::Errors;
use super::prefetch_slots;
use super::unlocked_reads;
use super::OpenTransaction;
use super::{answers_by_statement, execute_on_flow, execute_range, from_hex, look_up};
use super::{AheadMaps, IsolationLevel, PostgresStore, Prefetched, TxReader};
use crate::error::{Error, Result};
use crate::store::{FlowRecord, RpcBody, SnapshotReader, Write};

impl PostgresStore {
    /// Runs `body` on a snapshot of committed state and returns the writes it staged,
    /// uncommitted. `ahead` holds the names and the AttributeMaps the body will read, as
    /// planned, which are read with the flow. Fails with [`Error::FlowNotFound`] for an
    /// unknown flow.
    pub(super) fn read_snapshot(
        &self,
        flow_id: &str,
        (reads, maps): (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>> {
        let reads = &unlocked_reads(&[], reads);
        let ranges: Option<Vec<String>> =
            maps.iter().map(|map| execute_range(flow_id, map)).collect();
        let (Some(peek), Some(ranges)) =
            (execute_on_flow("attrflow_peek", flow_id, &[reads]), ranges)
        else {
            // A NUL in the flow ID, which a simple query cannot carry: statement by statement.
            return self.read_only(IsolationLevel::RepeatableRead, |tx, statements, errors| {
                let (flow, run_state) = self.require_flow(tx, statements, errors, flow_id)?;
                let prefetched = prefetch_slots(&[], run_state);
                body(&mut TxReader::alone(
                    self,
                    tx,
                    (statements, errors),
                    flow,
                    prefetched,
                ))
            });
        };
        let mut batch =
            format!("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; {peek}");
        for range in &ranges {
            batch.push_str("; ");
            batch.push_str(range);
        }
        if let Some(writes) = self.read_in_one_round_trip(flow_id, (reads, maps), &batch, body)? {
            return Ok(writes);
        }
        self.with_connection(|client, statements, errors, untouched| {
            // Rolled back if anything below fails, the start included.
            let (mut open, messages) = start_reading(client, errors, untouched, &batch)?;
            let peeked = self.peeked(flow_id, (reads, maps), &messages)?;
            let tx = &mut *open.client;
            let mut reader =
                TxReader::alone(self, tx, (statements, errors), peeked.flow, peeked.values)
                    .with_maps(peeked.maps);
            let writes = body(&mut reader)?;
            open.client
                .batch_execute("COMMIT")
                .map_err(errors.doing("ending a read"))?;
            open.done = true;
            Ok(writes)
        })
    }

    /// The read of `batch` (the transaction's start and the reads ahead) ended by a
    /// `COMMIT` in the same round trip, and `body` run on what it read; `None` when the
    /// body read something else, which that snapshot can no longer answer.
    fn read_in_one_round_trip(
        &self,
        flow_id: &str,
        ahead: (&[String], &[String]),
        batch: &str,
        body: &mut RpcBody<'_>,
    ) -> Result<Option<Vec<Write>>> {
        let batch = format!("{batch}; COMMIT");
        let messages = self.with_connection(|client, _, errors, untouched| {
            let (mut open, messages) = start_reading(client, errors, untouched, &batch)?;
            open.done = true;
            Ok(messages)
        })?;
        let mut reader = self.peeked(flow_id, ahead, &messages)?;
        let writes = body(&mut reader);
        if reader.missed {
            return Ok(None);
        }
        writes.map(Some)
    }

    /// What a batch of [`Self::read_snapshot`] read: the flow with the values of `reads`,
    /// then the instances of each of `maps`.
    fn peeked(
        &self,
        flow_id: &str,
        (reads, maps): (&[String], &[String]),
        messages: &[SimpleQueryMessage],
    ) -> Result<Peeked> {
        // The answers of the statements after the transaction's start, in order.
        let answers = answers_by_statement(messages);
        let malformed = || self.unexpected_answer(flow_id);
        let peek = answers.get(1).ok_or_else(malformed)?;
        let (flow, values) = self.flow_and_values(flow_id, reads, peek)?;
        let mut instances = AheadMaps::new();
        for (at, map) in maps.iter().enumerate() {
            let rows = answers.get(2 + at).ok_or_else(malformed)?;
            instances.insert(map.clone(), self.named_values(flow_id, rows)?);
        }
        Ok(Peeked {
            flow,
            values,
            maps: instances,
            missed: false,
        })
    }

    /// The flow and the values found of `asked` in the rows of `attrflow_open` or
    /// `attrflow_peek` (one row per value found, or one without a value; names and flow
    /// types in hex, the run state last): every name of `asked` is known from then on,
    /// absent unless a row holds it. No row: the flow does not exist.
    pub(super) fn flow_and_values(
        &self,
        flow_id: &str,
        asked: &[String],
        rows: &[&SimpleQueryRow],
    ) -> Result<(FlowRecord, Prefetched)> {
        let Some(first) = rows.first() else {
            return Err(Error::FlowNotFound {
                flow_id: flow_id.to_owned(),
            });
        };
        let malformed = || self.unexpected_answer(flow_id);
        let flow = FlowRecord {
            flow_id: flow_id.to_owned(),
            flow_type: self
                .text(from_hex(first.get(0).ok_or_else(malformed)?).ok_or_else(malformed)?)?,
            run_id: first.get(1).ok_or_else(malformed)?.to_owned(),
        };
        let run_state = first.get(5).map(str::to_owned);
        let mut prefetched = prefetch_slots(asked, run_state);
        for row in rows {
            if let (Some(name), Some(value)) = (row.get(3), row.get(4)) {
                let name = self.text(from_hex(name).ok_or_else(malformed)?)?;
                prefetched.insert(name, Some(value.to_owned()));
            }
        }
        Ok((flow, prefetched))
    }

    /// The names and values of rows of `attrflow_values` or `attrflow_range` (the name in
    /// hex, then the value).
    pub(super) fn named_values(
        &self,
        flow_id: &str,
        rows: &[&SimpleQueryRow],
    ) -> Result<Vec<(String, String)>> {
        let malformed = || self.unexpected_answer(flow_id);
        rows.iter()
            .map(|row| {
                let name = from_hex(row.get(0).ok_or_else(malformed)?).ok_or_else(malformed)?;
                let value = row.get(1).ok_or_else(malformed)?;
                Ok((self.text(name)?, value.to_owned()))
            })
            .collect()
    }

    /// The error of an answer that does not have the form the store's statements give.
    pub(super) fn unexpected_answer(&self, flow_id: &str) -> Error {
        Error::storage(format!(
            "store {}: an unexpected answer reading flow {flow_id:?}",
            self.location
        ))
    }
}

/// Sends `batch`, which starts a transaction and reads in it: the transaction, rolled back
/// when dropped before it is marked done (as when a statement of the batch fails), and the
/// batch's answers.
fn start_reading<'c>(
    client: &'c mut postgres::Client,
    errors: Errors<'_>,
    untouched: &Cell<bool>,
    batch: &str,
) -> Result<(OpenTransaction<'c>, Vec<SimpleQueryMessage>)> {
    let open = OpenTransaction {
        client,
        done: false,
    };
    let messages = open
        .client
        .simple_query(batch)
        .map_err(errors.doing("reading a flow"))?;
    untouched.set(false);
    Ok((open, messages))
}

/// A snapshot read in one round trip and ended: the body's reads are answered from what it
/// read, and anything else marks the run as missed (its result is then discarded).
struct Peeked {
    flow: FlowRecord,
    /// The values read ahead, `None` for a name read and found absent.
    values: Prefetched,
    /// The instances of each map read ahead.
    maps: AheadMaps,
    missed: bool,
}

impl Peeked {
    fn miss(&mut self, what: &str) -> Error {
        self.missed = true;
        Error::storage(format!(
            "flow {:?}: {what} was not read with the flow; read again",
            self.flow.flow_id
        ))
    }
}

impl SnapshotReader for Peeked {
    fn flow(&self) -> &FlowRecord {
        &self.flow
    }

    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>> {
        let (found, missing) = look_up(&self.values, physical_names);
        match missing.first() {
            Some(name) => Err(self.miss(&format!("value {name:?}"))),
            None => Ok(found),
        }
    }

    fn read_map(&mut self, map: &str) -> Result<Vec<(String, String)>> {
        match self.maps.get(map) {
            Some(instances) => Ok(instances.clone()),
            None => Err(self.miss(&format!("AttributeMap {map:?}"))),
        }
    }
}
