//! One `write` system call per commit to the write-ahead log, instead of two per page.
//!
//! SQLite writes each page of a commit to the log as two `pwrite`s: the frame's 24-byte
//! header, then the page. A group of appenders on many flows commits about 26 pages, so
//! 52 system calls, each on the path every member of the group waits behind; measured on
//! a scratch file, writing 27 frames so took 150–230 µs against about 60 µs for the same
//! bytes in one call (bench/notes/6-concurrency.md).
//!
//! The store's connections therefore open their files through a VFS of ours,
//! [`VFS_NAME`] (all but the checkpoint thread's and the change watch's, which never write
//! the log), registered once per process, when the first store opens, on top of the
//! VFS that is SQLite's default at that moment (a default installed later, by a test's
//! simulated disk say, is under attrflow's stores only if installed before). It passes every
//! call through unchanged, except that writes to a write-ahead log that follow each other
//! in the file are gathered in memory and written in one call:
//!
//! - right after the page of a *commit frame* (a frame whose header gives the database's
//!   size, bytes 4–7 non-zero: the last frame of a transaction). So when SQLite moves on to
//!   publish the commit in the log's index, where other connections look, its frames are in
//!   the file, at every `synchronous` level; an error writing them is the error of that
//!   page's write, and fails the COMMIT as it always did;
//! - right after a commit frame's header that SQLite writes again without its page: a
//!   transaction that wrote some page twice has the checksums of its frames recomputed at
//!   COMMIT, each frame read and its header written back over it, the commit frame's last,
//!   and nothing follows that header before the commit is published. A header written at
//!   the offset of the read just before it is taken for such a rewrite;
//! - before any other call on the log's file (`xSync`, a read, its size, a truncation,
//!   closing it, ...), so SQLite never sees the file other than as if each write had been
//!   made at once;
//! - before a write that does not continue the gathered ones, or when they reach
//!   [`MAX_GATHERED`] bytes.
//!
//! Every other method passes straight on (after writing out what is gathered), so the
//! files behave as the default VFS's do; it must offer the methods of version 3 (those of
//! Unix and Windows do), since ours claims them: a missing one answers an I/O error.
//!
//! What a crash can leave is unchanged: a process that dies with writes still gathered
//! dies before its COMMIT's frames were complete, which SQLite's recovery already handles
//! (it stops at the first frame whose checksum fails), and nothing it holds was
//! acknowledged. The database file, the index and every other file go straight through.
//!
//! **Growing the log ahead of its writes.** A COMMIT that syncs the log (`synchronous=FULL`)
//! costs far more while it makes the file longer than once it only overwrites it: the sync
//! must then also make the file's new length and blocks durable. Measured on the disk of
//! bench/notes/4-redis.md, 16 KiB written and synced took a median 169–250 µs appended
//! against 109–156 µs overwritten, and FULL registers ran 1.2–2.6 times as fast once the log
//! had been through its first checkpoint (after which SQLite writes it over from the start)
//! as before it. So once a COMMIT has synced a log through this VFS, a write of gathered frames
//! that ends past the file's end is followed by zeros up to the next [`GROW_STEP`] boundary,
//! and the COMMIT's sync makes them durable with the frames; the commits after it overwrite
//! those zeros until the log is long enough for its checkpoints, so a fresh store commits
//! at the speed of a warm one. The zeros go only past the file's end, which no frame of the
//! log is (a log is written by one writer at a time, and its frames end where the file
//! did), and SQLite reads them as it reads any stale tail of a log: recovery stops at the
//! first frame whose salts and checksum do not match the header's. A failed write of zeros
//! is ignored (the frames are written; the sync reports the disk's errors). At NORMAL,
//! whose commits do not sync the log, nothing is grown ahead.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use rusqlite::ffi;

/// The name the store's connections open their files with.
pub(super) const VFS_NAME: &CStr = c"attrflow";

/// Writes gathered for one log file are written out once they reach this many bytes.
const MAX_GATHERED: usize = 1 << 20;

/// The most one write passes on: the default VFS on Unix takes at most 128 KiB - 1 bytes
/// a call (a bound its code asserts), so larger gathered writes go out in pieces.
const MAX_WRITE: usize = 31 << 12;

/// Bytes of a log frame's header.
const FRAME_HEADER: usize = 24;

/// A synced log that must grow is grown to the next multiple of this many bytes: about
/// 250 frames of 4 KiB pages, so a log reaching SQLite's 1,000-frame checkpoint grows four
/// times, each time by zeros that the COMMIT's sync writes with its frames.
const GROW_STEP: i64 = 1 << 20;

/// The zeros a log grows by, written [`MAX_WRITE`] bytes a call.
static ZEROS: [u8; MAX_WRITE] = [0; MAX_WRITE];

/// Registers [`VFS_NAME`] (once per process) and reports whether it is there. Registration
/// fails only when SQLite has no default VFS, in which case nothing could be opened anyway.
pub(super) fn register() -> bool {
    static REGISTERED: crate::fork::Once<bool> = crate::fork::Once::new();
    *REGISTERED.get_or_init(|| {
        // SAFETY: `sqlite3_vfs_find` initialises SQLite if needed and returns the default
        // VFS, which lives as long as the process. The copy made of it is leaked, so it
        // lives as long too, as `sqlite3_vfs_register` requires.
        unsafe {
            let root = ffi::sqlite3_vfs_find(ptr::null());
            if root.is_null() {
                return false;
            }
            let Ok(root_size) = usize::try_from((*root).szOsFile) else {
                return false;
            };
            let Ok(size) = c_int::try_from(std::mem::size_of::<GatheringFile>() + root_size) else {
                return false;
            };
            ROOT.store(root, Ordering::Release);
            let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
                szOsFile: size,
                pNext: ptr::null_mut(),
                zName: VFS_NAME.as_ptr(),
                xOpen: Some(open),
                ..*root
            }));
            ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK
        }
    })
}

/// Our part of each file SQLite opens through [`VFS_NAME`]; the default VFS's file follows
/// it in the same allocation, at `real`.
#[repr(C)]
struct GatheringFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// The log's gathered writes; null for any other file.
    gathered: *mut Gathered,
}

/// Writes to one log not yet made.
#[derive(Default)]
struct Gathered {
    /// Where `bytes` go in the file.
    offset: i64,
    bytes: Vec<u8>,
    /// Where the page of a commit frame starts, when its header was the last write: once
    /// that page is written, the gathered writes go out with it, whatever else the write
    /// did (it may be the first of a new gathering, when the header filled the last one).
    commit_page_at: Option<i64>,
    /// Whether the last write completed a commit frame (so a sync now is a COMMIT's).
    commit_written: bool,
    /// Where the last call read the log, when it was a read: a frame header written there
    /// next is the rewrite of a frame's checksums, not followed by its page.
    read_at: Option<i64>,
    /// Whether SQLite has synced this log right after a commit through this file, as a
    /// COMMIT at `synchronous=FULL` does (at NORMAL SQLite syncs only a log's first
    /// header): only such a log is grown ahead of its writes.
    synced: bool,
    /// How long the file is known to be, at least (0: not known); past it, a write asks
    /// the file its length before growing it.
    length_at_least: i64,
}

/// The default VFS, which ours passes every call to; set by [`register`] before ours is
/// registered.
static ROOT: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let ours = file.cast::<GatheringFile>();
    let real = ours.add(1).cast::<ffi::sqlite3_file>();
    (*ours).base.pMethods = ptr::null();
    (*ours).real = real;
    (*ours).gathered = ptr::null_mut();
    (*real).pMethods = ptr::null();
    let root = ROOT.load(Ordering::Acquire);
    let Some(root_open) = (*root).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = root_open(root, name, real, flags, out_flags);
    // SQLite calls `xClose` after a failed open only when the methods are set; ours then
    // close the real file in turn.
    if !(*real).pMethods.is_null() {
        if flags & ffi::SQLITE_OPEN_WAL != 0 {
            (*ours).gathered = Box::into_raw(Box::default());
        }
        (*ours).base.pMethods = &METHODS;
    }
    rc
}

/// The file `file` stands for, and its methods (which the default VFS keeps for as long as
/// the file is open).
unsafe fn real<'a>(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'a ffi::sqlite3_io_methods) {
    let real = (*file.cast::<GatheringFile>()).real;
    (real, &*(*real).pMethods)
}

/// Writes out what `file` gathered, if anything. On an error the gathered writes are
/// dropped: SQLite fails the statement that made them and never counts on them.
unsafe fn flush(file: *mut ffi::sqlite3_file) -> c_int {
    let gathered = (*file.cast::<GatheringFile>()).gathered;
    if gathered.is_null() || (*gathered).bytes.is_empty() {
        return ffi::SQLITE_OK;
    }
    let gathered = &mut *gathered;
    let (real, methods) = real(file);
    let Some(write) = methods.xWrite else {
        gathered.bytes.clear();
        return ffi::SQLITE_IOERR_WRITE;
    };
    #[cfg(test)]
    tests::FLUSHES.with(|n| n.set(n.get() + 1));
    // The file's length before these writes, when they may take it past its end.
    let end = gathered.offset + gathered.bytes.len() as i64;
    let length_before = (gathered.synced && end > gathered.length_at_least)
        .then(|| file_length(real, methods))
        .flatten();
    let mut rc = ffi::SQLITE_OK;
    let mut offset = gathered.offset;
    for piece in gathered.bytes.chunks(MAX_WRITE) {
        // `piece` is at most MAX_WRITE bytes, which fits a c_int and an i64.
        let len = piece.len() as c_int;
        rc = write(real, piece.as_ptr().cast(), len, offset);
        if rc != ffi::SQLITE_OK {
            break;
        }
        offset += i64::from(len);
    }
    gathered.bytes.clear();
    if rc == ffi::SQLITE_OK {
        match length_before {
            Some(length) if end > length => gathered.length_at_least = grow(real, write, end),
            Some(length) => gathered.length_at_least = length,
            None => {}
        }
    }
    rc
}

/// The length of `real`, or `None` when the default VFS cannot tell it.
unsafe fn file_length(
    real: *mut ffi::sqlite3_file,
    methods: &ffi::sqlite3_io_methods,
) -> Option<i64> {
    let size = methods.xFileSize?;
    let mut length = 0;
    (size(real, &mut length) == ffi::SQLITE_OK).then_some(length)
}

/// Writes zeros into `real` from `end`, its new end, up to the next [`GROW_STEP`]
/// boundary; returns how long the file is known to be now (`end` when a write failed).
unsafe fn grow(
    real: *mut ffi::sqlite3_file,
    write: unsafe extern "C" fn(*mut ffi::sqlite3_file, *const c_void, c_int, i64) -> c_int,
    end: i64,
) -> i64 {
    let boundary = (end / GROW_STEP + 1) * GROW_STEP;
    let mut offset = end;
    while offset < boundary {
        // At most MAX_WRITE bytes, which fits a c_int.
        let len = (boundary - offset).min(MAX_WRITE as i64) as c_int;
        if write(real, ZEROS.as_ptr().cast(), len, offset) != ffi::SQLITE_OK {
            return end;
        }
        offset += i64::from(len);
    }
    #[cfg(test)]
    tests::GROWTHS.with(|n| n.set(n.get() + 1));
    boundary
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let gathered = (*file.cast::<GatheringFile>()).gathered;
    let Ok(len) = usize::try_from(amount) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    if gathered.is_null() || data.is_null() {
        let (real, methods) = real(file);
        return methods
            .xWrite
            .map_or(ffi::SQLITE_IOERR_WRITE, |w| w(real, data, amount, offset));
    }
    // Whether this is the page of the commit frame whose header came last, decided before
    // a flush below empties what is gathered: that page must go out with this call even
    // when it starts the gathered writes afresh.
    let completes_commit = (*gathered).commit_page_at.take() == Some(offset);
    let rewrites_read_frame = (*gathered).read_at.take() == Some(offset);
    let follows = {
        let g = &*gathered;
        i64::try_from(g.bytes.len()).is_ok_and(|n| g.offset + n == offset)
    };
    if !follows || (*gathered).bytes.len() + len > MAX_GATHERED {
        let rc = flush(file);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    let g = &mut *gathered;
    g.commit_written = false;
    if g.bytes.is_empty() {
        g.offset = offset;
    }
    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
    g.bytes.extend_from_slice(bytes);
    if completes_commit {
        let rc = flush(file);
        (*gathered).commit_written = rc == ffi::SQLITE_OK;
        return rc;
    }
    if len == FRAME_HEADER && bytes[4..8] != [0; 4] {
        g.commit_page_at = Some(offset + FRAME_HEADER as i64);
        if rewrites_read_frame {
            // The checksums' rewrite ends with this header: the commit is complete.
            let rc = flush(file);
            (*gathered).commit_written = rc == ffi::SQLITE_OK;
            return rc;
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let flushed = flush(file);
    let ours = file.cast::<GatheringFile>();
    if !(*ours).gathered.is_null() {
        drop(Box::from_raw((*ours).gathered));
        (*ours).gathered = ptr::null_mut();
    }
    let (real, methods) = real(file);
    let closed = methods.xClose.map_or(ffi::SQLITE_OK, |c| c(real));
    if flushed != ffi::SQLITE_OK {
        flushed
    } else {
        closed
    }
}

/// Defines a method that writes out the gathered writes, notes the call in a log's
/// state (`$note`, when given), then passes the call on (or answers `$missing` when the
/// default VFS's file lacks the method).
macro_rules! flushing {
    ($name:ident, $method:ident ( $($arg:ident : $ty:ty),* ), $missing:expr) => {
        flushing!(
            /// Passes the call on once the gathered writes are out.
            $name, $method($($arg: $ty),*), $missing, |_: &mut Gathered| {}
        );
    };
    ($(#[$doc:meta])* $name:ident, $method:ident ( $($arg:ident : $ty:ty),* ), $missing:expr,
     $note:expr) => {
        $(#[$doc])*
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            let rc = flush(file);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let gathered = (*file.cast::<GatheringFile>()).gathered;
            if !gathered.is_null() {
                #[allow(clippy::redundant_closure_call)]
                ($note)(&mut *gathered);
            }
            let (real, methods) = real(file);
            match methods.$method {
                Some(method) => method(real $(, $arg)*),
                None => $missing,
            }
        }
    };
}

/// Reads once the gathered writes are out, noting where a log was read.
unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let rc = flush(file);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let gathered = (*file.cast::<GatheringFile>()).gathered;
    if !gathered.is_null() {
        (*gathered).read_at = Some(offset);
    }
    let (real, methods) = real(file);
    match methods.xRead {
        Some(read) => read(real, buf, amount, offset),
        None => ffi::SQLITE_IOERR_READ,
    }
}

flushing!(
    /// The file's length is asked again before a truncated log next grows.
    truncate, xTruncate(size: i64), ffi::SQLITE_IOERR_TRUNCATE,
    |log: &mut Gathered| log.length_at_least = 0
);
flushing!(
    /// A log synced right after a commit is grown ahead of its writes from then on.
    sync, xSync(flags: c_int), ffi::SQLITE_IOERR_FSYNC,
    |log: &mut Gathered| log.synced |= log.commit_written
);
flushing!(file_size, xFileSize(size: *mut i64), ffi::SQLITE_IOERR_FSTAT);
flushing!(lock, xLock(level: c_int), ffi::SQLITE_IOERR_LOCK);
flushing!(unlock, xUnlock(level: c_int), ffi::SQLITE_IOERR_UNLOCK);
flushing!(
    check_reserved_lock,
    xCheckReservedLock(out: *mut c_int),
    ffi::SQLITE_IOERR_CHECKRESERVEDLOCK
);
flushing!(file_control, xFileControl(op: c_int, arg: *mut c_void), ffi::SQLITE_NOTFOUND);
flushing!(
    shm_map,
    xShmMap(page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void),
    ffi::SQLITE_IOERR_SHMMAP
);
flushing!(shm_lock, xShmLock(offset: c_int, n: c_int, flags: c_int), ffi::SQLITE_IOERR_SHMLOCK);
flushing!(shm_unmap, xShmUnmap(delete: c_int), ffi::SQLITE_OK);
flushing!(unfetch, xUnfetch(offset: i64, mapped: *mut c_void), ffi::SQLITE_OK);

/// Maps part of the file where the default VFS can; where it cannot, answers "no mapping",
/// and SQLite reads instead.
unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let rc = flush(file);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let (real, methods) = real(file);
    match methods.xFetch {
        Some(fetch) => fetch(real, offset, amount, out),
        None => {
            *out = ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, methods) = real(file);
    methods.xSectorSize.map_or(4096, |m| m(real))
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, methods) = real(file);
    methods.xDeviceCharacteristics.map_or(0, |m| m(real))
}

/// Shared memory belongs to the database file, whose writes are never gathered; a barrier
/// has no error to return, so it only passes through.
unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    let (real, methods) = real(file);
    if let Some(barrier) = methods.xShmBarrier {
        barrier(real);
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::BTreeMap;
    use std::path::Path;

    use proptest::prelude::*;
    use rusqlite::{Connection, OpenFlags};

    use super::{register, GROW_STEP, VFS_NAME};

    thread_local! {
        /// Gathered writes passed on by this thread.
        pub(super) static FLUSHES: Cell<u64> = const { Cell::new(0) };
        /// Logs grown ahead of their writes by this thread.
        pub(super) static GROWTHS: Cell<u64> = const { Cell::new(0) };
    }

    /// A connection through [`VFS_NAME`] in WAL mode at `synchronous`, SQLite's own
    /// checkpoints off so the log keeps every frame.
    fn open(path: &Path, synchronous: &str) -> Connection {
        assert!(register());
        let conn =
            Connection::open_with_flags_and_vfs(path, OpenFlags::default(), VFS_NAME).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous};
             PRAGMA wal_autocheckpoint=0;
             CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB NOT NULL);"
        ))
        .unwrap();
        conn
    }

    fn rows(conn: &Connection) -> Vec<(i64, i64)> {
        let mut stmt = conn
            .prepare("SELECT k, length(v) FROM t ORDER BY k")
            .unwrap();
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn a_commit_of_many_pages_reaches_the_log_in_few_writes_and_other_connections_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.db");
        let conn = open(&path, "FULL");
        let before = FLUSHES.get();
        let tx = conn.unchecked_transaction().unwrap();
        for k in 0..20 {
            tx.execute("INSERT INTO t VALUES (?1, zeroblob(3000))", [k])
                .unwrap();
        }
        tx.commit().unwrap();
        let flushes = FLUSHES.get() - before;
        let frames: i64 = conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
            .unwrap();
        // 20 rows of 3,000 bytes take about 16 pages, which SQLite writes in 32 calls.
        assert!(frames >= 15, "{frames} frames");
        assert!(flushes < 8, "{flushes} writes for {frames} frames");
        let other = Connection::open(&path).unwrap();
        assert_eq!(rows(&other), (0..20).map(|k| (k, 3000)).collect::<Vec<_>>());
    }

    #[test]
    fn without_a_sync_a_commit_is_in_the_log_before_other_connections_can_see_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("normal.db");
        let writer = open(&path, "NORMAL");
        let reader = Connection::open(&path).unwrap();
        for k in 0..50_usize {
            writer
                .execute("INSERT INTO t VALUES (?1, zeroblob(5000))", [k as i64])
                .unwrap();
            // Nothing else is asked of the writer's log between its COMMIT and this read.
            assert_eq!(rows(&reader).len(), k + 1);
        }
        let check: String = reader
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    /// A blob of `len` bytes that differs from every other length's, so a page read from
    /// the wrong place shows.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + len) as u8).collect()
    }

    #[test]
    fn a_commit_frame_whose_page_fills_the_gathered_writes_is_in_the_log_before_it_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gathered-full.db");
        let writer = open(&path, "NORMAL");
        let reader = Connection::open(&path).unwrap();
        // Commits of one blob each, one overflow page longer every time: the writes
        // gathered before one of them's commit frame reach within a page of
        // MAX_GATHERED, so the frame's header is gathered and its page starts the next
        // write.
        for (k, pages) in (240..265).enumerate() {
            let blob = pattern(pages * 4092);
            writer
                .execute("INSERT INTO t VALUES (?1, ?2)", (k as i64, &blob))
                .unwrap();
            // Nothing else is asked of the writer's log between its COMMIT and this read.
            let read: Vec<u8> = reader
                .query_row("SELECT v FROM t WHERE k = ?1", [k as i64], |row| row.get(0))
                .unwrap();
            assert!(read == blob, "the blob of {pages} pages reads back changed");
        }
    }

    #[test]
    fn a_commit_that_rewrites_its_frames_checksums_is_whole_in_the_log_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rewritten.db");
        let writer = open(&path, "NORMAL");
        // A small cache makes the transaction write pages to the log before its COMMIT and
        // one of them again, so the COMMIT rewrites its frames' checksums.
        writer.execute_batch("PRAGMA cache_size=16").unwrap();
        let tx = writer.unchecked_transaction().unwrap();
        tx.execute("INSERT INTO t VALUES (1, ?1)", [pattern(4092)])
            .unwrap();
        tx.execute(
            "INSERT OR REPLACE INTO t VALUES (1, ?1)",
            [pattern(12 * 4092)],
        )
        .unwrap();
        tx.commit().unwrap();
        // Nothing else is asked of the writer's log before the crash.
        assert!(after_a_crash(&path, 0) == BTreeMap::from([(1, pattern(12 * 4092))]));
    }

    /// A step of [`every_commit_is_in_the_log_as_written_before_anyone_reads_it`].
    #[derive(Debug, Clone)]
    enum Step {
        /// One transaction setting each key to a blob of that many pages (0 deletes it),
        /// through the first writer (`false`) or the second.
        Commit(bool, Vec<(i64, u16)>),
        /// A checkpoint by another connection, which empties and truncates the log.
        Truncate,
        /// What a crash leaves now: the files copied and opened afresh.
        Crash,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (any::<bool>(), prop::collection::vec((0i64..5, 0u16..520), 1..4))
                .prop_map(|(second, rows)| Step::Commit(second, rows)),
            1 => Just(Step::Truncate),
            1 => Just(Step::Crash),
        ]
    }

    /// Every row of `conn`'s table.
    fn contents(conn: &Connection) -> BTreeMap<i64, Vec<u8>> {
        let mut stmt = conn.prepare("SELECT k, v FROM t").unwrap();
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// The rows a copy of the database at `path` and its log holds, as a process that
    /// died now would leave them.
    fn after_a_crash(path: &Path, n: usize) -> BTreeMap<i64, Vec<u8>> {
        let copy = path.with_file_name(format!("crash-{n}.db"));
        std::fs::copy(path, &copy).unwrap();
        std::fs::copy(
            format!("{}-wal", path.display()),
            format!("{}-wal", copy.display()),
        )
        .unwrap();
        let conn = Connection::open(&copy).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        contents(&conn)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Commits of any size by two writers in turn (a small cache makes large ones write
        /// pages to the log before their COMMIT, some twice), checkpoints that truncate the
        /// log under them, at NORMAL and FULL: after each COMMIT, another connection reads
        /// exactly what was committed, with nothing asked of the writer's log in between,
        /// and a crash at any moment keeps every commit.
        #[test]
        fn every_commit_is_in_the_log_as_written_before_anyone_reads_it(
            full in any::<bool>(),
            steps in prop::collection::vec(step(), 1..10),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("model.db");
            let writers = [(); 2].map(|()| {
                let writer = open(&path, if full { "FULL" } else { "NORMAL" });
                writer.execute_batch("PRAGMA cache_size=16").unwrap();
                writer
            });
            let reader = Connection::open(&path).unwrap();
            let mut model = BTreeMap::new();
            for (n, step) in steps.into_iter().enumerate() {
                match step {
                    Step::Commit(second, rows) => {
                        let tx = writers[usize::from(second)].unchecked_transaction().unwrap();
                        for (key, pages) in rows {
                            if pages == 0 {
                                tx.execute("DELETE FROM t WHERE k = ?1", [key]).unwrap();
                                model.remove(&key);
                            } else {
                                let blob = pattern(usize::from(pages) * 4092 + n);
                                tx.execute("INSERT OR REPLACE INTO t VALUES (?1, ?2)", (key, &blob))
                                    .unwrap();
                                model.insert(key, blob);
                            }
                        }
                        tx.commit().unwrap();
                        prop_assert!(contents(&reader) == model, "read after step {}", n);
                    }
                    Step::Truncate => {
                        reader
                            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                            .unwrap();
                    }
                    Step::Crash => {
                        prop_assert!(after_a_crash(&path, n) == model, "crash at step {}", n);
                    }
                }
            }
            prop_assert!(after_a_crash(&path, usize::MAX) == model, "crash at the end");
        }
    }

    /// The length of the log of the database at `path`.
    fn log_length(path: &Path) -> i64 {
        let log = format!("{}-wal", path.display());
        i64::try_from(std::fs::metadata(log).unwrap().len()).unwrap()
    }

    /// The frames in the log of `conn`'s database (its checkpoint copies them and keeps
    /// them in the log).
    fn log_frames(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
            .unwrap()
    }

    /// Bytes of a log holding `frames` frames of 4 KiB pages: its header and the frames.
    fn frames_length(frames: i64) -> i64 {
        32 + frames * (4096 + 24)
    }

    #[test]
    fn a_log_whose_commits_sync_it_grows_ahead_in_steps_and_recovers_past_the_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grown.db");
        let conn = open(&path, "FULL");
        let before = GROWTHS.get();
        for k in 0..300 {
            conn.execute("INSERT INTO t VALUES (?1, zeroblob(3000))", [k])
                .unwrap();
        }
        let frames = log_frames(&conn);
        let length = log_length(&path);
        // The first COMMIT syncs the log; from the second on, the log grows ahead.
        assert!(GROWTHS.get() > before);
        assert_eq!(length % GROW_STEP, 0, "{length} bytes");
        assert!(
            length > frames_length(frames),
            "{length} bytes, {frames} frames"
        );

        // What a crash leaves at this moment: the database file, and the log with its
        // frames and zeros after them. Opened again, SQLite recovers every commit.
        let crashed = dir.path().join("crashed.db");
        std::fs::copy(&path, &crashed).unwrap();
        std::fs::copy(
            format!("{}-wal", path.display()),
            format!("{}-wal", crashed.display()),
        )
        .unwrap();
        let recovered = Connection::open(&crashed).unwrap();
        assert_eq!(
            rows(&recovered),
            (0..300).map(|k| (k, 3000)).collect::<Vec<_>>()
        );
        let check: String = recovered
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        assert_eq!(rows(&conn).len(), 300);
    }

    #[test]
    fn a_log_whose_commits_do_not_sync_it_is_not_grown_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("normal-length.db");
        let conn = open(&path, "NORMAL");
        let before = GROWTHS.get();
        for k in 0..100 {
            conn.execute("INSERT INTO t VALUES (?1, zeroblob(3000))", [k])
                .unwrap();
        }
        assert_eq!(GROWTHS.get(), before);
        assert_eq!(log_length(&path), frames_length(log_frames(&conn)));
    }

    #[test]
    fn a_commit_larger_than_one_write_goes_out_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("large.db");
        let conn = open(&path, "FULL");
        conn.execute("INSERT INTO t VALUES (1, zeroblob(3000000))", [])
            .unwrap();
        drop(conn);
        let other = Connection::open(&path).unwrap();
        assert_eq!(rows(&other), vec![(1, 3_000_000)]);
    }
}
