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

use std::cell::Cell;
use std::os::raw::{c_int, c_void};
use std::time::{Duration, Instant};

use rusqlite::{ffi, Connection};

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
    match next_sleep(now.duration_since(started), timeout) {
        Some(sleep) => {
            std::thread::sleep(sleep);
            1
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
