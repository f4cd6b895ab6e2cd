//! Congestion management of the IEEE 802.1Qau era: ECM (BCN), E2CM and QCN,
//! and the adapter and switch models of the IBM talk that evaluated them
//! (Minkenberg and Gusat, "ECM and E²CM performance under bursty traffic",
//! IBM Research Zurich, April 2007; docs/mechanisms.md lists the talks).
//!
//! Everything here is a pure state machine: inputs in, decisions out. No
//! engine, no packets, no links: the simulation wires these pieces to its
//! switches and NICs (see `docs/ecm-qcn.md`, "What the wiring must provide").
//!
//! # How the pieces talk to each other
//!
//! ```text
//!   source NIC (adapter)                         switch output queue
//!  ┌──────────────────────────┐  data frames   ┌──────────────────────┐
//!  │ VOQ per destination      │ ─────────────▶ │ congestion point (CP)│
//!  │  + rate limiter (RP) ◀───┼── feedback ─── │ samples on enqueue   │
//!  └──────────────────────────┘   frames       └──────────────────────┘
//! ```
//!
//! 1. A **congestion point** ([`ecm::EcmCp`], [`qcn_cp::QcnCp`]) sits on a
//!    switch output queue. The switch calls it for every frame it admits to
//!    the queue, with the queue's length; now and then (a sample) it answers
//!    with a feedback frame addressed to the frame's source. The feedback is
//!    computed from the queue's offset from its set point and its change since
//!    the last sample: `Fb = -(Qoff + W * Qdelta)`, `Qoff = Q - Qeq`,
//!    `Qdelta = Q - Qold`.
//! 2. The feedback frame travels back to the source like any frame (it has a
//!    size, [`FEEDBACK_FRAME_BYTES`], a path and a delay).
//! 3. The source's **reaction point** for that flow ([`ecm::EcmRp`],
//!    [`e2cm::E2cmRp`], [`qcn_rp::QcnRp`]) changes the rate of the flow's rate
//!    limiter. The NIC's scheduler ([`adapter::VoqAdapter`]) paces each VOQ at
//!    its limiter's rate.
//!
//! E2CM adds a second loop: the source's rate limiter sends **probes** along
//! the flow's path; the destination returns them with the queueing delay they
//! met, and the reaction point runs the ECM formula on the flow's own share of
//! the path's queues ([`e2cm`]).
//!
//! # A short tour
//!
//! ```
//! use incast_core::cm::ecm::{EcmCp, EcmParams, EcmRp, ArrivingFrame};
//! use incast_core::rng::Stream;
//! let p = EcmParams::default(); // the talk's values: W = 2, Qeq = 75 KB, Ps = 2 %
//! let gains = p.resolve(10e9);   // gains for a 10 Gb/s source
//! let mut cp = EcmCp::new(7, &p, Stream::new(1, "ecm-cp", 7));
//! let mut rp = EcmRp::new(&gains);
//! let mut rng = Stream::new(1, "ecm-rp", 0);
//! // A queue standing at 150 KB: every sample asks the source to slow down.
//! let mut now = 0;
//! while rp.rate() >= 10e9 {
//!     now += 1_200_000; // one 1500 B frame time at 10 Gb/s
//!     if let Some(fb) = cp.on_enqueue(150_000, ArrivingFrame { src: 3, dst: 5, tag: rp.tag() }) {
//!         assert!(fb.fb < 0.0 && fb.to == 3);
//!         rp.on_feedback(now, &fb, &mut rng);
//!     }
//! }
//! assert_eq!(rp.tag(), Some(7)); // the flow's frames now carry CP 7's tag
//! ```
//!
//! # Files
//!
//! | file | what |
//! |---|---|
//! | [`ecm`] | ECM (BCN-based) parameters, congestion point and reaction point |
//! | [`e2cm`] | E2CM: ECM plus per-flow end-to-end probing (and E2CM-CP) |
//! | [`qcn_cp`], [`qcn_rp`] | QCN (IEEE 802.1Qau-2010) congestion and reaction points |
//! | [`adapter`] | the talk's NIC: VOQs, round robin, rate limiters, partitioned ingress buffer, source quench |
//! | [`rx_buffer`] | the NIC's receive buffer drained at the host's service rate, PAUSE by watermarks |
//! | [`input_buffer`] | the talk's switch memory: a partition per input port, PAUSE per input or drop |
//! | [`watermark`] | high/low watermark hysteresis shared by the two above |
//! | [`scheme`] | `AnyCp` / `AnyRp`: every scheme behind one switch hook and one NIC hook set |
//!
//! Decisions, sources and defaults: `docs/ecm-qcn.md`.

pub mod adapter;
pub mod e2cm;
pub mod ecm;
pub mod input_buffer;
pub mod qcn_cp;
pub mod qcn_rp;
pub(crate) mod report;
pub mod rx_buffer;
pub mod scenario;
pub mod scheme;
pub mod watermark;

#[cfg(test)]
mod closed_loop;

use crate::config_types::Registry;
pub use crate::rdma::cc::ParamError;
use serde::{Deserialize, Serialize};

/// Counters that only unit tests read, such as a reaction point's (one per
/// flow: N² of them under E2CM-CP, where every frame reads a random one):
/// kept in test builds, zero-sized in others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestCounters<T> {
    #[cfg(test)]
    pub c: T,
    #[cfg(not(test))]
    c: std::marker::PhantomData<T>,
}

impl<T> TestCounters<T> {
    /// Applies `count` to the counters (nothing outside test builds).
    #[inline(always)]
    pub fn bump(&mut self, count: impl FnOnce(&mut T)) {
        #[cfg(test)]
        count(&mut self.c);
        #[cfg(not(test))]
        let _ = count;
    }
}

/// Identifies a congestion point (a switch output queue). The wiring chooses
/// the numbering (e.g. `switch << 16 | port`); it is what ECM's rate-limiter
/// tag carries (BCN's CPID) and what QCN's CNM carries (the CPID field).
pub type CpId = u32;

/// Size on the wire of a feedback frame (ECM/BCN message, QCN CNM, E2CM probe
/// and its echo): a minimum Ethernet frame. The QCN CNM PDU is 24 bytes plus up
/// to 64 bytes of the sampled frame (`cpMinHeaderOctets` defaults to 0), so
/// with the MIB defaults it fits in 64 bytes.
pub const FEEDBACK_FRAME_BYTES: u64 = 64;

/// Link-level flow control decision of a watermark: send PAUSE (XOFF) or
/// resume (XON) to the upstream sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseChange {
    Pause,
    Resume,
}

/// The congestion-management scheme of a scenario (`[cm]`), with its
/// parameters. `scheme = "none"` runs the network without feedback.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(tag = "scheme", rename_all = "snake_case")]
pub enum CmConfig {
    /// No congestion management.
    None(NoParams),
    /// ECM (BCN-based): switch congestion points, source rate limiters.
    Ecm(ecm::EcmParams),
    /// E2CM: ECM plus per-flow probing while a flow is rate limited.
    E2cm(e2cm::E2cmParams),
    /// E2CM-CP: E2CM with probing always active ("continuous probing").
    E2cmCp(e2cm::E2cmParams),
    /// QCN, IEEE 802.1Qau-2010.
    Qcn(QcnParams),
}

/// `scheme = "none"` takes no parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// QCN's two halves: `[cm.cp]` (switch) and `[cm.rp]` (NIC).
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QcnParams {
    pub cp: qcn_cp::QcnCpParams,
    pub rp: qcn_rp::QcnRpParams,
}

impl CmConfig {
    /// Scheme names accepted as a plain string (`cm = "ecm"`).
    pub const NAMES: &'static [&'static str] = &["none", "ecm", "e2cm", "e2cm_cp", "qcn"];

    /// The scheme called `name` with its default parameters.
    pub fn by_name(name: &str) -> Option<CmConfig> {
        Some(match name {
            "none" => CmConfig::None(NoParams {}),
            "ecm" => CmConfig::Ecm(ecm::EcmParams::default()),
            "e2cm" => CmConfig::E2cm(e2cm::E2cmParams::default()),
            "e2cm_cp" => CmConfig::E2cmCp(e2cm::E2cmParams::default()),
            "qcn" => CmConfig::Qcn(QcnParams::default()),
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            CmConfig::None(_) => "none",
            CmConfig::Ecm(_) => "ecm",
            CmConfig::E2cm(_) => "e2cm",
            CmConfig::E2cmCp(_) => "e2cm_cp",
            CmConfig::Qcn(_) => "qcn",
        }
    }

    /// Checks every parameter; the error names the key below `[cm]`
    /// (`"qeq"`, `"cp.qeq"`, `"ecm.w"`) and the fix.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            CmConfig::None(_) => Ok(()),
            CmConfig::Ecm(p) => p.validate(),
            CmConfig::E2cm(p) => p.validate(false),
            CmConfig::E2cmCp(p) => p.validate(true),
            CmConfig::Qcn(p) => {
                p.cp.validate().map_err(|e| prefixed("cp", e))?;
                p.rp.validate().map_err(|e| prefixed("rp", e))
            }
        }
    }
}

impl Default for CmConfig {
    fn default() -> Self {
        CmConfig::None(NoParams {})
    }
}

impl Registry for CmConfig {
    const NAMES: &'static [&'static str] = CmConfig::NAMES;
    const WHAT: &'static str = "congestion-management scheme";
    fn by_name(name: &str) -> Option<Self> {
        CmConfig::by_name(name)
    }
}

/// Accepts `cm = "<scheme>"` (defaults) or a table `{ scheme = "<scheme>", ... }`.
pub fn deserialize_cm<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CmConfig, D::Error> {
    crate::config_types::deserialize_registered(d)
}

/// A `ParamError` of a nested table, its key prefixed: `cp` + `qeq` -> `cp.qeq`.
/// The key strings are leaked once per error (errors end a run).
pub(crate) fn prefixed(prefix: &str, e: ParamError) -> ParamError {
    let key: &'static str = Box::leak(format!("{prefix}.{}", e.field).into_boxed_str());
    ParamError::new(key, e.message)
}

/// Checks that a probability is in [0, 1] (`open_zero`: (0, 1]).
pub(crate) fn check_probability(
    field: &'static str,
    p: f64,
    open_zero: bool,
    hint: &str,
) -> Result<(), ParamError> {
    let ok = p.is_finite() && p <= 1.0 && if open_zero { p > 0.0 } else { p >= 0.0 };
    if ok {
        Ok(())
    } else {
        let range = if open_zero { "(0, 1]" } else { "[0, 1]" };
        Err(ParamError::new(
            field,
            format!("must be a probability in {range}, got {p}; {hint}"),
        ))
    }
}

/// Checks that a jitter fraction is in [0, 1).
pub(crate) fn check_jitter(field: &'static str, j: f64) -> Result<(), ParamError> {
    if j.is_finite() && (0.0..1.0).contains(&j) {
        Ok(())
    } else {
        Err(ParamError::new(
            field,
            format!("must be in [0, 1) (each interval is drawn uniformly in [1 - jitter, 1 + jitter] times its nominal length), got {j}; 0 disables it"),
        ))
    }
}

/// A uniform factor in `[1 - jitter, 1 + jitter]` (exactly 1 when `jitter` is 0,
/// without drawing, so a run without jitter draws nothing).
pub(crate) fn jitter_factor(rng: &mut crate::rng::Stream, jitter: f64) -> f64 {
    if jitter == 0.0 {
        1.0
    } else {
        1.0 - jitter + 2.0 * jitter * rng.uniform()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_by_name_and_as_tables() {
        for name in CmConfig::NAMES {
            let c = CmConfig::by_name(name).unwrap();
            assert_eq!(c.name(), *name);
            c.validate().unwrap();
        }
        #[derive(Deserialize)]
        struct S {
            #[serde(deserialize_with = "deserialize_cm")]
            cm: CmConfig,
        }
        let s: S = toml::from_str("cm = \"qcn\"").unwrap();
        assert_eq!(s.cm, CmConfig::Qcn(QcnParams::default()));
        let s: S = toml::from_str("[cm]\nscheme = \"ecm\"\nqeq = \"50KB\"").unwrap();
        match s.cm {
            CmConfig::Ecm(p) => assert_eq!(p.qeq.bytes(), 50_000),
            other => panic!("{other:?}"),
        }
        let s: S = toml::from_str("[cm]\nscheme = \"qcn\"\n[cm.cp]\nqeq = \"30KB\"").unwrap();
        match s.cm {
            CmConfig::Qcn(p) => assert_eq!(p.cp.qeq.bytes(), 30_000),
            other => panic!("{other:?}"),
        }
        let e = toml::from_str::<S>("cm = \"bcn\"")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("unknown congestion-management scheme `bcn`"),
            "{e}"
        );
        let e = toml::from_str::<S>("[cm]\nscheme = \"ecm\"\nqeqq = 1")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("qeqq"), "{e}");
    }

    #[test]
    fn nested_errors_name_the_key() {
        let mut p = QcnParams::default();
        p.cp.w = -1.0;
        let e = CmConfig::Qcn(p).validate().unwrap_err();
        assert_eq!(e.field, "cp.w");
    }
}
