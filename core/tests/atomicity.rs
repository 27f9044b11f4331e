//! An RPC's writes are all-or-nothing: a handler that succeeds stores every staged write
//! (sets and deletes) in one commit; a handler that returns an error or panics stores none,
//! however many it staged. The archive rollover (archive chunk, new `current`, advanced
//! state) is one such commit.
//!
//! Outcomes are checked in the SQLite file itself, through a connection of the test's own.

mod common;

use std::collections::BTreeMap;

use attrflow::chunked_log::ChunkedLog;
use attrflow::flows::chunked_subscriber::{
    ARCHIVE_STATE_ATTRIBUTE, FLOW_ID, SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::{Error, FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::{delivery_address, register_in_order, subscriber_id, TestStore};
use serde_json::{json, Value};

const LEDGER: &str = "Ledger";
const FLOW: &str = "ledger";

/// How a `Ledger` handler ends after staging its writes.
fn ending(input: &Value) -> attrflow::Result<Value> {
    match input.as_str() {
        Some("succeed") => Ok(json!("done")),
        Some("fail") => Err(Error::handler("changed my mind")),
        Some("panic") => panic!("changed my mind violently"),
        other => unreachable!("unknown ending {other:?}"),
    }
}

/// A flow type whose one RPC stages a set of the singleton, two new map instances and the
/// deletion of a third, then ends as its input says.
fn ledger() -> FlowDefinition {
    FlowDefinition::builder(LEDGER)
        .attribute("balance")
        .map("entries")
        .rpc(
            RpcDefinition::new("Rewrite", |ctx, input| {
                ctx.set_attribute("balance", json!(90))?;
                ctx.set_map_instance("entries", "debit", json!({ "amount": -10 }))?;
                ctx.set_map_instance("entries", "fee", json!({ "amount": -1 }))?;
                ctx.delete_map_instance("entries", "opening")?;
                ending(&input)
            })
            .lock_attribute("balance"),
        )
        .build()
        .unwrap()
}

fn started_ledger() -> TestStore {
    let t = TestStore::fast();
    t.runtime.register(ledger()).unwrap();
    t.runtime
        .start_flow(
            LEDGER,
            FLOW,
            &StartFlowOptions::new()
                .with_attribute("balance", json!(100))
                .with_map_instance("entries", "opening", json!({ "amount": 100 })),
        )
        .unwrap();
    t
}

fn opening_state() -> BTreeMap<String, Value> {
    BTreeMap::from([
        ("balance".to_owned(), json!(100)),
        ("entries/opening".to_owned(), json!({ "amount": 100 })),
    ])
}

fn rewrite(t: &TestStore, ending: &str) -> attrflow::Result<Value> {
    t.runtime.invoke_rpc(
        LEDGER,
        FLOW,
        "Rewrite",
        json!(ending),
        &RpcInvokeOptions::new(),
    )
}

#[test]
fn a_successful_handler_stores_every_staged_set_and_delete() {
    let t = started_ledger();
    assert_eq!(t.stored_values(FLOW), opening_state());

    assert_eq!(rewrite(&t, "succeed").unwrap(), json!("done"));

    assert_eq!(
        t.stored_values(FLOW),
        BTreeMap::from([
            ("balance".to_owned(), json!(90)),
            ("entries/debit".to_owned(), json!({ "amount": -10 })),
            ("entries/fee".to_owned(), json!({ "amount": -1 })),
        ])
    );
}

#[test]
fn a_handler_that_fails_after_staging_writes_stores_none_of_them() {
    let t = started_ledger();

    let err = rewrite(&t, "fail").unwrap_err();
    assert_eq!(err, Error::handler("changed my mind"));

    assert_eq!(t.stored_values(FLOW), opening_state());
}

#[test]
fn a_handler_that_panics_after_staging_writes_stores_none_of_them() {
    let t = started_ledger();

    let err = rewrite(&t, "panic").unwrap_err();
    assert_eq!(
        err,
        Error::HandlerFailure {
            error_type: "panic".into(),
            message: "RPC Rewrite panicked: changed my mind violently".into()
        }
    );

    assert_eq!(t.stored_values(FLOW), opening_state());
    assert_eq!(
        rewrite(&t, "succeed").unwrap(),
        json!("done"),
        "the flow still works"
    );
}

#[test]
fn the_archive_rollover_stores_archive_current_and_state_in_one_commit() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=100);

    let full = t.stored_values(FLOW_ID);
    let current = format!("{SUBSCRIBER_CHUNKS_MAP}/current");
    let first_archive = format!("{SUBSCRIBER_CHUNKS_MAP}/00000000000000000001");
    assert_eq!(
        full.keys().collect::<Vec<_>>(),
        [ARCHIVE_STATE_ATTRIBUTE, current.as_str()],
        "a full current chunk is not archived before the next append"
    );
    assert_eq!(
        full[ARCHIVE_STATE_ATTRIBUTE],
        json!({ "nextSequence": 101, "latestArchivedChunkToken": "" })
    );
    assert_eq!(full[&current]["subscribers"].as_array().unwrap().len(), 100);

    register_in_order(&archive, 101..=101);

    let rolled = t.stored_values(FLOW_ID);
    assert_eq!(
        rolled.keys().collect::<Vec<_>>(),
        [
            ARCHIVE_STATE_ATTRIBUTE,
            first_archive.as_str(),
            current.as_str()
        ]
    );
    assert_eq!(
        rolled[&first_archive], full[&current],
        "the archive holds the full chunk exactly as it was stored"
    );
    assert_eq!(
        rolled[&current],
        json!({ "subscribers": [{
            "sequence": 101,
            "subscriberId": subscriber_id(101),
            "deliveryAddress": delivery_address(101),
        }] })
    );
    assert_eq!(
        rolled[ARCHIVE_STATE_ATTRIBUTE],
        json!({ "nextSequence": 102, "latestArchivedChunkToken": "00000000000000000001" })
    );
}

/// A chunked log of three records a chunk whose append fails, after the log has staged its
/// writes, whenever the input says so.
const SMALL_LOG: ChunkedLog = ChunkedLog::new("state", "chunks", "records", 3, "record");

fn fragile_log() -> FlowDefinition {
    SMALL_LOG
        .declare(FlowDefinition::builder("FragileLog"))
        .rpc(
            SMALL_LOG.appending(RpcDefinition::new("Append", |ctx, input| {
                let fail = input["fail"].as_bool().unwrap_or(false);
                let record =
                    SMALL_LOG.append(ctx, |sequence| Ok(json!({ "sequence": sequence })))?;
                if fail {
                    return Err(Error::handler("failed after staging the append"));
                }
                Ok(record)
            })),
        )
        .build()
        .unwrap()
}

#[test]
fn a_rollover_that_fails_after_staging_leaves_the_full_chunk_unarchived() {
    let t = TestStore::fast();
    t.runtime.register(fragile_log()).unwrap();
    t.runtime
        .start_flow("FragileLog", "log", &StartFlowOptions::new())
        .unwrap();
    let append = |fail: bool| {
        t.runtime.invoke_rpc(
            "FragileLog",
            "log",
            "Append",
            json!({ "fail": fail }),
            &RpcInvokeOptions::new(),
        )
    };
    for sequence in 1..=3 {
        assert_eq!(append(false).unwrap(), json!({ "sequence": sequence }));
    }
    let full = t.stored_values("log");

    let err = append(true).unwrap_err();
    assert_eq!(err, Error::handler("failed after staging the append"));
    assert_eq!(
        t.stored_values("log"),
        full,
        "no archive, the full current chunk and the old state"
    );

    assert_eq!(append(false).unwrap(), json!({ "sequence": 4 }));
    let rolled = t.stored_values("log");
    assert_eq!(
        rolled["chunks/00000000000000000001"],
        full["chunks/current"]
    );
    assert_eq!(
        rolled["chunks/current"],
        json!({ "records": [{ "sequence": 4 }] })
    );
    assert_eq!(
        rolled["state"],
        json!({ "nextSequence": 5, "latestArchivedChunkToken": "00000000000000000001" })
    );
}
