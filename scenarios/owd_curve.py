"""Prints the OWD-versus-drop-probability curves of a sweep (Smart-Pause talk, slides 3-4).

    incast sweep scenarios/smart_pause/owd_curve.toml --out ~/sp_curve -j 2
    python scenarios/owd_curve.py ~/sp_curve            # print the curves as a table
    python scenarios/owd_curve.py ~/sp_curve --write    # and put it in the talk's README

    # Where single-packet flows spend their time, from runs with every OWD reading kept:
    incast run scenarios/smart_pause/base.toml --out /tmp/nopfc --set duration='"2ms"' \
        --set metrics.warmup='"0.5ms"' --set edge.rule='"none"' --set edge.owd_sample_every=1
    incast run scenarios/smart_pause/base.toml --out /tmp/dynamic --set duration='"2ms"' \
        --set metrics.warmup='"0.5ms"' --set edge.owd_sample_every=1 \
        --set edge.rule='{ algorithm = "smart_pause_dynamic", hold = "once" }'
    python scenarios/owd_curve.py --delays /tmp/nopfc /tmp/dynamic

How the curves are read (windows, onset): python/incast/drop_curve.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from incast.drop_curve import CurveError, markdown

HERE = Path(__file__).resolve().parent


def single_packet_delays(run: Path) -> pd.DataFrame:
    """Single-packet flows of a run with every OWD reading kept (`owd_sample_every = 1`), by
    path (its ideal FCT): mean slowdown, FCT beyond the ideal, and how much of that the data
    packet queued in the network (its OWD above the path's smallest) against the rest (the
    sender's NIC, the ACK's way back, a timeout)."""
    flows = pd.read_parquet(run / "flows.parquet")
    owd = pd.read_parquet(run / "owd.parquet").groupby("flow_id")["owd_ps"].first()
    one = flows[(flows["size_bytes"] <= 1460) & (flows["measured"] == 1) & (flows["finished"] == 1)]
    one = one.join(owd.rename("owd_ps"), on="flow_id").dropna(subset=["owd_ps"])
    one = one.assign(
        owd_us=one["owd_ps"] / 1e6, beyond_ideal_us=one["fct_us"] - one["ideal_fct_us"]
    )
    by_path = one.groupby(one["ideal_fct_us"].round(1))
    table = by_path.agg(
        flows=("flow_id", "size"),
        slowdown=("slowdown", "mean"),
        beyond_ideal_us=("beyond_ideal_us", "mean"),
        owd_us=("owd_us", "mean"),
        base_owd_us=("owd_us", "min"),
    )
    table["queued_us"] = table["owd_us"] - table["base_owd_us"]
    table["rest_us"] = table["beyond_ideal_us"] - table["queued_us"]
    return table.round(2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delays", nargs="+", type=Path, help="print single_packet_delays of RUNs")
    parser.add_argument("sweep", type=Path, nargs="?", help="the owd_curve.toml sweep's output")
    parser.add_argument("--points", nargs="+", default=["dcqcn_60_2mb", "dcqcn_80_2mb"])
    parser.add_argument("--write", action="store_true", help="put the table in the README")
    args = parser.parse_args(argv)
    if args.delays:
        for run in args.delays:
            print(f"{run}: single-packet flows by ideal FCT (us)")
            print(single_packet_delays(run.expanduser()).to_string())
        return 0
    if args.sweep is None:
        parser.error("give the sweep's output directory (or --delays RUN...)")
    try:
        text = markdown(args.sweep.expanduser(), args.points)
    except (CurveError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(text)
    if args.write:
        from claims import replace_block

        readme = HERE / "smart_pause" / "README.md"
        readme.write_text(replace_block(readme.read_text(), "smart_pause_owd_curve", text))
        print(f"wrote {readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
