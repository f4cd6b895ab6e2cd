"""Computes a reproduction's claims from its sweeps: claims.csv and the README's claim table.

    incast sweep scenarios/smart_pause/experiment.toml --out ~/sp_full -j 2
    python scenarios/claims.py smart_pause --sweep full=~/sp_full             # print the table
    python scenarios/claims.py smart_pause --sweep full=~/sp_full --write     # claims.csv + README

Each talk's folder has a `claims.toml`: one `[[claim]]` per claim of the talk, with the talk's
number, the kind of comparison and what to read from which sweep (its points table). This script
computes incast's number (the mean over seeds), its spread (min-max over seeds) and the verdict
(the method: docs/reproductions.md):

| verdict | when |
|---|---|
| `reproduced` | within `tolerance` (25 %) of the talk's number; for a series, every point |
| `direction` | the right side of 1 (a factor) or the right order (a series), wrong size |
| `contradicted` | the wrong side of 1, or the wrong order |
| `not simulatable` | about something no packet simulator models (the claim's `why` says what) |
| `not run` | the runs it needs are not in the sweeps given (the claim's `why` says why) |

Nothing in claims.csv or the README block is written by hand. A sweep is named on the command line
as NAME=DIR, where NAME is the claim's `sweep` (`full`, `small`, ...); claims whose sweep is not
given are left as they are in claims.csv (so a long sweep's rows and a short one's can be computed
at different times). `--small-csv FILE` writes every claim that the `small` sweep can compute to
FILE instead (the staleness test compares that with the committed `claims_small.csv`).

Kinds (`kind` in claims.toml; the keys each reads):

- `factor`: baseline / variant of one metric at one point (`point`, `baseline`, `variant`,
  `metric`), per seed, then the mean; `better = "higher"` inverts it for metrics where more is
  better.
- `max_factor`: the largest factor over the metrics matching `metric` (a `*` stands for any
  bucket label): "single columns reach 21.1x".
- `all_improve`: the smallest factor over the metrics matching `metric`; reproduced when it is
  above 1 (every column improves), contradicted otherwise.
- `series`: `factor` at several `points` against as many talk numbers (`talk` is a list).
- `near_zero`: the variant's `metric` against the baseline's: reproduced when the variant's is
  below `fraction` (default 0.1) of the baseline's, which must be above 0.
- `range`: the smallest and largest incast number of the claims listed in `of` against the talk's
  `[low, high]`: reproduced when both ends are within tolerance.
- `owd_curve`: the OWD-versus-drop curves of `points` (runs with `[edge] drop_curve`);
  `check = "rises"` or `"later_with_hops"` (python/incast/drop_curve.py).
- `not_simulatable`, `not_run`: no computation; `why` is required.
- `cut`: the relative change variant / baseline - 1 of one metric, in percent (`talk = -53` for
  "reduces by 53 %"), per seed, then the mean; `direction` when it has the talk's sign.
- `value`: the variant's `metric` (divided by the sum of the metrics in `per`, a list whose
  entries may hold a `*`), times `scale` (100 for a percentage), shown with `unit`. Reproduced
  within `tolerance_abs` (in the shown unit) when given, else within the relative tolerance;
  `direction` when on the talk's side of `pivot` (`spread_digits`: the spread's decimals, 2
  by default). With `within = [low, high]` instead of a
  number in `talk`: reproduced inside that band, contradicted outside it.
- `overhead`: the variant's `metric` (a count of new messages) per unit of `saved` it removes,
  `metric(variant) / (saved(baseline) - saved(variant))`, of the means over the seeds (the
  spread: per seed): reproduced at most `below`,
  `direction` below 1, contradicted at 1 or more, or when nothing is saved.
- `all_improve` (and `max_factor`) with `points` instead of `point`: over every point.

Derived metrics: `drop_ratio` (dropped packets / data packets sent, from each run's flows table:
packets = ceil(size / payload) + retransmitted packets); `large_flows` (the run's flows of at
least 100 KB, from its flows table). The workload's own shares, from every background (not
incast) flow the run started, finished or not (the buckets count finished flows only, which
leaves out the large flows still running at the end): `background_flows`, `background_mice`
(under 100 KB), `background_elephants` (at least 1 MB), `background_bytes`,
`background_elephant_bytes`. The Netronome/Facebook six-rack benchmark's figures, per run
(scenarios/tables.py, `_six_rack_run`): `six_rack.util` (FSW-to-worker utilization within the
arrivals, %), `six_rack.fsw` and `six_rack.worker_rack` (discards, bits), `six_rack.storage_retx`,
`six_rack.worker_retx`, `six_rack.storage_ce`, `six_rack.worker_ce` (% of data packets).

- `ratio`: the mean over seeds of the variant's `metric` over the baseline's at one `point`,
  times `scale` (100: a percentage), shown with `unit`: "DCTCP's discards are 0.3 % of CUBIC's".
  Reproduced within `tolerance_abs` (in the shown unit) when given, else the relative tolerance;
  `direction` when on the talk's side of `pivot` (default: the ratio 1, i.e. `scale`);
  contradicted otherwise, or when the baseline's mean is 0.
- `rises`: one variant's `metric` over `points` in order: reproduced when it never falls and the
  last is above the first (a curve's shape; `talk` says it in words); contradicted otherwise.

Derived metrics of the 12-to-1 and co-existence runs (On-Ramp): `receiver_utilization`, the link
into the receiver of the scenario's listed flows (`[[workload.flows]]`, one receiver), from the
last flow's start (a join) to the stop: its switch port's bytes sent over that time x its rate
(from the port's sampled series, `metrics.queue_ports`, when the window starts after 0);
`join_drain_ms`, the time from that last start until the port's queue, past its peak, first falls
below a tenth of the peak (NaN if it never does); `incast_group_rct[N]`, the mean completion (us)
of the finished incasts whose receiver is one of the hosts of the scenario's N-th incast generator
(`[[workload.incast]]`, from 1). `all_improve` and `max_factor` accept a derived metric by name.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from incast import drop_curve
from incast.results import rdma_data_packets

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

HERE = Path(__file__).resolve().parent

#: Metrics computed from each run's tables rather than read from the points table.
DERIVED = (
    "drop_ratio",
    "large_flows",
    "background_flows",
    "background_mice",
    "background_elephants",
    "background_bytes",
    "background_elephant_bytes",
    "receiver_utilization",
    "join_drain_ms",
)
#: The six-rack benchmark's figures (scenarios/tables.py `_six_rack_run`), as `six_rack.<key>`.
SIX_RACK = ("util", "fsw", "worker_rack", "storage_retx", "worker_retx", "storage_ce", "worker_ce")
DERIVED += tuple(f"six_rack.{key}" for key in SIX_RACK)
#: A host group's incast completion: `incast_group_rct[N]` (the N-th incast generator's hosts).
GROUP_RCT = re.compile(r"incast_group_rct\[(\d+)\]")
#: `join_drain_ms`: the queue has drained when it is below this share of its peak after the join.
DRAINED_SHARE = 0.1
#: The talks' mice boundary: flows under 100 KB (the derived metric `large_flows` counts the rest).
LARGE_FLOW_BYTES = 100_000
#: An elephant: at least 1 MB (no talk gives the boundary; the buckets' largest).
ELEPHANT_BYTES = 1_000_000
VERDICTS = ("reproduced", "direction", "contradicted", "not simulatable", "not run")
COLUMNS = ["id", "claim", "talk", "incast", "spread", "verdict", "why", "sweep", "computed_at"]


@dataclass
class Row:
    """One claim's computed row."""

    value: float | None
    text: str
    spread: str
    verdict: str


class ClaimsError(ValueError):
    """A claims.toml or sweep that cannot give a claim: names the claim and the key."""


# -- reading a sweep -----------------------------------------------------------------------


class Sweep:
    """A finished sweep's points table, with per-run derived metrics on demand."""

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        self.dir = directory
        points = directory / "points.parquet"
        if not points.exists():
            raise ClaimsError(f"sweep {name}: {points} does not exist (run `incast sweep` first)")
        self.points = pd.read_parquet(points)

    def runs(self, point: str, variant: str) -> pd.DataFrame:
        rows = self.points[(self.points["point"] == point) & (self.points["variant"] == variant)]
        return rows.sort_values("seed")

    def pairs(self, claim: dict, point: str) -> list[tuple[Any, Any]]:
        """The (baseline, variant) runs of `point`, paired by seed; an error without any."""
        base = self.runs(point, claim["baseline"]).set_index("seed")
        var = self.runs(point, claim["variant"]).set_index("seed")
        seeds = sorted(set(base.index) & set(var.index))
        if not seeds:
            raise ClaimsError(
                f"claim {claim['id']}: sweep {self.name} has no seed with both "
                f"{point}/{claim['baseline']} and {point}/{claim['variant']}"
            )
        return [(base.loc[seed], var.loc[seed]) for seed in seeds]

    def metric(self, row: Any, name: str) -> float:
        if name.startswith(SERIES_PREFIX):  # the IBM talk's time series (section at the end)
            return series_metric(self.dir / str(row["dir"]), name)
        if name == "drop_ratio":
            return self._drop_ratio(row)
        if name == "large_flows":
            sizes = pd.read_parquet(
                self.dir / str(row["dir"]) / "flows.parquet", columns=["size_bytes"]
            )
            return float((sizes["size_bytes"] >= LARGE_FLOW_BYTES).sum())
        if name.startswith("background_"):
            return self._background(row)[name]
        if name.startswith("six_rack."):
            return self._six_rack(row)[name.removeprefix("six_rack.")]
        if name in ("receiver_utilization", "join_drain_ms"):
            return self._receiver_port(row)[name]
        group = GROUP_RCT.fullmatch(name)
        if group:
            return self._group_rct(row, int(group.group(1)))
        if name not in self.points.columns:
            raise ClaimsError(f"sweep {self.name}: no metric `{name}` in points.parquet")
        value = row[name]
        return float("nan") if value is None else float(value)

    def columns(self, pattern: str) -> list[str]:
        """The points columns matching `pattern`, `*` standing for a bucket label."""
        if pattern in DERIVED or GROUP_RCT.fullmatch(pattern) or pattern.startswith(SERIES_PREFIX):
            return [pattern]
        regex = re.escape(pattern).replace(r"\*", r"[^\]]+")
        found = [c for c in self.points.columns if re.fullmatch(regex, c)]
        if not found:
            raise ClaimsError(f"sweep {self.name}: no metric matches `{pattern}`")
        return found

    def _background(self, row: Any) -> dict[str, float]:
        """The background flows the run started (every flow but the incasts'), by size."""
        flows = pd.read_parquet(
            self.dir / str(row["dir"]) / "flows.parquet", columns=["size_bytes", "kind"]
        )
        size = flows.loc[flows["kind"] != "incast", "size_bytes"]
        elephants = size[size >= ELEPHANT_BYTES]
        return {
            "background_flows": float(len(size)),
            "background_mice": float((size < LARGE_FLOW_BYTES).sum()),
            "background_elephants": float(len(elephants)),
            "background_bytes": float(size.sum()),
            "background_elephant_bytes": float(elephants.sum()),
        }

    def _six_rack(self, row: Any) -> dict[str, float]:
        """The six-rack benchmark's figures of one run (read once per run)."""
        cache = self.__dict__.setdefault("_six_rack_cache", {})
        run = self.dir / str(row["dir"])
        if run not in cache:
            scenario = json.loads((run / "scenario.json").read_text())
            cache[run] = _tables_module()._six_rack_run(run, scenario)
        return cache[run]

    def _scenario(self, row: Any) -> dict:
        return json.loads((self.dir / str(row["dir"]) / "scenario.json").read_text())

    def _receiver_port(self, row: Any) -> dict[str, float]:
        """The receiver link of the listed flows, from the last flow's start to the stop."""
        run = self.dir / str(row["dir"])
        scenario = self._scenario(row)
        flows = (scenario.get("workload") or {}).get("flows") or []
        if not flows or len({f["dst"] for f in flows}) != 1:
            raise ClaimsError(
                f"sweep {self.name}, run {row['dir']}: receiver_utilization needs listed flows "
                "([[workload.flows]]) into one receiver"
            )
        join, stop = max(_seconds(f["start"]) for f in flows), _seconds(scenario["stop"])
        ports = pd.read_parquet(run / "ports.parquet")
        port = ports[ports["peer"] == flows[0]["dst"]].iloc[0]
        rate = float(port["rate_bps"])
        series = pd.read_parquet(run / "queues.parquet")
        series = series[(series["node"] == port["node"]) & (series["port"] == port["port"])]
        series = series.sort_values("time_ps")
        if join == 0:
            busy = float(port["tx_bytes"]) * 8 / (rate * stop)
            if series.empty:
                return {"receiver_utilization": busy, "join_drain_ms": float("nan")}
        elif series.empty:
            raise ClaimsError(
                f"sweep {self.name}, run {row['dir']}: no queue series of the receiver's port; "
                'sample it (metrics.queue_ports = "nodes", queue_nodes = [its switch])'
            )
        at = series["time_ps"].to_numpy() / 1e12
        sent = series["tx_bytes"].to_numpy().astype(float)
        queue = series["bytes"].to_numpy().astype(float)
        first = max(int((at <= join).sum()) - 1, 0)
        if join > 0:
            busy = (sent[-1] - sent[first]) * 8 / (rate * (at[-1] - at[first]))
        peak = first + int(queue[first:].argmax())
        drained = (queue[peak:] < DRAINED_SHARE * queue[peak]).nonzero()[0]
        drain = (at[peak + drained[0]] - join) * 1e3 if len(drained) else float("nan")
        return {"receiver_utilization": busy, "join_drain_ms": drain}

    def _group_rct(self, row: Any, group: int) -> float:
        """Mean completion (us) of the finished incasts received by the N-th generator's hosts."""
        generators = (self._scenario(row).get("workload") or {}).get("incast") or []
        if not 1 <= group <= len(generators):
            raise ClaimsError(
                f"sweep {self.name}, run {row['dir']}: incast_group_rct[{group}] needs at least "
                f"{group} [[workload.incast]] generators, the scenario has {len(generators)}"
            )
        hosts = set(generators[group - 1]["hosts"])
        incasts = pd.read_parquet(self.dir / str(row["dir"]) / "incasts.parquet")
        done = incasts[(incasts["finished"] == 1) & incasts["receiver"].isin(hosts)]
        return float(done["completion_ps"].astype(float).mean()) / 1e6

    def _drop_ratio(self, row: Any) -> float:
        sent = rdma_data_packets(self.dir / str(row["dir"]))
        return float(row["drops.packets"]) / sent if sent else float("nan")


@functools.cache
def _tables_module():
    """scenarios/tables.py (the six-rack figures), loaded by path."""
    spec = importlib.util.spec_from_file_location("incast_scenario_tables", HERE / "tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # registered first, as its dataclasses need
    spec.loader.exec_module(module)
    return module


# -- the comparisons -----------------------------------------------------------------------


def _factors(sweep: Sweep, claim: dict, point: str, metric: str) -> list[float]:
    """Baseline / variant per seed (paired by seed)."""
    out = []
    for base, var in sweep.pairs(claim, point):
        b, v = sweep.metric(base, metric), sweep.metric(var, metric)
        ratio = v / b if claim.get("better") == "higher" else b / v
        out.append(ratio if v and b else float("nan"))
    return out


def _seconds(value: Any) -> float:
    """A scenario time ("30ms", or picoseconds as a number) in seconds (tables.py's reader)."""
    try:
        return _tables_module()._seconds(value)
    except ValueError as e:
        raise ClaimsError(str(e)) from None


def _mean(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def _spread(values: list[float], unit: str = "x", digits: int = 2) -> str:
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return "1 seed" if len(finite) == 1 else "-"
    return f"{min(finite):.{digits}f}-{max(finite):.{digits}f}{unit} ({len(finite)} seeds)"


def _side(talk: float, value: float, tol: float) -> str:
    if math.isfinite(value) and abs(value / talk - 1) <= tol:
        return "reproduced"
    if math.isfinite(value) and (value - 1) * (talk - 1) > 0:
        return "direction"
    return "contradicted"


def _order(values: list[float]) -> list[int]:
    return [int(math.copysign(1, b - a)) if b != a else 0 for a, b in zip(values, values[1:])]


def compute(claim: dict, sweeps: dict[str, Sweep], done: dict[str, Row], tol: float) -> Row:
    """One claim's row, from the sweeps (and, for `range`, the rows already computed)."""
    kind = claim["kind"]
    if kind in ("not_simulatable", "not_run"):
        verdict = "not simulatable" if kind == "not_simulatable" else "not run"
        return Row(None, "-", "-", verdict)
    if kind == "range":
        values = [done[i].value for i in claim["of"] if i in done and done[i].value is not None]
        if not values:
            return Row(None, "-", "-", "not run")
        low, high = claim["talk"]
        lo, hi = min(values), max(values)
        ok = abs(lo / low - 1) <= tol and abs(hi / high - 1) <= tol
        verdict = "reproduced" if ok else ("direction" if lo > 1 else "contradicted")
        return Row(hi, f"{lo:.2f}-{hi:.2f}x", f"{len(values)} claims", verdict)
    sweep = sweeps[claim["sweep"]]
    if kind == "owd_curve":  # the OWD-versus-drop curves: python/incast/drop_curve.py
        value, text, spread, verdict = drop_curve.claim_row(claim, sweeps[claim["sweep"]].dir)
        return Row(value, text, spread, verdict)
    if kind == "factor":
        per_seed = _factors(sweep, claim, claim["point"], claim["metric"])
        value = _mean(per_seed)
        return Row(value, f"{value:.2f}x", _spread(per_seed), _side(claim["talk"], value, tol))
    if kind in ("max_factor", "all_improve"):
        points = _points_of(claim)
        means = {
            (point, col): _mean(_factors(sweep, claim, point, col))
            for point in points
            for col in sweep.columns(claim["metric"])
        }
        pick = max if kind == "max_factor" else min
        key = pick(means, key=lambda c: means[c] if math.isfinite(means[c]) else -math.inf)
        value = means[key]
        point, col = key
        where = re.search(r"\[([^\]]+)\]", col)
        label = f" ({where.group(1)})" if where else ""
        if "points" in claim:
            label = f" ({point}{', ' + where.group(1) if where else ''})"
        over = f"{len(means)} columns" if len(points) == 1 else f"{len(means)} point-columns"
        spread = f"{min(means.values()):.2f}-{max(means.values()):.2f}x over {over}"
        if kind == "max_factor":
            verdict = _side(claim["talk"], value, tol)
        else:
            verdict = "reproduced" if value > 1 else "contradicted"
        return Row(value, f"{value:.2f}x{label}", spread, verdict)
    if kind == "series":
        talks = claim["talk"]
        per_point = [_factors(sweep, claim, p, claim["metric"]) for p in claim["points"]]
        values = [_mean(v) for v in per_point]
        if all(math.isfinite(v) and abs(v / t - 1) <= tol for v, t in zip(values, talks)):
            verdict = "reproduced"
        elif _order(values) == _order(talks) and all(v > 1 for v in values):
            verdict = "direction"
        else:
            verdict = "contradicted"
        spreads = "; ".join(_spread(v) for v in per_point)
        return Row(values[-1], " / ".join(f"{v:.2f}" for v in values), spreads, verdict)
    if kind == "near_zero":
        base = [
            sweep.metric(r, claim["metric"])
            for _, r in sweep.runs(claim["point"], claim["baseline"]).iterrows()
        ]
        var = [
            sweep.metric(r, claim["metric"])
            for _, r in sweep.runs(claim["point"], claim["variant"]).iterrows()
        ]
        b, v = _mean(base), _mean(var)
        fraction = claim.get("fraction", 0.1)
        verdict = "reproduced" if b > 0 and v <= fraction * b else "contradicted"
        text = f"{100 * v:.3f} % (baseline {100 * b:.3f} %)"
        return Row(v, text, _spread([100 * x for x in var], " %"), verdict)
    if kind == "cut":
        per_seed = _changes(sweep, claim)
        value = _mean(per_seed)
        verdict = _signed(claim["talk"], value, tol)
        return Row(value, f"{value:+.0f} %", _spread(per_seed, " %"), verdict)
    if kind == "value":
        return _value_row(claim, sweep, tol)
    if kind == "overhead":
        return _overhead_row(claim, sweep)
    if kind == "rises":
        return _rises_row(claim, sweep)
    if kind == "ratio":
        return _ratio_row(claim, sweep, tol)
    if kind in SERIES_KINDS:  # the IBM talk's kinds (section at the end)
        return SERIES_KINDS[kind](claim, sweep, tol)
    raise ClaimsError(f"claim {claim['id']}: unknown kind `{kind}`")


def _changes(sweep: Sweep, claim: dict) -> list[float]:
    """variant / baseline - 1 per seed (paired by seed), in percent."""
    out = []
    for base, var in sweep.pairs(claim, claim["point"]):
        b, v = sweep.metric(base, claim["metric"]), sweep.metric(var, claim["metric"])
        out.append(100 * (v / b - 1) if b else float("nan"))
    return out


def _signed(talk: float, value: float, tol: float) -> str:
    """A signed change (a cut is negative) against the talk's."""
    if math.isfinite(value) and abs(value / talk - 1) <= tol:
        return "reproduced"
    return "direction" if math.isfinite(value) and value * talk > 0 else "contradicted"


def _value_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    """`value`: one metric of the variant's runs (a share, a count), against the talk's."""
    scale, unit = float(claim.get("scale", 1)), claim.get("unit", "")
    per_seed = []
    for _, run in sweep.runs(claim["point"], claim["variant"]).iterrows():
        value = sweep.metric(run, claim["metric"])
        if "per" in claim:
            cols = [
                c
                for pattern in claim["per"]
                for c in ([pattern] if pattern in DERIVED else sweep.columns(pattern))
            ]
            total = sum(sweep.metric(run, c) for c in cols)
            value = value / total if total else float("nan")
        per_seed.append(scale * value)
    if not per_seed:
        raise ClaimsError(
            f"claim {claim['id']}: sweep {sweep.name} has no run of "
            f"{claim['point']}/{claim['variant']}"
        )
    value = _mean(per_seed)
    digits = int(claim.get("digits", 1))
    spread_digits = int(claim.get("spread_digits", 2))
    text, spread = f"{value:,.{digits}f}{unit}", _spread(per_seed, unit, spread_digits)
    if "within" in claim:
        low, high = claim["within"]
        verdict = "reproduced" if low <= value <= high else "contradicted"
        return Row(value, text, spread, verdict)
    talk = float(claim["talk"])
    if "tolerance_abs" in claim:
        close = abs(value - talk) <= float(claim["tolerance_abs"])
    else:
        close = math.isfinite(value) and abs(value / talk - 1) <= tol
    pivot = claim.get("pivot")
    if close:
        verdict = "reproduced"
    elif pivot is not None and (value - pivot) * (talk - pivot) > 0:
        verdict = "direction"
    else:
        verdict = "contradicted"
    return Row(value, text, spread, verdict)


def _overhead_row(claim: dict, sweep: Sweep) -> Row:
    """`overhead`: new messages per message saved, per seed (paired by seed)."""
    per_seed, sent, saved = [], [], []
    for base, var in sweep.pairs(claim, claim["point"]):
        new = sweep.metric(var, claim["metric"])
        fewer = sweep.metric(base, claim["saved"]) - sweep.metric(var, claim["saved"])
        sent.append(new)
        saved.append(fewer)
        per_seed.append(new / fewer if fewer > 0 else float("inf"))
    # The ratio of the seeds' means: a seed that saves almost nothing must not dominate.
    value = _mean(sent) / _mean(saved) if _mean(saved) > 0 else float("inf")
    shown = f"{value:.2f}" if math.isfinite(value) else "none saved"
    text = f"{shown} ({_mean(sent):,.0f} sent, {_mean(saved):+,.0f} PAUSE saved)"
    if value <= float(claim.get("below", 0.1)):
        verdict = "reproduced"
    else:
        verdict = "direction" if value < 1 else "contradicted"
    return Row(value, text, _spread(per_seed), verdict)


def _ratio_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    """`ratio`: the variant's mean over the baseline's, at one point (the seeds' spread: per
    seed, paired)."""
    scale, unit = float(claim.get("scale", 1)), claim.get("unit", "")
    pairs = sweep.pairs(claim, claim["point"])
    base = [sweep.metric(b, claim["metric"]) for b, _ in pairs]
    var = [sweep.metric(v, claim["metric"]) for _, v in pairs]
    value = scale * _mean(var) / _mean(base) if _mean(base) else float("nan")
    per_seed = [scale * v / b if b else float("nan") for b, v in zip(base, var)]
    digits = int(claim.get("digits", 2))
    text = f"{value:,.{digits}f}{unit}" if math.isfinite(value) else "- (baseline 0)"
    talk = float(claim["talk"])
    if "tolerance_abs" in claim:
        close = abs(value - talk) <= float(claim["tolerance_abs"])
    else:
        close = math.isfinite(value) and abs(value / talk - 1) <= tol
    pivot = float(claim.get("pivot", scale))
    if close:
        verdict = "reproduced"
    elif math.isfinite(value) and (value - pivot) * (talk - pivot) > 0:
        verdict = "direction"
    else:
        verdict = "contradicted"
    return Row(value, text, _spread(per_seed, unit), verdict)


def _rises_row(claim: dict, sweep: Sweep) -> Row:
    """`rises`: one variant's metric over `points`, in order (the mean over seeds at each)."""
    values = []
    for point in claim["points"]:
        runs = sweep.runs(point, claim["variant"])
        if runs.empty:
            raise ClaimsError(f"claim {claim['id']}: sweep {sweep.name} has no run of {point}")
        values.append(_mean([sweep.metric(r, claim["metric"]) for _, r in runs.iterrows()]))
    digits = int(claim.get("digits", 3))
    text = " / ".join(f"{v:,.{digits}f}" for v in values)
    steps = [b - a for a, b in zip(values, values[1:])]
    rises = all(d >= 0 for d in steps) and values[-1] > values[0]
    verdict = "reproduced" if rises else "contradicted"
    return Row(values[-1], text, f"{len(values)} points", verdict)


# -- files ---------------------------------------------------------------------------------


def load_claims(talk: str) -> dict:
    path = HERE / talk / "claims.toml"
    doc = tomllib.loads(path.read_text())
    ids = set()
    for i, claim in enumerate(doc.get("claim", [])):
        for key in ("id", "claim", "talk", "kind"):
            if key not in claim:
                raise ClaimsError(f"{path}: claim {i + 1} has no `{key}`")
        if claim["id"] in ids:
            raise ClaimsError(f"{path}: claim id `{claim['id']}` appears twice")
        ids.add(claim["id"])
        if claim["kind"] in ("not_simulatable", "not_run") and not claim.get("why"):
            raise ClaimsError(f"{path}: claim `{claim['id']}` ({claim['kind']}) needs a `why`")
    return doc


def _talk_text(claim: dict) -> str:
    """The talk's number as the table shows it: `2.4x`, `3-5x` (a range), `5.1 / 3.8` (a series)."""
    talk = claim["talk"]
    if claim["kind"] == "range":
        return f"{talk[0]}-{talk[1]}x"
    if claim["kind"] == "cut" and isinstance(talk, (int, float)):
        return f"{talk:+g} %"
    if claim["kind"] in ("value", "ratio") and isinstance(talk, (int, float)):
        return f"{talk:g}{claim.get('unit', '')}"
    if isinstance(talk, list):
        return " / ".join(str(t) for t in talk)
    return f"{talk}x" if isinstance(talk, (int, float)) else str(talk)


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


NO_SWEEP_KINDS = ("not_simulatable", "not_run", "range")


def _points_of(claim: dict) -> list[str]:
    return list(claim.get("points") or ([claim["point"]] if "point" in claim else []))


def rows(
    doc: dict, sweeps: dict[str, Sweep], old: pd.DataFrame | None, retarget: str | None = None
) -> pd.DataFrame:
    """Every claim's row: computed where its sweep is given, else kept from `old`.

    With `retarget`, every claim that reads a sweep reads the sweep of that name instead (the
    small experiment has the full one's point labels); claims whose points it lacks, and claims
    with nothing to compute, are left out.
    """
    tol = float(doc.get("tolerance", 0.25))
    done: dict[str, Row] = {}
    out = []
    commit = _commit()
    for claim in doc["claim"]:
        reads = claim["kind"] not in NO_SWEEP_KINDS
        if retarget is not None:
            if claim["kind"] in ("not_simulatable", "not_run"):
                continue
            if reads:
                present = set(sweeps[retarget].points["point"])
                if not all(point in present for point in _points_of(claim)):
                    continue
                claim = {**claim, "sweep": retarget}
        sweep = claim.get("sweep")
        if not reads or sweep in sweeps:
            row = compute(claim, sweeps, done, tol)
            done[claim["id"]] = row
            at = commit if reads or claim["kind"] == "range" else ""
            record = {"incast": row.text, "spread": row.spread, "verdict": row.verdict}
            record["computed_at"] = at
        elif old is not None and claim["id"] in set(old["id"]):
            prev = old[old["id"] == claim["id"]].iloc[0]
            record = {k: prev[k] for k in ("incast", "spread", "verdict", "computed_at")}
            value = re.match(r"[\d.]+", str(prev["incast"]))
            done[claim["id"]] = Row(float(value.group()) if value else None, "", "", "")
        else:
            record = {"incast": "-", "spread": "-", "verdict": "not run", "computed_at": ""}
        why = "" if record["verdict"] == "reproduced" else " ".join(claim.get("why", "").split())
        out.append(
            {
                "id": claim["id"],
                "claim": " ".join(claim["claim"].split()),
                "talk": _talk_text(claim),
                **record,
                "why": why,
                "sweep": sweep or "-",
            }
        )
    return pd.DataFrame(out, columns=COLUMNS)


def markdown(table: pd.DataFrame) -> str:
    counts = table["verdict"].value_counts()
    tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
    head = "| id | claim | talk | incast | spread | verdict | why |"
    lines = [f"{len(table)} claims: {tally}.", "", head, "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        cells = [r.id, r.claim, r.talk, r.incast, r.spread, f"**{r.verdict}**", r.why]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def replace_block(text: str, tag: str, body: str) -> str:
    start, end = f"<!-- claims: {tag} -->", f"<!-- /claims: {tag} -->"
    if start not in text or end not in text:
        raise ClaimsError(f"the README has no `{start}` ... `{end}` block")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("talk", help="the reproduction's folder under scenarios/, e.g. smart_pause")
    ap.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a finished sweep, named as the claims' `sweep` (repeat)",
    )
    ap.add_argument("--write", action="store_true", help="write claims.csv and the README block")
    ap.add_argument("--small-csv", type=Path, help="write the `small` sweep's rows to this file")
    args = ap.parse_args(argv)
    try:
        doc = load_claims(args.talk)
        sweeps = {}
        for spec in args.sweep:
            name, _, directory = spec.partition("=")
            if not directory:
                raise ClaimsError(f"--sweep {spec!r}: write NAME=DIR, e.g. full=~/sp_full")
            sweeps[name] = Sweep(name, Path(directory).expanduser())
        if args.small_csv:
            if "small" not in sweeps:
                raise ClaimsError("--small-csv needs --sweep small=DIR")
            table = rows(doc, sweeps, None, retarget="small")
            table.drop(columns=["computed_at"]).to_csv(args.small_csv, index=False)
            print(f"wrote {args.small_csv} ({len(table)} claims)")
            return 0
        csv = HERE / args.talk / "claims.csv"
        old = pd.read_csv(csv, keep_default_na=False) if csv.exists() else None
        table = rows(doc, sweeps, old)
        body = markdown(table)
        if not args.write:
            print(body)
            return 0
        table.to_csv(csv, index=False)
        readme = HERE / args.talk / "README.md"
        readme.write_text(replace_block(readme.read_text(), args.talk, body))
        print(f"wrote {csv} and the claim table of {readme}")
        return 0
    except (ClaimsError, KeyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


# -- the IBM ECM/E2CM talk (scenarios/ibm_ecm): time-series metrics and their kinds ----------
#
# The talk's claims are about curves over time (aggregate and hot-port throughput, the hot queue)
# and their trends over burst size, hotspot degree and PAUSE. `ts.*` metrics are read from each
# run's queues table (every switch port's queue and cumulative tx_bytes, sampled every
# `queue_sample_interval`) by scenarios/tables.py (`ibm_series_metrics`, which shares its reader
# with the README's time-series table); the hotspot's window comes from the run's scenario:
#
# - `ts.tp_before`: aggregate throughput (Gb/s) from 20 % of the hotspot's start to its start;
#   `ts.tp_during`, `ts.tp_after`: over the hotspot's window, and from its end to the run's end;
#   `ts.tp_hot_during`: the hot port's throughput during the hotspot.
# - `ts.q_hot_mean`, `ts.q_hot_max`: the hot queue (KB) during the hotspot, mean and peak.
# - `ts.recovery_ms`: from the hotspot's start until the aggregate throughput (5 ms windows),
#   having first fallen below 90 % of `tp_before`, is first back above it; 0 when it never fell
#   below; the hotspot's duration when it is not back before the hotspot ends (a lower bound).
# - `ts.q_settle_ms`: the end of the hot queue's first overshoot: from the hotspot's start until
#   the queue (1 ms means), after its peak, is below 80 % of that peak; the duration if never.
# - `ts.overshoot@W`: the largest aggregate throughput in windows of W (`200us`, `1ms`) from the
#   hotspot's start to the run's end, over `tp_before` (1: none; above 1: above the offered load).
#
# Kinds (each reads `points`, `variants`, `metric`; the mean over seeds per point and variant):
#
# - `trend`: the metric over `points` in their order, for every variant, against `talk` =
#   "falls" or "rises": reproduced when every variant's series never moves against it and its
#   last point is beyond its first; direction when last-versus-first is right for every variant
#   but some step goes against; contradicted otherwise.
# - `minimum_at`: reproduced when the variant's metric is lowest at `at` among `points`.
# - `all_above`: reproduced when every variant's metric at `point` (or `points`) is at least
#   `threshold`.
# - `pause_close` / `pause_higher`: `points` lists (no PAUSE, PAUSE) pairs in turn; the largest
#   relative difference |pause / nopause - 1| over pairs and variants, reproduced at most
#   `limit`; / the ratio pause / nopause, reproduced when above 1 for every pair and variant.

SERIES_PREFIX = "ts."
_SERIES_CACHE: dict[tuple[Path, str], float] = {}


def series_metric(run_dir: Path, name: str) -> float:
    """One `ts.*` metric of one run (all of a run's are computed together and cached)."""
    key = (run_dir, name)
    if key not in _SERIES_CACHE:
        for metric, value in _tables_module().ibm_series_metrics(run_dir).items():
            _SERIES_CACHE[(run_dir, metric)] = value
    if key not in _SERIES_CACHE:
        raise ClaimsError(f"no time-series metric `{name}` (the list: scenarios/claims.py, end)")
    return _SERIES_CACHE[key]


def _per_point(sweep: Sweep, metric: str, point: str, variant: str) -> list[float]:
    runs = sweep.runs(point, variant)
    if runs.empty:
        raise ClaimsError(f"sweep {sweep.name} has no run of {point}/{variant}")
    return [sweep.metric(run, metric) for _, run in runs.iterrows()]


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _trend_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    sign = {"falls": -1, "rises": 1}[claim["talk"]]
    texts, spreads, monotone, ends = [], [], True, True
    for variant in claim["variants"]:
        runs = [_per_point(sweep, claim["metric"], p, variant) for p in claim["points"]]
        means = [_mean(r) for r in runs]
        steps = [b - a for a, b in zip(means, means[1:])]
        monotone &= all(step * sign >= 0 for step in steps)
        ends &= (means[-1] - means[0]) * sign > 0
        texts.append(f"{variant} " + " / ".join(_number(m) for m in means))
        spreads.append(
            f"{variant} {min(min(r) for r in runs):,.3g}-{max(max(r) for r in runs):,.3g}"
        )
    verdict = "reproduced" if monotone and ends else ("direction" if ends else "contradicted")
    seeds = len(sweep.runs(claim["points"][0], claim["variants"][0]))
    return Row(
        None,
        "; ".join(texts),
        f"{'; '.join(spreads)} ({seeds} seed{'s' if seeds != 1 else ''})",
        verdict,
    )


def _minimum_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    variant = claim["variant"]
    means = {p: _mean(_per_point(sweep, claim["metric"], p, variant)) for p in claim["points"]}
    low = min(means, key=means.get)
    text = f"{variant} " + " / ".join(_number(means[p]) for p in claim["points"])
    verdict = "reproduced" if low == claim["at"] else "contradicted"
    return Row(means[claim["at"]], text + f" (lowest at {low})", "-", verdict)


def _all_above_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    values = {
        f"{p} {v}" if len(_points_of(claim)) > 1 else v: _mean(
            _per_point(sweep, claim["metric"], p, v)
        )
        for p in _points_of(claim)
        for v in claim["variants"]
    }
    low = min(values.values())
    text = ", ".join(f"{v} {_number(x)}" for v, x in values.items())
    verdict = "reproduced" if low >= float(claim["threshold"]) else "contradicted"
    return Row(low, text, "-", verdict)


def _pause_pairs(claim: dict, sweep: Sweep) -> list[tuple[str, str, float, float]]:
    points = claim["points"]
    if len(points) % 2:
        raise ClaimsError(f"claim {claim['id']}: `points` must list (no PAUSE, PAUSE) pairs")
    out = []
    for off, on in zip(points[::2], points[1::2]):
        for variant in claim["variants"]:
            a = _mean(_per_point(sweep, claim["metric"], off, variant))
            b = _mean(_per_point(sweep, claim["metric"], on, variant))
            out.append((on, variant, a, b))
    return out


def _pause_close_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    pairs = _pause_pairs(claim, sweep)
    worst = max(pairs, key=lambda x: abs(x[3] / x[2] - 1))
    change = 100 * (worst[3] / worst[2] - 1)
    limit = 100 * float(claim.get("limit", tol))
    text = f"at most {change:+.0f} % ({worst[0]}, {worst[1]}: {worst[2]:,.0f} -> {worst[3]:,.0f})"
    changes = sorted(abs(100 * (b / a - 1)) for *_, a, b in pairs)
    spread = f"{len(pairs)} pairs; median change {changes[len(changes) // 2]:.0f} %"
    verdict = "reproduced" if abs(change) <= limit else "contradicted"
    return Row(change, text, spread, verdict)


def _pause_higher_row(claim: dict, sweep: Sweep, tol: float) -> Row:
    pairs = _pause_pairs(claim, sweep)
    ratios = [b / a for *_, a, b in pairs]
    off, on = _mean([a for *_, a, _ in pairs]), _mean([b for *_, b in pairs])
    text = f"{on:.3f} with PAUSE, {off:.3f} without"
    spread = f"ratio {min(ratios):.3f}-{max(ratios):.3f} over {len(pairs)} pairs"
    if all(r > 1 for r in ratios):
        verdict = "reproduced"
    else:
        verdict = "direction" if on > off else "contradicted"
    return Row(on / off, text, spread, verdict)


SERIES_KINDS = {
    "trend": _trend_row,
    "minimum_at": _minimum_row,
    "all_above": _all_above_row,
    "pause_close": _pause_close_row,
    "pause_higher": _pause_higher_row,
}


if __name__ == "__main__":
    sys.exit(main())
