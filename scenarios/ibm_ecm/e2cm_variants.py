"""E2CM's probe-protocol readings against ECM: the README's table "E2CM's probing".

    incast sweep scenarios/ibm_ecm/e2cm_variants.toml -j 1 --out /root/ecm_e2cm
    python scenarios/ibm_ecm/e2cm_variants.py /root/ecm_e2cm

For every variant and point: the aggregate throughput during the hotspot (Gb/s, the mean over
seeds, `ts.tp_during` of scenarios/claims.py), its ratio to ECM's at the same point, and the
recovery time (`ts.recovery_ms`; the hotspot's 400 ms when not recovered).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: variant -> what it is (e2cm_variants.toml)
READINGS = {
    "ecm": "ECM (the talk's values, Gi0 the quotient)",
    "e2cm": "E2CM: probes on the feedback class while limited, Q_flow = d x R_limiter",
    "e2cm_cp": "E2CM-CP: probes on the feedback class, always",
    "e2cm_inband": "E2CM, probes in band (the data class), Q_flow = d x R_limiter",
    "e2cm_cp_inband": "E2CM-CP, probes in band, Q_flow = d x R_limiter",
    "e2cm_cp_inband_path": "E2CM-CP, probes in band, Q = d x R_link (the path's backlog)",
    "e2cm_cp_inband_measured": "E2CM-CP, probes in band, Q_flow = d x R measured",
    "ecm_as_printed": "ECM, Gi0 as printed (the product)",
    "e2cm_as_printed": "E2CM (feedback-class probes), its ECM loop's Gi0 as printed",
    "e2cm_cp_as_printed": "E2CM-CP (feedback-class probes), Gi0 as printed",
}


def _claims_module():
    spec = importlib.util.spec_from_file_location("claims", HERE.parent / "claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["claims"] = module
    spec.loader.exec_module(module)
    return module


def table(sweep_dir: Path) -> str:
    claims = _claims_module()
    sweep = claims.Sweep("e2cm", sweep_dir)
    # the points every reading ran at (a sweep run with --only may hold a few runs of others)
    ran = sweep.points.groupby("point")["variant"].nunique()
    points = [p for p in dict.fromkeys(sweep.points["point"]) if ran[p] == ran.max()]
    variants = [v for v in READINGS if v in set(sweep.points["variant"])]

    def mean(point: str, variant: str, metric: str) -> float:
        runs = sweep.runs(point, variant)
        return claims._mean([sweep.metric(r, metric) for _, r in runs.iterrows()])

    ecm = {p: mean(p, "ecm", "ts.tp_during") for p in points}
    head = "| reading | " + " | ".join(points) + " |"
    lines = [
        "TP_aggr during the hotspot, Gb/s (x ECM's) / recovery, ms (400: none):",
        "",
        head,
        "|---|" + "---|" * len(points),
    ]
    for variant in variants:
        cells = []
        for point in points:
            tp = mean(point, variant, "ts.tp_during")
            rec = mean(point, variant, "ts.recovery_ms")
            cells.append(f"{tp:,.0f} ({tp / ecm[point]:.2f}) / {rec:.0f}")
        lines.append(f"| {READINGS[variant]} (`{variant}`) | " + " | ".join(cells) + " |")
    seeds = sorted(set(sweep.points["seed"]))
    lines += ["", f"Seeds {', '.join(str(s) for s in seeds)}; mean over seeds."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python scenarios/ibm_ecm/e2cm_variants.py SWEEP_DIR", file=sys.stderr)
        return 2
    print(table(Path(args[0]).expanduser()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
