"""Experiments: one base scenario, varied by key path, in named variants, over seeds.

An experiment file (TOML) says what to run and what to compare:

    name = "buffers"
    base = "../scenarios/incast_single_switch.toml"   # or an inline [base] table
    seeds = [1, 2, 3]

    [parameters]                 # full product over key paths
    switch.buffer = ["1MB", "2MB", "4MB"]

    [variants.dctcp]             # named override sets (empty = the base as is)
    [variants.newreno]
    transport.cc = "newreno"

    [[compare]]                  # improvement factors, baseline / variant
    baseline = "newreno"
    metric = "slowdown"
    stats = ["mean", "p99"]

`[[points]]` lists points instead of (or besides) a product: each is an override
set with an optional `label`, its own `seeds`, a subset of `variants`, another
named `base` (from `[bases]`) and `unset` (key paths to remove first). A run is
one (point, parameter values, variant, seed); its scenario is the base with the
point's overrides, then the parameter values, then the variant's overrides, then
the seed applied (`incast.keypath` says how overrides apply).

`load_experiment` counts the runs first (at most `MAX_RUNS`, 10,000: a larger
product is refused with its count and the key that makes it, before anything is
expanded), expands every run and validates each one with the core before
anything runs; all problems are reported together, each naming the run and the
key. The metrics `[[compare]]` and `[report]` name are checked against the keys
the runs' summaries will have. Each run carries its fully resolved (normalized)
scenario and a stable hash of it, which names its result directory.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import keypath
from .canonical import canonical_json, name_hash
from .experiment_checks import (
    BUCKET_METRICS,
    MAX_RUNS,
    SCENARIO_NAME_LIMIT,
    check_label,
    check_metrics,
    did_you_mean,
    run_count_problem,
    unknown_key,
)

#: Keys of a `[[points]]` entry that are not scenario overrides.
POINT_KEYS = ("label", "seeds", "variants", "base", "unset")
#: Keys of a `[variants.NAME]` table that are not scenario overrides.
VARIANT_KEYS = ("unset",)
TOP_KEYS = (
    "name",
    "description",
    "base",
    "bases",
    "seeds",
    "parameters",
    "points",
    "variants",
    "compare",
    "report",
)
COMPARE_KEYS = ("name", "baseline", "variants", "metric", "stats", "buckets", "points", "better")
BUCKET_SETS = {"buckets": "buckets", "background": "buckets_background"}
DEFAULT_VARIANT = "base"
#: Metrics drawn against each parameter by default.
DEFAULT_REPORT_METRICS = ("overall.slowdown.mean", "overall.slowdown.p99")
#: The largest seed (the core's seeds are unsigned 64-bit integers).
MAX_SEED = 2**64 - 1
#: Names on disk made from labels are at most this long (see `bounded_name`).
NAME_LIMIT = 80


class ExperimentError(ValueError):
    """An experiment file that cannot be expanded or whose runs do not validate.
    `problems` lists every message (each names the run and the key)."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        shown = problems[:30]
        more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
        super().__init__(f"{source}: {len(problems)} problem(s)\n  " + "\n  ".join(shown) + more)


@dataclass(frozen=True)
class Comparison:
    """A metric of each variant against a baseline (factor = baseline / variant
    when lower is better), per point and size bucket, over seeds."""

    name: str
    baseline: str
    variants: tuple[str, ...]
    metric: str
    stats: tuple[str, ...]
    buckets: str
    points: tuple[str, ...] | None
    better: str

    @property
    def bucketed(self) -> bool:
        return self.metric in BUCKET_METRICS


@dataclass
class Run:
    """One simulation of a sweep."""

    index: int
    point: str
    variant: str
    seed: int
    #: What this run sets beyond the base (key path -> value): the point's
    #: overrides and its parameter values (the variant is its own column).
    params: dict
    #: The scenario before validation (base + overrides), as plain data.
    raw: dict
    #: The validated scenario with every default filled in.
    scenario: dict
    base_dir: str
    hash: str

    @property
    def label(self) -> str:
        return f"{self.point}/{self.variant}/seed{self.seed}"

    @property
    def dirname(self) -> str:
        return f"{safe_name(self.point)}.{safe_name(self.variant)}.s{self.seed}-{self.hash[:12]}"

    def scenario_json(self) -> str:
        return canonical_json(self.scenario)


@dataclass
class Experiment:
    name: str
    description: str
    source: str
    runs: list[Run]
    points: list[str]
    variants: list[str]
    parameters: list[str]
    comparisons: list[Comparison]
    report_metrics: tuple[str, ...] = DEFAULT_REPORT_METRICS
    param_columns: list[str] = field(default_factory=list)


def scenario_hash(scenario: Mapping) -> str:
    """A stable hash of a fully resolved scenario (sha256 of its canonical JSON)."""
    return hashlib.sha256(canonical_json(scenario).encode("utf-8")).hexdigest()


def clean_name(text: str) -> str:
    """`text` with every run of characters unsafe in a file name replaced by "_"."""
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", str(text)).strip("._") or "x"


def safe_name(text: str) -> str:
    """`clean_name` cut to NAME_LIMIT characters (the parts of a run directory's
    name, which its hash keeps apart)."""
    return clean_name(text)[:NAME_LIMIT]


def bounded_name(name: str, limit: int = NAME_LIMIT) -> str:
    """`name` (already safe in a file name) when it has at most `limit`
    characters, else a readable prefix of it, "~" and a hash of the whole, so
    two long names that share a prefix stay apart. Short names are unchanged."""
    if len(name) <= limit:
        return name
    return f"{name[: limit - 11]}~{name_hash(name)}"


def describe_runs(experiment: Experiment) -> str:
    """How the runs are made up: "144 runs (24 points x 6 variants x 1 seed)" when
    every point runs every variant and seed, else the counts of each."""
    from .fmt import format_count as plural

    runs = experiment.runs
    n_points = len(experiment.points)
    n_variants = len({r.variant for r in runs})
    n_seeds = len({r.seed for r in runs})
    counts = (plural(n_points, "point"), plural(n_variants, "variant"), plural(n_seeds, "seed"))
    if n_points * n_variants * n_seeds == len(runs):
        return f"{plural(len(runs), 'run')} ({' x '.join(counts)})"
    return (
        f"{plural(len(runs), 'run')} over {counts[0]}, {counts[1]} and {counts[2]} "
        "(not every point runs every variant and seed)"
    )


def value_label(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return canonical_json(value)


def _load_toml_text(text: str, source: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(source, [f"not valid TOML: {e}"]) from None


def _read_scenario_file(path: Path, source: str, key: str) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ExperimentError(source, [f"{key}: cannot read {path}: {e.strerror or e}"]) from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ExperimentError(source, [f"{key}: {path} is not valid JSON: {e}"]) from None
    return _load_toml_text(text, f"{source}: {key} ({path})")


def _resolve_base(value: Any, here: Path, source: str, key: str) -> tuple[dict, str]:
    """(scenario dict, base directory) of a base given as a path or inline table."""
    if isinstance(value, str):
        path = (here / value).resolve()
        return _read_scenario_file(path, source, key), str(path.parent)
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value)), str(here.resolve())
    raise ExperimentError(
        source, [f"{key}: give a scenario file path (a string) or an inline table"]
    )


def _seeds(value: Any, where: str, problems: list[str]) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    ):
        problems.append(f"{where}: seeds must be a non-empty list of integers >= 0, e.g. [1, 2, 3]")
        return None
    if max(value) > MAX_SEED:
        problems.append(f"{where}: {max(value)} is more than the largest seed, {MAX_SEED}")
        return None
    if len(set(value)) != len(value):
        problems.append(f"{where}: seeds repeat a value: {value}")
    return list(value)


def _string_list(value: Any, where: str, problems: list[str]) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: expected a list of names")
        return None
    return list(value)


def _parse_compare(
    i: int, raw: Any, variants: list[str], points: list[str], problems: list[str]
) -> Comparison | None:
    where = f"compare[{i}]"
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: each [[compare]] entry is a table")
        return None
    for k in raw:
        if k not in COMPARE_KEYS:
            problems.append(unknown_key(f"{where}.{k}", k, COMPARE_KEYS))
    baseline = raw.get("baseline")
    if baseline not in variants:
        problems.append(
            f"{where}.baseline: {baseline!r} is not a variant (variants: {', '.join(variants)})"
        )
        return None
    names = _string_list(raw.get("variants"), f"{where}.variants", problems)
    if names is None:
        names = [v for v in variants if v != baseline]
    for v in names:
        if v not in variants:
            problems.append(f"{where}.variants: {v!r} is not a variant")
    metric = raw.get("metric", "slowdown")
    if not isinstance(metric, str) or not metric:
        problems.append(f"{where}.metric: a metric name (slowdown, fct_us) or a summary key path")
        metric = "slowdown"
    stats = _string_list(raw.get("stats"), f"{where}.stats", problems) or ["mean", "p99"]
    for stat in stats:
        if stat not in STATS:
            problems.append(
                f"{where}.stats: {stat!r} is not a statistic{did_you_mean(stat, STATS)} "
                f"(one of {', '.join(STATS)})"
            )
    buckets = raw.get("buckets", "buckets")
    if buckets not in BUCKET_SETS:
        problems.append(f"{where}.buckets: {buckets!r}; use one of {', '.join(BUCKET_SETS)}")
        buckets = "buckets"
    only = _string_list(raw.get("points"), f"{where}.points", problems)
    for p in only or []:
        if p not in points:
            problems.append(f"{where}.points: {p!r} is not a point label")
    better = raw.get("better", "lower")
    if better not in ("lower", "higher"):
        problems.append(f"{where}.better: 'lower' (factor = baseline / variant) or 'higher'")
        better = "lower"
    name = raw.get("name") or f"{metric}_vs_{baseline}"
    return Comparison(
        name=str(name),
        baseline=baseline,
        variants=tuple(v for v in names if v in variants),
        metric=metric,
        stats=tuple(stats),
        buckets=buckets,
        points=tuple(only) if only is not None else None,
        better=better,
    )


def _product(parameters: Mapping, problems: list[str]) -> tuple[list[str], list[list[Any]]]:
    """The parameter key paths and, for each, its list of values."""
    paths, values = [], []
    for path, vals in keypath.flatten(parameters):
        if path == "seed":
            problems.append("parameters.seed: list the seeds as seeds = [...] at the top")
            continue
        if not isinstance(vals, list) or not vals:
            problems.append(f"parameters.{path}: give a non-empty list of values")
            continue
        paths.append(path)
        values.append(vals)
    return paths, values


@dataclass
class _PointSpec:
    index: int
    label: str
    base: str
    body: dict
    unsets: list
    seeds: list | None
    variants: list


def _read_document(source: str | os.PathLike[str] | Mapping) -> tuple[dict, Path, str]:
    """(the experiment as a dict, the directory paths resolve against, its origin)."""
    if isinstance(source, Mapping):
        return dict(source), Path.cwd(), "<experiment>"
    text_or_path = os.fspath(source)
    p = Path(text_or_path)
    if "\n" not in text_or_path and p.suffix.lower() in (".toml", ".json"):
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, ValueError) as e:
            reason = getattr(e, "strerror", None) or e
            raise ExperimentError(str(p), [f"cannot read: {reason}"]) from None
        if p.suffix.lower() == ".json":
            try:
                doc = json.loads(text)
            except (ValueError, RecursionError) as e:
                raise ExperimentError(str(p), [f"not valid JSON: {e}"]) from None
            if not isinstance(doc, dict):
                raise ExperimentError(str(p), ["not an experiment: a JSON object belongs here"])
            return doc, p.resolve().parent, str(p)
        return _load_toml_text(text, str(p)), p.resolve().parent, str(p)
    return _load_toml_text(text_or_path, "<experiment>"), Path.cwd(), "<experiment>"


def _parse_variants(doc: dict, problems: list[str]) -> dict[str, tuple[dict, list]]:
    """name -> (overrides, unsets); one empty variant "base" when there are none."""
    raw = doc.get("variants")
    if raw is None:
        raw = {DEFAULT_VARIANT: {}}
    if not isinstance(raw, Mapping) or not raw:
        problems.append("variants: a table of named override tables ([variants.NAME])")
        raw = {DEFAULT_VARIANT: {}}
    variants: dict[str, tuple[dict, list]] = {}
    for vname, vtable in raw.items():
        check_label(f"variants.{keypath.printable(vname)}", vname, problems)
        if not isinstance(vtable, Mapping):
            problems.append(f"variants.{vname}: expected a table of overrides")
            continue
        body = {k: v for k, v in vtable.items() if k not in VARIANT_KEYS}
        unsets = _string_list(vtable.get("unset"), f"variants.{vname}.unset", problems) or []
        variants[vname] = (body, unsets)
    return variants


def _parse_points(
    doc: dict, bases: dict, variants: dict, seeds_given: bool, problems: list[str]
) -> list[_PointSpec]:
    raw_points = doc.get("points") or [{}]
    if not isinstance(raw_points, list):
        problems.append("points: an array of tables ([[points]])")
        raw_points = [{}]
    specs: list[_PointSpec] = []
    labels: list[str] = []
    for i, pt in enumerate(raw_points):
        if not isinstance(pt, Mapping):
            problems.append(f"points[{i}]: each [[points]] entry is a table")
            continue
        label = str(pt.get("label") or (f"p{i}" if len(raw_points) > 1 else "point"))
        where = f"points[{i}] ({label})"
        if label in labels:
            problems.append(f"{where}.label: {label!r} is used by another point")
        labels.append(label)
        bname = pt.get("base", "")
        if bname not in bases:
            problems.append(f"{where}.base: {bname!r} is not in [bases]")
            continue
        pv = _string_list(pt.get("variants"), f"{where}.variants", problems)
        for v in pv or []:
            if v not in variants:
                problems.append(f"{where}.variants: {v!r} is not a variant")
        specs.append(
            _PointSpec(
                index=i,
                label=label,
                base=bname,
                body={k: v for k, v in pt.items() if k not in POINT_KEYS},
                unsets=_string_list(pt.get("unset"), f"{where}.unset", problems) or [],
                seeds=None if seeds_given else _seeds(pt.get("seeds"), f"{where}.seeds", problems),
                variants=[v for v in (pv or list(variants)) if v in variants],
            )
        )
    return specs


def load_experiment(
    source: str | os.PathLike[str] | Mapping,
    *,
    overrides: list[tuple[str, Any]] = (),  # type: ignore[assignment]
    seeds: list[int] | None = None,
    validate: bool = True,
) -> Experiment:
    """Read an experiment (a file path, TOML text or a dict), expand every run
    and validate each with the core.

    `overrides` (key path, value) apply to every run after its variant (the
    CLI's `--set`); `seeds` replaces the experiment's seeds. Raises
    `ExperimentError` listing every problem.
    """
    doc, here, origin = _read_document(source)
    problems: list[str] = []
    for k in doc:
        if k not in TOP_KEYS:
            problems.append(unknown_key(k, k, TOP_KEYS))
    name = str(doc.get("name") or (Path(origin).stem if origin != "<experiment>" else "experiment"))
    check_label("name", name, problems)
    if "base" not in doc:
        raise ExperimentError(
            origin, problems + ["base: missing (a scenario path or [base] table)"]
        )
    bases = {"": _resolve_base(doc["base"], here, origin, "base")}
    for bname, bval in (doc.get("bases") or {}).items():
        bases[bname] = _resolve_base(bval, here, origin, f"bases.{bname}")
    variants = _parse_variants(doc, problems)
    params, param_values = _product(doc.get("parameters") or {}, problems)
    top_seeds = _seeds(doc.get("seeds"), "seeds", problems)
    if seeds is not None:
        top_seeds = list(seeds)
    specs = _parse_points(doc, bases, variants, seeds is not None, problems)
    comparisons = []
    for i, c in enumerate(doc.get("compare") or []):
        comp = _parse_compare(i, c, list(variants), [s.label for s in specs], problems)
        if comp is not None:
            comparisons.append(comp)
    report = doc.get("report") or {}
    if not isinstance(report, Mapping):
        problems.append("report: a table ([report] metrics = [...])")
        report = {}
    for k in report:
        if k != "metrics":
            problems.append(unknown_key(f"report.{k}", k, ("metrics",)))
    report_given = _string_list(report.get("metrics"), "report.metrics", problems)
    report_metrics = tuple(report_given or DEFAULT_REPORT_METRICS)
    if problems:
        raise ExperimentError(origin, problems)
    too_many = run_count_problem(specs, params, param_values, top_seeds, seeds is not None)
    if too_many:
        raise ExperimentError(origin, [too_many])

    runs: list[Run] = []
    param_columns: list[str] = []
    for spec in specs:
        base, base_dir = bases[spec.base]
        for combo in itertools.product(*param_values):
            plabel, point_params = _point_identity(spec, params, combo)
            with_params = " (with its parameter values)" if params else ""
            check_label(f"points[{spec.index}].label{with_params}", plabel, problems)
            for col in point_params:
                if col not in param_columns:
                    param_columns.append(col)
            for vname in spec.variants:
                for seed in spec.seeds or top_seeds or [int(base.get("seed", 1))]:
                    run = _make_run(
                        len(runs),
                        name,
                        plabel,
                        point_params,
                        spec,
                        params,
                        combo,
                        vname,
                        variants[vname],
                        overrides,
                        seed,
                        base,
                        base_dir,
                        problems,
                    )
                    if run is not None:
                        runs.append(run)
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        problems.append(
            f"two runs share a label: {', '.join(dup[:5])} (give points distinct labels)"
        )
    if validate and not problems:
        _validate_runs(runs, problems)
    if validate and not problems:
        check_metrics(runs, comparisons, report_given or [], problems)
    if problems:
        raise ExperimentError(origin, problems)
    return Experiment(
        name=name,
        description=str(doc.get("description", "")),
        source=origin,
        runs=runs,
        points=list(dict.fromkeys(r.point for r in runs)),
        variants=list(variants),
        parameters=params,
        comparisons=comparisons,
        report_metrics=report_metrics,
        param_columns=param_columns,
    )


def _point_identity(spec: _PointSpec, params: list[str], combo: tuple) -> tuple[str, dict]:
    """A point's label (its [[points]] label and parameter values) and what it sets."""
    plabel = spec.label
    if params:
        parts = [f"{p.rsplit('.', 1)[-1]}={value_label(v)}" for p, v in zip(params, combo)]
        plabel = ",".join(parts) if spec.label == "point" else f"{spec.label},{','.join(parts)}"
    point_params = dict(keypath.flatten(spec.body))
    for p, v in zip(params, combo):
        if isinstance(v, Mapping):
            point_params.update({f"{p}.{k}": x for k, x in keypath.flatten(v)})
        else:
            point_params[p] = v
    return plabel, point_params


def _make_run(
    index: int,
    name: str,
    plabel: str,
    point_params: dict,
    spec: _PointSpec,
    params: list[str],
    combo: tuple,
    vname: str,
    variant: tuple[dict, list],
    overrides: list,
    seed: int,
    base: dict,
    base_dir: str,
    problems: list[str],
) -> Run | None:
    """One run's scenario: base, point, parameter values, variant, --set, seed."""
    vbody, vunsets = variant
    scen = copy.deepcopy(base)
    try:
        keypath.apply_overrides(scen, spec.body, spec.unsets)
        for p, v in zip(params, combo):
            keypath.set_value(scen, p, v)
        keypath.apply_overrides(scen, vbody, vunsets)
        for p, v in overrides:
            keypath.set_value(scen, p, v)
    except keypath.KeyPathError as e:
        problems.append(f"run {plabel}/{vname}/seed{seed}: {e}")
        return None
    scen["seed"] = seed
    if not _sets_name(spec.body, vbody, overrides):
        scen["name"] = run_scenario_name(name, plabel, vname)
    return Run(
        index=index,
        point=plabel,
        variant=vname,
        seed=seed,
        params=point_params,
        raw=scen,
        scenario={},
        base_dir=base_dir,
        hash="",
    )


def run_scenario_name(name: str, plabel: str, vname: str) -> str:
    """The name a run's scenario gets: "<experiment>-<point>-<variant>", its
    control characters escaped, cut (with a hash of the whole) to the core's
    SCENARIO_NAME_LIMIT however long the labels are."""
    return bounded_name(keypath.printable(f"{name}-{plabel}-{vname}"), SCENARIO_NAME_LIMIT)


def _sets_name(*tables: Any) -> bool:
    for t in tables:
        if isinstance(t, Mapping) and "name" in t:
            return True
        if isinstance(t, (list, tuple)) and any(p == "name" for p, _ in t):
            return True
    return False


def _validate_runs(runs: list[Run], problems: list[str]) -> None:
    """Validate every run with the core; fill in `scenario` and `hash`."""
    from . import _core
    from ._core import ScenarioError

    for run in runs:
        text = canonical_json(run.raw)
        try:
            normalized = json.loads(_core.validate(text, "json", run.base_dir))
        except ScenarioError as e:
            problems.append(f"run {run.label}: {e}")
            continue
        run.scenario = normalized
        run.hash = scenario_hash(normalized)


def experiment_schema() -> dict:
    """The JSON Schema of experiment files (scenarios inside follow `incast schema`)."""
    overrides = {
        "type": "object",
        "description": 'Scenario overrides by key path (TOML dotted keys: switch.buffer = "2MB"); '
        "tables merge, other values replace.",
    }
    base = {
        "description": "A scenario: a path to a .toml/.json file (relative to this file) or an "
        "inline table (see `incast schema`).",
        "oneOf": [{"type": "string"}, {"type": "object"}],
    }
    names = {"type": "array", "items": {"type": "string"}}
    seeds = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "incast experiment",
        "type": "object",
        "required": ["base"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "base": base,
            "bases": {"type": "object", "additionalProperties": base},
            "seeds": seeds,
            "parameters": {
                "type": "object",
                "description": "Key path -> list of values; every combination is run "
                f"(an experiment may have at most {MAX_RUNS:,} runs).",
            },
            "points": {
                "type": "array",
                "description": "Listed points: overrides by key path, plus label, seeds, "
                "variants (a subset), base (a name from bases) and unset (key paths).",
                "items": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "seeds": seeds,
                        "variants": names,
                        "base": {"type": "string"},
                        "unset": names,
                    },
                },
            },
            "variants": {
                "type": "object",
                "additionalProperties": dict(overrides, properties={"unset": names}),
            },
            "compare": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["baseline"],
                    "properties": {
                        "name": {"type": "string"},
                        "baseline": {"type": "string"},
                        "variants": names,
                        "metric": {
                            "type": "string",
                            "description": "slowdown or fct_us (per size bucket), or a "
                            "summary key as in points.csv, such as drops.packets (checked "
                            "against the runs' summaries before they run)",
                        },
                        "stats": {"type": "array", "items": {"enum": list(STATS)}},
                        "buckets": {"enum": list(BUCKET_SETS)},
                        "points": names,
                        "better": {"enum": ["lower", "higher"]},
                    },
                },
            },
            "report": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"metrics": names},
            },
        },
    }


STATS = ("mean", "p50", "p95", "p99", "p999", "max")
