//! How a connection waits for a lock another connection holds on the file.
//!
//! SQLite's own `busy_timeout` handler sleeps 1, 2, 5, 10, 15, 20, 25 … ms between tries,
//! so a wait for a lock held 1.1 ms lasts 3 ms, one held 3.1 ms lasts 8 ms and one held
//! 8.1 ms lasts 18 ms. The locks a store's connections meet are held for a few
//! milliseconds at most: the `RESTART` step of the checkpoint thread (`checkpoint.rs`) at
//! `synchronous=NORMAL`, a group commit of another process. Measured with SQLite's handler,
//! one NORMAL register in about 380 waited for that step and took 8.6 or 18.9 ms, where the
//! step held the lock for about 3 ms (bench/notes/4-redis.md).
//!
//! [`install`] puts this handler in its place. It sleeps a quarter of the wait so far, at
//! least 50 µs and at most [`LONGEST_SLEEP`], so a wait ends at most about a quarter later
//! than the lock was freed, after a few tries (about 30 for a wait of 100 ms). It gives
//! up, as SQLite's does, once the connection's busy timeout has passed since the statement's
//! first try (measured on the clock, not summed from the sleeps), and never sleeps past it: the
//! statement then fails with `SQLITE_BUSY`, as before.
//!
//! A writer of this process that begins its transaction through [`behind_restarts`] and
//! finds the file busy while the file's checkpoint thread runs its `RESTART` step waits for
//! that step's end instead of sleeping, woken by the thread as the step ends
//! (`checkpoint.rs`): measured with a lone `synchronous=NORMAL` caller, sleeping returned
//! about 0.45 ms after the step had ended (bench/notes/4-redis.md).

use std::cell::{Cell, RefCell};
use std::os::raw::{c_int, c_void};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{ffi, Connection};

use super::restarts::Restarts;

/// The shortest sleep: the first ones of a wait.
const SHORTEST_SLEEP: Duration = Duration::from_micros(50);

/// The longest single sleep: a waiter looks again at least this often.
const LONGEST_SLEEP: Duration = Duration::from_millis(10);

thread_local! {
    /// When the wait of this thread's current statement began. SQLite calls the handler on
    /// the thread running the statement, counting its calls from 0 anew at each statement's
    /// execution (as its own handler does, a statement that waits twice waits at most the
    /// timeout in all), and a thread runs one statement at a time.
    static WAIT_STARTED: Cell<Option<Instant>> = const { Cell::new(None) };

    /// The `RESTART` steps the statement this thread runs now waits for instead of
    /// sleeping (see [`behind_restarts`]).
    static RESTARTS: RefCell<Option<Arc<Restarts>>> = const { RefCell::new(None) };
}

/// Runs `statement` (a write transaction's beginning) so that, finding the file busy while
/// `restarts` has a `RESTART` step running, it waits for that step's end rather than
/// sleeping.
pub(super) fn behind_restarts<T>(restarts: &Arc<Restarts>, statement: impl FnOnce() -> T) -> T {
    /// Clears the thread's [`RESTARTS`] however `statement` ends.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            RESTARTS.with(|current| {
                if let Ok(mut current) = current.try_borrow_mut() {
                    *current = None;
                }
            });
        }
    }
    RESTARTS.with(|current| {
        if let Ok(mut current) = current.try_borrow_mut() {
            *current = Some(Arc::clone(restarts));
        }
    });
    let _clear = Clear;
    statement()
}

/// Makes `conn` wait for a busy file with this module's handler, at most `timeout`.
pub(super) fn install(conn: &Connection, timeout: Duration) -> rusqlite::Result<()> {
    // The timeout travels as the handler's context, a number rather than a pointer, so
    // nothing needs to outlive the connection.
    let micros = usize::try_from(timeout.as_micros()).unwrap_or(usize::MAX);
    // SAFETY: `conn.handle()` is the open connection's handle; the handler reads its
    // context as a number and never dereferences it.
    let code =
        unsafe { ffi::sqlite3_busy_handler(conn.handle(), Some(wait), micros as *mut c_void) };
    if code == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            Some("cannot install the busy handler".into()),
        ))
    }
}

/// How long to sleep before the next try, or `None` to give up: `waited` into a wait of at
/// most `timeout`. A quarter of the wait so far, at least [`SHORTEST_SLEEP`] and at most
/// [`LONGEST_SLEEP`], so a wait ends at most about a quarter later than the lock was freed.
fn next_sleep(waited: Duration, timeout: Duration) -> Option<Duration> {
    let left = timeout.checked_sub(waited).filter(|left| !left.is_zero())?;
    Some((waited / 4).clamp(SHORTEST_SLEEP, LONGEST_SLEEP).min(left))
}

/// SQLite's busy callback: returns non-zero to try again, zero to give up.
extern "C" fn wait(context: *mut c_void, count: c_int) -> c_int {
    let timeout = Duration::from_micros(context as usize as u64);
    let now = Instant::now();
    let started = WAIT_STARTED.with(|started| {
        if count == 0 {
            started.set(Some(now));
        }
        started.get().unwrap_or(now)
    });
    let waited = now.duration_since(started);
    match next_sleep(waited, timeout) {
        Some(sleep) => {
            let left = timeout.saturating_sub(waited);
            let restarts = RESTARTS.with(|current| {
                current
                    .try_borrow()
                    .ok()
                    .and_then(|current| current.as_ref().map(Arc::clone))
            });
            if !restarts.is_some_and(|restarts| restarts.wait_for_end(left)) {
                #[cfg(test)]
                tests::SLEEPS.with(|sleeps| sleeps.set(sleeps.get() + 1));
                std::thread::sleep(sleep);
            }
            1
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// How many times the handler slept on this thread.
        pub(super) static SLEEPS: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn a_wait_sleeps_a_quarter_of_its_length_within_bounds() {
        let timeout = Duration::from_secs(5);
        let sleep = |waited_us: u64| {
            next_sleep(Duration::from_micros(waited_us), timeout).map(|s| s.as_micros())
        };
        assert_eq!(sleep(0), Some(50));
        assert_eq!(sleep(100), Some(50));
        assert_eq!(sleep(2_000), Some(500));
        assert_eq!(sleep(12_000), Some(3_000));
        assert_eq!(sleep(1_000_000), Some(10_000));
    }

    #[test]
    fn a_wait_never_sleeps_past_its_timeout_and_gives_up_once_it_has_passed() {
        let timeout = Duration::from_millis(5);
        assert_eq!(
            next_sleep(Duration::from_micros(4_900), timeout),
            Some(Duration::from_micros(100))
        );
        assert_eq!(next_sleep(timeout, timeout), None);
        assert_eq!(next_sleep(Duration::from_secs(1), timeout), None);
        assert_eq!(next_sleep(Duration::ZERO, Duration::ZERO), None);
    }

    /// A file with one table, a connection holding its write lock, and a connection
    /// waiting with this module's handler for at most `timeout`.
    fn locked_file(timeout: Duration) -> (tempfile::TempDir, Connection, Connection) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("busy.db");
        let holder = Connection::open(&path).expect("open");
        holder
            .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE;")
            .expect("lock");
        let waiter = Connection::open(&path).expect("open");
        install(&waiter, timeout).expect("install");
        (dir, holder, waiter)
    }

    #[test]
    fn a_writer_blocked_by_another_connection_goes_on_once_the_lock_is_freed() {
        let (_dir, holder, waiter) = locked_file(Duration::from_secs(30));
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            holder
                .execute_batch("INSERT INTO t VALUES (0); COMMIT")
                .expect("unlock");
        });
        waiter
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")
            .expect("the waiter writes once the lock is freed");
        release.join().expect("the holder thread");
        let rows: Vec<i64> = waiter
            .prepare("SELECT x FROM t ORDER BY rowid")
            .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect())
            .expect("read");
        assert_eq!(rows, [0, 1], "the waiter wrote after the holder committed");
    }

    #[test]
    fn a_writer_gives_up_with_busy_once_its_timeout_has_passed() {
        let (_dir, _holder, waiter) = locked_file(Duration::from_millis(30));
        let started = Instant::now();
        let error = waiter
            .execute_batch("BEGIN IMMEDIATE")
            .expect_err("the file stays locked");
        assert_eq!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy)
        );
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn a_writer_behind_a_restart_step_waits_for_its_end_instead_of_sleeping() {
        let (_dir, holder, waiter) = locked_file(Duration::from_secs(30));
        let restarts = Arc::new(Restarts::default());
        let running = Arc::new(std::sync::Barrier::new(2));
        let step = {
            let (restarts, running) = (Arc::clone(&restarts), Arc::clone(&running));
            std::thread::spawn(move || {
                restarts.run(|| {
                    running.wait();
                    std::thread::sleep(Duration::from_millis(50));
                    holder.execute_batch("COMMIT")
                })
            })
        };
        running.wait();
        SLEEPS.with(|sleeps| sleeps.set(0));
        behind_restarts(&restarts, || {
            waiter.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")
        })
        .expect("the waiter writes once the step has ended");
        step.join()
            .expect("the step's thread")
            .expect("the step commits");
        assert_eq!(
            SLEEPS.with(Cell::get),
            0,
            "the waiter slept instead of waiting for the step's end"
        );
    }
}
