//! The verifiable-log commands (issue 53): `verifiable`, `checkpoint`, `prove`, `keygen`
//! and `verify --checkpoint`. Every rule is
//! core's ([`attrflow::verifiable`] and the flows' verifiable methods); these only translate.

use std::io::Write;

use std::path::Path;

use attrflow::chunked_log::verify_tree::check_checkpoint;
use attrflow::store::FlowRecord;
use attrflow::verifiable::{
    default_origin, generate_key, Checkpoint, NoteSigner, NoteVerifier, TreeHashes,
};
use attrflow::Runtime;

use crate::{CliError, LogRef};

/// Switches the log's tree on and prints its head: `{"treeSize":N,"rootHash":"<base64>"}`.
pub(crate) fn make_verifiable(
    runtime: &Runtime,
    flow: &str,
    log: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let head = match LogRef::new(runtime, flow, log)? {
        LogRef::Archive(archive) => archive.make_verifiable()?,
        LogRef::App(app, log) => app.make_verifiable(&log)?,
    };
    writeln!(out, "{}", head.to_json())?;
    Ok(())
}

/// Prints the log's signed checkpoint (a C2SP signed note), signed with the key in `key_file`.
pub(crate) fn checkpoint(
    runtime: &Runtime,
    flow: &str,
    log: Option<&str>,
    key_file: &std::path::Path,
    origin: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let text = std::fs::read_to_string(key_file)
        .map_err(|e| CliError::Usage(format!("key file {}: {e}", key_file.display())))?;
    let signer = NoteSigner::from_key_text(&text)
        .map_err(|e| CliError::Usage(format!("key file {}: {e}", key_file.display())))?;
    let note = match LogRef::new(runtime, flow, log)? {
        LogRef::Archive(archive) => archive.checkpoint(&signer, origin)?,
        LogRef::App(app, log) => app.checkpoint(&log, &signer, origin)?,
    };
    write!(out, "{note}")?;
    Ok(())
}

/// What `prove` proves: one record's inclusion, or two tree sizes' consistency.
pub(crate) enum Proof {
    /// Record `sequence` in the tree of `tree_size` records (default: the whole log).
    Inclusion {
        /// The record's sequence.
        sequence: u64,
        /// The tree size.
        tree_size: Option<u64>,
    },
    /// The tree of `from` records is a prefix of the tree of `to` records.
    Consistency {
        /// The smaller tree size.
        from: u64,
        /// The larger tree size.
        to: u64,
    },
}

/// Prints a proof as one JSON line.
pub(crate) fn prove(
    runtime: &Runtime,
    flow: &str,
    log: Option<&str>,
    proof: Proof,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let log_ref = LogRef::new(runtime, flow, log)?;
    let json = match (proof, &log_ref) {
        (
            Proof::Inclusion {
                sequence,
                tree_size,
            },
            LogRef::Archive(archive),
        ) => archive.inclusion_proof(sequence, tree_size)?.to_json(),
        (
            Proof::Inclusion {
                sequence,
                tree_size,
            },
            LogRef::App(app, log),
        ) => app.inclusion_proof(log, sequence, tree_size)?.to_json(),
        (Proof::Consistency { from, to }, LogRef::Archive(archive)) => {
            archive.consistency_proof(from, to)?.to_json()
        }
        (Proof::Consistency { from, to }, LogRef::App(app, log)) => {
            app.consistency_proof(log, from, to)?.to_json()
        }
    };
    writeln!(out, "{json}")?;
    Ok(())
}

/// A signed checkpoint `verify --checkpoint` checks the store's log against.
pub(crate) struct CheckpointToCheck {
    note: String,
    verifier: NoteVerifier,
    checkpoint: Checkpoint,
}

/// Reads the checkpoint file and the verifier key (its text, or a file holding it) and
/// checks the signature: a malformed note, key or signature is a usage error naming it.
pub(crate) fn read_checkpoint(file: &Path, key: &str) -> Result<CheckpointToCheck, CliError> {
    let key_path = Path::new(key);
    let key_text = if key_path.is_file() {
        std::fs::read_to_string(key_path)
            .map_err(|e| CliError::Usage(format!("verifier key file {key}: {e}")))?
    } else {
        key.to_owned()
    };
    let verifier = NoteVerifier::from_key_text(&key_text)
        .map_err(|e| CliError::Usage(format!("verifier key: {e}")))?;
    let note = std::fs::read_to_string(file)
        .map_err(|e| CliError::Usage(format!("checkpoint file {}: {e}", file.display())))?;
    let checkpoint = Checkpoint::open(&note, &verifier)
        .map_err(|e| CliError::Usage(format!("checkpoint file {}: {e}", file.display())))?;
    Ok(CheckpointToCheck {
        note,
        verifier,
        checkpoint,
    })
}

impl CheckpointToCheck {
    /// The checkpoint's origin line.
    pub(crate) fn origin(&self) -> &str {
        &self.checkpoint.origin
    }

    /// Whether the checkpoint's origin is the default one of `log` (`""`: the subscriber
    /// archive's) of `flow`.
    pub(crate) fn names(&self, flow: &FlowRecord, log: &str) -> bool {
        let log = if log.is_empty() { "subscribers" } else { log };
        self.checkpoint.origin == default_origin(&flow.flow_id, log)
    }

    /// Checks the log's recomputed tree against the checkpoint; returns its tree size.
    pub(crate) fn check(&self, tree: &TreeHashes) -> Result<u64, String> {
        check_checkpoint(tree, &self.note, &self.verifier).map(|c| c.head.tree_size)
    }
}

/// Prints a new signer key (first line) and its verifier key (second line).
pub(crate) fn keygen(name: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let (signer, verifier) = generate_key(name).map_err(|e| CliError::Usage(e.to_string()))?;
    writeln!(out, "{signer}\n{verifier}")?;
    Ok(())
}
