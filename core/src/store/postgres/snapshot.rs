//! Lock-free reads of committed state on PostgreSQL, in as few round trips as the server
//! allows.
//!
//! A lock-free RPC ([`crate::store::Isolation::Shared`]) reads one snapshot: its flow, the
//! values the runtime planned for it (the flow's Attributes, its run state, the AttributeMap
//! instances it loads), and whatever else its body asks for. One simple-query round trip
//! starts the read-only `REPEATABLE READ` transaction and runs `attrflow_peek`, which reads
//! the flow's row with those values; the body's reads are answered from them, and anything
//! else it asks for (a whole AttributeMap, a name the plan did not list) is read in the same
//! transaction, so every read sees the same snapshot. A second round trip ends it. A page
//! read costs two round trips, where reading the flow, then the values, each in its own
//! statement, cost four with the transaction's start and end.

use postgres::SimpleQueryRow;

use super::OpenTransaction;
use super::{execute_on_flow, from_hex, prefetch_slots, rows_of, unlocked_reads};
use super::{IsolationLevel, PostgresStore, Prefetched, TxReader};
use crate::error::{Error, Result};
use crate::store::{FlowRecord, RpcBody, Write};

impl PostgresStore {
    /// Runs `body` on a snapshot of committed state and returns the writes it staged,
    /// uncommitted: `reads` are read with the flow, in one round trip with the
    /// transaction's start. Fails with [`Error::FlowNotFound`] for an unknown flow.
    pub(super) fn read_snapshot(
        &self,
        flow_id: &str,
        reads: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>> {
        let reads = &unlocked_reads(&[], reads);
        let Some(peek) = execute_on_flow("attrflow_peek", flow_id, &[reads]) else {
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
        let batch = format!("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; {peek}");
        self.with_connection(|client, statements, errors, untouched| {
            // Rolled back if anything below fails, the start included.
            let mut open = OpenTransaction {
                client,
                done: false,
            };
            let messages = open
                .client
                .simple_query(&batch)
                .map_err(errors.doing("reading a flow"))?;
            untouched.set(false);
            let (flow, prefetched) = self.flow_and_values(flow_id, reads, &rows_of(&messages))?;
            let tx = &mut *open.client;
            let writes = body(&mut TxReader::alone(
                self,
                tx,
                (statements, errors),
                flow,
                prefetched,
            ))?;
            open.client
                .batch_execute("COMMIT")
                .map_err(errors.doing("ending a read"))?;
            open.done = true;
            Ok(writes)
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

    /// The error of an answer that does not have the form the store's statements give.
    pub(super) fn unexpected_answer(&self, flow_id: &str) -> Error {
        Error::storage(format!(
            "store {}: an unexpected answer reading flow {flow_id:?}",
            self.location
        ))
    }
}
