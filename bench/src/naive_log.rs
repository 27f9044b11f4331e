//! The baseline a user might write first: the whole history in one Attribute, which every
//! append reads, extends and writes back whole. Same runtime, same store, same record.

use attrflow::flows::chunked_subscriber::RegisterSubscriberInput;
use attrflow::{
    Error, FlowDefinition, RpcContext, RpcDefinition, RpcInvokeOptions, Runtime, StartFlowOptions,
};
use serde_json::{json, Value};

use crate::populate::subscriber;
use crate::BenchResult;

/// The flow type of the single-Attribute log.
pub const FLOW_TYPE: &str = "NaiveLogFlow";
/// The flow ID it runs under.
pub const FLOW_ID: &str = "naive-log";
const HISTORY: &str = "history";
const APPEND: &str = "Append";

/// The flow type: one Attribute `history` = `{"records": [...]}` and an `Append` RPC.
pub fn definition() -> attrflow::Result<FlowDefinition> {
    FlowDefinition::builder(FLOW_TYPE)
        .attribute(HISTORY)
        .default_value(HISTORY, json!({"records": []}))
        .rpc(RpcDefinition::new(APPEND, append).lock_attribute(HISTORY))
        .build()
}

fn append(ctx: &mut RpcContext<'_>, input: Value) -> attrflow::Result<Value> {
    let input: RegisterSubscriberInput = serde_json::from_value(input)
        .map_err(|e| Error::invalid_input(format!("Append input: {e}")))?;
    let mut history = ctx.attribute(HISTORY)?.cloned().unwrap_or(Value::Null);
    let records = history
        .get_mut("records")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| Error::storage("history has no records list"))?;
    let record = json!({
        "sequence": records.len() + 1,
        "subscriberId": input.subscriber_id,
        "deliveryAddress": input.delivery_address,
    });
    records.push(record.clone());
    ctx.set_attribute(HISTORY, history)?;
    Ok(record)
}

/// Registers the flow type on `runtime` and starts the log holding records `1..=records`.
pub fn start(runtime: &Runtime, records: u64) -> BenchResult<()> {
    runtime.register(definition()?)?;
    let history: Vec<_> = (1..=records).map(subscriber).collect();
    let options = StartFlowOptions::new().with_attribute(HISTORY, json!({ "records": history }));
    runtime.start_flow(FLOW_TYPE, FLOW_ID, &options)?;
    Ok(())
}

/// Appends one record.
pub fn append_one(
    runtime: &Runtime,
    subscriber_id: &str,
    delivery_address: &str,
) -> BenchResult<()> {
    let input = json!({"subscriberId": subscriber_id, "deliveryAddress": delivery_address});
    runtime.invoke_rpc(FLOW_TYPE, FLOW_ID, APPEND, input, &RpcInvokeOptions::new())?;
    Ok(())
}
