"""Turning the many accepted forms of a scenario into (text, format, base_dir).

Python does no validation of its own: whatever the user hands in is passed to
the Rust core as TOML or JSON text, and the core's `ScenarioError` is the one
source of truth about what is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

ScenarioLike = Union[str, "os.PathLike[str]", Mapping]

_SUFFIX_FORMATS = {".toml": "toml", ".json": "json"}


@dataclass(frozen=True)
class ScenarioSource:
    """A scenario ready for the core: its text, "toml" or "json", and the
    directory that relative paths inside it resolve against."""

    text: str
    fmt: str
    base_dir: str
    origin: str  # a file path, "<dict>" or "<string>", for messages


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays, Paths and other plain-data look-alikes.
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 1) == 0:
        return obj.item()
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"scenario value of type {type(obj).__name__} is not plain data: {obj!r}")


def _dict_to_json(scenario: Mapping) -> str:
    """A scenario dict as JSON text. A value JSON cannot carry (NaN,
    infinity) or no scenario holds (an integer beyond 64 bits) raises
    `ScenarioError` naming its key path, not a JSON syntax error."""
    from .keypath import value_problem

    problem = value_problem(scenario)
    if problem is None:
        try:
            return json.dumps(scenario, default=_json_default, allow_nan=False)
        except ValueError:  # a NaN in a numpy scalar or array: find where
            problem = value_problem(json.loads(json.dumps(scenario, default=_json_default)))
    from ._core import ScenarioError

    raise ScenarioError(f"scenario error at {problem}")


def _looks_like_path(text: str) -> bool:
    if "\n" in text or "=" in text or text.lstrip().startswith("{"):
        return False
    return text.strip().lower().endswith(tuple(_SUFFIX_FORMATS)) or Path(text).is_file()


def from_path(path: str | os.PathLike[str]) -> ScenarioSource:
    p = Path(path).expanduser()
    fmt = _SUFFIX_FORMATS.get(p.suffix.lower(), "toml")
    text = p.read_text(encoding="utf-8")
    base = p.resolve().parent
    return ScenarioSource(text=text, fmt=fmt, base_dir=str(base), origin=str(p))


def resolve(
    scenario: ScenarioLike, base_dir: str | os.PathLike[str] | None = None
) -> ScenarioSource:
    """Accept a path (str or PathLike to a .toml/.json file), TOML or JSON text, or
    a dict of plain data. `base_dir` overrides where relative paths resolve
    (default: the file's directory, else the current directory)."""
    if isinstance(scenario, Mapping):
        src = ScenarioSource(_dict_to_json(scenario), "json", os.getcwd(), "<dict>")
    elif isinstance(scenario, os.PathLike):
        src = from_path(scenario)
    elif isinstance(scenario, str):
        if _looks_like_path(scenario):
            src = from_path(scenario)
        else:
            fmt = "json" if scenario.lstrip().startswith("{") else "toml"
            src = ScenarioSource(scenario, fmt, os.getcwd(), "<string>")
    elif isinstance(scenario, bytes):
        return resolve(scenario.decode("utf-8"), base_dir)
    else:
        raise TypeError(
            "scenario must be a path to a .toml/.json file, TOML/JSON text, or a dict; "
            f"got {type(scenario).__name__}"
        )
    if base_dir is not None:
        src = ScenarioSource(src.text, src.fmt, str(Path(base_dir).resolve()), src.origin)
    return src
