"""The incast study's table (README.md): incast completion and background FCT slowdown per variant.

    python scenarios/incast_study/table.py SWEEP_DIR            # prints the Markdown table
    python scenarios/incast_study/table.py SWEEP_DIR --write    # and replaces it in README.md

SWEEP_DIR is the output of `incast sweep scenarios/incast_study/experiment.toml`. Incast
completion is the time from an incast's start to its last flow's last ACK, averaged over its
events in every seed (and the largest); the ideal is the incast's bytes at the receiver's line
rate. Background flows are the WebSearch flows (every flow not of an incast), pooled over seeds.
Drops, trimmed packets, PFC pause frames, retransmitted packets and timeouts are means
per run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
BEGIN = "<!-- table.py: begin -->"
END = "<!-- table.py: end -->"
# The flows table's kind of incast flows (a category: incast.results.FLOW_KINDS).
INCAST_KIND = "incast"
LINE_RATE = 100e9  # the receivers' links, b/s (base.toml)


def _variants(points: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(points["variant"]))


def table(sweep: Path) -> str:
    points = pd.read_csv(sweep / "points.csv")
    incasts = pd.read_parquet(sweep / "incasts")
    flows = pd.read_parquet(
        sweep / "flows", columns=["variant", "kind", "size_bytes", "slowdown", "finished"]
    )
    fan_ins = sorted(incasts["fan_in"].unique())
    head = ["variant"]
    for fan_in in fan_ins:
        per_sender = int(incasts.loc[incasts.fan_in == fan_in, "bytes_per_sender"].iloc[0])
        ideal = fan_in * per_sender * 8 / LINE_RATE * 1e6
        head.append(f"{fan_in}-to-1 completion, us (ideal {ideal:.0f}): mean / max")
    head += [
        "background slowdown < 100 KB: p50 / p99",
        "background slowdown, all: p50 / p99",
        "unfinished",
        "drops",
        "trimmed",
        "PFC pauses",
        "retransmits",
        "timeouts",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for variant in _variants(points):
        row = [variant]
        mine = incasts[incasts.variant == variant]
        for fan_in in fan_ins:
            done = mine[(mine.fan_in == fan_in) & (mine.finished == 1)]
            left = int(((mine.fan_in == fan_in) & (mine.finished != 1)).sum())
            cell = f"{done.completion_us.mean():.0f} / {done.completion_us.max():.0f}"
            row.append(cell + (f" ({left} unfinished)" if left else ""))
        background = flows[(flows.variant == variant) & (flows.kind != INCAST_KIND)]
        finished = background[background.finished == 1]
        small = finished[finished.size_bytes < 100_000]
        for part in (small, finished):
            q = part.slowdown.quantile([0.5, 0.99])
            row.append(f"{q[0.5]:.2f} / {q[0.99]:.1f}")
        row.append(str(int((flows[flows.variant == variant].finished == 0).sum())))
        runs = points[points.variant == variant]
        row.append(f"{runs['drops.packets'].mean():.0f}")
        trimmed = runs["trim.trimmed_packets"].mean() if "trim.trimmed_packets" in runs else 0.0
        row.append(f"{0.0 if pd.isna(trimmed) else trimmed:.0f}")
        pauses = runs["pfc.pause_frames"].mean() if "pfc.pause_frames" in runs else 0.0
        row.append(f"{0.0 if pd.isna(pauses) else pauses:.0f}")
        row.append(f"{runs['retransmits'].mean():.0f}")
        row.append(f"{runs['timeouts'].mean():.1f}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, help="the sweep's output directory")
    parser.add_argument("--write", action="store_true", help="replace the table in README.md")
    args = parser.parse_args()
    if not (args.sweep / "points.csv").exists():
        sys.exit(f"table: {args.sweep} has no points.csv: run the sweep first (see the docstring)")
    text = table(args.sweep)
    print(text)
    if args.write:
        readme = README.read_text()
        if BEGIN not in readme or END not in readme:
            sys.exit(f"table: {README} lacks the {BEGIN} / {END} markers")
        before, rest = readme.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        README.write_text(f"{before}{BEGIN}\n{text}\n{END}{after}")


if __name__ == "__main__":
    main()
