"""The checks `load_experiment` makes beyond each key's own: how many runs the
experiment expands to (counted before expanding), names and labels fit to print
and to put in file names, the metrics `[[compare]]` and `[report]` name, and a
"did you mean" for unknown keys. Each returns or appends a problem message."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import keypath
from .canonical import canonical_json

if TYPE_CHECKING:
    from .experiment import Comparison, Run, _PointSpec

#: Metrics read per size bucket from the summary (with the overall row as "all").
BUCKET_METRICS = ("slowdown", "fct_us")
#: The most runs one experiment may expand to (its product is counted first).
MAX_RUNS = 10_000
#: The longest scenario name the core accepts (its MAX_NAME_CHARS): a run's
#: name, made from the experiment's name, point label and variant, is cut to it.
SCENARIO_NAME_LIMIT = 128


def check_label(where: str, label: str, problems: list[str]) -> None:
    """A name or label printed and written into file names: no control
    characters, and an experiment's name no longer than a scenario's."""
    if keypath.printable(label) != label:
        problems.append(
            f"{where}: `{keypath.shorten(keypath.printable(label))}` holds a control character "
            "(an escape, a tab or a line break); use letters, digits and punctuation"
        )
    elif where == "name" and len(label) > SCENARIO_NAME_LIMIT:
        problems.append(
            f"name: is {len(label):,} characters long, more than the {SCENARIO_NAME_LIMIT} a "
            "name may have; shorten it, and put the rest in `description`"
        )


def run_count_problem(
    specs: list[_PointSpec],
    params: list[str],
    param_values: list[list[Any]],
    top_seeds: list[int] | None,
    seeds_from_caller: bool,
) -> str | None:
    """The problem of an experiment of more than MAX_RUNS runs (counted before
    anything is expanded), naming the count and the keys whose sizes multiply
    to it; None when it has at most MAX_RUNS."""
    combos = math.prod(len(v) for v in param_values)
    seeds_key = "seeds (--seeds)" if seeds_from_caller else "seeds"
    total, largest_count = 0, -1
    largest: list[tuple[str, int]] = []
    for spec in specs:
        n_seeds = len(spec.seeds or top_seeds or [0])
        count = combos * len(spec.variants) * n_seeds
        total += count
        if count > largest_count:  # the factors of the point with the most runs
            largest_count = count
            largest = [(f"parameters.{p}", len(v)) for p, v in zip(params, param_values)]
            largest.append(("variants", len(spec.variants)))
            largest.append((f"points[{spec.index}].seeds" if spec.seeds else seeds_key, n_seeds))
    if total <= MAX_RUNS:
        return None
    if len(specs) > 1:
        largest.append(("points", len(specs)))
    key, size = max(largest, key=lambda item: item[1])
    factors = " x ".join(f"{n:,} ({k})" for k, n in largest)
    return (
        f"{key}: the experiment expands to {total:,} runs, more than the {MAX_RUNS:,} one "
        f"experiment may have ({factors}); give {key} fewer values than its {size:,}, "
        "or split the experiment into several files"
    )


def check_metrics(
    runs: list[Run], comparisons: list[Comparison], report_metrics: list[str], problems: list[str]
) -> None:
    """Every `[[compare]].metric` and `[report].metrics` entry must be a key of
    the runs' summaries (or points table): checked against the summary each
    run's configuration gives (`summary_keys.SummaryKeys`), sampling runs of other
    configurations only while some name is still unknown."""
    from .summary_keys import SummaryKeys

    wanted = [
        (f"compare[{i}].metric", c.metric, True)
        for i, c in enumerate(comparisons)
        if not c.bucketed
    ]
    wanted += [(f"report.metrics[{i}]", m, False) for i, m in enumerate(report_metrics)]
    if not wanted or not runs:
        return
    keys = SummaryKeys()
    pending = wanted
    for run in _configuration_samples(runs):
        keys.add_run(run)
        pending = [w for w in pending if not keys.knows(w[1], in_summary=w[2])]
        if not pending:
            return
    if not keys.sampled:  # no run could be built: the sweep will say why
        return
    for where, metric, in_summary in pending:
        known = keys.names(in_summary=in_summary) | (set(BUCKET_METRICS) if in_summary else set())
        problems.append(
            f"{where}: {metric!r} is not a metric of these runs' summaries"
            f"{did_you_mean(metric, known)} (keys as in points.csv: overall.slowdown.p99, "
            f"drops.packets, buckets[<label>].fct_us.mean, ...)"
        )


#: At most this many distinct configurations are built to learn summary keys.
_MAX_KEY_SAMPLES = 64


def _configuration_samples(runs: list[Run]) -> Iterator[Run]:
    """Runs of distinct configurations, the likeliest to differ in their summary
    sections first: the first run of each variant, then of each point and
    variant, then any other whose scenario differs by more than its seed."""
    seen: set[str] = set()

    def fresh(run: Run) -> bool:
        shape = canonical_json({k: v for k, v in run.scenario.items() if k not in ("seed", "name")})
        if shape in seen:
            return False
        seen.add(shape)
        return True

    firsts: dict[Any, Run] = {}
    for run in runs:
        firsts.setdefault(run.variant, run)
    for run in runs:
        firsts.setdefault((run.point, run.variant), run)
    n = 0
    for run in [*firsts.values(), *runs]:
        if n >= _MAX_KEY_SAMPLES:
            return
        if fresh(run):
            n += 1
            yield run


def unknown_key(where: str, key: str, known: tuple[str, ...]) -> str:
    """The problem of an unknown key: a suggestion when one is close, and the known keys."""
    where = keypath.shorten(keypath.printable(where))
    suggestion = did_you_mean(str(key), known)
    return f"{where}: unknown key{suggestion} (known: {', '.join(known)})"


def did_you_mean(name: str, known: Any) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
