//! RPC locks are fail-fast try-locks on exact physical names: while one call holds a name, a
//! second call that locks it fails at once with a retryable lock conflict and touches
//! nothing; other names and other flows do not conflict; and locks are released however
//! the holder ends (success, error or panic). Locks belong to the file, so two stores
//! opened on it in one process see each other's; and a handler that writes through its
//! own store is refused at once rather than left waiting on itself.
//!
//! A handler parked on a checkpoint holds its locks for as long as the test wants, so every
//! interleaving here is forced, not hoped for.

mod common;

use std::thread;

use attrflow::flows::chunked_subscriber::SubscriberArchive;
use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::{checkpoint, Pause, TestStore};
use serde_json::{json, Value};

const FLOW_TYPE: &str = "Locker";

/// A flow type with two singletons and a map; every RPC says in its name what it locks.
fn locker(pause: Pause) -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .attribute("a")
        .attribute("b")
        .map("m")
        .rpc(
            RpcDefinition::new("HoldA", move |ctx, _| {
                ctx.set_attribute("a", json!("written while held"))?;
                pause.wait();
                Ok(Value::Null)
            })
            .lock_attribute("a"),
        )
        .rpc(RpcDefinition::new("WriteA", write("a")).lock_attribute("a"))
        .rpc(RpcDefinition::new("WriteB", write("b")).lock_attribute("b"))
        .rpc(
            RpcDefinition::new("WriteAB", |ctx, input| {
                ctx.set_attribute("a", input.clone())?;
                ctx.set_attribute("b", input)?;
                Ok(Value::Null)
            })
            .lock_attribute("a")
            .lock_attribute("b"),
        )
        .rpc(RpcDefinition::new("WriteM", |ctx, input| {
            ctx.set_map_instance("m", "x", input)?;
            Ok(Value::Null)
        }))
        .rpc(RpcDefinition::new("Read", |ctx, _| {
            Ok(json!({ "a": ctx.attribute("a")?, "b": ctx.attribute("b")? }))
        }))
        .rpc(
            RpcDefinition::new("FailHoldingA", |ctx, _| {
                ctx.set_attribute("a", json!("never stored"))?;
                Err(Error::handler("refused"))
            })
            .lock_attribute("a"),
        )
        .rpc(
            RpcDefinition::new("PanicHoldingA", |ctx, _| {
                ctx.set_attribute("a", json!("never stored"))?;
                panic!("kaboom")
            })
            .lock_attribute("a"),
        )
        .build()
        .unwrap()
}

fn write(
    attribute: &'static str,
) -> impl Fn(&mut attrflow::RpcContext<'_>, Value) -> attrflow::Result<Value> + Send + Sync {
    move |ctx, input| {
        ctx.set_attribute(attribute, input)?;
        Ok(Value::Null)
    }
}

/// A store with the `Locker` type registered and flows `one` and `two` started.
fn store_with_lockers(pause: Pause) -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(locker(pause)).unwrap();
    for flow in ["one", "two"] {
        t.runtime
            .start_flow(FLOW_TYPE, flow, &StartFlowOptions::new())
            .unwrap();
    }
    t
}

fn call(t: &TestStore, flow: &str, rpc: &str, input: Value) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(FLOW_TYPE, flow, rpc, input, &RpcInvokeOptions::new())
}

fn read(t: &TestStore, flow: &str) -> Value {
    call(t, flow, "Read", Value::Null).unwrap()
}

#[test]
fn a_second_call_on_a_held_name_fails_at_once_with_a_lock_conflict_and_writes_nothing() {
    let (checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "one", "HoldA", Value::Null));
        checkpoint.wait_until_entered();

        let conflict = call(&t, "one", "WriteA", json!("second")).unwrap_err();
        let Error::LockConflict(message) = &conflict else {
            panic!("expected a lock conflict, got {conflict:?}");
        };
        assert_eq!(
            message,
            r#"one or more attribute keys are locked: flow "one", a"#
        );
        assert!(conflict.is_retryable());

        // All or nothing: the call that wanted a and b took neither.
        let partly_held = call(&t, "one", "WriteAB", json!("second")).unwrap_err();
        assert!(
            matches!(partly_held, Error::LockConflict(_)),
            "{partly_held:?}"
        );
        assert_eq!(t.held_locks(), 1, "only the holder's lock on a is held");

        // Calls without locks read the last committed state while the holder runs.
        assert_eq!(read(&t, "one"), json!({ "a": null, "b": null }));

        checkpoint.release();
        holder.join().unwrap().unwrap();
    });

    assert_eq!(
        read(&t, "one"),
        json!({ "a": "written while held", "b": null })
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn calls_on_other_names_or_other_flows_do_not_conflict_with_a_held_lock() {
    let (checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "one", "HoldA", Value::Null));
        checkpoint.wait_until_entered();

        // The SQLite store runs one writing handler at a time, so these wait for the
        // holder's transaction rather than run beside it; what matters is that none of
        // them is turned away with a lock conflict.
        let other_name = s.spawn(|| call(&t, "one", "WriteB", json!("b of one")));
        let other_flow = s.spawn(|| call(&t, "two", "WriteA", json!("a of two")));
        // A lock-free write commits only if what it loaded is unchanged; the holder's
        // write to a may commit between its read and its commit, and then it is retried.
        let unlocked_write = s.spawn(|| {
            common::retry_lock_conflicts(|| call(&t, "one", "WriteM", json!("m of one")))
        });

        checkpoint.release();
        holder.join().unwrap().unwrap();
        other_name.join().unwrap().unwrap();
        other_flow.join().unwrap().unwrap();
        unlocked_write.join().unwrap().unwrap();
    });

    assert_eq!(
        read(&t, "one"),
        json!({ "a": "written while held", "b": "b of one" })
    );
    assert_eq!(read(&t, "two"), json!({ "a": "a of two", "b": null }));
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_released_lock_can_be_taken_again() {
    let (checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "one", "HoldA", Value::Null));
        checkpoint.wait_until_entered();
        assert!(matches!(
            call(&t, "one", "WriteA", json!("too early")),
            Err(Error::LockConflict(_))
        ));
        checkpoint.release();
        holder.join().unwrap().unwrap();
    });

    call(&t, "one", "WriteA", json!("after release")).unwrap();
    assert_eq!(read(&t, "one")["a"], "after release");
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_handler_error_releases_its_locks_and_is_returned_as_it_was_raised() {
    let (_checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    let err = call(&t, "one", "FailHoldingA", Value::Null).unwrap_err();
    assert_eq!(
        err,
        Error::HandlerFailure {
            error_type: String::new(),
            message: "refused".into()
        }
    );
    assert_eq!(t.held_locks(), 0);

    call(&t, "one", "WriteA", json!("after the error")).unwrap();
    assert_eq!(read(&t, "one")["a"], "after the error");
}

#[test]
fn a_handler_panic_releases_its_locks_and_becomes_a_handler_failure() {
    let (_checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    let err = call(&t, "one", "PanicHoldingA", Value::Null).unwrap_err();
    assert_eq!(
        err,
        Error::HandlerFailure {
            error_type: "panic".into(),
            message: "RPC PanicHoldingA panicked: kaboom".into()
        }
    );
    assert_eq!(t.held_locks(), 0);

    call(&t, "one", "WriteA", json!("after the panic")).unwrap();
    assert_eq!(read(&t, "one")["a"], "after the panic");
}

#[test]
fn no_lock_is_left_behind_when_racing_calls_succeed_and_fail() {
    let (_checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);

    // Every caller retries its conflicts; afterwards no lock may be left behind.
    thread::scope(|s| {
        for i in 0..8 {
            let t = &t;
            s.spawn(move || {
                let flow = if i % 2 == 0 { "one" } else { "two" };
                let rpc = ["WriteA", "WriteB", "WriteAB", "FailHoldingA"][i % 4];
                let result = common::retry_lock_conflicts(|| call(t, flow, rpc, json!(i)));
                assert_eq!(result.is_ok(), rpc != "FailHoldingA", "{rpc}: {result:?}");
            });
        }
    });
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_handler_that_writes_through_its_own_store_fails_fast_instead_of_waiting_on_itself() {
    use attrflow::flows::chunked_subscriber::{FLOW_ID, FLOW_TYPE as ARCHIVE};

    let t = TestStore::fast();
    t.archive().start().unwrap();
    let store = t.store.as_store();
    let nested = FlowDefinition::builder("Nested")
        .attribute("a")
        .rpc(
            RpcDefinition::new("CallBack", move |ctx, _| {
                // A second runtime on the same store, as a handler that calls a client
                // would reach it.
                let inner = attrflow::Runtime::new(store.clone());
                let started = inner.start_flow(ARCHIVE, "inner", &StartFlowOptions::new());
                let registered = SubscriberArchive::new(&inner, FLOW_ID).register("s", "s@x");
                ctx.set_attribute("a", json!("outer write"))?;
                Ok(json!([
                    started.map_err(|e| e.to_string()),
                    registered.map_err(|e| e.to_string()),
                ]))
            })
            .lock_attribute("a"),
        )
        .build()
        .unwrap();
    t.runtime.register(nested).unwrap();
    t.runtime
        .start_flow("Nested", "outer", &StartFlowOptions::new())
        .unwrap();

    let output = t
        .runtime
        .invoke_rpc(
            "Nested",
            "outer",
            "CallBack",
            Value::Null,
            &RpcInvokeOptions::new(),
        )
        .unwrap();

    let refusal = format!(
        "store {}: an RPC handler cannot write to the store it is running in \
         (start a flow or call a writing RPC) before its own RPC returns",
        t.location()
    );
    assert_eq!(output, json!([{ "Err": refusal }, { "Err": refusal }]));
    assert_eq!(t.flow("inner"), None);
    assert!(t.archive().page("current").unwrap().subscribers.is_empty());
    assert_eq!(t.stored_values("outer")["a"], "outer write");
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn two_stores_opened_on_one_file_share_their_locks() {
    let (checkpoint, pause) = checkpoint();
    let t = store_with_lockers(pause);
    let (other_store, other_runtime) = t.open_again();
    let (_unused, other_pause) = common::checkpoint();
    other_runtime.register(locker(other_pause)).unwrap();

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "one", "HoldA", Value::Null));
        checkpoint.wait_until_entered();

        let conflict = other_runtime.invoke_rpc(
            FLOW_TYPE,
            "one",
            "WriteA",
            json!("from the other store"),
            &RpcInvokeOptions::new(),
        );
        assert!(
            matches!(conflict, Err(Error::LockConflict(_))),
            "{conflict:?}"
        );
        assert_eq!(
            other_store.held_lock_count(),
            1,
            "the other store sees the lock"
        );

        checkpoint.release();
        holder.join().unwrap().unwrap();
    });
    assert_eq!(other_store.held_lock_count(), 0);
}
