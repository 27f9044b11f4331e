//! Every RPC call is a `tracing` span named `attrflow.rpc` with its flow type, flow ID, RPC
//! name and outcome; inside it are the lock wait, the handler and (on the thread that
//! commits the group) the COMMIT. A subscriber of the user's (here a small capturing layer
//! on the `tracing-subscriber` registry) sees them all.

mod common;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use attrflow::flows::chunked_subscriber::{
    SubscriberArchive, FLOW_ID, REGISTER_SUBSCRIBER as REGISTER,
};
use attrflow::metrics::{SPAN_COMMIT, SPAN_HANDLER, SPAN_LOCK_WAIT, SPAN_RPC};
use attrflow::{FlowDefinition, RpcDefinition, RpcInvokeOptions, StartFlowOptions};
use common::TestStore;
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span as the layer saw it: its name, its parent's name and its fields.
#[derive(Debug, Clone, Default)]
struct Seen {
    name: String,
    parent: Option<String>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<Vec<(u64, Seen)>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name().to_owned(),
            parent: ctx
                .span(id)
                .and_then(|span| span.parent())
                .map(|parent| parent.name().to_owned()),
            ..Seen::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        self.spans.lock().unwrap().push((id.into_u64(), seen));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, seen)) = spans.iter_mut().rev().find(|(s, _)| *s == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

/// The tests of this file run one at a time: `tracing` keeps which callsites are enabled,
/// and the most verbose level any subscriber wants, in process-wide state that it rebuilds
/// whenever a scoped subscriber appears, so a test setting its subscriber while another
/// test's call creates its `debug` lock-wait span can have that span filtered out (about
/// one run in six when the two ran in parallel).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn an_rpc_call_is_a_span_with_flow_id_rpc_name_and_outcome_holding_lock_wait_handler_and_commit() {
    let _one = one_at_a_time();
    let t = TestStore::fast();
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());

    tracing::subscriber::with_default(subscriber, || {
        let archive = SubscriberArchive::new(&t.runtime, FLOW_ID);
        archive.start().unwrap();
        archive
            .register("subscriber-001", "subscriber-001@example.com")
            .unwrap();
    });

    let spans: Vec<Seen> = capture
        .spans
        .lock()
        .unwrap()
        .iter()
        .map(|(_, seen)| seen.clone())
        .collect();
    let rpc = spans
        .iter()
        .find(|s| s.name == SPAN_RPC && s.fields.get("rpc").map(String::as_str) == Some(REGISTER))
        .unwrap_or_else(|| panic!("no register RPC span among {spans:#?}"));
    assert_eq!(rpc.fields.get("flow_id").map(String::as_str), Some(FLOW_ID));
    assert_eq!(rpc.fields.get("outcome").map(String::as_str), Some("ok"));
    assert!(rpc.fields.contains_key("flow_type"), "{rpc:?}");
    for child in [SPAN_LOCK_WAIT, SPAN_HANDLER, SPAN_COMMIT] {
        assert!(
            spans
                .iter()
                .any(|s| s.name == child && s.parent.as_deref() == Some(SPAN_RPC)),
            "no {child} span inside an RPC span among {spans:#?}"
        );
    }
    let commit = spans.iter().find(|s| s.name == SPAN_COMMIT).unwrap();
    assert_eq!(commit.fields.get("members").map(String::as_str), Some("1"));
}

impl Capture {
    fn seen(&self) -> Vec<Seen> {
        let spans = self.spans.lock().unwrap();
        spans.iter().map(|(_, seen)| seen.clone()).collect()
    }

    fn handler_of(&self, rpc: &str) -> Option<Seen> {
        self.seen().into_iter().find(|s| {
            s.name == SPAN_HANDLER && s.fields.get("rpc").map(String::as_str) == Some(rpc)
        })
    }
}

#[test]
fn a_call_queued_behind_another_traces_its_handler_to_its_own_subscriber_inside_its_own_rpc_span() {
    let _one = one_at_a_time();
    let t = TestStore::fast();
    let (checkpoint, pause) = common::checkpoint();
    let definition = FlowDefinition::builder("Traced")
        .attribute("v")
        .attribute("w")
        .rpc(
            RpcDefinition::new("Hold", move |ctx, input| {
                ctx.set_attribute("v", input)?;
                pause.wait();
                Ok(Value::Null)
            })
            .lock_attribute("v"),
        )
        .rpc(
            RpcDefinition::new("Set", |ctx, input| {
                ctx.set_attribute("w", input)?;
                Ok(Value::Null)
            })
            .lock_attribute("w"),
        )
        .build()
        .unwrap();
    t.runtime.register(definition).unwrap();
    t.runtime
        .start_flow("Traced", "traced", &StartFlowOptions::new())
        .unwrap();
    let call = |rpc: &str| {
        t.runtime.invoke_rpc(
            "Traced",
            "traced",
            rpc,
            Value::Null,
            &RpcInvokeOptions::new(),
        )
    };
    let (holding, queued) = (Capture::default(), Capture::default());

    std::thread::scope(|s| {
        let mut checkpoint = checkpoint;
        let holder = s.spawn(|| {
            let subscriber = tracing_subscriber::registry().with(holding.clone());
            tracing::subscriber::with_default(subscriber, || call("Hold"))
        });
        checkpoint.wait_until_entered();
        let waiter = s.spawn(|| {
            let subscriber = tracing_subscriber::registry().with(queued.clone());
            tracing::subscriber::with_default(subscriber, || call("Set"))
        });
        while t.store.group_stats().waiting < 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        checkpoint.release();
        holder.join().unwrap().unwrap();
        waiter.join().unwrap().unwrap();
    });

    let handler = queued.handler_of("Set");
    assert_eq!(
        handler.and_then(|h| h.parent).as_deref(),
        Some(SPAN_RPC),
        "the queued call's handler span, in its own RPC span, among {:#?}",
        queued.seen()
    );
    assert!(
        holding.handler_of("Set").is_none(),
        "the queued call's handler span went to the other caller's subscriber: {:#?}",
        holding.seen()
    );
}
