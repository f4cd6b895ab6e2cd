"""Self-contained HTML reports of a run and of a sweep.

One file, no network. A run's report has every section of the terminal report
(the same tables, numbers formatted the same way) and interactive plots
(plotly: zoom, pan, hover, legend toggles; `html_plots.py`), with plotly.js
embedded once in the page. A sweep's report embeds its PNG plots and has no
script. Open `report.html` in any browser, mail it, or attach it to a paper's
artifact.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any

from .fmt import format_factor, format_number

_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #1d2330; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.6em;
     border-bottom: 2px solid #d8dde6; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
.meta, .note { color: #5a6475; }
nav a { margin-right: 0.9em; color: #2a5db0; text-decoration: none; }
.warning { color: #8a5a00; background: #fff6e0; padding: 4px 8px; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #d8dde6; padding: 0.25em 0.6em; text-align: right; }
th { background: #eef1f6; } td.l, th.l { text-align: left; }
tr.total td { font-weight: bold; }
td.good { background: #d9f2dd; } td.bad { background: #f8dcdc; }
img { max-width: 100%; border: 1px solid #d8dde6; margin: 0.5em 0; }
.scroll { overflow-x: auto; }
.plot { border: 1px solid #d8dde6; margin: 0.5em 0 1.2em; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _page(title: str, body: list[str], head: str = "") -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style>{head}</head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    head = "".join(
        f'<th class="l">{_e(h)}</th>' if i < left else f"<th>{_e(h)}</th>"
        for i, h in enumerate(header)
    )
    body = []
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = ' class="l"' if i < left else ""
            if c.startswith("<td"):
                cells.append(c)
            else:
                cells.append(f"<td{cls}>{c}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _plain(cell: Any) -> str:
    """A rich table cell or title as the plain text the terminal shows."""
    from rich.text import Text

    if cell is None:
        return ""
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(str(cell)).plain


def _anchor(title: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")


def rich_table_html(table: Any) -> str:
    """A terminal report table (rich) as an HTML section: its title as a heading,
    its header (when shown), its cells as the terminal prints them."""

    title = _plain(table.title)
    columns = [[_plain(c) for c in col.cells] for col in table.columns]
    left = [col.justify != "right" for col in table.columns]
    head = ""
    if table.show_header:
        head = (
            "<thead><tr>"
            + "".join(
                f'<th class="l">{_e(_plain(col.header))}</th>'
                if left[i]
                else f"<th>{_e(_plain(col.header))}</th>"
                for i, col in enumerate(table.columns)
            )
            + "</tr></thead>"
        )
    body = []
    for r, row in enumerate(zip(*columns)):
        style = table.rows[r].style if r < len(table.rows) else None
        cls = ' class="total"' if style and "bold" in str(style) else ""
        cells = "".join(
            f'<td class="l">{_e(c)}</td>' if left[i] else f"<td>{_e(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    heading = f'<h2 id="table-{_anchor(title)}">{_e(title)}</h2>' if title else ""
    return f'{heading}<div class="scroll"><table>{head}<tbody>{"".join(body)}</tbody></table></div>'


def summary_html(summary: dict) -> tuple[list[str], list[str]]:
    """The terminal report's sections (`report.summary_sections`), in its order,
    as HTML: each table as a titled table, each note about a table left out as
    a line; and the warnings."""
    from .report import summary_sections

    sections, warnings = summary_sections(summary)
    parts = [
        rich_table_html(section.table)
        if section.table is not None
        else f'<p class="note">{_e(section.note)}</p>'
        for section in sections
    ]
    return parts, warnings


def _header(results: Any) -> str:
    """Seed, simulated time and events, as the terminal's header says them
    (`report.run_facts`; no wall time: the same run gives the same page)."""
    from .report import run_facts

    facts = run_facts(results)
    parts = [f"seed {facts.seed}"]
    if facts.simulated != "?":
        parts.append(f"simulated {facts.simulated}")
    if facts.events_text is not None:
        parts.append(facts.events_text)
    return f'<p class="meta">{_e(", ".join(parts))}</p>'


def _queue_series_note(summary: dict) -> str:
    """What the queue time series sampled, as the terminal says it."""
    from .report import queue_series_text

    text = queue_series_text(summary)
    return f'<p class="meta">{_e(text[0].upper() + text[1:])}.</p>' if text else ""


def run_report_html(results: Any, static_plots: list[str] | None = None) -> str:
    """The HTML report of one run: header, warnings, every section of the terminal
    report, then the interactive plots. `static_plots` names the PNG files written
    beside the report (listed, not embedded)."""
    from .html_plots import figure_div, library_script, run_figures

    summary = results.summary if isinstance(results.summary, dict) else {}
    name = summary.get("scenario", "?")
    figures = run_figures(results)
    sections, warnings = summary_html(summary)
    nav = ['<a href="#summary">summary</a>'] + [
        f'<a href="#figure-{div_id}">{_e(title.lower())}</a>' for div_id, title, _ in figures
    ]
    body = [f"<h1>incast run: {_e(name)}</h1>", _header(results), f"<nav>{''.join(nav)}</nav>"]
    # What a reader must know before trusting the numbers (unfinished flows, lossless drops).
    for w in warnings:
        body.append(f'<p class="warning"><b>warning:</b> {_e(w)}</p>')
    body.append('<div id="summary"></div>')
    body += sections
    if figures:
        body.append("<h2>Plots</h2>")
        body.append(
            '<p class="meta">Drag to zoom, double-click to zoom out, click a legend entry to '
            "hide its series; the camera icon saves a PNG.</p>"
        )
        body.append("<noscript><p>The plots need JavaScript.</p></noscript>")
        for div_id, title, fig in figures:
            if div_id == "queues":
                body.append(_queue_series_note(summary))
            body.append(
                f'<div class="plot" id="figure-{div_id}" aria-label="{_e(title)}">'
                f"{figure_div(fig, f'plot-{div_id}')}</div>"
            )
    if static_plots:
        body.append(
            '<p class="meta">Static PNG plots beside this file: '
            + ", ".join(f'<a href="{_e(n)}">{_e(n)}</a>' for n in static_plots)
            + ".</p>"
        )
    head = library_script() if figures else ""
    return _page(f"incast: {name}", body, head)


def write_run_report(results: Any, out: Path, plot_names: list[str]) -> Path:
    """Write `out/report.html`; `plot_names`: the PNG plots written into `out`."""
    static = [n for n in plot_names if (out / n).is_file()]
    path = out / "report.html"
    path.write_text(run_report_html(results, static), encoding="utf-8")
    return path


def _factor_cell(mean: float, std: float, seeds: int) -> str:
    text = _e(format_factor(mean, std, seeds))
    if isinstance(mean, float) and not math.isnan(mean):
        cls = "good" if mean > 1.05 else "bad" if mean < 0.95 else ""
        if cls:
            return f'<td class="{cls}">{text}</td>'
    return f"<td>{text}</td>"


def sweep_report_html(experiment: Any, points: Any, comps: Any, plots: list[Path]) -> str:
    """The HTML report of a sweep: the experiment, its comparisons (factor
    mean ± std over seeds), the runs' key metrics and every plot. The runs are
    counted in `incast validate`'s words (`describe_runs`)."""
    from .experiment import describe_runs

    body = [
        f"<h1>incast sweep: {_e(experiment.name)}</h1>",
        f'<p class="meta">{_e(experiment.description)}</p>' if experiment.description else "",
        f'<p class="meta">{_e(describe_runs(experiment))}, {len(points):,} finished; '
        f"variants: {_e(', '.join(experiment.variants))}.</p>",
    ]
    if comps is not None and len(comps):
        body.append("<h2>Comparisons (improvement factor, mean ± std over seeds)</h2>")
        for name, part in comps.groupby("comparison", sort=False):
            first = part.iloc[0]
            buckets = list(dict.fromkeys(part["bucket"]))
            body.append(
                f"<h3>{_e(name)}: {_e(first['metric'])} of {_e(first['baseline'])} / variant</h3>"
            )
            rows = []
            for (point, variant, stat), g in part.groupby(["point", "variant", "stat"], sort=False):
                cells = {
                    r.bucket: _factor_cell(r.factor_mean, r.factor_std, r.seeds)
                    for r in g.itertuples()
                }
                rows.append(
                    [_e(point), _e(variant), _e(stat)]
                    + [cells.get(b, "<td>-</td>") for b in buckets]
                    + [str(int(g["seeds"].max()))]
                )
            body.append(_table(["point", "variant", "stat", *buckets, "seeds"], rows, left=3))
    if len(points):
        metrics = [
            m
            for m in (
                *experiment.report_metrics,
                "drops.packets",
                "pfc.pause_frames",
                "queues.max_bytes",
            )
            if m in points.columns
        ]
        body.append("<h2>Runs</h2>")
        rows = [
            [_e(r["point"]), _e(r["variant"]), _e(r["seed"])]
            + [format_number(r[m]) for m in metrics]
            for _, r in points.iterrows()
        ]
        body.append(_table(["point", "variant", "seed", *metrics], rows, left=3))
    if plots:
        body.append("<h2>Plots</h2>")
        body += [_img(p, p.stem) for p in plots]
    return _page(f"incast sweep: {experiment.name}", body)


def write_sweep_report(experiment: Any, out: Path, points: Any, comps: Any, plots: list) -> Path:
    path = out / "report.html"
    path.write_text(sweep_report_html(experiment, points, comps, plots), encoding="utf-8")
    return path
