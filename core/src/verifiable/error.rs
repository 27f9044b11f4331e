//! What is wrong with a proof request, a key text, a note or a checkpoint.

use thiserror::Error;

/// A verifiable-log request or input that cannot be served or parsed. Core maps
/// [`VerifiableError::Trimmed`] to [`crate::Error::RecordTrimmed`] (the sequence asked for
/// and the oldest retained one, as fields) and every other variant to
/// [`crate::Error::InvalidInput`], its message naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifiableError {
    /// A proof names a leaf or a size beyond the tree (`sequence 7 is beyond tree size 5`).
    #[error("{0}")]
    OutOfRange(String),
    /// A consistency proof from a larger size to a smaller one.
    #[error("consistency proof from tree size {from} to {to}: from must not exceed to")]
    FromAfterTo {
        /// The first tree size asked for.
        from: u64,
        /// The second tree size asked for.
        to: u64,
    },
    /// A signer or verifier key text that is not in the note key format.
    #[error("malformed key: {0}")]
    MalformedKey(String),
    /// A signed note that is not in the C2SP signed-note format, or has no valid signature
    /// by the verifier's key.
    #[error("malformed or unverified note: {0}")]
    MalformedNote(String),
    /// A note body that is not a C2SP tlog-checkpoint.
    #[error("malformed checkpoint: {0}")]
    MalformedCheckpoint(String),
    /// A proof that does not check against the given hashes.
    #[error("proof does not verify: {0}")]
    ProofMismatch(String),
    /// A proof or checkpoint asked of a log whose tree is not switched on.
    #[error(
        "{log} is not verifiable: switch it on first (make_verifiable, or \
         `attrflow verifiable FLOW [--log LOG]`)"
    )]
    NotVerifiable {
        /// The log (`log "audit"`, `the subscriber archive`).
        log: String,
    },
    /// A proof needs a hash a trim dropped (a record older than the oldest retained one).
    #[error("record {sequence} was trimmed; the oldest retained sequence is {oldest_sequence}")]
    Trimmed {
        /// The sequence asked for.
        sequence: u64,
        /// The sequence of the oldest retained record.
        oldest_sequence: u64,
    },
}

impl From<VerifiableError> for crate::Error {
    fn from(error: VerifiableError) -> Self {
        match error {
            VerifiableError::Trimmed {
                sequence,
                oldest_sequence,
            } => crate::Error::RecordTrimmed {
                sequence,
                oldest_sequence,
            },
            other => crate::Error::InvalidInput(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trimmed_proof_is_a_typed_record_trimmed_error() {
        let error = crate::Error::from(VerifiableError::Trimmed {
            sequence: 2,
            oldest_sequence: 5,
        });
        assert_eq!(
            error,
            crate::Error::RecordTrimmed {
                sequence: 2,
                oldest_sequence: 5
            }
        );
        let other = crate::Error::from(VerifiableError::FromAfterTo { from: 3, to: 2 });
        assert_eq!(other.kind(), crate::ErrorKind::InvalidInput);
    }
}
