//! Verifiable logs on the subscriber archive (issue 53; docs/verifiable-logs.md): switching
//! its tree on (RPC `MakeSubscriberArchiveVerifiable`), the tree head, signed checkpoints
//! and proofs of its one log, read from the stored tree. The rules live in
//! [`crate::verifiable`] and [`crate::chunked_log`].

use serde_json::Value;

use super::{SubscriberArchive, LOG, MAKE_SUBSCRIBER_ARCHIVE_VERIFIABLE};
use crate::chunked_log::SwitchOnInput;
use crate::context::RpcContext;
use crate::definition::RpcDefinition;
use crate::limits::MAX_READ_RECORDS;
use crate::output::RpcOutput;
use crate::typed::{decode_input, encode};
use crate::verifiable::log_tree::switch_on;
use crate::verifiable::{
    default_origin, ConsistencyProof, InclusionProof, LogTree, NoteSigner, TreeHead,
};
use crate::Result;

/// The log name in the archive's default checkpoint origin (`attrflow/<flow ID>/subscribers`).
const LOG_NAME: &str = "subscribers";

/// `MakeSubscriberArchiveVerifiable`: one bounded step of switching the tree on, locked as
/// a chunk-size change is.
pub(super) fn make_verifiable_rpc() -> RpcDefinition {
    LOG.appending(RpcDefinition::new_with_output(
        MAKE_SUBSCRIBER_ARCHIVE_VERIFIABLE,
        make_verifiable,
    ))
}

fn make_verifiable(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: SwitchOnInput = decode_input(MAKE_SUBSCRIBER_ARCHIVE_VERIFIABLE, input)?;
    let outcome = LOG.switch_on_tree(ctx, input)?;
    RpcOutput::encode("switch-on outcome", &outcome)
}

impl SubscriberArchive<'_> {
    /// Makes the archive's log verifiable (idempotent) and returns its tree head: the tree
    /// covers every record from sequence 1, and every later append keeps it in its own
    /// transaction. Switching on reads the log once, in bounded steps.
    pub fn make_verifiable(&self) -> Result<TreeHead> {
        let mut run_id: Option<String> = None;
        switch_on(
            &mut |sequence| {
                let read = self.inspect_read_from(sequence, MAX_READ_RECORDS, run_id.as_deref())?;
                run_id.get_or_insert(read.run_id);
                let records = read
                    .subscribers
                    .iter()
                    .map(|subscriber| encode("subscriber", subscriber))
                    .collect::<Result<Vec<_>>>()?;
                Ok((records, read.next_sequence))
            },
            &mut |input| self.call(MAKE_SUBSCRIBER_ARCHIVE_VERIFIABLE, &input),
        )?;
        self.tree_head()
    }

    /// The tree head of the archive's log: its record count and RFC 6962 root hash.
    pub fn tree_head(&self) -> Result<TreeHead> {
        self.log_tree()?.head()
    }

    /// The newest tree head as a C2SP checkpoint signed by `signer`; `origin` defaults to
    /// `attrflow/<flow ID>/<log>`.
    pub fn checkpoint(&self, signer: &NoteSigner, origin: Option<&str>) -> Result<String> {
        let origin = origin.map_or_else(|| default_origin(self.flow_id, LOG_NAME), str::to_owned);
        self.log_tree()?.checkpoint(signer, &origin)
    }

    /// The inclusion proof of record `sequence` in the tree of `tree_size` records (the
    /// newest size when `None`).
    pub fn inclusion_proof(&self, sequence: u64, tree_size: Option<u64>) -> Result<InclusionProof> {
        self.log_tree()?.inclusion_proof(sequence, tree_size)
    }

    /// The consistency proof between tree sizes `from` and `to`.
    pub fn consistency_proof(&self, from: u64, to: u64) -> Result<ConsistencyProof> {
        self.log_tree()?.consistency_proof(from, to)
    }

    fn log_tree(&self) -> Result<LogTree<'_>> {
        LOG.stored_tree(self.runtime, self.flow_id, "the subscriber archive")
    }
}
