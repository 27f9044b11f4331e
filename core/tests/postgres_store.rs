//! What only the PostgreSQL store has: a transaction that lost a race on the server is a
//! retryable lock conflict, the connection pool is bounded, schemas keep stores apart, and
//! connection failures name the store without its password. These run in the PostgreSQL
//! pass of the suite (`ATTRFLOW_TEST_BACKEND=postgres`) and return at once on SQLite.

mod common;

use std::thread;

use attrflow::store::PostgresStore;
use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, Runtime, StartFlowOptions};
use common::{checkpoint, retry_lock_conflicts, Backend, Pause, TestStore};
use serde_json::{json, Value};

const FLOW_TYPE: &str = "Counter";
const FLOW: &str = "counter";

/// `Bump` is transactional but takes no lock: it reads `count`, parks at `pause` the first
/// time, and writes `count + 1`. `Peek` reads `count` without locks.
fn counter(pause: Option<Pause>) -> FlowDefinition {
    let pause = std::sync::Mutex::new(pause);
    FlowDefinition::builder(FLOW_TYPE)
        .attribute("count")
        .rpc(
            RpcDefinition::new("Bump", move |ctx, _| {
                let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0);
                let parked = pause.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(pause) = parked {
                    pause.wait();
                }
                ctx.set_attribute("count", json!(count + 1))?;
                Ok(json!(count + 1))
            })
            .transactional(),
        )
        .rpc(RpcDefinition::new("Peek", |ctx, _| {
            Ok(ctx.attribute("count")?.cloned().unwrap_or(Value::Null))
        }))
        .build()
        .unwrap()
}

fn call(runtime: &Runtime, rpc: &str) -> attrflow::Result<Value> {
    runtime.invoke_rpc(FLOW_TYPE, FLOW, rpc, Value::Null, &RpcInvokeOptions::new())
}

/// A store on the PostgreSQL backend with the counter flow started, or `None` on SQLite.
fn postgres_counter(pause: Option<Pause>, url_parameters: &str) -> Option<(TestStore, Runtime)> {
    let t = TestStore::fast();
    if t.backend() != Backend::Postgres {
        return None;
    }
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
    Some((t, runtime))
}

#[test]
fn a_transaction_overtaken_by_a_concurrent_commit_is_a_retryable_conflict_and_loses_no_update() {
    let (mut checkpoint, pause) = checkpoint();
    let Some((t, parked_runtime)) = postgres_counter(Some(pause), "") else {
        return;
    };
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
fn a_call_that_finds_every_pooled_connection_busy_waits_then_is_a_lock_conflict() {
    let (mut checkpoint, pause) = checkpoint();
    let Some((_t, runtime)) = postgres_counter(Some(pause), "&pool_max_size=1&pool_timeout_ms=50")
    else {
        return;
    };
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

#[test]
fn stores_in_two_schemas_of_one_database_are_independent() {
    let Some((t, _)) = postgres_counter(None, "") else {
        return;
    };
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
fn an_unreachable_server_is_a_storage_error_naming_the_store_without_its_password() {
    if Backend::under_test() != Backend::Postgres {
        return;
    }
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
        Runtime::open("postgresql://127.0.0.1/app?sslmode=require"),
        Err(Error::InvalidInput(_))
    ));
}
