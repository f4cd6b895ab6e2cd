"""The one text of a value that hashes and names compare: `canonical_json`
(keys sorted, no spaces) and `name_hash` (what keeps shortened names apart).
Run directories, partition values and the experiment's checks all use these."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """`value` as JSON with sorted keys and no spaces: equal values, equal texts."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def name_hash(text: str) -> str:
    """Ten hex digits of the sha256 of `text`: what keeps shortened names apart."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
