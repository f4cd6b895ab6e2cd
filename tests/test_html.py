"""The HTML reports, rendered by headless Chromium and checked on the screenshot,
on the DOM after the scripts ran (the interactive plots drawn) and on Chromium's
net log (the page asks the network for nothing).

Chromium is required where it is expected: CI installs it (.ci/run) and these
tests fail there without it. Elsewhere they skip when no Chromium is found,
unless INCAST_EXPECT_CHROMIUM=1 says it must be there, and pytest's summary says
so in one line (conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import incast
from conftest import CHROMIUM_MISSING, POISSON_TOML, REPO
from incast.cli import cli
from incast.html import write_run_report
from test_api import CM_TOML

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
    pytest.skip(CHROMIUM_MISSING)


@pytest.fixture
def chromium() -> str:
    """Chromium's path; a test that renders skips (or fails, where Chromium is
    expected) before doing any work without it."""
    return _chromium()


@dataclass
class Rendered:
    """What headless Chromium made of a page: the screenshot (RGB floats), the
    DOM after the scripts ran, and the URLs the page itself asked the network for."""

    image: np.ndarray
    dom: str
    requests: list[str]


def _page_requests(net_log: Path) -> list[str]:
    """The network requests a file:// page made, from Chromium's net log (the
    browser's own update and account requests are not the page's: their site is
    not file://)."""
    log = json.loads(net_log.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        e["params"]["url"]
        for e in log["events"]
        if e["type"] == start and "file://" in str(e["params"].get("site_for_cookies", ""))
    ]


def render(html: Path, png: Path, tmp: Path) -> Rendered:
    """Open `html` in a fresh headless Chromium: screenshot, DOM and page requests."""
    import matplotlib.image as mpimg

    profile = tmp / f"chromium-profile-{png.stem}"
    net_log = tmp / f"{png.stem}-netlog.json"
    cmd = [
        _chromium(),
        *CHROMIUM_FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={png}",
        f"--log-net-log={net_log}",
        "--dump-dom",
        html.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    assert png.is_file(), "Chromium wrote no screenshot"
    return Rendered(
        mpimg.imread(png)[:, :, :3], done.stdout.decode("utf-8", "replace"), _page_requests(net_log)
    )


def screenshot(html: Path, png: Path, tmp: Path) -> np.ndarray:
    """Render `html` in a fresh headless Chromium; return the screenshot as RGB floats."""
    return render(html, png, tmp).image


#: plotly.js, embedded once in a run's report (its code names web addresses that
#: a plot of maps or a logo link would use; none is fetched).
_LIBRARY = re.compile(r'<script type="text/javascript" id="plotly-library">.*?</script>', re.S)


def _self_contained(html: str, scripts: bool = False) -> None:
    """No network: nothing is fetched (no http(s) URL in a src/href, no script
    from a file or address; with `scripts`, one inline copy of plotly.js and the
    plots' inline calls, else no script at all)."""
    if scripts:
        assert len(_LIBRARY.findall(html)) == 1, "plotly.js must be on the page exactly once"
        html = _LIBRARY.sub("", html)
        assert not re.search(r"<script[^>]*\bsrc\s*=", html)
    else:
        assert "<script" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", html)
    assert "url(http" not in html


def _check_rendered(img: np.ndarray) -> None:
    assert img.shape[0] == HEIGHT and img.shape[1] == WIDTH
    white = (img > 0.97).all(axis=2)
    # Text, tables and plots cover a real part of the page (an empty or broken
    # page is almost all white).
    assert white.mean() < 0.97, f"page is {white.mean():.1%} white"
    # The plots rendered: matplotlib's first colour (#1f77b4), which the
    # interactive plots use too, is on the page.
    blue = (np.abs(img - np.array([0x1F, 0x77, 0xB4]) / 255.0) < 0.06).all(axis=2)
    assert blue.sum() > 200, f"no plot colour on the page ({blue.sum()} pixels)"
    # Dark text exists (the tables and headings).
    dark = (img < 0.25).all(axis=2)
    assert dark.sum() > 2000


def _check_plots_drawn(dom: str, expected: set[str]) -> None:
    """Each expected plot's div was drawn by plotly (an SVG with its traces)."""
    drawn = {}
    for m in re.finditer(r'<div id="plot-([a-z-]+)" class="([^"]*)"', dom):
        end = dom.find('<div class="plot"', m.end())
        drawn[m.group(1)] = (m.group(2), dom[m.end() : end if end > 0 else len(dom)])
    assert expected <= set(drawn), f"plots missing from the page: {expected - set(drawn)}"
    for name, (classes, inside) in drawn.items():
        assert "js-plotly-plot" in classes, f"plotly did not draw {name}"
        assert 'class="main-svg"' in inside, f"{name} has no SVG"
        assert re.search(r'class="trace (scatter|bars)', inside), f"{name} has no series"


def test_run_report_renders(tmp_path, chromium):
    scen = tmp_path / "poisson.toml"
    scen.write_text(POISSON_TOML)
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", str(scen), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    _self_contained(html, scripts=True)
    assert "Slowdown (FCT / ideal FCT) by flow size" in html
    page = render(out / "report.html", tmp_path / "run.png", tmp_path)
    _check_rendered(page.image)
    _check_plots_drawn(
        page.dom, {"slowdown-by-size", "slowdown-cdf", "fct-cdf", "queues", "throughput"}
    )
    assert page.requests == []


def test_congestion_management_report_renders(tmp_path, chromium):
    """PFC pauses per port and the CM rates over time, drawn offline."""
    out = tmp_path / "cm"
    out.mkdir()
    write_run_report(incast.run(CM_TOML), out, [])
    _self_contained((out / "report.html").read_text(), scripts=True)
    page = render(out / "report.html", tmp_path / "cm.png", tmp_path)
    _check_plots_drawn(page.dom, {"queues", "throughput", "pfc", "cm"})
    assert page.requests == []


def test_request_detector_sees_a_page_fetch(tmp_path, chromium):
    """The net-log check above can fail: a page with an external script and image
    shows both as the page's requests (nothing is reachable here; the attempt counts)."""
    page = tmp_path / "remote.html"
    page.write_text(
        '<!DOCTYPE html><html><head><script src="https://cdn.example.invalid/lib.js"></script>'
        '</head><body><p>x</p><img src="http://example.invalid/a.png"></body></html>'
    )
    requests = render(page, tmp_path / "remote.png", tmp_path).requests
    assert "https://cdn.example.invalid/lib.js" in requests
    assert "http://example.invalid/a.png" in requests


def test_sweep_report_renders(tmp_path, chromium):
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


def _pytest_without_chromium(tmp_path: Path, expect: bool) -> subprocess.CompletedProcess:
    """One rendering test of this file, run by pytest where no Chromium is on the PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "INCAST_EXPECT_CHROMIUM")}
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    env["PATH"] = str(empty)
    if expect:
        env["INCAST_EXPECT_CHROMIUM"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__]
    cmd += ["-k", "request_detector"]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_without_chromium_the_skip_is_said(tmp_path):
    """The rendering tests skipped silently without Chromium; now the summary says
    so in one line, and where Chromium is expected they fail."""
    skipped = _pytest_without_chromium(tmp_path, expect=False)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "1 skipped" in skipped.stdout
    lines = skipped.stdout.splitlines()
    assert f"HTML rendering tests skipped (1): {CHROMIUM_MISSING}" in lines, skipped.stdout
    expected = _pytest_without_chromium(tmp_path, expect=True)
    assert expected.returncode == 1, expected.stdout + expected.stderr
    assert "Chromium is expected here" in expected.stdout
    assert "HTML rendering tests skipped" not in expected.stdout
