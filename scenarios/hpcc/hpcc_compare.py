"""Statistics of one HPCC-format run from its fct.txt and pfc.txt, computed the same way for
the HPCC simulator's files and incast's (docs/hpcc-interop.md, "Differences that remain").

    python3 hpcc_compare.py fct.txt pfc.txt
    python3 hpcc_compare.py --per-flow reference_fct.txt other_fct.txt

prints JSON: per flow-size bucket the count and the mean, p50, p95 and p99 of the slowdown
max(1, fct / standalone_fct) (percentiles interpolated linearly, as numpy's default), the mean
FCT and the last finish time; PAUSE frames received (pfc.txt lines of type 1) by hosts and by
switches, and the time the receiving ports spent paused (each pause until the next resume of
the same node and interface; a pause still on at the end counts until the last event).

`--per-flow` matches the flows of two fct.txt files (same source, destination and size, start
times within 3 ns: incast and HPCC-sim round a start differently) and prints the quantiles of
other / reference FCT and the receivers whose flows of 100 KB or more differ most on average.
Standard library only.
"""

from __future__ import annotations

import json
import sys

BUCKETS = (
    ("lt100KB", 0, 100_000),
    ("100KB_1MB", 100_000, 1_000_000),
    ("ge1MB", 1_000_000, 1 << 62),
    ("all", 0, 1 << 62),
)


def percentile(values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    xs = sorted(values)
    k = p / 100 * (len(xs) - 1)
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def fct_stats(path: str) -> dict:
    rows = [line.split() for line in open(path) if line.strip()]
    size = [int(r[4]) for r in rows]
    fct = [int(r[6]) for r in rows]
    slowdown = [max(1.0, int(r[6]) / int(r[7])) for r in rows]
    out: dict = {"flows": len(rows)}
    for name, lo, hi in BUCKETS:
        s = [x for x, z in zip(slowdown, size) if lo <= z < hi]
        if s:
            out[name] = {
                "n": len(s),
                "mean": round(sum(s) / len(s), 3),
                **{f"p{p}": round(percentile(s, p), 3) for p in (50, 95, 99)},
            }
    out["fct_mean_us"] = round(sum(fct) / max(1, len(fct)) / 1e3, 2)
    out["last_finish_ns"] = max((int(r[5]) + int(r[6]) for r in rows), default=0)
    return out


def pfc_stats(path: str) -> dict:
    rows = [tuple(int(x) for x in line.split()) for line in open(path) if line.strip()]
    pauses = {"host": 0, "switch": 0}
    paused_ns = {"host": 0, "switch": 0}
    since: dict = {}
    end = max((r[0] for r in rows), default=0)
    for t, node, node_type, if_index, kind in rows:
        who = "switch" if node_type == 1 else "host"
        key = (node, if_index, who)
        if kind == 1:
            pauses[who] += 1
            since.setdefault(key, t)
        elif key in since:
            paused_ns[who] += t - since.pop(key)
    for (_, _, who), t in since.items():
        paused_ns[who] += end - t
    return {
        "pauses": pauses,
        "pauses_total": sum(pauses.values()),
        "paused_us": {k: round(v / 1e3, 1) for k, v in paused_ns.items()},
        "paused_us_total": round(sum(paused_ns.values()) / 1e3, 1),
    }


START_TOLERANCE_NS = 3


def _flows(path: str) -> list[tuple[str, str, int, int, int]]:
    """(source, destination, size, start, fct) of every flow in an fct.txt."""
    rows = [line.split() for line in open(path) if line.strip()]
    return [(r[0], r[1], int(r[4]), int(r[5]), int(r[6])) for r in rows]


def match_flows(reference: str, other: str) -> list[tuple[tuple, int]]:
    """Each reference flow with the FCT of its match in `other` (unmatched flows left out)."""
    pool: dict = {}
    for src, dst, size, start, fct in _flows(other):
        pool.setdefault((src, dst, size), []).append([start, fct, False])
    pairs = []
    for flow in _flows(reference):
        candidates = pool.get(flow[:3], [])
        best = min(
            (c for c in candidates if not c[2] and abs(c[0] - flow[3]) <= START_TOLERANCE_NS),
            key=lambda c: abs(c[0] - flow[3]),
            default=None,
        )
        if best is not None:
            best[2] = True
            pairs.append((flow, best[1]))
    return pairs


def per_flow(reference: str, other: str, top: int = 5) -> dict:
    pairs = match_flows(reference, other)
    ratios = [fct / flow[4] for flow, fct in pairs if flow[4] > 0]
    by_receiver: dict = {}
    for flow, fct in pairs:
        if flow[2] >= 100_000 and flow[4] > 0:
            by_receiver.setdefault(flow[1], []).append(fct / flow[4])
    receivers = sorted(
        ((dst, sum(r) / len(r), len(r)) for dst, r in by_receiver.items()),
        key=lambda item: -abs(item[1] - 1),
    )[:top]
    return {
        "matched": len(pairs),
        "reference_flows": len(_flows(reference)),
        "fct_ratio": {f"p{p}": round(percentile(ratios, p), 4) for p in (5, 50, 95)}
        if ratios
        else {},
        "receivers_ge100KB": [
            {"dst": dst, "mean_ratio": round(mean, 4), "flows": n} for dst, mean, n in receivers
        ],
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--per-flow":
        print(json.dumps(per_flow(sys.argv[2], sys.argv[3])))
    elif len(sys.argv) == 3:
        print(json.dumps({"fct": fct_stats(sys.argv[1]), "pfc": pfc_stats(sys.argv[2])}))
    else:
        sys.exit(
            "usage: python3 hpcc_compare.py fct.txt pfc.txt\n"
            "       python3 hpcc_compare.py --per-flow reference_fct.txt other_fct.txt"
        )
