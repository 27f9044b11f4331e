//! Waiting for a value ([`Runtime::wait_for_attribute_equal`], Dex's
//! `client.wait_for_attribute_equal`): it returns at once when the committed value already
//! equals the expected one, wakes when a write of this runtime or of another one commits it,
//! gives `false` when the time runs out, fails when the flow is stopped while it waits, and
//! refuses an expected value that is not a string, boolean or number.

mod common;

use std::sync::Arc;
use std::time::Duration;

use attrflow::{Error, FlowDefinition, FlowStatus, LockTarget, MapInstance, StartFlowOptions};
use attrflow::{Runtime, StopType};
use common::TestStore;
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);

fn started() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(definition()).unwrap();
    t.runtime
        .start_flow("Status", "s-1", &StartFlowOptions::new())
        .unwrap();
    t
}

fn definition() -> FlowDefinition {
    FlowDefinition::builder("Status")
        .attribute("state")
        .map("steps")
        .default_value("state", json!("waiting"))
        .build()
        .unwrap()
}

fn state() -> LockTarget {
    LockTarget::Attribute("state".into())
}

fn wait(runtime: &Runtime, target: &LockTarget, expected: &str, timeout: Duration) -> bool {
    runtime
        .wait_for_attribute_equal("s-1", target, expected, timeout)
        .unwrap()
}

#[test]
fn an_equal_value_returns_at_once_and_an_unequal_one_times_out() {
    let t = started();
    assert!(wait(&t.runtime, &state(), r#""waiting""#, LONG));
    assert!(!wait(
        &t.runtime,
        &state(),
        r#""done""#,
        Duration::from_millis(20)
    ));
    let step = LockTarget::MapInstance(MapInstance::new("steps", "first"));
    // An unset value equals nothing.
    assert!(!wait(&t.runtime, &step, "0", Duration::ZERO));
    // Numbers compare by value.
    t.runtime.set_attribute("s-1", &step, "1.0", None).unwrap();
    assert!(wait(&t.runtime, &step, "1", Duration::ZERO));
    assert!(!wait(&t.runtime, &step, "1.5", Duration::ZERO));
}

#[test]
fn a_write_of_this_runtime_or_another_wakes_the_waiter() {
    let t = Arc::new(started());
    let waiter = std::thread::spawn({
        let t = Arc::clone(&t);
        move || wait(&t.runtime, &state(), r#""running""#, LONG)
    });
    t.runtime
        .set_attribute("s-1", &state(), r#""running""#, None)
        .unwrap();
    assert!(waiter.join().unwrap());

    // Another runtime on the same store, as another process would write it.
    let (_store, other) = t.open_again();
    other.register(definition()).unwrap();
    let waiter = std::thread::spawn({
        let t = Arc::clone(&t);
        move || wait(&t.runtime, &state(), "true", LONG)
    });
    other.set_attribute("s-1", &state(), "true", None).unwrap();
    assert!(waiter.join().unwrap());
}

#[test]
fn a_flow_stopped_while_waiting_fails_the_wait() {
    let t = Arc::new(started());
    let waiter = std::thread::spawn({
        let t = Arc::clone(&t);
        move || {
            t.runtime
                .wait_for_attribute_equal("s-1", &state(), r#""done""#, LONG)
        }
    });
    t.runtime
        .stop_flow("s-1", StopType::Terminate, None)
        .unwrap();
    match waiter.join().unwrap() {
        Err(Error::FlowNotActive { flow_id, status }) => {
            assert_eq!(flow_id, "s-1");
            assert_eq!(status, FlowStatus::Terminated);
        }
        other => panic!("expected FlowNotActive, got {other:?}"),
    }
}

#[test]
fn refusals_name_what_was_wrong() {
    let t = started();
    let refused = |target: &LockTarget, expected: &str, timeout: Duration| match t
        .runtime
        .wait_for_attribute_equal("s-1", target, expected, timeout)
    {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("expected InvalidInput for {expected}, got {other:?}"),
    };
    for expected in ["null", "{\"a\":1}", "[1]"] {
        assert!(
            refused(&state(), expected, LONG)
                .starts_with("wait_for_attribute_equal supports only string, boolean, or number"),
            "{expected}"
        );
    }
    assert!(refused(&state(), "{", LONG).contains("the expected value is not JSON"));
    assert_eq!(
        refused(&state(), "1", Duration::from_secs(61)),
        "timeout must be from 0 to 60 seconds, not 61 seconds"
    );
    assert_eq!(
        refused(&LockTarget::Attribute("other".into()), "1", LONG),
        "flow type \"Status\" declares no Attribute or AttributeMap \"other\""
    );
    assert_eq!(
        refused(&LockTarget::Attribute("steps".into()), "1", LONG),
        "AttributeMap \"steps\" is read one instance at a time; name the instance"
    );
    match t
        .runtime
        .wait_for_attribute_equal("nobody", &state(), "1", LONG)
    {
        Err(Error::FlowNotFound { flow_id }) => assert_eq!(flow_id, "nobody"),
        other => panic!("expected FlowNotFound, got {other:?}"),
    }
}
