//! Starting a flow under an ID that already has a run ([`StartFlowOptions::id_reuse_policy`],
//! Dex's `IdReusePolicy`): each policy begins a new run, or refuses with
//! `FlowAlreadyStarted` saying where the existing run stands, as Dex's decision table says;
//! a new run may be of another flow type and holds only its own initial values; every
//! runtime, and another process that remembered the flow, sees the new run at once; and a
//! lock-free RPC that read the previous run never commits into the new one.
//!
//! The other-process test runs this test binary again as a child (the `#[ignore]`d test
//! below, selected with `--exact … --ignored`), handing it the store's URL.

mod common;

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use attrflow::{
    Error, FlowDefinition, FlowStatus, IdReusePolicy, RpcDefinition, RpcInvokeOptions, Runtime,
    StartFlowOptions, StopType,
};
use common::{OpenedStore, TestStore};
use serde_json::{json, Value};

const COUNTER: &str = "Counter";
const GREETER: &str = "Greeter";
const FLOW: &str = "c-1";

/// A flow type with a singleton `count` (0 at start): `Increase` (locks it) adds one and
/// returns the new count; `Read` (lock-free) returns the count and the run ID it ran on.
fn counter() -> FlowDefinition {
    FlowDefinition::builder(COUNTER)
        .attribute("count")
        .default_value("count", json!(0))
        .rpc(
            RpcDefinition::new("Increase", |ctx, _| {
                let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0) + 1;
                ctx.set_attribute("count", json!(count))?;
                Ok(json!(count))
            })
            .lock_attribute("count"),
        )
        .rpc(RpcDefinition::new("Read", |ctx, _| {
            Ok(json!({"count": ctx.attribute("count")?, "run": ctx.run_id()}))
        }))
        .build()
        .unwrap()
}

/// Another flow type: a singleton `greeting`; `Greet` returns it and the run ID.
fn greeter() -> FlowDefinition {
    FlowDefinition::builder(GREETER)
        .attribute("greeting")
        .rpc(RpcDefinition::new("Greet", |ctx, _| {
            Ok(json!({"greeting": ctx.attribute("greeting")?, "run": ctx.run_id()}))
        }))
        .build()
        .unwrap()
}

fn register_both(runtime: &Runtime) {
    runtime.register(counter()).unwrap();
    runtime.register(greeter()).unwrap();
}

/// Registers both flow types on `t` and starts a Counter under [`FLOW`]: its run ID.
fn start_counter(t: &TestStore) -> String {
    register_both(&t.runtime);
    t.runtime
        .start_flow(COUNTER, FLOW, &StartFlowOptions::new())
        .unwrap()
}

fn call(runtime: &Runtime, flow_type: &str, rpc: &str) -> attrflow::Result<Value> {
    runtime.invoke_rpc(flow_type, FLOW, rpc, Value::Null, &RpcInvokeOptions::new())
}

/// Checks that the flow's run is now `run`, a Greeter's holding `greeting`: its RPCs serve
/// it and the Counter's are refused.
#[track_caller]
fn assert_greeter_runs(runtime: &Runtime, run: &str, greeting: &str) {
    assert_eq!(
        call(runtime, GREETER, "Greet").unwrap(),
        json!({"greeting": greeting, "run": run})
    );
    assert_eq!(
        call(runtime, COUNTER, "Increase").unwrap_err(),
        Error::invalid_input("flow \"c-1\" is a Greeter, not a Counter")
    );
    let described = runtime.describe_flow(FLOW).unwrap();
    assert_eq!(
        (
            described.run_id.as_str(),
            described.flow_type.as_str(),
            described.status
        ),
        (run, GREETER, FlowStatus::Running)
    );
}

fn policy(policy: IdReusePolicy) -> StartFlowOptions {
    StartFlowOptions::new().id_reuse_policy(policy)
}

/// Where the existing run stands before the second start.
#[derive(Debug, Clone, Copy)]
enum Previous {
    Running,
    Stopped(StopType),
}

impl Previous {
    fn status(self) -> FlowStatus {
        match self {
            Previous::Running => FlowStatus::Running,
            Previous::Stopped(stop) => stop.status(),
        }
    }
}

/// Whether Dex's decision table begins a new run for `policy` after a run at `previous`
/// (docs/content/primitives/flow/flow-options.mdx, "The ID reuse policy determines…").
fn dex_starts_a_new_run(policy: IdReusePolicy, previous: Previous) -> bool {
    match (policy, previous) {
        (IdReusePolicy::TerminateIfRunning, _) => true,
        (_, Previous::Running) => false,
        (IdReusePolicy::AllowIfNotRunning, _) => true,
        (IdReusePolicy::AllowIfPreviousFailed, Previous::Stopped(stop)) => stop == StopType::Fail,
        (IdReusePolicy::Disallow, _) => false,
    }
}

#[test]
fn every_policy_follows_dexs_decision_table() {
    let policies = [
        IdReusePolicy::AllowIfNotRunning,
        IdReusePolicy::AllowIfPreviousFailed,
        IdReusePolicy::Disallow,
        IdReusePolicy::TerminateIfRunning,
    ];
    let previous_runs = [
        Previous::Running,
        Previous::Stopped(StopType::Cancel),
        Previous::Stopped(StopType::Terminate),
        Previous::Stopped(StopType::Fail),
    ];
    for reuse in policies {
        for previous in previous_runs {
            let case = format!("{reuse} after a {} run", previous.status());
            let t = TestStore::fast();
            let first = start_counter(&t);
            assert_eq!(call(&t.runtime, COUNTER, "Increase").unwrap(), json!(1));
            if let Previous::Stopped(stop) = previous {
                t.runtime.stop_flow(FLOW, stop, Some("done")).unwrap();
            }

            let second = t.runtime.start_flow(COUNTER, FLOW, &policy(reuse));
            let described = t.runtime.describe_flow(FLOW).unwrap();
            if dex_starts_a_new_run(reuse, previous) {
                let second = second.unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_ne!(second, first, "{case}");
                assert_eq!(
                    (
                        described.run_id.as_str(),
                        described.status,
                        &described.closed
                    ),
                    (second.as_str(), FlowStatus::Running, &None),
                    "{case}"
                );
                // The new run starts from its initial values and serves RPCs.
                assert_eq!(
                    call(&t.runtime, COUNTER, "Read").unwrap(),
                    json!({"count": 0, "run": second}),
                    "{case}"
                );
                assert_eq!(call(&t.runtime, COUNTER, "Increase").unwrap(), json!(1));
            } else {
                match second {
                    Err(Error::FlowAlreadyStarted {
                        flow_id,
                        run_id,
                        status,
                    }) => assert_eq!(
                        (flow_id.as_str(), run_id.as_str(), status),
                        (FLOW, first.as_str(), previous.status()),
                        "{case}"
                    ),
                    other => panic!("{case}: expected FlowAlreadyStarted, got {other:?}"),
                }
                // Nothing changed.
                assert_eq!(
                    (described.run_id.as_str(), described.status),
                    (first.as_str(), previous.status()),
                    "{case}"
                );
                assert_eq!(
                    t.stored_values(FLOW).get("count"),
                    Some(&json!(1)),
                    "{case}"
                );
            }
        }
    }
}

#[test]
fn a_refused_start_says_how_the_existing_run_ended() {
    let t = TestStore::fast();
    let run = start_counter(&t);
    t.runtime.stop_flow(FLOW, StopType::Cancel, None).unwrap();
    let refused = t
        .runtime
        .start_flow(COUNTER, FLOW, &policy(IdReusePolicy::AllowIfPreviousFailed))
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "flow \"c-1\" is already started (run ID {run}, stopped: canceled), and the \
             start's ID reuse policy does not begin another run after a canceled one"
        )
    );
}

#[test]
fn a_new_run_may_be_of_another_type_and_holds_only_its_initial_values() {
    // As Dex's test_basic_workflow_abnormal_exit_reuse: a failed run of one flow type, then
    // a run of another type under the same ID with ALLOW_IF_PREVIOUS_FAILED.
    let t = TestStore::fast();
    let first = start_counter(&t);
    call(&t.runtime, COUNTER, "Increase").unwrap();
    t.runtime
        .stop_flow(FLOW, StopType::Fail, Some("abnormal exit"))
        .unwrap();
    let failed = t.runtime.describe_flow(FLOW).unwrap().closed.unwrap();

    let second = t
        .runtime
        .start_flow(
            GREETER,
            FLOW,
            &policy(IdReusePolicy::AllowIfPreviousFailed).with_attribute("greeting", json!("hi")),
        )
        .unwrap();
    assert_greeter_runs(&t.runtime, &second, "hi");
    // The failed run's values are gone; the new run holds its initial value and its run
    // state, which records the run it replaced and how that one closed.
    let stored = t.stored_values(FLOW);
    assert_eq!(stored.get("count"), None);
    assert_eq!(stored.get("greeting"), Some(&json!("hi")));
    let run_state = t.store.as_store().stored_values(FLOW).unwrap();
    let run_state = run_state.iter().find(|(name, _)| name == "/run");
    assert_eq!(
        run_state.map(|(_, json)| serde_json::from_str::<Value>(json).unwrap()),
        Some(json!({
            "status": "running",
            "runId": second,
            "replaced": {
                "runId": first,
                "status": "failed",
                "reason": "abnormal exit",
                "closedAtMs": failed.closed_at_ms,
            },
        }))
    );
}

#[test]
fn ignore_already_started_returns_a_running_runs_id_only() {
    let t = TestStore::fast();
    let first = start_counter(&t);
    let again = StartFlowOptions::new().ignore_already_started(true);
    assert_eq!(t.runtime.start_flow(COUNTER, FLOW, &again).unwrap(), first);
    // Another type is not the running flow.
    assert!(matches!(
        t.runtime.start_flow(GREETER, FLOW, &again),
        Err(Error::FlowAlreadyStarted {
            status: FlowStatus::Running,
            ..
        })
    ));
    // Once stopped, the default policy begins a new run even with the flag.
    t.runtime.stop_flow(FLOW, StopType::Cancel, None).unwrap();
    let second = t.runtime.start_flow(COUNTER, FLOW, &again).unwrap();
    assert_ne!(second, first);
    assert_eq!(t.runtime.describe_flow(FLOW).unwrap().run_id, second);
}

#[test]
fn every_runtime_on_the_store_sees_the_new_run() {
    let t = TestStore::fast();
    start_counter(&t);
    let (_store, other) = t.open_again();
    register_both(&other);
    assert_eq!(call(&other, COUNTER, "Increase").unwrap(), json!(1));

    let second = t
        .runtime
        .start_flow(GREETER, FLOW, &policy(IdReusePolicy::TerminateIfRunning))
        .unwrap();
    assert_eq!(
        call(&other, GREETER, "Greet").unwrap(),
        json!({"greeting": null, "run": second})
    );
    assert!(matches!(
        call(&other, COUNTER, "Increase"),
        Err(Error::InvalidInput(_))
    ));
    let reopened = t.reopen();
    register_both(&reopened.runtime);
    assert_eq!(reopened.runtime.describe_flow(FLOW).unwrap().run_id, second);
}

#[test]
fn a_lock_free_rpc_that_read_the_previous_run_does_not_commit_into_the_new_one() {
    let t = TestStore::fast();
    let (_store, starter) = t.open_again();
    let starter = Arc::new(starter);
    starter.register(counter()).unwrap();
    // A lock-free RPC that writes: it reads the count and, the first time, before it
    // returns the flow is stopped and started again (same type, same initial count)
    // through another runtime.
    let raced = Arc::new(AtomicBool::new(false));
    let racing = FlowDefinition::builder(COUNTER)
        .attribute("count")
        .default_value("count", json!(0))
        .rpc(RpcDefinition::new("WriteAcrossRuns", {
            let (starter, raced) = (Arc::clone(&starter), Arc::clone(&raced));
            move |ctx, _| {
                let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0);
                if !raced.swap(true, Ordering::SeqCst) {
                    let starter = Arc::clone(&starter);
                    std::thread::spawn(move || {
                        starter.stop_flow(FLOW, StopType::Cancel, None)?;
                        starter.start_flow(COUNTER, FLOW, &StartFlowOptions::new())
                    })
                    .join()
                    .expect("the starting thread ended")?;
                }
                ctx.set_attribute("count", json!(count + 10))?;
                Ok(json!(ctx.run_id()))
            }
        }))
        .build()
        .unwrap();
    t.runtime.register(racing).unwrap();
    let first = t
        .runtime
        .start_flow(COUNTER, FLOW, &StartFlowOptions::new())
        .unwrap();

    match call(&t.runtime, COUNTER, "WriteAcrossRuns") {
        Err(Error::LockConflict(message)) => assert!(message.contains("run"), "{message}"),
        other => panic!("expected a lock conflict, got {other:?}"),
    }
    let second = t.runtime.describe_flow(FLOW).unwrap().run_id;
    assert_ne!(second, first);
    assert_eq!(t.stored_values(FLOW).get("count"), Some(&json!(0)));
    // Retried, it runs on the new run.
    assert_eq!(
        call(&t.runtime, COUNTER, "WriteAcrossRuns").unwrap(),
        json!(second)
    );
    assert_eq!(t.stored_values(FLOW).get("count"), Some(&json!(10)));
}

const CHILD_TEST: &str = "child_process_starts_a_new_run_of_another_type";
const URL_ENV: &str = "ATTRFLOW_ID_REUSE_TEST_URL";
const RUN_MARKER: &str = "NEW RUN ";

#[test]
fn another_process_that_remembers_the_flow_sees_its_new_run() {
    let t = TestStore::new();
    let first = start_counter(&t);
    // This process has now run calls on the flow (and may remember its type and run).
    for expected in 1..=3 {
        assert_eq!(
            call(&t.runtime, COUNTER, "Increase").unwrap(),
            json!(expected)
        );
    }
    assert_eq!(
        call(&t.runtime, COUNTER, "Read").unwrap(),
        json!({"count": 3, "run": first})
    );

    let mut child = common::spawn_test_process(CHILD_TEST, &[(URL_ENV, &t.url)]);
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // Read to the end, so that the child can write everything it has to say.
    let output: Vec<String> = stdout
        .lines()
        .map(|line| line.expect("read the child's output"))
        .collect();
    let second = output
        .iter()
        .find_map(|line| line.strip_prefix(RUN_MARKER).map(str::to_owned))
        .expect("the child reports the new run");
    assert!(child.wait().unwrap().success(), "the child failed");

    assert_greeter_runs(&t.runtime, &second, "from the other process");
    assert_eq!(t.stored_values(FLOW).get("count"), None);
}

#[test]
#[ignore = "a child process of another_process_that_remembers_the_flow_sees_its_new_run"]
fn child_process_starts_a_new_run_of_another_type() {
    let url = std::env::var(URL_ENV).expect("the parent names the store");
    let store = OpenedStore::open(&url);
    let runtime = Runtime::new(store.as_store());
    register_both(&runtime);
    runtime.stop_flow(FLOW, StopType::Terminate, None).unwrap();
    let second = runtime
        .start_flow(
            GREETER,
            FLOW,
            &StartFlowOptions::new().with_attribute("greeting", json!("from the other process")),
        )
        .unwrap();
    println!("{RUN_MARKER}{second}");
}
