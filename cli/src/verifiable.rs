//! The verifiable-log commands (issue 53): `verifiable`, `checkpoint`, `prove` and `keygen`. Every rule is
//! core's ([`attrflow::verifiable`] and the flows' verifiable methods); these only translate.

use std::io::Write;

use attrflow::verifiable::{generate_key, NoteSigner};
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

/// Prints a new signer key (first line) and its verifier key (second line).
pub(crate) fn keygen(name: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let (signer, verifier) = generate_key(name).map_err(|e| CliError::Usage(e.to_string()))?;
    writeln!(out, "{signer}\n{verifier}")?;
    Ok(())
}
