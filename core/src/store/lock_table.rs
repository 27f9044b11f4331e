//! Fail-fast, all-or-nothing locks on (flow ID, physical name) pairs within one process.

use std::collections::HashSet;
use std::sync::Arc;

use crate::sync::Mutex;

use crate::error::{Error, Result};

/// The locks held in this process on one store.
#[derive(Debug, Default)]
pub struct LockTable {
    held: Mutex<HashSet<(String, String)>>,
}

impl LockTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes every lock or none. A held lock fails at once with
    /// [`Error::LockConflict`]; nothing ever waits. The locks are released when the guard
    /// drops, which also happens when a handler panics.
    pub fn try_lock_all(self: &Arc<Self>, flow_id: &str, names: &[String]) -> Result<LockGuard> {
        let keys: Vec<(String, String)> = names
            .iter()
            .map(|name| (flow_id.to_owned(), name.clone()))
            .collect();
        let mut held = self.held.lock();
        let busy: Vec<&str> = keys
            .iter()
            .filter(|key| held.contains(*key))
            .map(|(_, name)| name.as_str())
            .collect();
        if !busy.is_empty() {
            return Err(Self::conflict(flow_id, &busy));
        }
        held.extend(keys.iter().cloned());
        Ok(LockGuard {
            table: Arc::clone(self),
            keys,
        })
    }

    /// The names among `names` of `flow_id` that are held now.
    pub fn held_among(&self, flow_id: &str, names: &[String]) -> Vec<String> {
        if names.is_empty() {
            return Vec::new();
        }
        let held = self.held.lock();
        names
            .iter()
            .filter(|name| held.contains(&(flow_id.to_owned(), (*name).clone())))
            .cloned()
            .collect()
    }

    /// The error of a call that found `busy` of `flow_id` locked.
    pub fn conflict(flow_id: &str, busy: &[impl AsRef<str>]) -> Error {
        let busy: Vec<&str> = busy.iter().map(AsRef::as_ref).collect();
        Error::LockConflict(format!(
            "one or more attribute keys are locked: flow {flow_id:?}, {}",
            busy.join(", ")
        ))
    }

    /// How many locks are held now.
    pub fn held_count(&self) -> usize {
        self.held.lock().len()
    }
}

/// Locks taken by [`LockTable::try_lock_all`]; dropping it releases them.
#[derive(Debug)]
pub struct LockGuard {
    table: Arc<LockTable>,
    keys: Vec<(String, String)>,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let mut held = self.table.held.lock();
        for key in &self.keys {
            held.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_held_lock_fails_fast_and_takes_nothing() {
        let table = Arc::new(LockTable::new());
        let first = table.try_lock_all("f", &names(&["a", "b"])).unwrap();
        let err = table.try_lock_all("f", &names(&["b", "c"])).unwrap_err();
        assert_eq!(
            err,
            Error::LockConflict(r#"one or more attribute keys are locked: flow "f", b"#.into())
        );
        assert_eq!(table.held_count(), 2, "the failed call took no lock on c");
        let other_flow = table.try_lock_all("g", &names(&["a"])).unwrap();
        drop(first);
        drop(other_flow);
        assert_eq!(table.held_count(), 0);
        assert!(table.try_lock_all("f", &names(&["b", "c"])).is_ok());
    }

    #[test]
    fn locks_are_released_when_a_holder_panics() {
        let table = Arc::new(LockTable::new());
        let inner = Arc::clone(&table);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _guard = inner.try_lock_all("f", &names(&["a"])).unwrap();
            panic!("handler bug");
        }));
        assert!(result.is_err());
        assert_eq!(table.held_count(), 0);
    }
}
