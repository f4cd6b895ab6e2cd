"""Each of htsim's queue and sender rules on the EQDS permutation, alone and together
(docs/htsim-eqds.md, "The permutation's trimmed packets").

    python scenarios/htsim_eqds/rules.py              # seeds 1-40: the doc's table
    python scenarios/htsim_eqds/rules.py --seeds 100

perm.toml runs with the three htsim rules it sets ([switch.trim] count_sending = true, victim =
"htsim"; EQDS leftover = "burn") all off ("none"), each alone, and all on ("all", perm.toml as
it is), at seeds 1..N. Per variant: the mean trimmed packets over the seeds, their standard
deviation, the mean FCT p50/p99/max, and the mean change against "none" at the same seed (the
paired difference, with its standard error), beside htsim's own seeds (htsim/, compare.py).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import statistics
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent


def _compare():
    spec = importlib.util.spec_from_file_location("htsim_eqds_compare", HERE / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variants(base: dict) -> dict[str, dict]:
    """perm.toml with none, each one or all of the three rules."""
    none = copy.deepcopy(base)
    none["switch"]["trim"].pop("count_sending")
    none["switch"]["trim"].pop("victim")
    none["transport"]["cc"].pop("leftover")
    out = {"none": none}
    for name, (section, key, value) in {
        "count_sending": (("switch", "trim"), "count_sending", True),
        'victim = "htsim"': (("switch", "trim"), "victim", "htsim"),
        'leftover = "burn"': (("transport", "cc"), "leftover", "burn"),
    }.items():
        one = copy.deepcopy(none)
        one[section[0]][section[1]][key] = value
        out[name] = one
    out["all"] = base
    return out


def run(config: dict, seed: int) -> dict:
    import incast

    res = incast.run(config, seed=seed, base_dir=HERE)
    flows = res.flows
    assert int((flows.finished != 1).sum()) == 0 and int(flows.timeouts.sum()) == 0, seed
    fcts = [float(f) / 1e6 for f in flows.fct_ps]
    return {"trimmed": int(res.summary["trim"]["trimmed_packets"]), **_compare().fct_stats(fcts)}


def row(name: str, runs: list[dict], none: list[dict] | None) -> str:
    trims = [r["trimmed"] for r in runs]
    cells = [
        name,
        f"{statistics.mean(trims):.0f}",
        f"{statistics.stdev(trims):.0f}",
        *(f"{statistics.mean(r[k] for r in runs):.1f}" for k in ("p50", "p99", "max")),
    ]
    if none is None:
        cells.append("-")
    else:
        diff = [r["trimmed"] - n["trimmed"] for r, n in zip(runs, none)]
        se = statistics.stdev(diff) / len(diff) ** 0.5
        cells.append(f"{statistics.mean(diff):+.1f} +- {se:.1f}")
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args()
    base = tomllib.loads((HERE / "perm.toml").read_text())
    seeds = range(1, args.seeds + 1)
    print(
        f"| variant (seeds 1-{args.seeds}) | trimmed, mean | sd | FCT p50 | p99 | max "
        "| trimmed - none, same seed |"
    )
    print("|---|---|---|---|---|---|---|")
    none = None
    for name, config in variants(base).items():
        runs = [run(config, seed) for seed in seeds]
        print(row(name, runs, none), flush=True)
        if none is None:
            none = runs
    htsim = _compare().htsim_seeds()
    print(row(f"htsim, seeds 1-{len(htsim)}", htsim, None))


if __name__ == "__main__":
    main()
