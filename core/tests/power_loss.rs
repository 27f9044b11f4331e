//! Power loss, simulated below SQLite: a test VFS wraps the platform's own, keeps an undo
//! record of every write (and truncation) a file has not yet synced, and at a chosen crash
//! point makes every further write, sync and delete fail, as a machine that lost power
//! would. Once every connection is closed it "loses" the unsynced writes: for each file a
//! random prefix of them survives (none, some, all) and the rest are undone, exactly as a
//! disk that wrote them in order and stopped. Then the store is opened again and checked
//! from its rows.
//!
//! - At `synchronous=FULL` (the default): over [`FULL_CRASHES`] crash points, the file passes
//!   `PRAGMA integrity_check` and every acknowledged append is stored exactly once under its
//!   sequence, sequences dense from 1.
//! - At `synchronous=NORMAL`: the file passes `integrity_check` too, and what is stored is
//!   always a prefix of what was acknowledged: only a suffix of recent commits can vanish.
//!
//! The crash point is a count of writes and syncs from a random start, so crashes land inside
//! appends, inside the append that archives a full chunk, and inside checkpoints (one every
//! [`CHECKPOINT_EVERY`] appends, as SQLite's automatic checkpoint would). The VFS does not
//! call the real `fsync`: durability here is the simulation's, which keeps the test fast.
//! `ATTRFLOW_TEST_SEED=<seed>` replays a run; `ATTRFLOW_POWER_LOSS_CRASHES=N` sets the crash
//! points of each setting.

mod common;

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use attrflow::flows::chunked_subscriber::{Subscriber, SubscriberArchive, FLOW_ID};
use attrflow::store::{SqliteOptions, SqliteStore, Synchronous};
use attrflow::Runtime;
use common::invariants::StoredArchive;
use common::seeded_rng::SeededRng;
use rusqlite::ffi;

/// Crash points at `synchronous=FULL`.
const FULL_CRASHES: u64 = 1_000;
/// Crash points at `synchronous=NORMAL`.
const NORMAL_CRASHES: u64 = 300;
/// Crash points after which the test starts again on a fresh file, so each check stays
/// cheap.
const CRASHES_PER_FILE: u64 = 100;
/// Appends between explicit checkpoints.
const CHECKPOINT_EVERY: u64 = 25;
/// The most writes and syncs before the next crash point.
const MAX_EVENTS_TO_CRASH: u64 = 80;

/// One write (or truncation) not yet synced: what the file held there before it.
struct Undo {
    offset: u64,
    old: Vec<u8>,
    size_before: u64,
}

/// The simulated disk: the unsynced writes of each file, and the crash point.
struct Disk {
    unsynced: BTreeMap<PathBuf, Vec<Undo>>,
    events: u64,
    crash_at: u64,
    crashed: bool,
}

impl Disk {
    /// Counts one write or sync; true when the power is (now) off.
    fn power_off(&mut self) -> bool {
        if !self.crashed {
            self.events += 1;
            self.crashed = self.events >= self.crash_at;
        }
        self.crashed
    }
}

static DISK: Mutex<Disk> = Mutex::new(Disk {
    unsynced: BTreeMap::new(),
    events: 0,
    crash_at: u64::MAX,
    crashed: false,
});
static REAL_VFS: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(std::ptr::null_mut());
/// The tests of this file share the one simulated disk, so they run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn disk() -> MutexGuard<'static, Disk> {
    DISK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A file of the test VFS: the platform VFS's file inside, and its path when it has one.
#[repr(C)]
struct CrashFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    real_words: usize,
    path: *mut PathBuf,
}

unsafe fn parts(
    file: *mut ffi::sqlite3_file,
) -> (
    *mut ffi::sqlite3_file,
    &'static ffi::sqlite3_io_methods,
    Option<&'static PathBuf>,
) {
    let file = file as *mut CrashFile;
    let real = (*file).real;
    let path = (*file).path;
    (
        real,
        &*(*real).pMethods,
        if path.is_null() { None } else { Some(&*path) },
    )
}

unsafe fn real_size(real: *mut ffi::sqlite3_file, methods: &ffi::sqlite3_io_methods) -> i64 {
    let mut size: ffi::sqlite3_int64 = 0;
    (methods.xFileSize.unwrap())(real, &mut size);
    size
}

unsafe fn read_old(
    real: *mut ffi::sqlite3_file,
    methods: &ffi::sqlite3_io_methods,
    offset: i64,
    len: i64,
) -> Vec<u8> {
    let mut old = vec![0u8; len.max(0) as usize];
    if !old.is_empty() {
        (methods.xRead.unwrap())(real, old.as_mut_ptr().cast(), len as c_int, offset);
    }
    old
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real_vfs = REAL_VFS.load(Ordering::Acquire);
    let words = ((*real_vfs).szOsFile as usize).div_ceil(8);
    let real =
        Box::into_raw(vec![0u64; words].into_boxed_slice()) as *mut u64 as *mut ffi::sqlite3_file;
    let crash_file = file as *mut CrashFile;
    let rc = ((*real_vfs).xOpen.unwrap())(real_vfs, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            real as *mut u64,
            words,
        )));
        (*crash_file).base.pMethods = std::ptr::null();
        return rc;
    }
    (*crash_file).base.pMethods = &METHODS;
    (*crash_file).real = real;
    (*crash_file).real_words = words;
    (*crash_file).path = if name.is_null() {
        std::ptr::null_mut()
    } else {
        let path = PathBuf::from(CStr::from_ptr(name).to_string_lossy().into_owned());
        Box::into_raw(Box::new(path))
    };
    rc
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let _ = vfs;
    let mut disk = disk();
    if disk.crashed {
        return ffi::SQLITE_IOERR_DELETE;
    }
    disk.unsynced
        .remove(Path::new(&*CStr::from_ptr(name).to_string_lossy()));
    let real_vfs = REAL_VFS.load(Ordering::Acquire);
    ((*real_vfs).xDelete.unwrap())(real_vfs, name, sync_dir)
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let crash_file = file as *mut CrashFile;
    let (real, methods, _) = parts(file);
    let rc = (methods.xClose.unwrap())(real);
    drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
        real as *mut u64,
        (*crash_file).real_words,
    )));
    if !(*crash_file).path.is_null() {
        drop(Box::from_raw((*crash_file).path));
    }
    rc
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xRead.unwrap())(real, buf, amount, offset)
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (real, methods, path) = parts(file);
    let mut disk = disk();
    if disk.power_off() {
        return ffi::SQLITE_IOERR_WRITE;
    }
    if let Some(path) = path {
        let size = real_size(real, methods);
        let old = read_old(
            real,
            methods,
            offset,
            (size - offset).min(i64::from(amount)),
        );
        disk.unsynced.entry(path.clone()).or_default().push(Undo {
            offset: offset as u64,
            old,
            size_before: size as u64,
        });
    }
    (methods.xWrite.unwrap())(real, buf, amount, offset)
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    let (real, methods, path) = parts(file);
    let mut disk = disk();
    if disk.power_off() {
        return ffi::SQLITE_IOERR_TRUNCATE;
    }
    if let Some(path) = path {
        let before = real_size(real, methods);
        let old = read_old(real, methods, size, before - size);
        disk.unsynced.entry(path.clone()).or_default().push(Undo {
            offset: size as u64,
            old,
            size_before: before as u64,
        });
    }
    (methods.xTruncate.unwrap())(real, size)
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    let (_, _, path) = parts(file);
    let mut disk = disk();
    if disk.power_off() {
        return ffi::SQLITE_IOERR_FSYNC;
    }
    // Everything this file was given is durable now (the simulation's, not the real disk's).
    if let Some(path) = path {
        disk.unsynced.remove(path);
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xFileSize.unwrap())(real, size)
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xLock.unwrap())(real, level)
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xUnlock.unwrap())(real, level)
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xCheckReservedLock.unwrap())(real, out)
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    // A size hint makes the platform VFS grow the file with writes of its own, past this
    // VFS; without it SQLite simply writes the pages.
    if op == ffi::SQLITE_FCNTL_SIZE_HINT {
        return ffi::SQLITE_NOTFOUND;
    }
    let (real, methods, _) = parts(file);
    (methods.xFileControl.unwrap())(real, op, arg)
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xSectorSize.unwrap())(real)
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xDeviceCharacteristics.unwrap())(real)
}

unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xShmMap.unwrap())(real, page, size, extend, out)
}

unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xShmLock.unwrap())(real, offset, n, flags)
}

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    let (real, methods, _) = parts(file);
    (methods.xShmBarrier.unwrap())(real)
}

unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (real, methods, _) = parts(file);
    (methods.xShmUnmap.unwrap())(real, delete)
}

/// No memory-mapped reads: every read goes through `xRead`.
unsafe extern "C" fn x_fetch(
    _file: *mut ffi::sqlite3_file,
    _offset: i64,
    _amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    *out = std::ptr::null_mut();
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_unfetch(
    _file: *mut ffi::sqlite3_file,
    _offset: i64,
    _page: *mut c_void,
) -> c_int {
    ffi::SQLITE_OK
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

/// Makes the crash VFS the default of this process (once).
fn install_crash_vfs() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| unsafe {
        let real = ffi::sqlite3_vfs_find(std::ptr::null());
        assert!(!real.is_null(), "no default VFS");
        REAL_VFS.store(real, Ordering::Release);
        let mut vfs = *real;
        vfs.pNext = std::ptr::null_mut();
        vfs.zName = c"attrflow-power-loss".as_ptr();
        vfs.szOsFile = std::mem::size_of::<CrashFile>() as c_int;
        vfs.xOpen = Some(x_open);
        vfs.xDelete = Some(x_delete);
        let rc = ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 1);
        assert_eq!(rc, ffi::SQLITE_OK, "registering the crash VFS");
    });
}

/// Arms the next crash point, `events` writes and syncs from now.
fn arm(events: u64) {
    let mut disk = disk();
    disk.crash_at = disk.events + events;
}

/// After every connection is closed: keeps a random prefix of each file's unsynced writes,
/// undoes the rest, and turns the power back on.
fn lose_power(rng: &mut SeededRng) {
    let mut disk = disk();
    disk.crashed = true; // in case the workload ended before its crash point
    for (path, undo) in std::mem::take(&mut disk.unsynced) {
        let kept = rng.in_range(0..=undo.len() as u64) as usize;
        if kept == undo.len() {
            continue;
        }
        let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) else {
            continue;
        };
        for write in undo[kept..].iter().rev() {
            file.write_all_at(&write.old, write.offset).unwrap();
        }
        file.set_len(undo[kept].size_before).unwrap();
    }
    disk.crashed = false;
    disk.crash_at = u64::MAX;
}

fn crashed() -> bool {
    disk().crashed
}

/// One run of crash points on fresh files at `synchronous`; returns how many acknowledged
/// appends vanished in all.
fn run(synchronous: Synchronous, crash_points: u64, test: &str) -> u64 {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    install_crash_vfs();
    let mut rng = SeededRng::from_env_or_clock(test);
    let options = SqliteOptions {
        synchronous,
        ..SqliteOptions::default()
    };
    let mut vanished = 0;
    let mut appended = 0u64;
    let mut attempted = 0u64;
    let mut dir = tempfile::tempdir().unwrap();
    let mut acked: BTreeMap<u64, Subscriber> = BTreeMap::new();
    for crash in 0..crash_points {
        if crash % CRASHES_PER_FILE == 0 {
            dir = tempfile::tempdir().unwrap();
            acked.clear();
        }
        let path = dir.path().join("attrflow.db");
        arm(rng.in_range(1..=MAX_EVENTS_TO_CRASH));
        workload(&path, &options, &mut acked, &mut attempted, &mut appended);
        lose_power(&mut rng);

        let stored = stored_subscribers(&path)
            .unwrap_or_else(|broken| panic!("crash point {crash} ({synchronous:?}): {broken}"));
        // What is stored is a prefix of the history: each stored record is the one that was
        // acknowledged under its sequence (one beyond them is the append cut off by the
        // crash, whose caller heard no answer).
        for subscriber in &stored {
            if let Some(acknowledged) = acked.get(&subscriber.sequence) {
                assert_eq!(
                    subscriber, acknowledged,
                    "crash point {crash} ({synchronous:?})"
                );
            }
        }
        let acked_last = acked.keys().next_back().copied().unwrap_or(0);
        let stored_last = stored.len() as u64;
        if synchronous == Synchronous::Full {
            assert!(
                stored_last >= acked_last,
                "crash point {crash}: acknowledged appends lost"
            );
        }
        vanished += acked_last.saturating_sub(stored_last);
        // What is stored is the history now (at NORMAL, the vanished suffix is gone).
        acked = stored.into_iter().map(|s| (s.sequence, s)).collect();
    }
    eprintln!(
        "{test}: {crash_points} crash points, {appended} appends acknowledged, {vanished} acknowledged appends vanished"
    );
    vanished
}

/// The subscribers stored in the file, after checking it (`integrity_check`) and the
/// archive's layout; none when the crash came before the flow's start was durable.
fn stored_subscribers(path: &Path) -> Result<Vec<Subscriber>, String> {
    let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    let verdict: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(|e| e.to_string())?;
    if verdict != "ok" {
        return Err(format!("integrity_check: {verdict}"));
    }
    let started: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'flows')",
            [],
            |row| row.get(0),
        )
        .map_err(|e| e.to_string())?
        && conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM attribute_values WHERE flow_id = ?1)",
                [FLOW_ID],
                |row| row.get(0),
            )
            .map_err(|e| e.to_string())?;
    drop(conn);
    if !started {
        return Ok(Vec::new());
    }
    let archive = StoredArchive::read_sqlite(path, FLOW_ID)?;
    Ok(archive.check(&BTreeMap::new())?.subscribers)
}

/// Opens the store and appends (checkpointing now and then) until the power goes off.
fn workload(
    path: &Path,
    options: &SqliteOptions,
    acked: &mut BTreeMap<u64, Subscriber>,
    attempted: &mut u64,
    appended: &mut u64,
) {
    let Ok(store) = SqliteStore::open_with(path, options.clone()) else {
        assert!(crashed(), "opening failed with the power on");
        return;
    };
    let runtime = Runtime::new(Arc::new(store));
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    if archive.start().is_err() {
        assert!(crashed(), "starting failed with the power on");
        return;
    }
    loop {
        // A new ID for every attempt: the one cut off by a crash may be stored.
        *attempted += 1;
        let n = *attempted;
        let id = format!("s-{n:06}");
        match archive.register(&id, &format!("{id}@example.com")) {
            Ok(subscriber) => {
                *appended += 1;
                acked.insert(subscriber.sequence, subscriber);
            }
            Err(error) => {
                assert!(crashed(), "append failed with the power on: {error}");
                return;
            }
        }
        if *appended % CHECKPOINT_EVERY == 0 {
            let checkpoint = rusqlite::Connection::open(path).and_then(|conn| {
                conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(0))
            });
            if checkpoint.is_err() || crashed() {
                return;
            }
        }
    }
}

fn crash_points(default: u64) -> u64 {
    std::env::var("ATTRFLOW_POWER_LOSS_CRASHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

#[test]
fn at_full_no_acknowledged_append_is_lost_at_any_crash_point() {
    let vanished = run(
        Synchronous::Full,
        crash_points(FULL_CRASHES),
        "power_loss_full",
    );
    assert_eq!(vanished, 0);
}

#[test]
fn at_normal_only_a_suffix_of_recent_commits_can_vanish() {
    // The check itself proves the claim: after every crash the stored archive is a dense
    // prefix of the acknowledged appends, the file intact.
    run(
        Synchronous::Normal,
        crash_points(NORMAL_CRASHES),
        "power_loss_normal",
    );
}
