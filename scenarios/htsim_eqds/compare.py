"""incast's EQDS beside htsim's (docs/htsim-eqds.md).

    python scenarios/htsim_eqds/compare.py                 # run incast, print the doc's table
    python scenarios/htsim_eqds/compare.py --case incast   # one case
    python scenarios/htsim_eqds/compare.py --check         # exit 1 if a figure is out of tolerance
                                                           # or the doc's table is not what runs
    python scenarios/htsim_eqds/compare.py --htsim SIM --bench INCAST_BENCH --rounds 5
        # re-run htsim (SIM: csg-htsim's sim/ with datacenter/htsim_eqds built) into htsim/,
        # and time both side by side, alternating (CPU seconds, the ratio)

htsim's side is read from htsim/eqds_<cm>.txt: the "finished at" lines and the totals of
`htsim_eqds -nodes 128 -tm <cm> -end 20000 -strat perm` (csg-htsim 841d9e7), on the connection
matrices htsim/<cm>.cm. incast's side runs the case's TOML of this directory (the same flows).
htsim prints no trimmed-packet count; its "Rtx" total is the packets its sources sent again,
for a NACK or a timeout; its "RTS" total (0 in both runs) counts the timeouts that found no
credit, and incast's runs time out never: each retransmission answers one NACK, one per
trimmed packet, so incast's trimmed packets and retransmissions are compared with it.
The arithmetic and the table are the NDP comparison's (scenarios/htsim_ndp/compare.py).
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

# Figures held to a wider bound than the 10 %, each with its measured reason
# (docs/htsim-eqds.md, "Differences"): the permutation's trimmed packets, 1188 against
# htsim's 1589, are 21-31 % under htsim's at seeds 1-7 (1094-1256); the bound is 35 %.
WIDER = {("perm", "trimmed"): 0.35, ("perm", "rtx"): 0.35}


def problems(case: str, ours: dict, theirs: dict) -> list[str]:
    """The NDP comparison's checks, with the bounds of WIDER where they apply."""
    out = []
    if ours["unfinished"] or ours["flows"] != theirs["flows"]:
        out.append(f"{case}: {ours['flows']} flows finished, htsim {theirs['flows']}")
    for key in ("p50", "p99", "max"):
        if not within(ours[key], theirs[key]):
            out.append(f"{case}: FCT {key} {ours[key]:.1f} us, htsim {theirs[key]:.1f} us")
    for key in ("trimmed", "rtx"):
        bound = WIDER.get((case, key))
        ok = (
            abs(rel(ours[key], theirs[key])) <= bound
            if bound is not None
            else within(ours[key], theirs[key], count=True)
        )
        if not ok:
            out.append(f"{case}: {key} {ours[key]}, htsim {theirs[key]}")
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
    shutil.rmtree(scratch)


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
