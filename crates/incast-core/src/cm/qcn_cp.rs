//! QCN congestion point (IEEE 802.1Qau-2010, incorporated in IEEE 802.1Q-2011
//! clauses 30-33; docs/ecm-qcn.md, QCN).
//!
//! A CP watches one switch output queue. It samples arriving frames about
//! once every `cpSampleBase` bytes (150 KB), more often while congestion is
//! severe. On a sample with queue length `Q`:
//!
//! ```text
//! Qoff = Q - Qeq;  Qdelta = Q - Qold;  Qold = Q
//! Fb = -(Qoff + w * Qdelta)
//! Fb < 0:  send a CNM to the frame's source with QntzFb = |Fb| quantized to
//!          6 bits over [0, Fbmax], Fbmax = (1 + 2w) Qeq
//! Fb >= 0: no message (QCN has no positive feedback)
//! ```
//!
//! Defaults are the IEEE8021-CN-MIB's DEFVALs: `ieee8021CnCpQueueSizeSetPoint`
//! 26000 B, `ieee8021CnCpFeedbackWeight` 1 (w = 2^1 = 2),
//! `ieee8021CnCpMinSampleBase` 150000 B.
//!
//! **Sampling** ([`QcnSampling`]). `table` (default): after each sample the
//! next one comes after `base / (1 + floor(QntzFb / 8))` bytes, i.e. 150, 75,
//! 50, 37.5, 30, 25, 21.4, 18.75 KB for QntzFb in 0-7, 8-15, ..., 56-63 (the
//! standard's table, as an OMNeT++ QCN model encodes it: `markTable =
//! {150,75,50,37.5,30,25,21.5,18.5}` KB), each drawn uniformly within
//! `jitter` of that (default 15 %, the QCN pseudo-code's [0.85, 1.15]; a
//! Dune Petra switch randomizes in [0.75, 1.25]). `probability`: each frame is
//! sampled with a probability that rises linearly from 1 % (Fb >= 0) to 10 %
//! (|Fb| = Fbmax), as Alizadeh et al. describe QCN (Allerton 2008).

use super::{check_jitter, check_probability, jitter_factor, CpId, ParamError};
use crate::config_types::SizeValue;
use crate::rng::Stream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How often the CP samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QcnSampling {
    /// Every `sample_base / (1 + QntzFb / 8)` bytes (802.1Qau table), jittered.
    #[default]
    Table,
    /// Per frame, with a probability from `min_probability` to
    /// `max_probability` rising with |Fb| of the last sample.
    Probability,
}

/// QCN congestion-point parameters (`[cm.cp]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QcnCpParams {
    /// Qeq, `ieee8021CnCpQueueSizeSetPoint`: 26000 B.
    pub qeq: SizeValue,
    /// w: the MIB's `ieee8021CnCpFeedbackWeight` is 1, encoding w = 2^1 = 2.
    pub w: f64,
    /// `ieee8021CnCpMinSampleBase`: 150000 B.
    pub sample_base: SizeValue,
    /// Default `table`.
    pub sampling: QcnSampling,
    /// Each table interval is drawn in [1 - jitter, 1 + jitter] times its
    /// value. Default 0.15.
    pub jitter: f64,
    /// `probability` sampling at Fb >= 0: 1 %.
    pub min_probability: f64,
    /// `probability` sampling at |Fb| = Fbmax: 10 %.
    pub max_probability: f64,
}

impl Default for QcnCpParams {
    fn default() -> Self {
        QcnCpParams {
            qeq: SizeValue(26_000),
            w: 2.0,
            sample_base: SizeValue(150_000),
            sampling: QcnSampling::Table,
            jitter: 0.15,
            min_probability: 0.01,
            max_probability: 0.10,
        }
    }
}

impl QcnCpParams {
    /// Fbmax = (1 + 2w) Qeq in bytes: |Fb| at which QntzFb saturates at 63.
    pub fn fb_max(&self) -> f64 {
        (1.0 + 2.0 * self.w) * self.qeq.bytes() as f64
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if self.qeq.bytes() == 0 {
            return Err(ParamError::new(
                "qeq",
                "must be positive; the 802.1Qau MIB default is 26000 (ieee8021CnCpQueueSizeSetPoint)",
            ));
        }
        if !(self.w.is_finite() && self.w >= 0.0) {
            return Err(ParamError::new(
                "w",
                format!(
                    "must be zero or more, got {}; the MIB default is 2 (feedback weight 1 = 2^1)",
                    self.w
                ),
            ));
        }
        if self.sample_base.bytes() < 1_000 {
            return Err(ParamError::new(
                "sample_base",
                format!(
                    "must be at least 1000 B, got {}; the MIB default is 150000 (ieee8021CnCpMinSampleBase, at least 10000)",
                    self.sample_base.bytes()
                ),
            ));
        }
        check_jitter("jitter", self.jitter)?;
        check_probability(
            "min_probability",
            self.min_probability,
            true,
            "default 0.01",
        )?;
        check_probability(
            "max_probability",
            self.max_probability,
            true,
            "default 0.10",
        )?;
        if self.max_probability < self.min_probability {
            return Err(ParamError::new(
                "max_probability",
                format!(
                    "must be at least min_probability ({}), got {}",
                    self.min_probability, self.max_probability
                ),
            ));
        }
        Ok(())
    }
}

/// A congestion notification message (802.1Q-2011 clause 33.4: version,
/// QntzFb, CPID, Qoffset, Qdelta, encapsulated priority, MAC and MSDU),
/// addressed to the sampled frame's source; [`super::FEEDBACK_FRAME_BYTES`]
/// on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cnm {
    pub cp: CpId,
    /// The sampled frame's source: where the CNM goes.
    pub to: u32,
    /// The sampled frame's destination: which of the source's flows.
    pub flow_dst: u32,
    /// |Fb| quantized to 6 bits, 1..=63 (0 is never sent).
    pub qntz_fb: u8,
    /// Q - Qeq, bytes.
    pub qoff: i64,
    /// Q - Qold, bytes.
    pub qdelta: i64,
}

/// Counters of a QCN CP (the MIB's cpTransmittedCnms and friends).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QcnCpStats {
    pub frames: u64,
    pub samples: u64,
    pub cnms: u64,
}

/// A QCN congestion point on one switch output queue.
#[derive(Clone, Debug)]
pub struct QcnCp {
    id: CpId,
    p: QcnCpParams,
    fb_max: f64,
    q_old: u64,
    /// Bytes still to arrive before the next sample (table sampling).
    bytes_to_sample: i64,
    /// QntzFb of the last sample (0 when Fb >= 0), sets the sampling rate.
    last_qntz: u8,
    rng: Stream,
    pub stats: QcnCpStats,
}

impl QcnCp {
    pub fn new(id: CpId, p: &QcnCpParams, mut rng: Stream) -> Self {
        let first = (p.sample_base.bytes() as f64 * jitter_factor(&mut rng, p.jitter)) as i64;
        QcnCp {
            id,
            fb_max: p.fb_max(),
            p: p.clone(),
            q_old: 0,
            bytes_to_sample: first,
            last_qntz: 0,
            rng,
            stats: QcnCpStats::default(),
        }
    }

    pub fn id(&self) -> CpId {
        self.id
    }

    /// The next sampling interval in bytes for the last QntzFb (table mode,
    /// before jitter): `base / (1 + floor(QntzFb / 8))`.
    pub fn sample_interval(&self) -> f64 {
        self.p.sample_base.bytes() as f64 / (1 + self.last_qntz / 8) as f64
    }

    /// The per-frame sampling probability for the last sample's |Fb|
    /// (`probability` mode).
    pub fn sample_probability(&self) -> f64 {
        let x = self.last_qntz as f64 / 63.0;
        self.p.min_probability + (self.p.max_probability - self.p.min_probability) * x
    }

    /// QntzFb for a feedback value: 0 for Fb >= 0, else |Fb| on 6 bits over
    /// [0, Fbmax], rounded, saturated at 63.
    pub fn quantize(&self, fb: f64) -> u8 {
        if fb >= 0.0 {
            0
        } else {
            (-fb / self.fb_max * 63.0).round().min(63.0) as u8
        }
    }

    /// A frame of `bytes` from `src` to `dst` was admitted; the queue now
    /// holds `queue` bytes (including it). Returns the CNM to send, if any.
    pub fn on_enqueue(&mut self, queue: u64, bytes: u64, src: u32, dst: u32) -> Option<Cnm> {
        self.stats.frames += 1;
        let sample = match self.p.sampling {
            QcnSampling::Table => {
                self.bytes_to_sample -= bytes as i64;
                self.bytes_to_sample <= 0
            }
            QcnSampling::Probability => self.rng.chance(self.sample_probability()),
        };
        if !sample {
            return None;
        }
        self.stats.samples += 1;
        // Qoff = Q - Qeq; Qdelta = Q - Qold; Qold = Q; Fb = -(Qoff + w Qdelta).
        let qoff = queue as i64 - self.p.qeq.bytes() as i64;
        let qdelta = queue as i64 - self.q_old as i64;
        self.q_old = queue;
        let fb = -(qoff as f64 + self.p.w * qdelta as f64);
        let q = self.quantize(fb);
        self.last_qntz = q;
        if self.p.sampling == QcnSampling::Table {
            // Next sample after base / (1 + floor(QntzFb / 8)) bytes, jittered,
            // counted from where this one fell due (the overshoot of the frame
            // that crossed it is carried over, so intervals average exactly).
            let f = jitter_factor(&mut self.rng, self.p.jitter);
            self.bytes_to_sample += (self.sample_interval() * f).round() as i64;
        }
        // A CNM only for negative feedback that quantizes to at least 1.
        (q > 0).then(|| {
            self.stats.cnms += 1;
            Cnm {
                cp: self.id,
                to: src,
                flow_dst: dst,
                qntz_fb: q,
                qoff,
                qdelta,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact() -> QcnCpParams {
        QcnCpParams {
            jitter: 0.0,
            ..QcnCpParams::default()
        }
    }

    #[test]
    fn fb_and_quantization() {
        let cp = QcnCp::new(1, &exact(), Stream::new(1, "t", 0));
        // Fbmax = 5 x 26000 = 130000 (docs/mechanisms.md, V13).
        assert_eq!(cp.fb_max, 130_000.0);
        assert_eq!(cp.quantize(10.0), 0);
        assert_eq!(cp.quantize(-130_000.0), 63);
        assert_eq!(cp.quantize(-1e9), 63);
        assert_eq!(cp.quantize(-65_000.0), 32); // 31.5 rounds to 32
        assert_eq!(cp.quantize(-1_000.0), 0); // 0.48: below half a step
        assert_eq!(cp.quantize(-1_100.0), 1);
    }

    #[test]
    fn samples_every_150kb_while_uncongested() {
        let mut cp = QcnCp::new(1, &exact(), Stream::new(1, "t", 0));
        // A 10 KB queue (below Qeq, steady): no CNM, one sample per 100 frames of 1500 B.
        let mut cnms = 0;
        for _ in 0..1000 {
            cnms += cp.on_enqueue(10_000, 1500, 2, 3).is_some() as u32;
        }
        // The first sample sees Qdelta = 10000: Fb = -(-16000 + 20000) = -4000 -> QntzFb 2.
        assert_eq!(cnms, 1);
        assert_eq!(cp.stats.samples, 10);
    }

    #[test]
    fn cnm_contents_and_sampling_speedup() {
        let mut cp = QcnCp::new(7, &exact(), Stream::new(1, "t", 0));
        // Drive 150 KB through at a 100 KB queue: the 100th frame is sampled.
        let mut got = None;
        for _ in 0..100 {
            got = cp.on_enqueue(100_000, 1500, 4, 9);
        }
        let c = got.unwrap();
        // Qoff = 74000, Qdelta = 100000: Fb = -274000 -> saturated 63.
        assert_eq!(
            c,
            Cnm {
                cp: 7,
                to: 4,
                flow_dst: 9,
                qntz_fb: 63,
                qoff: 74_000,
                qdelta: 100_000
            }
        );
        // QntzFb 63: next sample after 150000 / 8 = 18750 B = 12.5 frames -> the 13th.
        assert_eq!(cp.sample_interval(), 18_750.0);
        let n = (1..=20)
            .find(|_| cp.on_enqueue(100_000, 1500, 4, 9).is_some() || cp.stats.samples == 2);
        assert_eq!(n, Some(13));
        // That sample: Qoff = 74000, Qdelta = 0: Fb = -74000 -> 35.9 -> 36: base / 5 = 30 KB.
        assert_eq!(cp.sample_interval(), 30_000.0);
    }

    #[test]
    fn no_cnm_for_positive_feedback() {
        let mut cp = QcnCp::new(7, &exact(), Stream::new(1, "t", 0));
        for _ in 0..100 {
            cp.on_enqueue(200_000, 1500, 4, 9);
        }
        // Queue falling from 200 KB to 20 KB: Fb = -(-6000 - 360000) > 0, then steady
        // below Qeq: Fb = +6000. No CNM.
        let mut any = false;
        for _ in 0..1000 {
            any |= cp.on_enqueue(20_000, 1500, 4, 9).is_some();
        }
        assert_eq!(cp.stats.samples, 11);
        assert!(!any);
        assert_eq!(cp.sample_interval(), 150_000.0);
    }

    #[test]
    fn jittered_intervals_average_the_table() {
        let mut cp = QcnCp::new(1, &QcnCpParams::default(), Stream::new(9, "t", 0));
        // Queue steady at Qeq: Fb = 0 after the first sample; 1000 B frames.
        let n = 3_000_000u64;
        for _ in 0..n {
            cp.on_enqueue(26_000, 1000, 1, 2);
        }
        // Mean interval 150 KB: n x 1000 / 150000 = 20000 samples; intervals uniform in
        // [0.85, 1.15] x 150 KB have sd 0.0866 x mean, so the count's sd is about
        // 0.0866 sqrt(20000) = 12; allow 60 (5 sd) plus one for the edges.
        let s = cp.stats.samples as f64;
        assert!((s - 20_000.0).abs() < 61.0, "{s}");
    }

    #[test]
    fn probability_sampling_rises_with_fb() {
        let p = QcnCpParams {
            sampling: QcnSampling::Probability,
            ..QcnCpParams::default()
        };
        let mut cp = QcnCp::new(1, &p, Stream::new(2, "t", 0));
        assert!((cp.sample_probability() - 0.01).abs() < 1e-12);
        let n = 200_000;
        for _ in 0..n {
            cp.on_enqueue(26_000, 1500, 1, 2);
        }
        // Fb = 0 at a steady Qeq: 1 % (after the first sample). Binomial sd 44.5; 5 sd.
        assert!(
            (cp.stats.samples as f64 - 2000.0).abs() < 225.0,
            "{}",
            cp.stats.samples
        );
        // A saturated sample: 10 %.
        cp.last_qntz = 63;
        assert!((cp.sample_probability() - 0.10).abs() < 1e-12);
    }

    #[test]
    fn validation() {
        QcnCpParams::default().validate().unwrap();
        let bad = |p: QcnCpParams| p.validate().unwrap_err().field;
        assert_eq!(
            bad(QcnCpParams {
                qeq: SizeValue(0),
                ..Default::default()
            }),
            "qeq"
        );
        assert_eq!(
            bad(QcnCpParams {
                jitter: 1.0,
                ..Default::default()
            }),
            "jitter"
        );
        assert_eq!(
            bad(QcnCpParams {
                sample_base: SizeValue(10),
                ..Default::default()
            }),
            "sample_base"
        );
        assert_eq!(
            bad(QcnCpParams {
                max_probability: 0.005,
                ..Default::default()
            }),
            "max_probability"
        );
    }
}
