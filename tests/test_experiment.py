"""Experiment files: key-path overrides, expansion into runs, validation, hashes."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, TINY_TOML
from incast import keypath
from incast.experiment import ExperimentError, experiment_schema, load_experiment


def test_keypath_set_merges_tables_and_replaces_values():
    s = {"switch": {"buffer": "1MB", "ecn": {"kind": "step", "k": "10KB"}}, "w": {"p": [{"a": 1}]}}
    keypath.set_value(s, "switch.buffer", "2MB")
    keypath.set_value(s, "switch.ecn", {"k": "20KB"})  # merged: kind stays
    keypath.set_value(s, "switch.pfc", {})  # an empty table is created
    keypath.set_value(s, "w.p.0.a", 2)
    assert s == {
        "switch": {"buffer": "2MB", "ecn": {"kind": "step", "k": "20KB"}, "pfc": {}},
        "w": {"p": [{"a": 2}]},
    }
    keypath.unset(s, "switch.ecn")
    assert "ecn" not in s["switch"]
    with pytest.raises(keypath.KeyPathError, match="no such key"):
        keypath.unset(s, "switch.nothing")
    with pytest.raises(keypath.KeyPathError, match="index 3 is past the end"):
        keypath.set_value(s, "w.p.3.a", 1)
    with pytest.raises(keypath.KeyPathError, match="inside a str"):
        keypath.set_value(s, "switch.buffer.x", 1)


def test_keypath_star_sets_every_element():
    s = {"workload": {"poisson": [{"cdf": "a", "load": 0.5}, {"cdf": "b"}]}}
    keypath.set_value(s, "workload.poisson.*.cdf", "websearch")
    assert [p["cdf"] for p in s["workload"]["poisson"]] == ["websearch", "websearch"]
    assert s["workload"]["poisson"][0]["load"] == 0.5


@pytest.mark.parametrize(
    "text,expected",
    [
        ("switch.buffer=2MB", ("switch.buffer", "2MB")),
        ("workload.poisson.0.load=0.7", ("workload.poisson.0.load", 0.7)),
        ("switch.pfc.classes=[3]", ("switch.pfc.classes", [3])),
        ('rdma={cc = "dcqcn"}', ("rdma", {"cc": "dcqcn"})),
        ("transport.cc=newreno", ("transport.cc", "newreno")),
        ('edge.rule="on_ramp"', ("edge.rule", "on_ramp")),
    ],
)
def test_parse_assignment(text, expected):
    assert keypath.parse_assignment(text) == expected


def test_parse_assignment_errors():
    with pytest.raises(keypath.KeyPathError, match="key.path=value"):
        keypath.parse_assignment("switch.buffer")
    with pytest.raises(keypath.KeyPathError, match="malformed"):
        keypath.parse_assignment("switch..buffer=1")


def _write(tmp_path, text: str, name: str = "exp.toml"):
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    path = tmp_path / name
    path.write_text(text)
    return path


PRODUCT = """
name = "prod"
base = "tiny.toml"
seeds = [1, 2]
[parameters]
topology.link_rate = ["10Gbps", "25Gbps"]
switch.buffer = ["1MB", "2MB"]
[variants.dctcp]
transport.cc = "dctcp"
[variants.newreno]
transport.cc = "newreno"
[[compare]]
baseline = "newreno"
"""


def test_product_of_parameters_variants_and_seeds(tmp_path):
    exp = load_experiment(_write(tmp_path, PRODUCT))
    assert len(exp.runs) == 2 * 2 * 2 * 2
    assert exp.parameters == ["topology.link_rate", "switch.buffer"]
    first = exp.runs[0]
    assert first.label == "link_rate=10Gbps,buffer=1MB/dctcp/seed1"
    assert first.params == {"topology.link_rate": "10Gbps", "switch.buffer": "1MB"}
    assert first.raw["transport"]["cc"] == "dctcp" and first.raw["seed"] == 1
    # Every run carries its validated scenario (defaults filled in) and its hash.
    assert first.scenario["topology"]["link_rate"] in ("10Gbps", 10_000_000_000, "10 Gbps") or (
        "link_rate" in first.scenario["topology"]
    )
    hashes = {r.hash for r in exp.runs}
    assert len(hashes) == len(exp.runs)
    # The hash is stable: the same file expands to the same hashes.
    again = load_experiment(_write(tmp_path, PRODUCT))
    assert [r.hash for r in again.runs] == [r.hash for r in exp.runs]
    # A changed run gets a new hash, the others keep theirs.
    changed = load_experiment(_write(tmp_path, PRODUCT.replace('"2MB"]', '"3MB"]')))
    same = [a.hash == b.hash for a, b in zip(exp.runs, changed.runs)]
    assert same.count(True) == 8 and same.count(False) == 8
    assert exp.comparisons[0].variants == ("dctcp",)


def test_listed_points_with_their_own_seeds_variants_and_unset(tmp_path):
    text = """
base = "tiny.toml"
seeds = [7]
[variants.a]
[variants.b]
transport.cc = "newreno"
[[points]]
label = "small"
topology.hosts = 5
[[points]]
label = "no_second_flow"
seeds = [1, 2, 3]
variants = ["b"]
unset = ["workload.flows"]
workload.flows = [{ src = 0, dst = 3, size = "10KB", start = "0us" }]
"""
    exp = load_experiment(_write(tmp_path, text))
    labels = [r.label for r in exp.runs]
    assert labels == [
        "small/a/seed7",
        "small/b/seed7",
        "no_second_flow/b/seed1",
        "no_second_flow/b/seed2",
        "no_second_flow/b/seed3",
    ]
    assert len(exp.runs[2].raw["workload"]["flows"]) == 1
    assert exp.runs[0].raw["name"] == "exp-small-a"


def test_every_problem_is_reported_with_run_and_key(tmp_path):
    text = """
base = "tiny.toml"
bogus = 1
[variants.a]
[variants.b]
topology.link_rate = "fast"
[[points]]
label = "p"
variants = ["a", "c"]
[[compare]]
baseline = "zzz"
"""
    with pytest.raises(ExperimentError) as info:
        load_experiment(_write(tmp_path, text))
    msg = str(info.value)
    assert "bogus: unknown key" in msg
    assert "'c' is not a variant" in msg
    assert "compare[0].baseline: 'zzz' is not a variant" in msg


def test_core_validation_names_run_and_key(tmp_path):
    text = """
base = "tiny.toml"
[variants.ok]
[variants.bad]
topology.link_rate = "fast"
"""
    with pytest.raises(ExperimentError) as info:
        load_experiment(_write(tmp_path, text))
    problems = info.value.problems
    assert len(problems) == 1
    assert problems[0].startswith("run point/bad/seed1:")
    # The core names the table (the key itself for TOML files; dict input is
    # what the sweep hands it, and its messages are the core's to sharpen).
    assert "topology" in problems[0] and "fast" in problems[0]


def test_bad_key_path_names_run(tmp_path):
    text = """
base = "tiny.toml"
[[points]]
label = "x"
workload.flows.5.size = "1KB"
"""
    with pytest.raises(ExperimentError, match=r"run x/base/seed1: workload.flows.5.size: index 5"):
        load_experiment(_write(tmp_path, text))


def test_inline_base_and_cli_overrides(tmp_path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    doc = {"base": tomllib.loads(TINY_TOML), "seeds": [3]}
    exp = load_experiment(doc, overrides=[("topology.link_rate", "40Gbps")], seeds=[4, 5])
    assert [r.seed for r in exp.runs] == [4, 5]
    assert all(r.raw["topology"]["link_rate"] == "40Gbps" for r in exp.runs)


def test_bundled_experiments_expand_and_validate():
    counts = {}
    for talk in ("smart_pause", "on_ramp", "congestion_isolation"):
        for name in ("experiment.toml", "small.toml"):
            exp = load_experiment(REPO / "scenarios" / talk / name)
            counts[f"{talk}/{name}"] = len(exp.runs)
            assert all(r.hash for r in exp.runs)
    assert counts == {
        "smart_pause/experiment.toml": 156,
        "smart_pause/small.toml": 60,
        "on_ramp/experiment.toml": 49,
        "on_ramp/small.toml": 39,
        "congestion_isolation/experiment.toml": 60,  # 20 configurations x seeds 1-3
        "congestion_isolation/small.toml": 48,
    }
    # The other On-Ramp experiments (slide 11, slides 16-17, the 12-to-1 joins, clock error);
    # Smart-Pause's settings.
    others = (
        ("on_ramp", "cubic_two_flows_experiment.toml", 3),
        ("on_ramp", "cloud_experiment.toml", 12),
        ("on_ramp", "long12_experiment.toml", 27),  # slides 5-6, 20-21: joins at 200 and 10 ms
        ("on_ramp", "clock_experiment.toml", 120),  # clock error, 6 variants x seeds 1-10
        ("smart_pause", "sensitivity.toml", 40),
        ("congestion_isolation", "sensitivity.toml", 272),
    )
    for talk, name, runs in others:
        exp = load_experiment(REPO / "scenarios" / talk / name)
        assert len(exp.runs) == runs
        assert all(r.hash for r in exp.runs)


def test_experiment_schema_is_json_and_lists_keys():
    schema = experiment_schema()
    json.dumps(schema)
    assert set(schema["properties"]) >= {"base", "parameters", "points", "variants", "compare"}
    assert schema["additionalProperties"] is False
