//! Stopping flows ([`Runtime::stop_flow`], Dex's `stop_flow`) and describing them
//! ([`Runtime::describe_flow`]): a stopped flow refuses every RPC and a second stop with
//! `FlowNotActive` naming how it ended, whichever runtime asks, and a start whose ID reuse
//! policy begins no new run with `FlowAlreadyStarted`; its values stay readable; a lock-free RPC that read the flow before the stop does not commit after
//! it; and `describe_flow` reports the run, its status, and how and when it ended.

mod common;

use std::sync::Arc;

use attrflow::flows::chunked_subscriber::FLOW_ID as ARCHIVE_ID;
use attrflow::{
    Error, FlowDefinition, FlowStatus, IdReusePolicy, LockTarget, RpcDefinition, StopType,
};
use attrflow::{RpcInvokeOptions, Runtime, StartFlowOptions};
use common::TestStore;
use serde_json::{json, Value};

const COUNTER: &str = "Counter";

/// A flow type with a singleton `count`: `Increase` (locks it) adds one and returns the new
/// count, `Read` (lock-free) returns it.
fn counter() -> FlowDefinition {
    FlowDefinition::builder(COUNTER)
        .attribute("count")
        .default_value("count", json!(0))
        .rpc(
            RpcDefinition::new("Increase", |ctx, _| {
                let count = ctx
                    .attribute("count")?
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0)
                    + 1;
                ctx.set_attribute("count", json!(count))?;
                Ok(json!(count))
            })
            .lock_attribute("count"),
        )
        .rpc(RpcDefinition::new("Read", |ctx, _| {
            Ok(ctx.attribute("count")?.cloned().unwrap_or(Value::Null))
        }))
        .build()
        .unwrap()
}

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(counter()).unwrap();
    t.runtime
        .start_flow(COUNTER, "c-1", &StartFlowOptions::new())
        .unwrap();
    t
}

fn call(runtime: &Runtime, rpc: &str) -> attrflow::Result<Value> {
    runtime.invoke_rpc(COUNTER, "c-1", rpc, Value::Null, &RpcInvokeOptions::new())
}

#[track_caller]
fn assert_not_active<T: std::fmt::Debug>(result: attrflow::Result<T>, status: FlowStatus) {
    match result {
        Err(Error::FlowNotActive {
            flow_id,
            status: actual,
        }) => {
            assert_eq!((flow_id.as_str(), actual), ("c-1", status));
        }
        other => panic!("expected FlowNotActive ({status}), got {other:?}"),
    }
}

#[test]
fn a_stopped_flow_refuses_rpcs_stops_and_starts_and_keeps_its_values() {
    let t = started();
    assert_eq!(call(&t.runtime, "Increase").unwrap(), json!(1));
    t.runtime.stop_flow("c-1", StopType::Cancel, None).unwrap();

    assert_not_active(call(&t.runtime, "Increase"), FlowStatus::Canceled);
    assert_not_active(call(&t.runtime, "Read"), FlowStatus::Canceled);
    assert_not_active(
        t.runtime.stop_flow("c-1", StopType::Terminate, None),
        FlowStatus::Canceled,
    );
    // A start whose policy does not begin a new run is refused, whatever it ignores.
    for ignore in [false, true] {
        let refused = t.runtime.start_flow(
            COUNTER,
            "c-1",
            &StartFlowOptions::new()
                .ignore_already_started(ignore)
                .id_reuse_policy(IdReusePolicy::Disallow),
        );
        match refused {
            Err(Error::FlowAlreadyStarted {
                flow_id, status, ..
            }) => {
                assert_eq!((flow_id.as_str(), status), ("c-1", FlowStatus::Canceled));
            }
            other => panic!("expected FlowAlreadyStarted (canceled), got {other:?}"),
        }
    }
    let message = call(&t.runtime, "Read").unwrap_err().to_string();
    assert_eq!(
        message,
        "flow \"c-1\" was stopped (canceled): it serves no RPCs"
    );
    // Its values are kept and readable, and nothing the refused calls did was stored.
    let count = LockTarget::Attribute("count".into());
    assert_eq!(
        t.runtime.get_attribute("c-1", &count, None).unwrap(),
        Some("1".to_owned())
    );
    assert_eq!(t.stored_values("c-1").get("count"), Some(&json!(1)));
}

#[test]
fn every_runtime_on_the_store_sees_the_stop() {
    let t = started();
    let (_store, other) = t.open_again();
    other.register(counter()).unwrap();
    assert_eq!(call(&other, "Increase").unwrap(), json!(1));
    t.runtime
        .stop_flow("c-1", StopType::Fail, Some("operator"))
        .unwrap();
    assert_not_active(call(&other, "Increase"), FlowStatus::Failed);
    assert_not_active(call(&other, "Read"), FlowStatus::Failed);
    let reopened = t.reopen();
    reopened.runtime.register(counter()).unwrap();
    assert_not_active(call(&reopened.runtime, "Increase"), FlowStatus::Failed);
}

#[test]
fn describe_flow_reports_the_run_and_how_it_ended() {
    for (stop, status) in [
        (StopType::Cancel, FlowStatus::Canceled),
        (StopType::Terminate, FlowStatus::Terminated),
        (StopType::Fail, FlowStatus::Failed),
    ] {
        let t = started();
        let running = t.runtime.describe_flow("c-1").unwrap();
        let record = t.flow("c-1").unwrap();
        assert_eq!(
            (
                running.flow_id.as_str(),
                running.run_id.as_str(),
                running.flow_type.as_str(),
                running.status,
                running.closed.is_none()
            ),
            (
                "c-1",
                record.run_id.as_str(),
                COUNTER,
                FlowStatus::Running,
                true
            )
        );
        let now_ms = i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap();
        assert!(
            (now_ms - 600_000..=now_ms).contains(&running.started_at_ms),
            "started {} against now {now_ms}",
            running.started_at_ms
        );

        t.runtime
            .stop_flow("c-1", stop, Some("no longer needed"))
            .unwrap();
        let stopped = t.runtime.describe_flow("c-1").unwrap();
        assert_eq!(stopped.status, status);
        assert_eq!(stopped.run_id, running.run_id);
        assert_eq!(stopped.started_at_ms, running.started_at_ms);
        let closed = stopped.closed.unwrap();
        assert_eq!(closed.status, status);
        assert_eq!(closed.reason.as_deref(), Some("no longer needed"));
        assert!(closed.closed_at_ms >= running.started_at_ms);
    }
}

#[test]
fn a_flow_never_started_cannot_be_stopped_or_described() {
    let t = started();
    for result in [
        t.runtime
            .stop_flow("nobody", StopType::Cancel, None)
            .map(drop),
        t.runtime.describe_flow("nobody").map(drop),
    ] {
        match result {
            Err(Error::FlowNotFound { flow_id }) => assert_eq!(flow_id, "nobody"),
            other => panic!("expected FlowNotFound, got {other:?}"),
        }
    }
    assert!(matches!(
        t.runtime.stop_flow("a/b", StopType::Cancel, None),
        Err(Error::InvalidInput(_))
    ));
    // The running flow was not touched.
    assert_eq!(call(&t.runtime, "Increase").unwrap(), json!(1));
}

#[test]
fn a_lock_free_rpc_that_read_before_the_stop_does_not_commit_after_it() {
    let t = Arc::new(started());
    let (store, stopper) = t.open_again();
    let stopper = Arc::new(stopper);
    // A lock-free RPC that writes: it reads the count, and before it returns the flow is
    // stopped through another runtime.
    let racing = FlowDefinition::builder("Racing")
        .attribute("count")
        .rpc(RpcDefinition::new("WriteAfterStop", {
            let stopper = Arc::clone(&stopper);
            move |ctx, _| {
                let _ = ctx.attribute("count")?;
                let stopper = Arc::clone(&stopper);
                std::thread::spawn(move || stopper.stop_flow("r-1", StopType::Cancel, None))
                    .join()
                    .expect("the stopping thread ended")?;
                ctx.set_attribute("count", json!(99))?;
                Ok(Value::Null)
            }
        }))
        .build()
        .unwrap();
    t.runtime.register(racing).unwrap();
    t.runtime
        .start_flow("Racing", "r-1", &StartFlowOptions::new())
        .unwrap();
    let first = t.runtime.invoke_rpc(
        "Racing",
        "r-1",
        "WriteAfterStop",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    match first {
        Err(Error::LockConflict(message)) => assert!(message.contains("/run"), "{message}"),
        other => panic!("expected a lock conflict, got {other:?}"),
    }
    let again = t.runtime.invoke_rpc(
        "Racing",
        "r-1",
        "WriteAfterStop",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    assert!(
        matches!(
            again,
            Err(Error::FlowNotActive {
                status: FlowStatus::Canceled,
                ..
            })
        ),
        "{again:?}"
    );
    assert_eq!(t.stored_values("r-1").get("count"), None);
    drop(store);
}

#[test]
fn a_built_in_flow_stops_too() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    archive.register("s-1", "s-1@example.com").unwrap();
    t.runtime
        .stop_flow(ARCHIVE_ID, StopType::Terminate, None)
        .unwrap();
    for result in [
        archive.register("s-2", "s-2@example.com").map(drop),
        archive.page("current").map(drop),
    ] {
        assert!(
            matches!(
                result,
                Err(Error::FlowNotActive {
                    status: FlowStatus::Terminated,
                    ..
                })
            ),
            "{result:?}"
        );
    }
    // Its client's idempotent start does not begin a new run (which would hold none of its
    // values), and the stopped run keeps them.
    let again = archive.start();
    assert!(
        matches!(
            again,
            Err(Error::FlowNotActive {
                status: FlowStatus::Terminated,
                ..
            })
        ),
        "{again:?}"
    );
    assert_eq!(
        t.runtime.describe_flow(ARCHIVE_ID).unwrap().status,
        FlowStatus::Terminated
    );
    assert!(t
        .stored_values(ARCHIVE_ID)
        .contains_key("subscriber_chunks/current"));
}

#[test]
fn an_inspection_reads_a_stopped_flow_and_writes_nothing() {
    let t = started();
    call(&t.runtime, "Increase").unwrap();
    let archive = t.archive();
    archive.start().unwrap();
    archive.register("s-1", "s-1@example.com").unwrap();
    let running = archive.inspect_page("current", None).unwrap();
    t.runtime
        .stop_flow(ARCHIVE_ID, StopType::Cancel, None)
        .unwrap();
    t.runtime.stop_flow("c-1", StopType::Cancel, None).unwrap();

    // The stopped archive's page, read as an inspection, is the page it had.
    assert_eq!(archive.inspect_page("current", None).unwrap(), running);
    assert_eq!(running.subscribers[0].subscriber_id, "s-1");
    let read = t.runtime.inspect_rpc_output(
        COUNTER,
        "c-1",
        "Read",
        Value::Null,
        &RpcInvokeOptions::new(),
    );
    assert_eq!(read.unwrap().into_value().unwrap(), json!(1));

    // An RPC that writes is refused as an inspection, running flow or not, and writes nothing.
    for flow_id in ["c-1", "c-2"] {
        if flow_id == "c-2" {
            t.runtime
                .start_flow(COUNTER, "c-2", &StartFlowOptions::new())
                .unwrap();
        }
        let before = t.stored_values(flow_id);
        let refused = t.runtime.inspect_rpc_output(
            COUNTER,
            flow_id,
            "Increase",
            Value::Null,
            &RpcInvokeOptions::new(),
        );
        match refused {
            Err(Error::InvalidInput(message)) => assert_eq!(
                message,
                "an inspection only reads, but RPC \"Increase\" staged writes to count"
            ),
            other => panic!("expected InvalidInput, got {other:?}"),
        }
        assert_eq!(t.stored_values(flow_id), before);
    }
    assert_eq!(t.held_locks(), 0);
}
