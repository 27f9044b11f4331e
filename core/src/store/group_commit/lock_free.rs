//! Lock-free RPCs in a group: a lock-free handler runs on a snapshot of committed state
//! outside the group through a [`RecordingReader`], which remembers every read; if it
//! wrote anything, its writes join a group as a member that first reads the same values
//! again inside the group's transaction ([`verify_reads`]), so a value changed in between
//! fails the call with a retryable lock conflict instead of being overwritten.

use std::collections::BTreeSet;

use super::super::{FlowRecord, SnapshotReader};
use crate::error::{Error, Result};

/// What one read of a lock-free handler asked for.
pub(super) enum Asked {
    /// These physical names.
    Names(Vec<String>),
    /// Every instance of this AttributeMap.
    Map(String),
}

impl Asked {
    fn read(&self, reader: &mut dyn SnapshotReader) -> Result<Vec<(String, String)>> {
        match self {
            Asked::Names(names) => reader.read(names),
            Asked::Map(map) => reader.read_map(map),
        }
    }
}

/// One read of a lock-free handler: what it asked for and the values found.
pub(super) type Read = (Asked, Vec<(String, String)>);

/// A reader that remembers what a lock-free handler read.
pub(super) struct RecordingReader<'r> {
    inner: &'r mut dyn SnapshotReader,
    reads: Vec<Read>,
}

impl SnapshotReader for RecordingReader<'_> {
    fn flow(&self) -> &FlowRecord {
        self.inner.flow()
    }

    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>> {
        self.record(Asked::Names(physical_names.to_vec()))
    }

    fn read_map(&mut self, map: &str) -> Result<Vec<(String, String)>> {
        self.record(Asked::Map(map.to_owned()))
    }
}

impl<'r> RecordingReader<'r> {
    /// Records the reads made through `inner`.
    pub(super) fn new(inner: &'r mut dyn SnapshotReader) -> Self {
        RecordingReader {
            inner,
            reads: Vec::new(),
        }
    }

    /// The flow read and every read made, in order.
    pub(super) fn into_reads(self) -> (FlowRecord, Vec<Read>) {
        (self.inner.flow().clone(), self.reads)
    }

    fn record(&mut self, asked: Asked) -> Result<Vec<(String, String)>> {
        let found = asked.read(self.inner)?;
        self.reads.push((asked, found.clone()));
        Ok(found)
    }
}

/// Fails with a retryable [`Error::LockConflict`] unless every value a lock-free handler
/// read is unchanged in the group's transaction.
pub(super) fn verify_reads(
    flow: &FlowRecord,
    reads: &[Read],
    reader: &mut dyn SnapshotReader,
) -> Result<()> {
    let changed = |what: &str| {
        Error::LockConflict(format!(
            "flow {:?}: {what} changed after this lock-free RPC read it and before its writes \
             could commit; nothing was written; retry",
            flow.flow_id
        ))
    };
    if reader.flow().run_id != flow.run_id {
        return Err(changed("the flow's run"));
    }
    for (asked, found) in reads {
        let now = asked.read(reader)?;
        if &now != found {
            let names: BTreeSet<&str> = found
                .iter()
                .chain(&now)
                .map(|(name, _)| name.as_str())
                .chain(match asked {
                    Asked::Names(names) => names.iter().map(String::as_str).collect(),
                    Asked::Map(_) => Vec::new(),
                })
                .collect();
            let differs: Vec<&str> = names
                .into_iter()
                .filter(|name| {
                    let then = found.iter().find(|(n, _)| n == name);
                    let now = now.iter().find(|(n, _)| n == name);
                    then != now
                })
                .collect();
            return Err(changed(&differs.join(", ")));
        }
    }
    Ok(())
}
