//! E2CM, "Extended Ethernet Congestion Management: Per Path ECM, a hybrid
//! proposal" (Gusat, Minkenberg, Luijten, IBM Zurich, IEEE 802.1au, March
//! 2007; the IBM talk of April 2007; docs/ecm-qcn.md).
//!
//! E2CM keeps the ECM loop (switch congestion points, [`super::ecm`]) and adds
//! a per-flow, end-to-end loop run by the source's rate limiter:
//!
//! 1. While the flow is rate limited (E2CM) or always (E2CM-CP, "continuous
//!    probing"), each data frame the flow sends is followed by a **probe**
//!    with probability `probe_probability` (the talk's per-flow "Psample =
//!    2 %, on average 1 sample every 75 KB"), or every `probe_every` bytes.
//! 2. The probe travels the flow's path behind the flow's frames; the
//!    destination returns it to the source with the **queueing delay** it met
//!    (its one-way delay minus the path's unloaded delay, or the sum of its
//!    waits at each hop: the wiring's choice, `docs/ecm-qcn.md`).
//! 3. The source turns the delay into the flow's **per-path queue** and runs
//!    the ECM formula on it with the per-flow parameters: `Q_flow = d x R / 8`
//!    (the flow's own bytes queued on the path, by Little's law: FIFO queues
//!    hold `d x R` of a flow sending at `R`), `Fb = -((Q_flow - Qeq,flow) + W
//!    (Q_flow - Q_flow,old))`, BCN_MAX above 52 KB, and the same rate update as
//!    ECM with `Gd,flow` and `Gi,flow`.
//!
//! Our sources (the talk's slides) give only the per-flow parameters; the
//! probe protocol above is our reconstruction (the 2007 deck was not
//! retrievable; the authors' follow-up "Delay-based cloud congestion control",
//! Gusat, Birke, Minkenberg, GLOBECOM 2009, uses path delay as the congestion
//! measure). The alternatives are selectable: [`QueueEstimate::PathDelay`]
//! reads the whole path's queue (`d x Rlink / 8`) instead of the flow's share,
//! [`RateEstimate::Measured`] uses the flow's measured sending rate instead
//! of its limiter's rate, `probe_every` probes deterministically.

use super::ecm::{EcmFeedback, EcmGains, EcmParams, EcmRp, Reaction};
use super::{check_probability, prefixed, CpId, ParamError, TestCounters};
use crate::config_types::SizeValue;
use crate::rng::Stream;
use crate::units::{Ps, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What the probe's queueing delay is turned into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueEstimate {
    /// The flow's own bytes in the path's queues: delay x the flow's rate.
    #[default]
    FlowShare,
    /// The path's queue in bytes at the link rate: delay x line rate.
    PathDelay,
}

/// Which rate multiplies the delay under [`QueueEstimate::FlowShare`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateEstimate {
    /// The limiter's rate when the probe left.
    #[default]
    Limiter,
    /// Bytes the flow sent since its previous probe over the time since
    /// (the limiter's rate for the first probe).
    Measured,
}

/// Which priority a probe travels on (the echo always returns on the
/// feedback class, 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeClass {
    /// The feedback class (7): strict priority at every switch port, so the
    /// probe overtakes the data queues and its "queueing delay" is only what
    /// class 7 holds (near zero).
    #[default]
    Control,
    /// The data frames' class, in band: the probe is charged to the input
    /// partitions (and dropped with the data when one is full), waits in the
    /// flow's FIFO output queues behind its frames and is held by PAUSE, so
    /// its delay is the path's queueing delay, as the protocol needs
    /// ("the probe travels the flow's path behind the flow's frames").
    Data,
}

/// When a flow probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Probing {
    /// While the flow is rate limited (E2CM).
    OnRateLimit,
    /// Always (E2CM-CP).
    Continuous,
}

/// E2CM parameters (`[cm]` with `scheme = "e2cm"` or `"e2cm_cp"`). Defaults
/// are the talk's "E2CM (per-flow)" block.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct E2cmParams {
    /// The switch loop (`[cm.ecm]`): the talk's ECM values.
    pub ecm: EcmParams,
    /// Qeq,flow. Talk: 15 KB.
    pub qeq_flow: SizeValue,
    /// W of the per-flow loop. Talk: 2.0.
    pub w_flow: f64,
    /// Gd,flow; unset: 0.5 / ((2W+1) Qeq,flow) (talk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gd_flow: Option<f64>,
    /// Gi,flow; unset: gi_flow_factor x (Rlink / Ru) / ((2W+1) Qeq,flow) (talk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gi_flow: Option<f64>,
    /// Talk: 0.005.
    pub gi_flow_factor: f64,
    /// BCN_MAX of the per-flow loop. Talk: enabled.
    pub bcn_max_flow: bool,
    /// Talk: 52 KB.
    pub bcn_max_flow_threshold: SizeValue,
    /// Probability that a data frame is followed by a probe. Talk: 2 %.
    pub probe_probability: f64,
    /// Probe every this many bytes sent instead of at random.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_every: Option<SizeValue>,
    /// Default `flow_share`.
    pub queue_estimate: QueueEstimate,
    /// Default `limiter`.
    pub rate_estimate: RateEstimate,
    /// Unset: `on_rate_limit` for `e2cm`, `continuous` for `e2cm_cp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probing: Option<Probing>,
    /// The priority probes travel on. Default `control`.
    pub probe_class: ProbeClass,
}

impl Default for E2cmParams {
    fn default() -> Self {
        E2cmParams {
            ecm: EcmParams::default(),
            qeq_flow: SizeValue(15_000),
            w_flow: 2.0,
            gd_flow: None,
            gi_flow: None,
            gi_flow_factor: 0.005,
            bcn_max_flow: true,
            bcn_max_flow_threshold: SizeValue(52_000),
            probe_probability: 0.02,
            probe_every: None,
            queue_estimate: QueueEstimate::FlowShare,
            rate_estimate: RateEstimate::Limiter,
            probing: None,
            probe_class: ProbeClass::Control,
        }
    }
}

/// The per-flow loop's numbers (bytes, b/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowGains {
    pub qeq: f64,
    pub w: f64,
    /// (2W + 1) Qeq,flow.
    pub fb_max: f64,
    pub gd: f64,
    pub gi: f64,
    pub bcn_max: Option<f64>,
}

/// Everything an [`E2cmRp`] needs, for one line rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct E2cmSetup {
    pub ecm: EcmGains,
    pub flow: FlowGains,
    pub continuous: bool,
    pub probe_probability: f64,
    pub probe_every: Option<u64>,
    pub queue_estimate: QueueEstimate,
    pub rate_estimate: RateEstimate,
    /// The flow's stream serves only its probe draws, one per frame, and
    /// a probe needs nothing counted between probes: so the draws up to
    /// the next probe may be made ahead ([`E2cmRp::on_sent_ahead`]).
    /// Continuous probing by chance, rate from the limiter, no BCN(0,0)
    /// stops (whose lengths come from the same stream).
    pub draws_ahead: bool,
}

impl E2cmParams {
    /// Fills the defaults for a source of line rate `line` (b/s);
    /// `e2cm_cp` says which scheme named these parameters.
    pub fn resolve(&self, line: f64, e2cm_cp: bool) -> E2cmSetup {
        let fb_max = (2.0 * self.w_flow + 1.0) * self.qeq_flow.bytes() as f64;
        let ru = self.ecm.ru.rate().bits_per_sec() as f64;
        let continuous = match self.probing {
            Some(p) => p == Probing::Continuous,
            None => e2cm_cp,
        };
        E2cmSetup {
            ecm: self.ecm.resolve(line),
            flow: FlowGains {
                qeq: self.qeq_flow.bytes() as f64,
                w: self.w_flow,
                fb_max,
                gd: self.gd_flow.unwrap_or(0.5 / fb_max),
                // Gi,flow = 0.005 (Rlink / Ru) / ((2W+1) Qeq,flow) (talk).
                gi: self
                    .gi_flow
                    .unwrap_or(self.gi_flow_factor * (line / ru) / fb_max),
                bcn_max: self
                    .bcn_max_flow
                    .then_some(self.bcn_max_flow_threshold.bytes() as f64),
            },
            continuous,
            probe_probability: self.probe_probability,
            probe_every: self.probe_every.map(|s| s.bytes()),
            queue_estimate: self.queue_estimate,
            rate_estimate: self.rate_estimate,
            draws_ahead: continuous
                && self.probe_every.is_none()
                && self.rate_estimate == RateEstimate::Limiter
                && !self.ecm.stop,
        }
    }

    /// Checks ranges; `e2cm_cp`: the scheme is `e2cm_cp`. Keys of the switch
    /// loop come back as `ecm.<key>`.
    pub fn validate(&self, e2cm_cp: bool) -> Result<(), ParamError> {
        self.ecm.validate().map_err(|e| prefixed("ecm", e))?;
        if self.qeq_flow.bytes() == 0 {
            return Err(ParamError::new(
                "qeq_flow",
                "must be positive; the talk uses \"15KB\"",
            ));
        }
        if !(self.w_flow.is_finite() && self.w_flow >= 0.0) {
            return Err(ParamError::new(
                "w_flow",
                format!(
                    "must be zero or more, got {}; the talk uses 2.0",
                    self.w_flow
                ),
            ));
        }
        let fb_max = (2.0 * self.w_flow + 1.0) * self.qeq_flow.bytes() as f64;
        if let Some(gd) = self.gd_flow {
            if !(gd > 0.0 && gd * fb_max < 1.0) {
                return Err(ParamError::new(
                    "gd_flow",
                    format!(
                        "must be positive and below 1 / Fbmax,flow = {:.3e}, got {gd}; the talk uses {:.3e}",
                        1.0 / fb_max,
                        0.5 / fb_max
                    ),
                ));
            }
        }
        if let Some(gi) = self.gi_flow {
            if !(gi.is_finite() && gi > 0.0) {
                return Err(ParamError::new(
                    "gi_flow",
                    format!("must be positive, got {gi}"),
                ));
            }
        }
        if !(self.gi_flow_factor.is_finite() && self.gi_flow_factor > 0.0) {
            return Err(ParamError::new(
                "gi_flow_factor",
                format!(
                    "must be positive, got {}; the talk uses 0.005",
                    self.gi_flow_factor
                ),
            ));
        }
        if self.bcn_max_flow && self.bcn_max_flow_threshold.bytes() == 0 {
            return Err(ParamError::new(
                "bcn_max_flow_threshold",
                "must be positive; the talk uses \"52KB\" (or set bcn_max_flow = false)",
            ));
        }
        check_probability(
            "probe_probability",
            self.probe_probability,
            true,
            "the talk probes with 2 % (0.02)",
        )?;
        if self.probe_every.is_some_and(|s| s.bytes() == 0) {
            return Err(ParamError::new(
                "probe_every",
                "must be positive, e.g. \"75KB\" (or remove it to probe at random)",
            ));
        }
        if e2cm_cp && self.probing == Some(Probing::OnRateLimit) {
            return Err(ParamError::new(
                "probing",
                "scheme \"e2cm_cp\" always probes; use scheme = \"e2cm\" to probe only while rate limited",
            ));
        }
        Ok(())
    }
}

/// A probe the NIC must send right after the data frame: on the flow's path,
/// [`super::FEEDBACK_FRAME_BYTES`] long, carrying these fields to the
/// destination, which returns them as a [`ProbeEcho`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeRequest {
    pub seq: u64,
    pub sent_at: Ps,
    /// The rate (b/s) the flow's queue share is computed with.
    pub rate: f64,
}

/// A returned probe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeEcho {
    pub seq: u64,
    pub sent_at: Ps,
    pub rate: f64,
    /// Time the probe spent queued on its way to the destination.
    pub queueing_delay: Ps,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct ProbeSetup {
    probe_probability: f64,
    draws_ahead: bool,
    probe_every: Option<u64>,
    continuous: bool,
    flow: FlowGains,
    queue_estimate: QueueEstimate,
    rate_estimate: RateEstimate,
}

/// What every E2CM reaction point at one line rate shares: the ECM gains
/// and the probing setup, made once from an [`E2cmSetup`].
#[derive(Clone, Debug)]
pub struct E2cmShared {
    ecm: Arc<EcmGains>,
    probe: Arc<ProbeSetup>,
}

impl E2cmShared {
    pub fn new(s: &E2cmSetup) -> Self {
        E2cmShared {
            ecm: Arc::new(s.ecm),
            probe: Arc::new(ProbeSetup {
                flow: s.flow,
                continuous: s.continuous,
                probe_probability: s.probe_probability,
                probe_every: s.probe_every,
                queue_estimate: s.queue_estimate,
                rate_estimate: s.rate_estimate,
                draws_ahead: s.draws_ahead,
            }),
        }
    }
}

/// Counters of an E2CM reaction point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E2cmStats {
    pub probes: u64,
    pub echoes: u64,
    pub probe_decreases: u64,
    pub probe_increases: u64,
    pub probe_bcn_max: u64,
}

/// The most frames an [`E2cmRp::on_sent_ahead`] lets pass by.
pub const MAX_PASSING: u8 = u8::MAX;

/// [`E2cmRp`]'s last probe time between probing episodes.
const NOT_PROBING: Ps = Ps::MAX;

/// The E2CM reaction point of one flow: an ECM rate limiter driven by the
/// switches' feedback and by the flow's own probes.
///
/// Under E2CM-CP every flow has one, N² of them, and each frame goes to a
/// random one: it keeps only its state (the gains and the probing setup are
/// shared, [`E2cmShared`]), laid out (`repr(C)`) so that what a frame it
/// sees reads and writes comes first, in 24 bytes: the setup's address,
/// the probe counter and the episode's start (with the flow's random
/// stream before it, [`crate::cm::scheme::AnyRp`], one cache line). With
/// its draws made ahead ([`E2cmRp::on_sent_ahead`]) it sees about one
/// frame in 50.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct E2cmRp {
    /// The setup without its ECM gains (the limiter holds those), shared
    /// by every flow's reaction point.
    s: Arc<ProbeSetup>,
    bytes_since_probe: u64,
    /// When the flow last probed, or when its probing episode started;
    /// [`NOT_PROBING`] between episodes.
    last_probe_at: Ps,
    ecm: EcmRp,
    q_old: Option<f64>,
    next_seq: u64,
    /// [`E2cmRp::on_sent_ahead`]: the next frame it sees was drawn to probe.
    drawn_to_probe: bool,
    pub stats: TestCounters<E2cmStats>,
}

impl E2cmRp {
    /// The bytes at the head of the record that a frame sent reads and
    /// writes (through `last_probe_at`).
    #[cfg(test)]
    pub(crate) const FRAME_BYTES: usize = std::mem::offset_of!(E2cmRp, last_probe_at) + 8;

    pub fn new(s: &E2cmSetup) -> Self {
        E2cmRp::sharing(&E2cmShared::new(s))
    }

    /// A reaction point whose gains and probing setup are `shared` with
    /// other flows' (a reaction point per flow, N² of them under E2CM-CP,
    /// keeps only its state).
    pub fn sharing(shared: &E2cmShared) -> Self {
        E2cmRp {
            ecm: EcmRp::sharing(shared.ecm.clone()),
            s: shared.probe.clone(),
            bytes_since_probe: 0,
            last_probe_at: NOT_PROBING,
            q_old: None,
            next_seq: 0,
            drawn_to_probe: false,
            stats: TestCounters::default(),
        }
    }

    pub fn rate(&self) -> f64 {
        self.ecm.rate()
    }
    pub fn tag(&self) -> Option<CpId> {
        self.ecm.tag()
    }
    pub fn is_limited(&self) -> bool {
        self.ecm.is_limited()
    }
    pub fn may_send(&self, now: Ps) -> bool {
        self.ecm.may_send(now)
    }
    /// The ECM limiter inside (its counters).
    pub fn ecm(&self) -> &EcmRp {
        &self.ecm
    }

    /// Whether the flow probes now.
    pub fn probing(&self) -> bool {
        self.s.continuous || self.ecm.is_limited()
    }

    /// A switch CP's feedback frame (the ECM loop).
    pub fn on_feedback(&mut self, now: Ps, fb: &EcmFeedback, rng: &mut Stream) -> Reaction {
        self.ecm.on_feedback(now, fb, rng)
    }

    pub fn next_timer(&self) -> Option<Ps> {
        self.ecm.next_timer()
    }
    pub fn on_timer(&mut self, now: Ps) -> Reaction {
        self.ecm.on_timer(now)
    }

    /// The flow sent a data frame of `bytes` at `now`; returns the probe to
    /// send after it, if any. `rng` is the flow's (or NIC's) stream.
    pub fn on_sent(&mut self, now: Ps, bytes: u64, rng: &mut Stream) -> Option<ProbeRequest> {
        if !self.probing() {
            // Probing stops with the limiter; the next episode starts afresh.
            self.bytes_since_probe = 0;
            self.last_probe_at = NOT_PROBING;
            self.q_old = None;
            return None;
        }
        if self.last_probe_at == NOT_PROBING {
            self.last_probe_at = now;
        }
        self.bytes_since_probe += bytes;
        let due = match self.s.probe_every {
            Some(every) => self.bytes_since_probe >= every,
            None => rng.chance(self.s.probe_probability),
        };
        if !due {
            return None;
        }
        Some(self.probe(now))
    }

    /// Whether [`E2cmRp::on_sent_ahead`] may stand for [`E2cmRp::on_sent`].
    #[inline]
    pub fn draws_ahead(&self) -> bool {
        self.s.draws_ahead
    }

    /// [`E2cmRp::on_sent`] for a flow that [`E2cmRp::draws_ahead`], seeing
    /// only some of its frames: returns the probe to send after this frame,
    /// if any, and how many of the flow's next frames it need not see (at
    /// most [`MAX_PASSING`]). The per-frame draws are the same, from the
    /// same stream in the same order, made sooner: this frame's (unless
    /// made ahead), then one per frame after it until one probes, so the
    /// frames that pass by would not have probed and the one after them
    /// will.
    pub fn on_sent_ahead(&mut self, now: Ps, rng: &mut Stream) -> (Option<ProbeRequest>, u8) {
        debug_assert!(self.s.draws_ahead);
        let p = self.s.probe_probability;
        let due = std::mem::take(&mut self.drawn_to_probe) || rng.chance(p);
        let probe = due.then(|| self.probe(now));
        let mut passing = 0;
        while passing < MAX_PASSING {
            if rng.chance(p) {
                self.drawn_to_probe = true;
                break;
            }
            passing += 1;
        }
        (probe, passing)
    }

    /// A probe leaves now.
    fn probe(&mut self, now: Ps) -> ProbeRequest {
        // In an episode `last_probe_at` is a time, at most `now`.
        let rate = match self.s.rate_estimate {
            RateEstimate::Measured if now > self.last_probe_at => {
                let since = (now - self.last_probe_at) as f64;
                (self.bytes_since_probe as f64 * 8.0 * SEC as f64 / since)
                    .min(self.ecm.gains().line)
            }
            RateEstimate::Measured | RateEstimate::Limiter => self.ecm.rate(),
        };
        self.bytes_since_probe = 0;
        self.last_probe_at = now;
        self.next_seq += 1;
        self.stats.bump(|s| s.probes += 1);
        ProbeRequest {
            seq: self.next_seq,
            sent_at: now,
            rate,
        }
    }

    /// The flow's queue on its path implied by an echo, bytes.
    pub fn queue_estimate(&self, echo: &ProbeEcho) -> f64 {
        let rate = match self.s.queue_estimate {
            QueueEstimate::FlowShare => echo.rate,
            QueueEstimate::PathDelay => self.ecm.gains().line,
        };
        echo.queueing_delay as f64 / SEC as f64 * rate / 8.0
    }

    /// A probe came back: run the per-flow ECM formula on the flow's queue.
    pub fn on_probe_echo(&mut self, now: Ps, echo: &ProbeEcho) -> Reaction {
        self.stats.bump(|s| s.echoes += 1);
        self.ecm.on_timer(now);
        let f = self.s.flow;
        let q = self.queue_estimate(echo);
        // Qoff = Q - Qeq,flow; Qdelta = Q - Qold (0 for the first probe of an episode).
        let qoff = q - f.qeq;
        let qdelta = self.q_old.map_or(0.0, |old| q - old);
        self.q_old = Some(q);
        let fb = if f.bcn_max.is_some_and(|t| q > t) {
            // Per-flow BCN_MAX (talk: "BCN_MAX enabled, threshold = 52 KB").
            self.stats.bump(|s| s.probe_bcn_max += 1);
            -f.fb_max
        } else {
            (-(qoff + f.w * qdelta)).clamp(-f.fb_max, f.fb_max)
        };
        let r = self.ecm.apply(now, fb, None, f.gd, f.gi);
        match r {
            Reaction::Decreased { .. } => self.stats.bump(|s| s.probe_decreases += 1),
            Reaction::Increased { .. } | Reaction::Released => {
                self.stats.bump(|s| s.probe_increases += 1)
            }
            _ => {}
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::ecm::FeedbackKind;
    use crate::units::US;

    const G10: f64 = 10e9;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn negative(cp: CpId) -> EcmFeedback {
        EcmFeedback {
            cp,
            to: 0,
            flow_dst: 1,
            kind: FeedbackKind::Max,
            qoff: 0,
            qdelta: 0,
            fb: -375_000.0,
        }
    }

    fn echo(rate: f64, delay: Ps) -> ProbeEcho {
        ProbeEcho {
            seq: 1,
            sent_at: 0,
            rate,
            queueing_delay: delay,
        }
    }

    #[test]
    fn talk_per_flow_gains() {
        let s = E2cmParams::default().resolve(G10, false);
        // Fbmax,flow = 5 x 15 KB = 75 KB; Gd,flow = 0.5 / 75000.
        assert_eq!(s.flow.fb_max, 75_000.0);
        assert!(close(s.flow.gd, 0.5 / 75_000.0));
        // Gi,flow = 0.005 x 1e4 / 75000: full-scale +50 Mb/s (0.5 % of Rlink),
        // Fb = Qeq,flow (nothing queued) +10 Mb/s.
        assert!(close(s.flow.gi * 75_000.0 * 1e6, 50e6));
        assert!(close(s.flow.gi * 15_000.0 * 1e6, 10e6));
        assert_eq!(s.flow.bcn_max, Some(52_000.0));
        assert!(!s.continuous);
        assert!(E2cmParams::default().resolve(G10, true).continuous);
    }

    #[test]
    fn probes_only_while_limited_unless_continuous() {
        let p = E2cmParams {
            probe_every: Some(SizeValue(75_000)),
            ..E2cmParams::default()
        };
        let mut rp = E2cmRp::new(&p.resolve(G10, false));
        let mut rng = Stream::new(1, "t", 0);
        // Unlimited: no probes.
        assert!((0..1000).all(|i| rp.on_sent(i, 1500, &mut rng).is_none()));
        rp.on_feedback(1000, &negative(3), &mut rng);
        assert!(rp.is_limited() && rp.probing());
        // Every 75 KB = 50 frames: probe after the 50th.
        let sent: Vec<_> = (0..150)
            .filter_map(|i| rp.on_sent(2000 + i, 1500, &mut rng))
            .collect();
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[0].sent_at, 2049);
        assert_eq!(sent[0].rate, 5e9);
        assert_eq!(
            sent.iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        // Continuous probing probes unlimited flows too.
        let mut cp = E2cmRp::new(&p.resolve(G10, true));
        assert!(!cp.is_limited());
        assert_eq!(
            (0..100)
                .filter(|&i| cp.on_sent(i, 1500, &mut rng).is_some())
                .count(),
            2
        );
    }

    #[test]
    fn random_probes_at_two_percent() {
        let mut rp = E2cmRp::new(&E2cmParams::default().resolve(G10, true));
        let mut rng = Stream::new(3, "t", 0);
        let n = 100_000;
        let probes = (0..n)
            .filter(|&i| rp.on_sent(i, 1500, &mut rng).is_some())
            .count();
        // Binomial(1e5, 0.02): sd 44; 5 sd.
        assert!((probes as f64 - 2000.0).abs() < 221.0, "{probes}");
    }

    /// Drawing ahead probes after the same frames, with the same requests
    /// and the same rates, as drawing at every frame from the same stream,
    /// through feedback and echoes; at 2 % (the default), at 0.1 % (runs
    /// longer than [`MAX_PASSING`]), always and never.
    #[test]
    fn drawing_ahead_probes_as_drawing_per_frame() {
        for p in [0.02, 0.001, 1.0, 0.0] {
            let params = E2cmParams {
                probe_probability: p,
                ..E2cmParams::default()
            };
            let setup = params.resolve(G10, true);
            assert!(setup.draws_ahead);
            let (mut each, mut ahead) = (E2cmRp::new(&setup), E2cmRp::new(&setup));
            let (mut rng_each, mut rng_ahead) = (Stream::new(7, "t", 0), Stream::new(7, "t", 0));
            let (mut probes, mut longest, mut passing) = (0, 0, 0u8);
            for i in 0..200_000u64 {
                let t = i * 1_200_000;
                let by_each = each.on_sent(t, 1500, &mut rng_each);
                let by_ahead = if passing > 0 {
                    passing -= 1;
                    None
                } else {
                    let (probe, pass) = ahead.on_sent_ahead(t, &mut rng_ahead);
                    passing = pass;
                    longest = longest.max(pass);
                    probe
                };
                assert_eq!(by_each, by_ahead, "p = {p}, frame {i}");
                probes += by_each.is_some() as u64;
                if i % 997 == 0 {
                    each.on_feedback(t, &negative(3), &mut rng_each);
                    ahead.on_feedback(t, &negative(3), &mut rng_ahead);
                }
                if let Some(req) = by_each {
                    let back = echo(req.rate, (i % 13) * US);
                    assert_eq!(each.on_probe_echo(t, &back), ahead.on_probe_echo(t, &back));
                }
                assert_eq!(each.rate(), ahead.rate(), "p = {p}, frame {i}");
            }
            match p {
                0.0 => assert_eq!(probes, 0),
                1.0 => assert_eq!((probes, longest), (200_000, 0)),
                _ => assert!(probes > 100 && longest > 0, "p = {p}: {probes}"),
            }
            // At 2 %, a run of 255 frames without a probe has chance 0.6 %.
            assert_eq!(longest == MAX_PASSING, p < 1.0, "p = {p}");
        }
        // Only when nothing else needs the frames or the stream.
        for other in [
            E2cmParams {
                probe_every: Some(SizeValue(75_000)),
                ..E2cmParams::default()
            },
            E2cmParams {
                rate_estimate: RateEstimate::Measured,
                ..E2cmParams::default()
            },
            E2cmParams {
                ecm: EcmParams {
                    stop: true,
                    ..EcmParams::default()
                },
                ..E2cmParams::default()
            },
        ] {
            assert!(!other.resolve(G10, true).draws_ahead);
        }
        assert!(!E2cmParams::default().resolve(G10, false).draws_ahead);
    }

    #[test]
    fn echo_flow_share_and_path_delay() {
        let mut rp = E2cmRp::new(&E2cmParams::default().resolve(G10, true));
        // 12 us at 5 Gb/s: 7500 B of the flow queued; Qoff = -7500, first Qdelta = 0:
        // Fb = +7500, but the flow is not limited: ignored.
        assert_eq!(rp.queue_estimate(&echo(5e9, 12 * US)), 7_500.0);
        assert_eq!(rp.on_probe_echo(0, &echo(5e9, 12 * US)), Reaction::Ignored);
        // 40 us at 5 Gb/s = 25 KB: Qoff = 10000, Qdelta = 17500: Fb = -45000: cut by
        // Gd,flow x 45000 = 0.3 -> 7 Gb/s.
        let r = rp.on_probe_echo(1, &echo(5e9, 40 * US));
        assert_eq!(r, Reaction::Decreased { from: G10, to: 7e9 });
        assert!(rp.is_limited());
        assert_eq!(rp.tag(), None); // probes do not tag
                                    // 12 us at 5 Gb/s again: Qoff = -7500, Qdelta = -17500: Fb = +42500 ->
                                    // +Gi,flow x 42500 x Ru = +28.33 Mb/s.
        let r = rp.on_probe_echo(2, &echo(5e9, 12 * US));
        assert!(matches!(r, Reaction::Increased { .. }));
        assert!(close(
            rp.rate(),
            7e9 + 0.005 * 1e4 / 75_000.0 * 42_500.0 * 1e6
        ));
        // Path delay: 12 us x 10 Gb/s = 15 KB = Qeq,flow.
        let p = E2cmParams {
            queue_estimate: QueueEstimate::PathDelay,
            ..E2cmParams::default()
        };
        let rp = E2cmRp::new(&p.resolve(G10, true));
        assert_eq!(rp.queue_estimate(&echo(1e6, 12 * US)), 15_000.0);
    }

    #[test]
    fn per_flow_bcn_max() {
        let mut rp = E2cmRp::new(&E2cmParams::default().resolve(G10, true));
        // 100 us at 5 Gb/s = 62.5 KB > 52 KB: Fb = -Fbmax,flow: halve.
        let r = rp.on_probe_echo(0, &echo(5e9, 100 * US));
        assert_eq!(r, Reaction::Decreased { from: G10, to: 5e9 });
        assert_eq!(rp.stats.c.probe_bcn_max, 1);
        let p = E2cmParams {
            bcn_max_flow: false,
            ..E2cmParams::default()
        };
        let mut rp = E2cmRp::new(&p.resolve(G10, true));
        // Without it: Fb = -(62500 - 15000) = -47500 (first probe): cut by 0.3167.
        rp.on_probe_echo(0, &echo(5e9, 100 * US));
        assert!(close(rp.rate(), G10 * (1.0 - 47_500.0 / 150_000.0)));
    }

    #[test]
    fn measured_rate_option() {
        let p = E2cmParams {
            probe_every: Some(SizeValue(15_000)),
            rate_estimate: RateEstimate::Measured,
            ..E2cmParams::default()
        };
        let mut rp = E2cmRp::new(&p.resolve(G10, true));
        let mut rng = Stream::new(1, "t", 0);
        // 1500 B every 2.4 us: 5 Gb/s measured, whatever the limiter says (10 Gb/s).
        let mut got = vec![];
        for i in 0..30u64 {
            if let Some(pr) = rp.on_sent((i + 1) * 2_400_000, 1500, &mut rng) {
                got.push(pr.rate);
            }
        }
        assert_eq!(got.len(), 3);
        // The first window starts at the first frame sent (one frame early): 15 KB in 9 gaps.
        assert!(close(got[0], 15_000.0 * 8.0 / (9.0 * 2.4e-6)));
        assert!(close(got[1], 5e9) && close(got[2], 5e9));
    }

    #[test]
    fn validation() {
        E2cmParams::default().validate(false).unwrap();
        let e = E2cmParams {
            probing: Some(Probing::OnRateLimit),
            ..E2cmParams::default()
        }
        .validate(true)
        .unwrap_err();
        assert_eq!(e.field, "probing");
        let mut p = E2cmParams::default();
        p.ecm.qeq = SizeValue(0);
        assert_eq!(p.validate(false).unwrap_err().field, "ecm.qeq");
        let p = E2cmParams {
            qeq_flow: SizeValue(0),
            ..E2cmParams::default()
        };
        assert_eq!(p.validate(false).unwrap_err().field, "qeq_flow");
        let p = E2cmParams {
            probe_probability: 2.0,
            ..E2cmParams::default()
        };
        assert_eq!(p.validate(false).unwrap_err().field, "probe_probability");
        let p: E2cmParams = toml::from_str("qeq_flow = \"20KB\"\n[ecm]\nqeq = \"60KB\"").unwrap();
        assert_eq!((p.qeq_flow.bytes(), p.ecm.qeq.bytes()), (20_000, 60_000));
        assert_eq!(p.probe_class, ProbeClass::Control);
        let p: E2cmParams = toml::from_str("probe_class = \"data\"").unwrap();
        assert_eq!(p.probe_class, ProbeClass::Data);
        let e = toml::from_str::<E2cmParams>("probe_class = \"inband\"").unwrap_err();
        assert!(e.to_string().contains("control") && e.to_string().contains("data"));
    }
}
