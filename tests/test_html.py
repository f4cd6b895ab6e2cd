"""The HTML reports, rendered by headless Chromium and checked on the screenshot.

Chromium is required where it is expected: CI installs it (.ci/run) and these
tests fail there without it. Elsewhere they skip when no Chromium is found,
unless INCAST_EXPECT_CHROMIUM=1 says it must be there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import POISSON_TOML
from incast.cli import cli

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
WIDTH, HEIGHT = 1200, 2400


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    expected = os.environ.get("INCAST_EXPECT_CHROMIUM") == "1" or os.environ.get("CI")
    if expected:
        pytest.fail("Chromium is expected here (CI or INCAST_EXPECT_CHROMIUM=1) but not found")
    pytest.skip("no Chromium (apt-get install chromium); CI installs it")


def screenshot(html: Path, png: Path, tmp: Path) -> np.ndarray:
    """Render `html` in a fresh headless Chromium; return the screenshot as RGB floats."""
    import matplotlib.image as mpimg

    profile = tmp / "chromium-profile"
    cmd = [
        _chromium(),
        *CHROMIUM_FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={png}",
        html.resolve().as_uri(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    assert png.is_file(), "Chromium wrote no screenshot"
    return mpimg.imread(png)[:, :, :3]


def _self_contained(html: str) -> None:
    """No network: nothing is fetched (no http(s) URL in a src/href, no script)."""
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", html)
    assert "<script" not in html
    assert "url(http" not in html


def _check_rendered(img: np.ndarray) -> None:
    assert img.shape[0] == HEIGHT and img.shape[1] == WIDTH
    white = (img > 0.97).all(axis=2)
    # Text, tables and plots cover a real part of the page (an empty or broken
    # page is almost all white).
    assert white.mean() < 0.97, f"page is {white.mean():.1%} white"
    # The embedded plots rendered: matplotlib's first colour (#1f77b4) is on the page.
    blue = (np.abs(img - np.array([0x1F, 0x77, 0xB4]) / 255.0) < 0.06).all(axis=2)
    assert blue.sum() > 200, f"no plot colour on the page ({blue.sum()} pixels)"
    # Dark text exists (the tables and headings).
    dark = (img < 0.25).all(axis=2)
    assert dark.sum() > 2000


def test_run_report_renders(tmp_path):
    scen = tmp_path / "poisson.toml"
    scen.write_text(POISSON_TOML)
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", str(scen), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    _self_contained(html)
    assert "Slowdown (FCT / ideal FCT) by flow size" in html
    assert html.count("data:image/png;base64,") >= 2
    img = screenshot(out / "report.html", tmp_path / "run.png", tmp_path)
    _check_rendered(img)


def test_sweep_report_renders(tmp_path):
    (tmp_path / "poisson.toml").write_text(POISSON_TOML)
    (tmp_path / "e.toml").write_text(
        'name = "html"\nbase = "poisson.toml"\nseeds = [1, 2]\n'
        "[parameters]\nworkload.poisson.0.load = [0.2, 0.4]\n"
        '[variants.dctcp]\n[variants.newreno]\ntransport.cc = "newreno"\n'
        '[[compare]]\nbaseline = "newreno"\n'
    )
    out = tmp_path / "sweep"
    result = CliRunner().invoke(cli, ["sweep", str(tmp_path / "e.toml"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    _self_contained(html)
    assert "Comparisons (improvement factor" in html
    assert html.count("data:image/png;base64,") >= 3
    img = screenshot(out / "report.html", tmp_path / "sweep.png", tmp_path)
    _check_rendered(img)
