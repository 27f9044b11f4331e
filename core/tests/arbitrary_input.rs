//! Whatever a caller sends as a page token, flow ID or map instance key, attrflow answers
//! with a value or a typed error and never panics; and it accepts exactly the inputs the
//! rules allow. Each property states the rule again, independently of the code under test:
//!
//! - a page token is `""`, `current`, or 20 ASCII digits whose value N fits in a u64, is
//!   not 0, and has N ≡ 1 (mod 100); anything else is `InvalidPageToken`;
//! - a flow ID is non-empty, at most 256 bytes, and free of `/`, `$`, `:` and control
//!   characters; anything else is `InvalidInput`;
//! - an instance key is non-empty, at most 256 bytes and free of `/` and of control
//!   characters; anything else is `InvalidInput`.

mod common;

use std::cell::Cell;

use attrflow::flows::chunked_subscriber::{
    validate_subscriber_page_token, FLOW_ID, FLOW_TYPE, GET_SUBSCRIBER_PAGE, SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::{Error, RpcInvokeOptions, StartFlowOptions};
use common::{register_in_order, TestStore};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::json;

/// Whether a token has the form every token has: `""`, `current`, or 20 ASCII digits of a
/// first sequence that fits in a u64.
fn token_form_is_valid(token: &str) -> bool {
    if token.is_empty() || token == "current" {
        return true;
    }
    if token.len() != 20 || !token.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let value: u128 = token.parse().expect("20 ASCII digits fit in a u128");
    value != 0 && value <= u128::from(u64::MAX)
}

/// Whether a token is valid for an archive of the default layout: of valid form and, for an
/// archive token, a chunk boundary (1, 101, 201, …).
fn token_is_valid(token: &str) -> bool {
    token_form_is_valid(token)
        && (token.is_empty()
            || token == "current"
            || token.parse::<u64>().is_ok_and(|n| n % 100 == 1))
}

fn flow_id_is_valid(flow_id: &str) -> bool {
    !flow_id.is_empty()
        && flow_id.len() <= 256
        && !flow_id.contains(['/', '$', ':'])
        && !flow_id.chars().any(char::is_control)
}

fn instance_key_is_valid(key: &str) -> bool {
    !key.is_empty() && key.len() <= 256 && !key.contains('/') && !key.chars().any(char::is_control)
}

/// Page tokens: any string, plus strings built to sit on each edge of the rule.
fn page_tokens() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        Just(String::new()),
        Just("current".to_owned()),
        "(?i)current",
        "[0-9]{20}",
        "[0-9]{18}01",
        "0{17}[0-9]{3}",
        "[0-9]{19,21}",
        "[ +0-9-]{20}",
        "[0-9٠-٩]{20}",
    ]
}

/// Flow IDs and instance keys: any string, plus short names rich in reserved characters
/// and names around the 256-byte limit.
fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z0-9/$:._ -]{0,12}",
        "[a-z\\x00-\\x1f\\x7f]{1,6}",
        "[a-z]{254,258}",
        "[é]{127,129}",
    ]
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    })
}

#[test]
fn page_token_validation_accepts_exactly_the_tokens_the_rule_allows() {
    runner()
        .run(&page_tokens(), |token| {
            let result = validate_subscriber_page_token(&token);
            if token_form_is_valid(&token) {
                let normalized = if token.is_empty() { "current" } else { &token };
                prop_assert_eq!(result, Ok(normalized.to_owned()));
            } else {
                prop_assert_eq!(result, Err(Error::InvalidPageToken { token }));
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn paging_with_any_token_answers_a_page_page_not_found_or_invalid_page_token() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=101);

    runner()
        .run(&page_tokens(), |token| {
            let result = archive.page(&token);
            match (token_is_valid(&token), result) {
                (true, Ok(page)) => {
                    let stored = ["", "current", "00000000000000000001"];
                    prop_assert!(stored.contains(&token.as_str()), "{token:?} gave {page:?}");
                }
                (true, Err(Error::PageNotFound(message))) => {
                    prop_assert_eq!(message, format!("subscriber page {token:?} not found"));
                }
                (false, Err(Error::InvalidPageToken { token: named })) => {
                    prop_assert_eq!(named, token);
                }
                (valid, other) => {
                    return Err(TestCaseError::fail(format!(
                        "{token:?} (valid: {valid}) gave {other:?}"
                    )))
                }
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn any_flow_id_is_started_and_served_when_valid_and_invalid_input_otherwise() {
    let t = TestStore::fast();
    let start = StartFlowOptions::new().ignore_already_started(true);

    runner()
        .run(&names(), |flow_id| {
            let started = t.runtime.start_flow(FLOW_TYPE, &flow_id, &start);
            let paged = t.runtime.invoke_rpc(
                FLOW_TYPE,
                &flow_id,
                GET_SUBSCRIBER_PAGE,
                json!({ "pageToken": "current" }),
                &RpcInvokeOptions::new()
                    .load_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, "current"),
            );
            if flow_id_is_valid(&flow_id) {
                prop_assert!(started.is_ok(), "{flow_id:?}: {started:?}");
                prop_assert!(paged.is_ok(), "{flow_id:?}: {paged:?}");
                prop_assert!(t.flow(&flow_id).is_some());
            } else {
                prop_assert!(
                    matches!(started, Err(Error::InvalidInput(_))),
                    "{flow_id:?}: {started:?}"
                );
                prop_assert!(
                    matches!(paged, Err(Error::InvalidInput(_))),
                    "{flow_id:?}: {paged:?}"
                );
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn any_instance_key_is_accepted_when_valid_and_invalid_input_otherwise() {
    let t = TestStore::fast();
    t.archive().start().unwrap();
    let fresh_flows = Cell::new(0u32);

    runner()
        .run(&names(), |key| {
            let valid = instance_key_is_valid(&key);

            // As a per-call lock of an RPC call.
            let options = RpcInvokeOptions::new()
                .lock_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, key.as_str())
                .load_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, "current");
            let paged = t.runtime.invoke_rpc(
                FLOW_TYPE,
                FLOW_ID,
                GET_SUBSCRIBER_PAGE,
                json!({ "pageToken": "" }),
                &options,
            );
            prop_assert_eq!(paged.is_ok(), valid, "{:?}: {:?}", key, paged);
            if !valid {
                prop_assert!(matches!(paged, Err(Error::InvalidInput(_))), "{paged:?}");
            }

            // As the key of an initial value, on a flow of its own.
            fresh_flows.set(fresh_flows.get() + 1);
            let flow_id = format!("fresh-{}", fresh_flows.get());
            let started = t.runtime.start_flow(
                FLOW_TYPE,
                &flow_id,
                &StartFlowOptions::new().with_map_instance(
                    SUBSCRIBER_CHUNKS_MAP,
                    key.as_str(),
                    json!({ "subscribers": [] }),
                ),
            );
            prop_assert_eq!(started.is_ok(), valid, "{:?}: {:?}", key, started);
            if !valid {
                prop_assert!(matches!(started, Err(Error::InvalidInput(_))));
                prop_assert!(t.flow(&flow_id).is_none(), "no flow is created");
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(t.held_locks(), 0);
}
