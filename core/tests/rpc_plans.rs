//! A definition carries its plan: an RPC declared `planned_by` a planner takes and loads
//! what the plan derives from a call's input when the caller names no locks or loads of
//! its own; options that name any win (as Dex code passes them); a bad input fails the
//! plan with a typed error before anything runs. The built-in flows' RPCs plan their own
//! calls, so a call without options works.

mod common;

use std::thread;

use attrflow::flows::{app_log, chunked_subscriber, customer_directory};
use attrflow::{
    Error, FlowDefinition, MapInstance, RpcDefinition, RpcInvokeOptions, RpcPlan, RpcPlanner,
    StartFlowOptions,
};
use common::{checkpoint, Pause, TestStore};
use serde_json::{json, Value};

const FLOW_TYPE: &str = "Planned";
const FLOW: &str = "planned";

/// The plan of every `Planned` RPC: lock and load `m/<key>`.
fn key_plan(input: &Value) -> attrflow::Result<RpcPlan> {
    let key = input["key"].as_str().unwrap_or_default();
    if key.is_empty() {
        return Err(Error::invalid_input("key is required"));
    }
    let instance = MapInstance::new("m", key);
    Ok(RpcPlan {
        locks: vec![instance.clone()],
        loads: vec![instance],
    })
}

/// [`key_plan`] without its lock.
fn key_load(input: &Value) -> attrflow::Result<RpcPlan> {
    key_plan(input).map(|plan| RpcPlan {
        locks: Vec::new(),
        ..plan
    })
}

fn key(input: &Value) -> String {
    input["key"].as_str().unwrap_or_default().to_owned()
}

/// A flow type whose RPCs name the instance they need only in their input.
fn planned(pause: Pause) -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .map("m")
        .rpc(
            RpcDefinition::new("Hold", move |_, _| {
                pause.wait();
                Ok(Value::Null)
            })
            .planned_by(RpcPlanner::locking(key_plan)),
        )
        .rpc(
            RpcDefinition::new("Write", |ctx, input| {
                ctx.set_map_instance("m", &key(&input), input["value"].clone())?;
                Ok(Value::Null)
            })
            .planned_by(RpcPlanner::locking(key_plan)),
        )
        .rpc(
            RpcDefinition::new("Read", |ctx, input| {
                Ok(ctx
                    .map_instance("m", &key(&input))?
                    .cloned()
                    .unwrap_or(Value::Null))
            })
            .read_only()
            .planned_by(RpcPlanner::loading(key_load)),
        )
        .build()
        .unwrap()
}

fn store(pause: Pause) -> (TestStore, String) {
    let t = TestStore::fast();
    t.runtime.register(planned(pause)).unwrap();
    let run = t
        .runtime
        .start_flow(FLOW_TYPE, FLOW, &StartFlowOptions::new())
        .unwrap();
    (t, run)
}

fn call(t: &TestStore, rpc: &str, input: Value) -> attrflow::Result<Value> {
    t.runtime
        .invoke_rpc(FLOW_TYPE, FLOW, rpc, input, &RpcInvokeOptions::new())
}

#[test]
fn a_call_without_options_locks_and_loads_what_its_plan_names() {
    let (checkpoint, pause) = checkpoint();
    let (t, run) = store(pause);
    call(&t, "Write", json!({"key": "a", "value": 1})).unwrap();
    // Loaded by the plan: without it the read would be AttributeMapNotLoaded.
    assert_eq!(call(&t, "Read", json!({"key": "a"})).unwrap(), json!(1));
    // A run alone is no lock or load: the plan still applies, pinned to the run.
    let pinned = RpcInvokeOptions::new().run_id(run);
    let read = t
        .runtime
        .invoke_rpc(FLOW_TYPE, FLOW, "Read", json!({"key": "a"}), &pinned);
    assert_eq!(read.unwrap(), json!(1));

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "Hold", json!({"key": "a"})));
        checkpoint.wait_until_entered();
        assert_eq!(t.held_locks(), 1, "the plan's lock on m/a is held");
        let conflict = call(&t, "Write", json!({"key": "a", "value": 2})).unwrap_err();
        assert!(matches!(conflict, Error::LockConflict(_)), "{conflict:?}");
        // SQLite runs one writing handler at a time, so this waits for the holder; what
        // matters is that it is not turned away with a lock conflict.
        let other = s.spawn(|| call(&t, "Write", json!({"key": "b", "value": 3})));
        checkpoint.release();
        holder.join().unwrap().unwrap();
        other.join().unwrap().unwrap();
    });
    assert_eq!(call(&t, "Read", json!({"key": "a"})).unwrap(), json!(1));
    assert_eq!(call(&t, "Read", json!({"key": "b"})).unwrap(), json!(3));
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn options_that_name_a_lock_or_load_win_over_the_plan() {
    let (checkpoint, pause) = checkpoint();
    let (t, _) = store(pause);
    call(&t, "Write", json!({"key": "a", "value": 1})).unwrap();
    let elsewhere = RpcInvokeOptions::new().load_attribute_map_instance("m", "b");
    let read = t
        .runtime
        .invoke_rpc(FLOW_TYPE, FLOW, "Read", json!({"key": "a"}), &elsewhere);
    assert_eq!(
        read.unwrap_err(),
        Error::AttributeMapNotLoaded {
            physical_name: "m/a".into()
        }
    );
    // The planner is not asked either: an input it refuses runs on the explicit options.
    let explicit = RpcInvokeOptions::new().load_attribute_map_instance("m", "a");
    let read = t
        .runtime
        .invoke_rpc(FLOW_TYPE, FLOW, "Read", json!({"key": "a"}), &explicit);
    assert_eq!(read.unwrap(), json!(1));

    thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| call(&t, "Hold", json!({"key": "a"})));
        checkpoint.wait_until_entered();
        // Locking m/z instead of the plan's m/a: no conflict with the holder of m/a.
        // (It waits for the holder's transaction on SQLite, as above.)
        let other_lock = RpcInvokeOptions::new()
            .lock_attribute_map_instance("m", "z")
            .load_attribute_map_instance("m", "a");
        let input = json!({"key": "a", "value": 2});
        let runtime = &t.runtime;
        let other =
            s.spawn(move || runtime.invoke_rpc(FLOW_TYPE, FLOW, "Write", input, &other_lock));
        checkpoint.release();
        holder.join().unwrap().unwrap();
        other
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("the explicit lock is m/z only: {e:?}"));
    });
}

#[test]
fn a_bad_input_to_a_planner_gets_its_typed_error_and_nothing_runs() {
    let (_checkpoint, pause) = checkpoint();
    let (t, _) = store(pause);
    let refused = call(&t, "Write", json!({"key": "", "value": 1})).unwrap_err();
    assert_eq!(refused, Error::invalid_input("key is required"));
    assert!(t
        .stored_values(FLOW)
        .keys()
        .all(|name| !name.starts_with("m/")));

    // The built-in flows' planners give the errors their callers' checks gave before.
    app_log::AppLog::new(&t.runtime, "logs").start().unwrap();
    let page = t.runtime.invoke_rpc(
        app_log::FLOW_TYPE,
        "logs",
        app_log::GET_LOG_PAGE,
        json!({"log": "chat", "pageToken": "7"}),
        &RpcInvokeOptions::new(),
    );
    assert_eq!(
        page.unwrap_err(),
        Error::InvalidPageToken { token: "7".into() }
    );
    let append = t.runtime.invoke_rpc(
        app_log::FLOW_TYPE,
        "logs",
        app_log::APPEND_LOG_RECORD,
        json!({"log": "a/b", "record": 1}),
        &RpcInvokeOptions::new(),
    );
    assert_eq!(
        append.unwrap_err(),
        app_log::validate_log_name("a/b").unwrap_err()
    );
    // An input the planner cannot read gets the handler's own error.
    let shapeless = t.runtime.invoke_rpc(
        app_log::FLOW_TYPE,
        "logs",
        app_log::APPEND_LOG_RECORD,
        json!(["not", "an", "object"]),
        &RpcInvokeOptions::new(),
    );
    assert!(
        matches!(&shapeless, Err(Error::InvalidInput(m)) if m.starts_with("invalid input for RPC AppendLogRecord")),
        "{shapeless:?}"
    );
    let archive = chunked_subscriber::SubscriberArchive::new(&t.runtime, "archive");
    archive.start().unwrap();
    let page = t.runtime.invoke_rpc(
        chunked_subscriber::FLOW_TYPE,
        "archive",
        chunked_subscriber::GET_SUBSCRIBER_PAGE,
        json!({"pageToken": "a/b"}),
        &RpcInvokeOptions::new(),
    );
    assert_eq!(
        page.unwrap_err(),
        Error::InvalidPageToken {
            token: "a/b".into()
        }
    );
}

#[test]
fn the_built_in_rpcs_plan_their_own_calls() {
    let t = TestStore::fast();
    let none = RpcInvokeOptions::new();
    let invoke = |flow_type: &str, flow: &str, rpc: &str, input: Value| {
        t.runtime.invoke_rpc(flow_type, flow, rpc, input, &none)
    };
    app_log::AppLog::new(&t.runtime, "logs").start().unwrap();
    let log = |rpc: &str, input: Value| invoke(app_log::FLOW_TYPE, "logs", rpc, input);
    for n in 1..=101 {
        let entry = log(
            app_log::APPEND_LOG_RECORD,
            json!({"log": "chat", "record": n}),
        );
        assert_eq!(entry.unwrap()["sequence"], json!(n));
    }
    let once = json!({"log": "chat", "idempotencyKey": "k", "record": "once"});
    let first = log(app_log::APPEND_LOG_RECORD_ONCE, once.clone()).unwrap();
    assert_eq!(log(app_log::APPEND_LOG_RECORD_ONCE, once).unwrap(), first);
    let batch = json!({"log": "chat", "records": [1, 2], "idempotencyKey": "b"});
    let appended = log(app_log::APPEND_LOG_RECORDS, batch).unwrap();
    assert_eq!(appended["entries"][1]["sequence"], json!(104));
    let newest = log(
        app_log::GET_LOG_PAGE,
        json!({"log": "chat", "pageToken": ""}),
    )
    .unwrap();
    assert_eq!(newest["nextPageToken"], json!("00000000000000000001"));
    let oldest = json!({"log": "chat", "pageToken": "00000000000000000001"});
    assert_eq!(
        log(app_log::GET_LOG_PAGE, oldest).unwrap()["entries"][99]["record"],
        json!(1)
    );
    // A read forward loads the log's state by its plan, then names the chunks it needs.
    let read = log(
        app_log::READ_LOG_FROM,
        json!({"log": "chat", "sequence": 1, "limit": 5}),
    )
    .unwrap();
    assert!(
        !read["chunksToLoad"].as_array().unwrap().is_empty(),
        "{read}"
    );
    let trim = json!({"log": "chat", "keepNewest": 1});
    assert_eq!(
        log(app_log::TRIM_LOG, trim).unwrap()["droppedChunks"],
        json!(1)
    );
    let retention = json!({"log": "chat", "keepNewest": 50});
    log(app_log::SET_LOG_RETENTION, retention).unwrap();

    // What a binding asks before it hands a call over follows the plan too, on a store that
    // groups batches and reads without waiting (SQLite; PostgreSQL does neither by default).
    let store = t.runtime.store();
    assert_eq!(
        t.runtime
            .batches(app_log::FLOW_TYPE, app_log::APPEND_LOG_RECORD, &none),
        store.groups_batches()
    );
    assert!(!t
        .runtime
        .batches(app_log::FLOW_TYPE, app_log::GET_LOG_PAGE, &none));
    assert_eq!(
        t.runtime
            .reads_in_place(app_log::FLOW_TYPE, app_log::GET_LOG_PAGE, &none),
        store.reads_without_waiting()
    );
    assert!(!t
        .runtime
        .reads_in_place(app_log::FLOW_TYPE, app_log::APPEND_LOG_RECORD, &none));

    let archive = chunked_subscriber::SubscriberArchive::new(&t.runtime, "archive");
    archive.start().unwrap();
    for n in 1..=101 {
        archive
            .register(&format!("s-{n}"), "a@example.com")
            .unwrap();
    }
    let page = invoke(
        chunked_subscriber::FLOW_TYPE,
        "archive",
        chunked_subscriber::GET_SUBSCRIBER_PAGE,
        json!({"pageToken": "00000000000000000001"}),
    )
    .unwrap();
    assert_eq!(page["subscribers"][0]["sequence"], json!(100));

    let directory = customer_directory::CustomerDirectory::new(&t.runtime, "directory");
    directory.start().unwrap();
    let profile = json!({
        "emailAddress": " Ada@Example.com",
        "fullName": "Ada",
        "companyName": "Engines",
        "customerTier": "gold",
    });
    let people =
        |rpc: &str, input: Value| invoke(customer_directory::FLOW_TYPE, "directory", rpc, input);
    let saved = people(customer_directory::UPSERT_CUSTOMER_PROFILE, profile).unwrap();
    assert_eq!(saved["emailAddress"], json!("ada@example.com"));
    let email = json!("ADA@example.com");
    let read = people(
        customer_directory::GET_CUSTOMER_PROFILE_BY_EMAIL,
        email.clone(),
    );
    assert_eq!(read.unwrap(), saved);
    let deleted = people(customer_directory::DELETE_CUSTOMER_PROFILE, email.clone());
    assert_eq!(deleted.unwrap(), saved);
    let gone = people(customer_directory::GET_CUSTOMER_PROFILE_BY_EMAIL, email);
    assert!(matches!(gone, Err(Error::RecordNotFound(_))), "{gone:?}");
}
