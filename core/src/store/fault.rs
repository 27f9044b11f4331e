//! Failures injected into a store at chosen points of a commit, so tests can prove without
//! timing luck that a commit failing anywhere leaves nothing partial and that the next call
//! succeeds, and crashes at exact points ([`FaultPlan::kill_at`]) for the crash tests. Every
//! point is reached by the SQLite store; the PostgreSQL store reaches
//! [`FaultPoint::AtCommit`] and [`FaultPoint::AfterCommit`] of a group.
//!
//! Every store owns a [`FaultPlan`]; nothing arms it unless the crate is built with the
//! `fault-injection` feature, which adds `SqliteStore::faults`. Unarmed, a
//! point costs one atomic load.
//!
//! ```ignore
//! // with `--features fault-injection`
//! store.faults().fail_at(FaultPoint::AtCommit, 0);
//! assert!(archive.register("s-1", "s-1@example.com").is_err()); // rolled back by SQLite
//! archive.register("s-1", "s-1@example.com")?; // the retry commits
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;

use crate::error::{Error, Result};

/// A point in the write path of one transaction where a fault can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultPoint {
    /// The handler has run; no row is written yet.
    BeforeWrites,
    /// The first row of the write set is written, the others are not.
    AfterFirstWrite,
    /// Every row is written; `COMMIT` has not been sent.
    BeforeCommit,
    /// SQLite is committing: a commit hook turns the `COMMIT` into a rollback, so the
    /// commit really fails inside SQLite.
    AtCommit,
    /// The commit succeeded but the caller is told it failed: the outcome a caller sees when
    /// a connection drops right after `COMMIT`.
    AfterCommit,
}

impl FaultPoint {
    /// Every point, in the order a commit reaches them.
    pub const ALL: [FaultPoint; 5] = [
        FaultPoint::BeforeWrites,
        FaultPoint::AfterFirstWrite,
        FaultPoint::BeforeCommit,
        FaultPoint::AtCommit,
        FaultPoint::AfterCommit,
    ];
}

impl fmt::Display for FaultPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            FaultPoint::BeforeWrites => "before writes",
            FaultPoint::AfterFirstWrite => "after the first write",
            FaultPoint::BeforeCommit => "before commit",
            FaultPoint::AtCommit => "at commit",
            FaultPoint::AfterCommit => "after commit",
        };
        f.write_str(name)
    }
}

/// What an armed fault does when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// The commit (or the call) fails with a storage error.
    Fail,
    /// The process kills itself with SIGKILL on the spot, as a crash there would end it.
    Kill,
}

/// The faults armed on one store: each fires once, when its point is reached for the
/// `(passes + 1)`-th time after arming.
#[derive(Debug, Default)]
pub struct FaultPlan {
    armed: AtomicBool,
    pending: Mutex<Vec<(FaultPoint, u32, Action)>>,
    fired: AtomicU64,
    max_page_count: Mutex<Option<u32>>,
}

/// SQLite's own largest `max_page_count`, restored when a page limit is lifted.
const SQLITE_MAX_PAGE_COUNT: u32 = 0xFFFF_FFFE;

impl FaultPlan {
    /// Arms one fault at `point`, letting the point pass `passes` times first.
    pub fn fail_at(&self, point: FaultPoint, passes: u32) {
        self.arm(point, passes, Action::Fail);
    }

    /// Arms a crash at `point`, letting it pass `passes` times first: when due, the process
    /// kills itself with SIGKILL right there (for crash tests that need a kill at an exact
    /// point, such as [`FaultPoint::AfterCommit`]: committed, nobody answered yet).
    pub fn kill_at(&self, point: FaultPoint, passes: u32) {
        self.arm(point, passes, Action::Kill);
    }

    fn arm(&self, point: FaultPoint, passes: u32, action: Action) {
        self.pending.lock().push((point, passes, action));
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Disarms every pending fault.
    pub fn clear(&self) {
        self.pending.lock().clear();
    }

    /// How many faults have fired since the store was opened.
    pub fn fired(&self) -> u64 {
        self.fired.load(Ordering::SeqCst)
    }

    /// Caps the database at `pages` pages (`PRAGMA max_page_count` on every connection the
    /// store hands out from now on), as a full disk would; `None` lifts the cap.
    pub fn limit_pages(&self, pages: Option<u32>) {
        *self.max_page_count.lock() = pages;
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Fails with a storage error when a fault armed at `point` is due.
    pub(crate) fn check(&self, point: FaultPoint) -> Result<()> {
        if self.take(point) {
            return Err(Error::storage(format!("injected fault {point}")));
        }
        Ok(())
    }

    /// Whether a fault armed at `point` is due now; a due crash ends the process here.
    fn take(&self, point: FaultPoint) -> bool {
        match self.due(point) {
            Some(Action::Kill) => kill_this_process(),
            Some(Action::Fail) => true,
            None => false,
        }
    }

    /// Installs the commit hook through which [`FaultPoint::AtCommit`] fails a commit inside
    /// SQLite; without the `fault-injection` feature there is nothing to install.
    pub(crate) fn attach(
        plan: &Arc<Self>,
        conn: &mut rusqlite::Connection,
    ) -> rusqlite::Result<()> {
        #[cfg(feature = "fault-injection")]
        {
            let plan = Arc::clone(plan);
            conn.commit_hook(Some(move || plan.take(FaultPoint::AtCommit)))?;
        }
        #[cfg(not(feature = "fault-injection"))]
        let _ = (plan, conn);
        Ok(())
    }

    /// Applies the page cap, if one was ever set, to a connection being handed out.
    pub(crate) fn prepare(&self, conn: &rusqlite::Connection) -> rusqlite::Result<()> {
        if !self.armed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let pages = self.max_page_count.lock().unwrap_or(SQLITE_MAX_PAGE_COUNT);
        conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
    }

    fn due(&self, point: FaultPoint) -> Option<Action> {
        if !self.armed.load(Ordering::SeqCst) {
            return None;
        }
        let mut pending = self.pending.lock();
        let index = pending.iter().position(|(p, _, _)| *p == point)?;
        if pending[index].1 > 0 {
            pending[index].1 -= 1;
            return None;
        }
        let (_, _, action) = pending.remove(index);
        self.fired.fetch_add(1, Ordering::SeqCst);
        Some(action)
    }
}

/// Ends this process with SIGKILL: no unwinding, no destructor, no buffer flushed.
fn kill_this_process() -> ! {
    let pid = std::process::id().to_string();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status();
    // No `kill` to run: end at once all the same.
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_fires_once_after_its_passes() {
        let plan = FaultPlan::default();
        assert!(plan.check(FaultPoint::BeforeCommit).is_ok());
        plan.fail_at(FaultPoint::BeforeCommit, 1);
        assert!(plan.check(FaultPoint::BeforeWrites).is_ok());
        assert!(plan.check(FaultPoint::BeforeCommit).is_ok());
        let error = plan.check(FaultPoint::BeforeCommit).unwrap_err();
        assert_eq!(error, Error::storage("injected fault before commit"));
        assert!(plan.check(FaultPoint::BeforeCommit).is_ok());
        assert_eq!(plan.fired(), 1);
    }
}
