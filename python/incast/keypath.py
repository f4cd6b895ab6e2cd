"""Overrides by key path: `switch.buffer = "2MB"`, `workload.poisson.0.load = 0.7`.

A key path names one value inside a scenario: table keys joined by dots, with a
number selecting an element of an array (`workload.poisson.0`). An *override
set* is a table of key paths and values, as written in an experiment file
(TOML dotted keys) or given by `--set key.path=value`:

    >>> s = {"switch": {"buffer": "1MB"}}
    >>> apply_overrides(s, {"switch": {"buffer": "2MB", "pfc": {"classes": [3]}}})
    >>> s
    {'switch': {'buffer': '2MB', 'pfc': {'classes': [3]}}}

Tables merge key by key; any other value (a number, a string, an array)
replaces what was there. `unset` removes a key first (to replace a whole
table, unset it and set the new keys).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any


class KeyPathError(ValueError):
    """A key path that cannot be applied (names what and where)."""


def flatten(table: Mapping, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(key path, value) for every leaf of an override table; an empty table is
    a leaf (it creates that table when missing)."""
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            yield from flatten(value, path)
        else:
            yield path, value


def split(path: str) -> list[str]:
    parts = path.split(".")
    if not path or any(p == "" for p in parts):
        raise KeyPathError(
            f"malformed key path {path!r} (write keys joined by dots: switch.buffer)"
        )
    return parts


def _step(container: Any, key: str, path: str, create: bool) -> Any:
    if isinstance(container, list):
        if not key.isdigit():
            raise KeyPathError(f"{path}: {key!r} indexes an array; use a number (0, 1, ...)")
        i = int(key)
        if i >= len(container):
            raise KeyPathError(
                f"{path}: index {i} is past the end (the array has {len(container)})"
            )
        return container[i]
    if not isinstance(container, dict):
        raise KeyPathError(f"{path}: {key!r} is inside a {type(container).__name__}, not a table")
    if key not in container:
        if not create:
            raise KeyPathError(f"{path}: no key {key!r} here")
        container[key] = {}
    return container[key]


def get(scenario: Any, path: str) -> Any:
    node = scenario
    for key in split(path):
        node = _step(node, key, path, create=False)
    return node


def set_value(scenario: dict, path: str, value: Any) -> None:
    """Set `path` to `value`, creating tables on the way. A dict value is merged
    into an existing table; an empty dict only makes sure the table exists. A
    `*` segment sets the rest of the path in every element of an array
    (`workload.poisson.*.cdf`)."""
    parts = split(path)
    node = scenario
    for i, key in enumerate(parts[:-1]):
        if key == "*":
            if not isinstance(node, list) or not node:
                raise KeyPathError(f"{path}: '*' needs a non-empty array here")
            for element in node:
                set_value(element, ".".join(parts[i + 1 :]), value)
            return
        node = _step(node, key, path, create=True)
    last = parts[-1]
    if isinstance(node, list):
        target = _step(node, last, path, create=False)
        node[int(last)] = _merged(target, value)
    elif isinstance(node, dict):
        node[last] = _merged(node.get(last), value)
    else:
        raise KeyPathError(f"{path}: {last!r} is inside a {type(node).__name__}, not a table")


def _merged(old: Any, value: Any) -> Any:
    value = copy.deepcopy(value)
    if isinstance(value, dict) and isinstance(old, dict):
        for k, v in flatten(value):
            set_value(old, k, v)
        return old
    return value


def unset(scenario: dict, path: str) -> None:
    parts = split(path)
    node = scenario
    for key in parts[:-1]:
        node = _step(node, key, path, create=False)
    last = parts[-1]
    if isinstance(node, dict) and last in node:
        del node[last]
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        del node[int(last)]
    else:
        raise KeyPathError(f"unset {path}: there is no such key")


def apply_overrides(scenario: dict, overrides: Mapping, unsets: list | tuple = ()) -> None:
    """Remove each path of `unsets`, then set every leaf of `overrides`."""
    for path in unsets:
        unset(scenario, path)
    for path, value in flatten(overrides):
        set_value(scenario, path, value)


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key.path=value` (the value as TOML: 3, 0.5, true, [3], {kind = "off"};
    anything that is not TOML is taken as a string: 2MB, dcqcn)."""
    if "=" not in text:
        raise KeyPathError(f"--set {text!r}: write key.path=value (e.g. switch.buffer=2MB)")
    path, raw = text.split("=", 1)
    path = path.strip()
    split(path)
    return path, parse_value(raw.strip())


def parse_value(raw: str) -> Any:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
