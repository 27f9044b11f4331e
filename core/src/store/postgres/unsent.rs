//! What a group holds back until its next round trip to the server: its `BEGIN`, the
//! writes of the members that ran since, and the savepoint statements between them
//! (`postgres/group.rs` says when they go).
//!
//! A write that a later member of the same batch supersedes (the same flow and name) is
//! left out: both members are counted in only if the whole batch runs, and a batch that
//! fails anywhere fails the group, so the earlier value would never be seen. Members
//! appending to one chunked log each rewrite its open chunk; a batch of them sends the
//! chunk once, as the last of them left it.

use std::collections::HashMap;

use super::{carries_nul, push_write, quote};
use crate::store::Write;

/// Statements waiting for the group's next batch, in the order they run.
#[derive(Debug, Default)]
pub struct Unsent {
    /// Statements in order, as they are sent; a write a later one superseded is `None`.
    parts: Vec<Option<String>>,
    /// Where the latest write of each flow and name sits in `parts`.
    latest: HashMap<(String, String), usize>,
}

impl Unsent {
    /// A batch holding `sql` only.
    pub fn with(sql: &str) -> Self {
        let mut unsent = Self::default();
        unsent.push_sql(sql);
        unsent
    }

    /// Adds a statement (or several, separated by semicolons) to run after what waits.
    pub fn push_sql(&mut self, sql: &str) {
        self.parts.push(Some(sql.to_owned()));
    }

    /// Takes back `sql` if it is the last statement added (and still waits): `false` when
    /// it is not.
    pub fn unpush_sql(&mut self, sql: &str) -> bool {
        let last = self.parts.last().and_then(Option::as_deref);
        if last != Some(sql) {
            return false;
        }
        self.parts.pop();
        true
    }

    /// Adds a member's writes of flow `flow_id`, superseding the waiting writes of the same
    /// names; `false` (and nothing added) when some text holds a NUL character, which a
    /// simple query cannot carry: those go through prepared statements instead.
    #[must_use]
    pub fn push_writes(&mut self, flow_id: &str, writes: &[Write]) -> bool {
        if carries_nul(flow_id, writes) {
            return false;
        }
        let flow = quote(flow_id);
        for (name, value) in writes {
            let at = self.parts.len();
            if let Some(before) = self.latest.insert((flow_id.to_owned(), name.clone()), at) {
                self.parts[before] = None;
            }
            let mut statement = String::new();
            push_write(&mut statement, &flow, name, value.as_deref());
            self.parts.push(Some(statement));
        }
        true
    }

    /// What waits followed by `then` (if any), as one simple-query batch, and nothing waits
    /// any more; `None` when the batch would be empty.
    pub fn take_batch(&mut self, then: Option<&str>) -> Option<String> {
        self.latest.clear();
        let parts: Vec<String> = std::mem::take(&mut self.parts)
            .into_iter()
            .flatten()
            .collect();
        let mut batch = parts.join(";");
        if let Some(then) = then {
            if !batch.is_empty() {
                batch.push(';');
            }
            batch.push_str(then);
        }
        (!batch.is_empty()).then_some(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, value: Option<&str>) -> Write {
        (name.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn a_later_write_of_the_same_flow_and_name_supersedes_the_waiting_one() {
        let mut unsent = Unsent::with("BEGIN");
        assert!(unsent.push_writes("f", &[write("a", Some("1")), write("b", Some("2"))]));
        unsent.push_sql("RELEASE SAVEPOINT m0; SAVEPOINT m1");
        assert!(unsent.push_writes("f", &[write("a", Some("3"))]));
        assert!(unsent.push_writes("g", &[write("a", None)]));
        unsent.push_sql("RELEASE SAVEPOINT m1; SAVEPOINT m2");
        assert_eq!(
            unsent.take_batch(Some("COMMIT")).as_deref(),
            Some(
                "BEGIN;EXECUTE attrflow_put('f', '\\x62'::bytea, '2');\
                 RELEASE SAVEPOINT m0; SAVEPOINT m1;\
                 EXECUTE attrflow_put('f', '\\x61'::bytea, '3');\
                 EXECUTE attrflow_drop('g', '\\x61'::bytea);\
                 RELEASE SAVEPOINT m1; SAVEPOINT m2;COMMIT"
            )
        );
        assert_eq!(unsent.take_batch(None), None);
        // Once sent, a write supersedes nothing.
        assert!(unsent.push_writes("f", &[write("a", Some("4"))]));
        assert_eq!(
            unsent.take_batch(None).as_deref(),
            Some("EXECUTE attrflow_put('f', '\\x61'::bytea, '4')")
        );
    }

    #[test]
    fn writes_holding_a_nul_are_refused_and_leave_the_batch_as_it_was() {
        let mut unsent = Unsent::default();
        assert!(!unsent.push_writes("f", &[write("a", Some("x\0y"))]));
        assert!(!unsent.push_writes("f\0", &[write("a", Some("1"))]));
        assert_eq!(unsent.take_batch(Some("COMMIT")).as_deref(), Some("COMMIT"));
    }
}
