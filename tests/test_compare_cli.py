"""`incast compare` on hand-written summaries (no simulation): bad summaries and
unwritable charts give one-line errors, the chart never goes into a run, and
the table is grouped by section and sorted by change with full metric names."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner

from incast.cli import cli
from incast.compare import MetricDiff, chart_rows, compare_dirs

LONG_KEY = "a_rather_long_section_name.with_a_nested_block_name.and_a_long_metric_name_p999"


def _run_dir(root: Path, name: str, summary) -> Path:
    directory = root / name
    directory.mkdir()
    text = summary if isinstance(summary, str) else json.dumps(summary)
    (directory / "summary.json").write_text(text, encoding="utf-8")
    return directory


def _summaries() -> tuple[dict, dict]:
    a = {
        "scenario": "s",
        "seed": 1,
        "overall": {"slowdown": {"mean": 10.0, "p99": 100.0}},
        "timeouts": 0,
        "drops": {"packets": 0, "bytes": 0},
        "engine": {"events": 1000},
        "a_rather_long_section_name": {
            "with_a_nested_block_name": {"and_a_long_metric_name_p999": 1.0}
        },
        "warnings": ["3 of 9 flows did not finish", "shared by both"],
    }
    b = json.loads(json.dumps(a))
    b["overall"]["slowdown"]["mean"] = 11.0  # +10 %
    b["overall"]["slowdown"]["p99"] = 300.0  # +200 %
    b["timeouts"] = 30  # from 0
    b["drops"] = {"packets": 12, "bytes": 18000}  # from 0
    b["engine"]["events"] = 100_000  # +9,900 %, but the simulator's own counter
    b["a_rather_long_section_name"]["with_a_nested_block_name"]["and_a_long_metric_name_p999"] = 2.0
    b["warnings"] = ["shared by both", "1 packet of a lossless class was dropped"]
    return a, b


def _invoke(args: list[str]):
    return CliRunner().invoke(cli, ["compare", *args])


def test_a_truncated_summary_is_named(tmp_path):
    good = _run_dir(tmp_path, "a", _summaries()[0])
    text = json.dumps(_summaries()[1])
    cut = _run_dir(tmp_path, "b", text[: len(text) // 2])
    result = _invoke([str(good), str(cut)])
    assert result.exit_code == 2
    assert f"error: {cut / 'summary.json'} is not valid JSON" in result.output
    assert "truncated" in result.output and "Traceback" not in result.output
    assert result.output.count("\n") == 1


def test_a_summary_that_is_not_an_object_is_refused(tmp_path):
    good = _run_dir(tmp_path, "a", _summaries()[0])
    for name, content in (("list", [1, 2]), ("number", 3), ("empty", "")):
        bad = _run_dir(tmp_path, name, content)
        result = _invoke([str(bad), str(good)])
        assert result.exit_code == 2, result.output
        assert str(bad / "summary.json") in result.output, result.output
        assert "Traceback" not in result.output and result.output.count("\n") == 1


def test_the_chart_goes_to_the_current_directory_never_into_a_run(tmp_path, monkeypatch):
    a, b = _summaries()
    dir_a, dir_b = _run_dir(tmp_path, "a", a), _run_dir(tmp_path, "b", b)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = _invoke([str(dir_a), str(dir_b)])
    assert result.exit_code == 0, result.output
    assert [p.name for p in dir_b.iterdir()] == ["summary.json"]
    assert [p.name for p in dir_a.iterdir()] == ["summary.json"]
    assert (work / "compare_a_vs_b.png").read_bytes()[:4] == b"\x89PNG"
    # A directory given to --out gets the same file name; a file name is used as is.
    charts = tmp_path / "charts"
    charts.mkdir()
    assert _invoke([str(dir_a), str(dir_b), "--out", str(charts)]).exit_code == 0
    assert (charts / "compare_a_vs_b.png").is_file()
    assert _invoke([str(dir_a), str(dir_b), "--out", str(charts / "x.png")]).exit_code == 0
    assert (charts / "x.png").is_file()
    # --no-plot draws nothing.
    (work / "compare_a_vs_b.png").unlink()
    assert _invoke([str(dir_a), str(dir_b), "--no-plot"]).exit_code == 0
    assert list(work.iterdir()) == []


def test_runs_with_the_same_name_get_distinct_chart_names(tmp_path, monkeypatch):
    a, b = _summaries()
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    dir_a, dir_b = _run_dir(tmp_path / "x", "seed1", a), _run_dir(tmp_path / "y", "seed1", b)
    monkeypatch.chdir(tmp_path)
    assert _invoke([str(dir_a), str(dir_b)]).exit_code == 0
    assert (tmp_path / "compare_x_seed1_vs_y_seed1.png").is_file()


def test_an_unwritable_chart_path_is_one_line(tmp_path):
    a, b = _summaries()
    dir_a, dir_b = _run_dir(tmp_path, "a", a), _run_dir(tmp_path, "b", b)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    result = _invoke([str(dir_a), str(dir_b), "--out", str(blocker / "chart.png")])
    assert result.exit_code == 1
    assert f"error: cannot write the chart to {blocker / 'chart.png'}" in result.output
    assert "--no-plot" in result.output and "Traceback" not in result.output


def test_table_is_grouped_by_section_and_sorted_by_change(tmp_path, monkeypatch):
    a, b = _summaries()
    dir_a, dir_b = _run_dir(tmp_path, "a", a), _run_dir(tmp_path, "b", b)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    result = _invoke([str(dir_a), str(dir_b), "--no-plot"])
    assert result.exit_code == 0, result.output
    out = result.output
    first = max(out.index("drops.bytes"), out.index("timeouts"))  # changes from 0 first
    order = [
        "overall (2 changed)",
        "overall.slowdown.p99",  # +200 % before +10 %
        "overall.slowdown.mean",
        "engine.events",  # the simulator's own counters last, whatever their change
    ]
    positions = [first] + [out.index(needle) for needle in order]
    assert positions == sorted(positions), out
    assert "from 0" in out and "+200.0 %" in out and "+10.0 %" in out
    # Full names at 80 columns: broken between parts, never cut to a stub.
    assert "…" not in out
    lines = out.splitlines()
    start = next(i for i, s in enumerate(lines) if s.strip().startswith(LONG_KEY[:27]))
    name = ""
    for line in lines[start:]:
        name += line.split()[0]
        if len(name) >= len(LONG_KEY):
            break
    assert name == LONG_KEY, out
    # Warnings as lines added and removed, not as a JSON metric.
    assert "+ 1 packet of a lossless class was dropped" in out
    assert "- 3 of 9 flows did not finish" in out
    assert "shared by both" not in out and '["' not in out


def test_from_zero_changes_are_drawn():
    diffs = [
        MetricDiff("timeouts", 0, 30),
        MetricDiff("overall.slowdown.mean", 10.0, 11.0),
        MetricDiff("drops.packets", 5, 5),
        MetricDiff("congestion_controls", '["dctcp"]', '["cubic"]'),
    ]
    rows = chart_rows(diffs)
    assert [d.key for d in rows] == ["timeouts", "overall.slowdown.mean"]
    assert math.isinf(rows[0].relative)


def test_compare_dirs_separates_warnings(tmp_path):
    a, b = _summaries()
    comparison = compare_dirs(_run_dir(tmp_path, "a", a), _run_dir(tmp_path, "b", b))
    assert comparison.warnings_added == ["1 packet of a lossless class was dropped"]
    assert comparison.warnings_removed == ["3 of 9 flows did not finish"]
    assert not any(d.key == "warnings" for d in comparison.metrics)
