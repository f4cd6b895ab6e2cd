"""Driving a `Simulation` in chunks, optionally with a rich progress bar, and
`run_to_results`: the one path from a built simulation to its `Results`, which
`incast.run`, `incast run` (the CLI), a sweep's workers and `incast.run_hpcc`
all take."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

from .fmt import format_ps

if TYPE_CHECKING:
    from .results import Results

ProgressCallback = Callable[[dict], None]

#: Events per `advance` call at the start; adapted so each call takes about
#: `TARGET_SECONDS` of wall time (progress updates and Ctrl-C stay responsive).
INITIAL_CHUNK = 200_000
TARGET_SECONDS = 0.2
MIN_CHUNK = 1_000
MAX_CHUNK = 100_000_000


def bar_label(name: str) -> str:
    """A name as a progress bar's label: cut to 24 characters, and text, never
    markup or terminal control (`[/b]` or an escape sequence in it is shown as
    written)."""
    from rich.markup import escape

    from .keypath import printable, shorten

    return escape(printable(shorten(name, 24)))


def drive(
    sim: Any,
    on_progress: ProgressCallback | None = None,
    *,
    chunk: int = INITIAL_CHUNK,
    target_seconds: float = TARGET_SECONDS,
) -> None:
    """Call `sim.advance` until it reports completion.

    The chunk size adapts so that one call takes about `target_seconds`; the
    GIL is released inside `advance`, and KeyboardInterrupt is seen between
    chunks.
    """
    done = False
    while not done:
        t0 = time.perf_counter()
        done = bool(sim.advance(chunk))
        dt = time.perf_counter() - t0
        if dt > 0:
            factor = min(max(target_seconds / dt, 0.25), 4.0)
            chunk = int(min(max(chunk * factor, MIN_CHUNK), MAX_CHUNK))
        else:
            chunk = min(chunk * 4, MAX_CHUNK)
        if on_progress is not None:
            on_progress(sim.progress())


@contextlib.contextmanager
def progress_bar(
    console: Any = None, description: str = "simulating"
) -> Iterator[ProgressCallback]:
    """A rich progress bar; yields the callback that `drive` feeds."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = console or Console(stderr=True)
    wide = console.width >= 110
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=24 if wide else 16),
        TaskProgressColumn(),
        TextColumn("{task.fields[simtime]}"),
    ]
    if wide:
        columns.append(TextColumn("[dim]{task.fields[flows]}"))
    columns.append(TimeElapsedColumn())
    if wide:
        columns.append(TimeRemainingColumn())
    description = bar_label(description)
    with Progress(*columns, console=console, transient=False, refresh_per_second=8) as bar:
        task = bar.add_task(description, total=1.0, simtime="", flows="")

        def update(progress: dict) -> None:
            fraction = float(progress.get("fraction", 0.0) or 0.0)
            fraction = min(max(fraction, 0.0), 1.0)
            now, horizon = progress.get("now_ps", 0), progress.get("horizon_ps", 0)
            if horizon and now > horizon:
                simtime = f"{format_ps(now)} (draining)"
            else:
                simtime = format_ps(now) + (f" / {format_ps(horizon)}" if horizon else "")
            done, active = progress.get("finished_flows", 0), progress.get("active_flows", 0)
            flows = f"flows: {done} done, {active} active"
            bar.update(task, completed=fraction, simtime=simtime, flows=flows)

        yield update
        bar.update(task, completed=1.0)


def run_to_results(
    simulation: Any,
    started: float,
    *,
    on_progress: ProgressCallback | None = None,
    progress_console: Any = None,
) -> Results:
    """Run a built `Simulation` (or `HpccRun`) to its end and return its
    `Results`, with the wall time since `started` (a `time.perf_counter()`
    reading taken before the simulation was built). Progress goes to
    `on_progress`, or to a progress bar on `progress_console` (a rich
    Console), or nowhere when neither is given."""
    from .results import Results

    if progress_console is not None:
        with progress_bar(progress_console, simulation.name) as update:
            drive(simulation, update)
    else:
        drive(simulation, on_progress)
    raw = simulation.finish()
    return Results(raw, wall_seconds=time.perf_counter() - started)
