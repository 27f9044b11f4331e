//! Any two texts as a subscriber's ID and delivery address, appended on a real store: stored
//! exactly when both are non-empty and the record within its log's limit, refused with
//! `InvalidInput` and nothing stored otherwise.
#![no_main]

use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, SUBSCRIBER_CHUNK_SIZE};
use attrflow::limits::record_limit;
use attrflow::Error;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|fields: (String, String)| {
    let (id, address) = fields;
    let archive = SubscriberArchive::new(attrflow_fuzz::archive_runtime(), FLOW_ID);
    let before = archive.page("current").expect("read current");
    let record = json!({"sequence": u64::MAX, "subscriberId": id, "deliveryAddress": address});
    let allowed = [&id, &address]
        .iter()
        .all(|t| !t.is_empty())
        && record.to_string().len() <= record_limit(SUBSCRIBER_CHUNK_SIZE);
    match archive.register(&id, &address) {
        Ok(stored) => {
            assert!(allowed, "{id:?}, {address:?} was stored");
            assert_eq!(
                (stored.subscriber_id, stored.delivery_address),
                (id, address)
            );
        }
        Err(Error::InvalidInput(_)) => {
            assert!(!allowed, "{id:?}, {address:?} was refused");
            assert_eq!(archive.page("current").expect("read current"), before);
        }
        Err(other) => panic!("{id:?}, {address:?} gave {other:?}"),
    }
});
