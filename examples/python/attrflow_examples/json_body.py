"""Reading a JSON object from a request body, with 400s that say what was wrong.

Quart's own ``get_json(silent=True)`` turns only ``ValueError`` into ``None``; a deeply
nested body raises ``RecursionError`` and would surface as a 500. Parsing here treats every
undecodable body alike (not UTF-8, not JSON, too deep to parse): it is the caller's mistake,
so it is a 400.
"""

from __future__ import annotations

import json
from typing import Any

from quart import request
from werkzeug.exceptions import BadRequest

BODY_REQUIRED = "JSON request body is required"


async def read_json_object() -> dict[str, Any]:
    """The request body as a JSON object, or ``BadRequest`` (400) if it is anything else.

    The content type is not checked: a body that parses as a JSON object is accepted however
    it is labelled. A body over the app's ``MAX_CONTENT_LENGTH`` raises
    ``RequestEntityTooLarge`` (413) while it is read.
    """
    return parse_json_object(await request.get_data(cache=True, as_text=False))


def parse_json_object(raw: bytes | str) -> dict[str, Any]:
    """``raw`` (a request body) as a JSON object, or ``BadRequest`` (400) if it is not."""
    try:
        # JSON exchanged between systems is UTF-8 (RFC 8259); json.loads on bytes would also
        # take UTF-16 and UTF-32.
        body = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (ValueError, RecursionError) as error:
        raise BadRequest(BODY_REQUIRED) from error
    if not isinstance(body, dict):
        raise BadRequest(BODY_REQUIRED)
    return body


def required_text(body: dict[str, Any], field: str) -> str:
    """The non-empty string ``body[field]``, or ``BadRequest`` ``<field> is required``.

    A string that cannot be stored as UTF-8 (one holding a lone surrogate, which JSON can escape)
    is refused here too, so that it never reaches the store.
    """
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{field} is required")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise BadRequest(f"{field} must be valid Unicode text") from error
    return value
