//! [`Runtime::health_check`] (Dex's `health_check`): a store that answers passes, on every
//! backend, with or without flows in it.

mod common;

use common::TestStore;

#[test]
fn a_store_that_answers_is_healthy() {
    let t = TestStore::fast();
    t.runtime.health_check().unwrap();
    let archive = t.archive();
    archive.start().unwrap();
    t.runtime.health_check().unwrap();
    // The probe reads; it starts no flow and leaves no trace.
    let flows = t.store.as_store().list_flows().unwrap();
    assert_eq!(flows.len(), 1, "{flows:?}");
}
