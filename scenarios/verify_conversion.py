"""Checks that the reproductions' former scenario files (one per run, removed when the
reproductions became experiments) are exactly runs of the experiment files.

    python scenarios/verify_conversion.py [COMMIT]

reads every former file from git at COMMIT (default fe097ee, the last commit that had
them), normalizes it with the core (every default filled in) and compares it with the run
of experiment.toml / small.toml it became, name and description aside (those only label
a run). Prints one line per talk; exits 1 on any difference.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from incast import _core
from incast.experiment import load_experiment

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
NEW = {
    "base.toml",
    "base_small.toml",
    "experiment.toml",
    "small.toml",
    "ns3.toml",
    "coexist.toml",
    "long12.toml",
}


def old_files(commit, talk):
    out = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "--name-only", commit, f"scenarios/{talk}/"],
        check=True,
        capture_output=True,
        text=True,
    )
    for path in out.stdout.split():
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".toml") and name not in NEW:
            text = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{commit}:{path}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            yield name, text


def strip(d):
    d = dict(d)
    d.pop("name", None)
    d.pop("description", None)
    return d


def check(commit, talk, mapping):
    exps, ok, n, bad = {}, 0, 0, []
    for name, text in old_files(commit, talk):
        n += 1
        ef, point, variant = mapping(name)
        if ef not in exps:
            exps[ef] = {
                (r.point, r.variant, r.seed): r for r in load_experiment(ROOT / talk / ef).runs
            }
        old = json.loads(_core.validate(text, "toml", str(ROOT / talk)))
        runs = [r for k, r in exps[ef].items() if k[0] == point and k[1] == variant]
        if not runs:
            bad.append(f"{name}: no run {point}/{variant} in {ef}")
            continue
        new = dict(runs[0].scenario)
        new["seed"] = old["seed"]  # the files had seed 1; the experiments list their seeds
        if strip(old) == strip(new):
            ok += 1
        else:
            keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            bad.append(f"{name} -> {ef} {point}/{variant}: differs in {keys}")
    print(f"{talk}: {ok} of {n} former files equal a run of the experiment files")
    for b in bad:
        print("  " + b)
    return not bad and n > 0


def sp(name):
    stem = name[:-5]
    small = stem.endswith("_small")
    if small:
        stem = stem[:-6]
    point, variant = stem.rsplit("_", 1)
    return ("small.toml" if small else "experiment.toml", point, variant)


def onr(name):
    stem = name[:-5]
    small = stem.startswith("small_")
    ef = "small.toml" if small else "experiment.toml"
    if small:
        stem = stem[6:]
    m = re.fullmatch(r"coexist_([abc])", stem)
    if m:
        return ef, "coexist", {"a": "base", "b": "on_ramp_group1", "c": "on_ramp"}[m.group(1)]
    m = re.fullmatch(r"long12_(timely_b0[28]|dcqcn_55_50|dcqcn_300_4)(?:_or(\d+))?", stem)
    if m:
        return ef, f"long12_{m.group(1)}", f"or{m.group(2)}" if m.group(2) else "base"
    if stem.endswith("_or"):
        return ef, stem[:-3], "on_ramp"
    return ef, stem, "base"


def ci(name):
    stem = name[:-5]
    small = stem.startswith("small_")
    if small:
        stem = stem[6:]
    wl, variant = stem.rsplit("_", 1)
    return ("small.toml" if small else "experiment.toml", f"cdf={wl}", variant)


if __name__ == "__main__":
    commit = sys.argv[1] if len(sys.argv) > 1 else "fe097ee"
    results = [
        check(commit, t, f)
        for t, f in (("smart_pause", sp), ("on_ramp", onr), ("congestion_isolation", ci))
    ]
    sys.exit(0 if all(results) else 1)
