//! Many independent RPC calls handed to the store at once ([`Runtime::invoke_rpcs`]).
//!
//! A binding that holds several callers' calls at the same moment (Python's `AsyncClient`
//! worker taking every queued call) hands them over together: on a store that runs a batch
//! as one commit group ([`Store::groups_batches`], SQLite) the calls that take locks run on
//! the calling thread, back to back, as members of one group, so they share one COMMIT and
//! no thread is woken between them. Each call keeps every rule of a call on its own: its
//! locks, its savepoint, its own error, its span and its count in [`crate::metrics`].

use std::sync::Arc;

use serde_json::Value;

use crate::definition::{FlowDefinition, RpcDefinition};
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::output::RpcOutput;
use crate::runtime::{takes_locks, CallPlan, Runtime};
#[cfg(doc)]
use crate::store::Store;
use crate::store::{Isolation, RpcCall, SnapshotReader, Write};

impl Runtime {
    /// Invokes independent RPCs (from different callers, of any flows and flow types), each
    /// as [`Runtime::invoke_rpc`] would, and returns their outputs in order. On a store
    /// that groups commits ([`Store::groups_batches`]) the calls that take locks run on
    /// this thread as members of one group: one COMMIT, and no thread woken between them;
    /// lock-free calls run first, one after another (see [`Runtime::batches`] for which
    /// calls gain from a batch). Each call keeps its own locks, its own error and its own
    /// rollback (one failing fails no other), and is counted and traced as a call on its
    /// own. A batch of one is a call on its own.
    pub fn invoke_rpcs(&self, requests: Vec<RpcRequest>) -> Vec<Result<Value>> {
        self.invoke_rpcs_output(requests)
            .into_iter()
            .map(|output| output.and_then(RpcOutput::into_value))
            .collect()
    }

    /// Invokes independent RPCs as [`Runtime::invoke_rpcs`] does and returns their outputs
    /// in the form each handler made it ([`RpcOutput`], as [`Runtime::invoke_rpc_output`]).
    pub fn invoke_rpcs_output(&self, mut requests: Vec<RpcRequest>) -> Vec<Result<RpcOutput>> {
        if let [_] = requests.as_slice() {
            return requests
                .pop()
                .map(|r| {
                    self.invoke_rpc_output(
                        &r.flow_type,
                        &r.flow_id,
                        &r.rpc_name,
                        r.input,
                        &r.options,
                    )
                })
                .into_iter()
                .collect();
        }
        let mut results: Vec<Option<Result<RpcOutput>>> = Vec::with_capacity(requests.len());
        let mut calls = Vec::with_capacity(requests.len());
        for request in requests {
            let span =
                crate::metrics::rpc_span(&request.flow_type, &request.flow_id, &request.rpc_name);
            let prepared = span.in_scope(|| {
                self.prepare(
                    &request.flow_type,
                    &request.flow_id,
                    &request.rpc_name,
                    &request.input,
                    &request.options,
                )
            });
            match prepared {
                Ok((definition, plan)) => {
                    calls.push(BatchedCall {
                        at: results.len(),
                        span,
                        definition,
                        plan,
                        flow_id: request.flow_id,
                        rpc_name: request.rpc_name,
                        input: request.input,
                        output: None,
                        wrote: false,
                    });
                    results.push(None);
                }
                Err(error) => {
                    let failed = Err(error);
                    crate::metrics::record_outcome(&span, &failed);
                    results.push(Some(failed));
                }
            }
        }
        if calls.len() > 1 {
            crate::metrics::record_batch(calls.len());
        }
        let mut bodies: Vec<_> = calls.iter_mut().map(BatchedCall::body).collect();
        let mut store_calls: Vec<RpcCall<'_, '_>> = bodies
            .iter_mut()
            .map(|(flow_id, isolation, body)| RpcCall {
                flow_id,
                isolation,
                body,
            })
            .collect();
        let ran = self.store().run_rpcs(&mut store_calls);
        drop(store_calls);
        drop(bodies);
        let mut wrote = false;
        for (call, ran) in calls.into_iter().zip(ran) {
            // run_rpcs returns once the writes are committed.
            wrote |= ran.is_ok() && call.wrote;
            let result = ran.and_then(|()| {
                call.output
                    .ok_or_else(|| Error::storage("the store did not run the RPC body"))
            });
            crate::metrics::record_outcome(&call.span, &result);
            results[call.at] = Some(result);
        }
        if wrote {
            self.commits().notify();
        }
        results
            .into_iter()
            .map(|result| result.unwrap_or_else(|| Err(Error::storage("the call was not run"))))
            .collect()
    }

    /// Whether a call of `rpc_name` of `flow_type` with `options` should be handed over in a
    /// batch ([`Runtime::invoke_rpcs`]): its store runs a batch as one group
    /// ([`Store::groups_batches`]) and the call takes fail-fast locks, so it runs as a
    /// member of a group. A lock-free call runs on its own
    /// snapshot in parallel with others, which a batch would serialise; an unknown flow
    /// type or RPC is left to fail on its own.
    pub fn batches(&self, flow_type: &str, rpc_name: &str, options: &RpcInvokeOptions) -> bool {
        self.store().groups_batches()
            && self.known_rpc_is(flow_type, rpc_name, |rpc| takes_locks(rpc, options))
    }

    /// Whether a call of `rpc_name` of `flow_type` with `options` waits for nothing but its
    /// own reads, so that a caller that must not wait (an event loop's thread) may run it
    /// itself instead of handing it to another thread: the RPC is declared read-only
    /// ([`RpcDefinition::read_only`]), the call takes no locks, and its store reads in this
    /// process without waiting for other writers ([`Store::reads_without_waiting`]). It can
    /// still take as long as its reads do. An unknown flow type or RPC is left to fail where
    /// the call runs.
    pub fn reads_in_place(
        &self,
        flow_type: &str,
        rpc_name: &str,
        options: &RpcInvokeOptions,
    ) -> bool {
        self.store().reads_without_waiting()
            && self.known_rpc_is(flow_type, rpc_name, |rpc| {
                rpc.is_read_only() && !takes_locks(rpc, options)
            })
    }

    /// Whether `rpc_name` of `flow_type` is a registered RPC that passes `test`.
    fn known_rpc_is(
        &self,
        flow_type: &str,
        rpc_name: &str,
        test: impl FnOnce(&RpcDefinition) -> bool,
    ) -> bool {
        self.definition(flow_type)
            .is_ok_and(|definition| definition.rpc(rpc_name).is_ok_and(test))
    }
}

/// One call of [`Runtime::invoke_rpcs`]: what [`Runtime::invoke_rpc`] takes.
#[derive(Debug, Clone)]
pub struct RpcRequest {
    /// The flow type whose RPC is called.
    pub flow_type: String,
    /// The flow it runs on.
    pub flow_id: String,
    /// The RPC's name.
    pub rpc_name: String,
    /// Its input.
    pub input: Value,
    /// Extra locks, loads and the expected run.
    pub options: RpcInvokeOptions,
}

/// A checked call of a batch, and what its body leaves behind.
struct BatchedCall {
    at: usize,
    span: tracing::Span,
    definition: Arc<FlowDefinition>,
    plan: CallPlan,
    flow_id: String,
    rpc_name: String,
    input: Value,
    output: Option<RpcOutput>,
    wrote: bool,
}

impl BatchedCall {
    /// The flow, isolation and body the store runs for this call.
    fn body(
        &mut self,
    ) -> (
        &str,
        &Isolation,
        impl FnMut(&mut dyn SnapshotReader) -> Result<Vec<Write>> + Send + '_,
    ) {
        let BatchedCall {
            span,
            definition,
            plan,
            flow_id,
            rpc_name,
            input,
            output,
            wrote,
            ..
        } = self;
        let (definition, plan, span) = (&**definition, &*plan, &*span);
        let body = move |reader: &mut dyn SnapshotReader| -> Result<Vec<Write>> {
            // The handler runs inside this call's span, on whichever thread runs it.
            span.in_scope(|| {
                let rpc = definition.rpc(rpc_name)?;
                let (value, writes) = plan.run(definition, rpc, reader, std::mem::take(input))?;
                *output = Some(value);
                *wrote = !writes.is_empty();
                Ok(writes)
            })
        };
        (flow_id.as_str(), &plan.isolation, body)
    }
}
