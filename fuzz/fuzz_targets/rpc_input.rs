//! Any bytes, read as the JSON input of the archive's two RPCs on a real store: the call
//! answers or fails with a typed error, never panics, and a refused call changes nothing.
#![no_main]

use attrflow::flows::chunked_subscriber::{
    SubscriberArchive, FLOW_ID, FLOW_TYPE, GET_SUBSCRIBER_PAGE, REGISTER_SUBSCRIBER,
    SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::{Error, RpcInvokeOptions, Runtime};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn newest(runtime: &Runtime) -> (String, usize) {
    let page = SubscriberArchive::new(runtime, FLOW_ID)
        .page("current")
        .expect("read current");
    (page.next_page_token, page.subscribers.len())
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let runtime = attrflow_fuzz::archive_runtime();
    let before = newest(runtime);
    match runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        REGISTER_SUBSCRIBER,
        input.clone(),
        &RpcInvokeOptions::new(),
    ) {
        Ok(_) => assert_ne!(newest(runtime), before, "an accepted append is stored"),
        Err(Error::InvalidInput(_)) => assert_eq!(
            newest(runtime),
            before,
            "a refused append changed the store"
        ),
        Err(other) => panic!("{input} gave {other:?}"),
    }
    let options =
        RpcInvokeOptions::new().load_attribute_map_instance(SUBSCRIBER_CHUNKS_MAP, "current");
    match runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        GET_SUBSCRIBER_PAGE,
        input.clone(),
        &options,
    ) {
        Ok(_)
        | Err(Error::InvalidInput(_))
        | Err(Error::InvalidPageToken { .. })
        | Err(Error::PageNotFound(_))
        | Err(Error::AttributeMapNotLoaded { .. }) => {}
        Err(other) => panic!("{input} gave {other:?}"),
    }
});
