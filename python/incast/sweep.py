"""Running every run of an experiment: local processes or a Ray cluster, resumable.

Layout of a sweep's output directory (nothing is written outside it):

    OUT/
      runs/<point>.<variant>.s<seed>-<hash>/   one finished run: the tables of `incast run`,
                                               summary.json, scenario.json, run.json
      runs/.partial-*/                         a run being written (renamed when complete)
      points.parquet, points.csv               one row per run: parameters and summary metrics
      flows/, incasts/                         the per-flow (per-incast) tables of all runs, one
                                               Parquet dataset partitioned by point/variant/seed
      comparisons.parquet, .csv, .md           the experiment's [[compare]] tables
      plots/*.png, report.html                 plots and a self-contained HTML report

A run's directory is named by a hash of its fully resolved scenario, so a rerun
skips what is finished and a changed run gets a new directory. Results are
written by this process only: workers (one simulation per process) return the
files' bytes, which are written to `runs/.partial-...` and renamed into place
when complete, so an interrupted sweep never leaves a half-written run that a
rerun would take as finished. A run counts as finished when its `run.json`
(written last) names it and lists the sizes of its files, and its summary reads
back; a directory damaged since (a file emptied or deleted) is removed and run
again, and the sweep says so. Workers die with the sweep that started them,
even when it is killed outright.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .canonical import canonical_json
from .experiment import Experiment, Run
from .outdir import LOCK_FILE as LOCK_FILE  # the lock runs and sweeps share
from .outdir import MARKER, OutDirError, clear, locked, refuse_symlinks
from .rundir import (
    RUNS_DIR,
    clean_partials,
    core_build,
    remove_damaged,
    run_dir,
    stale_runs,
    write_run,
)


@dataclass
class SweepOutcome:
    """What a sweep did."""

    out: Path
    finished: list[Run] = field(default_factory=list)
    skipped: list[Run] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    #: Run index -> what was wrong with its directory (removed; run again if selected).
    damaged: dict[int, str] = field(default_factory=dict)
    #: Finished runs kept from an earlier sweep that another build of the core made
    #: (their results may differ from this build's); rerun when `rerun_stale`.
    stale: list[Run] = field(default_factory=list)
    wall_seconds: float = 0.0
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return not self.failed and not self.interrupted


# ---------------------------------------------------------------------------
# The worker side: one simulation, returning the files' bytes.
# ---------------------------------------------------------------------------

_progress_queue: Any = None
#: prctl(2) option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _init_worker(queue: Any, parent_pid: int | None = None) -> None:
    global _progress_queue
    _progress_queue = queue
    if parent_pid is not None:
        die_with_parent(parent_pid)


def die_with_parent(parent_pid: int) -> None:
    """End this process when `parent_pid` (the sweep that started it) dies, even
    by SIGKILL: the parent-death signal on Linux (prctl through ctypes), a thread
    watching the parent elsewhere."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
        if armed:
            if os.getppid() != parent_pid:  # it died before the signal was armed
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="incast-parent-watch", daemon=True).start()


def simulate(
    scenario_json: str, base_dir: str, index: int = -1, parent_pid: int | None = None
) -> dict:
    """Run one scenario (JSON text) and return `{"files": {name: bytes},
    "wall_seconds": ..., "events": ...}`. Runs in a worker process (local or Ray)."""
    from . import _core
    from ._runner import run_to_results

    started = time.perf_counter()
    sim = _core.Simulation(scenario_json, "json", base_dir, None)
    queue = _progress_queue
    last = [0.0]

    def report(progress: dict) -> None:
        if parent_pid is not None and os.getppid() != parent_pid:
            raise SystemExit("the sweep that started this worker has gone")
        now = time.perf_counter()
        if queue is not None and now - last[0] > 0.3:
            last[0] = now
            with contextlib.suppress(Exception):
                queue.put_nowait((index, float(progress.get("fraction", 0.0) or 0.0)))

    results = run_to_results(sim, started, on_progress=report)
    wall = time.perf_counter() - started
    files = results.to_bytes()
    return {
        "files": files,
        "wall_seconds": wall,
        "events": results.stats.get("events"),
        "core_build": core_build(),
    }


def require_ray() -> None:
    """Raise RuntimeError (saying how to install it) when Ray is not importable."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise RuntimeError(
            "--ray needs Ray, which is not installed here: pip install 'incast[ray]' "
            "(or leave out --ray to run in local processes, -j N)"
        )


# ---------------------------------------------------------------------------
# Backends.
# ---------------------------------------------------------------------------

OnDone = Callable[[Run, dict], None]
OnFail = Callable[[Run, str], None]
OnProgress = Callable[[dict], None]


def run_local(
    runs: list[Run],
    jobs: int,
    on_done: OnDone,
    on_fail: OnFail,
    on_progress: OnProgress | None = None,
) -> None:
    """Each run in a worker process (a pool of `jobs`, started with spawn)."""
    import multiprocessing as mp
    import queue as queue_mod
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")
    progress_q = ctx.Queue()
    pending = list(runs)
    fractions: dict[int, float] = {}
    while pending:
        pool = ProcessPoolExecutor(
            max_workers=max(1, min(jobs, len(pending))),
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(progress_q, os.getpid()),
        )
        futures = {
            pool.submit(simulate, r.scenario_json(), r.base_dir, r.index, os.getpid()): r
            for r in pending
        }
        pending = []
        broken = False
        try:
            while futures:
                done, _ = wait(list(futures), timeout=0.25, return_when=FIRST_COMPLETED)
                while True:
                    try:
                        idx, frac = progress_q.get_nowait()
                    except (queue_mod.Empty, OSError, EOFError):
                        break
                    fractions[idx] = frac
                for fut in done:
                    run = futures.pop(fut)
                    fractions.pop(run.index, None)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        on_fail(run, "its worker process died (killed, or out of memory?)")
                        continue
                    except Exception as e:  # a scenario the core rejects at run time
                        on_fail(run, f"{type(e).__name__}: {e}")
                        continue
                    on_done(run, result)
                if on_progress is not None:
                    on_progress(dict(fractions))
                if broken:
                    # The pool is unusable: the remaining runs start again in a new one.
                    pending = list(futures.values())
                    futures = {}
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)
    progress_q.close()


def run_ray(
    runs: list[Run],
    address: str,
    on_done: OnDone,
    on_fail: OnFail,
    on_progress: OnProgress | None = None,
) -> None:
    """Each run as a Ray task (`address`: a cluster address, "auto" for the running
    cluster, or "local" to start a Ray instance on this machine)."""
    require_ray()
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address == "local":
            ray.init(**kwargs)
        else:
            ray.init(address=address, **kwargs)
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(simulate)
        refs = {task.remote(r.scenario_json(), r.base_dir, r.index): r for r in runs}
        try:
            while refs:
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.25)
                for ref in ready:
                    run = refs.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as e:
                        on_fail(run, f"{type(e).__name__}: {e}")
                        continue
                    on_done(run, result)
                if on_progress is not None:
                    on_progress({})
        except BaseException:
            for ref in refs:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise
    finally:
        if started_here:
            ray.shutdown()


# ---------------------------------------------------------------------------
# The sweep.
# ---------------------------------------------------------------------------


def sweep(
    experiment: Experiment,
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    progress: bool = False,
    console: Any = None,
    combine: bool = True,
    plots: bool = True,
    only: list[str] | tuple[str, ...] | None = None,
    fresh: bool = False,
    rerun_stale: bool = False,
) -> SweepOutcome:
    """Run every unfinished run of `experiment` into `out`, then write the
    combined tables, comparisons, plots and report (over every finished run).
    `only` (label globs) restricts which runs are run; `fresh` deletes the runs
    finished before; `rerun_stale` runs again the finished runs that another
    build of the core made (`SweepOutcome.stale` lists them either way).
    Damaged run directories are removed (and run again when selected):
    `SweepOutcome.damaged` says which and why. Returns a `SweepOutcome`;
    KeyboardInterrupt propagates after the partial directories are removed.
    Raises `outdir.OutDirError` when another run or sweep is writing to `out`
    or a symbolic link is inside it, and RuntimeError when `ray_address` is
    given without Ray installed (before creating anything)."""
    out = Path(out)
    if ray_address:
        require_ray()
    outcome = SweepOutcome(out=out)
    t0 = time.perf_counter()
    with locked(out):  # one writer (a sweep or an `incast run`) at a time
        refuse_symlinks(out)
        if (out / RUNS_DIR).exists() and not (out / RUNS_DIR).is_dir():
            raise OutDirError(
                f"{out / RUNS_DIR} is a file where the sweep keeps its runs' directories: "
                "remove it, or choose another --out"
            )
        if fresh and (out / MARKER).exists():  # incast wrote it: replaced as a whole
            clear(out)
        elif fresh:
            shutil.rmtree(out / RUNS_DIR, ignore_errors=True)
        (out / MARKER).touch()
        clean_partials(out)
        outcome.damaged = remove_damaged(out, experiment.runs)
        wanted = select(experiment.runs, only) if only else experiment.runs
        outcome.stale = stale_runs(out, experiment.runs)
        if rerun_stale:  # the selected ones are run again; the others are kept
            selected = {r.index for r in wanted}
            for run in outcome.stale:
                if run.index in selected:
                    shutil.rmtree(run_dir(out, run))
        # What is left of the runs' directories is finished.
        done = {r.index for r in experiment.runs if run_dir(out, r).exists()}
        todo = [r for r in wanted if r.index not in done]
        outcome.skipped = [r for r in experiment.runs if r.index in done]

        def on_done(run: Run, result: dict) -> None:
            write_run(out, run, result, experiment)
            outcome.finished.append(run)
            if bar is not None:
                bar.done(run)

        def on_fail(run: Run, message: str) -> None:
            outcome.failed[run.index] = message
            if bar is not None:
                bar.done(run, failed=True)

        bar = _SweepBar(console, len(todo), experiment.name) if progress and todo else None
        try:
            with bar if bar is not None else contextlib.nullcontext():
                update = bar.update if bar is not None else None
                if not todo:
                    pass
                elif ray_address:
                    run_ray(todo, ray_address, on_done, on_fail, update)
                else:
                    run_local(todo, jobs or os.cpu_count() or 1, on_done, on_fail, update)
        except KeyboardInterrupt:
            outcome.interrupted = True
            clean_partials(out)
            raise
        finally:
            outcome.wall_seconds = time.perf_counter() - t0
        if combine:
            from .combine import write_combined

            write_combined(experiment, out, plots=plots)
    return outcome


class _SweepBar:
    """One rich progress bar across runs; running runs count by their fraction."""

    def __init__(self, console: Any, total: int, name: str) -> None:
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.total = total
        self.n_done = 0
        self.n_failed = 0
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[runs]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
        )
        from ._runner import bar_label

        self.task = self.progress.add_task(
            bar_label(name), total=float(total), runs=self._runs_text()
        )

    def _runs_text(self) -> str:
        failed = f", {self.n_failed} failed" if self.n_failed else ""
        return f"{self.n_done}/{self.total} runs{failed}"

    def __enter__(self) -> _SweepBar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def done(self, run: Run, failed: bool = False) -> None:
        self.n_done += 1
        self.n_failed += int(failed)
        self.progress.update(self.task, completed=float(self.n_done), runs=self._runs_text())

    def update(self, fractions: dict) -> None:
        running = sum(min(max(f, 0.0), 0.999) for f in fractions.values())
        self.progress.update(self.task, completed=self.n_done + running, runs=self._runs_text())


def select(runs: list[Run], globs: list[str] | tuple[str, ...]) -> list[Run]:
    """The runs whose label (point/variant/seedN) matches one of the globs."""
    from fnmatch import fnmatchcase

    return [r for r in runs if any(fnmatchcase(r.label, g) for g in globs)]


def experiment_digest(experiment: Experiment) -> str:
    """A JSON description of an experiment's runs (for `--dry-run`)."""
    return canonical_json(
        [{"label": r.label, "hash": r.hash, "dir": r.dirname} for r in experiment.runs]
    )
