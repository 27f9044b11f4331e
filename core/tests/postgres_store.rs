//! What only the PostgreSQL store has: a transaction that lost a race on the server is a
//! retryable lock conflict, a lock row another process is creating is a conflict at once
//! while new flows created side by side never conflict, the connection pool is bounded, schemas keep stores apart, and
//! connection failures name the store without its password, a server restart costs no
//! call more than a retry, TLS checks the server's certificate as `sslmode` says, and a
//! call running while its flow is stopped and started again writes nothing into the new
//! run.
//!
//! Every test here is `#[ignore]`d, so the SQLite pass lists them as ignored by name; the
//! PostgreSQL pass runs them explicitly (`ATTRFLOW_TEST_BACKEND=postgres cargo test -p
//! attrflow --test postgres_store -- --ignored`), and there each fails without a server.

mod common;

use std::process::Command;
use std::sync::{mpsc, Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::Duration;

use attrflow::store::{PostgresStore, COMMIT_OUTCOME_UNKNOWN};
use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, Runtime, StartFlowOptions};
use common::{checkpoint, retry_lock_conflicts, Backend, Pause, TestStore};
use serde_json::{json, Value};

const FLOW_TYPE: &str = "Counter";
const FLOW: &str = "counter";

/// `Bump` is transactional but takes no lock: it reads `count`, parks at `pause` the first
/// time, and writes `count + 1`. `Hold` does the same holding the lock of `count`. `Peek`
/// reads `count` without locks, and `Glance` too, parking at `pause` the first time.
fn counter(pause: Option<Pause>) -> FlowDefinition {
    let pause = Arc::new(Mutex::new(pause));
    let bump = |pause: Arc<Mutex<Option<Pause>>>| {
        move |ctx: &mut attrflow::RpcContext<'_>, _: Value| {
            let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0);
            let parked = pause.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(pause) = parked {
                pause.wait();
            }
            ctx.set_attribute("count", json!(count + 1))?;
            Ok(json!(count + 1))
        }
    };
    let glance = Arc::clone(&pause);
    FlowDefinition::builder(FLOW_TYPE)
        .attribute("count")
        .rpc(RpcDefinition::new("Bump", bump(Arc::clone(&pause))).transactional())
        .rpc(RpcDefinition::new("Hold", bump(pause)).lock_attribute("count"))
        .rpc(RpcDefinition::new("Glance", move |ctx, _| {
            let count = ctx.attribute("count")?.cloned().unwrap_or(Value::Null);
            let parked = glance.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(pause) = parked {
                pause.wait();
            }
            Ok(count)
        }))
        .rpc(RpcDefinition::new("Peek", |ctx, _| {
            Ok(ctx.attribute("count")?.cloned().unwrap_or(Value::Null))
        }))
        .build()
        .unwrap()
}

fn call(runtime: &Runtime, rpc: &str) -> attrflow::Result<Value> {
    runtime.invoke_rpc(FLOW_TYPE, FLOW, rpc, Value::Null, &RpcInvokeOptions::new())
}

/// Held for reading by every test here, for writing by those that restart the server, so
/// that a restart never cuts off another test's calls.
static SERVER: RwLock<()> = RwLock::new(());

fn sharing_the_server() -> RwLockReadGuard<'static, ()> {
    SERVER.read().unwrap_or_else(|e| e.into_inner())
}

fn restarting_the_server() -> RwLockWriteGuard<'static, ()> {
    SERVER.write().unwrap_or_else(|e| e.into_inner())
}

/// A connection of the test's own to the test database (not through attrflow).
fn test_database() -> postgres::Client {
    postgres::Client::connect(
        &std::env::var(common::POSTGRES_URL_ENV).unwrap(),
        postgres::NoTls,
    )
    .unwrap()
}

/// Fails the test unless it runs on the PostgreSQL backend.
fn require_postgres() {
    assert_eq!(
        Backend::under_test(),
        Backend::Postgres,
        "a PostgreSQL-only test: run it with ATTRFLOW_TEST_BACKEND=postgres and a server \
         (scripts/postgres.sh), as scripts/test.sh does"
    );
}

/// A store on the PostgreSQL backend with the counter flow started, and a second runtime
/// on it opened with `url_parameters` added to its URL.
fn postgres_counter(pause: Option<Pause>, url_parameters: &str) -> (TestStore, Runtime) {
    require_postgres();
    let t = TestStore::fast();
    t.runtime.register(counter(None)).unwrap();
    t.runtime
        .start_flow(
            FLOW_TYPE,
            FLOW,
            &StartFlowOptions::new().with_attribute("count", json!(0)),
        )
        .unwrap();
    let runtime = Runtime::open(&format!("{}{url_parameters}", t.url)).unwrap();
    runtime.register(counter(pause)).unwrap();
    (t, runtime)
}

/// Restarts the test server (fast shutdown: the server ends every session), as
/// `scripts/postgres.sh restart` does.
fn restart_server() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/postgres.sh");
    let status = Command::new("bash")
        .args([script, "restart"])
        .status()
        .expect("run scripts/postgres.sh restart");
    assert!(
        status.success(),
        "restarting the test server failed; this test needs the server of \
         scripts/postgres.sh (ATTRFLOW_TEST_POSTGRES_DIR)"
    );
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_transaction_overtaken_by_a_concurrent_commit_is_a_retryable_conflict_and_loses_no_update() {
    let _server = sharing_the_server();
    let (mut checkpoint, pause) = checkpoint();
    // Another process, as far as this process's locks and groups go: a URL naming another
    // application (stores opened with one URL share their groups, so the parked call would
    // hold up the other's).
    let (t, parked_runtime) = postgres_counter(Some(pause), "&application_name=parked");
    thread::scope(|s| {
        let overtaken = s.spawn(|| call(&parked_runtime, "Bump"));
        checkpoint.wait_until_entered();
        assert_eq!(call(&t.runtime, "Bump").unwrap(), json!(1));
        checkpoint.release();
        let result = overtaken.join().unwrap();
        match result {
            Err(Error::LockConflict(message)) => {
                assert!(message.contains("SQLSTATE 40001"), "{message}")
            }
            other => panic!("expected a serialization conflict, got {other:?}"),
        }
    });
    assert_eq!(
        t.stored_values(FLOW)["count"],
        1,
        "the overtaken call wrote nothing"
    );
    assert_eq!(
        retry_lock_conflicts(|| call(&parked_runtime, "Bump")).unwrap(),
        json!(2)
    );
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_lock_row_another_process_is_creating_is_a_conflict_at_once_not_a_wait() {
    let _server = sharing_the_server();
    require_postgres();
    // A lock timeout far longer than the test waits: a call that waited on the other
    // process's new lock row instead of conflicting would not return in time.
    for parameters in [
        "lock_timeout_ms=120000",
        "lock_timeout_ms=120000&group_commit=off",
    ] {
        let t = TestStore::fast_with_postgres_parameters(parameters);
        t.runtime.register(counter(None)).unwrap();
        t.runtime
            .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
            .unwrap();
        // Another process, as far as locks go: a URL naming another application has a
        // lock table of its own in this process.
        let (mut checkpoint, pause) = checkpoint();
        let peer = Runtime::open(&format!("{}&application_name=peer", t.url)).unwrap();
        peer.register(counter(Some(pause))).unwrap();
        thread::scope(|s| {
            // The flow's first locking call: it creates the lock row and parks holding it.
            let holder = s.spawn(|| call(&peer, "Hold"));
            checkpoint.wait_until_entered();
            let (sender, answer) = mpsc::channel();
            let runtime = &t.runtime;
            s.spawn(move || sender.send(call(runtime, "Hold")));
            let answered = answer.recv_timeout(Duration::from_secs(60));
            checkpoint.release();
            match answered {
                // Grouped, the holder's new row is not committed yet: it is claimed. With
                // `group_commit=off` the row was created and committed on its own before
                // the holder locked it: it is locked.
                Ok(Err(Error::LockConflict(message))) => assert!(
                    message.contains("creating lock rows") || message.contains("are locked"),
                    "{parameters}: {message}"
                ),
                other => panic!("{parameters}: expected a lock conflict at once, got {other:?}"),
            }
            assert_eq!(holder.join().unwrap().unwrap(), json!(1), "{parameters}");
        });
        assert_eq!(
            retry_lock_conflicts(|| call(&t.runtime, "Hold")).unwrap(),
            json!(2),
            "{parameters}: the conflict left nothing held"
        );
    }
}

#[test]
#[ignore = "PostgreSQL only"]
fn two_stores_opened_in_one_process_with_one_url_share_their_groups() {
    let _server = sharing_the_server();
    require_postgres();
    // A group stays open a second after its call ran, waiting for more calls to join.
    let t = TestStore::fast_with_postgres_parameters("commit_delay_us=1000000");
    let (mut checkpoint, pause) = checkpoint();
    t.runtime.register(counter(Some(pause))).unwrap();
    t.runtime
        .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
        .unwrap();
    let other = Runtime::open(&t.url).unwrap();
    other.register(counter(None)).unwrap();
    thread::scope(|s| {
        let first = s.spawn(|| call(&t.runtime, "Hold"));
        checkpoint.wait_until_entered();
        checkpoint.release();
        // Until the first call's handler has ended and released its lock (early): a call
        // queued behind a handler that has run longer than the lock grace (this one was
        // parked) conflicts. Its group stays open, holding the lock row of `count` until
        // its COMMIT.
        for _ in 0..30_000 {
            if t.held_locks() == 0 {
                break;
            }
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(t.held_locks(), 0, "the first call's handler ended");
        // The other store's call takes the lock inside that same group.
        assert_eq!(
            call(&other, "Hold").unwrap(),
            json!(2),
            "the other store's call joined the open group and read its write"
        );
        assert_eq!(first.join().unwrap().unwrap(), json!(1));
    });
    assert_eq!(t.stored_values(FLOW)["count"], 2);
}

/// What a forked child reports through its exit code.
const CHILD_LOCKED_AFTER_THE_PARENT: i32 = 0;
const CHILD_STILL_REFUSED: i32 = 3;

#[test]
#[ignore = "PostgreSQL only"]
fn a_forked_child_does_not_inherit_a_lock_its_parent_held_at_the_fork() {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast();
    let (mut checkpoint, pause) = checkpoint();
    t.runtime.register(counter(Some(pause))).unwrap();
    t.runtime
        .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
        .unwrap();
    thread::scope(|s| {
        // The parent's call holds the lock of `count`, in this process and on the server.
        let holder = s.spawn(|| call(&t.runtime, "Hold"));
        checkpoint.wait_until_entered();
        // SAFETY: the child opens a store of its own, calls through it and ends with
        // `_exit`, never returning into the test harness nor dropping the parent's objects.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = std::panic::catch_unwind(|| {
                let runtime = Runtime::open(&t.url).unwrap();
                runtime.register(counter(None)).unwrap();
                // The parent releases its lock soon; the child's call must then get it, not
                // find it held for ever by a thread the child does not have.
                for _ in 0..2_000 {
                    match call(&runtime, "Hold") {
                        Ok(_) => return CHILD_LOCKED_AFTER_THE_PARENT,
                        Err(Error::LockConflict(_)) => thread::sleep(Duration::from_millis(10)),
                        Err(other) => panic!("{other:?}"),
                    }
                }
                CHILD_STILL_REFUSED
            })
            .unwrap_or(1);
            // SAFETY: ends the child at once, without running the parent's exit handlers.
            unsafe { libc::_exit(code) };
        }
        checkpoint.release();
        assert_eq!(holder.join().unwrap().unwrap(), json!(1));
        let mut status = 0;
        // SAFETY: waits for the child just made.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(waited, pid);
        assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
        assert_eq!(libc::WEXITSTATUS(status), CHILD_LOCKED_AFTER_THE_PARENT);
    });
    assert_eq!(t.stored_values(FLOW)["count"], 2);
}

#[test]
#[ignore = "PostgreSQL only"]
fn creating_a_lock_row_waits_out_an_unrelated_lock_instead_of_conflicting() {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast();
    t.runtime.register(counter(None)).unwrap();
    t.runtime
        .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
        .unwrap();
    // Creating a lock row now waits for a lock that is no lock of attrflow's (as an insert
    // may wait for the table's extension lock): a trigger takes an advisory lock the test
    // holds.
    let schema = schema_of(&t);
    let mut holder = test_database();
    holder
        .batch_execute(&format!(
            "CREATE FUNCTION \"{schema}\".held_by_the_test() RETURNS trigger LANGUAGE plpgsql
                 AS $$ BEGIN PERFORM pg_advisory_xact_lock(727, 1); RETURN NEW; END $$;
             CREATE TRIGGER held_by_the_test BEFORE INSERT ON \"{schema}\".attribute_locks
                 FOR EACH ROW EXECUTE FUNCTION \"{schema}\".held_by_the_test();"
        ))
        .unwrap();
    holder
        .batch_execute("BEGIN; SELECT pg_advisory_xact_lock(727, 1);")
        .unwrap();
    let (sender, answer) = mpsc::channel();
    thread::scope(|s| {
        let runtime = &t.runtime;
        s.spawn(move || sender.send(call(runtime, "Hold")));
        // Until the call waits for the test's lock, or has already returned.
        let waiting = |holder: &mut postgres::Client| -> bool {
            let row = holder
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
                     AND classid = 727 AND objid = 1 AND NOT granted",
                    &[],
                )
                .unwrap();
            row.get::<_, i64>(0) > 0
        };
        let early = loop {
            if waiting(&mut holder) {
                break None;
            }
            if let Ok(answered) = answer.recv_timeout(Duration::from_millis(5)) {
                break Some(answered);
            }
        };
        holder.batch_execute("COMMIT").unwrap();
        let answered = early.unwrap_or_else(|| answer.recv().unwrap());
        assert_eq!(
            answered.unwrap(),
            json!(1),
            "the call waited for the unrelated lock, then created its row and ran"
        );
    });
}

#[test]
#[ignore = "PostgreSQL only"]
fn first_locking_calls_on_many_new_flows_at_once_never_conflict() {
    let _server = sharing_the_server();
    require_postgres();
    const THREADS: usize = 16;
    const FLOWS_PER_THREAD: usize = 12;
    for parameters in ["group_lanes=4", "group_commit=off"] {
        let t = TestStore::fast_with_postgres_parameters(&format!("pool_max_size=16&{parameters}"));
        t.runtime.register(counter(None)).unwrap();
        let conflicts: Vec<String> = thread::scope(|s| {
            let threads: Vec<_> = (0..THREADS)
                .map(|thread| {
                    let runtime = &t.runtime;
                    s.spawn(move || {
                        let mut conflicts = Vec::new();
                        for n in 0..FLOWS_PER_THREAD {
                            let flow = format!("new-{thread}-{n}");
                            runtime
                                .start_flow(FLOW_TYPE, &flow, &StartFlowOptions::new())
                                .unwrap();
                            let hold = runtime.invoke_rpc(
                                FLOW_TYPE,
                                &flow,
                                "Hold",
                                Value::Null,
                                &RpcInvokeOptions::new(),
                            );
                            match hold {
                                Ok(value) => assert_eq!(value, json!(1)),
                                Err(Error::LockConflict(message)) => conflicts.push(message),
                                Err(other) => panic!("{flow}: {other:?}"),
                            }
                        }
                        conflicts
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|thread| thread.join().unwrap())
                .collect()
        });
        assert!(
            conflicts.is_empty(),
            "{parameters}: {} of {} first calls, each on a flow of its own, conflicted: {:?}",
            conflicts.len(),
            THREADS * FLOWS_PER_THREAD,
            conflicts.first()
        );
    }
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_call_that_finds_every_pooled_connection_busy_waits_then_is_a_lock_conflict() {
    let _server = sharing_the_server();
    let (mut checkpoint, pause) = checkpoint();
    let (_t, runtime) = postgres_counter(Some(pause), "&pool_max_size=1&pool_timeout_ms=50");
    thread::scope(|s| {
        let holder = s.spawn(|| call(&runtime, "Bump"));
        checkpoint.wait_until_entered();
        match call(&runtime, "Peek") {
            Err(Error::LockConflict(message)) => {
                assert!(
                    message.contains("all 1 connections stayed busy"),
                    "{message}"
                )
            }
            other => panic!("expected a busy pool, got {other:?}"),
        }
        checkpoint.release();
        assert_eq!(holder.join().unwrap().unwrap(), json!(1));
    });
    assert_eq!(
        call(&runtime, "Peek").unwrap(),
        json!(1),
        "the connection came back"
    );
}

/// A lock-free call's snapshot is read and ended before its handler runs, so the handler
/// holds no pooled connection: with a pool of one, a call parked in a lock-free handler
/// leaves the connection to the others, and answers what it read before them.
#[test]
#[ignore = "PostgreSQL only"]
fn a_lock_free_handler_holds_no_pooled_connection_while_it_runs() {
    let _server = sharing_the_server();
    let (mut checkpoint, pause) = checkpoint();
    let (_t, runtime) = postgres_counter(Some(pause), "&pool_max_size=1&pool_timeout_ms=50");
    thread::scope(|s| {
        let glance = s.spawn(|| call(&runtime, "Glance"));
        checkpoint.wait_until_entered();
        let (bumped, peeked) = (call(&runtime, "Bump"), call(&runtime, "Peek"));
        checkpoint.release();
        assert_eq!(
            glance.join().unwrap().unwrap(),
            json!(0),
            "read before the bump"
        );
        assert_eq!(
            bumped.unwrap(),
            json!(1),
            "the pool's one connection was free"
        );
        assert_eq!(peeked.unwrap(), json!(1));
    });
}

#[test]
#[ignore = "PostgreSQL only"]
fn stores_in_two_schemas_of_one_database_are_independent() {
    let _server = sharing_the_server();
    let (t, _) = postgres_counter(None, "");
    let other = TestStore::fast();
    assert_ne!(other.url, t.url);
    assert_eq!(other.flow(FLOW), None, "the other schema has no counter");
    other.runtime.register(counter(None)).unwrap();
    other
        .runtime
        .start_flow(
            FLOW_TYPE,
            FLOW,
            &StartFlowOptions::new().with_attribute("count", json!(40)),
        )
        .unwrap();
    assert_eq!(call(&other.runtime, "Bump").unwrap(), json!(41));
    assert_eq!(call(&t.runtime, "Peek").unwrap(), json!(0));
}

#[test]
#[ignore = "PostgreSQL only"]
fn an_unreachable_server_is_a_storage_error_naming_the_store_without_its_password() {
    let _server = sharing_the_server();
    require_postgres();
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    let url = "postgresql://app:secret@127.0.0.1:1/app?connect_timeout=2";
    match PostgresStore::open(url) {
        Err(Error::Storage(message)) => {
            assert!(
                message.contains("postgresql://app:***@127.0.0.1:1/app")
                    && !message.contains("secret"),
                "{message}"
            );
            assert!(message.contains("connecting"), "{message}");
        }
        other => panic!("expected a storage error, got {other:?}"),
    }
    assert!(matches!(
        Runtime::open("postgresql://127.0.0.1/app?sslmode=allow"),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
#[ignore = "PostgreSQL only"]
fn after_a_server_restart_the_next_call_succeeds_on_a_new_connection() {
    let _server = restarting_the_server();
    let (t, runtime) = postgres_counter(None, "&pool_max_size=4");
    // Several connections sit in the pool, each opened before the restart.
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| retry_lock_conflicts(|| call(&runtime, "Bump")).unwrap());
        }
    });
    restart_server();
    assert_eq!(call(&runtime, "Bump").unwrap(), json!(5));
    assert_eq!(call(&runtime, "Peek").unwrap(), json!(5));
    assert_eq!(call(&t.runtime, "Peek").unwrap(), json!(5));
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_call_cut_off_by_a_restart_before_its_commit_is_retryable_and_wrote_nothing() {
    let _server = restarting_the_server();
    let (mut checkpoint, pause) = checkpoint();
    let (t, runtime) = postgres_counter(Some(pause), "");
    thread::scope(|s| {
        let cut_off = s.spawn(|| call(&runtime, "Bump"));
        checkpoint.wait_until_entered();
        restart_server();
        checkpoint.release();
        match cut_off.join().unwrap() {
            Err(error @ Error::LockConflict(_)) => {
                let message = error.to_string();
                assert!(error.is_retryable());
                assert!(
                    message.contains("connection to the server was lost")
                        && message.contains("nothing of this call was committed"),
                    "{message}"
                );
                assert!(!message.contains(COMMIT_OUTCOME_UNKNOWN), "{message}");
            }
            other => panic!("expected a retryable error, got {other:?}"),
        }
    });
    assert_eq!(t.stored_values(FLOW)["count"], 0, "nothing was written");
    assert_eq!(call(&runtime, "Bump").unwrap(), json!(1));
}

/// A CA file that scripts/postgres.sh wrote next to the test server: `ca.crt` signed its
/// certificate (for IP 127.0.0.1 only), `other-ca.crt` signed nothing of it.
fn ca_file(name: &str) -> String {
    let dir = std::env::var("ATTRFLOW_TEST_POSTGRES_DIR").expect(
        "the TLS tests need the server of scripts/postgres.sh (ATTRFLOW_TEST_POSTGRES_DIR)",
    );
    format!("{dir}/{name}")
}

/// Opens the store of `t` with TLS parameters added to its URL, on `host` instead of
/// 127.0.0.1, and reads through it.
fn open_over_tls(t: &TestStore, host: &str, parameters: &str) -> attrflow::Result<()> {
    let url = format!("{}&{parameters}", t.url).replacen("127.0.0.1", host, 1);
    let store = PostgresStore::open(&url)?;
    attrflow::store::Store::flow(&store, "no such flow").map(|flow| assert_eq!(flow, None))
}

#[test]
#[ignore = "PostgreSQL only"]
fn verify_full_with_the_servers_ca_connects_over_tls() {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast();
    let ca = ca_file("ca.crt");
    let url = format!(
        "{}&sslmode=verify-full&sslrootcert={ca}&application_name=attrflow_tls_check",
        t.url
    );
    let runtime = Runtime::open(&url).unwrap();
    runtime.register(counter(None)).unwrap();
    runtime
        .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
        .unwrap();
    assert_eq!(call(&runtime, "Bump").unwrap(), json!(1));
    // The connection it used is still open in its pool, and it is encrypted.
    let mut check = test_database();
    let row = check
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE s.ssl)
             FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.application_name = 'attrflow_tls_check'",
            &[],
        )
        .unwrap();
    let (connections, encrypted): (i64, i64) = (row.get(0), row.get(1));
    assert!(
        connections > 0 && encrypted == connections,
        "{encrypted} of {connections}"
    );

    // verify-ca checks the chain only; require with a CA file does the same, as in libpq.
    open_over_tls(
        &t,
        "localhost",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    )
    .unwrap();
    open_over_tls(
        &t,
        "localhost",
        &format!("sslmode=require&sslrootcert={ca}"),
    )
    .unwrap();
    open_over_tls(&t, "127.0.0.1", "sslmode=require").unwrap();
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_certificate_that_does_not_check_out_is_refused_with_a_clear_error() {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast();
    let refused = |host: &str, parameters: String| match open_over_tls(&t, host, &parameters) {
        Err(Error::Storage(message)) => message,
        other => panic!("expected a refused certificate with {parameters}, got {other:?}"),
    };
    let other_ca = ca_file("other-ca.crt");
    for mode in ["verify-full", "verify-ca", "require"] {
        let message = refused(
            "127.0.0.1",
            format!("sslmode={mode}&sslrootcert={other_ca}"),
        );
        assert!(
            message.contains("TLS")
                && message.contains("UnknownIssuer")
                && message.contains("check sslmode and sslrootcert")
                && message.contains(&format!("sslmode={mode}")),
            "{message}"
        );
    }
    // The certificate names 127.0.0.1, not localhost.
    let message = refused(
        "localhost",
        format!("sslmode=verify-full&sslrootcert={}", ca_file("ca.crt")),
    );
    assert!(message.contains("not valid for name"), "{message}");

    match open_over_tls(&t, "127.0.0.1", "sslmode=verify-full") {
        Err(Error::InvalidInput(message)) => {
            assert!(message.contains("needs sslrootcert"), "{message}")
        }
        other => panic!("expected a missing CA file, got {other:?}"),
    }
    match open_over_tls(
        &t,
        "127.0.0.1",
        "sslmode=verify-full&sslrootcert=/nonexistent.pem",
    ) {
        Err(Error::InvalidInput(message)) => {
            assert!(
                message.contains("sslrootcert /nonexistent.pem"),
                "{message}"
            )
        }
        other => panic!("expected a missing CA file, got {other:?}"),
    }
}

/// Checks `watch` until it reports a change, for up to 30 s; whether it did.
fn hears_a_change(watch: &mut dyn attrflow::store::ChangeWatch) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if watch.changed().unwrap() {
            return true;
        }
        thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

#[test]
#[ignore = "PostgreSQL only"]
fn with_notify_on_a_change_watch_hears_the_commits_of_another_store() {
    use attrflow::store::Store;
    let _server = sharing_the_server();
    for writer in ["&notify=on", "&notify=on&group_commit=off"] {
        let (t, runtime) = postgres_counter(None, writer);
        assert!(PostgresStore::open(&t.url)
            .unwrap()
            .watch_changes()
            .unwrap()
            .is_none());
        let watcher = PostgresStore::open(&format!("{}&notify=on", t.url)).unwrap();
        let mut watch = watcher.watch_changes().unwrap().expect("a change watch");
        call(&runtime, "Bump").unwrap();
        assert!(
            hears_a_change(&mut *watch),
            "{writer}: the commit went unheard"
        );
        // Once reported, a change is not reported again.
        assert!(!watch.changed().unwrap(), "{writer}");
        call(&runtime, "Bump").unwrap();
        assert!(
            hears_a_change(&mut *watch),
            "{writer}: the second commit went unheard"
        );
    }
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_change_watch_listens_again_after_a_server_restart() {
    use attrflow::store::Store;
    let _server = restarting_the_server();
    let (t, runtime) = postgres_counter(None, "&notify=on");
    let watcher = PostgresStore::open(&format!("{}&notify=on", t.url)).unwrap();
    let mut watch = watcher.watch_changes().unwrap().expect("a change watch");
    restart_server();
    // The lost connection is reported as a change (commits may have gone unheard), then
    // the watch listens again and goes quiet.
    assert!(hears_a_change(&mut *watch));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while watch.changed().unwrap() {
        assert!(
            std::time::Instant::now() < deadline,
            "the watch never went quiet"
        );
    }
    retry_lock_conflicts(|| call(&runtime, "Bump")).unwrap();
    assert!(
        hears_a_change(&mut *watch),
        "a commit after the restart went unheard"
    );
}

/// The schema a test store lives in, from its URL.
fn schema_of(t: &TestStore) -> String {
    let after = t.url.rsplit("schema=").next().expect("a schema in the URL");
    after.split('&').next().unwrap_or(after).to_owned()
}

/// How the values of `attribute_values` in `schema` are stored: the column's compression
/// setting (`""` for the server's default) and the compression of every compressed value.
fn value_compression(client: &mut postgres::Client, schema: &str) -> (String, Vec<String>) {
    let table = format!("\"{schema}\".attribute_values");
    let column: i8 = client
        .query_one(
            "SELECT attcompression FROM pg_attribute \
             WHERE attrelid = $1::text::regclass AND attname = 'value'",
            &[&table],
        )
        .expect("read the column's compression")
        .get(0);
    let values = client
        .query(
            &format!(
                "SELECT pg_column_compression(value) FROM {table} \
                 WHERE pg_column_compression(value) IS NOT NULL ORDER BY name"
            ),
            &[],
        )
        .expect("read the values' compression")
        .iter()
        .map(|row| row.get(0))
        .collect();
    let column = match column {
        0 => String::new(),
        code => char::from(u8::try_from(code).unwrap_or(b'?')).to_string(),
    };
    (column, values)
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_store_written_at_schema_version_1_is_migrated_on_open_and_keeps_every_value() {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    common::register_in_order(&archive, 1..=150);
    let before = common::all_subscribers(&archive);
    // Back to schema version 1 as that release wrote it: the column compressed with the
    // server's default (pglz), every value written that way, and no run state in the
    // flows' rows (version 3).
    let schema = schema_of(&t);
    let mut client = test_database();
    client
        .batch_execute(&format!(
            "SET default_toast_compression = pglz;
             ALTER TABLE \"{schema}\".attribute_values ALTER COLUMN value SET COMPRESSION default;
             UPDATE \"{schema}\".attribute_values SET value = value || '';
             ALTER TABLE \"{schema}\".flows DROP COLUMN closed_run;"
        ))
        .unwrap();
    t.set_schema_version(1);
    let (column, values) = value_compression(&mut client, &schema);
    assert_eq!(column, "");
    assert!(
        !values.is_empty() && values.iter().all(|c| c == "pglz"),
        "{values:?}"
    );

    let t = t.reopen();
    let version: i64 = client
        .query_one(
            &format!("SELECT version FROM \"{schema}\".attrflow_schema"),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, attrflow::store::postgres::SCHEMA_VERSION);
    assert_eq!(version, 3);
    let archive = t.archive();
    assert_eq!(
        common::all_subscribers(&archive),
        before,
        "every value reads back"
    );
    common::register_in_order(&archive, 151..=200);
    assert_eq!(
        common::all_subscribers(&archive),
        (1..=200)
            .map(common::expected_subscriber)
            .collect::<Vec<_>>()
    );
    let (column, values) = value_compression(&mut client, &schema);
    assert_eq!(column, "l", "the column is compressed with lz4 from now on");
    assert!(values.iter().any(|c| c == "pglz"), "{values:?}");
    assert!(
        values.iter().any(|c| c == "lz4"),
        "the rewritten open chunk: {values:?}"
    );
    // The migrated flows stop, and their stop is seen by the next call.
    t.runtime
        .stop_flow(
            attrflow::flows::chunked_subscriber::FLOW_ID,
            attrflow::StopType::Cancel,
            None,
        )
        .unwrap();
    assert!(matches!(
        archive.register("late", "late@example.com"),
        Err(attrflow::Error::FlowNotActive { .. })
    ));
}

/// Whether a session of `application` waits for a lock on the server.
fn waits_for_a_lock(client: &mut postgres::Client, application: &str) -> bool {
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name = $1 AND wait_event_type = 'Lock'",
            &[&application],
        )
        .unwrap();
    row.get::<_, i64>(0) > 0
}

/// Runs `Raise` once on a fresh counter flow opened with `url_parameters`, while another
/// runtime (another process, as far as groups go) stops the flow and starts a new run of it,
/// and checks that the new run holds none of the call's writes.
///
/// `Raise` (locking `raised` when `locking`, a lock the flow never took before, so the call
/// creates its lock row, which no earlier stop or start could touch) reads `count`, has the
/// other runtime stop the flow and start it again, and writes `count + 10` to `raised`, a
/// value the new run does not start with. It waits until that replacement is done or waits
/// for a lock on the server.
fn raise_while_the_run_is_replaced(url_parameters: &str, locking: bool) {
    let _server = sharing_the_server();
    require_postgres();
    let t = TestStore::fast_with_postgres_parameters(url_parameters);
    let other = Arc::new(Runtime::open(&format!("{}&application_name=replacing", t.url)).unwrap());
    other.register(counter(None)).unwrap();
    let options = StartFlowOptions::new().with_attribute("count", json!(0));
    let replacing = Arc::new(Mutex::new(None));
    let raise = RpcDefinition::new("Raise", {
        let (other, replacing, options) =
            (Arc::clone(&other), Arc::clone(&replacing), options.clone());
        move |ctx, _| {
            let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0);
            let mut replacing = replacing.lock().unwrap_or_else(|e| e.into_inner());
            if replacing.is_none() {
                let (other, options) = (Arc::clone(&other), options.clone());
                let thread = thread::spawn(move || {
                    other.stop_flow(FLOW, attrflow::StopType::Cancel, None)?;
                    other.start_flow(FLOW_TYPE, FLOW, &options)
                });
                let mut watcher = test_database();
                while !thread.is_finished() && !waits_for_a_lock(&mut watcher, "replacing") {
                    thread::sleep(Duration::from_millis(2));
                }
                *replacing = Some(thread);
            }
            ctx.set_attribute("raised", json!(count + 10))?;
            Ok(json!(count + 10))
        }
    });
    let raise = if locking {
        raise.lock_attribute("raised")
    } else {
        raise
    };
    let definition = FlowDefinition::builder(FLOW_TYPE)
        .attribute("count")
        .attribute("raised")
        .rpc(raise)
        .build()
        .unwrap();
    t.runtime.register(definition).unwrap();
    let first_run = t.runtime.start_flow(FLOW_TYPE, FLOW, &options).unwrap();

    let raised = t.runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW,
        "Raise",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    let thread = replacing
        .lock()
        .unwrap()
        .take()
        .expect("the replacement began");
    let new_run = thread.join().unwrap().unwrap();
    assert_ne!(new_run, first_run);
    match raised {
        // The call committed before the stop, into the run it read.
        Ok(value) => assert_eq!(value, json!(10)),
        // Or it lost to the stop and wrote nothing.
        Err(Error::LockConflict(_)) => {}
        Err(other) => panic!("expected the call to commit or conflict, got {other:?}"),
    }
    let stored = t.stored_values(FLOW);
    assert_eq!(stored.get("count"), Some(&json!(0)));
    assert_eq!(
        stored.get("raised"),
        None,
        "the new run holds its initial values only, nothing the call wrote from the old run \
         ({url_parameters:?}, locking: {locking})"
    );
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_run_stopped_and_replaced_while_a_locking_call_runs_gets_none_of_its_writes() {
    raise_while_the_run_is_replaced("", true);
    raise_while_the_run_is_replaced("group_commit=off", true);
}

#[test]
#[ignore = "PostgreSQL only"]
fn a_run_stopped_and_replaced_while_a_lock_free_call_runs_gets_none_of_its_writes() {
    raise_while_the_run_is_replaced("", false);
    raise_while_the_run_is_replaced("group_commit=off", false);
}
