"""Self-contained HTML reports of a run and of a sweep.

One file, no network: the plots are embedded as base64 PNGs, the styles are
inline, there is no script. Open `report.html` in any browser, mail it, or
attach it to a paper's artifact.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any

_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #1d2330; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.6em;
     border-bottom: 2px solid #d8dde6; padding-bottom: 0.2em; }
.meta { color: #5a6475; }
.warning { color: #8a5a00; background: #fff6e0; padding: 4px 8px; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #d8dde6; padding: 0.25em 0.6em; text-align: right; }
th { background: #eef1f6; } td.l, th.l { text-align: left; }
td.good { background: #d9f2dd; } td.bad { background: #f8dcdc; }
img { max-width: 100%; border: 1px solid #d8dde6; margin: 0.5em 0; }
.scroll { overflow-x: auto; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if math.isinf(x):
            return "inf"
        return f"{x:.{digits}g}"
    return _e(x)


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _page(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
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


def _bucket_rows(summary: dict) -> list[list[str]]:
    rows = []
    buckets = [b for b in summary.get("buckets") or [] if isinstance(b, dict)]
    overall = summary.get("overall") if isinstance(summary.get("overall"), dict) else None
    for b in buckets + ([dict(overall, label="all flows")] if overall else []):
        sd = b.get("slowdown") if isinstance(b.get("slowdown"), dict) else {}
        fct = b.get("fct_us") if isinstance(b.get("fct_us"), dict) else {}
        rows.append(
            [_e(b.get("label", "?")), _num(b.get("count"))]
            + [_num(sd.get(k)) for k in ("mean", "p50", "p95", "p99", "p999")]
            + [_num(fct.get("mean"))]
        )
    return rows


def run_report_html(results: Any, plots: list[tuple[str, Path]]) -> str:
    """The HTML report of one run: header, slowdown by size, totals, plots."""
    from .report import pfc_rows, totals_rows

    s = results.summary if isinstance(results.summary, dict) else {}
    name = s.get("scenario", "?")
    body = [
        f"<h1>incast run: {_e(name)}</h1>",
        f'<p class="meta">seed {_e(s.get("seed", "?"))}, simulated {_num(s.get("sim_time_us"))} us'
        f", {_num((results.stats or {}).get('events'))} events</p>",
    ]
    # What a reader must know before trusting the numbers (unfinished flows, lossless drops).
    for w in s.get("warnings") or []:
        body.append(f'<p class="warning"><b>warning:</b> {_e(w)}</p>')
    body.append("<h2>Slowdown (FCT / ideal FCT) by flow size</h2>")
    rows = _bucket_rows(s)
    if rows:
        body.append(
            _table(["size", "flows", "mean", "p50", "p95", "p99", "p99.9", "mean FCT (us)"], rows)
        )
    else:
        body.append("<p>No measured flows.</p>")
    inc = s.get("incasts")
    if isinstance(inc, dict) and inc.get("count"):
        ct = inc.get("completion_us") if isinstance(inc.get("completion_us"), dict) else {}
        body.append("<h2>Incast completion time (us)</h2>")
        body.append(
            _table(
                ["incasts", "finished", "mean", "p50", "p95", "p99", "p99.9"],
                [
                    [_num(inc.get("count")), _num(inc.get("finished"))]
                    + [_num(ct.get(k)) for k in ("mean", "p50", "p95", "p99", "p999")]
                ],
                left=0,
            )
        )
    body.append("<h2>Totals</h2>")
    body.append(_table(["metric", "value"], [[_e(k), _e(v)] for k, v in totals_rows(s)]))
    pfc = pfc_rows(s)
    if pfc:
        body.append("<h2>PFC</h2>")
        body.append(_table(["metric", "value"], [[_e(k), _e(v)] for k, v in pfc]))
    for key, title in (("edge", "Edge pausing"), ("ci", "Congestion isolation")):
        block = s.get(key)
        if isinstance(block, dict):
            from .combine import flatten_summary

            rows = [[_e(k.replace("_", " ")), _num(v)] for k, v in flatten_summary(block).items()]
            body.append(f"<h2>{title}</h2>")
            body.append(_table(["metric", "value"], rows))
    if plots:
        body.append("<h2>Plots</h2>")
        body += [_img(p, alt) for alt, p in plots]
    return _page(f"incast: {name}", body)


def write_run_report(results: Any, out: Path, plot_names: list[str]) -> Path:
    plots = [(n, out / n) for n in plot_names if (out / n).is_file()]
    path = out / "report.html"
    path.write_text(run_report_html(results, plots), encoding="utf-8")
    return path


def _factor_cell(mean: float, std: float, seeds: int) -> str:
    from .combine import format_factor

    text = _e(format_factor(mean, std, seeds))
    if isinstance(mean, float) and not math.isnan(mean):
        cls = "good" if mean > 1.05 else "bad" if mean < 0.95 else ""
        if cls:
            return f'<td class="{cls}">{text}</td>'
    return f"<td>{text}</td>"


def sweep_report_html(experiment: Any, points: Any, comps: Any, plots: list[Path]) -> str:
    """The HTML report of a sweep: the experiment, its comparisons (factor
    mean ± std over seeds), the runs' key metrics and every plot."""
    body = [
        f"<h1>incast sweep: {_e(experiment.name)}</h1>",
        f'<p class="meta">{_e(experiment.description)}</p>' if experiment.description else "",
        f'<p class="meta">{len(experiment.runs)} runs: {len(experiment.points)} points x '
        f"variants {_e(', '.join(experiment.variants))}; {len(points)} finished.</p>",
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
            [_e(r["point"]), _e(r["variant"]), _e(r["seed"])] + [_num(r[m]) for m in metrics]
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
