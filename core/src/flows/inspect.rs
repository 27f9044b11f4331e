//! Which chunked logs a stored flow of a built-in type holds, for inspection tools.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::chunked_log::ChunkedLog;
use crate::store::FlowRecord;

use super::{app_log, chunked_subscriber};

/// The chunked logs of `flow` as (log name, layout): the subscriber archive's one log
/// (named `""`), or each log of an app log flow that has a stored state in `values` (the
/// flow's stored values by physical name). Other flow types hold none.
pub fn chunked_logs(
    flow: &FlowRecord,
    values: &BTreeMap<String, Value>,
) -> Vec<(String, ChunkedLog)> {
    match flow.flow_type.as_str() {
        chunked_subscriber::FLOW_TYPE => vec![(String::new(), chunked_subscriber::LOG)],
        app_log::FLOW_TYPE => {
            let prefix = format!("{}/", app_log::LOG_STATES_MAP);
            values
                .keys()
                .filter_map(|name| name.strip_prefix(&prefix))
                .map(|log| (log.to_owned(), app_log::named_log(log)))
                .collect()
        }
        _ => Vec::new(),
    }
}
