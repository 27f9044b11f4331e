//! Any bytes, read as the JSON input of the archive's two RPCs on a real store: the call
//! answers or fails with a typed error, never panics, and a refused call changes nothing.
#![no_main]

use std::sync::OnceLock;

use attrflow::flows::chunked_subscriber::{
    SubscriberArchive, FLOW_ID, FLOW_TYPE, GET_SUBSCRIBER_PAGE, REGISTER_SUBSCRIBER,
    SUBSCRIBER_CHUNKS_MAP,
};
use attrflow::{Error, RpcInvokeOptions, Runtime};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

struct Fixture {
    _dir: tempfile::TempDir,
    runtime: Runtime,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = format!(
            "sqlite:{}?synchronous=normal",
            dir.path().join("fuzz.db").display()
        );
        let runtime = Runtime::open(&url).expect("open the store");
        SubscriberArchive::new(&runtime, FLOW_ID)
            .start()
            .expect("start the archive");
        Fixture { _dir: dir, runtime }
    })
}

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
    let runtime = &fixture().runtime;
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
