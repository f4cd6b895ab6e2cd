"""Which kind of file the CLI was given: an experiment (a top-level `base`) or
a scenario (a top-level `topology`), so `incast run` and `incast sweep` can
point at each other instead of failing on the other's keys."""

from __future__ import annotations

import json
import re
from pathlib import Path


def parse_text(text: str, fmt: str) -> dict:
    """`text` read as `fmt` ("json", else TOML); raises ValueError when malformed."""
    if fmt == "json":
        return json.loads(text)
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def is_experiment(file: str) -> bool:
    """An experiment file has a top-level `base` (a scenario never does)."""
    if file.lower().endswith(".json"):
        return file_kind(file) == "experiment"
    if not file.lower().endswith(".toml"):
        return False
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    return re.search(r"^\s*(base\s*=|\[base\])", text, re.MULTILINE) is not None


def file_kind(file: str) -> str | None:
    """What `file` is: "experiment" (a top-level `base`), "scenario" (a
    top-level `topology` and no `base`), or None (unreadable, malformed or
    neither)."""
    try:
        text = Path(file).read_text(encoding="utf-8")
        doc = parse_text(text, "json" if file.lower().endswith(".json") else "toml")
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    if "base" in doc:
        return "experiment"
    return "scenario" if "topology" in doc else None
