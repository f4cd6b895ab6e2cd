//! `BUFFER_SIZE`, `ENABLE_QCN`, the `K*_MAP`s and HPCC-sim's fixed PFC
//! parameters → `[switch]` (docs/hpcc-interop.md, "Switches").

use super::rate_str;
use crate::hpcc_format::config::Config;
use crate::hpcc_format::topology::Topo;
use crate::hpcc_format::{HeadroomChoice, HPCC_PFC_RESERVE, HPCC_PFC_RESUME_OFFSET};
use crate::scenario::ScenarioError;
use crate::units::Rate;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The `[switch]` table: shared buffer, ECN, PFC, and the control class's
/// overrides when ACKs travel in a class of their own.
pub(super) fn switch_section(
    cfg: &Config,
    topo: &Topo,
    data_class: u8,
    ctrl_class: u8,
    headroom: HeadroomChoice,
) -> Result<Value, ScenarioError> {
    let buffer_mb = cfg.uint("BUFFER_SIZE", 16)?;
    if buffer_mb == 0 {
        return Err(cfg.err("BUFFER_SIZE", "must be at least 1 (MB)"));
    }
    let mut switch = json!({
        // third.cc: `buffer_size * 1024 * 1024`.
        "buffer": buffer_mb * 1024 * 1024,
        "ecn": ecn(cfg, topo)?,
        "pfc": pfc(data_class, headroom),
    });
    if ctrl_class != data_class {
        // HPCC-sim never marks its control queue.
        switch["classes"] = json!([{"class": ctrl_class, "ecn": {"kind": "off"}}]);
    }
    Ok(switch)
}

/// ECN: RED by port rate from the three maps, marking at dequeue as
/// `SwitchNotifyDequeue` does; or off, with the maps still checked.
fn ecn(cfg: &Config, topo: &Topo) -> Result<Value, ScenarioError> {
    if !cfg.flag("ENABLE_QCN", true)? {
        for k in ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"] {
            if cfg.has(k) {
                cfg.rate_map(k)?;
            }
        }
        return Ok(json!({"kind": "off"}));
    }
    let kmin = cfg.rate_map("KMIN_MAP")?;
    let kmax = cfg.rate_map("KMAX_MAP")?;
    let pmax = cfg.rate_map("PMAX_MAP")?;
    let port_rates: BTreeSet<u64> = topo
        .links
        .iter()
        .filter(|l| topo.is_switch[l.a as usize] || topo.is_switch[l.b as usize])
        .map(|l| l.rate.0)
        .collect();
    let mut levels = vec![];
    for &r in &port_rates {
        let get = |m: &[(u64, f64)], key: &str| -> Result<f64, ScenarioError> {
            m.iter().find(|x| x.0 == r).map(|x| x.1).ok_or_else(|| {
                cfg.err(
                    key,
                    format!(
                        "no entry for {} switch ports (HPCC-sim requires one per link rate)",
                        Rate(r)
                    ),
                )
            })
        };
        let (lo, hi, p) = (
            get(&kmin, "KMIN_MAP")?,
            get(&kmax, "KMAX_MAP")?,
            get(&pmax, "PMAX_MAP")?,
        );
        if lo > hi {
            return Err(cfg.err(
                "KMIN_MAP",
                format!("kmin {lo} KB exceeds kmax {hi} KB at {}", Rate(r)),
            ));
        }
        if p > 1.0 {
            return Err(cfg.err("PMAX_MAP", format!("pmax {p} at {} is above 1", Rate(r))));
        }
        // HPCC-sim's thresholds are in KB (x 1000, switch-mmu.cc).
        levels.push(json!({
            "rate": rate_str(Rate(r)),
            "kmin": (lo * 1000.0).round() as u64,
            "kmax": (hi * 1000.0).round() as u64,
            "pmax": p,
        }));
    }
    Ok(json!({"kind": "red_by_rate", "levels": levels, "at": "dequeue"}))
}

/// PFC on the data class with HPCC-sim's MMU parameters (`switch-mmu.cc`),
/// and its headroom rule (`third.cc`: 3 x rate x delay per port) unless the
/// options ask for incast's formula.
fn pfc(data_class: u8, headroom: HeadroomChoice) -> Value {
    let mut pfc = json!({
        "classes": [data_class],
        "threshold": {"kind": "dynamic", "alpha": 0.125, "scale_with_rate": true},
        "reserve": HPCC_PFC_RESERVE,
        "resume_offset": HPCC_PFC_RESUME_OFFSET,
        "mode": "until_resume",
    });
    match headroom {
        HeadroomChoice::Hpcc => pfc["headroom"] = json!({"rule": "hpcc"}),
        HeadroomChoice::Formula => {}
    }
    pfc
}
