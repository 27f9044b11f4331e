//! Process-wide locks made safe across `fork()`.
//!
//! A child made by `fork()` has one thread, the one that called it, and a copy of every lock
//! as it was at that instant. A lock some other thread of the parent held then stays held
//! in the child for ever, and the child's first use of it hangs. The store's caches, SQLite's
//! own mutexes and a binding's process-wide state are such locks, and a child that opens a
//! store of its own uses them (a `fork()` with calls in flight on other threads hung 16
//! children in 2,000 on SQLite's shared-memory mutex).
//!
//! Each such lock is registered here once: a `std` mutex as a [`Mutex`], anything else
//! inside the crate as a `ForkGuard`. `pthread_atfork` handlers make the forking thread take
//! every registered lock before a fork, waiting for any holder to finish, and give them back
//! after it, in both processes. The locks concerned are held for microseconds at a time, and
//! never while their holder waits for another of them (so the order they are taken in does
//! not matter), and a fork waits at most that long. (A connection or client inherited
//! across the fork is still refused in the child: see `Runtime`.)
//!
//! Nothing process-wide is set up lazily where a fork could interrupt the setup on another
//! thread: the child would inherit it as under way and wait for ever for a thread it does
//! not have (a child forked as its parent's threads made their first append hung so). A
//! [`Mutex`] is a constant, registered by its first `lock` under a lock the forking thread
//! takes as well, so a fork comes before or after a registration, never amid one; the
//! handlers are installed by the first registration, and a child forked amid that installs
//! them itself. A value set up once per process, such as SQLite's settings, is a `Once` of
//! this module, whose setup a fork waits for likewise.
//!
//! The locks are `std` mutexes, which a child can release with a plain store (and a wake-up
//! of no one), not `parking_lot`'s, whose release of a contended lock goes through a
//! process-wide table of waiters that a thread of the parent may have held at the fork.

use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{MutexGuard, PoisonError};

/// A process-wide lock made safe across `fork()`.
pub(crate) trait ForkGuard: Sync {
    /// Runs on the forking thread before `fork()`: waits until no other thread holds the
    /// lock, and keeps it from them.
    fn before_fork(&'static self);

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

/// Held while a guard is registered, and by the forking thread from before the fork to
/// after it: a fork never comes amid a registration.
static REGISTRATIONS: Mutex<()> = Mutex::new(());

/// Held while a [`Once`] is set up, and by the forking thread from before the fork to after
/// it (taken before [`REGISTRATIONS`]; a setup may register guards).
static SETUPS: Mutex<()> = Mutex::new(());

/// A value set up once per process, that a fork never catches half set up: a fork waits for
/// a setup under way to end. (A child forked amid a `std::sync::OnceLock`'s initialisation
/// on another thread would wait for ever for that thread at its own first use.)
pub(crate) struct Once<T> {
    value: std::sync::OnceLock<T>,
}

impl<T> Once<T> {
    /// Not set up yet.
    pub(crate) const fn new() -> Self {
        Once {
            value: std::sync::OnceLock::new(),
        }
    }

    /// The value, set up by `setup` if no thread did yet. `setup` must not set up another
    /// [`Once`], nor wait for a lock registered here.
    pub(crate) fn get_or_init(&self, setup: impl FnOnce() -> T) -> &T {
        if let Some(value) = self.value.get() {
            return value;
        }
        install_handlers();
        let _setting_up = SETUPS.lock_unregistered();
        self.value.get_or_init(setup)
    }
}

/// Makes `guard` safe across every later `fork()` of this process. Call it once per lock,
/// while holding none of those registered here.
pub(crate) fn register(guard: &'static dyn ForkGuard) {
    register_once(guard, &AtomicBool::new(false));
}

/// Registers `guard` unless `registered` says it is already, and says so from then on.
fn register_once(guard: &'static dyn ForkGuard, registered: &AtomicBool) {
    install_handlers();
    let _registering = REGISTRATIONS.lock_unregistered();
    if !registered.load(Ordering::SeqCst) {
        GUARDS.push(guard);
        #[cfg(test)]
        tests::pause_if_asked();
        registered.store(true, Ordering::SeqCst);
    }
}

/// Whether the `pthread_atfork` handlers are in place: [`NO_HANDLERS`],
/// [`HANDLERS_INSTALLED`], or the id of the process one of whose threads installs them.
static HANDLERS: AtomicU32 = AtomicU32::new(NO_HANDLERS);
const NO_HANDLERS: u32 = 0;
const HANDLERS_INSTALLED: u32 = u32::MAX;

/// Installs the `pthread_atfork` handlers, once per process and its children (which
/// inherit them).
fn install_handlers() {
    loop {
        let state = HANDLERS.load(Ordering::SeqCst);
        if state == HANDLERS_INSTALLED {
            return;
        }
        let this_process = std::process::id();
        if state == this_process {
            // Another thread is installing them.
            std::thread::yield_now();
            continue;
        }
        // None yet, or this is a child forked before its parent's thread installed them:
        // that thread does not exist here. (Forked after, the child's handler marked them.)
        if HANDLERS
            .compare_exchange(state, this_process, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            // SAFETY: the handlers are plain functions that live as long as the process.
            // Should registration fail (it fails only without memory), forks stay as unsafe
            // as they were without this module.
            unsafe {
                libc::pthread_atfork(Some(before_fork), Some(in_parent), Some(in_child));
            }
            HANDLERS.store(HANDLERS_INSTALLED, Ordering::SeqCst);
            return;
        }
    }
}

extern "C" fn before_fork() {
    SETUPS.before_fork();
    REGISTRATIONS.before_fork();
    GUARDS.iter().for_each(|guard| guard.before_fork());
}

extern "C" fn in_parent() {
    // SAFETY: `before_fork` ran for this fork on this thread.
    unsafe { after_fork(false) };
}

extern "C" fn in_child() {
    // This handler runs, so it is installed, even if the thread installing it is not here.
    HANDLERS.store(HANDLERS_INSTALLED, Ordering::SeqCst);
    // SAFETY: `before_fork` ran for this fork on this thread.
    unsafe { after_fork(true) };
}

/// # Safety
/// Only after [`before_fork`] of the same fork, on its thread.
unsafe fn after_fork(in_child: bool) {
    // SAFETY: `before_fork` took every guard it walked, and registrations, which it holds,
    // added none since; it holds the two locks too.
    unsafe {
        GUARDS.iter().for_each(|guard| guard.after_fork(in_child));
        REGISTRATIONS.after_fork(in_child);
        SETUPS.after_fork(in_child);
    }
}

/// A process-wide `std` mutex that threads take for short moments, made safe across
/// `fork()`: the forking thread takes it before the fork (waiting for its holder, if any, to
/// give it back) and releases it after, in the parent and in the child, so a child never
/// finds it held by a thread it does not have.
///
/// Made in a `static` (its [`Mutex::new`] is `const`), and registered by its first
/// [`Mutex::lock`]. Its holders must not wait, while holding it, for another lock of this
/// kind (nor take one for the first time), nor for work of a thread that might be waiting
/// for it.
pub struct Mutex<T: 'static> {
    mutex: std::sync::Mutex<T>,
    /// Whether it is among [`GUARDS`].
    registered: AtomicBool,
    /// Written and read only by the thread holding `mutex`, between `before_fork` and
    /// `after_fork`.
    held: UnsafeCell<Option<MutexGuard<'static, T>>>,
}

// SAFETY: the value is only reached through `mutex`, which needs `T: Send` to be shared.
// `held` is only touched by the thread that holds `mutex` (which is what makes it
// exclusive), and the guard in it never leaves that thread: the child's one thread is the
// forking thread itself.
unsafe impl<T: Send> Sync for Mutex<T> {}

impl<T: Send> Mutex<T> {
    /// A mutex holding `value`, registered at its first [`Mutex::lock`].
    pub const fn new(value: T) -> Self {
        Mutex {
            mutex: std::sync::Mutex::new(value),
            registered: AtomicBool::new(false),
            held: UnsafeCell::new(None),
        }
    }

    /// Takes the mutex, waiting for its holder. What a holder that panicked left is handed
    /// on as it is: keep in it only values that are whole at every step.
    pub fn lock(&'static self) -> MutexGuard<'static, T> {
        if !self.registered.load(Ordering::SeqCst) {
            register_once(self, &self.registered);
        }
        self.lock_unregistered()
    }

    fn lock_unregistered(&self) -> MutexGuard<'_, T> {
        self.mutex.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Send> ForkGuard for Mutex<T> {
    fn before_fork(&'static self) {
        let guard = self.lock_unregistered();
        // SAFETY: this thread holds `mutex`, so no other thread touches `held`.
        unsafe { *self.held.get() = Some(guard) };
    }

    unsafe fn after_fork(&self, _in_child: bool) {
        // SAFETY: this thread holds `mutex` since `before_fork` (in the child too: it is the
        // forking thread), so no other thread touches `held`; dropping it releases `mutex`.
        drop(unsafe { (*self.held.get()).take() });
    }
}

#[cfg(test)]
mod tests {
    use super::{GrowOnlyList, Mutex, Once};
    use std::cell::RefCell;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    thread_local! {
        /// How long this thread pauses in its next registration, and whom it tells when it
        /// is there.
        static PAUSE: RefCell<Option<(Duration, mpsc::Sender<()>)>> = const { RefCell::new(None) };
    }

    /// Pauses the registering thread as its test asked.
    pub(super) fn pause_if_asked() {
        if let Some((pause, there)) = PAUSE.with(RefCell::take) {
            there.send(()).expect("the test waits");
            std::thread::sleep(pause);
        }
    }

    /// Forks a child that exits with `child()`'s code, and returns that code; panics when
    /// the child hangs (it is then killed).
    fn exit_code_of_child(child: impl FnOnce() -> i32) -> i32 {
        // SAFETY: the child only runs `child`, which takes this module's locks, and ends
        // with `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = child();
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(code) };
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut status = 0;
        loop {
            // SAFETY: polls the child just made, without blocking.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                assert!(libc::WIFEXITED(status), "the child ended so: {status}");
                return libc::WEXITSTATUS(status);
            }
            if Instant::now() >= deadline {
                // SAFETY: kills and reaps the hung child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the child hung");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_fork_amid_a_mutexs_first_lock_leaves_it_free_in_the_child() {
        static FIRST_USE: Mutex<u32> = Mutex::new(0);
        let (there, registering) = mpsc::channel();
        let user = std::thread::spawn(move || {
            PAUSE.with(|pause| *pause.borrow_mut() = Some((Duration::from_millis(100), there)));
            *FIRST_USE.lock() += 1;
        });
        registering.recv().expect("the user registers the mutex");
        // The fork waits for the registration to end: the child finds the mutex free, before
        // or after the user's change. (A fork amid a lazy value's initialisation leaves the
        // child waiting for ever for a thread it does not have.)
        let code = exit_code_of_child(|| if *FIRST_USE.lock() <= 1 { 30 } else { 2 });
        user.join().expect("the user ends");
        assert_eq!(code, 30);
        assert_eq!(*FIRST_USE.lock(), 1);
    }

    #[test]
    fn a_fork_amid_a_setup_waits_for_it_and_the_child_has_its_value() {
        static SET_UP: Once<u32> = Once::new();
        let (there, setting_up) = mpsc::channel();
        let first = std::thread::spawn(move || {
            *SET_UP.get_or_init(|| {
                there.send(()).expect("the test waits");
                std::thread::sleep(Duration::from_millis(100));
                7
            })
        });
        setting_up.recv().expect("the setup began");
        // The child neither waits for the parent's thread nor sets it up again.
        let code = exit_code_of_child(|| match SET_UP.get_or_init(|| 8) {
            7 => 30,
            _ => 2,
        });
        assert_eq!(first.join().expect("the setup ends"), 7);
        assert_eq!(code, 30);
    }

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
