//! Retry is chosen by the policy a client is given, not by the method called: while
//! another call holds an app log's lock, an append by a client with
//! `RetryPolicy::NONE` fails at once with the lock conflict and appends nothing, and the
//! same append by a client with a patient policy waits the holder out and appends.
//!
//! The holder is an RPC beside the built-in ones in the `ChunkedLogFlow` definition that
//! takes an append's locks and parks on a checkpoint, so the conflict is forced, not
//! hoped for. Nothing here asserts how long anything took.

mod common;

use std::thread;

use attrflow::flows::app_log::{
    self, append_options, AppLog, FLOW_TYPE, LOG_CHUNKS_MAP, LOG_STATES_MAP,
};
use attrflow::retry::RetryPolicy;
use attrflow::{Error, FlowDefinition, RpcDefinition, Runtime};
use common::{checkpoint, patient_retry, Pause, TestStore};
use serde_json::{json, Value};

const HOLD: &str = "HoldLog";

/// The app log's definition with [`HOLD`] added: it parks on `pause` holding whatever
/// locks its call names.
fn app_log_with_holder(pause: Pause) -> FlowDefinition {
    let built_in = app_log::definition();
    let builder = FlowDefinition::builder(FLOW_TYPE)
        .map(LOG_STATES_MAP)
        .map(LOG_CHUNKS_MAP);
    built_in
        .rpcs()
        .cloned()
        .fold(builder, |builder, rpc| builder.rpc(rpc))
        .rpc(RpcDefinition::new(HOLD, move |_, _| {
            pause.wait();
            Ok(Value::Null)
        }))
        .build()
        .unwrap()
}

#[test]
fn a_lock_conflict_is_retried_under_a_policy_and_not_under_none() {
    let t = TestStore::fast();
    let (mut held, pause) = checkpoint();
    let runtime = Runtime::without_built_ins(t.store.as_store());
    runtime.register(app_log_with_holder(pause)).unwrap();
    let once = AppLog::new(&runtime, "app").with_retry_policy(RetryPolicy::NONE);
    let patient = AppLog::new(&runtime, "app").with_retry_policy(patient_retry());
    once.start().unwrap();
    thread::scope(|s| {
        let holder = s.spawn(|| {
            runtime.invoke_rpc(
                FLOW_TYPE,
                "app",
                HOLD,
                Value::Null,
                &append_options("audit"),
            )
        });
        held.wait_until_entered();
        // One call, refused at once.
        let refused = once.append("audit", json!("first try"));
        assert!(
            matches!(refused, Err(Error::LockConflict(_))),
            "{refused:?}"
        );
        // Retried until the holder lets go.
        let retrying = s.spawn(|| patient.append("audit", json!("retried")));
        thread::sleep(std::time::Duration::from_millis(50));
        held.release();
        holder.join().unwrap().unwrap();
        let entry = retrying.join().unwrap().unwrap();
        assert_eq!((entry.sequence, entry.record), (1, json!("retried")));
    });
    // The refused append stored nothing.
    let page = once.page("audit", "").unwrap();
    assert_eq!(page.entries.len(), 1);
}
