"""The OWD-versus-drop-probability curves of a sweep (Smart-Pause talk, slides 3-4).

Each run of the sweep measured the curve (`[edge] drop_curve`): for every data packet sent, the
OWD of the flow's last acknowledged packet, by the number of switches on the flow's path, and
whether the packet was dropped (`edge.owd_drop_curve` in its summary.json). This module pools
the seeds of a point, merges the bins into windows (10 us by default: a 2 us bin of a 1-switch
path holds a few hundred packets past 50 us, too few for a 1 % probability), and reads two things
from the curves:

- the onset: the lowest OWD whose window drops at least `level` (1 %) of the packets sent after
  such a reading, with at least `min_sent` packets in the window;
- whether every curve is quiet below `quiet_below_us` (drops under a tenth of `level`) and rises
  to `level` somewhere: "the probability rises with the OWD".

scenarios/claims.py uses `claim_row` for claims of kind `owd_curve`; scenarios/owd_curve.py
prints the curves of a sweep (`markdown`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

#: Defaults of a claim's keys.
WINDOW_US = 10.0
LEVEL = 0.01
MIN_SENT = 200
QUIET_BELOW_US = 30.0


class CurveError(ValueError):
    """A sweep without the curve a claim needs: names the point and what to run."""


@dataclass
class Curves:
    """One point's curves, pooled over its seeds: per switch count, a table of windows."""

    point: str
    seeds: int
    windows: dict[int, pd.DataFrame]
    #: Per switch count: packets sent before the flow had any reading, and how many were dropped.
    first_round_trip: dict[int, tuple[int, int]]
    #: Where the curve's last, open cell starts ("at least `max`"; None: no reading reached it):
    #: the window holding it is not 10 us wide.
    open_from_us: float | None = None


def _run_dirs(sweep: Path, point: str, variant: str) -> list[Path]:
    points = pd.read_parquet(sweep / "points.parquet")
    rows = points[(points["point"] == point) & (points["variant"] == variant)]
    if rows.empty:
        raise CurveError(f"{sweep}: no runs of point `{point}`, variant `{variant}`")
    return [sweep / str(d) for d in rows.sort_values("seed")["dir"]]


def _summary_curve(run: Path) -> list[dict]:
    summary = json.loads((run / "summary.json").read_text())
    curve = (summary.get("edge") or {}).get("owd_drop_curve")
    if curve is None:
        raise CurveError(
            f"{run}: its summary has no `edge.owd_drop_curve`; run the point with "
            '`edge.drop_curve = { bin = "2us", max = "300us" }` '
            "(as scenarios/smart_pause/owd_curve.toml does)"
        )
    return curve


def pooled(runs: list[Path], point: str, window_us: float = WINDOW_US) -> Curves:
    """The curves of `runs` (one point's seeds), summed and merged into windows."""
    return merged([_summary_curve(run) for run in runs], point, window_us)


def merged(curves: list[list[dict]], label: str, window_us: float = WINDOW_US) -> Curves:
    """Summaries' `edge.owd_drop_curve` lists (one per run), summed and merged into windows."""
    sent: dict[tuple[int, float], int] = defaultdict(int)
    dropped: dict[tuple[int, float], int] = defaultdict(int)
    first: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    open_from: float | None = None
    for groups in curves:
        for group in groups:
            hops = int(group["switch_hops"])
            before = group["before_any_reading"]
            first[hops][0] += int(before["sent"])
            first[hops][1] += int(before["dropped"])
            for cell in group["bins"]:
                if cell["owd_hi_us"] is None:
                    open_from = float(cell["owd_lo_us"])
                lo = window_us * int(float(cell["owd_lo_us"]) // window_us)
                sent[(hops, lo)] += int(cell["sent"])
                dropped[(hops, lo)] += int(cell["dropped"])
    windows = {}
    for hops in sorted({h for h, _ in sent}):
        los = sorted(lo for h, lo in sent if h == hops)
        table = pd.DataFrame(
            {
                "owd_lo_us": los,
                "sent": [sent[(hops, lo)] for lo in los],
                "dropped": [dropped[(hops, lo)] for lo in los],
            }
        )
        table["drop_probability"] = table["dropped"] / table["sent"]
        windows[hops] = table
    first_trip = {h: (s, d) for h, (s, d) in first.items()}
    return Curves(label, len(curves), windows, first_trip, open_from)


def summary_rows(summary: dict) -> list[tuple[str, str]]:
    """A run summary's curve as report rows (none without `edge.owd_drop_curve`): the 1 %
    onset by switch count, and the share of the drops that left before any reading."""
    groups = (summary.get("edge") or {}).get("owd_drop_curve")
    if not groups:
        return []
    curves = merged([groups], "run")
    onsets = _joined(_onsets(curves, LEVEL, MIN_SENT))
    switches = _switches(curves)
    first = sum(d for _, d in curves.first_round_trip.values())
    total = first + sum(int(t["dropped"].sum()) for t in curves.windows.values())
    share = f"{100 * first / total:.0f} % of {total:,}" if total else "no drops"
    return [
        (f"drop onset ({100 * LEVEL:g} %), {switches} switches", f"{onsets} us"),
        ("drops before the flow's first reading", share),
    ]


def onset(table: pd.DataFrame, level: float = LEVEL, min_sent: int = MIN_SENT) -> float | None:
    """The lowest window start whose drop probability reaches `level` (None: never)."""
    hit = table[(table["sent"] >= min_sent) & (table["drop_probability"] >= level)]
    return float(hit["owd_lo_us"].min()) if not hit.empty else None


def rises(table: pd.DataFrame, level: float, quiet_below_us: float, min_sent: int) -> bool:
    """Quiet below `quiet_below_us` (under level / 10), and reaching `level` somewhere above."""
    low = table[table["owd_lo_us"] < quiet_below_us]
    quiet = bool((low["drop_probability"] < level / 10).all())
    return quiet and onset(table, level, min_sent) is not None


def _fmt_onset(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _onsets(curves: Curves, level: float, min_sent: int) -> list[float | None]:
    """The onset of each switch count's curve, shortest path first."""
    return [onset(curves.windows[h], level, min_sent) for h in sorted(curves.windows)]


def _joined(onsets: list[float | None], sep: str = " / ") -> str:
    return sep.join(_fmt_onset(v) for v in onsets)


def _switches(curves: Curves) -> str:
    return " / ".join(str(h) for h in sorted(curves.windows))


CHECKS = ("rises", "later_with_hops")


def claim_row(claim: dict, sweep: Path) -> tuple[float | None, str, str, str]:
    """A claim of kind `owd_curve`: (value, incast text, spread, verdict).

    `check = "rises"`: every curve of every point is quiet at low OWD and rises to `level`.
    `check = "later_with_hops"`: the onsets grow (or stay) with the switch count at every point.
    The value is the largest onset (rises) or the shift of the onset from the shortest path to
    the longest (later_with_hops).
    """
    if claim["check"] not in CHECKS:
        raise CurveError(f"claim {claim['id']}: `check` must be `rises` or `later_with_hops`")
    level = float(claim.get("level", LEVEL))
    window = float(claim.get("window_us", WINDOW_US))
    quiet = float(claim.get("quiet_below_us", QUIET_BELOW_US))
    min_sent = int(claim.get("min_sent", MIN_SENT))
    variant = claim.get("variant", "nopfc")
    texts, spreads, ok, values = [], [], True, []
    for point in claim["points"]:
        # Each run's curve is read once: per seed for the spread, summed for the value.
        runs = [_summary_curve(run) for run in _run_dirs(sweep, point, variant)]
        curves = merged(runs, point, window)
        found = _onsets(curves, level, min_sent)
        texts.append(f"{point}: onset {_joined(found)} us ({_switches(curves)} switches)")
        seeds = [
            _joined(_onsets(merged([run], point, window), level, min_sent), "/") for run in runs
        ]
        spreads.append(f"{point} by seed: " + ", ".join(seeds))
        if claim["check"] == "rises":
            ok &= all(rises(t, level, quiet, min_sent) for t in curves.windows.values())
            values += [v for v in found if v is not None]
        elif any(v is None for v in found):
            ok = False
        else:
            ok &= all(a <= b for a, b in zip(found, found[1:]))
            values.append(found[-1] - found[0])
    value = max(values) if values else None
    return value, "; ".join(texts), "; ".join(spreads), "reproduced" if ok else "contradicted"


def markdown(sweep: Path, points: list[str], variant: str = "nopfc") -> str:
    """The curves as a table: drop probability per 10 us window, by point and switch count."""
    lines = []
    for point in points:
        curves = pooled(_run_dirs(sweep, point, variant), point)
        los = sorted({lo for t in curves.windows.values() for lo in t["owd_lo_us"]})
        shown = [lo for lo in los if lo < 200] + ([200.0] if any(lo >= 200 for lo in los) else [])
        head = ["switches", "first RTT"] + [
            f"{lo:.0f}+" if lo == 200 else f"{lo:.0f}-{lo + WINDOW_US:.0f}" for lo in shown
        ]
        lines += [
            f"`{point}` ({curves.seeds} seeds pooled): % of packets dropped, by the OWD (us) of "
            "the flow's last acknowledged packet when it was sent",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for hops, table in curves.windows.items():
            cells = []
            for lo in shown:
                part = (
                    table[table["owd_lo_us"] >= lo]
                    if lo == 200
                    else table[table["owd_lo_us"] == lo]
                )
                sent, dropped = int(part["sent"].sum()), int(part["dropped"].sum())
                cells.append(f"{100 * dropped / sent:.1f}" if sent >= MIN_SENT else "·")
            s, d = curves.first_round_trip.get(hops, (0, 0))
            first = f"{100 * d / s:.1f}" if s else "-"
            lines.append(f"| {hops} | {first} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(
        "`first RTT`: packets sent before the flow's first ACK (no reading yet); `·`: fewer "
        f"than {MIN_SENT} packets in the window."
    )
    return "\n".join(lines)
