//! Any JSON a caller sends as RPC input, and any text in a record field, gets a value or a
//! typed error, never a panic, and a refused call leaves the store unchanged. The rule for
//! `RegisterSubscriber` is stated again here, independently of the code under test: the
//! input is a JSON object whose `subscriberId` and `deliveryAddress` (when present) are
//! strings, or an array of at most those two in that order (serde's sequence form of a
//! struct); both non-empty, each at most 4096 bytes, the record at most 8 KiB and the
//! input at most 1 MiB; unknown fields are ignored.

mod common;

use std::cell::Cell;

use attrflow::flows::chunked_subscriber::SUBSCRIBER_CHUNK_SIZE;
use attrflow::flows::chunked_subscriber::{
    Subscriber, FLOW_ID, FLOW_TYPE, GET_SUBSCRIBER_PAGE, REGISTER_SUBSCRIBER, SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::limits::{json_len, record_limit, MAX_RPC_INPUT_BYTES};
use attrflow::{Error, RpcInvokeOptions};
use common::TestStore;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};

/// Any JSON value, with the field names the RPCs read made likely.
fn json_values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        any::<String>().prop_map(Value::from),
        "[0-9]{20}".prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("subscriberId".to_owned()),
        Just("deliveryAddress".to_owned()),
        Just("pageToken".to_owned()),
        any::<String>(),
    ];
    leaf.prop_recursive(3, 24, 5, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(keys.clone(), inner, 0..5)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// Field texts: any string, the empty string, and strings around the field limit.
fn field_texts() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        Just(String::new()),
        "[a-z]{4094,4098}",
        "[é]{2046,2049}",
    ]
}

/// Register inputs: arbitrary JSON, and objects of the two fields with any texts.
fn register_inputs() -> impl Strategy<Value = Value> {
    prop_oneof![
        json_values(),
        (field_texts(), field_texts(), any::<bool>()).prop_map(|(id, address, extra)| {
            let mut input = json!({ "subscriberId": id, "deliveryAddress": address });
            if extra {
                input["unknown"] = json!([1, 2]);
            }
            input
        }),
    ]
}

/// The rule, stated independently: the subscriber this input registers, if it is valid.
fn valid_registration(input: &Value) -> Option<(String, String)> {
    let (id, address) = match input {
        Value::Object(fields) => (fields.get("subscriberId"), fields.get("deliveryAddress")),
        // serde's sequence form of a struct: the fields in order.
        Value::Array(items) if items.len() <= 2 => (items.first(), items.get(1)),
        _ => return None,
    };
    let text = |field: Option<&Value>| match field {
        None => Some(String::new()),
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => None,
    };
    let (id, address) = (text(id)?, text(address)?);
    let record = json!({ "sequence": u64::MAX, "subscriberId": id, "deliveryAddress": address });
    let fits = [&id, &address].iter().all(|t| !t.is_empty())
        && json_len(&record) <= record_limit(SUBSCRIBER_CHUNK_SIZE)
        && json_len(input) <= MAX_RPC_INPUT_BYTES;
    fits.then_some((id, address))
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    })
}

#[test]
fn any_register_input_appends_exactly_when_valid_and_leaves_the_store_unchanged_otherwise() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let next_sequence = Cell::new(1);
    runner()
        .run(&register_inputs(), |input| {
            let before = t.stored_values(FLOW_ID);
            let expected = valid_registration(&input);
            let result = t.runtime.invoke_rpc(
                FLOW_TYPE,
                FLOW_ID,
                REGISTER_SUBSCRIBER,
                input.clone(),
                &RpcInvokeOptions::new(),
            );
            match (expected, result) {
                (Some((id, address)), Ok(output)) => {
                    let stored: Subscriber = serde_json::from_value(output).unwrap();
                    prop_assert_eq!(
                        &stored,
                        &Subscriber {
                            sequence: next_sequence.get(),
                            subscriber_id: id,
                            delivery_address: address
                        }
                    );
                    next_sequence.set(next_sequence.get() + 1);
                    let newest = archive.page("current").unwrap().subscribers;
                    prop_assert_eq!(newest.first(), Some(&stored));
                }
                (None, Err(Error::InvalidInput(_))) => {
                    prop_assert_eq!(t.stored_values(FLOW_ID), before);
                }
                (expected, other) => {
                    return Err(TestCaseError::fail(format!(
                        "{input} (valid: {}) gave {other:?}",
                        expected.is_some()
                    )))
                }
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn any_page_input_answers_a_page_or_a_typed_error_and_writes_nothing() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    common::register_in_order(&archive, 1..=101);
    let before = t.stored_values(FLOW_ID);
    runner()
        .run(&json_values(), |input| {
            let result = t.runtime.invoke_rpc(
                FLOW_TYPE,
                FLOW_ID,
                GET_SUBSCRIBER_PAGE,
                input.clone(),
                &RpcInvokeOptions::new()
                    .load_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, "current")
                    .load_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, "00000000000000000001"),
            );
            prop_assert!(
                matches!(
                    result,
                    Ok(_)
                        | Err(Error::InvalidInput(_))
                        | Err(Error::InvalidPageToken { .. })
                        | Err(Error::PageNotFound(_))
                        | Err(Error::AttributeMapNotLoaded { .. })
                ),
                "{input} gave {result:?}"
            );
            Ok(())
        })
        .unwrap();
    assert_eq!(t.stored_values(FLOW_ID), before);
}
