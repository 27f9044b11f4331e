//! What a group's transaction already holds of each flow its members opened: the flow's
//! row (share-locked, so its run cannot change under the group but by the group's own
//! members), the lock rows its members took and bumped, and the values they read as the
//! transaction now sees them (what was read, with every later member's writes applied).
//! The transaction reads one snapshot (`REPEATABLE READ`) plus its own writes, so a value
//! read once and kept up to date with the group's writes is what a read would return again,
//! locked or not.
//!
//! A member whose locks the transaction already holds needs nothing of the server to open
//! (`postgres/group.rs`): taking and bumping a row the same transaction holds changes
//! nothing, and the values it would read are the ones kept here. Only members that
//! succeeded are recorded: a member rolled back to its savepoint gave its new row locks
//! back, and its writes never happened. A member that starts a flow or writes its run
//! state makes the group forget the flow, and the next member opens it on the server.

use std::collections::{HashMap, HashSet};

use super::Prefetched;
use crate::lifecycle::RUN_STATE_NAME;
use crate::store::{FlowRecord, Write};

/// The flows a group's transaction holds, by flow ID.
#[derive(Debug, Default)]
pub struct HeldFlows(HashMap<String, Held>);

#[derive(Debug)]
struct Held {
    flow: FlowRecord,
    /// The names whose lock rows the transaction holds.
    locked: HashSet<String>,
    /// The values read (`None`: none stored), the run state among them.
    values: Prefetched,
}

impl HeldFlows {
    /// The flow and the values a member of `flow_id` taking `locks` would read on opening,
    /// when the transaction holds every one of those locks already; `None` otherwise.
    pub fn open(&self, flow_id: &str, locks: &[String]) -> Option<(FlowRecord, Prefetched)> {
        self.holding(flow_id, locks)
            .map(|held| (held.flow.clone(), held.values.clone()))
    }

    /// Whether the transaction holds flow `flow_id` and every one of `locks`.
    pub fn holds(&self, flow_id: &str, locks: &[String]) -> bool {
        self.holding(flow_id, locks).is_some()
    }

    /// What is held of flow `flow_id`, when every one of `locks` is.
    fn holding(&self, flow_id: &str, locks: &[String]) -> Option<&Held> {
        self.0
            .get(flow_id)
            .filter(|held| locks.iter().all(|name| held.locked.contains(name)))
    }

    /// Records a member that succeeded: the flow it opened, the locks it took, the values
    /// it read (those it opened with among them), and its writes, applied on top of what
    /// was held.
    pub fn record(
        &mut self,
        flow: FlowRecord,
        locks: &[String],
        read: Prefetched,
        writes: Vec<Write>,
    ) {
        if writes.iter().any(|(name, _)| name == RUN_STATE_NAME) {
            self.forget(&flow.flow_id);
            return;
        }
        let held = self.0.entry(flow.flow_id.clone()).or_insert_with(|| Held {
            flow,
            locked: HashSet::new(),
            values: Prefetched::new(),
        });
        held.locked.extend(locks.iter().cloned());
        held.values.extend(read);
        for (name, value) in writes {
            if let Some(slot) = held.values.get_mut(&name) {
                *slot = value;
            }
        }
    }

    /// Forgets flow `flow_id`: its next member opens it on the server.
    pub fn forget(&mut self, flow_id: &str) {
        self.0.remove(flow_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(run_id: &str) -> FlowRecord {
        FlowRecord {
            flow_id: "f".to_owned(),
            flow_type: "T".to_owned(),
            run_id: run_id.to_owned(),
        }
    }

    fn values(pairs: &[(&str, Option<&str>)]) -> Prefetched {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.map(str::to_owned)))
            .collect()
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn a_member_opens_from_what_is_held_only_when_every_lock_is() {
        let mut held = HeldFlows::default();
        assert_eq!(held.open("f", &[]), None);
        let read = values(&[
            ("a", Some("1")),
            ("b", None),
            ("u", Some("7")),
            (RUN_STATE_NAME, None),
        ]);
        held.record(
            flow("r1"),
            &names(&["a", "b"]),
            read,
            vec![
                ("a".to_owned(), Some("2".to_owned())),
                ("c".to_owned(), None),
            ],
        );
        let (record, seen) = held.open("f", &names(&["a"])).expect("a is held");
        assert_eq!(record, flow("r1"));
        // The member's write is what the next one reads, and so is a value it read without
        // its lock; a name it wrote but never read is not known.
        assert_eq!(
            seen,
            values(&[
                ("a", Some("2")),
                ("b", None),
                ("u", Some("7")),
                (RUN_STATE_NAME, None)
            ])
        );
        // A value read is not a lock held.
        assert_eq!(held.open("f", &names(&["a", "u"])), None);
        assert_eq!(held.open("f", &names(&["c"])), None);
        assert_eq!(held.open("g", &[]), None);
    }

    #[test]
    fn a_member_taking_more_locks_adds_them_and_a_write_to_a_known_name_updates_it() {
        let mut held = HeldFlows::default();
        held.record(
            flow("r1"),
            &names(&["a"]),
            values(&[("a", Some("1"))]),
            Vec::new(),
        );
        held.record(
            flow("r1"),
            &names(&["b"]),
            values(&[("b", Some("5"))]),
            vec![("a".to_owned(), None)],
        );
        let (_, seen) = held.open("f", &names(&["a", "b"])).expect("both are held");
        assert_eq!(seen, values(&[("a", None), ("b", Some("5"))]));
    }

    #[test]
    fn writing_the_run_state_or_forgetting_the_flow_leaves_nothing_held() {
        let mut held = HeldFlows::default();
        let a = values(&[("a", Some("1"))]);
        held.record(flow("r1"), &names(&["a"]), a.clone(), Vec::new());
        held.record(
            flow("r1"),
            &[],
            a.clone(),
            vec![(RUN_STATE_NAME.to_owned(), Some("{}".to_owned()))],
        );
        assert_eq!(held.open("f", &[]), None);
        held.record(flow("r2"), &names(&["a"]), a, Vec::new());
        held.forget("f");
        assert_eq!(held.open("f", &[]), None);
    }
}
