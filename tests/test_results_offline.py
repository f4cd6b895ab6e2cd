"""The Python side alone (tables, Parquet, plots, report, chunked driving),
on synthetic results shaped like the core's: no simulation needed."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
from rich.console import Console

from incast import _runner
from incast.plots import plot_all
from incast.report import print_summary
from incast.results import TABLES, Results


def _col(dtype: str, values) -> tuple[str, bytes]:
    return dtype, np.asarray(values, dtype=np.dtype(dtype)).tobytes()


def _raw(n_queue_samples: int = 40, with_flows: bool = True) -> dict:
    n = 3 if with_flows else 0
    fct = [2_000_000, 5_000_000, 0][:n]
    flows = {
        "flow_id": _col("<u8", range(n)),
        "src": _col("<u4", [0, 1, 2][:n]),
        "dst": _col("<u4", [3, 3, 3][:n]),
        "size_bytes": _col("<u8", [10_000, 500_000, 2_000_000][:n]),
        "start_ps": _col("<u8", [0, 0, 0][:n]),
        "finish_ps": _col("<u8", [2_000_000, 5_000_000, 0][:n]),
        "fct_ps": _col("<u8", fct),
        "ideal_fct_ps": _col("<u8", [1_000_000, 4_000_000, 9_000_000][:n]),
        "slowdown": _col("<f8", [2.0, 1.25, np.nan][:n]),
        "finished": _col("<u1", [1, 1, 0][:n]),
        "measured": _col("<u1", [1, 1, 1][:n]),
        "incast_id": _col("<i8", [-1, -1, -1][:n]),
    }
    t = np.arange(n_queue_samples)
    queues = {
        "time_ps": _col("<u8", t * 1_000_000),
        "node": _col("<u4", np.full(n_queue_samples, 4)),
        "port": _col("<u4", t % 2),
        "bytes": _col("<u8", (t % 7) * 1500),
    }
    ports = {
        "node": _col("<u4", [4, 4, 9]),
        "port": _col("<u4", [0, 1, 0]),
        "peer": _col("<u4", [0, 1, 4]),
        "utilization": _col("<f8", [0.5, 0.25, 0.0]),
    }
    summary = {
        "scenario": "synthetic",
        "seed": 5,
        "sim_time_us": 12.5,
        "flows": {"total": n, "finished": 2, "unfinished": 1, "measured": n},
        "buckets": [
            {
                "label": "<100KB",
                "lo": 0,
                "hi": 100_000,
                "count": 1,
                "slowdown": {"mean": 2.0, "p50": 2.0, "p95": 2.0, "p99": 2.0, "p999": 2.0},
                "fct_us": {"mean": 2.0, "p50": 2.0, "p95": 2.0, "p99": 2.0, "p999": 2.0},
            },
            {"label": ">=100KB", "lo": 100_000, "hi": None, "count": 1, "slowdown": None},
        ],
        "drops": {"packets": 7, "bytes": 10_500},
        "ecn_marks": 3,
        "incasts": {"count": 2, "finished": 2, "completion_us": {"mean": 40.0, "p99": 50.0}},
        "utilization": {"max": 0.5},
        "brand_new_metric": {"a": 1, "b": [1, 2]},
    }
    return {
        "flows": flows,
        "incasts": {},
        "counters": {"node": _col("<u4", [4]), "port": _col("<u4", [1])},
        "ports": ports,
        "queues": queues,
        "node_names": ["h0", "h1", "h2", "h3", "sw0"],
        "summary": json.dumps(summary),
        "stats": {
            "events": 1000,
            "packet_hops": 10,
            "sim_time_ps": 12_500_000,
            "wall_seconds": 0.1,
        },
    }


def test_tables_from_columns():
    res = Results(_raw())
    flows = res.flows
    assert list(flows.columns[:3]) == ["flow_id", "src", "dst"]
    assert flows["size_bytes"].dtype == np.uint64
    assert flows["fct_us"].tolist()[:2] == [2.0, 5.0]
    # Unfinished: null (not 0, not a number) in every column that needs a finish.
    for col in ("fct_us", "finish_us", "fct_ps", "finish_ps", "slowdown"):
        assert pd.isna(flows[col].iloc[2]), col
        assert not pd.isna(flows[col].iloc[0]), col
    assert flows["fct_ps"].iloc[0] == 2_000_000
    assert flows["start_us"].iloc[2] == 0.0
    assert res.ports["node_name"].tolist() == ["sw0", "sw0", "9"]  # unknown id kept
    assert res.ports["peer_name"].tolist() == ["h0", "h1", "sw0"]
    assert res.queues["node_name"].iloc[0] == "sw0"
    assert len(res.incasts) == 0
    assert res.scenario_name == "synthetic" and res.seed == 5


def test_parquet_deterministic_offline(tmp_path):
    Results(_raw()).to_parquet(tmp_path / "a")
    Results(_raw()).to_parquet(tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted([f"{t}.parquet" for t in TABLES] + ["summary.json"])
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "a" / "flows.parquet")
    assert table.num_rows == 3
    assert "fct_us" in table.column_names


def test_plots_written(tmp_path):
    notes: list = []
    paths = plot_all(Results(_raw()), tmp_path, notes)
    assert [p.name for p in paths] == [
        "slowdown_by_size.png",
        "slowdown_cdf.png",
        "queue_length.png",
    ]
    assert notes == []
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_skip_empty_tables(tmp_path):
    raw = _raw(n_queue_samples=0, with_flows=False)
    notes: list = []
    paths = plot_all(Results(raw), tmp_path, notes)
    assert [p.name for p in paths] == ["slowdown_by_size.png"]
    assert len(notes) == 2 and any("queue" in n for n in notes)


def test_report_is_defensive():
    out = io.StringIO()
    print_summary(Results(_raw()), Console(file=out, width=120))
    text = out.getvalue()
    for needle in (
        "synthetic",
        "seed 5",
        "<100KB",
        ">=100KB",
        "packets dropped, all switch ports",
        "Incast",
        "brand_new_metric.a",
    ):
        assert needle in text
    # An almost empty summary still renders.
    raw = _raw()
    raw["summary"] = json.dumps({"scenario": "bare"})
    raw["stats"] = {}
    out = io.StringIO()
    print_summary(Results(raw), Console(file=out, width=120))
    assert "bare" in out.getvalue()


class _FakeSim:
    def __init__(self, total_events: int):
        self.total = total_events
        self.done = 0
        self.calls: list = []

    def advance(self, n: int) -> bool:
        self.calls.append(n)
        self.done = min(self.total, self.done + n)
        return self.done >= self.total

    def progress(self) -> dict:
        return {"now_ps": self.done, "horizon_ps": self.total, "fraction": self.done / self.total}


def test_drive_adapts_chunk_and_reports_progress():
    sim = _FakeSim(50_000_000)
    seen: list = []
    _runner.drive(sim, seen.append, chunk=1_000, target_seconds=10.0)
    assert sim.done == sim.total
    assert len(seen) == len(sim.calls)
    assert seen[-1]["fraction"] == 1.0
    # Calls this fast are far under target: the chunk grows.
    assert sim.calls[-1] > sim.calls[0]


def test_cli_run_ctrl_c_stops_cleanly(tmp_path, monkeypatch, tiny_file):
    from click.testing import CliRunner

    import incast.cli

    class _InterruptedSim:
        name = "tiny"

        def __init__(self, *args):
            pass

        def advance(self, n):
            raise KeyboardInterrupt

        def progress(self):
            return {"now_ps": 5_000_000, "fraction": 0.25}

    from incast import _core

    class _FakeCore:  # the real validation, a simulation that is interrupted
        Simulation = _InterruptedSim
        validate = staticmethod(_core.validate)
        ScenarioError = _core.ScenarioError

    monkeypatch.setattr(incast.cli, "_core_module", lambda: _FakeCore)
    out = tmp_path / "out"
    result = CliRunner().invoke(incast.cli.cli, ["run", str(tiny_file), "--out", str(out)])
    assert result.exit_code == 130
    assert "interrupted at simulated 5.000 us" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_unfinished_are_null_in_parquet(tmp_path):
    import pyarrow.parquet as pq

    Results(_raw()).to_parquet(tmp_path)
    table = pq.read_table(tmp_path / "flows.parquet")
    for col in ("finish_ps", "fct_ps", "slowdown", "fct_us", "finish_us"):
        assert table[col].null_count == 1, col
        assert table[col].to_pylist()[2] is None
    assert table["fct_ps"].to_pylist()[:2] == [2_000_000, 5_000_000]


def test_codes_are_names():
    raw = _raw()
    raw["flows"]["kind"] = _col("<u1", [0, 1, 2])
    raw["pfc"] = {
        "time_ps": _col("<u8", [1, 2, 3, 4, 5]),
        "node": _col("<u4", [4] * 5),
        "port": _col("<u4", [0] * 5),
        "class": _col("<u1", [3] * 5),
        "event": _col("<u1", [1, 0, 2, 3, 9]),
    }
    res = Results(raw)
    assert res.flows["kind"].tolist() == ["poisson", "incast", "listed"]
    assert isinstance(res.flows["kind"].dtype, pd.CategoricalDtype)
    assert res.pfc["event"].tolist() == [
        "pause",
        "resume",
        "watchdog_trip",
        "watchdog_restore",
        "code_9",
    ]


def test_empty_tables_keep_typed_columns(tmp_path):
    """An empty table as the core gives it (typed columns, no rows) stays typed,
    with its derived columns, in the DataFrame and in Parquet."""
    import pyarrow.parquet as pq

    raw = _raw(n_queue_samples=0, with_flows=False)
    raw["owd"] = {
        "time_ps": _col("<u8", []),
        "flow_id": _col("<u8", []),
        "owd_ps": _col("<i8", []),
    }
    res = Results(raw)
    for name in ("owd", "flows", "queues"):
        df = getattr(res, name)
        assert len(df) == 0
        assert list(df.columns)[: len(raw[name])] == list(raw[name]), name
    assert res.owd["owd_ps"].dtype == np.int64
    assert "owd_us" in res.owd.columns
    res.to_parquet(tmp_path)
    schema = pq.read_schema(tmp_path / "owd.parquet")
    assert schema.names[:3] == ["time_ps", "flow_id", "owd_ps"]


def test_tables_the_core_adds_later_are_kept(tmp_path):
    raw = _raw()
    raw["queue_stats"] = {"node": _col("<u4", [4]), "mean_bytes": _col("<f8", [12.5])}
    res = Results(raw)
    assert res.table_names[-1] == "queue_stats"
    assert res.queue_stats["mean_bytes"].tolist() == [12.5]
    res.to_parquet(tmp_path)
    assert (tmp_path / "queue_stats.parquet").is_file()
