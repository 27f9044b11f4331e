//! Verifiable logs on an app log (issue 53; docs/verifiable-logs.md): the tree head, signed
//! checkpoints and proofs of one named log. The rules live in [`crate::verifiable`].

use super::{validate_log_name, AppLog};
use crate::limits::MAX_READ_RECORDS;
use crate::typed::encode;
use crate::verifiable::{
    default_origin, ConsistencyProof, InclusionProof, LogTree, NoteSigner, TreeHead,
};
use crate::Result;

impl AppLog<'_> {
    /// Makes `log` verifiable (idempotent) and returns its tree head: the tree covers every
    /// record from sequence 1.
    pub fn make_verifiable(&self, log: &str) -> Result<TreeHead> {
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

    fn log_tree(&self, log: &str) -> Result<LogTree> {
        validate_log_name(log)?;
        let mut run_id: Option<String> = None;
        LogTree::read(&mut |sequence| {
            let read =
                self.inspect_read_from(log, sequence, MAX_READ_RECORDS, run_id.as_deref())?;
            run_id.get_or_insert(read.run_id);
            let records = read
                .entries
                .iter()
                .map(|entry| encode("log entry", entry))
                .collect::<Result<Vec<_>>>()?;
            Ok((records, read.next_sequence))
        })
    }
}
