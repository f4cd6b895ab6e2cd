//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015), in the flavour of the HPCC simulator
//! (`CC_MODE 7`, `rdma-hw.cc` `HandleAckTimely` / `UpdateRateTimely`).
//!
//! The sender keeps an EWMA of successive RTT differences and reacts to its
//! normalised gradient (paper Algorithm 1; docs/mechanisms.md, TIMELY):
//!
//! - `rtt < T_low`: additive increase by δ;
//! - `rtt > T_high`: `rate *= 1 - β (1 - T_high / rtt)`;
//! - gradient `<= 0`: additive increase (hyper-active after N in a row);
//! - otherwise `rate *= 1 - β · gradient`.
//!
//! HPCC-simulator specifics reproduced here [A]:
//!
//! - the rate is updated at most once per RTT: only an ACK beyond
//!   `last_update_seq` updates it, and `last_update_seq` then becomes the
//!   sender's `snd_nxt` (there is no per-ACK "fast react" for TIMELY);
//! - the first such ACK only records the RTT;
//! - the hyper-active increase uses a separate step `RATE_HAI` once the
//!   number of consecutive increases reaches 5, and it counts *every*
//!   increase (also those with `rtt < T_low`), not only gradient-region ones
//!   as in the paper;
//! - the multiplicative factor of the gradient region is floored at 0 and
//!   the result at `min_rate`.
//!
//! The RTT sample is [`RdmaAck::rtt`] (the HPCC simulator echoes the data
//! packet's transmit timestamp), with no segment serialization time
//! subtracted (the paper does so for 16–64 KB segments; here one ACK per packet).

use super::{CcCtx, ParamError, RateCc, RdmaAck};
use crate::config_types::{RateValue, TimeValue};
use crate::units::US;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Weight of the newest RTT difference in the EWMA:
    /// `rtt_diff = (1 - a) rtt_diff + a new_diff`. HPCC simulator `TimelyAlpha`
    /// 0.875 (default here, to match it); eRPC / Mittal's snippet use 0.02.
    pub ewma_alpha: f64,
    /// T_low: below this RTT, always increase (paper and HPCC simulator: 50 us).
    pub t_low: TimeValue,
    /// T_high: above this RTT, decrease by `β (1 - T_high / rtt)` (paper and
    /// HPCC simulator: 500 us).
    pub t_high: TimeValue,
    /// Multiplicative-decrease factor β (paper and HPCC simulator: 0.8).
    pub beta: f64,
    /// minRTT, normalising the gradient (paper and HPCC simulator: 20 us).
    pub min_rtt: TimeValue,
    /// Additive step δ. Default 10 Mb/s x line/10G (paper: 10 Mb/s at 10 GbE;
    /// HPCC simulator run.py `RATE_AI` = 10 Mb/s x bw/10G, 100 Mb/s at 100G).
    /// A value written in a scenario is absolute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ai: Option<RateValue>,
    /// Hyper-active step. Default 50 Mb/s x line/10G (HPCC simulator run.py
    /// `RATE_HAI`; = 5 δ, the paper's N = 5). A value written in a scenario is absolute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_hai: Option<RateValue>,
    /// Consecutive increases after which the hyper-active step is used
    /// (paper and HPCC simulator: 5).
    pub hai_threshold: u32,
    /// Lowest rate (HPCC simulator run.py `MIN_RATE` 1000 Mb/s).
    pub min_rate: RateValue,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ewma_alpha: 0.875,
            t_low: TimeValue(50 * US),
            t_high: TimeValue(500 * US),
            beta: 0.8,
            min_rtt: TimeValue(20 * US),
            rate_ai: None,
            rate_hai: None,
            hai_threshold: 5,
            min_rate: RateValue(crate::units::Rate::mbps(1000)),
        }
    }
}

impl Params {
    /// Checks the ranges; the error names the field and the fix.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.ewma_alpha > 0.0 && self.ewma_alpha <= 1.0) {
            return Err(ParamError::new(
                "ewma_alpha",
                format!(
                    "the EWMA weight must be in (0, 1], got {}; the HPCC simulator uses 0.875, eRPC 0.02",
                    self.ewma_alpha
                ),
            ));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(ParamError::new(
                "beta",
                format!(
                    "the decrease factor must be in (0, 1], got {}; the paper uses 0.8",
                    self.beta
                ),
            ));
        }
        if self.min_rtt.ps() == 0 {
            return Err(ParamError::new(
                "min_rtt",
                "must be positive: it divides the RTT gradient (the paper uses \"20us\")",
            ));
        }
        if self.t_low.ps() > self.t_high.ps() {
            return Err(ParamError::new(
                "t_low",
                format!(
                    "must not exceed t_high ({} > {}); the paper uses t_low = \"50us\", t_high = \"500us\"",
                    self.t_low, self.t_high
                ),
            ));
        }
        super::check_min_rate(&self.min_rate)
    }
}

#[derive(Clone, Debug)]
pub struct Timely {
    ewma_alpha: f64,
    t_low: f64,
    t_high: f64,
    beta: f64,
    min_rtt: f64,
    rate_ai: f64,
    rate_hai: f64,
    hai_threshold: u32,
    min_rate: f64,
    line: f64,
    rate: f64,
    /// None until the first update ACK (HPCC simulator `m_lastUpdateSeq == 0`).
    last_update_seq: Option<u64>,
    /// RTT at the last update, ps.
    prev_rtt: f64,
    /// EWMA of RTT differences, ps.
    rtt_diff: f64,
    /// Consecutive increases (HPCC simulator `m_incStage`).
    inc_stage: u32,
}

impl Timely {
    pub fn new(params: &Params, ctx: &CcCtx) -> Self {
        let abs = |r: Option<RateValue>, per_10g: f64| {
            r.map_or(per_10g * ctx.line_rate / 10e9, |r| {
                r.rate().bits_per_sec() as f64
            })
        };
        Timely {
            ewma_alpha: params.ewma_alpha,
            t_low: params.t_low.ps() as f64,
            t_high: params.t_high.ps() as f64,
            beta: params.beta,
            min_rtt: params.min_rtt.ps() as f64,
            rate_ai: abs(params.rate_ai, 10e6),
            rate_hai: abs(params.rate_hai, 50e6),
            hai_threshold: params.hai_threshold,
            min_rate: (params.min_rate.rate().bits_per_sec() as f64).min(ctx.line_rate),
            line: ctx.line_rate,
            // Start at line rate (HPCC simulator AddQueuePair: tmly.m_curRate = line).
            rate: ctx.line_rate,
            last_update_seq: None,
            prev_rtt: 0.0,
            rtt_diff: 0.0,
            inc_stage: 0,
        }
    }

    /// EWMA of RTT differences, ps.
    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    fn update(&mut self, rtt: f64) {
        // new_rtt_diff = new_rtt - prev_rtt; rtt_diff = (1 - a) rtt_diff + a new_rtt_diff.
        let new_diff = rtt - self.prev_rtt;
        self.rtt_diff = (1.0 - self.ewma_alpha) * self.rtt_diff + self.ewma_alpha * new_diff;
        // gradient = rtt_diff / minRTT.
        let gradient = self.rtt_diff / self.min_rtt;
        let factor = if rtt < self.t_low {
            // Paper Alg. 1: rtt < T_low -> additive increase.
            None
        } else if rtt > self.t_high {
            // rtt > T_high -> rate *= 1 - beta (1 - T_high / rtt), from the raw RTT.
            Some(1.0 - self.beta * (1.0 - self.t_high / rtt))
        } else if gradient <= 0.0 {
            // Non-positive gradient -> additive (or hyper-active) increase.
            None
        } else {
            // Positive gradient -> rate *= 1 - beta gradient (floored at 0, HPCC simulator).
            Some((1.0 - self.beta * gradient).max(0.0))
        };
        match factor {
            None => {
                // HPCC simulator: RATE_AI while m_incStage < 5, then RATE_HAI.
                let step = if self.inc_stage < self.hai_threshold {
                    self.rate_ai
                } else {
                    self.rate_hai
                };
                self.rate = (self.rate + step).min(self.line);
                self.inc_stage = self.inc_stage.saturating_add(1);
            }
            Some(c) => {
                self.rate = (self.rate * c).max(self.min_rate);
                self.inc_stage = 0;
            }
        }
    }
}

impl RateCc for Timely {
    fn rate(&self) -> f64 {
        self.rate
    }

    fn ecn_capable(&self) -> bool {
        false
    }

    fn on_ack(&mut self, _ctx: &CcCtx, ack: &RdmaAck) {
        // At most one update per RTT: only an ACK beyond the snd_nxt of the last update.
        let last = self.last_update_seq.unwrap_or(0);
        if ack.acked_to <= last {
            return;
        }
        let rtt = ack.rtt as f64;
        if self.last_update_seq.is_some() {
            self.update(rtt);
        }
        // The first update ACK only records the RTT.
        self.last_update_seq = Some(ack.snd_nxt.max(last));
        self.prev_rtt = rtt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Ps;

    const G100: f64 = 100e9;

    fn ctx() -> CcCtx {
        CcCtx {
            line_rate: G100,
            base_rtt: 12 * US,
            mtu: 1000,
            bdp: 150_000,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Feeds one "update" ACK per call (acked_to beyond the last snd_nxt).
    struct Driver {
        seq: u64,
    }
    impl Driver {
        fn ack(&mut self, cc: &mut Timely, rtt: Ps) {
            self.seq += 10_000;
            let a = RdmaAck {
                now: self.seq,
                acked_to: self.seq,
                newly_acked: 1000,
                snd_nxt: self.seq + 5_000,
                rtt,
                ece: false,
                int: &[],
            };
            cc.on_ack(&ctx(), &a);
        }
    }

    #[test]
    fn defaults_and_parsing() {
        let cc = Timely::new(&Params::default(), &ctx());
        assert!(close(cc.rate_ai, 100e6) && close(cc.rate_hai, 500e6) && close(cc.min_rate, 1e9));
        assert_eq!(cc.ewma_alpha, 0.875);
        let p: Params =
            toml::from_str("ewma_alpha = 0.02\nt_high = \"1ms\"\nrate_ai = \"40Mbps\"").unwrap();
        assert!(p.validate().is_ok());
        let cc = Timely::new(&p, &ctx());
        assert!(close(cc.rate_ai, 40e6) && close(cc.t_high, 1e9));
        assert!(toml::from_str::<Params>("alpha = 0.5").is_err());
        assert!(!cc.ecn_capable());
    }

    #[test]
    fn first_ack_only_records_and_updates_once_per_rtt() {
        let mut cc = Timely::new(&Params::default(), &ctx());
        cc.rate = 50e9;
        let mut d = Driver { seq: 0 };
        d.ack(&mut cc, 10 * US);
        assert_eq!(cc.rate(), 50e9);
        d.ack(&mut cc, 10 * US);
        assert!(close(cc.rate(), 50.1e9));
        // ACKs at or below last_update_seq (= snd_nxt of the last update) do nothing.
        let stale = RdmaAck {
            now: 0,
            acked_to: d.seq + 5_000,
            newly_acked: 1000,
            snd_nxt: d.seq + 20_000,
            rtt: 10 * US,
            ece: false,
            int: &[],
        };
        cc.on_ack(&ctx(), &stale);
        assert!(close(cc.rate(), 50.1e9));
    }

    #[test]
    fn low_rtt_additive_then_hyper_after_five() {
        let mut cc = Timely::new(&Params::default(), &ctx());
        cc.rate = 50e9;
        let mut d = Driver { seq: 0 };
        d.ack(&mut cc, 10 * US);
        // Five increases of delta = 100 Mb/s, then hyper-active steps of 500 Mb/s.
        for k in 1..=5 {
            d.ack(&mut cc, 10 * US);
            assert!(close(cc.rate(), 50e9 + k as f64 * 100e6), "k={k}");
        }
        d.ack(&mut cc, 10 * US);
        assert!(close(cc.rate(), 50.5e9 + 500e6));
        d.ack(&mut cc, 10 * US);
        assert!(close(cc.rate(), 51e9 + 500e6));
        // Never above line rate.
        for _ in 0..200 {
            d.ack(&mut cc, 10 * US);
        }
        assert_eq!(cc.rate(), G100);
    }

    #[test]
    fn high_rtt_multiplicative_decrease() {
        let mut cc = Timely::new(&Params::default(), &ctx());
        let mut d = Driver { seq: 0 };
        d.ack(&mut cc, 600 * US);
        d.ack(&mut cc, 800 * US);
        // rate *= 1 - 0.8 (1 - 500/800) = 0.7, whatever the gradient.
        assert!(close(cc.rate(), G100 * (1.0 - 0.8 * (1.0 - 500.0 / 800.0))));
        // Floored at min_rate.
        for _ in 0..100 {
            d.ack(&mut cc, 5000 * US);
        }
        assert_eq!(cc.rate(), 1e9);
    }

    #[test]
    fn gradient_region() {
        let mut cc = Timely::new(&Params::default(), &ctx());
        cc.rate = 50e9;
        let mut d = Driver { seq: 0 };
        d.ack(&mut cc, 100 * US);
        // +10 us: rtt_diff = 0.875 x 10 us; gradient = 8.75/20 = 0.4375.
        d.ack(&mut cc, 110 * US);
        assert!(close(cc.rtt_diff(), 0.875 * 10e6));
        let r1 = 50e9 * (1.0 - 0.8 * 0.4375);
        assert!(close(cc.rate(), r1));
        // -2 us: rtt_diff = 0.125 x 8.75 - 0.875 x 2 = -0.65625 us <= 0: increase by delta.
        d.ack(&mut cc, 108 * US);
        assert!(close(cc.rtt_diff(), 0.125 * 8.75e6 - 0.875 * 2e6));
        assert!(close(cc.rate(), r1 + 100e6));
        // A large positive gradient floors the factor at 0, the rate at min_rate.
        d.ack(&mut cc, 200 * US);
        assert_eq!(cc.rate(), 1e9);
    }

    #[test]
    fn decrease_resets_the_hai_count() {
        let mut cc = Timely::new(&Params::default(), &ctx());
        cc.rate = 50e9;
        let mut d = Driver { seq: 0 };
        d.ack(&mut cc, 10 * US);
        for _ in 0..6 {
            d.ack(&mut cc, 10 * US);
        }
        assert_eq!(cc.inc_stage, 6);
        d.ack(&mut cc, 700 * US);
        assert_eq!(cc.inc_stage, 0);
        let r = cc.rate();
        d.ack(&mut cc, 10 * US);
        assert!(close(cc.rate(), r + 100e6));
    }
}
