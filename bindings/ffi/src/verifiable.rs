//! Verifiable logs (issue 53; docs/verifiable-logs.md) on the subscriber archive and app log
//! client objects: the tree head, signed checkpoints, inclusion and consistency proofs, and
//! a note key pair. The rules (RFC 6962 hashes, C2SP checkpoints and signed notes) are the
//! core's ([`attrflow::verifiable`]); this file converts.
//!
//! Hashes cross as standard base64 text (with padding), the form the CLI, the HTTP service
//! and a checkpoint's root line use, so a hash compares as a string across all of them. The
//! signer key is passed as its note text (`PRIVATE+KEY+<name>+<hash>+<base64>`) to each
//! `checkpoint` call, parsed there and dropped: nothing keeps or stores it.

use attrflow::verifiable as core;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::app_log::AppLog;
use crate::error::Result;
use crate::subscribers::SubscriberArchive;

/// A log's tree size and RFC 6962 root hash.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct TreeHead {
    /// The number of records the tree covers.
    pub tree_size: u64,
    /// The root hash, base64 (`SHA-256("")` for the empty tree).
    pub root_hash: String,
}

/// That record `leaf_index + 1` is in the tree of `tree_size` records (RFC 6962 §2.1.1).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct InclusionProof {
    /// The leaf's index: the record's sequence minus one.
    pub leaf_index: u64,
    /// The tree size the proof is for.
    pub tree_size: u64,
    /// The audit path, deepest first, base64.
    pub hashes: Vec<String>,
}

/// That the tree of `from` records is a prefix of the tree of `to` records (RFC 6962
/// §2.1.2).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ConsistencyProof {
    /// The smaller tree size.
    pub from: u64,
    /// The larger tree size.
    pub to: u64,
    /// The consistency path, base64.
    pub hashes: Vec<String>,
}

/// A new Ed25519 note key pair, as Go's `note.GenerateKey` writes it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct NoteKeyPair {
    /// The signer key text, `PRIVATE+KEY+<name>+<hash>+<base64>`: the application keeps it.
    pub signer_key: String,
    /// The verifier key text, `<name>+<hash>+<base64>`: what readers check notes with.
    pub verifier_key: String,
}

fn base64_hashes(hashes: &[core::Hash]) -> Vec<String> {
    hashes.iter().map(|hash| STANDARD.encode(hash)).collect()
}

impl From<core::TreeHead> for TreeHead {
    fn from(head: core::TreeHead) -> Self {
        TreeHead {
            tree_size: head.tree_size,
            root_hash: STANDARD.encode(head.root_hash),
        }
    }
}

impl From<core::InclusionProof> for InclusionProof {
    fn from(proof: core::InclusionProof) -> Self {
        InclusionProof {
            leaf_index: proof.leaf_index,
            tree_size: proof.tree_size,
            hashes: base64_hashes(&proof.hashes),
        }
    }
}

impl From<core::ConsistencyProof> for ConsistencyProof {
    fn from(proof: core::ConsistencyProof) -> Self {
        ConsistencyProof {
            from: proof.from,
            to: proof.to,
            hashes: base64_hashes(&proof.hashes),
        }
    }
}

/// The signer `signer_key` holds; a malformed key is `InvalidInput` naming what is wrong.
fn signer(signer_key: &str) -> Result<core::NoteSigner> {
    core::NoteSigner::from_key_text(signer_key).map_err(|error| attrflow::Error::from(error).into())
}

/// A new Ed25519 note key pair named `name` (a signer's name: no spaces or `+`); a bad
/// name is `InvalidInput`.
#[uniffi::export]
pub fn generate_note_key(name: String) -> Result<NoteKeyPair> {
    let (signer_key, verifier_key) = core::generate_key(&name).map_err(attrflow::Error::from)?;
    Ok(NoteKeyPair {
        signer_key,
        verifier_key,
    })
}

#[uniffi::export]
impl SubscriberArchive {
    /// Makes the archive verifiable (idempotent; the tree covers every subscriber from
    /// sequence 1) and returns its tree head.
    pub fn make_verifiable(&self) -> Result<TreeHead> {
        Ok(self.core().make_verifiable()?.into())
    }

    /// The archive's tree head: its record count and root hash.
    pub fn tree_head(&self) -> Result<TreeHead> {
        Ok(self.core().tree_head()?.into())
    }

    /// The newest tree head as a C2SP checkpoint signed with `signer_key` (its note text,
    /// never stored); `origin` defaults to `attrflow/<flow ID>/<log>`.
    #[uniffi::method(default(origin = None))]
    pub fn checkpoint(&self, signer_key: String, origin: Option<String>) -> Result<String> {
        let signer = signer(&signer_key)?;
        Ok(self.core().checkpoint(&signer, origin.as_deref())?)
    }

    /// The inclusion proof of subscriber `sequence` in the tree of `tree_size` records
    /// (the newest size when absent); beyond the tree is `InvalidInput`.
    #[uniffi::method(default(tree_size = None))]
    pub fn inclusion_proof(&self, sequence: u64, tree_size: Option<u64>) -> Result<InclusionProof> {
        Ok(self.core().inclusion_proof(sequence, tree_size)?.into())
    }

    /// The consistency proof between tree sizes `from` and `to`; `from > to` is
    /// `InvalidInput`.
    pub fn consistency_proof(&self, from: u64, to: u64) -> Result<ConsistencyProof> {
        Ok(self.core().consistency_proof(from, to)?.into())
    }
}

#[uniffi::export]
impl AppLog {
    /// Makes `log` verifiable (idempotent; the tree covers every record from sequence 1)
    /// and returns its tree head.
    pub fn make_verifiable(&self, log: String) -> Result<TreeHead> {
        Ok(self.core().make_verifiable(&log)?.into())
    }

    /// The tree head of `log`: its record count and root hash.
    pub fn tree_head(&self, log: String) -> Result<TreeHead> {
        Ok(self.core().tree_head(&log)?.into())
    }

    /// The newest tree head of `log` as a C2SP checkpoint signed with `signer_key` (its
    /// note text, never stored); `origin` defaults to `attrflow/<flow ID>/<log>`.
    #[uniffi::method(default(origin = None))]
    pub fn checkpoint(
        &self,
        log: String,
        signer_key: String,
        origin: Option<String>,
    ) -> Result<String> {
        let signer = signer(&signer_key)?;
        Ok(self.core().checkpoint(&log, &signer, origin.as_deref())?)
    }

    /// The inclusion proof of record `sequence` of `log` in the tree of `tree_size`
    /// records (the newest size when absent); beyond the tree is `InvalidInput`.
    #[uniffi::method(default(tree_size = None))]
    pub fn inclusion_proof(
        &self,
        log: String,
        sequence: u64,
        tree_size: Option<u64>,
    ) -> Result<InclusionProof> {
        Ok(self
            .core()
            .inclusion_proof(&log, sequence, tree_size)?
            .into())
    }

    /// The consistency proof of `log` between tree sizes `from` and `to`; `from > to` is
    /// `InvalidInput`.
    pub fn consistency_proof(&self, log: String, from: u64, to: u64) -> Result<ConsistencyProof> {
        Ok(self.core().consistency_proof(&log, from, to)?.into())
    }
}
