//! A child made by `fork()` may not open an SQLite file its parent has open (SQLite's
//! locks are per process, and the child's would not be real), and opens any other file, or
//! the parent's once the parent closed it, as usual. A process-wide `attrflow::fork::Mutex`
//! is free in the child even when another thread of the parent held it, or was taking it
//! for the first time, as the fork began. Children forked while the parent's threads queue for
//! one flow run contended calls of their own to the end (the core's locks keep no state
//! outside themselves that a fork could catch half-changed).

use std::sync::mpsc;
use std::time::Duration;

use attrflow::store::SqliteStore;
use attrflow::Error;

/// What a child reports through its exit code.
const REFUSED_CLEARLY: i32 = 10;
const OPENED: i32 = 20;
const FREE_AND_WHOLE: i32 = 30;

/// Starts a child with `fork()` that runs `child` and exits with the code it returns (1 if
/// it panics); the child's process ID.
fn fork_running(child: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: the child only opens stores, runs calls and exits with `_exit`, never
    // returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(1);
        // SAFETY: ends the child at once, without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// Runs `child` in a child made by `fork()` and returns its exit code.
fn in_a_child(child: impl FnOnce() -> i32) -> i32 {
    let pid = fork_running(child);
    let mut status = 0;
    // SAFETY: waits for the child just made.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
    libc::WEXITSTATUS(status)
}

#[test]
fn a_child_is_refused_its_parents_open_file_and_opens_others() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("parent.db");
    let other = dir.path().join("child.db");
    let parent_store = SqliteStore::open(&path).expect("the parent opens its store");
    let canonical = path.canonicalize().expect("the store file exists");
    let code = in_a_child(|| {
        let mut code = 0;
        match SqliteStore::open(&path) {
            Err(Error::Storage(message))
                if message.contains(&canonical.display().to_string())
                    && message.contains("fork()")
                    && message.contains("spawn") =>
            {
                code += REFUSED_CLEARLY
            }
            _ => {}
        }
        if SqliteStore::open(&other).is_ok() {
            code += OPENED;
        }
        code
    });
    assert_eq!(code, REFUSED_CLEARLY + OPENED);
    drop(parent_store);

    // Closed before the fork, the parent's file is the child's to open.
    let opened = in_a_child(|| i32::from(SqliteStore::open(&path).is_ok()) * OPENED);
    assert_eq!(opened, OPENED);
}

/// A process-wide lock, as a binding keeps one.
static SHARED: attrflow::fork::Mutex<u32> = attrflow::fork::Mutex::new(0);

#[test]
fn a_mutex_another_thread_holds_as_the_fork_begins_is_free_in_the_child() {
    let (held, holding) = mpsc::channel();
    let holder = std::thread::spawn(move || {
        let mut value = SHARED.lock();
        held.send(()).expect("the test waits");
        std::thread::sleep(Duration::from_millis(100));
        *value += 1;
    });
    holding.recv().expect("the holder took the mutex");
    // The fork waits for the holder to give the mutex back: the child finds it free, with
    // the holder's change. (Unregistered, the child would find it held for ever.)
    let child = fork_running(|| match *SHARED.lock() {
        1 => FREE_AND_WHOLE,
        _ => 2,
    });
    holder.join().expect("the holder ends");
    assert_eq!(
        ending_within_deadline(child),
        Ending::Exited(FREE_AND_WHOLE)
    );
    assert_eq!(*SHARED.lock(), 1);
}

/// How many children [`children_forked_amid_contended_calls_finish_contended_calls_of_their_own`]
/// forks.
const FORKS: usize = 150;

/// How long a child may take before it counts as hung (each takes well under a second).
const CHILD_DEADLINE: Duration = Duration::from_secs(20);

/// How a child forked by [`children_forked_amid_contended_calls_finish_contended_calls_of_their_own`]
/// ended.
#[derive(Debug, PartialEq)]
enum Ending {
    Exited(i32),
    Killed(i32),
    /// Still running at the deadline: the stacks of its threads, taken before it was killed
    /// (see [`stacks_of`]), so that a hang seen once tells where it waited.
    Hung(String),
}

/// How long [`stacks_of`] gives the debugger.
const DEBUGGER_DEADLINE: Duration = Duration::from_secs(60);

/// The stacks of every thread of the process `pid`, as `gdb` prints them, or why there are
/// none (no `gdb` on the machine, or not allowed to attach).
fn stacks_of(pid: libc::pid_t) -> String {
    let debugger = std::process::Command::new("gdb")
        .args([
            "-p",
            &pid.to_string(),
            "-batch",
            "-ex",
            "thread apply all bt",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut debugger = match debugger {
        Ok(debugger) => debugger,
        Err(error) => return format!("no stacks: gdb could not be started ({error})"),
    };
    let deadline = std::time::Instant::now() + DEBUGGER_DEADLINE;
    while matches!(debugger.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = debugger.kill();
    match debugger.wait_with_output() {
        Ok(output) => format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(error) => format!("no stacks: gdb failed ({error})"),
    }
}

/// Waits for `pid` until it ends or `CHILD_DEADLINE` passes (then takes its threads' stacks
/// and kills it).
fn ending_within_deadline(pid: libc::pid_t) -> Ending {
    let deadline = std::time::Instant::now() + CHILD_DEADLINE;
    loop {
        let mut status = 0;
        // SAFETY: polls the child just made, without blocking.
        let waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if waited == pid {
            return if libc::WIFEXITED(status) {
                Ending::Exited(libc::WEXITSTATUS(status))
            } else {
                Ending::Killed(libc::WTERMSIG(status))
            };
        }
        if std::time::Instant::now() >= deadline {
            let stacks = stacks_of(pid);
            // SAFETY: kills and reaps the hung child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Ending::Hung(stacks);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn children_forked_amid_contended_calls_finish_contended_calls_of_their_own() {
    use attrflow::flows::chunked_subscriber::SubscriberArchive;
    use attrflow::store::{SqliteOptions, Synchronous};
    use attrflow::Runtime;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let dir = tempfile::tempdir().expect("a temporary folder");
    let normal = || SqliteOptions {
        synchronous: Synchronous::Normal,
        ..SqliteOptions::default()
    };
    let open = |name: &str| {
        SqliteStore::open_with(dir.path().join(name), normal())
            .map(|store| Runtime::new(Arc::new(store)))
    };
    let parent = open("parent.db").expect("the parent opens its store");
    SubscriberArchive::new(&parent, "busy")
        .start()
        .expect("started");
    let stop = AtomicBool::new(false);
    let endings = std::thread::scope(|s| {
        // The parent's threads queue for one flow's lock and its commit group all along, so
        // its threads keep waiting for and waking each other as the forks happen.
        for t in 0..8 {
            let (parent, stop) = (&parent, &stop);
            s.spawn(move || {
                let archive = SubscriberArchive::new(parent, "busy");
                let mut k = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    match archive.register(&format!("p{t}-{k}"), "parent@example.com") {
                        Ok(_) | Err(Error::LockConflict(_)) => k += 1,
                        Err(other) => panic!("a parent's call failed: {other}"),
                    }
                }
            });
        }
        let mut endings = Vec::new();
        for child in 0..FORKS {
            let pid = fork_running(|| {
                let runtime = open(&format!("child-{child}.db")).expect("opened");
                SubscriberArchive::new(&runtime, "own")
                    .start()
                    .expect("started");
                std::thread::scope(|s| {
                    for t in 0..4 {
                        let runtime = &runtime;
                        s.spawn(move || {
                            let archive = SubscriberArchive::new(runtime, "own");
                            let mut done = 0;
                            while done < 25 {
                                match archive.register(&format!("c{t}-{done}"), "c@example.com") {
                                    Ok(_) => done += 1,
                                    Err(Error::LockConflict(_)) => {}
                                    Err(other) => panic!("a child's call failed: {other}"),
                                }
                            }
                        });
                    }
                });
                OPENED
            });
            match ending_within_deadline(pid) {
                Ending::Exited(OPENED) => {}
                other => endings.push((child, other)),
            }
        }
        stop.store(true, Ordering::Relaxed);
        endings
    });
    // With `parking_lot`'s locks in the core, about one child in 25 hung or aborted
    // ("aborting due to panic in parking lot"): a thread of the parent was inside the
    // process-wide table those locks wait through as the fork happened.
    let report: Vec<String> = endings
        .iter()
        .map(|(child, ending)| match ending {
            Ending::Hung(stacks) => format!("child {child} hung; its threads:\n{stacks}"),
            other => format!("child {child}: {other:?}"),
        })
        .collect();
    assert!(
        endings.is_empty(),
        "children of {FORKS} that did not finish their calls:\n{}",
        report.join("\n")
    );
}
