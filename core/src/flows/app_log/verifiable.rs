//! Verifiable logs on an app log (issue 53; docs/verifiable-logs.md): switching a log's
//! tree on (RPC `MakeLogVerifiable`), the tree head, signed checkpoints and proofs of one
//! named log, read from its stored tree. The rules live in [`crate::verifiable`] and
//! [`crate::chunked_log`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{named_log, validate_log_name, AppLog, MAKE_LOG_VERIFIABLE};
use crate::chunked_log::SwitchOnInput;
use crate::context::RpcContext;
use crate::limits::MAX_READ_RECORDS;
use crate::output::RpcOutput;
use crate::typed::{decode_input, encode};
use crate::verifiable::log_tree::switch_on;
use crate::verifiable::{
    default_origin, ConsistencyProof, InclusionProof, LogTree, NoteSigner, TreeHead,
};
use crate::Result;

/// Input of `MakeLogVerifiable`: the log and one step of switching its tree on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MakeLogVerifiableInput {
    /// The log's name; required.
    pub log: String,
    /// The step.
    #[serde(flatten)]
    pub step: SwitchOnInput,
}

pub(super) fn make_log_verifiable(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: MakeLogVerifiableInput = decode_input(MAKE_LOG_VERIFIABLE, input)?;
    validate_log_name(&input.log)?;
    let outcome = named_log(&input.log).switch_on_tree(ctx, input.step)?;
    RpcOutput::encode("switch-on outcome", &outcome)
}

impl AppLog<'_> {
    /// Makes `log` verifiable (idempotent) and returns its tree head: the tree covers every
    /// record from sequence 1, and every later append keeps it in its own transaction.
    /// Switching on reads the log once, in bounded steps.
    pub fn make_verifiable(&self, log: &str) -> Result<TreeHead> {
        validate_log_name(log)?;
        let mut run_id: Option<String> = None;
        switch_on(
            &mut |sequence| {
                let read =
                    self.inspect_read_from(log, sequence, MAX_READ_RECORDS, run_id.as_deref())?;
                run_id.get_or_insert(read.run_id);
                let records = read
                    .entries
                    .iter()
                    .map(|entry| encode("log entry", entry))
                    .collect::<Result<Vec<_>>>()?;
                Ok((records, read.next_sequence))
            },
            &mut |step| {
                let input = MakeLogVerifiableInput {
                    log: log.to_owned(),
                    step,
                };
                self.invoke(MAKE_LOG_VERIFIABLE, encode("input", &input)?)?
                    .decode(MAKE_LOG_VERIFIABLE)
            },
        )?;
        self.tree_head(log)
    }

    /// The tree head of `log`: its record count and RFC 6962 root hash.
    pub fn tree_head(&self, log: &str) -> Result<TreeHead> {
        self.log_tree(log)?.head()
    }

    /// The newest tree head of `log` as a C2SP checkpoint signed by `signer`; `origin`
    /// defaults to `attrflow/<flow ID>/<log>`.
    pub fn checkpoint(
        &self,
        log: &str,
        signer: &NoteSigner,
        origin: Option<&str>,
    ) -> Result<String> {
        let origin = origin.map_or_else(|| default_origin(self.flow_id, log), str::to_owned);
        self.log_tree(log)?.checkpoint(signer, &origin)
    }

    /// The inclusion proof of record `sequence` of `log` in the tree of `tree_size`
    /// records (the newest size when `None`).
    pub fn inclusion_proof(
        &self,
        log: &str,
        sequence: u64,
        tree_size: Option<u64>,
    ) -> Result<InclusionProof> {
        self.log_tree(log)?.inclusion_proof(sequence, tree_size)
    }

    /// The consistency proof of `log` between tree sizes `from` and `to`.
    pub fn consistency_proof(&self, log: &str, from: u64, to: u64) -> Result<ConsistencyProof> {
        self.log_tree(log)?.consistency_proof(from, to)
    }

    fn log_tree(&self, log: &str) -> Result<LogTree<'_>> {
        validate_log_name(log)?;
        named_log(log).stored_tree(self.runtime, self.flow_id, &format!("log {log:?}"))
    }
}
