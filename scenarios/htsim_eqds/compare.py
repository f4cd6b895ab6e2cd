"""incast's EQDS beside htsim's (docs/htsim-eqds.md).

    python scenarios/htsim_eqds/compare.py                 # run incast, print the doc's table
    python scenarios/htsim_eqds/compare.py --case incast   # one case
    python scenarios/htsim_eqds/compare.py --check         # exit 1 if a figure is out of tolerance
                                                           # or the doc's table is not what runs
    python scenarios/htsim_eqds/compare.py --htsim SIM --bench INCAST_BENCH --rounds 5
        # re-run htsim (SIM: csg-htsim's sim/ with datacenter/htsim_eqds built) into htsim/,
        # and time both side by side, alternating (CPU seconds, the ratio); and htsim's
        # permutation at -seed 1..40 into htsim/eqds_perm_128n_2MB_seeds.txt

htsim's side is read from htsim/eqds_<cm>.txt: the "finished at" lines and the totals of
`htsim_eqds -nodes 128 -tm <cm> -end 20000 -strat perm` (csg-htsim 841d9e7), on the connection
matrices htsim/<cm>.cm. incast's side runs the case's TOML of this directory (the same flows).
htsim prints no trimmed-packet count; its "Rtx" total is the packets its sources sent again,
for a NACK or a timeout; its "RTS" total (0 in both runs) counts the timeouts that found no
credit, and incast's runs time out never: each retransmission answers one NACK, one per
trimmed packet, so incast's trimmed packets and retransmissions are compared with it.
The arithmetic and the table are the NDP comparison's (scenarios/htsim_ndp/compare.py).

The permutation's trimmed packets depend on the seed in both simulators (htsim's seeds its
switches' hash salts and its queues' coin flips, incast's its flows' hashes and its coin
flips): htsim's 1589 is its default seed's (13), the highest of its seeds 1-40. So the
permutation also runs at seeds 1-40 on both sides ("perm, seeds 1-40": the means), held to
the issue's 10 %, and the one-seed count to lie within htsim's own seeds' range.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HTSIM_DIR = HERE / "htsim"
DOC = HERE.parents[1] / "docs" / "htsim-eqds.md"
CASES = {"perm": "perm_128n_2MB", "incast": "incast_64to1_2MB"}


def _ndp_compare():
    """The NDP comparison's script, for its shared arithmetic (not a package)."""
    path = HERE.parent / "htsim_ndp" / "compare.py"
    spec = importlib.util.spec_from_file_location("htsim_ndp_compare_shared", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NDP = _ndp_compare()
fct_stats, rows, rel, within = _NDP.fct_stats, _NDP.rows, _NDP.rel, _NDP.within
table, cpu_seconds, REL_TOL = _NDP.table, _NDP.cpu_seconds, _NDP.REL_TOL

# The permutation at seeds 1..SEEDS in both simulators (htsim: -seed S), htsim's side stored.
SEEDS = 40
SEEDS_FILE = HTSIM_DIR / f"eqds_{CASES['perm']}_seeds.txt"
SPREAD = "perm, seeds 1-40 (mean)"
# Counts checked against the range of htsim's own seeds instead of its one stored run: one
# seed's trimmed packets are one draw from a spread whose standard deviation is 11 % of its
# mean (htsim's seeds 1-40: 1015-1589, its stored run, seed 13, the highest); the means over
# seeds (SPREAD) are held to the 10 %.
IN_SEED_RANGE = {("perm", "trimmed"), ("perm", "rtx")}


def problems(case: str, ours: dict, theirs: dict, seed_range=None) -> list[str]:
    """The NDP comparison's checks; a count of IN_SEED_RANGE must lie within `seed_range`
    (the lowest and highest of htsim's seeds) instead."""
    out = []
    if ours["unfinished"] or ours["flows"] != theirs["flows"]:
        out.append(f"{case}: {ours['flows']} flows finished, htsim {theirs['flows']}")
    for key in ("p50", "p99", "max"):
        if not within(ours[key], theirs[key]):
            out.append(f"{case}: FCT {key} {ours[key]:.1f} us, htsim {theirs[key]:.1f} us")
    for key in ("trimmed", "rtx"):
        if (case, key) in IN_SEED_RANGE:
            low, high = seed_range or htsim_seed_range()
            ok = low <= ours[key] <= high
        else:
            ok = within(ours[key], theirs[key], count=True)
        if not ok:
            out.append(f"{case}: {key} {ours[key]}, htsim {theirs[key]}")
    return out


def htsim_seeds() -> list[dict]:
    """htsim's permutation at -seed 1..SEEDS (SEEDS_FILE: seed, Rtx, FCT p50, p99, max)."""
    out = []
    for line in SEEDS_FILE.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        seed, rtx, p50, p99, top = line.split()
        out.append(
            {"seed": int(seed), "rtx": int(rtx), "trimmed": int(rtx)}
            | {"p50": float(p50), "p99": float(p99), "max": float(top)}
        )
    if [r["seed"] for r in out] != list(range(1, SEEDS + 1)):
        sys.exit(f"compare: {SEEDS_FILE} does not hold seeds 1-{SEEDS}; re-run with --htsim")
    return out


def htsim_seed_range() -> tuple[int, int]:
    counts = [r["trimmed"] for r in htsim_seeds()]
    return min(counts), max(counts)


def incast_seeds() -> list[dict]:
    """incast's permutation at seeds 1..SEEDS."""
    import incast

    out = []
    for seed in range(1, SEEDS + 1):
        res = incast.run(str(HERE / "perm.toml"), seed=seed)
        flows = res.flows
        done = flows[flows.finished == 1]
        out.append(
            {
                "unfinished": int((flows.finished != 1).sum()),
                "timeouts": int(flows.timeouts.sum()),
                **fct_stats([float(f) / 1e6 for f in done.fct_ps]),
                "rtx": int(flows.retransmits.sum()),
                "trimmed": int(res.summary["trim"]["trimmed_packets"]),
            }
        )
    return out


def means(runs: list[dict]) -> dict:
    return {key: sum(r[key] for r in runs) / len(runs) for key in KEYS}


KEYS = ("p50", "p99", "max", "trimmed", "rtx")
LABELS = {
    "p50": "FCT p50 (us)",
    "p99": "FCT p99 (us)",
    "max": "FCT max (us)",
    "trimmed": "trimmed packets (htsim: Rtx)",
    "rtx": "retransmissions",
}


def spread_rows(ours: dict, theirs: dict) -> list[list[str]]:
    """The means over seeds, as the table's rows."""
    return [
        [
            SPREAD,
            LABELS[key],
            f"{theirs[key]:.1f}",
            f"{ours[key]:.1f}",
            f"{100 * rel(ours[key], theirs[key]):+.1f} %",
        ]
        for key in KEYS
    ]


def spread_problems(ours_runs: list[dict], ours: dict, theirs: dict) -> list[str]:
    """Every mean within the issue's 10 %; every incast run finished, without a timeout."""
    out = [
        f"{SPREAD}: {key} {ours[key]:.1f}, htsim {theirs[key]:.1f}"
        for key in KEYS
        if not within(ours[key], theirs[key])
    ]
    if any(r["unfinished"] or r["timeouts"] for r in ours_runs):
        out.append(f"{SPREAD}: a run left flows unfinished or timed out")
    return out


def htsim_side(case: str) -> dict:
    """htsim's FCTs (every flow starts at 0: its finish time) and its totals."""
    path = HTSIM_DIR / f"eqds_{CASES[case]}.txt"
    text = path.read_text()
    fcts = [float(t) for t in re.findall(r"finished at ([0-9.]+) total packets", text)]
    totals = re.search(r"New: (\d+) Rtx: (\d+) RTS: (\d+) Bounced: (\d+)", text)
    if not fcts or totals is None:
        sys.exit(f"compare: {path} has no flow lines or totals")
    new, rtx, rts, _ = map(int, totals.groups())
    return {
        "flows": len(fcts),
        **fct_stats(fcts),
        "new": new,
        "rtx": rtx,
        "rts": rts,
        "trimmed": rtx,
    }


def incast_side(case: str) -> dict:
    import incast

    res = incast.run(str(HERE / f"{case}.toml"))
    flows = res.flows
    done = flows[flows.finished == 1]
    return {
        "flows": len(done),
        "unfinished": int((flows.finished != 1).sum()),
        **fct_stats([float(f) / 1e6 for f in done.fct_ps]),
        "rtx": int(flows.retransmits.sum()),
        "trimmed": int(res.summary["trim"]["trimmed_packets"]),
        "timeouts": int(flows.timeouts.sum()),
    }


def rerun_htsim(sim: Path, bench: Path, cases: list[str], rounds: int) -> None:
    binary = sim / "datacenter" / "htsim_eqds"
    if not binary.is_file():
        sys.exit(
            f"compare: --htsim {sim}: no datacenter/htsim_eqds in it; build it (make htsim_eqds)"
        )
    if not bench.is_file():
        sys.exit(f"compare: --bench {bench}: no such program; build incast-bench first")
    # htsim writes idmap.txt where it runs: a scratch directory, not this one.
    scratch = Path(tempfile.mkdtemp(prefix="htsim_eqds_"))
    for case in cases:
        cm = CASES[case]
        shutil.copy(HTSIM_DIR / f"{cm}.cm", scratch)
        command = [str(binary), "-nodes", "128", "-tm", f"{cm}.cm", "-end", "20000"]
        # htsim_eqds reads its log back when it ends (Logfile::transposeLog): a real file.
        command += ["-strat", "perm", "-o", f"eqds_{cm}.log"]
        ratios = []
        for round_ in range(1, rounds + 1):
            h = cpu_seconds(command, scratch)
            i = cpu_seconds([str(bench), str(HERE / f"{case}.toml")], HERE)
            ratios.append(i / h)
            print(
                f"{case} round {round_}: htsim {h:.3f} s, incast {i:.3f} s, "
                f"incast/htsim {i / h:.2f}"
            )
        ratios.sort()
        print(
            f"{case}: incast/htsim CPU median {ratios[len(ratios) // 2]:.2f} over {rounds} rounds"
        )
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        (HTSIM_DIR / f"eqds_{cm}.txt").write_text(done.stdout)
        if case == "perm":
            rerun_htsim_seeds(command, scratch)
    shutil.rmtree(scratch)


def rerun_htsim_seeds(command: list[str], scratch: Path) -> None:
    """htsim's permutation at -seed 1..SEEDS into SEEDS_FILE."""
    lines = [
        f"# {' '.join(Path(command[0]).name if i == 0 else a for i, a in enumerate(command))}"
        " -seed S: seed, Rtx, FCT p50, p99, max (us)"
    ]
    for seed in range(1, SEEDS + 1):
        done = subprocess.run(
            [*command, "-seed", str(seed)], cwd=scratch, capture_output=True, text=True
        )
        fcts = [float(t) for t in re.findall(r"finished at ([0-9.]+) total packets", done.stdout)]
        rtx = re.search(r"Rtx: (\d+)", done.stdout)
        if len(fcts) != 128 or rtx is None:
            sys.exit(f"compare: htsim -seed {seed} did not finish its 128 flows")
        stats = fct_stats(fcts)
        lines.append(
            f"{seed} {rtx.group(1)} {stats['p50']:.3f} {stats['p99']:.3f} {stats['max']:.3f}"
        )
    SEEDS_FILE.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--check", action="store_true", help="exit 1 on a figure out of tolerance")
    parser.add_argument("--htsim", type=Path, help="csg-htsim's sim/ directory: re-run htsim")
    parser.add_argument("--bench", type=Path, help="incast-bench, for the CPU-time comparison")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cases = args.case or list(CASES)
    if args.htsim:
        if args.bench is None:
            sys.exit("compare: --htsim needs --bench INCAST_BENCH (the CPU-time comparison)")
        rerun_htsim(args.htsim.resolve(), args.bench.resolve(), cases, args.rounds)
    all_rows, bad = [], []
    for case in cases:
        ours, theirs = incast_side(case), htsim_side(case)
        all_rows += rows(case, ours, theirs)
        bad += problems(case, ours, theirs)
        if theirs["rts"] or ours["timeouts"]:
            bad.append(f"{case}: timeouts (htsim RTS {theirs['rts']}, incast {ours['timeouts']})")
        if case == "perm":
            runs, theirs_mean = incast_seeds(), means(htsim_seeds())
            ours_mean = means(runs)
            all_rows += spread_rows(ours_mean, theirs_mean)
            bad += spread_problems(runs, ours_mean, theirs_mean)
    text = table(all_rows)
    print(text)
    if args.check:
        if len(cases) == len(CASES) and text not in DOC.read_text():
            bad.append(f"{DOC.name}'s table is not what incast gives now: paste the table above")
        for line in bad:
            print("OUT:", line, file=sys.stderr)
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
