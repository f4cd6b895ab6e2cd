"""Shared scenarios and helpers for the Python tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
INCAST_SCENARIO = SCENARIOS / "incast_single_switch.toml"


def load_script(path: Path, name: str) -> ModuleType:
    """A script of the repository (scenarios/*.py, not a package) as module `name`,
    registered in sys.modules before it runs (its dataclasses need that)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: Why test_html.py's rendering tests skip where no Chromium is found.
CHROMIUM_MISSING = "chromium not found (apt-get install chromium)"

TINY_TOML = """\
name = "tiny"
seed = 1
[topology]
kind = "single_switch"
hosts = 4
link_rate = "10Gbps"
link_delay = "1us"
[[workload.flows]]
src = 0
dst = 3
size = "100KB"
start = "0us"
[[workload.flows]]
src = 1
dst = 3
size = "100KB"
start = "0us"
"""

# The same scenario as plain data.
TINY_DICT = {
    "name": "tiny",
    "seed": 1,
    "topology": {
        "kind": "single_switch",
        "hosts": 4,
        "link_rate": "10Gbps",
        "link_delay": "1us",
    },
    "workload": {
        "flows": [
            {"src": 0, "dst": 3, "size": "100KB", "start": "0us"},
            {"src": 1, "dst": 3, "size": "100KB", "start": "0us"},
        ]
    },
}

# About 20 flows in 1 ms of Poisson arrivals (websearch flows average ~1.6 MB).
POISSON_TOML = """\
name = "poisson"
seed = 1
duration = "1ms"
[topology]
kind = "single_switch"
hosts = 8
link_rate = "100Gbps"
link_delay = "1us"
[[workload.poisson]]
load = 0.3
cdf = "websearch"
"""

UNKNOWN_KEY_TOML = TINY_TOML.replace("hosts = 4\n", "hosts = 4\nbogus_knob = 3\n")


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    return path


@pytest.fixture
def unknown_key_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(UNKNOWN_KEY_TOML)
    return path


def file_bytes(directory: Path) -> dict[str, bytes]:
    """Every file in a directory, by name."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def pytest_terminal_summary(terminalreporter) -> None:
    """Say in one line that the HTML rendering tests were skipped for want of
    Chromium (a skip is otherwise only a count in `pytest -q`'s summary)."""
    skipped = terminalreporter.stats.get("skipped", [])
    without = [r for r in skipped if CHROMIUM_MISSING in str(getattr(r, "longrepr", ""))]
    if without:
        terminalreporter.write_line(
            f"HTML rendering tests skipped ({len(without)}): {CHROMIUM_MISSING}", yellow=True
        )
