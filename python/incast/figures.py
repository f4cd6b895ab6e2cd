"""Writing a matplotlib figure to a PNG, the one way every plot of incast is
written (a run's plots, a sweep's, `incast compare`'s chart): laid out tight,
at `FIGURE_DPI`, with no date or software metadata so the same figure gives
the same bytes, and closed after (or when writing fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Pixels per inch of every PNG: a 7 x 4.2 inch plot is 840 x 504 pixels.
FIGURE_DPI = 120


def save_figure(figure: Any, path: Path) -> Path:
    """Write `figure` to `path` (PNG) and close it; an `OSError` when the file
    cannot be written (the figure is closed all the same)."""
    import matplotlib.pyplot as plt

    try:
        figure.tight_layout()
        figure.savefig(path, dpi=FIGURE_DPI, metadata={"Software": None})
    finally:
        plt.close(figure)
    return path
