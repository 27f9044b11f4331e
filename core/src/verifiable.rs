//! Verifiable logs (issue 53): an RFC 6962 Merkle tree over a chunked log's records, signed
//! checkpoints in the C2SP `tlog-checkpoint` / `signed-note` formats, and inclusion and
//! consistency proofs. docs/verifiable-logs.md is the user page.
//!
//! One concept a file: [`hashing`] (leaf and node hashes, the canonical leaf bytes),
//! [`tree`] (the stored hashes a proof reads, and the rules computing roots and proofs from
//! them), [`tiles`] (those hashes as a chunked log stores them), [`proofs`] (inclusion and consistency proofs
//! and their checks), [`note`] (signed notes and key texts), [`checkpoint`] (the checkpoint
//! body), [`error`] (what is wrong with a request, a key or a note).

pub mod checkpoint;
pub mod error;
pub mod hashing;
pub mod log_tree;
pub mod note;
pub mod proofs;
pub mod tiles;
pub mod tree;

pub use checkpoint::Checkpoint;
pub use error::VerifiableError;
pub use hashing::{leaf_bytes, leaf_hash, node_hash, Hash};
pub use log_tree::{default_origin, LogTree};
pub use note::{generate_key, NoteSigner, NoteVerifier};
pub use proofs::{ConsistencyProof, InclusionProof};
pub use tree::{HashSource, TreeHashes, TreeHead};
