"""The archive as a verifiable log (issue 53): its checkpoint and proofs over HTTP.

``GET /checkpoint`` answers ``{"checkpoint": "<signed note>"}``: the archive's newest tree
head as a C2SP ``tlog-checkpoint`` (origin ``attrflow/<flow ID>/subscribers``, tree size,
base64 root hash) signed as a C2SP ``signed-note`` with the service's Ed25519 key. The key
is read from the file ``serve.py --checkpoint-key-file FILE`` names (by default the file
the ``ATTRFLOW_CHECKPOINT_KEY_FILE`` environment variable names), in the note key format
``PRIVATE+KEY+<name>+<hash>+<base64>``; without one, checkpoints are off and the route is a
404 saying so. With a key, the service makes the archive verifiable when it starts.

``GET /tree-head`` answers ``{"treeSize": M, "rootHash": "<base64>"}``;
``GET /proof/inclusion?sequence=N[&treeSize=M]`` the RFC 6962 inclusion proof of subscriber
``N`` in the tree of ``M`` subscribers (the newest when absent), as ``attrflow prove``
prints it: ``{"leafIndex": N-1, "treeSize": M, "hashes": ["<base64>", ...]}``;
``GET /proof/consistency?from=M1&to=M2`` the consistency proof between two tree sizes,
``{"from": M1, "to": M2, "hashes": [...]}``. A missing or malformed number, a sequence or
size beyond the tree or ``from > to`` is a 400 naming what was wrong; a trimmed record is a
410 whose body names the ``oldestSequence``.

Every rule (the tree, the proofs, the note format) is the core's; this module only reads
the request and calls the core's client off the event loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from attrflow.flows.chunked_subscriber import SubscriberArchive
from werkzeug.exceptions import BadRequest, NotFound

from attrflow_examples.app_state import AppState
from attrflow_examples.patterns.sequentially_chunked_attribute_map.retention import (
    archive_client,
    query_integer,
)

CHECKPOINT_KEY_FILE_ENV = "ATTRFLOW_CHECKPOINT_KEY_FILE"
"""The environment variable naming the signer key file when ``--checkpoint-key-file`` is
not given."""

CHECKPOINTS_OFF = (
    "checkpoints are off: start the service with --checkpoint-key-file FILE "
    f"(or {CHECKPOINT_KEY_FILE_ENV}=FILE) naming a note signer key"
)
"""The message of ``GET /checkpoint`` when the service has no signer key."""


def required_integer(args: Any, name: str) -> int:
    """The query parameter ``name`` as a whole number; absent or malformed is ``BadRequest``."""
    if args.get(name) is None:
        raise BadRequest(f"{name} is required")
    return query_integer(args, name, 0)


def optional_integer(args: Any, name: str) -> int | None:
    """The query parameter ``name`` as a whole number, ``None`` when absent."""
    if args.get(name) is None:
        return None
    return query_integer(args, name, 0)


async def make_verifiable(app_state: AppState) -> None:
    """Makes the archive verifiable (idempotent), as the service does when it has a key."""
    await asyncio.to_thread(archive_client(app_state).make_verifiable)


async def checkpoint(app_state: AppState) -> dict[str, object]:
    """The body of ``GET /checkpoint``; a 404 when the service has no signer key."""
    key = app_state.checkpoint_key
    if key is None:
        raise NotFound(CHECKPOINTS_OFF)
    archive = archive_client(app_state)
    return {"checkpoint": await asyncio.to_thread(archive.checkpoint, key)}


async def tree_head(app_state: AppState) -> dict[str, object]:
    """The body of ``GET /tree-head``."""
    head = await asyncio.to_thread(archive_client(app_state).tree_head)
    return head.to_dict()


async def inclusion_proof(app_state: AppState, args: Any) -> dict[str, object]:
    """The body of ``GET /proof/inclusion?sequence=N[&treeSize=M]``."""
    sequence = required_integer(args, "sequence")
    tree_size = optional_integer(args, "treeSize")
    archive: SubscriberArchive = archive_client(app_state)
    proof = await asyncio.to_thread(archive.inclusion_proof, sequence, tree_size)
    return proof.to_dict()


async def consistency_proof(app_state: AppState, args: Any) -> dict[str, object]:
    """The body of ``GET /proof/consistency?from=M1&to=M2``."""
    from_ = required_integer(args, "from")
    to = required_integer(args, "to")
    archive = archive_client(app_state)
    proof = await asyncio.to_thread(archive.consistency_proof, from_, to)
    return proof.to_dict()
