"""Drop-tail phase effects on issue 43's dumbbell (docs/ns3-tcp.md, "Phase effects").

    python scenarios/ns3_dumbbell/phase_skew.py   # the doc's table: CUBIC, SACK, 100-1000 ms

Runs incast's CUBIC dumbbells with sender i's link delay 1 us + i x skew (and the order
reversed, -skew: sender 3's link the shortest) and prints goodput and retransmitted segments
per flow, drops and Jain's index over 100-1000 ms. ns-3's side: tcp-dumbbell's `--delaySkew`
(the doc gives the runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402

RUNS = [
    ("cubic_10g_sack", 0),
    ("cubic_10g_sack", 1),
    ("cubic_10g_sack", -1),
    ("cubic_10g_sack", 10_000),
    ("cubic_40g_sack", 0),
    ("cubic_40g_sack", 10_000),
    ("cubic_40g_sack", 100_000),
]


def main() -> None:
    print("| case | skew, ps | goodput per flow, Gb/s | retransmits per flow | drops | Jain |")
    print("|---|---|---|---|---|---|")
    for case, skew in RUNS:
        r = compare.incast_dumbbell(case, 1000, skew_ps=skew)
        g = r["goodput"]
        jain = sum(g) ** 2 / (len(g) * sum(x * x for x in g))
        flows = ", ".join(f"{x:.2f}" for x in g)
        retx = ", ".join(str(x) for x in r["retransmits"])
        print(f"| {case} | {skew} | {flows} | {retx} | {r['drops']} | {jain:.3f} |")


if __name__ == "__main__":
    main()
