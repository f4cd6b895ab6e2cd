//! Rate-based DCTCP for RDMA NICs, as in the HPCC simulator (`CC_MODE 8`,
//! `rdma-hw.cc` `HandleAckDctcp`; docs/mechanisms.md, "Rate-based DCTCP").
//!
//! DCTCP's control law (Alizadeh et al., SIGCOMM 2010; RFC 8257) applied to
//! a NIC rate instead of a window:
//!
//! - once per window of data (an ACK beyond `last_update_seq`, which then
//!   becomes `snd_nxt`): `alpha = (1 - g) alpha + g F` with
//!   `F = min(1, #ECE ACKs / #packets in flight when the window started)`;
//! - on an ECN echo outside CWR: `rate = max(min_rate, rate (1 - alpha/2))`,
//!   then CWR until an ACK passes `snd_nxt` as it was at the cut (at most one
//!   cut per window);
//! - at the start of every window while not in CWR: `rate += DCTCP_RATE_AI`
//!   (capped at line rate).
//!
//! There is no slow start: the QP starts at line rate (HPCC simulator
//! `AddQueuePair`). HPCC-simulator specifics reproduced here [A]:
//!
//! - F counts ACKs carrying the ECN echo, not bytes (the HPCC simulator ACKs
//!   every packet, so with `ack_interval = 1` this is the marked-packet
//!   count); the denominator is `(snd_nxt - ack) / mtu + 1` packets;
//! - the first window only records `last_update_seq` and the batch size; ECE
//!   ACKs counted during it are carried into the second window's F (the
//!   counter is not reset);
//! - the additive increase happens on the ACK that opens a window, after the
//!   cut check, so an ACK that both opens a window and carries ECE cuts but
//!   does not increase.

use super::{CcCtx, ParamError, RateCc, RdmaAck};
use crate::config_types::RateValue;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// EWMA gain g for alpha (HPCC simulator run.py `EWMA_GAIN 0.0625` for
    /// DCTCP; RFC 8257: 1/16).
    pub g: f64,
    /// Initial alpha (HPCC simulator `dctcp.m_alpha = 1`; RFC 8257).
    pub initial_alpha: f64,
    /// Additive increase per window of data (HPCC simulator run.py
    /// `DCTCP_RATE_AI` 615 Mb/s: "1 MTU per RTT" with RTT 13 us, 1 KB MTU).
    pub rate_ai: RateValue,
    /// Lowest rate (HPCC simulator run.py `MIN_RATE` 1000 Mb/s).
    pub min_rate: RateValue,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            rate_ai: RateValue(Rate::mbps(615)),
            min_rate: RateValue(Rate::mbps(1000)),
        }
    }
}

impl Params {
    /// Checks the ranges; the error names the field and the fix.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ParamError::new(
                "g",
                format!(
                    "the EWMA gain must be in (0, 1], got {}; RFC 8257 uses 1/16 = 0.0625",
                    self.g
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(ParamError::new(
                "initial_alpha",
                format!(
                    "must be in [0, 1], got {}; RFC 8257 starts at 1",
                    self.initial_alpha
                ),
            ));
        }
        super::check_min_rate(&self.min_rate)
    }
}

#[derive(Clone, Debug)]
pub struct RateDctcp {
    g: f64,
    rate_ai: f64,
    min_rate: f64,
    line: f64,
    mtu: u64,
    rate: f64,
    alpha: f64,
    /// None until the first ACK (HPCC simulator `m_lastUpdateSeq == 0`).
    last_update_seq: Option<u64>,
    /// ACKs with ECN echo in the current window.
    ecn_cnt: u64,
    /// Packets in flight when the window started.
    batch: u64,
    /// In CWR until an ACK passes `high_seq`.
    cwr: bool,
    high_seq: u64,
}

impl RateDctcp {
    pub fn new(params: &Params, ctx: &CcCtx) -> Self {
        RateDctcp {
            g: params.g,
            rate_ai: params.rate_ai.rate().bits_per_sec() as f64,
            min_rate: (params.min_rate.rate().bits_per_sec() as f64).min(ctx.line_rate),
            line: ctx.line_rate,
            mtu: ctx.mtu.max(1),
            rate: ctx.line_rate,
            alpha: params.initial_alpha,
            last_update_seq: None,
            ecn_cnt: 0,
            batch: 0,
            cwr: false,
            high_seq: 0,
        }
    }

    /// Current alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl RateCc for RateDctcp {
    fn rate(&self) -> f64 {
        self.rate
    }

    fn ecn_capable(&self) -> bool {
        true
    }

    fn on_ack(&mut self, _ctx: &CcCtx, ack: &RdmaAck) {
        // Count ACKs carrying the ECN echo.
        self.ecn_cnt += ack.ece as u64;
        let mut new_batch = false;
        // Full window of feedback: alpha update once per window of data.
        if ack.acked_to > self.last_update_seq.unwrap_or(0) {
            new_batch = true;
            if self.last_update_seq.is_none() {
                // First window: batch = snd_nxt / mtu + 1 packets.
                self.batch = ack.snd_nxt / self.mtu + 1;
            } else {
                // F = min(1, #ECE / batch); alpha = (1 - g) alpha + g F.
                let f = (self.ecn_cnt as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                self.ecn_cnt = 0;
                self.batch = ack.snd_nxt.saturating_sub(ack.acked_to) / self.mtu + 1;
            }
            self.last_update_seq = Some(ack.snd_nxt);
        }
        // Leave CWR once an ACK passes snd_nxt as it was at the cut.
        if self.cwr && ack.acked_to > self.high_seq {
            self.cwr = false;
        }
        // ECN echo outside CWR: rate *= 1 - alpha/2, at most once per window.
        if ack.ece && !self.cwr {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
            self.cwr = true;
            self.high_seq = ack.snd_nxt;
        }
        // Additive increase once per window when not in CWR.
        if !self.cwr && new_batch {
            self.rate = (self.rate + self.rate_ai).min(self.line);
        }
    }

    fn trace_value(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: f64 = 100e9;

    fn ctx() -> CcCtx {
        CcCtx {
            line_rate: G100,
            base_rtt: 12_240_000,
            mtu: 1000,
            bdp: 153_000,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn ack(acked_to: u64, snd_nxt: u64, ece: bool) -> RdmaAck<'static> {
        RdmaAck {
            now: 0,
            acked_to,
            newly_acked: 1000,
            snd_nxt,
            rtt: 0,
            ece,
            int: &[],
        }
    }

    #[test]
    fn defaults_and_parsing() {
        let p = Params::default();
        assert_eq!((p.g, p.initial_alpha), (1.0 / 16.0, 1.0));
        assert_eq!(p.rate_ai.rate(), Rate::mbps(615));
        let p: Params = toml::from_str("g = 0.125\nrate_ai = \"1Gbps\"").unwrap();
        assert!(p.validate().is_ok());
        assert!(toml::from_str::<Params>("k = 3").is_err());
        let cc = RateDctcp::new(&p, &ctx());
        assert!(cc.ecn_capable() && cc.rate() == G100);
    }

    #[test]
    fn alpha_converges_to_marked_fraction() {
        let p = Params {
            initial_alpha: 0.0,
            ..Params::default()
        };
        let mut cc = RateDctcp::new(&p, &ctx());
        // Windows of 10 packets (snd_nxt 10 packets ahead), 3 of each 10 ACKs marked.
        let mut acked = 0;
        cc.on_ack(&ctx(), &ack(1000, 10_000, false));
        acked += 1000;
        for _ in 0..400 {
            let nxt = acked + 9_000;
            for i in 0..10 {
                acked += 1000;
                cc.on_ack(&ctx(), &ack(acked, nxt + (i + 1) * 1000, i < 3));
            }
        }
        // batch = (snd_nxt - ack) / mtu + 1 = 10 packets -> F = 0.3, alpha -> 0.3.
        assert!((cc.alpha() - 0.3).abs() < 1e-3, "alpha {}", cc.alpha());
        // Clamped at F = 1 when more ACKs are marked than the batch.
        let mut cc = RateDctcp::new(&p, &ctx());
        cc.on_ack(&ctx(), &ack(1000, 2000, true));
        for k in 0..20 {
            cc.on_ack(&ctx(), &ack(1500 + k, 2000, true));
        }
        cc.on_ack(&ctx(), &ack(2001, 3000, true));
        assert!(close(cc.alpha(), 1.0 / 16.0));
    }

    #[test]
    fn cuts_once_per_window_and_increases_per_window() {
        let mut cc = RateDctcp::new(&Params::default(), &ctx());
        // First ACK opens the first window (batch = 100_000/1000 + 1 = 101) and carries
        // ECE: cut with alpha = 1 -> rate halves; CWR until acked > 100_000.
        cc.on_ack(&ctx(), &ack(1000, 100_000, true));
        assert_eq!(cc.rate(), 50e9);
        assert_eq!(cc.alpha(), 1.0);
        // More ECE in the same window: no further cut, no increase.
        for a in (2000..=100_000).step_by(1000) {
            cc.on_ack(&ctx(), &ack(a, 150_000, true));
        }
        assert_eq!(cc.rate(), 50e9);
        // The ACK past 100_000 opens a new window: alpha update with F = min(1, 100/101),
        // leaves CWR and adds R_AI = 615 Mb/s.
        cc.on_ack(&ctx(), &ack(101_000, 200_000, false));
        let f: f64 = 100.0 / 101.0;
        let a = 15.0 / 16.0 + f / 16.0;
        assert!(close(cc.alpha(), a));
        assert!(close(cc.rate(), 50e9 + 615e6));
        // Within the window, unmarked ACKs change nothing.
        cc.on_ack(&ctx(), &ack(102_000, 200_000, false));
        assert!(close(cc.rate(), 50e9 + 615e6));
        // A mark cuts by alpha/2 with the current alpha.
        cc.on_ack(&ctx(), &ack(103_000, 201_000, true));
        assert!(close(cc.rate(), (50e9 + 615e6) * (1.0 - a / 2.0)));
        // Increases cap at line rate, cuts floor at min_rate.
        let mut seq = 300_000;
        for _ in 0..400 {
            seq += 10_000;
            cc.on_ack(&ctx(), &ack(seq, seq + 5_000, false));
        }
        assert_eq!(cc.rate(), G100);
        for _ in 0..400 {
            seq += 10_000;
            cc.on_ack(&ctx(), &ack(seq, seq + 5_000, true));
        }
        assert_eq!(cc.rate(), 1e9);
    }
}
