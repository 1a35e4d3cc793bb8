"""JSON text from the database decoded fast: orjson, and json for what orjson refuses (NaN literals, huge ints)."""
from __future__ import annotations

import json
from typing import Any

import orjson


def loads(text: Any) -> Any:
    """The value of a JSON text (str or bytes); orjson is several times faster than json on stored rows."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
