//! `CustomerDirectoryFlow`: the Dex hash-partitioned scenario (12 profiles colliding in one
//! partition, upserted concurrently and read back exactly), the stored bucket layout, and
//! the errors for bad input, absent profiles and missing loads.

mod common;

use std::thread;

use attrflow::flows::customer_directory::{
    CustomerDirectory, CustomerProfile, ProfilePartition, FLOW_ID, FLOW_TYPE,
    GET_CUSTOMER_PROFILE_BY_EMAIL, MAX_EMAIL_ADDRESS_BYTES, MAX_PROFILE_FIELD_BYTES,
    MIN_PROFILES_PER_PARTITION, PROFILES_MAP, UPSERT_CUSTOMER_PROFILE,
};
use attrflow::{Error, RpcInvokeOptions};
use common::{retry_lock_conflicts, TestStore};
use serde_json::{json, Value};

const COLLIDING: [u32; 12] = [
    178, 350, 686, 1115, 1216, 1502, 1810, 1942, 2154, 2745, 3030, 4039,
];

fn colliding_profile(index: u32) -> CustomerProfile {
    CustomerProfile {
        email_address: format!("collision-{index:05}@example.com"),
        full_name: format!("Customer {index:05}"),
        company_name: "Collision Test Company".into(),
        customer_tier: "gold".into(),
    }
}

#[test]
fn colliding_profiles_upserted_concurrently_all_read_back_exactly() {
    let t = TestStore::fast();
    let directory = CustomerDirectory::new(&t.runtime, FLOW_ID);
    directory.start().unwrap();
    thread::scope(|scope| {
        for index in COLLIDING {
            scope.spawn(move || {
                let saved =
                    retry_lock_conflicts(|| directory.upsert(&colliding_profile(index))).unwrap();
                assert_eq!(saved, colliding_profile(index));
            });
        }
    });
    for index in COLLIDING {
        let profile = colliding_profile(index);
        let read = directory
            .get(&format!(" \t{}\r\n", profile.email_address))
            .unwrap();
        assert_eq!(read, profile);
    }
    let stored = t.stored_values(FLOW_ID);
    assert_eq!(stored.len(), 1, "one bucket: {stored:?}");
    let bucket = &stored[&format!("{PROFILES_MAP}/partition-963")];
    assert_eq!(
        bucket["profilesByCanonicalEmail"]
            .as_object()
            .map(|o| o.len()),
        Some(12)
    );
    assert_eq!(t.held_locks(), 0);

    let first = colliding_profile(COLLIDING[0]);
    let updated = directory
        .upsert(&CustomerProfile {
            email_address: format!("  {}  ", first.email_address),
            full_name: "Updated Customer".into(),
            ..first.clone()
        })
        .unwrap();
    assert_eq!(updated.email_address, first.email_address);
    assert_eq!(
        directory.get(&first.email_address).unwrap().full_name,
        "Updated Customer"
    );

    let missing = directory.get("missing@example.com").unwrap_err();
    assert_eq!(
        missing,
        Error::RecordNotFound(r#"customer profile "missing@example.com" not found"#.into())
    );
}

#[test]
fn a_bucket_is_stored_in_camel_case_under_the_canonical_email() {
    let t = TestStore::fast();
    let directory = CustomerDirectory::new(&t.runtime, FLOW_ID);
    directory.start().unwrap();
    assert!(t.stored_values(FLOW_ID).is_empty(), "no initial buckets");
    directory
        .upsert(&CustomerProfile {
            email_address: " Alice@Example.COM ".into(),
            full_name: "Alice".into(),
            company_name: "Example".into(),
            customer_tier: "silver".into(),
        })
        .unwrap();
    let stored = t.stored_values(FLOW_ID);
    assert_eq!(
        stored[&format!("{PROFILES_MAP}/partition-278")],
        json!({"profilesByCanonicalEmail": {"alice@example.com": {
            "emailAddress": "alice@example.com",
            "fullName": "Alice",
            "companyName": "Example",
            "customerTier": "silver",
        }}})
    );
}

fn upsert_raw(t: &TestStore, input: Value, partition: &str) -> attrflow::Result<Value> {
    t.runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        UPSERT_CUSTOMER_PROFILE,
        input,
        &RpcInvokeOptions::new()
            .lock_attribute_map_instance(PROFILES_MAP, partition)
            .load_attribute_map_instance(PROFILES_MAP, partition),
    )
}

#[test]
fn bad_input_names_the_field_and_stores_nothing() {
    let t = TestStore::fast();
    CustomerDirectory::new(&t.runtime, FLOW_ID).start().unwrap();
    let full = json!({
        "emailAddress": "bob@example.com",
        "fullName": "Bob",
        "companyName": "Example",
        "customerTier": "gold",
    });
    let cases = [
        ("emailAddress", json!(""), "emailAddress is required"),
        ("emailAddress", json!(" \t\r\n"), "emailAddress is required"),
        (
            "emailAddress",
            json!("josé@example.com"),
            "emailAddress must contain only ASCII characters",
        ),
        ("fullName", json!(""), "fullName is required"),
        ("companyName", json!(""), "companyName is required"),
        ("customerTier", json!(""), "customerTier is required"),
    ];
    for (field, value, message) in cases {
        let mut input = full.clone();
        input[field] = value;
        assert_eq!(
            upsert_raw(&t, input, "partition-145").unwrap_err(),
            Error::invalid_input(message)
        );
    }
    let mut missing = full.clone();
    missing.as_object_mut().map(|o| o.remove("customerTier"));
    assert_eq!(
        upsert_raw(&t, missing, "partition-145").unwrap_err(),
        Error::invalid_input("customerTier is required")
    );
    assert!(t.stored_values(FLOW_ID).is_empty());
    assert_eq!(
        CustomerDirectory::new(&t.runtime, FLOW_ID)
            .get("josé@example.com")
            .unwrap_err(),
        Error::invalid_input("emailAddress must contain only ASCII characters")
    );
}

#[test]
fn reading_or_upserting_without_loading_the_partition_fails_as_not_loaded() {
    let t = TestStore::fast();
    CustomerDirectory::new(&t.runtime, FLOW_ID).start().unwrap();
    let profile = json!({
        "emailAddress": "bob@example.com",
        "fullName": "Bob",
        "companyName": "Example",
        "customerTier": "gold",
    });
    let not_loaded = Error::AttributeMapNotLoaded {
        physical_name: format!("{PROFILES_MAP}/partition-145"),
    };
    let wrong_bucket = upsert_raw(&t, profile, "partition-146").unwrap_err();
    assert_eq!(wrong_bucket, not_loaded);
    // Options naming a load win over the RPC's own plan (which loads partition-145).
    let read = t.runtime.invoke_rpc(
        FLOW_TYPE,
        FLOW_ID,
        GET_CUSTOMER_PROFILE_BY_EMAIL,
        json!("bob@example.com"),
        &RpcInvokeOptions::new().load_attribute_map_instance(PROFILES_MAP, "partition-146"),
    );
    assert_eq!(read.unwrap_err(), not_loaded);
    assert!(t.stored_values(FLOW_ID).is_empty());
}

#[test]
fn oversized_fields_are_refused_so_a_partition_always_takes_new_customers() {
    let t = TestStore::fast();
    let directory = CustomerDirectory::new(&t.runtime, FLOW_ID);
    directory.start().unwrap();
    // The reproduction: PUTs with a 60 KiB fullName to one partition would fill its
    // stored value after 17 and refuse every new customer there. Each is refused now.
    let huge = "n".repeat(60 * 1024);
    for index in COLLIDING {
        let profile = CustomerProfile {
            full_name: huge.clone(),
            ..colliding_profile(index)
        };
        let error = directory.upsert(&profile).unwrap_err();
        assert_eq!(
            error,
            Error::invalid_input(format!(
                "fullName is {} bytes; the limit is {MAX_PROFILE_FIELD_BYTES}",
                huge.len()
            ))
        );
    }
    let long_email = format!("{}@example.com", "e".repeat(MAX_EMAIL_ADDRESS_BYTES));
    let error = directory
        .upsert(&CustomerProfile {
            email_address: long_email,
            ..colliding_profile(178)
        })
        .unwrap_err();
    assert!(matches!(error, Error::InvalidInput(m) if m.starts_with("emailAddress is ")));
    assert!(t.stored_values(FLOW_ID).is_empty(), "nothing stored");

    // A bucket of the longest profiles the limits allow still fits
    // MIN_PROFILES_PER_PARTITION of them in one stored value.
    let longest = |n: usize| {
        let local = format!("{n:05}@");
        let email = format!(
            "{local}{}",
            "x".repeat(MAX_EMAIL_ADDRESS_BYTES - local.len())
        );
        let profile = CustomerProfile {
            email_address: email.clone(),
            full_name: "f".repeat(MAX_PROFILE_FIELD_BYTES),
            company_name: "c".repeat(MAX_PROFILE_FIELD_BYTES),
            customer_tier: "t".repeat(MAX_PROFILE_FIELD_BYTES),
        };
        (email, profile)
    };
    let full = ProfilePartition {
        profiles_by_canonical_email: (0..MIN_PROFILES_PER_PARTITION).map(longest).collect(),
    };
    assert!(attrflow::limits::json_len(&full) <= attrflow::limits::MAX_VALUE_BYTES);
}

#[test]
fn a_deleted_profile_is_gone_and_its_room_is_free() {
    let t = TestStore::fast();
    let directory = CustomerDirectory::new(&t.runtime, FLOW_ID);
    directory.start().unwrap();
    for index in [178, 350] {
        directory.upsert(&colliding_profile(index)).unwrap();
    }
    let deleted = directory.delete(" Collision-00178@Example.com ").unwrap();
    assert_eq!(deleted, colliding_profile(178));
    assert!(matches!(
        directory.get("collision-00178@example.com"),
        Err(Error::RecordNotFound(_))
    ));
    assert_eq!(
        directory.get("collision-00350@example.com").unwrap(),
        colliding_profile(350)
    );
    let again = directory.delete("collision-00178@example.com").unwrap_err();
    assert_eq!(
        again,
        Error::RecordNotFound(r#"customer profile "collision-00178@example.com" not found"#.into())
    );
    directory.delete("collision-00350@example.com").unwrap();
    assert!(
        t.stored_values(FLOW_ID).is_empty(),
        "an emptied bucket is removed"
    );
}
