"""A sweep's run directories: where each run's files go (`run_dir`), how a
finished one is told from a damaged or partial one (`run_damage`,
`is_finished`), and writing one so that an interrupted sweep never leaves a
half-written run (`write_run`: a partial directory renamed into place, its
`run.json` written last with each file's size and SHA-256), and which build of
the core made a run (`core_build`, `stale_runs`), so that a sweep resumed after
the simulator changed says which of its runs came from the older one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from .experiment import Experiment, Run

RUNS_DIR = "runs"
PARTIAL_PREFIX = ".partial-"

_core_build: str | None = None


def core_build() -> str:
    """This process's build of the simulator core: the first 16 hex digits of the
    SHA-256 of the native module's file. Two builds that could give different
    results have different files; the same build gives the same id on every run."""
    global _core_build
    if _core_build is None:
        from . import _core

        _core_build = _sha256(Path(_core.__file__).read_bytes())[:16]
    return _core_build


def run_dir(out: Path, run: Run) -> Path:
    return out / RUNS_DIR / run.dirname


def read_json(path: Path) -> Any:
    """The JSON in `path`, or None when it is missing, unreadable or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_damage(out: Path, run: Run) -> str | None:
    """What is wrong with `run`'s directory: None when it holds the finished run
    (or does not exist), else a short reason ("summary.json is empty or not JSON")."""
    directory = run_dir(out, run)
    if not directory.exists() and not directory.is_symlink():
        return None
    if directory.is_symlink() or not directory.is_dir():
        return "it is not a directory"
    if not (directory / "run.json").is_file():
        return "run.json is missing"
    meta = read_json(directory / "run.json")
    if not isinstance(meta, dict):
        return "run.json is empty or not JSON"
    if meta.get("hash") != run.hash:
        return "run.json names another run"
    if not isinstance(read_json(directory / "summary.json"), dict):
        return "summary.json is missing, empty or not JSON"
    digests = meta.get("sha256") or {}
    for name, size in sorted((meta.get("files") or {}).items()):
        path = directory / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size:,} bytes, not {size:,}"
        if name in digests and _sha256(path.read_bytes()) != digests[name]:
            return f"{name} was changed since the run wrote it (its SHA-256 differs)"
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_finished(out: Path, run: Run) -> bool:
    """Whether `run`'s directory holds its complete results."""
    return (run_dir(out, run) / "run.json").is_file() and run_damage(out, run) is None


def remove_damaged(out: Path, runs: list[Run]) -> dict[int, str]:
    """Remove the directories of runs that are damaged; {run index: reason}."""
    damaged = {}
    for run in runs:
        reason = run_damage(out, run)
        if reason is not None:
            damaged[run.index] = reason
            path = run_dir(out, run)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    return damaged


def write_run(out: Path, run: Run, result: dict, experiment: Experiment) -> Path:
    """Write one run's files to a partial directory, then rename it into place."""
    from . import __version__

    final = run_dir(out, run)
    partial = out / RUNS_DIR / f"{PARTIAL_PREFIX}{run.dirname}-{os.getpid()}"
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    files = dict(result["files"])
    files["scenario.json"] = (json.dumps(run.scenario, sort_keys=True, indent=2) + "\n").encode()
    for name, data in sorted(files.items()):
        (partial / name).write_bytes(data)
    meta = {
        "experiment": experiment.name,
        "label": run.label,
        "point": run.point,
        "variant": run.variant,
        "seed": run.seed,
        "hash": run.hash,
        "params": run.params,
        "incast_version": __version__,
        # The core that simulated it (the worker's, which may be another machine's).
        "core_build": result.get("core_build") or core_build(),
        # Each file's size: a file emptied or cut short later is found on a rerun.
        "files": {name: len(data) for name, data in sorted(files.items())},
        # and its digest: a file overwritten in place, at the same size, is found too.
        "sha256": {name: _sha256(data) for name, data in sorted(files.items())},
    }
    # run.json is written last: its presence marks the run as complete.
    (partial / "run.json").write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
    if is_finished(out, run):  # a finished copy is there already: keep it
        shutil.rmtree(partial)
        return final
    if final.exists():  # a damaged one: replaced
        shutil.rmtree(final)
    os.replace(partial, final)
    return final


def stale_runs(out: Path, runs: list[Run]) -> list[Run]:
    """The finished runs among `runs` made by another build of the core than this
    process's (or by one that did not record its build): their results may differ
    from what this build gives."""
    current = core_build()
    stale = []
    for run in runs:
        meta = read_json(run_dir(out, run) / "run.json")
        if isinstance(meta, dict) and meta.get("core_build") != current:
            stale.append(run)
    return stale


def clean_partials(out: Path) -> int:
    """Remove the partial run directories an interrupted sweep left behind."""
    runs = out / RUNS_DIR
    n = 0
    if runs.is_dir():
        for p in runs.iterdir():
            if p.name.startswith(PARTIAL_PREFIX):
                shutil.rmtree(p, ignore_errors=True)
                n += 1
    return n
