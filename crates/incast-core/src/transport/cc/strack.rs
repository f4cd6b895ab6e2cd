//! STrack's congestion control as csg-htsim defines it (`sim/strack.cpp`,
//! Broadcom/csg-htsim 841d9e7), a window-based congestion control of the
//! TCP-like transport.
//!
//! Why a TCP congestion control and not a transport family of its own: the
//! published STrack (Le et al., "STrack: A Reliable Multipath Transport for
//! AI/ML Clusters", arXiv 2407.15266) sprays over paths with ECN-driven load
//! balancing and selective retransmission, but htsim's `STrackSrc` has none
//! of that: one route per flow (`set_paths`/`permute_paths` exist, the PLB
//! `move_path` is declared and never defined), cumulative ACKs
//! (`STrackSink::send_ack` carries `_cumulative_ack` and the echoed
//! timestamp, no SACK), NewReno-like fast recovery on three duplicate ACKs
//! and a go-back-N retransmission timeout (`STrackSrc::doNextEvent`), no ECN.
//! Only its window law differs from Swift's, so it is one more algorithm over
//! incast's TCP, like [`super::swift`]. The published STrack is not modelled.
//!
//! htsim's rules, with windows in bytes (`STrackSrc::adjust_cwnd`, run on
//! every ACK, duplicates included, also one that comes with nothing in
//! flight ([`CongestionControl::sees_acks_with_nothing_in_flight`]), before
//! the loss machinery):
//! * `can_decrease = now - last_decrease >= srtt` (the smoothed RTT *before*
//!   this ACK's sample), then the RTT estimator takes the sample;
//! * `delay < target`: `cwnd = alpha * (target - srtt) / cwnd`, with `srtt`
//!   after the sample in picoseconds and `alpha` = 0.25. This *replaces* the
//!   window (htsim's line has `=`, not `+=`) and is not dimensionally a
//!   window: the product of two successive windows is `alpha * (target -
//!   srtt)`, so at a steady `srtt` the window alternates between `W` and
//!   `K / W` (a period-2 orbit, [`Strack::increase`]). When `srtt >= target`
//!   while the sample is below it, htsim's unsigned `target - srtt` wraps
//!   around and the window is clamped to `max_cwnd`; incast does the same;
//! * `delay >= target` and `can_decrease`: `cwnd = achieved_bdp` when `delay
//!   > 2 target` and an achieved BDP is known, else Swift's multiplicative
//!   decrease `cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf)`;
//! * the achieved BDP (`STrackSrc::receivePacket`): every ACK counts one MSS
//!   (`_rx_count`); once more than `base_rtt` has passed since the last
//!   update the count becomes the achieved BDP if an ACK came within the last
//!   `base_rtt`, else the BDP is unknown (0);
//! * fast recovery: no decrease on entry; on leaving it, `cwnd *= 1 -
//!   max_mdf` if it may decrease, and the timeout count resets
//!   (`STrackSrc::handle_ack`);
//! * timeout: after `retx_reset_threshold` timeouts since the last recovery
//!   `cwnd = min_cwnd`, else `cwnd *= 1 - max_mdf` if a decrease is allowed;
//! * `applySTrackLimits`: clamp to `[min_cwnd, max_cwnd]`; below one packet
//!   the sender paces one packet every `srtt * mss / cwnd`, the first one
//!   that gap after the last send, at the entering ACK's srtt and window
//!   (`STrackPacer::schedule_send`); back at one packet or more the pending
//!   paced send is cancelled and the window sends (`send_packets`'
//!   `_pacer.cancel()`; both [`CongestionControl::pacer_follows_window`]).
//! * the window is whole bytes: htsim's `_strack_cwnd` is a `uint32_t`, so
//!   every update above (computed in `double`) is truncated toward zero when
//!   it is stored (C++ [conv.fpint]), [`htsim_bytes`]. On the period-2 orbit
//!   this is a ratchet, not rounding noise: the small window is floored
//!   (25.9 B is stored as 25 B), the next large one is `K / 25`, and any dip
//!   of `K` as srtt rises floors the small window one byte lower, while
//!   raising it back needs `K` to grow by a whole `1 / small`. htsim's lone
//!   flow across its k = 8 fat-tree walks the small window from 25 B down to
//!   the 10 B minimum and its large one from 60,000 B up to about 125,000 B
//!   in 3 RTTs (docs/htsim-strack.md); with a fractional window the orbit
//!   stays at 60,000 / 25 B and the flow takes 2.7 times as long.
//!
//! Target delay (`STrackSrc::targetDelay`): `base_target + hops * per_hop`,
//! no flow scaling (commented out in htsim). htsim's `Route::clone` starts
//! the clone's hop count at 0 and `STrackSrc::connect` clones the route, so
//! in every htsim experiment `hops` is 0 and the target is `base_target`;
//! `per_hop` defaults to 0 here for that reason (set it to 20 us / 6.55 =
//! 3.053435 us for the hop scaling htsim intends).
//!
//! Defaults are htsim's (`STrackSrc::STrackSrc`): alpha 0.25, beta 0.8,
//! max_mdf 0.5, base target 20 us, min_cwnd 10 bytes, max_cwnd 1000
//! packets, 5 timeouts before the reset. `base_rtt` has no default: htsim
//! asserts it was set (`update_rtt`), its dumbbell sets 10 us.

use super::swift::{check_decrease, check_window_limits};
use super::{AckEvent, CongestionControl, ParamError, TimeoutEvent, Window};
use crate::config_types::TimeValue;
use crate::units::{Ps, SEC};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Increase constant `alpha` of `cwnd = alpha (target - srtt) / cwnd`,
    /// bytes squared per picosecond (htsim's `_alpha`: 0.25).
    pub alpha: f64,
    /// Multiplicative-decrease constant (htsim's `_beta`: 0.8).
    pub beta: f64,
    /// Largest multiplicative-decrease factor (htsim's `_max_mdf`: 0.5).
    pub max_mdf: f64,
    /// Base target delay (htsim's `_base_delay`: 20 us).
    pub base_target: TimeValue,
    /// Target added per link of the forward path (0: htsim's routes lose
    /// their hop count when cloned, see the module documentation).
    pub per_hop: TimeValue,
    /// Interval over which the achieved BDP is counted (htsim's
    /// `set_base_rtt`; required, e.g. the path's unloaded RTT).
    pub base_rtt: TimeValue,
    /// Smallest window, bytes (htsim: 10).
    pub min_cwnd: u64,
    /// Largest window, packets (htsim: 1000).
    pub max_cwnd: f64,
    /// Timeouts after which the window resets to `min_cwnd` (htsim: 5).
    pub retx_reset_threshold: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 0.25,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: TimeValue(20 * crate::units::US),
            per_hop: TimeValue(0),
            base_rtt: TimeValue(0),
            min_cwnd: 10,
            max_cwnd: 1000.0,
            retx_reset_threshold: 5,
        }
    }
}

impl Params {
    /// Ranges of htsim's constants (those it shares with Swift checked as
    /// Swift's are: [`check_decrease`], [`check_window_limits`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(ParamError::new(
                "alpha",
                format!("must be > 0, got {}", self.alpha),
            ));
        }
        check_decrease(self.beta, self.max_mdf, self.base_target.0)?;
        if self.base_rtt.0 == 0 {
            return Err(ParamError::new(
                "base_rtt",
                "must be set: the interval over which STrack counts its achieved BDP \
                 (htsim's set_base_rtt), e.g. the path's unloaded RTT such as \"10us\"",
            ));
        }
        check_window_limits(self.min_cwnd, self.max_cwnd, self.retx_reset_threshold)?;
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Strack {
    p: Params,
    /// The window in whole bytes (htsim's `uint32_t`; below one packet it
    /// sets the pacing), kept in an `f64` so the wrap is `INFINITY`.
    cwnd: f64,
    /// Bytes in one packet (the transport's MSS).
    mss: f64,
    /// Links on the forward path (hop scaling).
    links: u32,
    /// When the window last went down (htsim starts it at 0).
    last_decrease: Ps,
    /// Timeouts since the last fast recovery ended.
    retransmit_cnt: u32,
    /// Smoothed RTT after the latest ACK.
    srtt: Ps,
    /// The latest ACK's time.
    now: Ps,
    /// Bytes acknowledged (one MSS per ACK) since the achieved BDP's update.
    rx_count: f64,
    /// Bytes acknowledged in the last `base_rtt`; 0 when unknown.
    achieved_bdp: f64,
    /// When the achieved BDP was last updated, and the last ACK's time.
    last_bdp_update: Ps,
    last_active: Ps,
    /// The sender was in fast recovery after the previous ACK.
    was_in_recovery: bool,
}

impl Strack {
    pub fn new(params: &Params) -> Self {
        Strack {
            p: params.clone(),
            cwnd: 0.0,
            mss: 1.0,
            links: 0,
            last_decrease: 0,
            retransmit_cnt: 0,
            srtt: 0,
            now: 0,
            rx_count: 0.0,
            achieved_bdp: 0.0,
            last_bdp_update: 0,
            last_active: 0,
            was_in_recovery: false,
        }
    }

    /// The window in bytes (fractional).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The achieved BDP in bytes (0: unknown).
    pub fn achieved_bdp(&self) -> f64 {
        self.achieved_bdp
    }

    /// `STrackSrc::targetDelay`: base target plus hop scaling.
    pub fn target(&self) -> Ps {
        self.p.base_target.0 + self.links as Ps * self.p.per_hop.0
    }

    /// htsim's increase, `cwnd = alpha (target - srtt) / cwnd`; an `srtt`
    /// at or above the target wraps htsim's unsigned difference, which the
    /// clamp turns into `max_cwnd`.
    pub fn increase(&self, target: Ps, srtt: Ps) -> f64 {
        match target.checked_sub(srtt) {
            Some(gap) if gap > 0 => htsim_bytes(self.p.alpha * gap as f64 / self.cwnd),
            // gap 0: htsim gives cwnd 0, clamped to min_cwnd.
            Some(_) => 0.0,
            None => f64::INFINITY,
        }
    }

    /// `receivePacket`: every ACK counts one MSS towards the achieved BDP.
    fn count_bdp(&mut self, now: Ps) {
        self.rx_count += self.mss;
        if now - self.last_bdp_update > self.p.base_rtt.0 {
            if now - self.last_active < self.p.base_rtt.0 {
                self.achieved_bdp = self.rx_count;
                self.rx_count = 0.0;
            } else {
                // No ACK in the last base RTT: the BDP is not valid.
                self.achieved_bdp = 0.0;
                self.rx_count = self.mss;
            }
            self.last_bdp_update = now;
        }
        self.last_active = now;
    }

    /// `adjust_cwnd`, on every ACK with delay `delay`; `srtt_before` is the
    /// smoothed RTT before this ACK's sample.
    fn adjust(&mut self, now: Ps, delay: Ps, srtt_before: Ps) {
        let can_decrease = now.saturating_sub(self.last_decrease) >= srtt_before;
        let target = self.target();
        if delay < target {
            self.cwnd = self.increase(target, self.srtt);
        } else if can_decrease {
            if delay > 2 * target && self.achieved_bdp > 0.0 {
                self.cwnd = self.achieved_bdp;
            } else {
                // Swift's multiplicative decrease.
                let d = delay as f64;
                let factor =
                    (1.0 - self.p.beta * (d - target as f64) / d).max(1.0 - self.p.max_mdf);
                self.cwnd = htsim_bytes(self.cwnd * factor);
            }
            self.last_decrease = now;
        }
    }

    /// `applySTrackLimits`: clamp, and note a decrease since `prev`.
    fn apply_limits(&mut self, prev: f64, now: Ps) {
        let max = htsim_bytes(self.p.max_cwnd * self.mss);
        self.cwnd = self.cwnd.clamp(self.p.min_cwnd as f64, max);
        if self.cwnd < prev {
            self.last_decrease = now;
        }
    }

    /// The transport's window: STrack's, at least one byte.
    fn window_bytes(&self) -> u64 {
        (self.cwnd.round() as u64).max(1)
    }
}

/// A window computed in `double` as htsim stores it in its `uint32_t
/// _strack_cwnd`: truncated toward zero (C++ [conv.fpint]). `INFINITY` (the
/// wrap of `target - srtt`) stays infinite for the clamp to `max_cwnd`.
pub fn htsim_bytes(window: f64) -> f64 {
    if window.is_finite() {
        window.trunc()
    } else {
        window
    }
}

impl CongestionControl for Strack {
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
        let srtt_before = self.srtt;
        self.now = a.now;
        self.srtt = a.srtt;
        self.count_bdp(a.now);
        let prev = self.cwnd;
        self.adjust(a.now, a.delay, srtt_before);
        // handle_ack applies the limits on every ACK but the third
        // duplicate; applying them there too only clamps earlier.
        self.apply_limits(prev, a.now);
        true
    }

    /// STrack owns the window: no Reno growth.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckEvent) {}

    /// Fast recovery starts without a decrease (htsim's `handle_ack`).
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: u64) -> u64 {
        self.window_bytes().max(w.mss)
    }

    fn on_timeout(&mut self, w: &mut Window, t: &TimeoutEvent) {
        // STrackSrc::doNextEvent, on a retransmission timeout.
        self.retransmit_cnt += 1;
        let prev = self.cwnd;
        if self.retransmit_cnt >= self.p.retx_reset_threshold {
            self.cwnd = self.p.min_cwnd as f64;
        } else if t.now.saturating_sub(self.last_decrease) >= self.srtt {
            self.cwnd = htsim_bytes(self.cwnd * (1.0 - self.p.max_mdf));
        }
        self.apply_limits(prev, t.now);
        w.cwnd = self.window_bytes();
    }

    fn after_ack(
        &mut self,
        w: &mut Window,
        a: &AckEvent,
        _rate: Option<&super::RateSample>,
        in_recovery: bool,
    ) {
        if self.was_in_recovery && !in_recovery {
            // handle_ack, recovery over: the timeout count resets and the
            // window goes down by max_mdf if it may.
            self.retransmit_cnt = 0;
            if a.now.saturating_sub(self.last_decrease) >= self.srtt {
                let prev = self.cwnd;
                self.cwnd = htsim_bytes((1.0 - self.p.max_mdf) * self.cwnd);
                self.last_decrease = a.now;
                self.apply_limits(prev, a.now);
            }
        }
        self.was_in_recovery = in_recovery;
        if in_recovery {
            w.ssthresh = self.window_bytes().max(w.mss);
        } else {
            w.cwnd = self.window_bytes();
            w.ssthresh = u64::MAX;
        }
    }

    /// `applySTrackLimits`: below one packet, one packet every
    /// `srtt * mss / cwnd`, i.e. `cwnd` bytes per smoothed RTT.
    fn pacing_rate(&self) -> Option<f64> {
        (self.cwnd < self.mss && self.srtt > 0).then(|| self.cwnd * SEC as f64 / self.srtt as f64)
    }

    /// htsim's `STrackSrc::send_packets` and `STrackPacer`. Below one packet
    /// with no paced send pending it calls `schedule_send(_pacing_delay)`,
    /// which sets the next send at `_last_send + _pacing_delay` (the last
    /// segment sent, window-mode ones included, `just_sent`), the delay
    /// `srtt * mss / cwnd` of the ACK that took the window below one packet;
    /// later ACKs do not move it. Once the window is one packet or more, the
    /// pending send is cancelled (`_pacer.cancel()`) and the window sends at
    /// once. Without the first rule incast's first paced segment left once the
    /// flight was empty, its gap taken at the smoothed RTT of then; without
    /// the second a flow whose paced packet's ACK reopened the window sat out
    /// the rest of its 400-RTT pacing gap (docs/htsim-strack.md, "Seeds").
    fn pacer_follows_window(&self) -> bool {
        true
    }

    /// htsim's `STrackSrc::receivePacket` runs `adjust_cwnd` on every ACK not
    /// below `_last_acked`, the flight empty or not. Under spraying the ACK of
    /// a spurious retransmission comes after everything is acknowledged; when
    /// incast dropped it, a flow whose previous ACK left the window below one
    /// packet (the period-2 orbit's small side) waited out a pacing gap of
    /// hundreds of RTTs that htsim's next ACK would have cancelled
    /// (docs/htsim-strack.md, "Spraying").
    fn sees_acks_with_nothing_in_flight(&self) -> bool {
        true
    }

    fn trace_value(&self) -> Option<f64> {
        Some(self.cwnd / self.mss)
    }
}

#[cfg(test)]
#[path = "strack_tests.rs"]
mod tests;
