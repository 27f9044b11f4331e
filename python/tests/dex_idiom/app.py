"""What the controllers are given, as in Dex's example app: the client and the registered
flow instances. Only building the client differs from Dex: attrflow's takes a store, not a
Registry and a server address."""

from __future__ import annotations

from dataclasses import dataclass, field

from attrflow import AsyncClient
from dex_idiom.patterns.hash_partitioned_attribute_map.customer_directory_flow import (
    CustomerDirectoryFlow,
)
from dex_idiom.patterns.sequentially_chunked_attribute_map.chunked_subscriber_flow import (
    ChunkedSubscriberFlow,
)


@dataclass
class ExampleApp:
    client: AsyncClient
    chunked_subscriber: ChunkedSubscriberFlow = field(default_factory=ChunkedSubscriberFlow)
    customer_directory: CustomerDirectoryFlow = field(default_factory=CustomerDirectoryFlow)
