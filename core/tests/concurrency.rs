//! Concurrent appends across a chunk boundary: callers that retry lock conflicts (and only
//! those) each get one sequence, none is lost or given twice, and the chunk that fills up is
//! archived exactly once. The scenario is the Dex Go integration test
//! `TestSequentiallyChunkedAttributeMapRetriesConcurrentBoundaryAppends`. Plain
//! read-modify-writes are as safe when they lock what they change or run transactionally.

mod common;

use std::collections::BTreeSet;
use std::thread;

use attrflow::{FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::{
    all_subscribers, expected_subscriber, register_in_order, register_retrying, sequences,
    TestStore,
};
use serde_json::{json, Value};

const SEQUENTIAL: u64 = 95;
const CONCURRENT: u64 = 20;
const TOTAL: u64 = SEQUENTIAL + CONCURRENT;

#[test]
fn twenty_concurrent_appends_across_the_boundary_get_sequences_96_to_115_once_each() {
    let t = TestStore::new();
    let archive = t.archive();
    archive.start().unwrap();
    register_in_order(&archive, 1..=SEQUENTIAL);

    let registered: Vec<_> = thread::scope(|s| {
        let callers: Vec<_> = (SEQUENTIAL + 1..=TOTAL)
            .map(|n| {
                let archive = &archive;
                s.spawn(move || (n, register_retrying(archive, n)))
            })
            .collect();
        callers.into_iter().map(|c| c.join().unwrap()).collect()
    });

    let mut given = BTreeSet::new();
    for (n, subscriber) in &registered {
        assert_eq!(subscriber.subscriber_id, common::subscriber_id(*n));
        assert!(
            given.insert(subscriber.sequence),
            "sequence {} was given twice",
            subscriber.sequence
        );
    }
    assert_eq!(given, (SEQUENTIAL + 1..=TOTAL).collect::<BTreeSet<_>>());

    let current = archive.page("current").unwrap();
    assert_eq!(sequences(&current), (101..=TOTAL).rev().collect::<Vec<_>>());
    assert_eq!(current.next_page_token, "00000000000000000001");
    let archived = archive.page("00000000000000000001").unwrap();
    assert_eq!(archived.subscribers.len(), 100);
    assert_eq!(sequences(&archived), (1..=100).rev().collect::<Vec<_>>());
    assert_eq!(archived.next_page_token, "");

    let stored = all_subscribers(&archive);
    assert_eq!(
        stored.iter().map(|s| s.sequence).collect::<Vec<_>>(),
        (1..=TOTAL).collect::<Vec<_>>()
    );
    for subscriber in &stored[..SEQUENTIAL as usize] {
        assert_eq!(*subscriber, expected_subscriber(subscriber.sequence));
    }
    let stored_ids: BTreeSet<String> = stored.iter().map(|s| s.subscriber_id.clone()).collect();
    assert_eq!(
        stored_ids,
        (1..=TOTAL)
            .map(common::subscriber_id)
            .collect::<BTreeSet<_>>(),
        "every subscriber is stored, once"
    );
    for (_, subscriber) in &registered {
        assert!(
            stored.contains(subscriber),
            "{subscriber:?} is stored as it was returned"
        );
    }
    assert_eq!(t.held_locks(), 0);
}

/// A counter flow whose increments are read-modify-writes of one singleton, either under a
/// lock or as a transactional RPC without locks.
fn counter() -> FlowDefinition {
    let increment = |ctx: &mut attrflow::RpcContext<'_>, _: Value| {
        let count = ctx.attribute("count")?.and_then(Value::as_u64).unwrap_or(0);
        ctx.set_attribute("count", json!(count + 1))?;
        Ok(json!(count + 1))
    };
    FlowDefinition::builder("Counter")
        .attribute("count")
        .rpc(RpcDefinition::new("LockedIncrement", increment).lock_attribute("count"))
        .rpc(RpcDefinition::new("TransactionalIncrement", increment).transactional())
        .rpc(RpcDefinition::new("Read", |ctx, _| {
            Ok(ctx.attribute("count")?.cloned().unwrap_or(json!(0)))
        }))
        .build()
        .unwrap()
}

#[test]
fn concurrent_read_modify_writes_lose_no_update_when_locked_or_transactional() {
    const THREADS: u64 = 8;
    const INCREMENTS: u64 = 10;
    let t = TestStore::fast();
    t.runtime.register(counter()).unwrap();

    for rpc in ["LockedIncrement", "TransactionalIncrement"] {
        t.runtime
            .start_flow("Counter", rpc, &StartFlowOptions::new())
            .unwrap();
        let returned: BTreeSet<u64> = thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        (0..INCREMENTS)
                            .map(|_| {
                                let call = || {
                                    t.runtime.invoke_rpc(
                                        "Counter",
                                        rpc,
                                        rpc,
                                        Value::Null,
                                        &RpcInvokeOptions::new(),
                                    )
                                };
                                common::retry_lock_conflicts(call)
                                    .unwrap()
                                    .as_u64()
                                    .unwrap()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let total = THREADS * INCREMENTS;
        assert_eq!(
            returned,
            (1..=total).collect::<BTreeSet<_>>(),
            "{rpc}: every increment saw the one before it"
        );
        let read = t
            .runtime
            .invoke_rpc(
                "Counter",
                rpc,
                "Read",
                Value::Null,
                &RpcInvokeOptions::new(),
            )
            .unwrap();
        assert_eq!(read, json!(total), "{rpc}");
    }
    assert_eq!(t.held_locks(), 0);
}
