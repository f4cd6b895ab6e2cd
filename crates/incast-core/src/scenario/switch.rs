//! Checks of `[switch]`: admission, ECN, the scheduler, per-class overrides,
//! and their translation into the switches' [`SwitchParams`]. Whether the buffer
//! leaves every class room is `buffer.rs`.

use super::{
    check_class, AdmissionConfig, EcnConfig, MarkPoint, Scenario, ScenarioError, SchedulerKind,
};
use crate::params::switch::{Admission, Ecn, EcnRule, Scheduler, SwitchParams};
use crate::params::NUM_CLASSES;

/// The largest DWRR quantum (1 GB): weights multiply it, and a quantum larger
/// than any buffer only makes DWRR strict priority in disguise.
const MAX_QUANTUM: u64 = 1_000_000_000;

impl Scenario {
    /// The switch parameters, checked.
    pub fn switch_params(&self) -> Result<SwitchParams, ScenarioError> {
        let s = &self.config.switch;
        let mtu = self.config.transport.mtu as i64;
        let mut p = SwitchParams {
            buffer: s.buffer.0,
            ..Default::default()
        };
        if p.buffer == 0 {
            return Err(ScenarioError::new(
                "switch.buffer",
                "the shared buffer must be positive",
            ));
        }
        p.scheduler = match s.scheduler {
            SchedulerKind::Strict => Scheduler::StrictPriority,
            SchedulerKind::Dwrr => Scheduler::Dwrr,
        };
        let quantum = s.dwrr_quantum.map_or(mtu as u64, |q| q.0);
        if quantum < mtu as u64 || quantum > MAX_QUANTUM {
            return Err(ScenarioError::new(
                "switch.dwrr_quantum",
                format!(
                    "the quantum must be at least the MTU ({mtu} B) and at most \
                     {MAX_QUANTUM} B, got {quantum} B"
                ),
            ));
        }
        let quantum = quantum as i64;
        let adm = admission(&s.admission, "switch.admission")?;
        let ecn = ecn_of(&s.ecn, "switch.ecn")?;
        p.admission = [adm; NUM_CLASSES];
        p.ecn = std::array::from_fn(|_| ecn.clone());
        p.quantum = [quantum; NUM_CLASSES];
        for (i, c) in s.classes.iter().enumerate() {
            let path = format!("switch.classes[{i}]");
            check_class(c.class, &format!("{path}.class"))?;
            let k = c.class as usize;
            if let Some(w) = c.weight {
                if w == 0 {
                    return Err(ScenarioError::new(
                        format!("{path}.weight"),
                        "weights must be at least 1",
                    ));
                }
                p.quantum[k] = quantum * w as i64;
            }
            if let Some(e) = &c.ecn {
                p.ecn[k] = ecn_of(e, &format!("{path}.ecn"))?;
            }
            if let Some(a) = &c.admission {
                p.admission[k] = admission(a, &format!("{path}.admission"))?;
            }
        }
        Ok(p)
    }
}

fn admission(a: &AdmissionConfig, path: &str) -> Result<Admission, ScenarioError> {
    match *a {
        AdmissionConfig::Dynamic { alpha } if alpha > 0.0 && alpha.is_finite() => {
            Ok(Admission::Dynamic { alpha })
        }
        AdmissionConfig::Dynamic { alpha } => Err(ScenarioError::new(
            format!("{path}.alpha"),
            format!("alpha must be positive, got {alpha}"),
        )),
        AdmissionConfig::Static { limit } if limit.0 > 0 => {
            Ok(Admission::Static { limit: limit.0 })
        }
        AdmissionConfig::Static { .. } => Err(ScenarioError::new(
            format!("{path}.limit"),
            "the limit must be positive",
        )),
    }
}

fn ecn_of(e: &EcnConfig, path: &str) -> Result<EcnRule, ScenarioError> {
    Ok(match e {
        EcnConfig::RedByRate { levels, at } => {
            if levels.is_empty() {
                return Err(ScenarioError::new(
                    format!("{path}.levels"),
                    "give at least one level { rate, kmin, kmax, pmax }",
                ));
            }
            let mut out = vec![];
            for (i, l) in levels.iter().enumerate() {
                let one = EcnConfig::Red {
                    kmin: l.kmin,
                    kmax: l.kmax,
                    pmax: l.pmax,
                    at: *at,
                };
                match ecn_of(&one, &format!("{path}.levels[{i}]"))? {
                    EcnRule::Fixed(e) => out.push((l.rate.0.bits_per_sec(), e)),
                    EcnRule::ByRate(_) => unreachable!(),
                }
            }
            out.sort_by_key(|x| x.0);
            EcnRule::ByRate(out)
        }
        other => EcnRule::Fixed(ecn_fixed(other, path)?),
    })
}

fn ecn_fixed(e: &EcnConfig, path: &str) -> Result<Ecn, ScenarioError> {
    Ok(match *e {
        EcnConfig::Off => Ecn::Off,
        EcnConfig::RedByRate { .. } => unreachable!("handled by ecn_of"),
        EcnConfig::Step { k, at } => Ecn::step(k.0, at == MarkPoint::Dequeue),
        EcnConfig::Red {
            kmin,
            kmax,
            pmax,
            at,
        } => {
            if kmin.0 > kmax.0 {
                return Err(ScenarioError::new(
                    format!("{path}.kmin"),
                    format!("kmin ({} B) must not exceed kmax ({} B)", kmin.0, kmax.0),
                ));
            }
            if !(0.0..=1.0).contains(&pmax) {
                return Err(ScenarioError::new(
                    format!("{path}.pmax"),
                    format!("pmax must be in [0, 1], got {pmax}"),
                ));
            }
            Ecn::Red {
                kmin: kmin.0,
                kmax: kmax.0,
                pmax,
                at_dequeue: at == MarkPoint::Dequeue,
            }
        }
    })
}
