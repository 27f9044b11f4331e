//! Waiting for a flow's run to close ([`Runtime::wait_for_flow`], Dex's `wait_for_flow`):
//! a stopped flow answers at once, a running one once a stop commits (through this runtime
//! or another one on the store), `None` when the time runs out, and a flow never started
//! is not found.

mod common;

use std::time::Duration;

use attrflow::{Error, FlowDefinition, FlowStatus, Runtime, StartFlowOptions, StopType};
use common::TestStore;

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
