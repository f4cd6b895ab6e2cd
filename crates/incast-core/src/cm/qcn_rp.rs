//! QCN reaction point (IEEE 802.1Qau-2010, in IEEE 802.1Q-2011 clause 32's
//! reaction point procedures; docs/ecm-qcn.md, QCN), one per rate-limited flow.
//!
//! The rules follow the QCN pseudo-code as the DCQCN authors' ns-3 simulator
//! carries it (`bobzhuyb/ns3-rdma`, `qbb-net-device.cc`: `rpr_cnm_received`,
//! `rpr_fast_byte`/`_time`, `rpr_active_*`, `rpr_hyper_*`, `AdjustRates`),
//! which is the public code closest to the standard, with the MIB's defaults:
//!
//! ```text
//! on CNM(QntzFb):  [TR = CR, see TargetOnCnm]
//!                  CR = max(CR * max(1 - Gd * QntzFb, MinDecFac), MinRate)
//!                  byte stage = time stage = 0; restart byte counter and timer
//! byte counter:    every BC bytes sent (BC/2 once its stage reaches F) -> byte stage += 1
//! timer:           every T (T/2 once its stage reaches F)             -> time stage += 1
//! on either:       stage < F while in fast recovery:   CR = (CR + TR) / 2
//!                  else if either stage < F:           TR += R_AI;  CR = (CR + TR) / 2
//!                  else (both >= F, hyper-active):     TR += R_HAI (min(stages) - F + 1); CR = (CR + TR) / 2
//! CR reaches the line (maximum) rate:                  the rate limiter is released
//! ```
//!
//! Defaults (IEEE8021-CN-MIB DEFVALs): `rpgTimeReset` 15 ms, `rpgByteReset`
//! 150000 B, `rpgThreshold` F = 5, `rpgAiRate` 5 Mb/s, `rpgHaiRate` 50 Mb/s,
//! `rpgGd` 7 (Gd = 2^-7 = 1/128), `rpgMinDecFac` 50 %, `rpgMinRate` 5 Mb/s.
//! With Gd = 1/128 and QntzFb <= 63 a cut is at most 63/128 = 49.2 %, and
//! MinDecFac caps it at 50 % whatever Gd is.
//!
//! Counting: the stage counter is incremented before the test, so with F = 5
//! the first four expiries after a cut are fast-recovery averaging steps and
//! the fifth is the first active increase (the pseudo-code's
//! `rpByteStage < rpgThreshold`). Set `threshold = 6` for five averaging steps.

use super::{check_jitter, jitter_factor, ParamError};
use crate::config_types::{RateValue, SizeValue, TimeValue};
use crate::rng::Stream;
use crate::units::{Ps, MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When a CNM sets the target rate to the current rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetOnCnm {
    /// Only if a byte-counter increase happened since the last cut (the
    /// pseudo-code's `if (rpByteStage != 0) rpTargetRate = rpCurrentRate`).
    #[default]
    ByteStage,
    /// If a byte-counter or timer increase happened since the last cut.
    AnyStage,
    /// On every CNM (the QCN papers' description).
    Always,
}

/// QCN reaction-point parameters (`[cm.rp]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QcnRpParams {
    /// T, `ieee8021CnRpgTimeReset`: 15 ms.
    pub time_reset: TimeValue,
    /// BC, `ieee8021CnRpgByteReset`: 150000 B.
    pub byte_reset: SizeValue,
    /// F, `ieee8021CnRpgThreshold`: 5.
    pub threshold: u32,
    /// R_AI, `ieee8021CnRpgAiRate`: 5 Mb/s.
    pub ai_rate: RateValue,
    /// R_HAI, `ieee8021CnRpgHaiRate`: 50 Mb/s.
    pub hai_rate: RateValue,
    /// Gd, per unit of QntzFb: `ieee8021CnRpgGd` = 7 means 2^-7 = 1/128.
    pub gd: f64,
    /// `ieee8021CnRpgMinDecFac`: a CNM leaves at least this fraction of the
    /// rate (50 %).
    pub min_dec_factor: f64,
    /// `ieee8021CnRpgMinRate`: 5 Mb/s.
    pub min_rate: RateValue,
    /// `ieee8021CnRpgMaxRate` (no DEFVAL): the line rate when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<RateValue>,
    /// Each byte-counter and timer period is drawn in [1 - jitter, 1 + jitter]
    /// times its value. Default 0.15 (the QCN pseudo-code's [0.85, 1.15]).
    pub jitter: f64,
    /// Default `byte_stage` (pseudo-code).
    pub target_on_cnm: TargetOnCnm,
    /// The pseudo-code's guard: on the first increase after a cut, a target
    /// more than 10 times the current rate is divided by 8. Default true.
    pub target_reduction: bool,
}

impl Default for QcnRpParams {
    fn default() -> Self {
        QcnRpParams {
            time_reset: TimeValue(15 * MS),
            byte_reset: SizeValue(150_000),
            threshold: 5,
            ai_rate: RateValue(crate::units::Rate::mbps(5)),
            hai_rate: RateValue(crate::units::Rate::mbps(50)),
            gd: 1.0 / 128.0,
            min_dec_factor: 0.5,
            min_rate: RateValue(crate::units::Rate::mbps(5)),
            max_rate: None,
            jitter: 0.15,
            target_on_cnm: TargetOnCnm::ByteStage,
            target_reduction: true,
        }
    }
}

impl QcnRpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.time_reset.ps() == 0 {
            return Err(ParamError::new(
                "time_reset",
                "must be positive; the MIB default is \"15ms\" (ieee8021CnRpgTimeReset)",
            ));
        }
        if self.byte_reset.bytes() == 0 {
            return Err(ParamError::new(
                "byte_reset",
                "must be positive; the MIB default is 150000 (ieee8021CnRpgByteReset)",
            ));
        }
        if self.threshold == 0 {
            return Err(ParamError::new(
                "threshold",
                "must be at least 1; the MIB default is 5 (ieee8021CnRpgThreshold)",
            ));
        }
        if !(self.gd > 0.0 && self.gd * 63.0 < 1.0) {
            return Err(ParamError::new(
                "gd",
                format!(
                    "must be positive and below 1/63 (a QntzFb of 63 must leave a positive rate), got {}; the MIB default is 1/128 = 0.0078125 (rpgGd 7)",
                    self.gd
                ),
            ));
        }
        if !(self.min_dec_factor > 0.0 && self.min_dec_factor <= 1.0) {
            return Err(ParamError::new(
                "min_dec_factor",
                format!(
                    "must be in (0, 1], got {}; the MIB default is 0.5 (rpgMinDecFac 50 %)",
                    self.min_dec_factor
                ),
            ));
        }
        check_jitter("jitter", self.jitter)
    }
}

/// Where the rate limiter is in its cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpState {
    /// No rate limiter: the flow sends at line rate.
    Released,
    FastRecovery,
    ActiveIncrease,
    HyperIncrease,
}

/// What a CNM or an expiry did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QcnReaction {
    Cut { from: f64, to: f64 },
    Increase { from: f64, to: f64 },
    Released,
}

/// Counters of a QCN reaction point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QcnRpStats {
    pub cnms: u64,
    pub byte_expiries: u64,
    pub timer_expiries: u64,
    pub releases: u64,
    /// The largest fraction of the rate removed by one CNM.
    pub largest_cut: f64,
}

/// The QCN reaction point of one flow.
#[derive(Clone, Debug)]
pub struct QcnRp {
    /// Current rate CR, b/s.
    cr: f64,
    /// Target rate TR, b/s.
    tr: f64,
    line: f64,
    state: RpState,
    byte_stage: u32,
    time_stage: u32,
    /// Bytes left before the byte counter expires.
    bytes_left: i64,
    timer_at: Option<Ps>,
    p: QcnRpParams,
    min_rate: f64,
    rng: Stream,
    pub stats: QcnRpStats,
}

impl QcnRp {
    /// A released (unlimited) reaction point for a source of line rate
    /// `line` (b/s, or `max_rate` when set); `rng` draws the jitter.
    pub fn new(params: &QcnRpParams, line: f64, rng: Stream) -> Self {
        let line = params
            .max_rate
            .map_or(line, |r| r.rate().bits_per_sec() as f64);
        QcnRp {
            cr: line,
            tr: line,
            line,
            state: RpState::Released,
            byte_stage: 0,
            time_stage: 0,
            bytes_left: 0,
            timer_at: None,
            min_rate: (params.min_rate.rate().bits_per_sec() as f64).min(line),
            p: params.clone(),
            rng,
            stats: QcnRpStats::default(),
        }
    }

    /// Current rate CR (line rate while released), b/s.
    pub fn rate(&self) -> f64 {
        self.cr
    }
    /// Target rate TR, b/s.
    pub fn target_rate(&self) -> f64 {
        self.tr
    }
    pub fn state(&self) -> RpState {
        self.state
    }
    pub fn is_limited(&self) -> bool {
        self.state != RpState::Released
    }
    pub fn stages(&self) -> (u32, u32) {
        (self.byte_stage, self.time_stage)
    }
    /// The timer's deadline while the limiter is installed.
    pub fn next_timer(&self) -> Option<Ps> {
        self.timer_at
    }

    fn bytes_period(&mut self, stage: u32) -> i64 {
        let bc = self.p.byte_reset.bytes() as f64;
        // Byte counter: BC, or BC/2 in hyper-active increase (pseudo-code).
        let full = self.state == RpState::FastRecovery
            || (self.state == RpState::ActiveIncrease && stage < self.p.threshold);
        let base = if full { bc } else { bc / 2.0 };
        (base * jitter_factor(&mut self.rng, self.p.jitter)).round() as i64
    }

    fn time_period(&mut self, stage: u32) -> Ps {
        let t = self.p.time_reset.ps() as f64;
        let full = self.state == RpState::FastRecovery
            || (self.state == RpState::ActiveIncrease && stage < self.p.threshold);
        let base = if full { t } else { t / 2.0 };
        (base * jitter_factor(&mut self.rng, self.p.jitter))
            .round()
            .max(1.0) as Ps
    }

    /// A CNM with `qntz_fb` (1..=63) arrived for this flow at `now`.
    pub fn on_cnm(&mut self, now: Ps, qntz_fb: u8) -> QcnReaction {
        self.stats.cnms += 1;
        self.on_timer(now);
        if self.state == RpState::Released {
            // A new rate limiter starts at the maximum rate: CR = TR = line.
            self.cr = self.line;
            self.tr = self.line;
            self.byte_stage = 0;
            self.time_stage = 0;
        }
        let set_target = match self.p.target_on_cnm {
            TargetOnCnm::ByteStage => self.byte_stage != 0,
            TargetOnCnm::AnyStage => self.byte_stage != 0 || self.time_stage != 0,
            TargetOnCnm::Always => true,
        };
        if set_target {
            self.tr = self.cr;
        }
        // CR = CR max(1 - Gd QntzFb, MinDecFac), at least MinRate.
        let from = self.cr;
        let factor = (1.0 - self.p.gd * qntz_fb as f64).max(self.p.min_dec_factor);
        self.cr = (self.cr * factor).max(self.min_rate);
        let cut = 1.0 - self.cr / from;
        self.stats.largest_cut = self.stats.largest_cut.max(cut);
        // Restart in fast recovery: stages 0, byte counter and timer at full periods.
        self.byte_stage = 0;
        self.time_stage = 0;
        self.state = RpState::FastRecovery;
        self.bytes_left = self.bytes_period(0);
        self.timer_at = Some(now + self.time_period(0));
        QcnReaction::Cut { from, to: self.cr }
    }

    /// The flow sent `bytes` (the byte counter runs only while limited).
    pub fn on_sent(&mut self, now: Ps, bytes: u64) -> Option<QcnReaction> {
        self.on_timer(now);
        if self.state == RpState::Released {
            return None;
        }
        self.bytes_left -= bytes as i64;
        let mut last = None;
        while self.bytes_left <= 0 && self.state != RpState::Released {
            self.stats.byte_expiries += 1;
            self.byte_stage += 1;
            let period = self.bytes_period(self.byte_stage);
            self.bytes_left += period;
            last = Some(self.expiry(self.byte_stage));
        }
        last
    }

    /// Runs the timer expiries due at or before `now`.
    pub fn on_timer(&mut self, now: Ps) -> Option<QcnReaction> {
        let mut last = None;
        while let Some(at) = self.timer_at.filter(|&at| at <= now) {
            self.stats.timer_expiries += 1;
            self.time_stage += 1;
            let period = self.time_period(self.time_stage);
            self.timer_at = Some(at + period);
            last = Some(self.expiry(self.time_stage));
        }
        last
    }

    /// One byte-counter or timer expiry; `stage` is that counter's stage.
    fn expiry(&mut self, stage: u32) -> QcnReaction {
        let f = self.p.threshold;
        let increase = if self.state == RpState::FastRecovery && stage < f {
            // Fast recovery: TR unchanged, CR moves halfway to it.
            0.0
        } else if self.byte_stage < f || self.time_stage < f {
            // Active increase: TR += R_AI.
            self.state = RpState::ActiveIncrease;
            self.p.ai_rate.rate().bits_per_sec() as f64
        } else {
            // Hyper-active increase: TR += R_HAI (min(stages) - F + 1).
            self.state = RpState::HyperIncrease;
            let k = self.byte_stage.min(self.time_stage) - f + 1;
            self.p.hai_rate.rate().bits_per_sec() as f64 * k as f64
        };
        self.adjust(increase)
    }

    /// The pseudo-code's `AdjustRates`.
    fn adjust(&mut self, increase: f64) -> QcnReaction {
        let from = self.cr;
        let first = self.byte_stage == 1 || self.time_stage == 1;
        if self.p.target_reduction && first && self.tr > 10.0 * self.cr {
            self.tr /= 8.0;
        } else {
            self.tr += increase;
        }
        self.cr = ((self.cr + self.tr) / 2.0).min(self.line);
        if self.cr >= self.line {
            // At the maximum rate the rate limiter is released.
            self.state = RpState::Released;
            self.tr = self.line;
            self.timer_at = None;
            self.stats.releases += 1;
            QcnReaction::Released
        } else {
            QcnReaction::Increase { from, to: self.cr }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    const G10: f64 = 10e9;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn exact() -> QcnRpParams {
        QcnRpParams {
            jitter: 0.0,
            ..QcnRpParams::default()
        }
    }

    fn rp(params: &QcnRpParams) -> QcnRp {
        QcnRp::new(params, G10, Stream::new(1, "t", 0))
    }

    #[test]
    fn cut_sizes_and_the_50_percent_bound() {
        let mut r = rp(&exact());
        assert_eq!((r.state(), r.rate()), (RpState::Released, G10));
        // QntzFb 63: CR x (1 - 63/128) = 0.5078 CR.
        let c = r.on_cnm(0, 63);
        assert_eq!(
            c,
            QcnReaction::Cut {
                from: G10,
                to: G10 * 65.0 / 128.0
            }
        );
        assert_eq!(r.target_rate(), G10); // new limiter: TR = line
        assert_eq!(r.state(), RpState::FastRecovery);
        // QntzFb 10: CR x (1 - 10/128).
        let before = r.rate();
        r.on_cnm(1, 10);
        assert!(close(r.rate(), before * 118.0 / 128.0));
        // byte stage 0: TR not moved by the second CNM (pseudo-code).
        assert_eq!(r.target_rate(), G10);
        assert!(r.stats.largest_cut <= 0.5);
        // A larger Gd is capped by MinDecFac: exactly 50 %.
        let p = QcnRpParams {
            gd: 1.0 / 64.0,
            ..exact()
        };
        let mut r = rp(&p);
        let c = r.on_cnm(0, 63);
        assert_eq!(c, QcnReaction::Cut { from: G10, to: 5e9 });
        // MinRate floor: 5 Mb/s.
        for t in 0..100 {
            r.on_cnm(t, 63);
        }
        assert_eq!(r.rate(), 5e6);
    }

    #[test]
    fn fast_recovery_then_active_then_hyper_by_bytes_and_timer() {
        let mut r = rp(&exact());
        r.on_cnm(0, 63);
        // Start from TR = 5 Gb/s, CR = 4 Gb/s so the increases stay below the line rate.
        r.tr = 5e9;
        r.cr = 4e9;
        // Byte counter: 150 KB per expiry. Expiries 1-4: fast recovery (F = 5).
        let mut gap = 1e9;
        for k in 1..=4 {
            let x = r.on_sent(US, 150_000).unwrap();
            assert!(matches!(x, QcnReaction::Increase { .. }));
            gap /= 2.0;
            assert!(close(5e9 - r.rate(), gap), "k={k}");
            assert_eq!(r.target_rate(), 5e9);
            assert_eq!(r.stages(), (k, 0));
        }
        // The 5th byte expiry: active increase, TR += 5 Mb/s, CR halfway.
        let cr = r.rate();
        r.on_sent(US, 150_000);
        assert_eq!(r.state(), RpState::ActiveIncrease);
        assert!(close(r.target_rate(), 5e9 + 5e6));
        assert!(close(r.rate(), (cr + 5e9 + 5e6) / 2.0));
        // That expiry was handled in fast recovery: the counter restarted at BC.
        r.on_sent(US, 149_999);
        assert_eq!(r.stages(), (5, 0));
        r.on_sent(US, 1);
        assert!(close(r.target_rate(), 5e9 + 10e6));
        // From the 6th on (stage >= F, active increase): BC/2.
        r.on_sent(US, 75_000);
        assert_eq!(r.stages(), (7, 0));
        assert!(close(r.target_rate(), 5e9 + 15e6));
        // Timer: 15 ms periods from the cut. Expiries 1-4: active increase (time stage < F).
        for k in 1..=4u64 {
            r.on_timer(k * 15 * MS);
        }
        assert_eq!(r.stages(), (7, 4));
        assert!(close(r.target_rate(), 5e9 + 35e6));
        // 5th timer expiry: both stages >= F: hyper, TR += R_HAI (min(7, 5) - 5 + 1).
        r.on_timer(75 * MS);
        assert_eq!(r.state(), RpState::HyperIncrease);
        assert!(close(r.target_rate(), 5e9 + 85e6));
        // The timer now runs at T/2 = 7.5 ms; the next adds 2 R_HAI (min(7, 6) - 4).
        assert_eq!(r.next_timer(), Some(75 * MS + 7_500 * US));
        r.on_timer(82_500 * US);
        assert!(close(r.target_rate(), 5e9 + 185e6));
        // The byte counter restarted at BC/2 after the 7th expiry: 8th adds min(8, 6) - 4 = 2.
        r.on_sent(82_500 * US, 74_999);
        assert_eq!(r.stages(), (7, 6));
        r.on_sent(82_500 * US, 1);
        assert!(close(r.target_rate(), 5e9 + 285e6));
        assert!(r.rate() < G10);
    }

    #[test]
    fn cnm_after_increase_sets_target_and_resets() {
        let mut r = rp(&exact());
        r.on_cnm(0, 63);
        r.on_sent(US, 150_000); // byte stage 1
        let cr = r.rate();
        r.on_cnm(2 * US, 20);
        assert_eq!(r.target_rate(), cr);
        assert_eq!(r.stages(), (0, 0));
        assert_eq!(r.state(), RpState::FastRecovery);
        assert_eq!(r.next_timer(), Some(2 * US + 15 * MS));
        // Only a timer stage: byte_stage rule leaves TR, any_stage / always move it.
        for (mode, moves) in [
            (TargetOnCnm::ByteStage, false),
            (TargetOnCnm::AnyStage, true),
            (TargetOnCnm::Always, true),
        ] {
            let p = QcnRpParams {
                target_on_cnm: mode,
                ..exact()
            };
            let mut r = rp(&p);
            r.on_cnm(0, 63);
            r.on_timer(15 * MS);
            let (cr, tr) = (r.rate(), r.target_rate());
            r.on_cnm(16 * MS, 1);
            assert_eq!(r.target_rate() == cr, moves, "{mode:?}");
            assert_eq!(r.target_rate() == tr, !moves, "{mode:?}");
        }
        // Always: even the very first... of a second cut without increase.
        let p = QcnRpParams {
            target_on_cnm: TargetOnCnm::Always,
            ..exact()
        };
        let mut r = rp(&p);
        r.on_cnm(0, 63);
        let cr = r.rate();
        r.on_cnm(1, 1);
        assert_eq!(r.target_rate(), cr);
    }

    #[test]
    fn target_reduction_quirk() {
        // TR = line, CR cut to 1/16 of it by repeated CNMs (TR > 10 CR): the first
        // increase divides TR by 8 before averaging.
        let mut r = rp(&exact());
        for t in 0..4 {
            r.on_cnm(t, 63);
        }
        let (cr, tr) = (r.rate(), r.target_rate());
        assert!(tr > 10.0 * cr);
        r.on_sent(10, 150_000);
        assert!(close(r.target_rate(), tr / 8.0));
        assert!(close(r.rate(), (cr + tr / 8.0) / 2.0));
        let p = QcnRpParams {
            target_reduction: false,
            ..exact()
        };
        let mut r = rp(&p);
        for t in 0..4 {
            r.on_cnm(t, 63);
        }
        r.on_sent(10, 150_000);
        assert_eq!(r.target_rate(), G10);
    }

    #[test]
    fn recovers_to_line_rate_and_releases() {
        let mut r = rp(&exact());
        r.on_cnm(0, 63);
        let mut t = 0;
        while r.is_limited() {
            t += 100 * US;
            r.on_sent(t, 125_000); // 10 Gb/s worth of bytes
            assert!(r.rate() <= G10);
        }
        assert_eq!((r.rate(), r.next_timer()), (G10, None));
        assert_eq!(r.stats.releases, 1);
        // Released: the byte counter does nothing.
        assert_eq!(r.on_sent(t + 1, 1_000_000), None);
    }

    #[test]
    fn jitter_spreads_periods() {
        let mut r = QcnRp::new(&QcnRpParams::default(), G10, Stream::new(4, "t", 0));
        let mut seen = vec![];
        for i in 0..200u64 {
            r.on_cnm(i * 100 * MS, 1);
            seen.push(r.next_timer().unwrap() - i * 100 * MS);
        }
        let lo = *seen.iter().min().unwrap() as f64 / (15 * MS) as f64;
        let hi = *seen.iter().max().unwrap() as f64 / (15 * MS) as f64;
        assert!(lo >= 0.85 && hi <= 1.15, "{lo} {hi}");
        assert!(lo < 0.9 && hi > 1.1, "{lo} {hi}");
    }

    #[test]
    fn validation() {
        QcnRpParams::default().validate().unwrap();
        let bad = |p: QcnRpParams| p.validate().unwrap_err().field;
        assert_eq!(
            bad(QcnRpParams {
                threshold: 0,
                ..Default::default()
            }),
            "threshold"
        );
        assert_eq!(
            bad(QcnRpParams {
                gd: 0.1,
                ..Default::default()
            }),
            "gd"
        );
        assert_eq!(
            bad(QcnRpParams {
                min_dec_factor: 0.0,
                ..Default::default()
            }),
            "min_dec_factor"
        );
        assert_eq!(
            bad(QcnRpParams {
                time_reset: TimeValue(0),
                ..Default::default()
            }),
            "time_reset"
        );
        let p: QcnRpParams =
            toml::from_str("time_reset = \"10ms\"\ntarget_on_cnm = \"always\"").unwrap();
        assert_eq!(
            (p.time_reset.ps(), p.target_on_cnm),
            (10 * MS, TargetOnCnm::Always)
        );
    }
}
