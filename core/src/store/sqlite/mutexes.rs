//! SQLite's mutexes across `fork()`, and its memory statistics turned off.
//!
//! SQLite's mutexes guard state shared by the whole process: the records of its open files
//! (taken on every open and close), its allocator's statistics, and per file the
//! shared-memory index every transaction uses. A child made by `fork()` finds each as it was
//! at that instant; if a thread of the parent held one then, the child's first use of it
//! waits for ever. With a call in flight in the parent, 16 children in 2,000 hung so, every
//! one in `unixShmMap` (those children opened their parent's file, which a child may no
//! longer do: see `refuse_if_open_before_fork` in `sqlite.rs`).
//!
//! [`install`], before SQLite is first initialised in the process, wraps SQLite's own mutex
//! methods (`SQLITE_CONFIG_MUTEX`) so that each thread marks, in a slot of its own, whether it
//! holds any SQLite mutex, and registers a [`ForkGuard`]: before a fork, the forking thread
//! raises a flag that keeps threads from taking their first SQLite mutex, and waits until no
//! other thread holds one. SQLite holds its mutexes for microseconds: never while it sleeps
//! on a busy file, and never while it waits for the disk on a connection opened without a
//! mutex of its own, as all of the store's are. After the fork both processes lower the
//! flag, and the child forgets the slots of the threads it does not have.
//!
//! The cost is a locked instruction on the thread's own slot when a thread takes its
//! outermost SQLite mutex. [`install`] also turns off SQLite's memory statistics
//! (`SQLITE_CONFIG_MEMSTATUS`), which nothing in attrflow reads and which took a
//! process-wide mutex on every allocation SQLite made.
//!
//! Both settings must precede SQLite's initialisation: if something else in the process
//! used SQLite first, nothing is installed and a fork is as safe as SQLite alone makes it.

use std::cell::Cell;
use std::os::raw::c_int;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use rusqlite::ffi;

use crate::fork::{self, ForkGuard, GrowOnlyList};

/// SQLite's own mutex methods, which ours wrap; set once, before ours are installed.
static ORIGINAL: OnceLock<ffi::sqlite3_mutex_methods> = OnceLock::new();

/// Raised by the forking thread while it waits for the holders to finish.
static FORKING: AtomicBool = AtomicBool::new(false);

/// Every thread's slot; a slot is reused by a later thread once its thread has ended.
static SLOTS: GrowOnlyList<Slot> = GrowOnlyList::new();

/// Whether one thread holds an SQLite mutex.
struct Slot {
    holds: AtomicBool,
    /// Whether a live thread owns this slot.
    owned: AtomicBool,
}

impl Slot {
    /// Marks the thread as holding a mutex, once no fork is waiting.
    fn enter(&self) {
        loop {
            self.holds.store(true, Ordering::SeqCst);
            if !FORKING.load(Ordering::SeqCst) {
                return;
            }
            self.holds.store(false, Ordering::SeqCst);
            while FORKING.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
        }
    }
}

/// The slot of the current thread, given back when the thread ends.
struct OwnSlot(&'static Slot);

impl OwnSlot {
    fn claim() -> Self {
        let free = SLOTS.iter().find(|slot| {
            slot.owned
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        OwnSlot(free.unwrap_or_else(|| {
            SLOTS.push(Slot {
                holds: AtomicBool::new(false),
                owned: AtomicBool::new(true),
            })
        }))
    }
}

impl Drop for OwnSlot {
    fn drop(&mut self) {
        self.0.holds.store(false, Ordering::SeqCst);
        self.0.owned.store(false, Ordering::Release);
    }
}

thread_local! {
    static OWN_SLOT: OwnSlot = OwnSlot::claim();
    /// How many SQLite mutexes this thread holds.
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Notes that the thread takes a mutex (its first marks its slot, waiting out a fork).
fn taking() {
    let held = HELD.get();
    if held == 0 {
        // During the thread's own end its slot is gone: it is marked no more.
        let _ = OWN_SLOT.try_with(|own| own.0.enter());
    }
    HELD.set(held + 1);
}

/// Notes that the thread gave a mutex back (its last unmarks its slot).
fn gave_back() {
    let held = HELD.get().saturating_sub(1);
    HELD.set(held);
    if held == 0 {
        let _ = OWN_SLOT.try_with(|own| own.0.holds.store(false, Ordering::SeqCst));
    }
}

unsafe extern "C" fn enter(mutex: *mut ffi::sqlite3_mutex) {
    taking();
    if let Some(enter) = ORIGINAL.get().and_then(|original| original.xMutexEnter) {
        // SAFETY: SQLite passes a mutex its own methods allocated.
        unsafe { enter(mutex) };
    }
}

unsafe extern "C" fn try_enter(mutex: *mut ffi::sqlite3_mutex) -> c_int {
    taking();
    let code = match ORIGINAL.get().and_then(|original| original.xMutexTry) {
        // SAFETY: as in `enter`.
        Some(try_enter) => unsafe { try_enter(mutex) },
        None => ffi::SQLITE_BUSY,
    };
    if code != ffi::SQLITE_OK {
        gave_back();
    }
    code
}

unsafe extern "C" fn leave(mutex: *mut ffi::sqlite3_mutex) {
    if let Some(leave) = ORIGINAL.get().and_then(|original| original.xMutexLeave) {
        // SAFETY: as in `enter`.
        unsafe { leave(mutex) };
    }
    gave_back();
}

/// Waits out the holders of SQLite mutexes around a `fork()`.
struct SqliteMutexes;

impl ForkGuard for SqliteMutexes {
    fn before_fork(&'static self) {
        FORKING.store(true, Ordering::SeqCst);
        let own = OWN_SLOT
            .try_with(|own| ptr::from_ref(own.0))
            .unwrap_or(ptr::null());
        for slot in SLOTS.iter().filter(|slot| !ptr::eq(*slot, own)) {
            let mut spins = 0u32;
            while slot.holds.load(Ordering::SeqCst) {
                spins += 1;
                if spins < 64 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
            }
        }
    }

    unsafe fn after_fork(&self, in_child: bool) {
        if in_child {
            let own = OWN_SLOT
                .try_with(|own| ptr::from_ref(own.0))
                .unwrap_or(ptr::null());
            // The child has no other thread: their slots are free.
            for slot in SLOTS.iter().filter(|slot| !ptr::eq(*slot, own)) {
                slot.holds.store(false, Ordering::SeqCst);
                slot.owned.store(false, Ordering::SeqCst);
            }
        }
        FORKING.store(false, Ordering::SeqCst);
    }
}

/// Installs the wrapped mutexes and turns off memory statistics, once per process; reports
/// whether they are in place (false when SQLite was initialised by something else first).
pub(super) fn install() -> bool {
    static INSTALLED: fork::Once<bool> = fork::Once::new();
    // SAFETY: `install_now` runs once, before this module's callers open any connection.
    *INSTALLED.get_or_init(|| unsafe { install_now() })
}

/// # Safety
/// No other thread may use SQLite meanwhile (`sqlite3_config` is not thread-safe).
unsafe fn install_now() -> bool {
    // SAFETY: each call follows SQLite's rules for `sqlite3_config`: made while SQLite is
    // not initialised, which the first one checks (it fails once SQLite is initialised).
    unsafe {
        let off: c_int = 0;
        if ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, off) != ffi::SQLITE_OK {
            return false;
        }
        // SQLite fills in its default methods when it initialises; shut down again, it keeps
        // them, and they can be read and wrapped.
        if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
            return false;
        }
        ffi::sqlite3_shutdown();
        let mut original: ffi::sqlite3_mutex_methods = std::mem::zeroed();
        if ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETMUTEX, ptr::from_mut(&mut original))
            != ffi::SQLITE_OK
            || original.xMutexEnter.is_none()
            || original.xMutexTry.is_none()
            || original.xMutexLeave.is_none()
            || ORIGINAL.set(original).is_err()
        {
            ffi::sqlite3_initialize();
            return false;
        }
        let wrapped = ffi::sqlite3_mutex_methods {
            xMutexEnter: Some(enter),
            xMutexTry: Some(try_enter),
            xMutexLeave: Some(leave),
            ..original
        };
        // SQLite copies the methods.
        if ffi::sqlite3_config(ffi::SQLITE_CONFIG_MUTEX, ptr::from_ref(&wrapped)) != ffi::SQLITE_OK
        {
            ffi::sqlite3_initialize();
            return false;
        }
        fork::register(&SqliteMutexes);
        ffi::sqlite3_initialize() == ffi::SQLITE_OK
    }
}
