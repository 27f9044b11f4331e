//! Process-wide locks made safe across `fork()`.
//!
//! A child made by `fork()` has one thread, the one that called it, and a copy of every lock
//! as it was at that instant. A lock some other thread of the parent held then stays held
//! in the child for ever, and the child's first use of it hangs. The store's caches, SQLite's
//! own mutexes and a binding's process-wide state are such locks, and a child that opens a
//! store of its own uses them (a `fork()` with calls in flight on other threads hung 16
//! children in 2,000 on SQLite's shared-memory mutex).
//!
//! Each such lock is registered here once: a `std` mutex with [`hold_across_fork`], anything
//! else inside the crate as a `ForkGuard`. The first registration installs
//! `pthread_atfork` handlers: before a fork, the forking thread takes every registered lock,
//! waiting for any holder to finish; after it, in both processes, it gives them back. The
//! locks concerned are held for microseconds at a time, and never while their holder waits
//! for another of them (so the order they are taken in does not matter), and a fork waits at
//! most that long. (A connection or client inherited across the fork is still refused in the
//! child: see `Runtime`.)
//!
//! The locks are `std` mutexes, which a child can release with a plain store (and a wake-up
//! of no one), not `parking_lot`'s, whose release of a contended lock goes through a
//! process-wide table of waiters that a thread of the parent may have held at the fork.

use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

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

/// A list that only grows, walked without a lock: its entries are leaked, so they live as
/// long as the process, which is what a `pthread_atfork` handler (that may take no lock but
/// the ones it guards) needs. Its operations are sequentially consistent: a walk that starts
/// after a flag was raised sees every entry pushed before the pusher read that flag.
pub(crate) struct GrowOnlyList<T: 'static> {
    newest: AtomicPtr<Node<T>>,
}

struct Node<T: 'static> {
    value: T,
    /// The entry pushed before this one.
    earlier: *const Node<T>,
}

// SAFETY: nodes are leaked and immutable once published; the list hands out only shared
// references to values, which other threads may use when `T` is `Sync`, and a value pushed
// on one thread is reachable from the others, hence `Send`.
unsafe impl<T: Send + Sync> Sync for GrowOnlyList<T> {}

impl<T: Send + Sync> GrowOnlyList<T> {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        GrowOnlyList {
            newest: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Adds `value` (leaked: it lives as long as the process) and returns it.
    pub(crate) fn push(&self, value: T) -> &'static T {
        let node = Box::leak(Box::new(Node {
            value,
            earlier: ptr::null(),
        }));
        let mut newest = self.newest.load(Ordering::SeqCst);
        loop {
            node.earlier = newest;
            match self.newest.compare_exchange_weak(
                newest,
                node,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return &node.value,
                Err(now) => newest = now,
            }
        }
    }

    /// Every value, newest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'static T> {
        let mut node = self.newest.load(Ordering::SeqCst).cast_const();
        std::iter::from_fn(move || {
            // SAFETY: every node is leaked, so it lives as long as the process, and is
            // complete before it is published.
            let current: &'static Node<T> = unsafe { node.as_ref() }?;
            node = current.earlier;
            Some(&current.value)
        })
    }
}

/// Every registered guard.
static GUARDS: GrowOnlyList<&'static dyn ForkGuard> = GrowOnlyList::new();

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
    GUARDS.push(guard);
}

extern "C" fn before_fork() {
    GUARDS.iter().for_each(|guard| guard.before_fork());
}

extern "C" fn in_parent() {
    // SAFETY: `before_fork` ran for this fork on this thread.
    GUARDS
        .iter()
        .for_each(|guard| unsafe { guard.after_fork(false) });
}

extern "C" fn in_child() {
    // SAFETY: `before_fork` ran for this fork on this thread.
    GUARDS
        .iter()
        .for_each(|guard| unsafe { guard.after_fork(true) });
}

/// A mutex the forking thread holds across `fork()`, and the guard it holds it with.
struct HeldAcrossFork<T: 'static> {
    mutex: &'static Mutex<T>,
    /// Written and read only by the thread holding `mutex`, between `before_fork` and
    /// `after_fork`.
    guard: UnsafeCell<Option<MutexGuard<'static, T>>>,
}

// SAFETY: `guard` is only touched by the thread that holds `mutex` (which is what makes it
// exclusive), and the guard never leaves that thread: the child's one thread is the forking
// thread itself.
unsafe impl<T: Send> Sync for HeldAcrossFork<T> {}

impl<T: Send> ForkGuard for HeldAcrossFork<T> {
    fn before_fork(&self) {
        let guard = self.mutex.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: this thread holds `mutex`, so no other thread touches `guard`.
        unsafe { *self.guard.get() = Some(guard) };
    }

    unsafe fn after_fork(&self, _in_child: bool) {
        // SAFETY: this thread holds `mutex` since `before_fork` (in the child too: it is the
        // forking thread), so no other thread touches `guard`; dropping it releases `mutex`.
        drop(unsafe { (*self.guard.get()).take() });
    }
}

/// Makes `mutex`, a process-wide lock that threads take for short moments, safe across every
/// later `fork()` of this process: the forking thread takes it before the fork (waiting for
/// its holder, if any, to give it back) and releases it after, in the parent and in the
/// child, so a child never finds it held by a thread it does not have.
///
/// Call it once per mutex (a mutex registered twice would make a fork wait for itself), and
/// only for a mutex whose holders do not wait, while holding it, for another lock registered
/// here, nor for work of a thread that might be waiting for it.
pub fn hold_across_fork<T: Send + 'static>(mutex: &'static Mutex<T>) {
    register(Box::leak(Box::new(HeldAcrossFork {
        mutex,
        guard: UnsafeCell::new(None),
    })));
}

#[cfg(test)]
mod tests {
    use super::GrowOnlyList;

    #[test]
    fn a_grow_only_list_keeps_every_value_pushed_from_many_threads_newest_first() {
        static LIST: GrowOnlyList<(usize, usize)> = GrowOnlyList::new();
        assert_eq!(LIST.iter().count(), 0);
        std::thread::scope(|scope| {
            for thread in 0..8 {
                scope.spawn(move || {
                    for n in 0..200 {
                        let pushed = LIST.push((thread, n));
                        assert_eq!(*pushed, (thread, n));
                    }
                });
            }
        });
        let mut all: Vec<(usize, usize)> = LIST.iter().copied().collect();
        // Each thread's values come newest first.
        for thread in 0..8 {
            let own: Vec<usize> = all.iter().filter(|v| v.0 == thread).map(|v| v.1).collect();
            assert_eq!(own, (0..200).rev().collect::<Vec<_>>());
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 8 * 200);
    }
}
