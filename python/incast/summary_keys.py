"""The keys of a run's summary: `flatten_summary` (the nested summary as the
points table's columns, `buckets[<1MB].slowdown.mean`) and `SummaryKeys`, the
keys an experiment's runs will have, learnt without running them (what
`load_experiment` checks `[[compare]]` and `[report]` metrics against)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import keypath
from .buckets import bucket_rows
from .canonical import canonical_json

if TYPE_CHECKING:
    from .experiment import Run

#: Summary keys already present as columns, or not results.
_SKIP_SUMMARY = {"scenario", "seed"}
#: The points table's column beside the flattened summary (`_queue_stats`).
QUEUE_MAX = "queues.max_bytes"


def flatten_summary(summary: Mapping) -> dict[str, Any]:
    """`{"drops": {"packets": 3}, "buckets": [{"label": "<1MB", "slowdown": {...}}]}`
    -> `{"drops.packets": 3, "buckets[<1MB].slowdown.mean": ...}`."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, list):
            if value and all(isinstance(b, Mapping) and "label" in b for b in value):
                for b in value:
                    walk(f"{prefix}[{b['label']}]", {k: v for k, v in b.items() if k != "label"})
            else:
                out[prefix] = canonical_json(value)
        else:
            out[prefix] = value

    for k, v in summary.items():
        if k not in _SKIP_SUMMARY:
            walk(str(k), v)
    return out


# ---------------------------------------------------------------------------
# The keys a summary will have (checked before the runs).
# ---------------------------------------------------------------------------

#: A tiny run with what a summary at time zero lacks: finished flows (their
#: statistics), an incast beside other traffic (`buckets_background`) and a
#: flow stopped at its stop time (`stopped_flows`).
_REFERENCE = {
    "name": "summary-keys",
    "seed": 1,
    "topology": {"kind": "single_switch", "hosts": 4, "link_rate": "10Gbps", "link_delay": "1us"},
    "workload": {
        "flows": [
            {"src": 0, "dst": 3, "size": "10KB", "start": "0us"},
            {"src": 1, "dst": 2, "start": "0us", "stop": "50us"},
        ],
        "incast": [{"fan_in": 2, "bytes_per_sender": "10KB", "times": ["10us"]}],
    },
}
_BUCKET_KEY = re.compile(r"^([^\[]*)\[([^\]]*)\](.*)$")


def _summary_of(scenario_json: str, base_dir: str, run: bool) -> dict:
    from . import _core

    sim = _core.Simulation(scenario_json, "json", base_dir, None)
    if run:
        from ._runner import drive

        drive(sim)
    summary = sim.finish()["summary"]
    return json.loads(summary) if isinstance(summary, (str, bytes)) else dict(summary)


@functools.lru_cache(maxsize=1)
def _reference_summary() -> dict:
    return _summary_of(canonical_json(_REFERENCE), ".", run=True)


def _bucket_labels(summary: Mapping) -> list[str]:
    return [row.label for row in bucket_rows(summary, overall=False)]


#: Last parts of summary keys that describe a bucket rather than measure anything.
_NOT_METRICS = frozenset({"label", "lo", "hi"})


class SummaryKeys:
    """The flattened summary keys (as in points.csv) the runs of an experiment
    will have, learnt without running them: each sampled run's scenario is built
    and finished at time zero, which gives every section its configuration
    makes (PFC, edge pausing, mechanisms, its size buckets and congestion
    controls), with null statistics; a tiny reference run supplies the rest
    (the statistics' fields, `buckets_background`, `stopped_flows`)."""

    def __init__(self) -> None:
        reference = _reference_summary()
        self._reference = flatten_summary(reference)
        self._reference_labels = set(_bucket_labels(reference))
        overall = reference["overall"]["slowdown"]
        self._stat_fields = sorted(overall)
        self._keys: set[str] = set()
        self._summaries: list[dict] = []

    @property
    def sampled(self) -> int:
        return len(self._summaries)

    def add_run(self, run: Run) -> None:
        """Learn the keys of `run`'s configuration (a run that cannot be built
        is skipped: the sweep reports it)."""
        try:
            summary = _summary_of(run.scenario_json(), run.base_dir, run=False)
        except Exception:  # noqa: BLE001 - any build failure is the sweep's to report
            return
        self._summaries.append(summary)
        flat = flatten_summary(summary)
        labels = _bucket_labels(summary)
        self._keys |= set(flat)
        for key in self._reference:
            bucket_key = _BUCKET_KEY.match(key)
            if bucket_key and bucket_key.group(2) in self._reference_labels:
                head, tail = bucket_key.group(1), bucket_key.group(3)
                self._keys |= {f"{head}[{label}]{tail}" for label in labels}
            else:
                self._keys.add(key)
        # A null leaf is a statistic no flow gave yet: its fields are keys too.
        for key, value in flat.items():
            if value is None and key.rsplit(".", 1)[-1] not in _NOT_METRICS:
                self._keys |= {f"{key}.{f}" for f in self._stat_fields}

    def names(self, *, in_summary: bool) -> set[str]:
        """Every metric key known so far (with the points table's own column unless
        `in_summary`, which is what a comparison reads); a bucket's label and bounds
        describe it and are no metric."""
        metrics = {k for k in self._keys if k.rsplit(".", 1)[-1] not in _NOT_METRICS}
        return metrics if in_summary else metrics | {QUEUE_MAX}

    def knows(self, metric: str, *, in_summary: bool) -> bool:
        if metric.rsplit(".", 1)[-1] in _NOT_METRICS:
            return False
        if metric in self.names(in_summary=in_summary):
            return True
        return in_summary and any(self._resolves(s, metric) for s in self._summaries)

    def _resolves(self, summary: Mapping, path: str) -> bool:
        """A key path into the nested summary (`buckets.0.slowdown.mean`) that
        reaches a value, or a null statistic and one of its fields."""
        node: Any = summary
        parts = keypath.split(path)
        for i, part in enumerate(parts):
            if node is None:
                return i == len(parts) - 1 and part in self._stat_fields
            try:
                node = keypath.get(node, part)
            except keypath.KeyPathError:
                return False
        return not isinstance(node, (Mapping, list))
