"""The hash-partitioned AttributeMap pattern written exactly as Dex's Python example writes
its flow module and Quart controller (tests/dex_idiom/, only the imports name attrflow)
runs on attrflow, on both backends: its RPCs declare no locks and take their partition's
lock per call, twelve colliding profiles upserted concurrently all survive, bad input gets
a 400, and a missing profile is the handler's own error. Its own hash agrees with the
core's."""

from __future__ import annotations

import asyncio

import pytest
from dex_idiom.patterns.hash_partitioned_attribute_map import (
    customer_directory_flow as pattern,
)
from dex_idiom.serving import serving

from attrflow import AsyncClient, RPCInvokeOptions, RpcLockConflictError, WorkerInvocationError
from attrflow.flows.customer_directory import profile_partition

PREFIX = "/patterns/hash-partitioned-attribute-map"
COLLIDING = (178, 350, 686, 1115, 1216, 1502, 1810, 1942, 2154, 2745, 3030, 4039)


def profile(n: int) -> pattern.CustomerProfile:
    return pattern.CustomerProfile(
        f"collision-{n:05d}@example.com", f"Customer {n:05d}", "Collision Test Company", "gold"
    )


def as_json(saved: pattern.CustomerProfile) -> dict[str, str]:
    return {
        "emailAddress": saved.email_address,
        "fullName": saved.full_name,
        "companyName": saved.company_name,
        "customerTier": saved.customer_tier,
    }


@pytest.mark.parametrize(
    ("email", "partition"),
    [
        (" Alice@Example.COM ", "partition-278"),
        ("bob@example.com", "partition-145"),
        ("support+west@example.org", "partition-632"),
    ],
)
def test_the_patterns_own_hash_agrees_with_the_core(email: str, partition: str) -> None:
    assert pattern.email_partition(email)[1] == partition == profile_partition(email)


async def upsert_retrying(
    client: AsyncClient, flow: pattern.CustomerDirectoryFlow, given: pattern.CustomerProfile
) -> pattern.CustomerProfile:
    _, partition_name, _ = pattern.email_partition(given.email_address)
    options = RPCInvokeOptions(
        lock_attribute_map_instances=(
            flow.customer_profiles_by_email_partition.lock(partition_name),
        ),
        load_attribute_map_instances=(
            flow.customer_profiles_by_email_partition.load(partition_name),
        ),
    )
    while True:
        try:
            return await client.invoke_rpc(
                flow.upsert_customer_profile, pattern.FLOW_ID, given, options=options
            )
        except RpcLockConflictError:
            await asyncio.sleep(0)


def test_twelve_colliding_profiles_upserted_concurrently_all_survive(store_url: str) -> None:
    assert {pattern.email_partition(profile(n).email_address)[1] for n in COLLIDING} == {
        "partition-963"
    }

    async def upsert_all() -> list[pattern.CustomerProfile]:
        flow = pattern.CustomerDirectoryFlow()
        async with AsyncClient(store_url) as client:
            return list(
                await asyncio.gather(
                    *(upsert_retrying(client, flow, profile(n)) for n in COLLIDING)
                )
            )

    with serving(store_url) as server:
        assert server.call("POST", f"{PREFIX}/start").status == 200
        saved = asyncio.run(upsert_all())
        assert [s.email_address for s in saved] == [profile(n).email_address for n in COLLIDING]
        for n in COLLIDING:
            answer = server.call(
                "GET",
                f"{PREFIX}/customer-profile?emailAddress=%20%09{profile(n).email_address}%0D%0A",
            )
            assert answer.status == 200, answer.text()
            assert answer.json() == as_json(profile(n))

        first = profile(COLLIDING[0])
        updated = {**as_json(first), "emailAddress": f"  {first.email_address}  "}
        updated["fullName"] = "Updated Customer"
        answer = server.call("PUT", f"{PREFIX}/customer-profile", updated)
        assert answer.status == 200, answer.text()
        assert answer.json() == {**updated, "emailAddress": first.email_address}
        # The others in the bucket are untouched.
        second = profile(COLLIDING[1])
        answer = server.call(
            "GET", f"{PREFIX}/customer-profile?emailAddress={second.email_address}"
        )
        assert answer.json() == as_json(second)


def test_bad_input_gets_a_400_and_a_missing_profile_is_the_handlers_error(store_url: str) -> None:
    with serving(store_url) as server:
        assert server.call("POST", f"{PREFIX}/start").status == 200
        for email, message in [
            ("", "emailAddress is required"),
            ("%20%09%0D%0A", "emailAddress is required"),
            ("jos%C3%A9@example.com", "emailAddress must contain only ASCII characters"),
        ]:
            answer = server.call("GET", f"{PREFIX}/customer-profile?emailAddress={email}")
            assert answer.status == 400
            assert message in answer.text()
        incomplete = {**as_json(profile(1)), "customerTier": ""}
        answer = server.call("PUT", f"{PREFIX}/customer-profile", incomplete)
        assert answer.status == 400
        assert "customerTier is required" in answer.text()
        # Dex's controller lets the handler's error through: the framework answers 500.
        answer = server.call("GET", f"{PREFIX}/customer-profile?emailAddress=missing@example.com")
        assert answer.status == 500

    async def read_missing() -> None:
        flow = pattern.CustomerDirectoryFlow()
        _, partition_name, _ = pattern.email_partition("missing@example.com")
        assert partition_name == "partition-494"
        async with AsyncClient(store_url) as client:
            with pytest.raises(WorkerInvocationError) as raised:
                await client.invoke_rpc(
                    flow.get_customer_profile_by_email,
                    pattern.FLOW_ID,
                    " Missing@Example.com ",
                    options=RPCInvokeOptions(
                        load_attribute_map_instances=(
                            flow.customer_profiles_by_email_partition.load(partition_name),
                        )
                    ),
                )
        assert raised.value.worker_error_type == "ValueError"
        assert (
            raised.value.worker_error_detail == 'customer profile "missing@example.com" not found'
        )

    asyncio.run(read_missing())
