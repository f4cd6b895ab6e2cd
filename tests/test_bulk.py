"""Flows that end at a time (issue 20 item 5): the `bulk` flow kind, and
stopped flows (`finished == 2`) with null ideal FCT and slowdown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import SCENARIOS
from incast.results import FINISHED_STOPPED, FLOW_KINDS, Results


def _col(dtype: str, values) -> tuple[str, bytes]:
    return dtype, np.asarray(values, dtype=np.dtype(dtype)).tobytes()


def _flows(finished: list[int], kind: list[int]) -> dict:
    n = len(finished)
    return {
        "flows": {
            "flow_id": _col("<u8", range(n)),
            "size_bytes": _col("<u8", [10_000] * n),
            "start_ps": _col("<u8", [0] * n),
            "finish_ps": _col("<u8", [2_000_000] * n),
            "fct_ps": _col("<u8", [2_000_000] * n),
            "ideal_fct_ps": _col("<u8", [1_000_000 if f == 1 else 0 for f in finished]),
            "slowdown": _col("<f8", [2.0 if f == 1 else np.nan for f in finished]),
            "finished": _col("<u1", finished),
            "kind": _col("<u1", kind),
        }
    }


def test_bulk_is_a_flow_kind():
    assert FLOW_KINDS[3] == "bulk"
    res = Results(_flows([1, 2, 2], [0, 3, 2]))
    assert res.flows["kind"].tolist() == ["poisson", "bulk", "listed"]
    assert res.flows.groupby("kind", observed=True).size().to_dict() == {
        "poisson": 1,
        "listed": 1,
        "bulk": 1,
    }


def test_stopped_flows_have_null_ideal_and_slowdown_but_a_finish(tmp_path):
    import pyarrow.parquet as pq

    res = Results(_flows([1, FINISHED_STOPPED], [2, 3]))
    f = res.flows
    assert f["slowdown"].isna().tolist() == [False, True]
    assert f["ideal_fct_ps"].isna().tolist() == [False, True]
    assert f["ideal_fct_us"].isna().tolist() == [False, True]
    assert f["finish_us"].tolist() == [2.0, 2.0]
    res.to_parquet(tmp_path)
    table = pq.read_table(tmp_path / "flows.parquet")
    for col in ("ideal_fct_ps", "ideal_fct_us", "slowdown"):
        assert table[col].to_pylist()[1] is None, col
    assert table["fct_ps"].to_pylist() == [2_000_000, 2_000_000]


def test_runs_without_stopped_flows_keep_plain_columns():
    # (slowdown is always nullable: unfinished flows have none.)
    f = Results(_flows([1, 1], [0, 0])).flows
    assert f["ideal_fct_ps"].dtype == np.dtype("uint64")
    assert f["ideal_fct_us"].dtype == np.dtype("float64")


def test_bundled_bulk_scenario_splits_by_kind():
    pytest.importorskip("incast._core")
    import incast

    res = incast.run(SCENARIOS / "bulk_on_off.toml")
    f = res.flows
    bulk = f[f["kind"] == "bulk"]
    # On 4 ms, off 4 ms from 2 ms to 18 ms: flows over [2, 6) and [10, 14) ms.
    assert bulk["start_us"].tolist() == [2000.0, 10000.0]
    assert bulk["finish_us"].tolist() == [6000.0, 14000.0]
    assert (bulk["finished"] == FINISHED_STOPPED).all()
    assert bulk["slowdown"].isna().all() and bulk["ideal_fct_us"].isna().all()
    assert (bulk["size_bytes"] > 0).all()
    assert set(bulk["cc"].astype(str)) == {"cubic"}
    stopped = res.summary["stopped_flows"]
    assert stopped["count"] == 2
    assert stopped["bytes"] == int(bulk["size_bytes"].sum())
    others = f[f["kind"] != "bulk"]
    assert (others["finished"] == 1).all() and others["slowdown"].notna().all()
    assert isinstance(f["kind"].dtype, pd.CategoricalDtype)


def test_report_counts_stopped_flows():
    from incast.report import totals_rows

    summary = {
        "flows": {"total": 5, "finished": 3, "unfinished": 0, "stopped": 2, "measured": 3},
        "stopped_flows": {"count": 2, "bytes": 4829680, "goodput_gbps": {"mean": 4.8, "max": 6.0}},
    }
    rows = dict(totals_rows(summary))
    assert rows["flows"] == "5 (3 finished, 2 stopped at their stop time)"
    assert rows["stopped flows"] == (
        "2 flows delivered 4,829,680 B, goodput mean 4.80 Gb/s, max 6.00 Gb/s"
    )
