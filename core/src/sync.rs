//! The core's locks: `std::sync`'s, without poisoning.
//!
//! A process forked from one that runs calls (a Python web server's workers, a
//! `multiprocessing` pool) keeps a copy of every lock as it was at that instant, and only
//! the forking thread. `parking_lot`'s locks, which the core used before, park and wake
//! their waiters through a process-wide table of queues; when a thread of the parent was
//! inside that table as the fork happened, the child inherits a queue in the middle of a
//! change, and its own threads' first wait on a lock that hashes there hangs or aborts
//! ("aborting due to panic in parking lot"): 6 children in 150, forked while the parent's
//! threads queued for one flow, in `tests/fork.rs`. `std`'s locks keep their waiters in the
//! lock word itself (a futex on Linux), so a child meets only the locks its own threads
//! take, and those that [`crate::fork`] holds across the fork.
//!
//! Like `parking_lot`'s, which the code was written for, these locks are not poisoned: a
//! lock whose holder panicked is taken by the next caller as it is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::PoisonError;
use std::time::Instant;

pub(crate) use std::sync::MutexGuard;

/// A mutual-exclusion lock ([`std::sync::Mutex`]) whose `lock` ignores poisoning.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T: ?Sized>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    /// A new, unlocked mutex holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Mutex(std::sync::Mutex::new(value))
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the lock, waiting for it.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value, through the only reference to the mutex (no locking needed).
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A condition variable ([`std::sync::Condvar`]) waited on with a [`Mutex`]'s guard, that
/// makes no system call to notify nobody.
///
/// `std`'s notifies always wake the futex, waiters or not (a system call on every commit
/// and every answered call here: about 9 % of a lone register's rate, measured);
/// `parking_lot`'s did not. So this one counts its waiters, each counted while it holds the
/// mutex, and notifies only when there are some. That loses no wake-up as long as the notifier
/// changes what the waiters wait for under the same mutex before it notifies (as every
/// notifier in the core does): a waiter counted before the notifier took the mutex is seen,
/// and one that takes the mutex after it sees the change and does not wait.
#[derive(Debug)]
pub(crate) struct Condvar {
    inner: std::sync::Condvar,
    waiters: AtomicUsize,
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

impl Condvar {
    /// A new condition variable.
    pub(crate) const fn new() -> Self {
        Condvar {
            inner: std::sync::Condvar::new(),
            waiters: AtomicUsize::new(0),
        }
    }

    /// Wakes one waiter, if any.
    pub(crate) fn notify_one(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.inner.notify_one();
        }
    }

    /// Wakes every waiter, if any.
    pub(crate) fn notify_all(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.inner.notify_all();
        }
    }

    /// Runs `wait` (which releases the guard's mutex while it waits) counted as a waiter.
    fn counted<R>(&self, wait: impl FnOnce() -> R) -> R {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let result = wait();
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Releases `guard`'s lock until woken (or spuriously), then takes it again.
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.counted(|| self.inner.wait(guard))
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Like [`Condvar::wait`], but at most until `deadline`; with whether it has passed.
    pub(crate) fn wait_until<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Instant,
    ) -> (MutexGuard<'a, T>, bool) {
        let left = deadline.saturating_duration_since(Instant::now());
        let (guard, _) = self
            .counted(|| self.inner.wait_timeout(guard, left))
            .unwrap_or_else(PoisonError::into_inner);
        (guard, Instant::now() >= deadline)
    }

    /// Like [`Condvar::wait_until`], waiting while `condition` holds, at most `timeout`.
    pub(crate) fn wait_while_for<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        condition: impl FnMut(&mut T) -> bool,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        self.counted(|| self.inner.wait_timeout_while(guard, timeout, condition))
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }
}

/// A reader-writer lock ([`std::sync::RwLock`]) that ignores poisoning.
#[derive(Debug, Default)]
pub(crate) struct RwLock<T>(std::sync::RwLock<T>);

impl<T> RwLock<T> {
    /// A new, unlocked lock holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        RwLock(std::sync::RwLock::new(value))
    }

    /// Shared access, waiting for a writer to finish.
    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Exclusive access, waiting for every other holder to finish.
    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}
