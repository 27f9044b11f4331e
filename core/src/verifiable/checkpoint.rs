//! The C2SP `tlog-checkpoint` body: the origin line, the tree size in decimal, the base64
//! root hash, each ending in a newline (optional extension lines after them are kept).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::error::VerifiableError;
use super::hashing::Hash;
use super::note::{NoteSigner, NoteVerifier};
use super::tree::TreeHead;

/// A checkpoint: which log (`origin`) and its tree head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin (attrflow's default: `attrflow/<flow ID>/<log>`).
    pub origin: String,
    /// The tree head.
    pub head: TreeHead,
}

impl Checkpoint {
    /// The checkpoint's note text.
    pub fn text(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.head.tree_size,
            STANDARD.encode(self.head.root_hash)
        )
    }

    /// The checkpoint signed by `signer`, as a C2SP signed note.
    pub fn sign(&self, signer: &NoteSigner) -> Result<String, VerifiableError> {
        if self.origin.is_empty() || self.origin.contains('\n') {
            return Err(VerifiableError::MalformedCheckpoint(
                "an origin is one non-empty line".to_owned(),
            ));
        }
        signer.sign(&self.text())
    }

    /// Parses a checkpoint's note text (not its signature: see [`Checkpoint::open`]).
    pub fn parse(text: &str) -> Result<Self, VerifiableError> {
        let malformed = |what: &str| VerifiableError::MalformedCheckpoint(what.to_owned());
        let mut lines = text.split('\n');
        let origin = lines
            .next()
            .filter(|origin| !origin.is_empty())
            .ok_or_else(|| malformed("the first line is the origin"))?;
        let size = lines
            .next()
            .ok_or_else(|| malformed("the second line is the tree size"))?;
        if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed("the tree size is a decimal number"));
        }
        let tree_size = size
            .parse::<u64>()
            .map_err(|_| malformed("the tree size is a decimal number"))?;
        let root = lines
            .next()
            .ok_or_else(|| malformed("the third line is the root hash"))?;
        let root_hash: Hash = STANDARD
            .decode(root)
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| malformed("the root hash is 32 bytes in base64"))?;
        if !text.ends_with('\n') {
            return Err(malformed("a checkpoint ends in a newline"));
        }
        Ok(Self {
            origin: origin.to_owned(),
            head: TreeHead {
                tree_size,
                root_hash,
            },
        })
    }

    /// Checks a signed checkpoint's signature with `verifier` and parses it.
    pub fn open(note: &str, verifier: &NoteVerifier) -> Result<Self, VerifiableError> {
        Self::parse(verifier.open(note)?)
    }
}
