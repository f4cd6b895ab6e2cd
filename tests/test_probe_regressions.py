"""What a second hostile probe of issue 40's classes found: long and
control-character labels outside [[points]].label, rich markup in names, a
`runs` file, a sweep into a run's directory, `incast compare` on odd
summaries and on sweeps, JSON experiments and seeds beyond 64 bits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import TINY_TOML
from incast.cli import cli
from incast.compare import MetricDiff, compare_dirs, table_of
from incast.experiment import (
    MAX_SEED,
    SCENARIO_NAME_LIMIT,
    ExperimentError,
    load_experiment,
)
from incast.fmt import format_number

ESC = "\x1b"


def _experiment(tmp_path: Path, text: str, name: str = "e.toml") -> Path:
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def invoke(*args: str):
    """Run the CLI; a traceback (an exception other than exit) fails the test."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback for {args}: {result.exception!r}\n{result.output}")
    return result


# --- Long labels in variant names and parameter values -------------------------------------


def test_long_variant_names_and_values_bound_the_run_name(tmp_path):
    long = "v" * 300
    text = (
        f'base = "tiny.toml"\n[variants.{long}a]\n[variants.{long}b]\n'
        f'[parameters]\ndescription = ["{"d" * 200}"]\n'
    )
    exp = load_experiment(_experiment(tmp_path, text))
    names = [r.scenario["name"] for r in exp.runs]
    assert all(len(n) <= SCENARIO_NAME_LIMIT for n in names), names
    assert len(set(names)) == 2  # the hash keeps the two apart
    # A short name is as before.
    short = load_experiment(_experiment(tmp_path, 'name = "x"\nbase = "tiny.toml"\n'))
    assert short.runs[0].scenario["name"] == "x-point-base"


# --- Control characters in labels: refused, naming the key -------------------------------


@pytest.mark.parametrize(
    "text, key",
    [
        ('base = "tiny.toml"\n[variants."a\\u001b[2Jb"]\n', "variants.a\\x1b[2Jb"),
        ('base = "tiny.toml"\n[[points]]\nlabel = "p\\u0007"\n', "points[0].label"),
        (
            'base = "tiny.toml"\n[parameters]\ndescription = ["a\\u001b[31m"]\n',
            "points[0].label (with its parameter values)",
        ),
        ('name = "n\\u001b[2J"\nbase = "tiny.toml"\n', "name"),
    ],
)
def test_control_characters_in_labels_are_refused(tmp_path, text, key):
    with pytest.raises(ExperimentError) as info:
        load_experiment(_experiment(tmp_path, text))
    msg = str(info.value)
    assert f"{key}: `" in msg and "holds a control character" in msg, msg
    assert ESC not in msg and "\x07" not in msg
    assert "scenario error at `name`" not in msg  # not blamed on a name never written


def test_a_long_experiment_name_is_refused_without_echoing_it(tmp_path):
    path = _experiment(tmp_path, f'name = "{"n" * 100_000}"\nbase = "tiny.toml"\n')
    result = invoke("validate", path)
    assert result.exit_code == 2
    assert "name: is 100,000 characters long, more than the 128" in result.output
    assert len(result.output) < 400, result.output


# --- Names are text, never rich markup --------------------------------------------------


def test_a_name_that_looks_like_markup_is_printed_as_written(tmp_path):
    path = _experiment(tmp_path, 'name = "[/bold]x"\nbase = "tiny.toml"\n')
    out = tmp_path / "o[/i]"
    result = invoke("sweep", path, "--out", out, "--no-plots")
    assert result.exit_code == 0, result.output
    assert "[/bold]x: 1 runs done" in result.output
    assert f"wrote {out}/" in result.output


# --- The sweep's runs/ and a run's directory ---------------------------------------------


def test_a_runs_entry_that_is_a_file_is_refused(tmp_path):
    path = _experiment(tmp_path, 'base = "tiny.toml"\n')
    out = tmp_path / "o"
    assert invoke("sweep", path, "--out", out, "-q", "--no-plots").exit_code == 0
    import shutil

    shutil.rmtree(out / "runs")
    (out / "runs").write_text("x")
    for force in ([], ["--force"]):
        result = invoke("sweep", path, "--out", out, "-q", "--no-plots", *force)
        assert result.exit_code == 2, result.output
        assert f"{out / 'runs'} is a file where the sweep keeps" in result.output


def test_a_sweep_into_a_run_directory_asks_for_force_and_replaces_it(tmp_path):
    path = _experiment(tmp_path, 'base = "tiny.toml"\n')
    out = tmp_path / "o"
    assert invoke("run", tmp_path / "tiny.toml", "--out", out, "-q", "--no-plots").exit_code == 0
    before = sorted(p.name for p in out.iterdir())
    result = invoke("sweep", path, "--out", out, "-q", "--no-plots")
    assert result.exit_code == 2, result.output
    assert "holds the results of an `incast run`, not of a sweep: pass --force" in result.output
    assert sorted(p.name for p in out.iterdir()) == before
    result = invoke("sweep", path, "--out", out, "-q", "--no-plots", "--force")
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert "runs" in names and "summary.json" not in names and "scenario.json" not in names
    # A sweep directory resumes without --force, as before.
    assert invoke("sweep", path, "--out", out, "-q", "--no-plots").exit_code == 0


# --- incast compare on odd summaries and on sweeps ---------------------------------------


def _summaries(tmp_path: Path, a: dict, b: dict) -> tuple[Path, Path]:
    dirs = tmp_path / "a", tmp_path / "b"
    for d, summary in zip(dirs, (a, b)):
        d.mkdir()
        (d / "summary.json").write_text(json.dumps(summary))
    return dirs


def test_compare_escapes_control_characters_in_keys_and_values(tmp_path):
    a, b = _summaries(
        tmp_path,
        {"x": "\x1b[2Jhi", "warnings": ["w\x1b[31m"]},
        {"x": 3, "\x1b[31mk": 5, "warnings": []},
    )
    result = invoke("compare", a, b, "--no-plot")
    assert result.exit_code == 0, result.output
    assert ESC not in result.output
    assert "\\x1b[2Jhi" in result.output and "\\x1b[31mk" in result.output


def test_compare_of_huge_numbers_is_a_change_not_from_zero(tmp_path):
    d = MetricDiff("n", 1e308, -1e308)
    assert not d.from_zero and d.relative == pytest.approx(-2.0)
    assert MetricDiff("n", 0, 5).from_zero
    a, b = _summaries(tmp_path, {"n": 1e308}, {"n": -1e308})
    _, table = table_of(compare_dirs(a, b), a, b)
    cells = [list(c.cells) for c in table.columns]
    assert [str(x) for x in cells[3]] == ["-200.0 %"]
    assert [str(x) for x in cells[1]] == ["1e+308"]


def test_numbers_beyond_a_floats_digits_are_written_with_an_exponent():
    assert format_number(1e308) == "1e+308"
    assert format_number(1.5e15) == "1.5e+15"
    assert format_number(15219.048) == "15,219"
    assert format_number(0.00123) == "0.0012"


def test_compare_on_a_sweep_says_to_compare_its_runs(tmp_path):
    path = _experiment(tmp_path, 'base = "tiny.toml"\n')
    out = tmp_path / "o"
    assert invoke("sweep", path, "--out", out, "-q", "--no-plots").exit_code == 0
    result = invoke("compare", out, out, "--no-plot")
    assert result.exit_code != 0
    assert f"{out} is a sweep's output, not one run's" in result.output
    assert f"incast compare {out}/runs/<A>" in result.output


# --- JSON experiment files and seeds -----------------------------------------------------


def test_a_json_experiment_is_known_as_one(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"name": "j", "base": "tiny.toml", "seeds": [1, 2]}))
    result = invoke("run", path)
    assert result.exit_code == 2 and "is an experiment file" in result.output, result.output
    assert "unknown field" not in result.output
    result = invoke("validate", path)
    assert result.exit_code == 0 and "ok: experiment j: 2 runs" in result.output, result.output
    result = invoke("sweep", path, "--dry-run", "--out", tmp_path / "o")
    assert result.exit_code == 0 and "not valid TOML" not in result.output, result.output
    path.write_text("[1, 2]")
    result = invoke("sweep", path, "--dry-run")
    assert result.exit_code == 2 and "a JSON object belongs here" in result.output


def test_seeds_beyond_64_bits_are_refused_naming_the_key(tmp_path):
    path = _experiment(tmp_path, f'base = "tiny.toml"\nseeds = [{MAX_SEED + 1}]\n')
    with pytest.raises(ExperimentError, match=rf"seeds: {MAX_SEED + 1} is more than the largest"):
        load_experiment(path)
    path = _experiment(tmp_path, 'base = "tiny.toml"\n')
    result = invoke("sweep", path, "--seeds", str(MAX_SEED + 1), "--dry-run")
    assert result.exit_code == 2 and "--seeds" in result.output
    assert "more than the largest seed" in result.output and "floating point" not in result.output
    assert invoke("sweep", path, "--seeds", str(MAX_SEED), "--dry-run").exit_code == 0


def test_unknown_experiment_keys_get_a_suggestion(tmp_path):
    text = (
        'base = "tiny.toml"\nparamters = {}\n[[point]]\nlabel = "a"\n[report]\nmetric = ["x"]\n'
        '[[compare]]\nbaseline = "base"\nmetrc = "slowdown"\n'
    )
    with pytest.raises(ExperimentError) as info:
        load_experiment(_experiment(tmp_path, text))
    msg = str(info.value)
    assert "paramters: unknown key; did you mean 'parameters'?" in msg
    assert "point: unknown key; did you mean 'points'?" in msg
    assert "compare[0].metrc: unknown key; did you mean 'metric'?" in msg
    assert "report.metric: unknown key; did you mean 'metrics'?" in msg


def test_a_listed_flow_after_the_measurement_window_is_said():
    """A listed flow that starts after `duration` runs but is measured nowhere: the
    summary says so (the generators' rule, for every timed element)."""
    import incast

    scenario = {
        "name": "late_flow",
        "duration": "1ms",
        "stop": "10ms",
        "topology": {"kind": "single_switch", "hosts": 4, "link_rate": "10Gbps"},
        "workload": {
            "flows": [
                {"src": 0, "dst": 1, "size": "10KB"},
                {"src": 2, "dst": 3, "size": "10KB", "start": "3ms"},
            ]
        },
    }
    res = incast.run(scenario)
    late = [w for w in res.summary["warnings"] if "listed flows start" in w]
    assert len(late) == 1 and late[0].startswith("1 listed flows"), res.summary["warnings"]
    assert res.summary["flows"]["measured"] == 1
    scenario["workload"]["flows"][1]["start"] = "0.5ms"
    assert not [w for w in incast.run(scenario).summary["warnings"] if "listed" in w]


@pytest.mark.parametrize("metric", ["overall.label", "overall.lo", "buckets[<100KB].hi"])
def test_a_bucket_description_is_no_metric(tmp_path, metric):
    path = _experiment(
        tmp_path,
        'name = "e"\nbase = "tiny.toml"\n[variants.a]\n[variants.b]\n'
        f'[[compare]]\nbaseline = "a"\nmetric = "{metric}"\n',
    )
    with pytest.raises(ExperimentError, match="metric"):
        load_experiment(path)
