"""The result tables: the core's one list (`Results::table_names()`, which
`results.TABLES`, the digest and the binding read) names every table a run
returns, and every table comes with its typed columns whether it has rows or
not, the same columns in every run (names, order and numpy dtypes): an empty
`flows.parquet` has the schema of a full one."""

from __future__ import annotations

import numpy as np
import pytest

import incast
from conftest import INCAST_SCENARIO, TINY_TOML
from incast import _core
from incast.results import FLOW_KINDS, TABLES
from test_api import CM_TOML
from test_edge import EDGE_TOML


def _raw(scenario: str) -> dict:
    simulation = incast.simulation(scenario)
    while not simulation.advance(1_000_000):
        pass
    return simulation.finish()


@pytest.fixture(scope="module")
def raw_runs() -> list[dict]:
    """Runs that between them fill every table: incasts and PFC, edge pausing
    (owd), congestion management (cm)."""
    return [_raw(scenario) for scenario in (TINY_TOML, INCAST_SCENARIO, EDGE_TOML, CM_TOML)]


def test_tables_are_the_cores(raw_runs):
    # The core's one list (`Results::table_names()`, which the digest and the binding use).
    assert TABLES == tuple(_core.RESULT_TABLES)
    for raw in raw_runs:
        tables = {
            name
            for name, value in raw.items()
            if isinstance(value, dict) and all(isinstance(v, tuple) for v in value.values())
        }
        assert tables == set(TABLES)


def _schema(columns: dict) -> tuple[tuple[str, str], ...]:
    return tuple((column, dtype) for column, (dtype, _) in columns.items())


def _rows(columns: dict) -> int:
    dtype, data = next(iter(columns.values()))
    return len(data) // np.dtype(dtype).itemsize


def test_every_table_has_one_schema_rows_or_not(raw_runs):
    """Each table has its columns in every run, and the same ones: runs where it
    is empty against runs where it has rows."""
    for name in TABLES:
        schemas = {_schema(raw[name]) for raw in raw_runs}
        assert len(schemas) == 1, (name, schemas)
        assert all(raw[name] for raw in raw_runs), f"{name}: a run without its columns"
    # The runs hold these tables both empty and with rows: the test compares
    # what it says it does.
    for name in ("owd", "cm", "pfc", "incasts"):
        rows = [_rows(raw[name]) for raw in raw_runs]
        assert min(rows) == 0 < max(rows), (name, rows)


def test_an_empty_table_has_its_columns():
    results = incast.run(TINY_TOML)
    assert len(results.cm) == 0 and len(results.owd) == 0
    assert list(results.cm.columns)[:3] == ["time_ps", "limited_flows", "mean_rate_gbps"]
    assert results.cm["mean_rate_gbps"].dtype == "float64"
    assert results.owd["owd_ps"].dtype == "int64"


def test_flow_kinds_are_the_cores(raw_runs):
    # The core's one list (`FLOW_KINDS`, from its `generators!` registry).
    assert dict(_core.FLOW_KINDS) == FLOW_KINDS
    # And every kind a run writes is named (incast and listed flows here).
    kinds = set()
    for raw in raw_runs:
        if raw["flows"]:
            dtype, data = raw["flows"]["kind"]
            kinds.update(int(k) for k in np.frombuffer(data, dtype=np.dtype(dtype)))
    assert kinds and kinds <= set(FLOW_KINDS), kinds
