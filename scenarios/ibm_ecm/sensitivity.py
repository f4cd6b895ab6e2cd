"""The bursty claims of the IBM ECM/E2CM talk per setting: the README's sensitivity table.

    incast sweep scenarios/ibm_ecm/sensitivity.toml -j 1 --out /root/ecm_sens
    python scenarios/ibm_ecm/sensitivity.py /root/ecm_sens

Each variant of sensitivity.toml changes one setting; every claim of claims.toml that reads the
`bursty` sweep is computed again (scenarios/claims.py, the same kinds and metrics) with the
variant in place of the talk's ECM (or E2CM), against the no-CM run of the same switch memory.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: variant -> (the scheme it changes, its no-CM baseline, what it sets)
SETTINGS = {
    "ecm": ("ecm", "none", "the talk's values (Ps 2 %, Gi 0.1 Gi0 quotient, 300 KB, 260/230 KB)"),
    "ecm_ps1": ("ecm", "none", "Ps = 1 %"),
    "ecm_ps10": ("ecm", "none", "Ps = 10 %"),
    "ecm_as_printed": ("ecm", "none", "Gi0 as printed (the product)"),
    "ecm_gi001": ("ecm", "none", "Gi = 0.01 Gi0"),
    "ecm_gi1": ("ecm", "none", "Gi = Gi0"),
    "ecm_gd_half": ("ecm", "none", "Gd x 0.5"),
    "ecm_gd_x1_5": ("ecm", "none", "Gd x 1.5"),
    "ecm_bcnmax_every": ("ecm", "none", "BCN_MAX on every frame above 260 KB"),
    "ecm_ru100": ("ecm", "none", "Ru = Rmin = 100 Mb/s"),
    "ecm_mem150": ("ecm", "none_mem150", "150 KB per input (PAUSE 110/80 KB)"),
    "ecm_mem600": ("ecm", "none_mem600", "600 KB per input (PAUSE 560/530 KB)"),
    "ecm_wm200": ("ecm", "none", "PAUSE at 200/170 KB"),
    "ecm_wm280": ("ecm", "none", "PAUSE at 280/250 KB"),
    "e2cm": ("e2cm", "none", "the talk's values"),
    "e2cm_as_printed": ("e2cm", "none", "E2CM, its ECM loop's Gi0 as printed"),
}


def _claims_module():
    spec = importlib.util.spec_from_file_location("claims", HERE.parent / "claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["claims"] = module
    spec.loader.exec_module(module)
    return module


def _with_variant(claim: dict, scheme: str, variant: str, baseline: str) -> dict | None:
    """The claim with `variant` in place of the talk's `scheme`, or None if it reads neither."""
    out = dict(claim, sweep="sens")
    if "variants" in claim:
        if scheme not in claim["variants"]:
            return None
        out["variants"] = [variant]
    elif claim.get("variant") == scheme:
        out["variant"] = variant
        if "baseline" in claim:
            out["baseline"] = baseline
    else:
        return None
    return out


def table(sweep_dir: Path) -> str:
    claims = _claims_module()
    doc = claims.load_claims("ibm_ecm")
    sweep = claims.Sweep("sens", sweep_dir)
    bursty = [c for c in doc["claim"] if c.get("sweep") == "bursty"]
    head = "| setting | " + " | ".join(c["id"] for c in bursty) + " |"
    lines = [head, "|---|" + "---|" * len(bursty)]
    present = set(sweep.points["variant"])
    for variant, (scheme, baseline, what) in SETTINGS.items():
        if variant not in present:
            continue
        cells = []
        for claim in bursty:
            changed = _with_variant(claim, scheme, variant, baseline)
            if changed is None:
                cells.append("")
                continue
            try:
                row = claims.compute(changed, {"sens": sweep}, {}, float(doc["tolerance"]))
            except claims.ClaimsError:  # the variant ran only where the claim does not read
                cells.append("-")
                continue
            cells.append(f"{row.text} **{row.verdict}**")
        if all(cell in ("", "-") for cell in cells):
            continue  # ran only with PAUSE (the watermarks): the table below
        lines.append(f"| {what} (`{variant}`) | " + " | ".join(cells) + " |")
    lines += ["", _pause_points(claims, sweep)]
    return "\n".join(lines)


def _pause_points(claims, sweep) -> str:
    """The watermark variants, on the points with PAUSE: aggregate throughput during the
    hotspot (Gb/s) and its overshoot (`ts.overshoot@200us`), means over seeds."""
    points = [p for p in dict.fromkeys(sweep.points["point"]) if p.endswith("_pause")]
    lines = [
        "With PAUSE (TP_aggr during the hotspot, Gb/s / overshoot):",
        "",
        "| variant | " + " | ".join(points) + " |",
        "|---|" + "---|" * len(points),
    ]
    for variant in ("none", "ecm", "ecm_wm200", "ecm_wm280"):
        cells = []
        for point in points:
            runs = sweep.runs(point, variant)
            if runs.empty:
                cells.append("-")
                continue
            tp = claims._mean([sweep.metric(r, "ts.tp_during") for _, r in runs.iterrows()])
            over = [sweep.metric(r, "ts.overshoot@200us") for _, r in runs.iterrows()]
            cells.append(f"{tp:.1f} / {claims._mean(over):.3f}")
        lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python scenarios/ibm_ecm/sensitivity.py SWEEP_DIR", file=sys.stderr)
        return 2
    print(table(Path(args[0]).expanduser()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
