"""Writes the many-flow case's flow list, websearch32_flows.csv, read by both simulators.

    python3 scenarios/ns3_dumbbell/ns3/gen_flows.py

32 senders (s0..s31) into one receiver (r) through the dumbbell's 10 Gb/s bottleneck. Sizes
from incast's bundled WebSearch CDF (DCTCP, SIGCOMM 2010;
crates/incast-core/data/workloads/websearch.cdf), sampled as incast's `Cdf::sample` does
(piecewise-linear in size between the table's points, rounded to whole bytes, at least 1).
Poisson arrivals at LOAD of the bottleneck's 10 Gb/s (payload bytes) for ARRIVALS_S seconds,
starting at START_NS (ns-3 opens every connection at t = 0, so its handshakes are over
before the first flow starts), each from a sender drawn uniformly. Python's `random` with
SEED: the file is the same on every machine. Standard library only.
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
CDF = HERE.parents[2] / "crates/incast-core/data/workloads/websearch.cdf"
OUT = HERE / "websearch32_flows.csv"
SEED = 43
SENDERS = 32
LOAD = 0.6
BOTTLENECK_BPS = 10e9
START_NS = 10_000_000
ARRIVALS_S = 1.0


def read_cdf(path: Path) -> list[tuple[float, float]]:
    """The table's (size, probability) points (this file has no comments or point masses)."""
    points = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            size, prob = line.split()
            points.append((float(size), float(prob)))
    if points[0] != (0.0, 0.0) or points[-1][1] != 1.0:
        raise SystemExit(f"gen_flows: {path} does not run from (0, 0) to probability 1")
    return points


def sample(points: list[tuple[float, float]], u: float) -> int:
    """incast's `Cdf::sample` (crates/incast-core/src/workload/cdf.rs) for such a table."""
    for (x0, f0), (x1, f1) in zip(points, points[1:]):
        if f0 <= u < f1:
            return max(1, round(x0 + (x1 - x0) * (u - f0) / (f1 - f0)))
    return int(points[-1][0])


def mean(points: list[tuple[float, float]]) -> float:
    return sum((x0 + x1) / 2 * (f1 - f0) for (x0, f0), (x1, f1) in zip(points, points[1:]))


def main() -> None:
    points = read_cdf(CDF)
    rng = random.Random(SEED)
    rate = LOAD * BOTTLENECK_BPS / 8 / mean(points)  # flows per second
    rows = ["src,dst,size_bytes,start_ns,class"]
    t = 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= ARRIVALS_S:
            break
        sender = rng.randrange(SENDERS)
        size = sample(points, rng.random())
        rows.append(f"s{sender},r,{size},{START_NS + round(t * 1e9)},0")
    OUT.write_text("\n".join(rows) + "\n")
    print(f"{OUT.name}: {len(rows) - 1} flows, {rate:.1f} per second")


if __name__ == "__main__":
    main()
