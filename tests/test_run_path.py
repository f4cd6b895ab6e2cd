"""One path from a scenario to `Results`: `incast.run`, `incast run` (the CLI)
and a sweep's worker (`sweep.simulate`) all run through
`_runner.run_to_results`, and no other module finishes a simulation into
`Results` itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import incast
from conftest import TINY_DICT
from incast import _runner, sweep
from incast.cli import cli

PACKAGE = Path(incast.__file__).parent


@pytest.fixture
def calls(monkeypatch):
    """The simulations `run_to_results` ran, by name."""
    seen: list[str] = []
    original = _runner.run_to_results

    def counting(simulation, *args, **kwargs):
        seen.append(simulation.name)
        return original(simulation, *args, **kwargs)

    monkeypatch.setattr(_runner, "run_to_results", counting)
    return seen


def test_the_api_runs_through_it(calls):
    results = incast.run(TINY_DICT, seed=3)
    assert calls == ["tiny"]
    assert results.seed == 3 and len(results.flows) == 2
    assert results.stats["wall_seconds"] > 0


def test_the_cli_runs_through_it(calls, tiny_file, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert calls == ["tiny"]
    assert json.loads((out / "summary.json").read_text())["scenario"] == "tiny"


def test_a_sweep_worker_runs_through_it(calls):
    done = sweep.simulate(json.dumps(TINY_DICT), ".")
    assert calls == ["tiny"]
    assert json.loads(done["files"]["summary.json"])["scenario"] == "tiny"
    assert done["wall_seconds"] > 0


def _constructs_results(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Results"
        for node in ast.walk(tree)
    )


def test_no_other_module_builds_results():
    builders = sorted(
        path.name
        for path in PACKAGE.glob("*.py")
        if _constructs_results(ast.parse(path.read_text(encoding="utf-8")))
    )
    assert builders == ["_runner.py"]
