"""incast's NDP and packet trimming beside htsim's (docs/htsim-ndp.md).

    python scenarios/htsim_ndp/compare.py                 # run incast, print the doc's table
    python scenarios/htsim_ndp/compare.py --case incast   # one case
    python scenarios/htsim_ndp/compare.py --check         # exit 1 if a figure is out of tolerance
                                                          # or the doc's table is not what runs
    python scenarios/htsim_ndp/compare.py --htsim SIM --bench INCAST_BENCH --rounds 3
        # re-run htsim (SIM: csg-htsim's sim/ with datacenter/htsim_ndp built) into htsim/,
        # and time both side by side, alternating (CPU seconds, the ratio)

htsim's side is read from htsim/ndp_<cm>.txt: the "finished at" lines and the totals of
`htsim_ndp -nodes 128 -tm <cm> -end 20000 -strat perm` (csg-htsim 841d9e7), on the connection
matrices htsim/<cm>.cm that its gen_permutation.py / gen_incast.py wrote. incast's side runs
the case's TOML of this directory (the same flows). htsim prints no trimmed-packet count; its
"Rtx" total is the packets its sources sent again, each for a NACK (its RTO, 50 ms, never
fires in these runs), so one per trimmed packet whose header reached the receiver: incast's
trimmed packets and retransmissions are compared with it.
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HTSIM_DIR = HERE / "htsim"
DOC = HERE.parents[1] / "docs" / "htsim-ndp.md"
CASES = {"perm": "perm_128n_2MB", "incast": "incast_64to1_2MB"}
# The figure: FCT percentiles and trimmed-packet counts within 10 % (issue 48, item 3).
REL_TOL = 0.10
# A count this small (or smaller) on both sides is equal enough (no percentage of zero).
COUNT_SLACK = 10


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks: incast's summary and numpy's default."""
    rank = q * (len(sorted_values) - 1)
    lo, hi = int(rank), min(int(rank) + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def fct_stats(fcts_us: list[float]) -> dict[str, float]:
    v = sorted(fcts_us)
    return {"p50": percentile(v, 0.5), "p99": percentile(v, 0.99), "max": v[-1]}


def htsim_side(case: str) -> dict:
    """htsim's FCTs (every flow starts at 0: its finish time) and its totals."""
    text = (HTSIM_DIR / f"ndp_{CASES[case]}.txt").read_text()
    fcts = [float(t) for t in re.findall(r"finished at ([0-9.]+) total bytes", text)]
    totals = re.search(r"New: (\d+) Rtx: (\d+) Bounced: (\d+)", text)
    if not fcts or totals is None:
        sys.exit(f"compare: {HTSIM_DIR / f'ndp_{CASES[case]}.txt'} has no flow lines or totals")
    new, rtx, _ = map(int, totals.groups())
    return {"flows": len(fcts), **fct_stats(fcts), "new": new, "rtx": rtx, "trimmed": rtx}


def incast_side(case: str) -> dict:
    import incast

    res = incast.run(str(HERE / f"{case}.toml"))
    flows = res.flows
    done = flows[flows.finished == 1]
    trim = res.summary["trim"]
    return {
        "flows": len(done),
        "unfinished": int((flows.finished != 1).sum()),
        **fct_stats([float(f) / 1e6 for f in done.fct_ps]),
        "rtx": int(flows.retransmits.sum()),
        "trimmed": int(trim["trimmed_packets"]),
        "timeouts": int(flows.timeouts.sum()),
    }


def rel(ours: float, theirs: float) -> float:
    return (ours - theirs) / theirs if theirs else 0.0


def within(ours: float, theirs: float, count: bool = False) -> bool:
    if count and max(ours, theirs) <= COUNT_SLACK:
        return True
    return abs(rel(ours, theirs)) <= REL_TOL


def rows(case: str, ours: dict, theirs: dict) -> list[list[str]]:
    out = []
    for key, label in [("p50", "FCT p50 (us)"), ("p99", "FCT p99 (us)"), ("max", "FCT max (us)")]:
        out.append(
            [
                case,
                label,
                f"{theirs[key]:.1f}",
                f"{ours[key]:.1f}",
                f"{100 * rel(ours[key], theirs[key]):+.1f} %",
            ]
        )
    out.append(
        [
            case,
            "trimmed packets (htsim: Rtx)",
            str(theirs["trimmed"]),
            str(ours["trimmed"]),
            f"{100 * rel(ours['trimmed'], theirs['trimmed']):+.1f} %" if theirs["trimmed"] else "-",
        ]
    )
    out.append(
        [
            case,
            "retransmissions",
            str(theirs["rtx"]),
            str(ours["rtx"]),
            f"{100 * rel(ours['rtx'], theirs['rtx']):+.1f} %" if theirs["rtx"] else "-",
        ]
    )
    return out


def problems(case: str, ours: dict, theirs: dict) -> list[str]:
    out = []
    if ours["unfinished"] or ours["flows"] != theirs["flows"]:
        out.append(f"{case}: {ours['flows']} flows finished, htsim {theirs['flows']}")
    for key in ("p50", "p99", "max"):
        if not within(ours[key], theirs[key]):
            out.append(f"{case}: FCT {key} {ours[key]:.1f} us, htsim {theirs[key]:.1f} us")
    for key in ("trimmed", "rtx"):
        if not within(ours[key], theirs[key], count=True):
            out.append(f"{case}: {key} {ours[key]}, htsim {theirs[key]}")
    return out


def table(all_rows: list[list[str]]) -> str:
    head = ["case", "figure", "htsim", "incast", "incast - htsim"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in all_rows]
    return "\n".join(lines)


def cpu_seconds(command: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one run of `command` (a child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compare: `{' '.join(command)}` failed:\n{done.stdout}{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rerun_htsim(sim: Path, bench: Path, cases: list[str], rounds: int) -> None:
    binary = sim / "datacenter" / "htsim_ndp"
    if not binary.is_file():
        sys.exit(
            f"compare: --htsim {sim}: no datacenter/htsim_ndp in it; build it (make htsim_ndp)"
        )
    if not bench.is_file():
        sys.exit(f"compare: --bench {bench}: no such program; build incast-bench first")
    # htsim writes idmap.txt where it runs: a scratch directory, not this one.
    scratch = Path(tempfile.mkdtemp(prefix="htsim_ndp_"))
    for case in cases:
        cm = CASES[case]
        shutil.copy(HTSIM_DIR / f"{cm}.cm", scratch)
        command = [str(binary), "-nodes", "128", "-tm", f"{cm}.cm", "-end", "20000"]
        command += ["-strat", "perm", "-o", "/dev/null"]
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
        lines = [
            ln for ln in done.stdout.splitlines() if "finished at" in ln or ln.startswith("New:")
        ]
        head = f"# {' '.join(['htsim_ndp', *command[1:-2]])} -o X.log (csg-htsim 841d9e7): "
        text = head + "its flow lines and totals\n" + "\n".join(lines) + "\n"
        (HTSIM_DIR / f"ndp_{cm}.txt").write_text(text)
    shutil.rmtree(scratch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--check", action="store_true", help="exit 1 on a figure out of tolerance")
    parser.add_argument("--htsim", type=Path, help="csg-htsim's sim/ directory: re-run htsim")
    parser.add_argument("--bench", type=Path, help="incast-bench, for the CPU-time comparison")
    parser.add_argument("--rounds", type=int, default=3)
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
