//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion
//! Control in the Datacenter", SIGCOMM 2020), as a window-based congestion
//! control of the TCP-like transport.
//!
//! Why a TCP congestion control and not an RDMA one: Swift is window-based
//! (§3.1: "Swift uses a congestion window"), reacts to every ACK's delay
//! sample, and keeps TCP's loss machinery (§3.5: fast recovery on three
//! duplicate ACKs, retransmission timeouts). incast's TCP transport has all
//! of that (cumulative or SACK ACKs, an echoed timestamp on every ACK, pacing
//! for model-based algorithms); its RDMA queue pairs are rate-based
//! ([`crate::rdma::cc::RateCc`]). csg-htsim's Swift (`sim/swift.cpp`) is the
//! same kind of source: a TCP-like sender with a Swift window.
//!
//! Algorithm 1 of the paper, with windows in bytes (`mss` bytes = 1 packet):
//! * on every ACK with delay `d` (the echoed timestamp's round trip: incast
//!   stamps a segment as it leaves the NIC and the receiver ACKs at once, so
//!   this is the paper's fabric delay without NIC or host delay, §3.2):
//!   - `d < target`: additive increase, `cwnd += ai * mss * acked / cwnd`
//!     when `cwnd >= 1` packet, else `cwnd += ai * acked` (§3.4: below one
//!     packet the increase is per packet acknowledged);
//!   - otherwise, at most once per RTT (`now - t_last_decrease >= rtt`):
//!     `cwnd *= max(1 - beta * (d - target) / d, 1 - max_mdf)`;
//! * on fast recovery (three duplicate ACKs): `cwnd *= 1 - max_mdf` if it may
//!   decrease;
//! * on a retransmission timeout: after `retx_reset_threshold` consecutive
//!   timeouts `cwnd = min_cwnd`, else `cwnd *= 1 - max_mdf` if it may decrease;
//! * `cwnd` is clamped to `[min_cwnd, max_cwnd]`; below one packet the flow
//!   is paced: one packet every `rtt / cwnd` (§3.4, `cwnd` in packets).
//!
//! Target delay (§3.1): `base_target + hops * per_hop + fs(cwnd)`, with the
//! flow-scaling term `fs = clamp(alpha / sqrt(cwnd) + beta_fs, 0, fs_range)`,
//! `alpha = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd))`,
//! `beta_fs = -alpha / sqrt(fs_max_cwnd)` (cwnd in packets). `hops` is the
//! number of links of the flow's forward path, taken from the route when
//! the flow starts ([`CongestionControl::set_path_links`]): htsim's
//! `Route::hop_count` counts the same (its pipes); the paper reads hops from
//! the IP TTL, i.e. switches, one fewer (the difference is one `per_hop`,
//! which `base_target` absorbs).
//!
//! Defaults are htsim's (`SwiftSrc::SwiftSrc`): ai 1, beta 0.8, max_mdf 0.5,
//! base target 20 us, per-hop 20 us / 6.55, fs_range 5 x base target,
//! fs_min_cwnd 0.1, fs_max_cwnd 100 packets, min_cwnd 10 bytes, max_cwnd 1000
//! packets, 5 timeouts before the window resets. The paper gives the same
//! forms and leaves the constants to the deployment.

use super::{AckEvent, CongestionControl, ParamError, TimeoutEvent, Window};
use crate::config_types::TimeValue;
use crate::units::{Ps, SEC, US};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Additive increment `ai`, packets per RTT (Algorithm 1; htsim: 1.0).
    pub ai: f64,
    /// Multiplicative-decrease constant `beta` (Algorithm 1; htsim: 0.8).
    pub beta: f64,
    /// Largest multiplicative-decrease factor `max_mdf` (Algorithm 1; htsim: 0.5).
    pub max_mdf: f64,
    /// Base target delay (§3.1; htsim's `_base_delay`: 20 us).
    pub base_target: TimeValue,
    /// Target added per link of the forward path (§3.1 hop scaling; htsim's
    /// `_h = _base_delay / 6.55` = 3.053435 us).
    pub per_hop: TimeValue,
    /// Flow-scaling range `fs_range` (§3.1; htsim: 5 x base target = 100 us).
    pub fs_range: TimeValue,
    /// Window (packets) at which flow scaling adds all of `fs_range` (htsim: 0.1).
    pub fs_min_cwnd: f64,
    /// Window (packets) at which flow scaling adds nothing (htsim: 100).
    pub fs_max_cwnd: f64,
    /// Smallest window, bytes (htsim: 10; the paper's floor is a fraction of a packet).
    pub min_cwnd: u64,
    /// Largest window, packets (htsim: 1000).
    pub max_cwnd: f64,
    /// Consecutive timeouts after which the window resets to `min_cwnd`
    /// (Algorithm 1's RETX_RESET_THRESHOLD; htsim: 5).
    pub retx_reset_threshold: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: TimeValue(20 * US),
            // htsim: 20 us / 6.55 in picoseconds.
            per_hop: TimeValue(3_053_435),
            fs_range: TimeValue(100 * US),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            min_cwnd: 10,
            max_cwnd: 1000.0,
            retx_reset_threshold: 5,
        }
    }
}

/// The decrease constants Swift and STrack share: `beta` in (0, 1],
/// `max_mdf` in (0, 1), a target delay above 0.
pub(super) fn check_decrease(beta: f64, max_mdf: f64, base_target: Ps) -> Result<(), ParamError> {
    if !(beta > 0.0 && beta <= 1.0) {
        return Err(ParamError::new(
            "beta",
            format!("must be in (0, 1], got {}", beta),
        ));
    }
    if !(max_mdf > 0.0 && max_mdf < 1.0) {
        return Err(ParamError::new(
            "max_mdf",
            format!("must be in (0, 1), got {}", max_mdf),
        ));
    }
    if base_target == 0 {
        return Err(ParamError::new(
            "base_target",
            "must be > 0 (e.g. \"20us\")",
        ));
    }
    Ok(())
}

/// The window limits Swift and STrack share: a minimum of at least one
/// byte, a finite maximum above 0 packets, a retransmission count of 1 or more.
pub(super) fn check_window_limits(
    min_cwnd: u64,
    max_cwnd: f64,
    retx_reset_threshold: u32,
) -> Result<(), ParamError> {
    if min_cwnd == 0 {
        return Err(ParamError::new("min_cwnd", "must be at least 1 byte"));
    }
    if !(max_cwnd.is_finite() && max_cwnd > 0.0) {
        return Err(ParamError::new(
            "max_cwnd",
            format!("must be > 0 packets, got {}", max_cwnd),
        ));
    }
    if retx_reset_threshold == 0 {
        return Err(ParamError::new(
            "retx_reset_threshold",
            "must be at least 1",
        ));
    }
    Ok(())
}

impl Params {
    /// Ranges of Algorithm 1's and §3.1's constants.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.ai > 0.0 && self.ai.is_finite()) {
            return Err(ParamError::new(
                "ai",
                format!("must be > 0, got {}", self.ai),
            ));
        }
        check_decrease(self.beta, self.max_mdf, self.base_target.0)?;
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd) {
            return Err(ParamError::new(
                "fs_min_cwnd",
                format!(
                    "must be > 0 and below fs_max_cwnd ({}), got {}",
                    self.fs_max_cwnd, self.fs_min_cwnd
                ),
            ));
        }
        if !self.fs_max_cwnd.is_finite() {
            return Err(ParamError::new("fs_max_cwnd", "must be finite"));
        }
        check_window_limits(self.min_cwnd, self.max_cwnd, self.retx_reset_threshold)?;
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Swift {
    p: Params,
    /// Swift's window in bytes (fractional: below one packet it sets the pacing).
    cwnd: f64,
    /// Bytes in one packet (the transport's MSS).
    mss: f64,
    /// Links on the forward path (hop scaling).
    links: u32,
    /// §3.1's flow-scaling `alpha` and `beta`, in picoseconds.
    fs_alpha: f64,
    fs_beta: f64,
    /// When the window last went down; `None` before its first decrease.
    last_decrease: Option<Ps>,
    /// Consecutive retransmission timeouts (reset by every ACK).
    retransmit_cnt: u32,
    /// Smoothed RTT (RFC 6298, the transport's) after the latest ACK.
    srtt: Ps,
    /// The latest ACK's time (the time of a loss detected on it).
    now: Ps,
}

impl Swift {
    pub fn new(params: &Params) -> Self {
        // §3.1: alpha = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)),
        // beta = -alpha / sqrt(fs_max_cwnd).
        let fs_alpha = params.fs_range.0 as f64
            / (1.0 / params.fs_min_cwnd.sqrt() - 1.0 / params.fs_max_cwnd.sqrt());
        Swift {
            p: params.clone(),
            cwnd: 0.0,
            mss: 1.0,
            links: 0,
            fs_alpha,
            fs_beta: -fs_alpha / params.fs_max_cwnd.sqrt(),
            last_decrease: None,
            retransmit_cnt: 0,
            srtt: 0,
            now: 0,
        }
    }

    /// The window in bytes (fractional).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// §3.1: the target delay at the current window.
    pub fn target(&self) -> Ps {
        let packets = self.cwnd / self.mss;
        // fs = alpha / sqrt(cwnd) + beta, clamped to [0, fs_range].
        let fs =
            (self.fs_alpha / packets.sqrt() + self.fs_beta).clamp(0.0, self.p.fs_range.0 as f64);
        let hops = self.links as f64 * self.p.per_hop.0 as f64;
        self.p.base_target.0 + (fs + hops) as Ps
    }

    /// Algorithm 1: the window may decrease once per RTT.
    fn can_decrease(&self, now: Ps) -> bool {
        self.last_decrease
            .is_none_or(|t| now.saturating_sub(t) >= self.srtt)
    }

    /// Clamps the window to `[min_cwnd, max_cwnd]` and notes a decrease.
    fn apply_limits(&mut self, prev: f64, now: Ps) {
        let max = self.p.max_cwnd * self.mss;
        self.cwnd = self.cwnd.clamp(self.p.min_cwnd as f64, max);
        if self.cwnd < prev {
            self.last_decrease = Some(now);
        }
    }

    /// Algorithm 1, on receiving an ACK of `acked` new bytes with delay `delay`.
    fn on_delay(&mut self, now: Ps, delay: Ps, acked: u64) {
        let prev = self.cwnd;
        self.retransmit_cnt = 0;
        let target = self.target();
        if delay < target {
            if self.cwnd >= self.mss {
                // cwnd += ai / cwnd * num_acked (packets).
                self.cwnd += self.p.ai * self.mss * acked as f64 / self.cwnd;
            } else {
                // §3.4: below one packet, cwnd += ai * num_acked.
                self.cwnd += self.p.ai * acked as f64;
            }
        } else if self.can_decrease(now) {
            // cwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf).
            let d = delay as f64;
            let factor = (1.0 - self.p.beta * (d - target as f64) / d).max(1.0 - self.p.max_mdf);
            self.cwnd *= factor;
        }
        self.apply_limits(prev, now);
    }

    /// A loss (fast recovery or timeout): `cwnd *= 1 - max_mdf` if it may decrease.
    fn loss_decrease(&mut self, now: Ps) {
        if self.can_decrease(now) {
            let prev = self.cwnd;
            self.cwnd *= 1.0 - self.p.max_mdf;
            self.apply_limits(prev, now);
        }
    }

    /// The transport's window: Swift's, at least one byte.
    fn window_bytes(&self) -> u64 {
        (self.cwnd.round() as u64).max(1)
    }
}

impl CongestionControl for Swift {
    fn init(&mut self, w: &Window) {
        self.mss = w.mss as f64;
        self.cwnd = w.cwnd as f64;
    }

    fn wants_path(&self) -> bool {
        true
    }

    fn set_path_links(&mut self, links: u32) {
        self.links = links;
    }

    fn on_ack_any(&mut self, _w: &mut Window, a: &AckEvent) -> bool {
        self.now = a.now;
        self.srtt = a.srtt;
        // Algorithm 1 runs on every ACK, duplicates included (their delay
        // can decrease the window; they acknowledge nothing new).
        self.on_delay(a.now, a.delay, a.acked);
        true
    }

    /// Swift owns the window: no Reno growth.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckEvent) {}

    fn ssthresh_on_loss(&mut self, w: &Window, _flight: u64) -> u64 {
        // Algorithm 1, on fast recovery: retransmit_cnt = 0, and the
        // multiplicative decrease by max_mdf if it may decrease.
        self.retransmit_cnt = 0;
        self.loss_decrease(self.now);
        // The transport sets cwnd = ssthresh + 3 SMSS during recovery and
        // deflates to ssthresh at its end; `after_ack` puts Swift's back.
        self.window_bytes().max(w.mss)
    }

    fn on_timeout(&mut self, w: &mut Window, t: &TimeoutEvent) {
        // Algorithm 1, on retransmission timeout.
        self.retransmit_cnt += 1;
        if self.retransmit_cnt >= self.p.retx_reset_threshold {
            let prev = self.cwnd;
            self.cwnd = self.p.min_cwnd as f64;
            self.apply_limits(prev, t.now);
        } else {
            self.loss_decrease(t.now);
        }
        w.cwnd = self.window_bytes();
    }

    fn after_ack(
        &mut self,
        w: &mut Window,
        _a: &AckEvent,
        _rate: Option<&super::RateSample>,
        in_recovery: bool,
    ) {
        if in_recovery {
            // Recovery ends with cwnd = ssthresh: Swift's window then.
            w.ssthresh = self.window_bytes().max(w.mss);
        } else {
            w.cwnd = self.window_bytes();
            w.ssthresh = u64::MAX;
        }
    }

    /// §3.4: below one packet, one packet every `rtt / cwnd` (cwnd in
    /// packets), i.e. `cwnd` bytes per RTT.
    fn pacing_rate(&self) -> Option<f64> {
        (self.cwnd < self.mss && self.srtt > 0).then(|| self.cwnd * SEC as f64 / self.srtt as f64)
    }

    /// htsim's `SwiftPacer`, as STrack's: entering pacing (the window below
    /// one packet) with no paced send pending, the first paced segment may
    /// leave one gap after the last segment sent, the gap at this ACK's rate
    /// (`schedule_send`: `_last_send + _pacing_delay`); an ACK that leaves the
    /// window at one packet or more drops the pending paced send, and the
    /// window sends at once (`SwiftSubflowSrc::send_packets` cancels its
    /// pacer when it sends in window mode, `sim/swift.cpp`).
    fn pacer_follows_window(&self) -> bool {
        true
    }

    fn trace_value(&self) -> Option<f64> {
        Some(self.cwnd / self.mss)
    }
}

#[cfg(test)]
#[path = "swift_tests.rs"]
mod tests;
