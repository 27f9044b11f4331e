//! The process's counters move with the calls: RPC calls by outcome (ok, lock conflict,
//! other error), lock conflicts, commits, the calls they made durable, the calls handed to
//! the store in batches, and a commit latency histogram whose cumulative buckets end at the
//! number of commits.
//!
//! The counters are the process's, so this file holds one test: nothing else in its
//! process calls the runtime while it compares snapshots.

mod common;

use std::thread;

use attrflow::metrics::{self, MetricsSnapshot};
use attrflow::{
    Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, RpcRequest, StartFlowOptions,
};
use common::{checkpoint, Pause, TestStore};
use serde_json::{json, Value};

const FLOW_TYPE: &str = "Counted";

fn counted(pause: Pause) -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .attribute("a")
        .rpc(
            RpcDefinition::new("Hold", move |ctx, _| {
                ctx.set_attribute("a", json!("held"))?;
                pause.wait();
                Ok(Value::Null)
            })
            .lock_attribute("a"),
        )
        .rpc(
            RpcDefinition::new("Write", |ctx, input| {
                ctx.set_attribute("a", input)?;
                Ok(Value::Null)
            })
            .lock_attribute("a"),
        )
        .rpc(
            RpcDefinition::new("Fail", |ctx, _| {
                ctx.set_attribute("a", json!("never stored"))?;
                Err(Error::handler("refused"))
            })
            .lock_attribute("a"),
        )
        .build()
        .unwrap()
}

fn delta(after: &MetricsSnapshot, before: &MetricsSnapshot) -> [u64; 6] {
    [
        after.calls_ok - before.calls_ok,
        after.calls_lock_conflict - before.calls_lock_conflict,
        after.calls_error - before.calls_error,
        after.lock_conflicts - before.lock_conflicts,
        after.commits() - before.commits(),
        after.members_committed - before.members_committed,
    ]
}

#[test]
fn counters_follow_calls_conflicts_errors_and_commits() {
    let (checkpoint, pause) = checkpoint();
    let t = TestStore::fast();
    t.runtime.register(counted(pause)).unwrap();
    let call = |rpc: &str, input: Value| {
        t.runtime
            .invoke_rpc(FLOW_TYPE, "one", rpc, input, &RpcInvokeOptions::new())
    };
    let before = t.runtime.metrics();

    t.runtime
        .start_flow(FLOW_TYPE, "one", &StartFlowOptions::new())
        .unwrap();
    for n in 0..3 {
        call("Write", json!(n)).unwrap();
    }
    assert!(matches!(
        call("Fail", Value::Null),
        Err(Error::HandlerFailure { .. })
    ));
    assert!(matches!(
        call("Missing", Value::Null),
        Err(Error::InvalidInput(_))
    ));
    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call("Hold", Value::Null));
        checkpoint.wait_until_entered();
        let conflict = call("Write", json!("second")).unwrap_err();
        assert!(matches!(conflict, Error::LockConflict(_)), "{conflict:?}");
        checkpoint.release();
        holder.join().unwrap().unwrap();
    });

    let after = metrics::snapshot();
    let [ok, conflicts, errors, lock_conflicts, commits, members] = delta(&after, &before);
    assert_eq!(ok, 4, "three writes and the holder");
    assert_eq!(conflicts, 1);
    assert_eq!(errors, 2, "the failing handler and the unknown RPC");
    assert_eq!(after.calls() - before.calls(), 7);
    assert_eq!(lock_conflicts, 1);
    assert_eq!(members, 5, "the flow start, three writes and the holder");
    assert!((1..=members).contains(&commits), "{commits} commits");

    let histogram = &after.commit_latency;
    assert_eq!(
        histogram.buckets.len(),
        metrics::COMMIT_LATENCY_BUCKETS.len() + 1
    );
    for pair in histogram.buckets.windows(2) {
        assert!(pair[0].0 < pair[1].0, "bounds ascend");
        assert!(pair[0].1 <= pair[1].1, "counts are cumulative");
    }
    assert_eq!(
        histogram.buckets.last(),
        Some(&(f64::INFINITY, after.commits()))
    );
    assert!(histogram.sum_seconds > before.commit_latency.sum_seconds);
    assert_eq!(
        after.calls_batched, before.calls_batched,
        "calls made one by one"
    );

    // A batch: the calls handed to the store together are counted, each call by its outcome.
    let request = |rpc: &str, input: Value| RpcRequest {
        flow_type: FLOW_TYPE.to_owned(),
        flow_id: "one".to_owned(),
        rpc_name: rpc.to_owned(),
        input,
        options: RpcInvokeOptions::new(),
    };
    let results = t.runtime.invoke_rpcs(vec![
        request("Write", json!("b1")),
        request("Fail", Value::Null),
        request("Missing", Value::Null),
        request("Write", json!("b2")),
    ]);
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 2);
    let batched = metrics::snapshot();
    let [ok, conflicts, errors, _, _, members] = delta(&batched, &after);
    assert_eq!((ok, conflicts, errors, members), (2, 0, 2, 2));
    assert_eq!(
        batched.calls_batched - after.calls_batched,
        3,
        "the three calls handed to the store (the unknown RPC never was)"
    );
    t.runtime
        .invoke_rpcs(vec![request("Write", json!("alone"))]);
    assert_eq!(
        metrics::snapshot().calls_batched,
        batched.calls_batched,
        "a batch of one is a call on its own"
    );
}
