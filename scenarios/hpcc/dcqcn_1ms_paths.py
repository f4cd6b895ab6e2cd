"""DCQCN on HPCC's 1 ms WebSearch slice: incast with each ECMP choice (its own flow hash,
HPCC-sim's rule) and ACK mode, and with HPCC-sim's paths on ns-3's clock, seeds 1-5, beside
HPCC-sim's runs (docs/hpcc-interop.md, "DCQCN on the 1 ms slice" and "Time in whole
nanoseconds").

    python3 dcqcn_1ms_paths.py HPCC_DIR CONFIG OUT

HPCC_DIR holds HPCC-sim's fct files of the runs to compare with (every `fct*.txt` there);
CONFIG is the HPCC configuration incast imports (`--flows` as in the docs: its FLOW_FILE);
OUT receives one directory per incast run (kept: a rerun reuses finished runs). Prints one
line per set: the range and mean of the all-flows p95 and p99 slowdown, of the < 100 KB p95
and p99, and of the mean FCT, computed by hpcc_compare.py.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import hpcc_compare

import incast.hpcc

KEYS = (("all", "p95"), ("all", "p99"), ("lt100KB", "p95"), ("lt100KB", "p99"))


def row(stats: list[dict]) -> str:
    cells = []
    for bucket, q in KEYS + (("fct_mean_us", None),):
        xs = [s[bucket] if q is None else s[bucket][q] for s in stats]
        name = bucket if q is None else f"{bucket} {q}"
        cells.append(f"{name} {min(xs)}-{max(xs)} (mean {statistics.mean(xs):.3f})")
    return "; ".join(cells)


def main(hpcc_dir: str, config: str, out: str) -> None:
    refs = sorted(Path(hpcc_dir).glob("fct*.txt"))
    print(f"HPCC-sim ({len(refs)} runs): {row([hpcc_compare.fct_stats(str(f)) for f in refs])}")
    modes = ("hpcc", "high_priority")
    sets = [(ecmp, acks, "exact") for ecmp in ("flow", "hpcc") for acks in modes]
    sets += [("hpcc", acks, "ns3") for acks in modes]
    for ecmp, acks, clock in sets:
        stats = []
        for seed in range(1, 6):
            tag = "" if clock == "exact" else f"_{clock}"
            run = Path(out) / f"{ecmp}_{acks}{tag}_s{seed}"
            if not (run / "fct.txt").exists():
                incast.hpcc.run_hpcc(config, seed=seed, acks=acks, ecmp=ecmp, clock=clock, out=run)
            stats.append(hpcc_compare.fct_stats(str(run / "fct.txt")))
        print(f"incast ecmp={ecmp} acks={acks} clock={clock} (seeds 1-5): {row(stats)}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
