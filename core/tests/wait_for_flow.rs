//! Waiting for a flow's run to close ([`Runtime::wait_for_flow`], Dex's `wait_for_flow`):
//! a stopped flow answers at once, a running one once a stop commits (through this runtime
//! or another one on the store), `None` when the time runs out, and a flow never started
//! is not found. The wait is for the run the flow had when it began: a start that
//! replaces that run, or a stop and a new start between two looks, still report it; two
//! replacements between two looks end it with `RunNotCurrent`.

mod common;

use std::time::Duration;

use attrflow::lifecycle::REPLACED_REASON;
use attrflow::{
    Error, FlowDefinition, FlowStatus, IdReusePolicy, RpcDefinition, RpcInvokeOptions, Runtime,
    StartFlowOptions, StopType,
};
use common::TestStore;
use serde_json::{json, Value};

const PLAIN: &str = "Plain";

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime
        .register(FlowDefinition::builder(PLAIN).build().unwrap())
        .unwrap();
    t.runtime
        .start_flow(PLAIN, "w-1", &StartFlowOptions::new())
        .unwrap();
    t
}

/// Stops `w-1` through `stopper` after a moment, on a thread of its own, while the caller
/// waits for it.
fn stop_later(stopper: &Runtime) {
    std::thread::sleep(Duration::from_millis(100));
    stopper
        .stop_flow("w-1", StopType::Fail, Some("gave up"))
        .unwrap();
}

#[test]
fn a_stopped_flow_is_closed_at_once() {
    let t = started();
    t.runtime.stop_flow("w-1", StopType::Cancel, None).unwrap();
    let closed = t
        .runtime
        .wait_for_flow("w-1", Duration::from_secs(30))
        .unwrap()
        .expect("closed");
    assert_eq!(closed, t.runtime.describe_flow("w-1").unwrap());
    assert_eq!(closed.status, FlowStatus::Canceled);
}

#[test]
fn a_wait_returns_when_a_stop_commits_here_or_through_another_runtime() {
    for other_runtime in [false, true] {
        let t = started();
        let (_store, other) = t.open_again();
        let stopper = if other_runtime { &other } else { &t.runtime };
        let closed = std::thread::scope(|scope| {
            scope.spawn(|| stop_later(stopper));
            t.runtime.wait_for_flow("w-1", Duration::from_secs(30))
        })
        .unwrap()
        .expect("the stop was seen before the time ran out");
        assert_eq!(closed.status, FlowStatus::Failed);
        assert_eq!(
            closed.closed.map(|c| c.reason),
            Some(Some("gave up".to_owned()))
        );
    }
}

#[test]
fn a_running_flow_is_none_when_the_time_runs_out_and_a_missing_one_is_not_found() {
    let t = started();
    assert_eq!(
        t.runtime
            .wait_for_flow("w-1", Duration::from_millis(50))
            .unwrap(),
        None
    );
    assert_eq!(
        t.runtime
            .wait_for_flow("nobody", Duration::from_millis(50))
            .unwrap_err(),
        Error::FlowNotFound {
            flow_id: "nobody".into()
        }
    );
    assert!(matches!(
        t.runtime.wait_for_flow("w-1", Duration::from_secs(3600)),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn a_run_replaced_while_waited_for_is_reported_terminated_under_its_own_run() {
    let t = started();
    let waited = t.runtime.describe_flow("w-1").unwrap();
    let replacing = StartFlowOptions::new().id_reuse_policy(IdReusePolicy::TerminateIfRunning);
    let (closed, new_run) = std::thread::scope(|scope| {
        let replacer = scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            t.runtime.start_flow(PLAIN, "w-1", &replacing).unwrap()
        });
        let closed = t.runtime.wait_for_flow("w-1", Duration::from_secs(30));
        (closed, replacer.join().unwrap())
    });
    let closed = closed
        .unwrap()
        .expect("the replacement closed the waited run before the time ran out");
    assert_ne!(new_run, waited.run_id);
    assert_eq!(
        (closed.run_id.as_str(), closed.status, closed.started_at_ms),
        (
            waited.run_id.as_str(),
            FlowStatus::Terminated,
            waited.started_at_ms
        )
    );
    let ended = closed.closed.expect("a closed run says how it closed");
    assert_eq!(
        (ended.status, ended.reason.as_deref()),
        (FlowStatus::Terminated, Some(REPLACED_REASON))
    );
    let now = t.runtime.describe_flow("w-1").unwrap();
    assert_eq!((now.run_id, now.status), (new_run, FlowStatus::Running));
}

#[test]
fn a_run_stopped_and_started_again_through_another_runtime_is_reported_as_stopped() {
    let t = started();
    let waited = t.runtime.describe_flow("w-1").unwrap();
    let (_store, other) = t.open_again();
    other
        .register(FlowDefinition::builder(PLAIN).build().unwrap())
        .unwrap();
    let closed = std::thread::scope(|scope| {
        scope.spawn(|| {
            stop_later(&other);
            other
                .start_flow(PLAIN, "w-1", &StartFlowOptions::new())
                .unwrap()
        });
        t.runtime.wait_for_flow("w-1", Duration::from_secs(30))
    })
    .unwrap()
    .expect("the stop was seen before the time ran out");
    assert_eq!(
        (closed.run_id.as_str(), closed.status),
        (waited.run_id.as_str(), FlowStatus::Failed)
    );
    assert_eq!(
        closed.closed.and_then(|c| c.reason),
        Some("gave up".to_owned())
    );
    assert_ne!(
        t.runtime.describe_flow("w-1").unwrap().run_id,
        waited.run_id
    );
}

/// A run replaced twice between two looks of a wait (both starts committed by one group,
/// queued behind a call parked in it) is recorded by neither new run: the wait ends with
/// `RunNotCurrent`, naming the waited run and the flow's run now.
#[test]
fn a_run_replaced_twice_between_two_looks_is_not_current() {
    let (checkpoint, pause) = common::checkpoint();
    // One lane on PostgreSQL, so that the parked call's group takes the starts in.
    let t = TestStore::fast_with_postgres_parameters("group_lanes=1");
    t.runtime
        .register(FlowDefinition::builder(PLAIN).build().unwrap())
        .unwrap();
    let holder = FlowDefinition::builder("Holder")
        .attribute("v")
        .rpc(
            RpcDefinition::new("Hold", move |ctx, _| {
                ctx.set_attribute("v", json!(1))?;
                pause.wait();
                Ok(Value::Null)
            })
            .lock_attribute("v"),
        )
        .build()
        .unwrap();
    t.runtime.register(holder).unwrap();
    for (flow_type, flow_id) in [(PLAIN, "w-1"), ("Holder", "holder")] {
        t.runtime
            .start_flow(flow_type, flow_id, &StartFlowOptions::new())
            .unwrap();
    }
    let waited = t.runtime.describe_flow("w-1").unwrap();
    let replacing = StartFlowOptions::new().id_reuse_policy(IdReusePolicy::TerminateIfRunning);
    let queued_behind_the_holder = |n: usize| {
        while t.store.group_stats().waiting < n {
            std::thread::sleep(Duration::from_millis(1));
        }
    };

    let (waited_out, newest) = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| t.runtime.wait_for_flow("w-1", Duration::from_secs(30)));
        // The wait's first look pins the run it waits for; a machine too loaded to take it
        // in this time makes the test fail (the wait then times out), not pass.
        std::thread::sleep(Duration::from_millis(200));
        let mut checkpoint = checkpoint;
        let rt = &t.runtime;
        let holder = scope.spawn(move || {
            rt.invoke_rpc(
                "Holder",
                "holder",
                "Hold",
                Value::Null,
                &RpcInvokeOptions::new(),
            )
        });
        checkpoint.wait_until_entered();
        let first = scope.spawn(|| rt.start_flow(PLAIN, "w-1", &replacing));
        queued_behind_the_holder(1);
        let second = scope.spawn(|| rt.start_flow(PLAIN, "w-1", &replacing));
        queued_behind_the_holder(2);
        checkpoint.release();
        holder.join().unwrap().unwrap();
        let between = first.join().unwrap().unwrap();
        let newest = second.join().unwrap().unwrap();
        assert_ne!(between, newest);
        (waiter.join().unwrap(), newest)
    });

    match waited_out {
        Err(Error::RunNotCurrent {
            flow_id,
            run_id,
            current_run_id,
        }) => assert_eq!(
            (flow_id.as_str(), run_id, current_run_id),
            ("w-1", waited.run_id, newest)
        ),
        other => panic!("expected RunNotCurrent, got {other:?}"),
    }
}
