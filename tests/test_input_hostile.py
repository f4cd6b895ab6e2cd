"""Hostile input to the CLI and the core's validator (issue 40): huge and
non-finite --set values, over-long and control-character names, files given
to the wrong command, timed elements after the run's end, the queue-series
cap, `incast cdfs` and "did you mean" for unknown keys."""

from __future__ import annotations

import io
import json
import re

import pytest
from click.testing import CliRunner

import incast
from conftest import INCAST_SCENARIO, SCENARIOS, TINY_TOML
from incast.cli import cli

ESC = "\x1b"


def invoke(*args: str):
    """Run the CLI; a traceback (an exception other than exit) fails the test."""
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback for {args}: {result.exception!r}\n{result.output}")
    return result


def scenario_file(tmp_path, text: str, name: str = "s.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- defect 10: --set values no scenario can hold ------------------------------


@pytest.mark.parametrize(
    "assignment, key, words",
    [
        ("seed=" + "9" * 5000, "seed", "5000 digits"),
        ("seed=99999999999999999999999", "seed", "out of range"),
        ("workload.incast.0.fan_in=nan", "workload.incast.0.fan_in", "not a finite number"),
        ("duration=1e999", "duration", "not a finite number"),
        ("transport.cc=[1, inf]", "transport.cc.1", "not a finite number"),
    ],
)
def test_set_with_a_value_no_scenario_holds_names_the_key(tmp_path, assignment, key, words):
    result = invoke("run", str(INCAST_SCENARIO), "--set", assignment, "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, result.output
    assert f"--set {key}:" in result.output and words in result.output, result.output
    assert "malformed" not in result.output and "column" not in result.output
    assert not (tmp_path / "o").exists()


def test_a_nan_in_the_file_beside_a_set_names_its_key(tmp_path):
    path = scenario_file(tmp_path, TINY_TOML + "[metrics]\nwarmup = nan\n")
    result = invoke("run", str(path), "--set", "seed=2", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, result.output
    assert "metrics.warmup: nan is not a finite number" in result.output, result.output


def test_a_dict_with_nan_names_the_key():
    scenario = json.loads(json.dumps(incast.validate(TINY_TOML)))
    scenario["workload"]["flows"][1]["start"] = float("nan")
    with pytest.raises(incast.ScenarioError, match=r"workload\.flows\.1\.start: nan is not"):
        incast.validate(scenario)


# -- defect 7: names over the documented length --------------------------------


def test_a_long_name_is_refused_without_echoing_it(tmp_path, monkeypatch):
    long_name = "n" * 100_000
    path = scenario_file(tmp_path, TINY_TOML.replace('"tiny"', f'"{long_name}"'))
    result = invoke("validate", str(path))
    assert result.exit_code == 2
    assert "`name` (line 1)" in result.output and "more than the 128" in result.output
    assert len(result.output) < 600, result.output
    # `incast run` once ./incast-out exists: the same error, nothing created.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "incast-out").mkdir()
    path = scenario_file(tmp_path, TINY_TOML.replace('"tiny"', f'"{"x" * 300}"'))
    result = invoke("run", str(path))
    assert result.exit_code == 2 and "more than the 128" in result.output, result.output
    assert list((tmp_path / "incast-out").iterdir()) == []


def test_a_name_of_the_longest_length_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = scenario_file(tmp_path, TINY_TOML.replace('"tiny"', f'"{"é" * 128}"'))
    result = invoke("run", str(path), "--no-plots", "--quiet")
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "incast-out").iterdir())) == 1


# -- defect 12: terminal control characters are never printed raw --------------


def test_control_characters_in_names_and_keys_are_escaped(tmp_path):
    path = scenario_file(tmp_path, TINY_TOML.replace('"tiny"', '"a\\u001b[2Jb"'))
    result = invoke("validate", str(path))
    assert result.exit_code == 2 and "control character" in result.output, result.output
    assert ESC not in result.output and "\\u{1b}[2J" in result.output
    # An unknown key made of an escape sequence, echoed in the error.
    path = scenario_file(tmp_path, TINY_TOML + '"\\u001b[31mred" = 1\n', "k.toml")
    result = invoke("validate", str(path))
    assert result.exit_code == 2 and ESC not in result.output, result.output
    assert "\\u{1b}[31mred" in result.output


def test_the_cli_escapes_what_it_echoes():
    from incast.cli import _shown

    assert _shown("a\x1b[2Jb\x07\r\x9bc") == "a\\x1b[2Jb\\x07\\r\\x9bc"
    assert _shown("x" * 200).endswith("…") and len(_shown("x" * 200)) == 80
    assert _shown("one\ntwo", None, newlines=True) == "one\ntwo"
    assert _shown("one\ntwo") == "one\\ntwo"


def test_the_progress_bar_shows_a_name_as_written():
    from rich.console import Console

    from incast._runner import progress_bar

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with progress_bar(console, "a[/b] [red]c\x1b[2J") as update:
        update({"fraction": 1.0})
    text = out.getvalue()
    # Rich's own styling escapes remain; the name's do not, nor is it markup.
    assert "a[/b] [red]c\\x1b[2J" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text), text
    assert "\x1b[2J" not in text


# -- papercut 1: the file given to the wrong command ---------------------------


def test_run_on_an_experiment_says_to_sweep_it():
    experiment = SCENARIOS / "smart_pause" / "small.toml"
    result = invoke("run", str(experiment))
    assert result.exit_code == 2
    assert "is an experiment file" in result.output and "incast sweep" in result.output
    assert "unknown field" not in result.output


def test_sweep_on_a_scenario_says_to_run_it(tmp_path):
    result = invoke("sweep", str(INCAST_SCENARIO), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "is a scenario file" in result.output and "incast run" in result.output
    assert "unknown key" not in result.output
    assert not (tmp_path / "o").exists()


# -- papercut 9: every timed element starts before the run ends ----------------

HOTSPOT_TOML = """\
name = "hot"
duration = "2ms"
stop = "4ms"
[topology]
kind = "single_switch"
hosts = 4
link_rate = "10Gbps"
[switch.input_buffer]
[nic]
model = "adapter"
[[workload.onoff]]
load = 0.5
start = "{onoff}"
[[workload.hotspot]]
host = 0
service_rate = 0.1
{hotspot}
"""


@pytest.mark.parametrize(
    "onoff, hotspot, key",
    [
        ("0ms", 'start = "5ms"', "workload.hotspot[0].start"),
        ("0ms", 'start = "3ms"', "workload.hotspot[0].start"),
        ("0ms", 'start = "1ms"\nduration = "4ms"', "workload.hotspot[0].duration"),
        ("2ms", 'start = "1ms"', "workload.onoff[0].start"),
    ],
)
def test_timed_elements_after_the_end_are_refused(onoff, hotspot, key):
    with pytest.raises(incast.ScenarioError, match=re.escape(f"`{key}`")):
        incast.validate(HOTSPOT_TOML.format(onoff=onoff, hotspot=hotspot))
    ok = HOTSPOT_TOML.format(onoff="0ms", hotspot='start = "1ms"\nduration = "3ms"')
    assert incast.validate(ok)["workload"]["hotspot"][0]["start"] == "1ms"


# -- defect 5: the full-resolution queue series' cap ---------------------------


def test_a_queue_series_near_the_old_cap_is_refused_naming_the_keys(tmp_path):
    # 4 hosts: 8 ports every 2 ns for 5 ms, 20 M rows: under the old 40 M cap,
    # about 4 GB at its peak.
    text = 'stop = "5ms"\n' + TINY_TOML + '[metrics]\nqueue_ports = "all"\n'
    path = scenario_file(tmp_path, text + 'queue_sample_interval = "2ns"\n')
    result = invoke("validate", str(path))
    assert result.exit_code == 2, result.output
    for words in ("20000008 rows", "200 B a row", "queue_sample_interval", "queue_ports"):
        assert words in result.output, result.output
    path = scenario_file(tmp_path, text + 'queue_sample_interval = "5ns"\n')
    assert invoke("validate", str(path)).exit_code == 0


# -- papercut 10: incast cdfs and "did you mean" -------------------------------


def test_cdfs_lists_mean_median_mice_and_source():
    result = invoke("cdfs")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["name", "mean", "median", "<="]
    rows = {line.split()[0]: line for line in lines[1:] if line and not line[0].isdigit()}
    names = incast.bundled_cdfs()
    assert set(names) <= set(rows)
    assert all(not row.rstrip().endswith(" -") for name, row in rows.items() if name in names)
    # The workloads README's figures: WebSearch's linear mean 1,711,250 B and
    # F(100 KB) = 0.5417; FB_Hadoop's 120,421 B and 0.8850.
    assert re.search(r"^websearch +1\.71 MB +\S+ KB +54\.2%  web search, DCTCP", rows["websearch"])
    assert re.search(r"^fb_hadoop +120 KB +\S+ B +88\.5%", rows["fb_hadoop"])
    assert "100,000 bytes" in result.output


def test_unknown_keys_and_names_get_a_suggestion(tmp_path):
    cases = [
        ('[switch]\nbufer = "1MB"\n', "did you mean `buffer`?"),
        ('[transport]\ncc = "dctpc"\n', "did you mean `dctcp`?"),
        ('[metrics]\nqueue_ports = "al"\n', "did you mean `all`?"),
    ]
    for extra, words in cases:
        path = scenario_file(tmp_path, TINY_TOML + extra)
        result = invoke("validate", str(path))
        assert result.exit_code == 2 and words in result.output, result.output
    path = scenario_file(tmp_path, TINY_TOML.replace('"tiny"\n', '"tiny"\nsed = 3\n'))
    result = invoke("validate", str(path))
    assert "did you mean `seed`?" in result.output, result.output
