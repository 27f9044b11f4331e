"""The hash-partitioned CustomerDirectoryFlow from Python: the golden vectors of the
pattern, 12 profiles that share one partition upserted concurrently (with retry) and read
back exactly, the canonical email on re-upsert, and the errors for absent profiles and bad
emails."""

from __future__ import annotations

import threading

import pytest
from archive_support import retry_on_conflict

from attrflow import Client, InvalidInputError, RecordNotFoundError
from attrflow.flows.customer_directory import (
    FLOW_ID,
    CustomerDirectoryFlow,
    CustomerProfile,
    canonical_email,
    profile_partition,
    read_options,
    upsert_options,
)

COLLIDING = (178, 350, 686, 1115, 1216, 1502, 1810, 1942, 2154, 2745, 3030, 4039)


def colliding_profile(index: int) -> CustomerProfile:
    return CustomerProfile(
        f"collision-{index:05d}@example.com",
        f"Customer {index:05d}",
        "Collision Test Company",
        "gold",
    )


@pytest.mark.parametrize(
    ("given", "canonical", "partition"),
    [
        (" Alice@Example.COM ", "alice@example.com", "partition-278"),
        ("bob@example.com", "bob@example.com", "partition-145"),
        ("support+west@example.org", "support+west@example.org", "partition-632"),
    ],
)
def test_golden_vectors(given: str, canonical: str, partition: str):
    assert canonical_email(given) == canonical
    assert profile_partition(given) == partition


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "emailAddress is required"),
        (" \t\r\n", "emailAddress is required"),
        ("josé@example.com", "emailAddress must contain only ASCII characters"),
    ],
)
def test_bad_emails_are_rejected(given: str, message: str):
    with pytest.raises(InvalidInputError) as raised:
        canonical_email(given)
    assert str(raised.value) == message


def upsert(
    client: Client, flow: CustomerDirectoryFlow, profile: CustomerProfile
) -> CustomerProfile:
    saved, _ = retry_on_conflict(
        lambda: client.invoke_rpc(
            flow.upsert_customer_profile,
            FLOW_ID,
            profile,
            options=upsert_options(profile.email_address),
        )
    )
    return saved


def read(client: Client, flow: CustomerDirectoryFlow, email: str) -> CustomerProfile:
    return client.invoke_rpc(
        flow.get_customer_profile_by_email, FLOW_ID, email, options=read_options(email)
    )


def test_colliding_profiles_upserted_concurrently_read_back_exactly(client: Client):
    flow = CustomerDirectoryFlow()
    client.start_flow(flow, FLOW_ID)
    assert {profile_partition(colliding_profile(i).email_address) for i in COLLIDING} == {
        "partition-963"
    }
    saved: dict[int, CustomerProfile] = {}
    barrier = threading.Barrier(len(COLLIDING))

    def save(index: int) -> None:
        barrier.wait()
        saved[index] = upsert(client, flow, colliding_profile(index))

    threads = [threading.Thread(target=save, args=(i,)) for i in COLLIDING]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert saved == {i: colliding_profile(i) for i in COLLIDING}
    for index in COLLIDING:
        profile = colliding_profile(index)
        assert read(client, flow, f" \t{profile.email_address}\r\n") == profile

    first = colliding_profile(COLLIDING[0])
    updated = upsert(
        client,
        flow,
        CustomerProfile(
            f"  {first.email_address}  ", "Updated Customer", "Collision Test Company", "gold"
        ),
    )
    assert updated.email_address == first.email_address
    assert read(client, flow, first.email_address).full_name == "Updated Customer"

    with pytest.raises(RecordNotFoundError) as missing:
        read(client, flow, "missing@example.com")
    assert str(missing.value) == 'customer profile "missing@example.com" not found'
    assert isinstance(missing.value, LookupError)


def test_a_profile_is_deleted_and_oversized_fields_are_refused(client: Client) -> None:
    flow = CustomerDirectoryFlow()
    client.start_flow(flow, FLOW_ID)
    saved = upsert(client, flow, colliding_profile(178))
    email = saved.email_address
    deleted = client.invoke_rpc(
        flow.delete_customer_profile, FLOW_ID, email.upper(), options=upsert_options(email)
    )
    assert deleted == saved
    with pytest.raises(RecordNotFoundError):
        read(client, flow, email)
    too_long = CustomerProfile(email, "n" * 257, "c", "t")
    with pytest.raises(InvalidInputError, match="fullName is 257 bytes; the limit is 256"):
        upsert(client, flow, too_long)
