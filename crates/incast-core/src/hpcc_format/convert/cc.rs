//! `CC_MODE` and its keys → `rdma.cc` (docs/hpcc-interop.md, "Congestion control").
//!
//! Only the chosen mode's keys take effect, as in HPCC-sim; the keys of the
//! other modes are still parsed, so a malformed value is reported whatever
//! the mode. Keys that HPCC-sim's `third.cc` leaves uninitialised are
//! required by the mode that uses them.

use super::{rate_str, us_str};
use crate::hpcc_format::config::Config;
use crate::hpcc_format::{HPCC_INT_BYTES, TIMELY_TS_BYTES};
use crate::scenario::ScenarioError;
use crate::units::Rate;
use serde_json::{json, Map, Value};

/// The congestion control of a run: `rdma.cc` and the INT bytes its data
/// packets carry (HPCC-sim's `IntHeader::GetStaticSize` for the mode).
pub(super) struct CongestionControl {
    pub cc: Map<String, Value>,
    pub int_bytes: u32,
}

/// Reads `CC_MODE` and the chosen algorithm's keys, and checks the others.
pub(super) fn congestion_control(cfg: &Config) -> Result<CongestionControl, ScenarioError> {
    let cc_mode = cfg.uint("CC_MODE", 1)?;
    let min_rate = cfg.rate("MIN_RATE", Some("100Mb/s"), "")?;
    let chosen = match cc_mode {
        1 => CongestionControl {
            cc: dcqcn(cfg, min_rate)?,
            int_bytes: 0,
        },
        3 => CongestionControl {
            cc: hpcc(cfg, min_rate)?,
            int_bytes: HPCC_INT_BYTES,
        },
        7 => CongestionControl {
            cc: timely(cfg, min_rate)?,
            int_bytes: TIMELY_TS_BYTES,
        },
        8 => CongestionControl {
            cc: dctcp(cfg, min_rate)?,
            int_bytes: 0,
        },
        10 => {
            return Err(cfg.err(
                "CC_MODE",
                "10 (HPCC-PINT) is not supported; use 3 (HPCC with full INT)",
            ))
        }
        m => {
            let msg = format!("{m} is not a congestion control of HPCC-sim");
            return Err(cfg.err("CC_MODE", msg + " (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)"));
        }
    };
    check_other_modes_keys(cfg)?;
    Ok(chosen)
}

/// `CC_MODE 1`: DCQCN as HPCC-sim's Mellanox model.
fn dcqcn(cfg: &Config, min_rate: Rate) -> Result<Map<String, Value>, ScenarioError> {
    let mut cc = Map::new();
    cc.insert("algorithm".into(), json!("dcqcn"));
    cc.insert("model".into(), json!("mellanox"));
    cc.insert(
        "g".into(),
        json!(cfg.required_float("EWMA_GAIN", "DCQCN's alpha gain g")?),
    );
    cc.insert(
        "alpha_interval".into(),
        json!(us_str(
            cfg,
            "ALPHA_RESUME_INTERVAL",
            cfg.float("ALPHA_RESUME_INTERVAL", 55.0)?
        )?),
    );
    cc.insert(
        "decrease_interval".into(),
        json!(us_str(
            cfg,
            "RATE_DECREASE_INTERVAL",
            cfg.float("RATE_DECREASE_INTERVAL", 4.0)?
        )?),
    );
    cc.insert(
        "increase_interval".into(),
        json!(us_str(
            cfg,
            "RP_TIMER",
            cfg.required_float("RP_TIMER", "DCQCN's rate-increase timer (us)")?
        )?),
    );
    cc.insert(
        "fast_recovery_times".into(),
        json!(cfg.uint("FAST_RECOVERY_TIMES", 5)?),
    );
    cc.insert(
        "rate_ai".into(),
        cfg.rate_json("RATE_AI", "DCQCN's additive increase")?,
    );
    cc.insert(
        "rate_hai".into(),
        cfg.rate_json("RATE_HAI", "DCQCN's hyper increase")?,
    );
    cc.insert("min_rate".into(), json!(rate_str(min_rate)));
    cc.insert(
        "clamp_target_rate".into(),
        json!(cfg.flag("CLAMP_TARGET_RATE", false)?),
    );
    // HPCC-sim's fixed attributes: RateOnFirstCnp 1.0, alpha 1 on the first CNP,
    // no byte counter, and the CNP flag of an ACK acts as a CNP.
    cc.insert("rate_on_first_cnp".into(), json!(1.0));
    cc.insert("initial_alpha".into(), json!(1.0));
    cc.insert("ece_as_cnp".into(), json!(true));
    Ok(cc)
}

/// `CC_MODE 3`: HPCC with full INT.
fn hpcc(cfg: &Config, min_rate: Rate) -> Result<Map<String, Value>, ScenarioError> {
    let mut cc = Map::new();
    cc.insert("algorithm".into(), json!("hpcc"));
    cc.insert("eta".into(), json!(cfg.float("U_TARGET", 0.95)?));
    cc.insert("max_stage".into(), json!(cfg.uint("MI_THRESH", 5)?));
    cc.insert(
        "rate_ai".into(),
        cfg.rate_json("RATE_AI", "HPCC's additive increase")?,
    );
    cc.insert("min_rate".into(), json!(rate_str(min_rate)));
    cc.insert("fast_react".into(), json!(cfg.flag("FAST_REACT", true)?));
    if !cfg.has("MULTI_RATE") {
        return Err(cfg.err(
            "MULTI_RATE",
            "missing: HPCC-sim defaults it to 1 (per-hop rates), which incast does not support; write `MULTI_RATE 0`",
        ));
    }
    Ok(cc)
}

/// `CC_MODE 7`: TIMELY.
fn timely(cfg: &Config, min_rate: Rate) -> Result<Map<String, Value>, ScenarioError> {
    let mut cc = Map::new();
    cc.insert("algorithm".into(), json!("timely"));
    cc.insert(
        "rate_ai".into(),
        cfg.rate_json("RATE_AI", "TIMELY's additive increase")?,
    );
    cc.insert(
        "rate_hai".into(),
        cfg.rate_json("RATE_HAI", "TIMELY's hyper increase")?,
    );
    cc.insert("min_rate".into(), json!(rate_str(min_rate)));
    // HPCC-sim's fixed TIMELY attributes (rdma-hw.cc), stated so incast's defaults cannot drift.
    cc.insert("ewma_alpha".into(), json!(0.875));
    cc.insert("beta".into(), json!(0.8));
    cc.insert("t_low".into(), json!("50us"));
    cc.insert("t_high".into(), json!("500us"));
    cc.insert("min_rtt".into(), json!("20us"));
    cc.insert("hai_threshold".into(), json!(5));
    Ok(cc)
}

/// `CC_MODE 8`: rate-based DCTCP.
fn dctcp(cfg: &Config, min_rate: Rate) -> Result<Map<String, Value>, ScenarioError> {
    let mut cc = Map::new();
    cc.insert("algorithm".into(), json!("dctcp"));
    cc.insert(
        "g".into(),
        json!(cfg.required_float("EWMA_GAIN", "DCTCP's alpha gain g")?),
    );
    cc.insert(
        "rate_ai".into(),
        json!(rate_str(cfg.rate("DCTCP_RATE_AI", Some("1000Mb/s"), "")?)),
    );
    cc.insert("min_rate".into(), json!(rate_str(min_rate)));
    cc.insert("initial_alpha".into(), json!(1.0));
    Ok(cc)
}

/// Keys of the other algorithms are read (so malformed values are reported) but only the
/// chosen algorithm's keys take effect, as in HPCC-sim.
fn check_other_modes_keys(cfg: &Config) -> Result<(), ScenarioError> {
    for k in [
        "EWMA_GAIN",
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "RP_TIMER",
        "U_TARGET",
    ] {
        cfg.float(k, 0.0)?;
    }
    for k in ["FAST_RECOVERY_TIMES", "MI_THRESH"] {
        cfg.uint(k, 0)?;
    }
    for k in ["RATE_AI", "RATE_HAI", "DCTCP_RATE_AI"] {
        if cfg.has(k) {
            cfg.rate(k, None, "")?;
        }
    }
    cfg.flag("CLAMP_TARGET_RATE", false)?;
    cfg.flag("FAST_REACT", true)?;
    let int_multi = cfg.uint("INT_MULTI", 1)?;
    if int_multi == 0 {
        return Err(cfg.err("INT_MULTI", "must be at least 1"));
    }
    Ok(())
}
