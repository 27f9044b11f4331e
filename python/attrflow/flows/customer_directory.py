"""``CustomerDirectoryFlow``: the *hash-partitioned AttributeMap* pattern.

Customer profiles keyed by canonical email address (ASCII only, trimmed, A-Z lowercased),
kept in one of :data:`PARTITION_COUNT` bucket instances of
``customer_profiles_by_email_partition`` chosen by the FNV-1a hash of that key. The RPCs
run in the Rust core, which also owns the canonical form and the hash, and plans each
call's lock and load of the bucket (:func:`profile_partition`) from its input::

    flow = CustomerDirectoryFlow()
    await client.start_flow(flow, FLOW_ID, options=StartFlowOptions(ignore_already_started=True))
    saved = await client.invoke_rpc(flow.upsert_customer_profile, FLOW_ID, profile)

Dex-style code may still pass the bucket's lock and load itself (explicit options win);
:func:`upsert_options` and :func:`read_options` only check the address and return no
options of their own. A profile that is not stored raises ``RecordNotFoundError``
(``customer profile "<email>" not found``). The core limits each field (the email to 254
bytes, the others to 256 bytes of UTF-8; longer raises ``InvalidInputError`` naming the
field), so no caller can fill a bucket with a few huge profiles.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from attrflow import _native, codec
from attrflow.attribute import AttributeMap
from attrflow.flow import Flow, core_rpc
from attrflow.options import RPCInvokeOptions
from attrflow.retry import RetryPolicy

if TYPE_CHECKING:
    from attrflow.client import Client

__all__ = [
    "DELETE_CUSTOMER_PROFILE",
    "FLOW_ID",
    "FLOW_TYPE",
    "GET_CUSTOMER_PROFILE_BY_EMAIL",
    "PARTITION_COUNT",
    "PROFILES_MAP",
    "UPSERT_CUSTOMER_PROFILE",
    "CustomerDirectory",
    "CustomerDirectoryFlow",
    "CustomerProfile",
    "CustomerProfilePartition",
    "canonical_email",
    "profile_partition",
    "read_options",
    "upsert_options",
]

FLOW_TYPE: str = _native.CUSTOMER_DIRECTORY_FLOW_TYPE
"""The flow type, ``CustomerDirectoryFlow``."""
FLOW_ID: str = _native.CUSTOMER_DIRECTORY_FLOW_ID
"""The flow ID the pattern starts its one directory under."""
PROFILES_MAP: str = _native.CUSTOMER_DIRECTORY_PROFILES_MAP
"""The name of the bucket AttributeMap."""
UPSERT_CUSTOMER_PROFILE: str = _native.CUSTOMER_DIRECTORY_UPSERT_CUSTOMER_PROFILE
"""The writing RPC's name."""
GET_CUSTOMER_PROFILE_BY_EMAIL: str = _native.CUSTOMER_DIRECTORY_GET_CUSTOMER_PROFILE_BY_EMAIL
"""The reading RPC's name."""
DELETE_CUSTOMER_PROFILE: str = _native.CUSTOMER_DIRECTORY_DELETE_CUSTOMER_PROFILE
"""The deleting RPC's name."""
PARTITION_COUNT: int = _native.CUSTOMER_DIRECTORY_PARTITION_COUNT
"""Number of buckets; part of the stored layout, as is the hash."""


@dataclass
class CustomerProfile:
    """One customer; every field is required (non-empty). The saved profile carries the
    canonical email address."""

    email_address: str
    full_name: str
    company_name: str
    customer_tier: str


@dataclass
class CustomerProfilePartition:
    """One bucket: profiles by canonical email address."""

    profiles_by_canonical_email: dict[str, CustomerProfile] = field(default_factory=dict)


class CustomerDirectoryFlow(Flow[None]):
    """The customer directory: an RPC-only flow with no initial values, started once under
    :data:`FLOW_ID`."""

    flow_type = FLOW_TYPE

    profiles = AttributeMap(PROFILES_MAP, CustomerProfilePartition)
    """The buckets (``customer_profiles_by_email_partition``), by ``partition-NNN``."""

    upsert_customer_profile = core_rpc(UPSERT_CUSTOMER_PROFILE, CustomerProfile, CustomerProfile)
    """Saves a profile under its canonical email; lock and load its partition."""
    get_customer_profile_by_email = core_rpc(GET_CUSTOMER_PROFILE_BY_EMAIL, str, CustomerProfile)
    """Reads a profile by email (any case, surrounding whitespace allowed); load its
    partition."""
    delete_customer_profile = core_rpc(DELETE_CUSTOMER_PROFILE, str, CustomerProfile)
    """Deletes a profile by email and returns it; lock and load its partition."""


def canonical_email(email_address: str) -> str:
    """The canonical form of an email address, by the core's rules; raises
    ``InvalidInputError`` (``emailAddress must contain only ASCII characters``,
    ``emailAddress is required``) otherwise.

    >>> canonical_email(" Alice@Example.COM ")
    'alice@example.com'
    """
    return _native.canonical_email(email_address)


def profile_partition(email_address: str) -> str:
    """The bucket instance holding the profile of ``email_address``.

    >>> profile_partition(" Alice@Example.COM ")
    'partition-278'
    """
    return _native.customer_profile_partition(email_address)


def upsert_options(email_address: str) -> RPCInvokeOptions:
    """Per-call options of an upsert (or delete), after checking the address: none of their
    own, since the core plans the call's lock and load of the email's partition from its
    input (calling without options is the same)."""
    profile_partition(email_address)
    return RPCInvokeOptions()


def read_options(email_address: str) -> RPCInvokeOptions:
    """Per-call options of a read, after checking the address: none of their own (the core
    plans the load of the email's partition)."""
    profile_partition(email_address)
    return RPCInvokeOptions()


class CustomerDirectory:
    """The core's typed customer-directory client for the flow ``flow_id`` of ``client``'s
    store.

    Exactly the core client's operations (upsert, get, delete): the core computes each
    profile's partition, locks and loads it, and retries every call's lock conflicts by
    ``retry`` (the core's default :class:`~attrflow.retry.RetryPolicy` when None).
    """

    def __init__(self, client: Client, flow_id: str, retry: RetryPolicy | None = None) -> None:
        # The core's client calls the built-in flow type, registered on first use like any
        # flow's (an application's own flow type of that name is refused here, by name).
        client.register_flow(CustomerDirectoryFlow())
        self._native = _native.CustomerDirectory(client._runtime, flow_id, retry)

    def start(self) -> str:
        """Starts the directory, or returns the running one's run ID. A stopped one is
        not started again (a new run would hold none of its values): that raises
        ``FlowStoppedError`` saying how it was stopped."""
        return self._native.start()

    def upsert(self, profile: CustomerProfile) -> CustomerProfile:
        """Saves ``profile`` under its canonical email; returns it as stored."""
        profile_json = codec.to_json(profile, CustomerProfile, what="customer profile")
        output = self._native.upsert(profile_json)
        return codec.from_json(output, CustomerProfile, what="saved customer profile")

    def upsert_with_retry(self, profile: CustomerProfile) -> CustomerProfile:
        """Deprecated: :meth:`upsert`, which retries lock conflicts by the client's policy."""
        warnings.warn(
            "CustomerDirectory.upsert_with_retry is deprecated: upsert retries by the "
            "client's policy",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.upsert(profile)

    def get(self, email_address: str) -> CustomerProfile:
        """The profile of ``email_address``; raises ``RecordNotFoundError`` when none."""
        output = self._native.get(email_address)
        return codec.from_json(output, CustomerProfile, what="customer profile")

    def delete(self, email_address: str) -> CustomerProfile:
        """Deletes the profile of ``email_address`` and returns it; raises
        ``RecordNotFoundError`` when none."""
        output = self._native.delete(email_address)
        return codec.from_json(output, CustomerProfile, what="deleted customer profile")
