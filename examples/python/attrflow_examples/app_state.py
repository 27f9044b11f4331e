"""What the routes of the app share: the store's client, the flow, and the retry policy."""

from __future__ import annotations

from attrflow import AsyncClient
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow
from attrflow.flows.customer_directory import CustomerDirectoryFlow
from attrflow.retry import RetryPolicy


class AppState:
    """The app's shared state.

    The client is opened when the app starts serving and closed when it stops, so that the
    store is held only by a running service (a test app that never serves opens nothing).

    Attributes:
        store: Where the flows live: a SQLite file path or a ``sqlite:`` URL.
        flow: The subscriber archive's flow definition, the one instance every call uses.
        directory_flow: The customer directory's flow definition.
        lock_retry: How long a call that meets a held lock is retried before the caller
            gets a 409.
        checkpoint_key: The note signer key text the archive's checkpoints are signed
            with, or ``None``: checkpoints are off.
    """

    def __init__(
        self, store: str, *, lock_retry: RetryPolicy, checkpoint_key: str | None = None
    ) -> None:
        self.store = store
        self.checkpoint_key = checkpoint_key
        self.flow = ChunkedSubscriberFlow()
        self.directory_flow = CustomerDirectoryFlow()
        self.lock_retry = lock_retry
        self._client: AsyncClient | None = None

    @property
    def client(self) -> AsyncClient:
        """The open client; raises ``RuntimeError`` while the app is not serving."""
        if self._client is None:
            raise RuntimeError("the store is open only while the app is serving")
        return self._client

    def open(self) -> None:
        """Opens the store (idempotent)."""
        if self._client is None:
            self._client = AsyncClient(store=self.store)

    def close(self) -> None:
        """Closes the store if it is open (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()
