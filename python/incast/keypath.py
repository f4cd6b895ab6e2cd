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
import math
import re
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


#: The integers a scenario value may hold: 64-bit, signed or not (a seed is
#: unsigned; TOML itself stops at 2^63 - 1).
SMALLEST_INT = -(2**63)
LARGEST_INT = 2**64 - 1


def value_problem(value: Any, path: str = "") -> str | None:
    """What makes `value` unfit for a scenario, naming the key path inside it
    (`None` when it is fine): a NaN or infinite float (JSON has none) or an
    integer beyond 64 bits."""
    if isinstance(value, float) and not math.isfinite(value):
        return (
            f"{path or 'the value'}: {value!r} is not a finite number (a scenario holds no NaN "
            "or infinity); give a finite number"
        )
    if isinstance(value, int) and not isinstance(value, bool):
        if not SMALLEST_INT <= value <= LARGEST_INT:
            digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4000"
            return (
                f"{path or 'the value'}: an integer of {digits} digits is out of range (at most "
                f"{LARGEST_INT}, at least {SMALLEST_INT}); give a smaller number"
            )
    if isinstance(value, Mapping):
        for key, item in value.items():
            problem = value_problem(item, f"{path}.{key}" if path else str(key))
            if problem:
                return problem
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = value_problem(item, f"{path}.{i}" if path else str(i))
            if problem:
                return problem
    return None


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key.path=value` (the value as TOML: 3, 0.5, true, [3], {kind = "off"};
    anything that is not TOML is taken as a string: 2MB, dcqcn). A value no
    scenario can hold (NaN, infinity, an integer beyond 64 bits) is refused
    naming the key."""
    if "=" not in text:
        raise KeyPathError(
            f"--set {shorten(text)!r}: write key.path=value (e.g. switch.buffer=2MB)"
        )
    path, raw = text.split("=", 1)
    path = path.strip()
    split(path)
    try:
        value = parse_value(raw.strip())
    except ValueError as e:  # e.g. an integer too long for Python to read
        raise KeyPathError(f"--set {shorten(path)}: the value cannot be read ({e})") from None
    problem = value_problem(value, path)
    if problem and "not a finite number" in problem:  # nan, inf: the text may be meant
        quoted = f"{shorten(path)}='\"{shorten(raw.strip(), 20)}\"'"
        raise KeyPathError(f"--set {shorten(problem, 300)} (for the text itself: --set {quoted})")
    if problem:
        raise KeyPathError(f"--set {shorten(problem, 300)}")
    return path, value


def parse_value(raw: str) -> Any:
    """A value as TOML, or the text itself when it is not TOML. Raises
    ValueError for a number too long to read (over 4300 digits)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    except ValueError as e:  # tomllib does not catch int()'s digit limit
        digits = sum(c.isdigit() for c in raw)
        raise ValueError(f"a number of {digits} digits is far beyond 64 bits") from e


def shorten(text: str, limit: int = 60) -> str:
    """`text` cut to `limit` characters (with an ellipsis) for a message."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Control characters (C0, DEL, C1): an escape sequence in a name or a value
#: could clear the screen or rewrite what the terminal shows.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def printable(text: str, newlines: bool = False) -> str:
    """`text` with every control character written as its escape (`\\x1b`),
    line breaks too unless `newlines`: safe to print to a terminal."""
    pattern = _CONTROL_BUT_NEWLINE if newlines else _CONTROL
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
