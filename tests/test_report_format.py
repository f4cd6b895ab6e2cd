"""The terminal report's formatting: one number formatter (`incast.fmt`), values
with units, lines that piped output (80 columns) never breaks inside a number
and its unit or a path, the queue-series sentence, and empty tables left out
with a line saying why."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

import incast
from conftest import SCENARIOS
from incast.fmt import format_quantity, format_value, wrap_text
from incast.report import print_paths, print_summary, queue_series_text, totals_rows


class _Results:
    def __init__(self, summary: dict):
        self.summary = summary
        self.stats: dict = {}


def _printed(summary: dict, width: int = 80) -> str:
    out = io.StringIO()
    print_summary(_Results(summary), Console(file=out, width=width))
    return out.getvalue()


def _empty_buckets() -> list[dict]:
    return [
        {"label": label, "count": 0, "slowdown": None, "fct_us": None}
        for label in ("<100KB", "100KB-1MB", ">=1MB")
    ]


def test_numbers_with_units():
    assert format_quantity(15219.048365, "us") == "15,219 us"
    assert format_quantity(2_500_000, "B") == "2.5 MB"
    assert format_quantity(0.123, "%") == "12.3 %"
    assert format_quantity(None, "us") == "-"
    assert format_value("window_us", [0.0, 15219.048365]) == "0 to 15,219 us"
    assert format_value("paused_time_us", 40.0) == "40 us"
    assert format_value("congestion_controls", ["dctcp", "cubic"]) == "dctcp, cubic"


def test_the_utilization_window_is_a_span_not_a_list():
    rows = dict(totals_rows({"utilization": {"max": 0.5, "window_us": [0.0, 15219.048365]}}))
    assert rows["utilization measured over"] == "0 to 15,219 us"
    assert rows["utilization of the busiest port"] == "50.0 %"
    assert "[0.0" not in _printed({"utilization": {"window_us": [0.0, 15219.048365]}})


def test_wrapping_never_splits_a_number_from_its_unit():
    for shift in range(40):
        text = "x" * shift + " the run reached stop = 15,219 us with 2.5 MB queued and 40 % left"
        lines = wrap_text(text, 30).split("\n")
        assert all(len(line) <= 30 for line in lines[1:]), lines
        joined = " ".join(lines)
        for unit in ("15,219 us", "2.5 MB", "40 %"):
            assert unit in joined, (shift, lines)


def test_piped_report_keeps_units_and_paths_whole():
    """At 80 columns (piped output) a warning's '15,219 us' and a long path stay whole."""
    for shift in range(60):
        warning = "w" * shift + " flows did not finish by `stop` = 15,219 us: raise `stop`"
        text = _printed({"scenario": "s", "warnings": [warning]})
        assert "15,219 us" in text, (shift, text)
        assert all(len(line) <= 80 for line in text.splitlines())
    path = Path("/tmp") / ("a_long_directory_name_" * 5) / "with space" / "summary.json"
    out = io.StringIO()
    print_paths(Console(file=out, width=80), [path])
    assert out.getvalue() == f"  {path}\n"


def test_values_in_tables_break_between_words_only():
    """Two-column sections at any width: values break between words, never
    between a number and its unit, and no line is longer than the console."""
    summary = {
        "stopped_flows": {
            "count": 3,
            "bytes": 10_726_620,
            "goodput_gbps": {"mean": 8.58, "max": 9.1},
        },
        "flows": {"total": 120, "finished": 109, "unfinished": 10, "stopped": 1, "measured": 100},
        "edge": {
            "rule": "on_ramp",
            "paused_time_us": 15219.048365,
            "owd_sampled_us": {"mean": 10.5, "p99": 20.25, "max": 31.0},
        },
        "cm": {
            "scheme": "ecm",
            "limited_rate_gbps": {"mean": 7.14, "min": 0.625},
            "limited_at_end": 35,
            "reaction_points": 42,
        },
    }
    for width in range(40, 100):
        text = _printed(summary, width=width)
        assert all(len(line) <= width for line in text.splitlines()), text
        for whole in ("10,726,620 B", "9.10 Gb/s", "15,219 us", "31.00 us", "0.625 Gb/s"):
            assert whole in text, (width, whole, text)


def test_queue_series_says_which_ports():
    few = {
        "ports": "the 16 switch ports with the largest peak queue",
        "candidates": 3,
        "written": 3,
        "points": 301,
        "interval_us": 40.0,
    }
    text = queue_series_text({"queue_series": few})
    assert (
        text == "queue time series: every switch port that queued (3 of 3), 301 points every 40 us"
    )
    many = dict(few, candidates=48, written=16, points=512, interval_us=15219.048365)
    assert queue_series_text({"queue_series": many}) == (
        "queue time series: the 16 of 48 switch ports with the largest peak queue, "
        "512 points every 15,219 us"
    )
    every = dict(few, ports="every switch port", written=8, candidates=8)
    assert "every switch port (8 ports)" in queue_series_text({"queue_series": every})
    assert "3 of 3 ports (the 16" not in _printed({"queue_series": few})


def test_a_run_without_flows_has_no_slowdown_table():
    """An ECM run of open-loop packets: no all-zero table, one line saying why."""
    summary = {
        "flows": {"total": 0, "finished": 0, "unfinished": 0, "measured": 0},
        "buckets": _empty_buckets(),
        "overall": {"label": "all", "count": 0, "slowdown": None},
    }
    text = _printed(summary)
    assert "Slowdown (FCT" not in text and "<100KB" not in text
    assert "no slowdown table: the run has no flows" in text


def test_long_lived_flows_get_no_empty_table():
    """The CUBIC flow is long-lived: no 'cubic flows' table of zeros; the DCTCP
    flows' table would repeat the first one."""
    res = incast.run(SCENARIOS / "dctcp_beside_cubic.toml")
    text = _printed(res.summary, width=120)
    assert "Slowdown (FCT / ideal FCT) by flow size" in text
    assert "Slowdown by flow size, cubic flows" not in text
    assert "no slowdown table for the cubic flows: none of them (1 flow) finished" in text
    assert "Slowdown by flow size, dctcp flows" not in text
    assert "no separate table for the dctcp flows" in text


def test_dctcp_beside_cubic_flows_all_finish():
    """The bundled example no longer warns that its own flows do not finish: the
    bulk flow is long-lived (stopped at its stop), the rest drain before `stop`."""
    res = incast.run(SCENARIOS / "dctcp_beside_cubic.toml")
    assert res.summary["warnings"] == []
    assert res.summary["flows"]["unfinished"] == 0
    cubic = res.flows[res.flows["cc"] == "cubic"]
    assert len(cubic) == 1 and cubic["finished"].tolist() == [2]
