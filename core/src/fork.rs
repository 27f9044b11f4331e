//! Process-wide state across `fork()`.
//!
//! A child made by `fork()` has one thread, the one that called it, and a copy of every lock
//! as it was at that instant. A lock some other thread of the parent held then stays held
//! in the child for ever, and the child's first use of it hangs. The store's caches and
//! SQLite's own mutexes are such locks, and a child that opens a store of its own uses
//! them (a `fork()` with calls in flight on other threads hung 16 children in 2,000 on
//! SQLite's shared-memory mutex).
//!
//! Each such lock is registered here once, as a [`ForkGuard`]. The first registration
//! installs `pthread_atfork` handlers: before a fork, the forking thread takes every
//! registered lock, waiting for any holder to finish; after it, in both processes, it gives
//! them back. The locks concerned are held for microseconds at a time, and never while their
//! holder waits for another of them (so the order they are taken in does not matter), and a
//! fork waits at most that long. (A connection or client inherited across the fork is still
//! refused in the child: see `Runtime`.)

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

/// A process-wide lock made safe across `fork()`.
pub(crate) trait ForkGuard: Sync {
    /// Runs on the forking thread before `fork()`: waits until no other thread holds the
    /// lock, and keeps it from them.
    fn before_fork(&self);

    /// Runs on the forking thread after `fork()`, in the parent (`in_child` false) and in the
    /// child (`in_child` true): gives the lock back.
    ///
    /// # Safety
    /// Only after [`ForkGuard::before_fork`] of the same fork.
    unsafe fn after_fork(&self, in_child: bool);
}

/// A registered guard, in a list that only grows (entries are leaked, and live as long as
/// the process), so the handlers walk it without a lock of their own.
struct Entry {
    guard: &'static dyn ForkGuard,
    /// The entry registered before this one.
    earlier: *const Entry,
}

/// The newest entry.
static NEWEST: AtomicPtr<Entry> = AtomicPtr::new(ptr::null_mut());

/// Makes `guard` safe across every later `fork()` of this process. Call it once per lock.
pub(crate) fn register(guard: &'static dyn ForkGuard) {
    static HANDLERS: Once = Once::new();
    HANDLERS.call_once(|| {
        // SAFETY: the handlers are plain functions that live as long as the process.
        // Should registration fail (it fails only without memory), forks stay as unsafe as
        // they were without this module.
        unsafe {
            libc::pthread_atfork(Some(before_fork), Some(in_parent), Some(in_child));
        }
    });
    let entry = Box::leak(Box::new(Entry {
        guard,
        earlier: ptr::null(),
    }));
    let mut newest = NEWEST.load(Ordering::Acquire);
    loop {
        entry.earlier = newest;
        match NEWEST.compare_exchange_weak(newest, entry, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(now) => newest = now,
        }
    }
}

/// Calls `each` with every registered guard, newest first.
fn for_each_guard(each: impl Fn(&'static dyn ForkGuard)) {
    let mut entry = NEWEST.load(Ordering::Acquire).cast_const();
    // SAFETY: every entry is leaked, so it lives as long as the process, and is complete
    // before it is published.
    while let Some(current) = unsafe { entry.as_ref() } {
        each(current.guard);
        entry = current.earlier;
    }
}

extern "C" fn before_fork() {
    for_each_guard(|guard| guard.before_fork());
}

extern "C" fn in_parent() {
    // SAFETY: `before_fork` ran for this fork on this thread.
    for_each_guard(|guard| unsafe { guard.after_fork(false) });
}

extern "C" fn in_child() {
    // SAFETY: `before_fork` ran for this fork on this thread.
    for_each_guard(|guard| unsafe { guard.after_fork(true) });
}

/// A [`parking_lot::Mutex`] held by the forking thread across `fork()`, so the child finds
/// it free and its contents whole.
pub(crate) struct MutexAcrossFork<T: Send + 'static>(pub(crate) &'static parking_lot::Mutex<T>);

impl<T: Send + 'static> ForkGuard for MutexAcrossFork<T> {
    fn before_fork(&self) {
        // The guard is forgotten, not dropped: the lock stays held until `after_fork`.
        std::mem::forget(self.0.lock());
    }

    unsafe fn after_fork(&self, _in_child: bool) {
        // SAFETY: this thread holds the lock since `before_fork`, with no live guard, which
        // is what `force_unlock` requires; parking_lot's lock state is stateless.
        unsafe { self.0.force_unlock(Default::default()) };
    }
}

/// Registers `mutex` as a [`MutexAcrossFork`] (leaking the small wrapper once).
pub(crate) fn register_mutex<T: Send + 'static>(mutex: &'static parking_lot::Mutex<T>) {
    register(Box::leak(Box::new(MutexAcrossFork(mutex))));
}
