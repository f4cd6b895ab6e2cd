//! ECM, the BCN-based Ethernet congestion management of the 802.1Qau
//! proposals (Bergamasco and Pan, 2005-2007; the IBM talk's "ECM"; docs/ecm-qcn.md).
//!
//! **Congestion point** ([`EcmCp`], one per switch output queue). Each frame
//! admitted to the queue is sampled with probability `Ps`. On a sample with
//! queue length `Q`:
//!
//! ```text
//! Qoff = Q - Qeq;  Qdelta = Q - Qold;  Qold = Q
//! Fb = -(Qoff + W * Qdelta), clipped to [-Fbmax, +Fbmax], Fbmax = (2W + 1) Qeq
//! ```
//!
//! `Fb < 0` goes to the sampled frame's source whatever its tag; `Fb > 0` only
//! if the frame carries this CP's rate-limiter tag (Cisco BCN patents
//! US 7,961,621 claim 1 and US 8,792,352 claim 5: the second message depends
//! on whether the sampled frame carries the tag of the first). Options:
//! **BCN_MAX** (`Q > threshold`: the feedback is the largest negative value,
//! US 8,792,352 claim 4; the talk: "BCN_MAX enabled, threshold = 260 KB") and
//! **BCN(0,0)** (`Q > stop_threshold`: "stop" the source for a random time;
//! the talk: "No BCN(0,0)").
//!
//! **Reaction point** ([`EcmRp`], one rate limiter per flow at the source):
//!
//! ```text
//! Fb > 0:  R = R + Gi * Fb * Ru            (only from the CP of the flow's tag)
//! Fb < 0:  R = R * (1 - Gd * |Fb|)         (from any CP; the flow takes its tag)
//! Rmin <= R <= line rate; at line rate the limiter is released (no tag)
//! ```
//!
//! Gains (the talk, "fine print"): `Gd = 0.5 / ((2W+1) Qeq)`, so a full-scale
//! negative feedback halves the rate; `Gi = 0.1 * Gi0` with
//! `Gi0 = (Rlink / Ru) / ((2W+1) Qeq)`, so a full-scale positive feedback would
//! add the link rate. The slide prints `Gi0 = (Rlink/Ru) * ((2W+1) Qeq)`;
//! [`Gi0Reading::AsPrinted`] selects it (see `docs/ecm-qcn.md` for why it is
//! not the default: it adds 3.75e14 b/s per byte of feedback at 10 Gb/s).

use super::{check_probability, CpId, ParamError, TestCounters};
use crate::config_types::{RateValue, SizeValue, TimeValue};
use crate::rng::Stream;
use crate::units::{Ps, MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How to read the slide's `Gi0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gi0Reading {
    /// `Gi0 = (Rlink / Ru) / ((2W+1) Qeq)`: a full-scale positive feedback adds
    /// Rlink (as E2CM's `Gi,flow` is written on the same slide).
    #[default]
    Consistent,
    /// `Gi0 = (Rlink / Ru) * ((2W+1) Qeq)`, as printed.
    AsPrinted,
}

/// How a source resumes after a BCN(0,0) stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopResume {
    /// At the minimum rate `Rmin` (our reading of BCN's "stop").
    #[default]
    MinRate,
    /// At the rate it had before the stop.
    Previous,
}

/// ECM parameters (`[cm]` with `scheme = "ecm"`; `[cm.ecm]` under E2CM).
/// Defaults are the IBM talk's ("fine print" slide).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcmParams {
    /// W, the weight of the queue's change. Talk: 2.0.
    pub w: f64,
    /// Qeq, the queue's set point. Talk: 75 KB (= M/4).
    pub qeq: SizeValue,
    /// Ps, the probability that an arriving frame is sampled. Talk: 2 %
    /// ("on average 1 sample every 75 KB").
    pub sample_probability: f64,
    /// BCN_MAX: above `bcn_max_threshold` the feedback is the largest negative
    /// value -Fbmax. Talk: enabled.
    pub bcn_max: bool,
    /// Talk: 260 KB.
    pub bcn_max_threshold: SizeValue,
    /// BCN_MAX for every frame arriving above the threshold, not only for
    /// sampled ones. Default false (the talk: "BCN_MAX does not result in
    /// sufficiently fast throttling" suggests it rides on the samples).
    pub bcn_max_every_frame: bool,
    /// BCN(0,0): above `stop_threshold` a sample sends "stop". Talk: off.
    pub stop: bool,
    /// Our default 280 KB (between BCN_MAX's 260 KB and the 300 KB partition).
    pub stop_threshold: SizeValue,
    /// A stopped source waits a time drawn uniformly in [0, stop_max_pause].
    /// Our default 1 ms [C].
    pub stop_max_pause: TimeValue,
    /// How a stopped source resumes. Default `min_rate`.
    pub stop_resume: StopResume,
    /// Send positive feedback to tagged sources (BCN's rule). Default true.
    pub positive_feedback: bool,
    /// Quantize |Fb| to this many bits (levels 0 .. 2^bits - 1 over [0, Fbmax]);
    /// 0 (default) sends Qoff and Qdelta exactly, as BCN messages do.
    pub fb_bits: u8,
    /// Ru, the rate unit of the increase. Talk: 1 Mb/s.
    pub ru: RateValue,
    /// Rmin, the lowest rate. Talk: 1 Mb/s.
    pub min_rate: RateValue,
    /// Gd; unset: 0.5 / ((2W+1) Qeq) (talk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gd: Option<f64>,
    /// Gi; unset: `gi_fraction` x Gi0 (talk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gi: Option<f64>,
    /// Gi = gi_fraction x Gi0. Talk: 0.1.
    pub gi_fraction: f64,
    /// Which Gi0 formula. Default `consistent`.
    pub gi0: Gi0Reading,
    /// Self-increase: a limited flow that got no feedback for
    /// `self_increase_interval` raises its rate as if a positive feedback
    /// Fb = Qeq (an empty, steady queue) had arrived. Talk: off.
    pub self_increase: bool,
    /// Our default 1 ms [C].
    pub self_increase_interval: TimeValue,
}

impl Default for EcmParams {
    fn default() -> Self {
        EcmParams {
            w: 2.0,
            qeq: SizeValue(75_000),
            sample_probability: 0.02,
            bcn_max: true,
            bcn_max_threshold: SizeValue(260_000),
            bcn_max_every_frame: false,
            stop: false,
            stop_threshold: SizeValue(280_000),
            stop_max_pause: TimeValue(MS),
            stop_resume: StopResume::MinRate,
            positive_feedback: true,
            fb_bits: 0,
            ru: RateValue(crate::units::Rate::mbps(1)),
            min_rate: RateValue(crate::units::Rate::mbps(1)),
            gd: None,
            gi: None,
            gi_fraction: 0.1,
            gi0: Gi0Reading::Consistent,
            self_increase: false,
            self_increase_interval: TimeValue(MS),
        }
    }
}

/// The reaction point's numbers for one line rate (everything in bytes, bits
/// per second and picoseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcmGains {
    pub line: f64,
    pub qeq: f64,
    /// Fbmax = (2W + 1) Qeq, bytes.
    pub fb_max: f64,
    /// Per byte of feedback.
    pub gd: f64,
    /// Per byte of feedback (times Ru).
    pub gi: f64,
    pub ru: f64,
    pub min_rate: f64,
    pub self_increase: Option<Ps>,
    pub stop_max_pause: Ps,
    pub stop_resume: StopResume,
}

impl EcmParams {
    /// Fbmax = (2W + 1) Qeq in bytes.
    pub fn fb_max(&self) -> f64 {
        (2.0 * self.w + 1.0) * self.qeq.bytes() as f64
    }

    /// Gi0 for a source of line rate `line` (b/s), per the chosen reading.
    pub fn gi0(&self, line: f64) -> f64 {
        let ratio = line / self.ru.rate().bits_per_sec() as f64;
        match self.gi0 {
            Gi0Reading::Consistent => ratio / self.fb_max(),
            Gi0Reading::AsPrinted => ratio * self.fb_max(),
        }
    }

    /// The reaction point's gains for a source of line rate `line` (b/s).
    pub fn resolve(&self, line: f64) -> EcmGains {
        let fb_max = self.fb_max();
        EcmGains {
            line,
            qeq: self.qeq.bytes() as f64,
            fb_max,
            gd: self.gd.unwrap_or(0.5 / fb_max),
            gi: self.gi.unwrap_or(self.gi_fraction * self.gi0(line)),
            ru: self.ru.rate().bits_per_sec() as f64,
            min_rate: (self.min_rate.rate().bits_per_sec() as f64).min(line),
            self_increase: self
                .self_increase
                .then_some(self.self_increase_interval.ps()),
            stop_max_pause: self.stop_max_pause.ps(),
            stop_resume: self.stop_resume,
        }
    }

    /// Checks ranges; the error names the key and the fix.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.w.is_finite() && self.w >= 0.0) {
            return Err(ParamError::new(
                "w",
                format!("must be zero or more, got {}; the talk uses 2.0", self.w),
            ));
        }
        if self.qeq.bytes() == 0 {
            return Err(ParamError::new(
                "qeq",
                "must be positive; the talk uses \"75KB\"",
            ));
        }
        check_probability(
            "sample_probability",
            self.sample_probability,
            true,
            "the talk samples 2 % (0.02)",
        )?;
        if self.bcn_max && self.bcn_max_threshold.bytes() == 0 {
            return Err(ParamError::new(
                "bcn_max_threshold",
                "must be positive; the talk uses \"260KB\" (or set bcn_max = false)",
            ));
        }
        if self.stop && self.stop_threshold.bytes() == 0 {
            return Err(ParamError::new(
                "stop_threshold",
                "must be positive (or set stop = false)",
            ));
        }
        if self.fb_bits > 16 {
            return Err(ParamError::new(
                "fb_bits",
                format!(
                    "at most 16 bits, got {}; 0 sends Fb unquantized",
                    self.fb_bits
                ),
            ));
        }
        let fb_max = self.fb_max();
        if let Some(gd) = self.gd {
            if !(gd > 0.0 && gd * fb_max < 1.0) {
                return Err(ParamError::new(
                    "gd",
                    format!(
                        "must be positive and below 1 / Fbmax = {:.3e} (a full-scale negative feedback must leave a positive rate), got {gd}; the talk uses 0.5 / ((2W+1) Qeq) = {:.3e}",
                        1.0 / fb_max,
                        0.5 / fb_max
                    ),
                ));
            }
        }
        if let Some(gi) = self.gi {
            if !(gi.is_finite() && gi > 0.0) {
                return Err(ParamError::new("gi", format!("must be positive, got {gi}")));
            }
        }
        if !(self.gi_fraction.is_finite() && self.gi_fraction > 0.0) {
            return Err(ParamError::new(
                "gi_fraction",
                format!(
                    "must be positive, got {}; the talk uses 0.1",
                    self.gi_fraction
                ),
            ));
        }
        if self.self_increase && self.self_increase_interval.ps() == 0 {
            return Err(ParamError::new(
                "self_increase_interval",
                "must be positive, e.g. \"1ms\"",
            ));
        }
        Ok(())
    }

    /// The congestion point's part, resolved.
    fn cp_settings(&self) -> CpSettings {
        CpSettings {
            qeq: self.qeq.bytes() as i64,
            w: self.w,
            fb_max: self.fb_max(),
            ps: self.sample_probability,
            bcn_max: self.bcn_max.then_some(self.bcn_max_threshold.bytes()),
            bcn_max_every_frame: self.bcn_max_every_frame,
            stop: self.stop.then_some(self.stop_threshold.bytes()),
            positive: self.positive_feedback,
            levels: if self.fb_bits == 0 {
                0
            } else {
                (1u32 << self.fb_bits) - 1
            },
        }
    }
}

/// What a feedback frame tells the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackKind {
    /// Fb computed from Qoff and Qdelta.
    Normal,
    /// BCN_MAX: the queue is above the BCN_MAX threshold, Fb = -Fbmax.
    Max,
    /// BCN(0,0): stop for a random time.
    Stop,
}

/// An ECM (BCN) feedback frame: generated at the CP, addressed to the
/// sampled frame's source, [`super::FEEDBACK_FRAME_BYTES`] on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcmFeedback {
    /// The CP that sent it (BCN's CPID): becomes the flow's tag on a decrease.
    pub cp: CpId,
    /// The sampled frame's source: the frame's destination.
    pub to: u32,
    /// The sampled frame's destination (which of the source's flows).
    pub flow_dst: u32,
    pub kind: FeedbackKind,
    /// Q - Qeq at the sample, bytes.
    pub qoff: i64,
    /// Q - Qold at the sample, bytes.
    pub qdelta: i64,
    /// The feedback value in bytes (clipped, quantized if configured; 0 for Stop).
    pub fb: f64,
}

/// What the CP sees of an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivingFrame {
    /// The frame's source host.
    pub src: u32,
    /// The frame's destination host (which of the source's flows).
    pub dst: u32,
    /// The rate-limiter tag the frame carries (the CP its flow is associated with).
    pub tag: Option<CpId>,
}

#[derive(Clone, Copy, Debug)]
struct CpSettings {
    qeq: i64,
    w: f64,
    fb_max: f64,
    ps: f64,
    bcn_max: Option<u64>,
    bcn_max_every_frame: bool,
    stop: Option<u64>,
    positive: bool,
    levels: u32,
}

/// Counters of a congestion point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcmCpStats {
    pub frames: u64,
    pub samples: u64,
    pub negative: u64,
    pub positive: u64,
    /// Positive Fb not sent because the frame did not carry this CP's tag.
    pub positive_suppressed: u64,
    pub bcn_max: u64,
    pub stop: u64,
}

/// An ECM congestion point on one switch output queue.
#[derive(Clone, Debug)]
pub struct EcmCp {
    id: CpId,
    s: CpSettings,
    q_old: u64,
    rng: Stream,
    pub stats: EcmCpStats,
}

impl EcmCp {
    /// A CP with id `id` (its tag) drawing its samples from `rng` (one stream
    /// per CP, e.g. `Stream::new(seed, "ecm-cp", id)`).
    pub fn new(id: CpId, params: &EcmParams, rng: Stream) -> Self {
        EcmCp {
            id,
            s: params.cp_settings(),
            q_old: 0,
            rng,
            stats: EcmCpStats::default(),
        }
    }

    pub fn id(&self) -> CpId {
        self.id
    }

    /// A frame was admitted to the queue, whose length is now `queue` bytes
    /// (including the frame). Returns the feedback frame to send to
    /// `frame.src`, if any.
    pub fn on_enqueue(&mut self, queue: u64, frame: ArrivingFrame) -> Option<EcmFeedback> {
        self.stats.frames += 1;
        let s = self.s;
        let above_max = s.bcn_max.is_some_and(|t| queue > t);
        let sampled = self.rng.chance(s.ps);
        if !sampled {
            // BCN_MAX on every frame above the threshold, without sampling (option).
            if above_max && s.bcn_max_every_frame {
                self.stats.bcn_max += 1;
                self.stats.negative += 1;
                return Some(self.message(frame, FeedbackKind::Max, 0, 0, -s.fb_max));
            }
            return None;
        }
        self.stats.samples += 1;
        // Qoff = Q - Qeq, Qdelta = Q - Qold, Qold = Q (docs/ecm-qcn.md, ECM).
        let qoff = queue as i64 - s.qeq;
        let qdelta = queue as i64 - self.q_old as i64;
        self.q_old = queue;
        if s.stop.is_some_and(|t| queue > t) {
            // BCN(0,0): severe congestion, "stop".
            self.stats.stop += 1;
            return Some(self.message(frame, FeedbackKind::Stop, qoff, qdelta, 0.0));
        }
        if above_max {
            // BCN_MAX: the largest negative feedback (US 8,792,352 claim 4).
            self.stats.bcn_max += 1;
            self.stats.negative += 1;
            return Some(self.message(frame, FeedbackKind::Max, qoff, qdelta, -s.fb_max));
        }
        // Fb = -(Qoff + W Qdelta), clipped to [-Fbmax, Fbmax].
        let raw = -(qoff as f64 + s.w * qdelta as f64);
        let fb = quantize(raw.clamp(-s.fb_max, s.fb_max), s.fb_max, s.levels);
        if fb < 0.0 {
            // Negative feedback goes to any source.
            self.stats.negative += 1;
            Some(self.message(frame, FeedbackKind::Normal, qoff, qdelta, fb))
        } else if fb > 0.0 {
            // Positive feedback only to frames carrying this CP's tag (BCN).
            if s.positive && frame.tag == Some(self.id) {
                self.stats.positive += 1;
                Some(self.message(frame, FeedbackKind::Normal, qoff, qdelta, fb))
            } else {
                self.stats.positive_suppressed += 1;
                None
            }
        } else {
            None
        }
    }

    fn message(
        &self,
        frame: ArrivingFrame,
        kind: FeedbackKind,
        qoff: i64,
        qdelta: i64,
        fb: f64,
    ) -> EcmFeedback {
        EcmFeedback {
            cp: self.id,
            to: frame.src,
            flow_dst: frame.dst,
            kind,
            qoff,
            qdelta,
            fb,
        }
    }
}

/// Rounds |fb| to the nearest of `levels` steps of `fb_max / levels`
/// (`levels` = 0: unchanged).
fn quantize(fb: f64, fb_max: f64, levels: u32) -> f64 {
    if levels == 0 {
        return fb;
    }
    let step = fb_max / levels as f64;
    fb.signum() * (fb.abs() / step).round().min(levels as f64) * step
}

/// What a reaction point did with a feedback frame or a timer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reaction {
    /// Nothing changed (positive feedback for a flow without this CP's tag,
    /// a zero feedback, a flow already at its limit).
    Ignored,
    /// The rate went down, `from` -> `to` (b/s).
    Decreased { from: f64, to: f64 },
    /// The rate went up.
    Increased { from: f64, to: f64 },
    /// The rate reached the line rate: the limiter is released, the tag cleared.
    Released,
    /// BCN(0,0): the flow may not send before `until`.
    Stopped { until: Ps },
}

/// Counters of a reaction point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcmRpStats {
    pub feedback: u64,
    pub decreases: u64,
    pub increases: u64,
    pub ignored: u64,
    pub releases: u64,
    pub stops: u64,
    pub self_increases: u64,
}

/// An ECM reaction point: the rate limiter of one flow (source, destination).
/// A flow starts unlimited at line rate with no tag.
/// Laid out (`repr(C)`) with the state a frame sent reads first, the gains
/// and counters after it.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct EcmRp {
    rate: f64,
    stopped_until: Option<Ps>,
    tag: Option<CpId>,
    limited: bool,
    rate_before_stop: f64,
    last_feedback: Ps,
    /// The scheme's gains at this line rate, shared by every flow's limiter.
    g: Arc<EcmGains>,
    pub stats: TestCounters<EcmRpStats>,
}

impl EcmRp {
    pub fn new(gains: &EcmGains) -> Self {
        EcmRp::sharing(Arc::new(*gains))
    }

    /// A limiter whose gains are `gains`, shared with other flows' limiters
    /// (a reaction point per flow, N² of them, keeps only its state).
    pub fn sharing(gains: Arc<EcmGains>) -> Self {
        EcmRp {
            rate: gains.line,
            tag: None,
            limited: false,
            stopped_until: None,
            rate_before_stop: gains.line,
            last_feedback: 0,
            g: gains,
            stats: TestCounters::default(),
        }
    }

    /// The limiter's rate in b/s (line rate when unlimited). During a
    /// BCN(0,0) stop the rate is kept but [`EcmRp::may_send`] is false.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The tag the NIC writes on the flow's frames: the CP that last sent it
    /// negative feedback, while the limiter is installed.
    pub fn tag(&self) -> Option<CpId> {
        self.tag
    }

    /// Whether a rate limiter is installed for the flow.
    pub fn is_limited(&self) -> bool {
        self.limited
    }

    pub fn gains(&self) -> &EcmGains {
        &self.g
    }

    /// False while a BCN(0,0) stop lasts (call [`EcmRp::on_timer`] at its end).
    pub fn may_send(&self, now: Ps) -> bool {
        self.stopped_until.is_none_or(|t| now >= t)
    }

    /// A feedback frame for this flow arrived at `now`. `rng` draws the
    /// length of a BCN(0,0) stop (the NIC's stream).
    pub fn on_feedback(&mut self, now: Ps, fb: &EcmFeedback, rng: &mut Stream) -> Reaction {
        self.stats.bump(|s| s.feedback += 1);
        self.on_timer(now);
        match fb.kind {
            FeedbackKind::Stop => {
                // BCN(0,0): stop for U[0, stop_max_pause]; the flow takes the CP's tag.
                let until = now + (rng.uniform() * self.g.stop_max_pause as f64) as Ps;
                if self.stopped_until.is_none() {
                    self.rate_before_stop = self.rate;
                }
                self.stopped_until = Some(until.max(self.stopped_until.unwrap_or(0)));
                self.limited = true;
                self.tag = Some(fb.cp);
                self.last_feedback = now;
                self.stats.bump(|s| s.stops += 1);
                Reaction::Stopped {
                    until: self.stopped_until.unwrap(),
                }
            }
            FeedbackKind::Max | FeedbackKind::Normal => {
                let r = self.apply(now, fb.fb, Some(fb.cp), self.g.gd, self.g.gi);
                if r == Reaction::Ignored {
                    self.stats.bump(|s| s.ignored += 1);
                }
                r
            }
        }
    }

    /// Applies a feedback value `fb` (bytes) with gains `gd`, `gi` (E2CM's
    /// per-flow loop uses its own). `cp` is the sending CP (None: the flow's
    /// own probe), which a decrease makes the flow's tag and an increase must
    /// match.
    pub(crate) fn apply(
        &mut self,
        now: Ps,
        fb: f64,
        cp: Option<CpId>,
        gd: f64,
        gi: f64,
    ) -> Reaction {
        let from = self.rate;
        if fb < 0.0 {
            // R = R (1 - Gd |Fb|), floor Rmin; the limiter is installed and
            // takes the tag of the CP that sent the negative feedback.
            self.rate = (self.rate * (1.0 - gd * -fb)).max(self.g.min_rate);
            self.limited = true;
            if cp.is_some() {
                self.tag = cp;
            }
            self.last_feedback = now;
            self.stats.bump(|s| s.decreases += 1);
            Reaction::Decreased {
                from,
                to: self.rate,
            }
        } else if fb > 0.0 {
            // Positive feedback only moves a limited flow, and a switch CP's
            // only if it is the CP of the flow's tag.
            if !self.limited || (cp.is_some() && cp != self.tag) {
                return Reaction::Ignored;
            }
            self.last_feedback = now;
            self.increase(gi * fb * self.g.ru)
        } else {
            Reaction::Ignored
        }
    }

    /// R = R + step; at line rate the limiter is released.
    fn increase(&mut self, step: f64) -> Reaction {
        let from = self.rate;
        self.rate = (self.rate + step).min(self.g.line);
        self.stats.bump(|s| s.increases += 1);
        if self.rate >= self.g.line {
            self.limited = false;
            self.tag = None;
            self.stats.bump(|s| s.releases += 1);
            Reaction::Released
        } else {
            Reaction::Increased {
                from,
                to: self.rate,
            }
        }
    }

    /// The next time [`EcmRp::on_timer`] must run: the end of a stop, or the
    /// next self-increase.
    pub fn next_timer(&self) -> Option<Ps> {
        // The gains are read only for a limited flow.
        let self_inc = if self.limited && self.stopped_until.is_none() {
            self.g.self_increase.map(|dt| self.last_feedback + dt)
        } else {
            None
        };
        match (self.stopped_until, self_inc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs what is due at `now`: the end of a stop (resume at Rmin or at the
    /// previous rate) and self-increases (each as if Fb = Qeq arrived).
    pub fn on_timer(&mut self, now: Ps) -> Reaction {
        let mut last = Reaction::Ignored;
        if let Some(t) = self.stopped_until {
            if now >= t {
                self.stopped_until = None;
                self.rate = match self.g.stop_resume {
                    StopResume::MinRate => self.g.min_rate,
                    StopResume::Previous => self.rate_before_stop,
                };
                self.last_feedback = t;
            }
        }
        if let Some(dt) = self.g.self_increase {
            while self.limited && self.stopped_until.is_none() && self.last_feedback + dt <= now {
                self.last_feedback += dt;
                self.stats.bump(|s| s.self_increases += 1);
                last = self.increase(self.g.gi * self.g.qeq * self.g.ru);
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G10: f64 = 10e9;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Ps = 1: every frame is sampled, so scripted queue lengths give exact Fb.
    fn always() -> EcmParams {
        EcmParams {
            sample_probability: 1.0,
            ..EcmParams::default()
        }
    }

    fn frame(src: u32, tag: Option<CpId>) -> ArrivingFrame {
        ArrivingFrame { src, dst: 0, tag }
    }

    #[test]
    fn talk_gains_and_the_two_gi0_readings() {
        let p = EcmParams::default();
        let g = p.resolve(G10);
        // Fbmax = 5 x 75 KB; Gd = 0.5 / 375000: a full-scale cut halves the rate.
        assert_eq!(g.fb_max, 375_000.0);
        assert!(close(g.gd, 0.5 / 375_000.0));
        assert!(close(g.gd * g.fb_max, 0.5));
        // Consistent: Gi0 = (1e10 / 1e6) / 375000 = 0.02667 per byte; Gi = 0.002667.
        assert!(close(g.gi, 0.1 * 10_000.0 / 375_000.0));
        // Full-scale positive feedback: +Gi Fbmax Ru = 0.1 x Rlink = 1 Gb/s;
        // Fb = Qeq (empty, steady queue): +200 Mb/s.
        assert!(close(g.gi * g.fb_max * g.ru, 1e9));
        assert!(close(g.gi * g.qeq * g.ru, 200e6));
        // As printed: Gi0 = 1e4 x 375000 = 3.75e9; one byte of Fb adds 3.75e14 b/s.
        let printed = EcmParams {
            gi0: Gi0Reading::AsPrinted,
            ..p.clone()
        }
        .resolve(G10);
        assert!(close(printed.gi * printed.ru, 3.75e14));
        // Explicit gains win.
        let q = EcmParams {
            gd: Some(1e-6),
            gi: Some(0.5),
            ..p
        }
        .resolve(G10);
        assert_eq!((q.gd, q.gi), (1e-6, 0.5));
    }

    #[test]
    fn fb_from_qoff_and_qdelta_and_clipping() {
        let mut cp = EcmCp::new(9, &always(), Stream::new(1, "t", 0));
        // Q = 100 KB from Qold = 0: Fb = -(25000 + 2 x 100000) = -225000.
        let f = cp.on_enqueue(100_000, frame(4, None)).unwrap();
        assert_eq!(
            (f.qoff, f.qdelta, f.fb, f.to, f.cp),
            (25_000, 100_000, -225_000.0, 4, 9)
        );
        assert_eq!(f.kind, FeedbackKind::Normal);
        // Q = 90 KB: Fb = -(15000 - 20000) = +5000 > 0, but untagged: suppressed.
        assert!(cp.on_enqueue(90_000, frame(4, None)).is_none());
        assert_eq!(cp.stats.positive_suppressed, 1);
        // Same again with this CP's tag: sent (Qold = 90 KB: Fb = -15000 < 0 now!).
        let f = cp.on_enqueue(90_000, frame(4, Some(9))).unwrap();
        assert_eq!(f.fb, -15_000.0);
        // Falling queue, tagged: positive feedback.
        let f = cp.on_enqueue(60_000, frame(5, Some(9))).unwrap();
        assert_eq!(f.fb, -(-15_000.0 + 2.0 * -30_000.0));
        assert_eq!(f.to, 5);
        // Another CP's tag does not get this CP's positive feedback.
        assert!(cp.on_enqueue(30_000, frame(5, Some(8))).is_none());
        // Fb = 0 exactly: nothing.
        let mut cp = EcmCp::new(9, &always(), Stream::new(1, "t", 0));
        cp.on_enqueue(75_000, frame(1, None)).unwrap(); // Qdelta = 75000: negative
        assert!(cp.on_enqueue(75_000, frame(1, Some(9))).is_none());
        // Clipping: a jump to 250 KB gives -(175000 + 500000), clipped to -375000.
        let f = cp.on_enqueue(250_000, frame(1, None)).unwrap();
        assert_eq!(f.fb, -375_000.0);
        assert_eq!(f.kind, FeedbackKind::Normal);
    }

    #[test]
    fn bcn_max_replaces_fb_above_threshold() {
        let mut cp = EcmCp::new(2, &always(), Stream::new(1, "t", 0));
        let f = cp.on_enqueue(200_000, frame(1, None)).unwrap();
        assert_eq!(f.kind, FeedbackKind::Normal);
        // Above 260 KB: -Fbmax whatever Qoff and Qdelta say (here a falling queue).
        cp.on_enqueue(400_000, frame(1, None)).unwrap();
        let f = cp.on_enqueue(261_000, frame(1, Some(2))).unwrap();
        assert_eq!((f.kind, f.fb), (FeedbackKind::Max, -375_000.0));
        assert_eq!(cp.stats.bcn_max, 2);
        // Disabled: the normal formula (falling queue 400 -> 261 KB: Fb = -(186000 - 278000) > 0).
        let p = EcmParams {
            bcn_max: false,
            ..always()
        };
        let mut cp = EcmCp::new(2, &p, Stream::new(1, "t", 0));
        cp.on_enqueue(400_000, frame(1, None)).unwrap();
        let f = cp.on_enqueue(261_000, frame(1, Some(2))).unwrap();
        assert_eq!((f.kind, f.fb), (FeedbackKind::Normal, 92_000.0));
    }

    #[test]
    fn bcn_max_on_every_frame_option() {
        // Ps tiny: without the option nothing is sent; with it every frame above 260 KB.
        let p = EcmParams {
            sample_probability: 1e-12,
            ..EcmParams::default()
        };
        let mut cp = EcmCp::new(2, &p, Stream::new(1, "t", 0));
        assert!((0..100).all(|_| cp.on_enqueue(300_000, frame(1, None)).is_none()));
        let p = EcmParams {
            bcn_max_every_frame: true,
            ..p
        };
        let mut cp = EcmCp::new(2, &p, Stream::new(1, "t", 0));
        assert!((0..100).all(|_| cp
            .on_enqueue(300_000, frame(1, None))
            .is_some_and(|f| f.kind == FeedbackKind::Max)));
        assert!(cp.on_enqueue(200_000, frame(1, None)).is_none());
    }

    #[test]
    fn stop_above_its_threshold() {
        let p = EcmParams {
            stop: true,
            ..always()
        };
        let mut cp = EcmCp::new(2, &p, Stream::new(1, "t", 0));
        let f = cp.on_enqueue(281_000, frame(1, None)).unwrap();
        assert_eq!((f.kind, f.fb), (FeedbackKind::Stop, 0.0));
        // Between BCN_MAX and stop thresholds: BCN_MAX.
        let f = cp.on_enqueue(270_000, frame(1, None)).unwrap();
        assert_eq!(f.kind, FeedbackKind::Max);
    }

    #[test]
    fn quantized_feedback() {
        // 2 bits: levels 0..3 over [0, 375000]: steps of 125000.
        let p = EcmParams {
            fb_bits: 2,
            ..always()
        };
        let mut cp = EcmCp::new(2, &p, Stream::new(1, "t", 0));
        // Fb = -(25000 + 200000) = -225000 -> 1.8 steps -> 2 steps = -250000.
        assert_eq!(
            cp.on_enqueue(100_000, frame(1, None)).unwrap().fb,
            -250_000.0
        );
        // Qold = 100 KB, Q = 90 KB: Fb = -(15000 - 20000) = +5000 -> 0 steps: nothing.
        assert!(cp.on_enqueue(90_000, frame(1, Some(2))).is_none());
    }

    #[test]
    fn sampling_probability_is_ps() {
        let mut cp = EcmCp::new(2, &EcmParams::default(), Stream::new(5, "t", 0));
        let n = 200_000;
        for _ in 0..n {
            cp.on_enqueue(1_000, frame(1, None));
        }
        // Binomial(200000, 0.02): sd = 62.6; 5 sd.
        let got = cp.stats.samples as f64;
        assert!((got - 4000.0).abs() < 313.0, "{got}");
        assert_eq!(cp.stats.frames, n);
    }

    fn fb(cp: CpId, kind: FeedbackKind, v: f64) -> EcmFeedback {
        EcmFeedback {
            cp,
            to: 0,
            flow_dst: 1,
            kind,
            qoff: 0,
            qdelta: 0,
            fb: v,
        }
    }

    #[test]
    fn rp_decrease_tag_increase_release() {
        let g = EcmParams::default().resolve(G10);
        let mut rp = EcmRp::new(&g);
        let mut rng = Stream::new(1, "t", 0);
        assert_eq!((rp.rate(), rp.tag(), rp.is_limited()), (G10, None, false));
        // Positive feedback to an unlimited flow: ignored.
        assert_eq!(
            rp.on_feedback(0, &fb(3, FeedbackKind::Normal, 1000.0), &mut rng),
            Reaction::Ignored
        );
        // Full-scale negative: R = R (1 - 0.5) = 5 Gb/s; tag = 3.
        let r = rp.on_feedback(1, &fb(3, FeedbackKind::Max, -375_000.0), &mut rng);
        assert_eq!(r, Reaction::Decreased { from: G10, to: 5e9 });
        assert_eq!((rp.tag(), rp.is_limited()), (Some(3), true));
        // Another CP's negative feedback re-tags the flow.
        rp.on_feedback(2, &fb(4, FeedbackKind::Normal, -75_000.0), &mut rng);
        assert!(close(rp.rate(), 5e9 * (1.0 - 0.1)));
        assert_eq!(rp.tag(), Some(4));
        // Positive feedback from CP 3 (no longer the tag): ignored.
        let before = rp.rate();
        assert_eq!(
            rp.on_feedback(3, &fb(3, FeedbackKind::Normal, 75_000.0), &mut rng),
            Reaction::Ignored
        );
        // From CP 4: R += Gi Fb Ru = 0.002667 x 75000 x 1e6 = 200 Mb/s.
        let r = rp.on_feedback(4, &fb(4, FeedbackKind::Normal, 75_000.0), &mut rng);
        assert!(matches!(r, Reaction::Increased { .. }));
        assert!(close(rp.rate(), before + 200e6));
        // Enough positive feedback reaches line rate: released, untagged.
        let mut t = 5;
        while rp.is_limited() {
            t += 1;
            rp.on_feedback(t, &fb(4, FeedbackKind::Normal, 375_000.0), &mut rng);
        }
        assert_eq!((rp.rate(), rp.tag()), (G10, None));
        assert_eq!(rp.stats.c.releases, 1);
    }

    #[test]
    fn rp_floor_at_min_rate() {
        let g = EcmParams::default().resolve(G10);
        let mut rp = EcmRp::new(&g);
        let mut rng = Stream::new(1, "t", 0);
        for t in 0..100 {
            rp.on_feedback(t, &fb(1, FeedbackKind::Max, -375_000.0), &mut rng);
        }
        // 10 Gb/s halved 100 times is far below 1 Mb/s: floored at Rmin.
        assert_eq!(rp.rate(), 1e6);
    }

    #[test]
    fn rp_stop_and_resume() {
        let p = EcmParams {
            stop: true,
            ..EcmParams::default()
        };
        let g = p.resolve(G10);
        let mut rp = EcmRp::new(&g);
        let mut rng = Stream::new(1, "t", 0);
        let r = rp.on_feedback(1000, &fb(6, FeedbackKind::Stop, 0.0), &mut rng);
        let Reaction::Stopped { until } = r else {
            panic!("{r:?}")
        };
        assert!((1000..=1000 + MS).contains(&until));
        assert!(!rp.may_send(until - 1) && rp.may_send(until));
        assert_eq!(rp.next_timer(), Some(until));
        assert_eq!(rp.tag(), Some(6));
        rp.on_timer(until);
        assert_eq!(rp.rate(), 1e6); // resume at Rmin
        assert_eq!(rp.next_timer(), None);
        // Resume at the previous rate.
        let g = EcmParams {
            stop: true,
            stop_resume: StopResume::Previous,
            ..EcmParams::default()
        }
        .resolve(G10);
        let mut rp = EcmRp::new(&g);
        rp.on_feedback(0, &fb(6, FeedbackKind::Normal, -75_000.0), &mut rng);
        let before = rp.rate();
        rp.on_feedback(10, &fb(6, FeedbackKind::Stop, 0.0), &mut rng);
        rp.on_timer(10 + MS);
        assert_eq!(rp.rate(), before);
    }

    #[test]
    fn rp_self_increase() {
        let g = EcmParams {
            self_increase: true,
            ..EcmParams::default()
        }
        .resolve(G10);
        let mut rp = EcmRp::new(&g);
        let mut rng = Stream::new(1, "t", 0);
        assert_eq!(rp.next_timer(), None); // unlimited: no self-increase
        rp.on_feedback(0, &fb(1, FeedbackKind::Max, -375_000.0), &mut rng);
        assert_eq!(rp.next_timer(), Some(MS));
        // Two intervals without feedback: +2 x Gi Qeq Ru = +400 Mb/s.
        rp.on_timer(2 * MS + 5);
        assert!(close(rp.rate(), 5e9 + 400e6));
        assert_eq!(rp.stats.c.self_increases, 2);
        // Feedback restarts the interval.
        rp.on_feedback(2 * MS + 10, &fb(1, FeedbackKind::Normal, -1.0), &mut rng);
        assert_eq!(rp.next_timer(), Some(3 * MS + 10));
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |p: EcmParams| p.validate().unwrap_err().field;
        assert_eq!(
            bad(EcmParams {
                w: -1.0,
                ..Default::default()
            }),
            "w"
        );
        assert_eq!(
            bad(EcmParams {
                qeq: SizeValue(0),
                ..Default::default()
            }),
            "qeq"
        );
        assert_eq!(
            bad(EcmParams {
                sample_probability: 0.0,
                ..Default::default()
            }),
            "sample_probability"
        );
        assert_eq!(
            bad(EcmParams {
                gd: Some(1e-3),
                ..Default::default()
            }),
            "gd"
        );
        assert_eq!(
            bad(EcmParams {
                fb_bits: 17,
                ..Default::default()
            }),
            "fb_bits"
        );
        EcmParams::default().validate().unwrap();
        let p: EcmParams = toml::from_str("w = 1.5\nqeq = \"50KB\"\ngi0 = \"as_printed\"").unwrap();
        assert_eq!(
            (p.w, p.qeq.bytes(), p.gi0),
            (1.5, 50_000, Gi0Reading::AsPrinted)
        );
        assert!(toml::from_str::<EcmParams>("wq = 1").is_err());
    }
}
