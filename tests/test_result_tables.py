"""The result tables: `results.TABLES` names every table the core returns, and
`TABLE_SCHEMAS` gives each one's columns exactly as the core writes them
(names, order and numpy dtypes), so a table or column added in Rust fails
here until Python knows it (the `cm` table had no schema, and the `counters`
schema lacked the four queue-length statistics)."""

from __future__ import annotations

import numpy as np
import pytest

import incast
from conftest import INCAST_SCENARIO, TINY_TOML
from incast import _core
from incast.results import FLOW_KINDS, TABLE_SCHEMAS, TABLES
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
    assert set(TABLE_SCHEMAS) == set(TABLES)
    # The core's one list (`Results::table_names()`, which the digest and the binding use).
    assert set(_core.RESULT_TABLES) == set(TABLES)
    for raw in raw_runs:
        tables = {
            name
            for name, value in raw.items()
            if isinstance(value, dict) and all(isinstance(v, tuple) for v in value.values())
        }
        assert tables == set(TABLES)


def test_every_schema_is_the_cores(raw_runs):
    seen = set()
    for raw in raw_runs:
        for name in TABLES:
            columns = raw[name]
            if not columns:  # an empty table the core leaves without columns
                continue
            seen.add(name)
            assert (
                tuple((column, dtype) for column, (dtype, _) in columns.items())
                == (TABLE_SCHEMAS[name])
            ), name
    assert seen == set(TABLES)


def test_an_empty_table_has_its_columns():
    results = incast.run(TINY_TOML)
    assert len(results.cm) == 0
    assert list(results.cm.columns)[: len(TABLE_SCHEMAS["cm"])] == [
        column for column, _ in TABLE_SCHEMAS["cm"]
    ]
    assert results.cm["mean_rate_gbps"].dtype == "float64"


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
