//! Starting flows and addressing them: a start returns a run ID and writes the initial
//! values in the same commit; a second start fails, or with `ignore_already_started`
//! returns the first run's ID and changes nothing; bad initial values, bad flow IDs and
//! calls that name the wrong flow, type or RPC are rejected with errors that say so.

mod common;

use attrflow::flows::chunked_subscriber::{
    ARCHIVE_STATE_ATTRIBUTE, FLOW_ID, FLOW_TYPE as SUBSCRIBER_FLOW, REGISTER_SUBSCRIBER,
};
use attrflow::{
    Error, FlowDefinition, FlowStatus, RpcDefinition, RpcInvokeOptions, StartFlowOptions,
};
use common::{register_in_order, TestStore};
use serde_json::{json, Value};

const PROFILE: &str = "Profile";

/// A flow type with a singleton that has a type default, a singleton without one, and a
/// map; `Show` returns what the first handler sees of each.
fn profile() -> FlowDefinition {
    FlowDefinition::builder(PROFILE)
        .attribute("greeting")
        .attribute("visits")
        .map("settings")
        .default_value("visits", json!(0))
        .rpc(
            RpcDefinition::new("Show", |ctx, _| {
                Ok(json!({
                    "greeting": ctx.attribute("greeting")?,
                    "visits": ctx.attribute("visits")?,
                    "theme": ctx.map_instance("settings", "theme")?,
                }))
            })
            .load_map_instance("settings", "theme"),
        )
        .build()
        .unwrap()
}

fn with_profile() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(profile()).unwrap();
    t
}

fn show(t: &TestStore, flow_id: &str) -> attrflow::Result<Value> {
    t.runtime.invoke_rpc(
        PROFILE,
        flow_id,
        "Show",
        Value::Null,
        &RpcInvokeOptions::new(),
    )
}

fn assert_invalid_input(result: attrflow::Result<impl std::fmt::Debug>, message: &str) {
    match result {
        Err(Error::InvalidInput(actual)) => assert_eq!(actual, message),
        other => panic!("expected InvalidInput({message:?}), got {other:?}"),
    }
}

#[test]
fn a_start_returns_a_fresh_run_id_and_records_the_flow() {
    let t = TestStore::fast();
    let first = t
        .runtime
        .start_flow(SUBSCRIBER_FLOW, "archive-a", &StartFlowOptions::new())
        .unwrap();
    let second = t
        .runtime
        .start_flow(SUBSCRIBER_FLOW, "archive-b", &StartFlowOptions::new())
        .unwrap();

    assert!(uuid::Uuid::parse_str(&first).is_ok(), "{first:?}");
    assert_ne!(first, second, "each flow gets its own run ID");
    let record = t.flow("archive-a").unwrap();
    assert_eq!(record.flow_type, SUBSCRIBER_FLOW);
    assert_eq!(record.run_id, first);
}

#[test]
fn a_second_start_without_ignore_fails_naming_the_flow_and_its_run_id() {
    let t = TestStore::fast();
    let run_id = t.archive().start().unwrap();

    let err = t
        .runtime
        .start_flow(SUBSCRIBER_FLOW, FLOW_ID, &StartFlowOptions::new())
        .unwrap_err();
    assert_eq!(
        err,
        Error::FlowAlreadyStarted {
            flow_id: FLOW_ID.into(),
            run_id: run_id.clone(),
            status: FlowStatus::Running,
        }
    );
    assert_eq!(
        err.to_string(),
        format!(r#"flow "chunked-subscriber-archive" is already started (run ID {run_id})"#)
    );
}

#[test]
fn a_second_start_with_ignore_returns_the_first_run_id_and_overwrites_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    let run_id = archive.start().unwrap();
    register_in_order(&archive, 1..=3);
    let before = t.stored_values(FLOW_ID);

    let reset = StartFlowOptions::new()
        .with_attribute(ARCHIVE_STATE_ATTRIBUTE, json!({ "nextSequence": 1 }))
        .with_map_instance("subscriber_chunks", "current", json!({ "subscribers": [] }));
    let again = t
        .runtime
        .start_flow(
            SUBSCRIBER_FLOW,
            FLOW_ID,
            &reset.clone().ignore_already_started(true),
        )
        .unwrap();
    assert_eq!(again, run_id);
    assert!(matches!(
        t.runtime.start_flow(SUBSCRIBER_FLOW, FLOW_ID, &reset),
        Err(Error::FlowAlreadyStarted { .. })
    ));
    assert_eq!(
        archive.start().unwrap(),
        run_id,
        "the typed start ignores too"
    );

    assert_eq!(t.stored_values(FLOW_ID), before);
    assert_eq!(t.flow(FLOW_ID).unwrap().run_id, run_id);
    register_in_order(&archive, 4..=4);
}

#[test]
fn ignore_already_started_does_not_hide_a_flow_of_another_type() {
    let t = with_profile();
    t.archive().start().unwrap();

    let err = t
        .runtime
        .start_flow(
            PROFILE,
            FLOW_ID,
            &StartFlowOptions::new().ignore_already_started(true),
        )
        .unwrap_err();
    assert!(matches!(err, Error::FlowAlreadyStarted { .. }), "{err:?}");
    assert_eq!(t.flow(FLOW_ID).unwrap().flow_type, SUBSCRIBER_FLOW);
}

#[test]
fn initial_values_and_type_defaults_are_visible_to_the_first_handler() {
    let t = with_profile();
    t.runtime
        .start_flow(
            PROFILE,
            "given",
            &StartFlowOptions::new()
                .with_attribute("greeting", json!("hello"))
                .with_map_instance("settings", "theme", json!({ "dark": true })),
        )
        .unwrap();
    assert_eq!(
        show(&t, "given").unwrap(),
        json!({ "greeting": "hello", "visits": 0, "theme": { "dark": true } })
    );

    t.runtime
        .start_flow(
            PROFILE,
            "overridden",
            &StartFlowOptions::new().with_attribute("visits", json!(7)),
        )
        .unwrap();
    assert_eq!(
        show(&t, "overridden").unwrap(),
        json!({ "greeting": null, "visits": 7, "theme": null }),
        "a start option replaces the type default; unset values read as absent"
    );
}

#[test]
fn bad_initial_values_are_invalid_input_and_create_no_flow() {
    let t = with_profile();
    let cases = [
        (
            StartFlowOptions::new().with_attribute("nickname", json!("x")),
            r#"flow type "Profile" declares no Attribute or AttributeMap "nickname""#,
        ),
        (
            StartFlowOptions::new().with_map_instance("colours", "a", json!(1)),
            r#"flow type "Profile" declares no Attribute or AttributeMap "colours""#,
        ),
        (
            StartFlowOptions::new().with_attribute("settings", json!({})),
            r#"initial value for AttributeMap "settings" needs an instance"#,
        ),
        (
            StartFlowOptions::new().with_map_instance("greeting", "a", json!("x")),
            r#""greeting" is a singleton Attribute, not an AttributeMap; it takes no instance"#,
        ),
        (
            StartFlowOptions::new().with_map_instance("settings", "", json!(1)),
            r#"instance key of AttributeMap "settings" must not be empty"#,
        ),
        (
            StartFlowOptions::new().with_map_instance("settings", "a/b", json!(1)),
            r#"instance key "a/b" of AttributeMap "settings" must not contain '/'"#,
        ),
        (
            StartFlowOptions::new()
                .with_attribute("greeting", json!("hello"))
                .with_attribute("greeting", json!("hi")),
            r#"start options give an initial value for "greeting" twice"#,
        ),
        (
            StartFlowOptions::new()
                .with_map_instance("settings", "theme", json!(1))
                .with_map_instance("settings", "theme", json!(2)),
            r#"start options give an initial value for "settings/theme" twice"#,
        ),
    ];
    for (options, message) in cases {
        assert_invalid_input(t.runtime.start_flow(PROFILE, "bad", &options), message);
        assert_eq!(t.flow("bad"), None, "{message}");
        assert!(t.stored_values("bad").is_empty(), "{message}");
        assert_eq!(
            show(&t, "bad").unwrap_err(),
            Error::FlowNotFound {
                flow_id: "bad".into()
            }
        );
    }
}

/// A built-in flow type keeps its chunked logs whole from the start: initial values that
/// would break one (a state that does not decode, a broken layout history, records that do
/// not continue from the state) are refused before anything is written, with the broken
/// invariant named; a start whose values make a whole log is accepted, and appends continue
/// it.
#[test]
fn initial_values_that_would_break_a_built_in_log_are_invalid_input_and_create_no_flow() {
    use attrflow::flows::app_log::{self, LOG_CHUNKS_MAP, LOG_STATES_MAP};
    let t = TestStore::fast();
    let subscriber = |n: u64| json!({ "sequence": n, "subscriberId": format!("s-{n}"), "deliveryAddress": "a@example.com" });
    let current = |records: Vec<Value>| json!({ "subscribers": records });
    let state = ARCHIVE_STATE_ATTRIBUTE;
    let cases = [
        (
            StartFlowOptions::new().with_attribute(state, json!({ "nextSequence": -5 })),
            "subscriber_archive_state: not a log state",
        ),
        (
            StartFlowOptions::new().with_attribute(
                state,
                json!({ "nextSequence": 1, "layouts": [{ "fromSequence": 1, "chunkSize": 100000 }] }),
            ),
            "subscriber_archive_state: ",
        ),
        (
            StartFlowOptions::new()
                .with_attribute(state, json!({ "nextSequence": 1 }))
                .with_map_instance("subscriber_chunks", "current", current(vec![subscriber(7); 99])),
            "subscriber_chunks/current: ",
        ),
        (
            StartFlowOptions::new().with_attribute(state, json!({ "nextSequence": 41 })),
            "subscriber_archive_state: ",
        ),
        (
            StartFlowOptions::new().with_attribute(state, Value::Null),
            "subscriber_archive_state: missing",
        ),
    ];
    for (options, located) in cases {
        match t.runtime.start_flow(SUBSCRIBER_FLOW, "broken", &options) {
            Err(Error::InvalidInput(message)) => assert!(
                message.starts_with("initial values would leave the chunked log broken: ")
                    && message.contains(located),
                "{message:?} names {located:?}"
            ),
            other => panic!("{located}: expected InvalidInput, got {other:?}"),
        }
        assert_eq!(t.flow("broken"), None, "{located}");
        assert!(t.stored_values("broken").is_empty(), "{located}");
    }

    // Three records already, as a caller moving a log in would seed it.
    let seeded = StartFlowOptions::new()
        .with_attribute(state, json!({ "nextSequence": 4 }))
        .with_map_instance(
            "subscriber_chunks",
            "current",
            current((1..=3).map(subscriber).collect()),
        );
    t.runtime
        .start_flow(SUBSCRIBER_FLOW, "seeded", &seeded)
        .unwrap();
    let archive = attrflow::flows::chunked_subscriber::SubscriberArchive::new(&t.runtime, "seeded");
    assert_eq!(
        archive.register("s-4", "a@example.com").unwrap().sequence,
        4
    );

    // The app log's named logs likewise.
    let broken_log = StartFlowOptions::new().with_map_instance(
        LOG_CHUNKS_MAP,
        "chat.current",
        json!({ "entries": [{ "sequence": 9, "record": {} }] }),
    );
    match t.runtime.start_flow(app_log::FLOW_TYPE, "log", &broken_log) {
        Err(Error::InvalidInput(message)) => {
            assert!(message.contains("log_chunks/chat.current"), "{message:?}")
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    assert_eq!(t.flow("log"), None);
    let bad_state = StartFlowOptions::new().with_map_instance(
        LOG_STATES_MAP,
        "chat",
        json!({ "nextSequence": "x" }),
    );
    assert!(matches!(
        t.runtime.start_flow(app_log::FLOW_TYPE, "log", &bad_state),
        Err(Error::InvalidInput(_))
    ));
    assert_eq!(t.flow("log"), None);
}

#[test]
fn flow_ids_that_are_empty_or_hold_reserved_characters_are_invalid_input() {
    let t = TestStore::fast();
    let cases = [
        ("", "flow ID must not be empty"),
        ("a/b", r#"flow ID "a/b" contains reserved character '/'"#),
        ("a$b", r#"flow ID "a$b" contains reserved character '$'"#),
        ("a:b", r#"flow ID "a:b" contains reserved character ':'"#),
    ];
    for (flow_id, message) in cases {
        assert_invalid_input(
            t.runtime
                .start_flow(SUBSCRIBER_FLOW, flow_id, &StartFlowOptions::new()),
            message,
        );
        assert_invalid_input(
            t.runtime.invoke_rpc(
                SUBSCRIBER_FLOW,
                flow_id,
                REGISTER_SUBSCRIBER,
                json!({ "subscriberId": "s", "deliveryAddress": "d" }),
                &RpcInvokeOptions::new(),
            ),
            message,
        );
    }
}

#[test]
fn an_rpc_on_a_flow_that_was_never_started_is_flow_not_found() {
    let t = TestStore::fast();
    let err = t
        .archive()
        .register("subscriber-001", "subscriber-001@example.com")
        .unwrap_err();
    assert_eq!(
        err,
        Error::FlowNotFound {
            flow_id: FLOW_ID.into()
        }
    );
    assert_eq!(
        err.to_string(),
        r#"flow "chunked-subscriber-archive" not found"#
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn an_rpc_of_one_flow_type_on_a_flow_of_another_is_invalid_input_and_writes_nothing() {
    let t = with_profile();
    t.runtime
        .start_flow(PROFILE, "profile", &StartFlowOptions::new())
        .unwrap();
    let before = t.stored_values("profile");

    assert_invalid_input(
        t.runtime.invoke_rpc(
            SUBSCRIBER_FLOW,
            "profile",
            REGISTER_SUBSCRIBER,
            json!({ "subscriberId": "s", "deliveryAddress": "d" }),
            &RpcInvokeOptions::new(),
        ),
        r#"flow "profile" is a Profile, not a ChunkedSubscriberFlow"#,
    );
    assert_eq!(t.stored_values("profile"), before);
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn an_unknown_rpc_name_is_invalid_input() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    assert_invalid_input(
        t.runtime.invoke_rpc(
            SUBSCRIBER_FLOW,
            FLOW_ID,
            "DeleteEverything",
            Value::Null,
            &RpcInvokeOptions::new(),
        ),
        r#"flow type "ChunkedSubscriberFlow" has no RPC "DeleteEverything""#,
    );
}

#[test]
fn an_unregistered_flow_type_is_invalid_input() {
    let t = TestStore::fast();
    let message = r#"flow type "Nope" is not registered"#;
    assert_invalid_input(
        t.runtime.start_flow("Nope", "f", &StartFlowOptions::new()),
        message,
    );
    assert_invalid_input(
        t.runtime
            .invoke_rpc("Nope", "f", "Any", Value::Null, &RpcInvokeOptions::new()),
        message,
    );
    assert_eq!(t.flow("f"), None);
}

#[test]
fn a_flow_type_registers_once() {
    let t = with_profile();
    assert_invalid_input(
        t.runtime.register(profile()),
        r#"flow type "Profile" is already registered"#,
    );
    assert_invalid_input(
        t.runtime
            .register(attrflow::flows::chunked_subscriber::definition()),
        r#"flow type "ChunkedSubscriberFlow" is already registered"#,
    );
}

#[test]
fn racing_starts_with_ignore_all_return_the_one_run_that_was_created() {
    let t = TestStore::fast();
    let ignore = StartFlowOptions::new().ignore_already_started(true);
    let run_ids: Vec<String> = std::thread::scope(|s| {
        let starters: Vec<_> = (0..8)
            .map(|_| s.spawn(|| t.runtime.start_flow(SUBSCRIBER_FLOW, FLOW_ID, &ignore)))
            .collect();
        starters
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    let recorded = t.flow(FLOW_ID).unwrap().run_id;
    assert!(run_ids.iter().all(|id| *id == recorded), "{run_ids:?}");
}

#[test]
fn a_call_pinned_to_another_run_is_rejected_and_runs_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    let run_id = archive.start().unwrap();
    let register = |run: &str| {
        t.runtime.invoke_rpc(
            SUBSCRIBER_FLOW,
            FLOW_ID,
            REGISTER_SUBSCRIBER,
            json!({"subscriberId": "s", "deliveryAddress": "s@example.com"}),
            &RpcInvokeOptions::new().run_id(run),
        )
    };
    match register("another-run") {
        Err(Error::RunNotCurrent {
            flow_id,
            run_id: asked,
            current_run_id,
        }) => assert_eq!(
            (flow_id.as_str(), asked.as_str(), current_run_id.as_str()),
            (FLOW_ID, "another-run", run_id.as_str())
        ),
        other => panic!("expected RunNotCurrent, got {other:?}"),
    }
    let before = t.stored_values(FLOW_ID);
    assert_eq!(before[ARCHIVE_STATE_ATTRIBUTE]["nextSequence"], json!(1));
    let registered = register(&run_id).unwrap();
    assert_eq!(registered["sequence"], json!(1));
}
