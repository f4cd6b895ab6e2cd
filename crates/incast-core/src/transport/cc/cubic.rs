//! CUBIC (RFC 9438), with HyStart++ (RFC 9406) as an option.
//!
//! CUBIC grows the window as a cubic function of the time since the last
//! congestion event rather than of the number of round trips, so flows with
//! different RTTs grow alike and a long fat pipe refills in seconds, not
//! minutes. After a congestion event at window `W_max` (segments), the window
//! restarts at `cwnd_epoch = β·W_max` and follows
//!
//! ```text
//!     W_cubic(t) = C·(t − K)³ + W_max,    K = ∛((W_max − cwnd_epoch) / C)
//! ```
//!
//! (RFC 9438 §4.2, `t` in seconds, C = 0.4, β = 0.7): fast at first (the
//! concave region, §4.4), flat around `W_max` where the last loss happened,
//! then faster again beyond it (the convex region, §4.5). Each ACK moves
//! `cwnd` a fraction of the way toward `W_cubic(t + RTT)`, clamped to
//! `[cwnd, 1.5·cwnd]`. In parallel CUBIC estimates what Reno would have
//! (`W_est`, growing by `α = 3(1 − β)/(1 + β)` segments per round trip, §4.3)
//! and never does worse (α stays so for the whole stage, as Linux's
//! `bictcp_update` and ns-3's `TcpCubic::Update` do; `rfc9438_alpha_one = true`
//! switches to α = 1 once W_est reaches cwnd_prior, as §4.3 says SHOULD): at the small RTTs and windows of a data center the
//! cubic curve is nearly flat for seconds, so CUBIC runs in this Reno-friendly
//! region almost all the time, as AIMD(0.53, 0.7).
//!
//! On a congestion event (three duplicate ACKs, or ECN-Echo if the flow is
//! ECN-capable) `ssthresh = β·min(cwnd, FlightSize)` (§4.6 with FlightSize; Linux
//! and ns-3 with cwnd; `State::reduced`); with fast convergence
//! (§4.7) a flow that lost below its previous `W_max` remembers an even lower
//! one, releasing bandwidth to newer flows. ECN-Echo cuts at most once per
//! window of data (RFC 3168 §6.1.2). After a retransmission timeout the
//! transport restarts from one segment; CUBIC sets `ssthresh` with β and
//! starts its next curve with `K = 0` at the window it reaches (§4.8). The
//! undo of spurious congestion events (§4.9) is not modelled: this transport
//! has no way to detect them (no DSACK, no Eifel).
//!
//! Loss recovery itself (fast retransmit, NewReno partial ACKs) is the
//! transport's, as RFC 9438 §4.6 allows. Slow start is the transport's
//! standard one, or HyStart++ when `hystart = true`, which leaves slow start
//! on a rise of the per-round minimum RTT instead of a loss: RFC 9406's
//! thresholds (4-16 ms) suit the Internet; data-center runs will want
//! microsecond ones (`hystart_min_rtt_thresh`, `hystart_max_rtt_thresh`).
//!
//! Units: the RFC counts segments and seconds; `cwnd` here is in bytes, so
//! every rule converts with the MSS (§4.1). Growth per ACK is scaled by the
//! segments it acknowledges (RFC 9438 erratum 9186, as Linux does), so
//! delayed ACKs do not slow the curve down. `t` includes any time the flow
//! is held back without being cwnd-limited (§4.2 asks to exclude
//! application-limited periods; a flow here always has data until its end).

use super::{AckEvent, CongestionControl, ParamError, TimeoutEvent, Window};
use crate::config_types::TimeValue;
use crate::units::{Ps, MS, SEC};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// C, in segments per second cubed (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7: SHOULD).
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3: SHOULD).
    pub reno_friendly: bool,
    /// Reno-friendly α = 1 once W_est reaches cwnd_prior (RFC 9438 §4.3:
    /// SHOULD). Off by default: Linux (`tcp_cubic.c`, `beta_scale`) and ns-3
    /// (`TcpCubic::Update`) keep α = 3(1 − β)/(1 + β) for the whole stage.
    pub rfc9438_alpha_one: bool,
    /// Send ECN-capable packets and react to ECN-Echo (RFC 3168). Off by
    /// default, as for a Linux host that does not request ECN.
    pub ecn: bool,
    /// Leave the first slow start with HyStart++ (RFC 9406).
    pub hystart: bool,
    /// HyStart++ MIN_RTT_THRESH (RFC 9406 §4.3: 4 ms).
    pub hystart_min_rtt_thresh: TimeValue,
    /// HyStart++ MAX_RTT_THRESH (RFC 9406 §4.3: 16 ms).
    pub hystart_max_rtt_thresh: TimeValue,
    /// HyStart++ MIN_RTT_DIVISOR (RFC 9406 §4.3: 8).
    pub hystart_min_rtt_divisor: u32,
    /// HyStart++ N_RTT_SAMPLE (RFC 9406 §4.3: 8).
    pub hystart_n_rtt_sample: u32,
    /// HyStart++ CSS_GROWTH_DIVISOR (RFC 9406 §4.3: 4, at least 2).
    pub hystart_css_growth_divisor: u32,
    /// HyStart++ CSS_ROUNDS (RFC 9406 §4.3: 5).
    pub hystart_css_rounds: u32,
    /// HyStart++ L, the slow-start increase cap per ACK in segments
    /// (RFC 9406 §4.3: 8 without pacing).
    pub hystart_l: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            rfc9438_alpha_one: false,
            ecn: false,
            hystart: false,
            hystart_min_rtt_thresh: TimeValue(4 * MS),
            hystart_max_rtt_thresh: TimeValue(16 * MS),
            hystart_min_rtt_divisor: 8,
            hystart_n_rtt_sample: 8,
            hystart_css_growth_divisor: 4,
            hystart_css_rounds: 5,
            hystart_l: 8,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(ParamError::new(
                "c",
                format!("must be positive (RFC 9438: 0.4), got {}", self.c),
            ));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::new(
                "beta",
                format!("must be in (0, 1) (RFC 9438: 0.7), got {}", self.beta),
            ));
        }
        if self.rfc9438_alpha_one && !self.reno_friendly {
            return Err(ParamError::new(
                "rfc9438_alpha_one",
                "sets the Reno-friendly region's α, so it needs reno_friendly = true \
                 (remove rfc9438_alpha_one or set reno_friendly = true)",
            ));
        }
        if self.hystart_min_rtt_thresh.0 > self.hystart_max_rtt_thresh.0 {
            return Err(ParamError::new(
                "hystart_min_rtt_thresh",
                "must not exceed hystart_max_rtt_thresh (RFC 9406: 4ms and 16ms)",
            ));
        }
        for (field, v, min, rfc) in [
            (
                "hystart_min_rtt_divisor",
                self.hystart_min_rtt_divisor,
                1,
                8,
            ),
            ("hystart_n_rtt_sample", self.hystart_n_rtt_sample, 1, 8),
            (
                "hystart_css_growth_divisor",
                self.hystart_css_growth_divisor,
                2,
                4,
            ),
            ("hystart_css_rounds", self.hystart_css_rounds, 1, 5),
            ("hystart_l", self.hystart_l, 1, 8),
        ] {
            if v < min {
                return Err(ParamError::new(
                    field,
                    format!("must be at least {min} (RFC 9406: {rfc}), got {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// The current congestion-avoidance stage (RFC 9438 §4.1.2).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch.
    start: Ps,
    /// K, seconds (negative when W_max < cwnd_epoch).
    k: f64,
    /// The W_max this curve is built on, segments.
    w_max: f64,
    /// W_est, segments.
    w_est: f64,
}

#[derive(Clone, Debug)]
struct State {
    p: Params,
    /// HyStart++ while the first slow start lasts.
    hystart: Option<HyStart>,
    /// W_max, segments; `None` makes the next stage start its curve at its own
    /// window with K = 0 (after a timeout, §4.8, or a loss-free HyStart++ exit, §4.10).
    w_max: Option<f64>,
    /// cwnd_prior, segments (§4.1.2).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// Growth not yet added to cwnd, bytes.
    frac: f64,
    /// No ECN reaction until snd_una passes this point (one cut per window).
    cwr_end: Option<u64>,
    /// snd_nxt at the latest ACK.
    snd_nxt: u64,
}

/// CUBIC's state (boxed: it is larger than the other algorithms', and every
/// flow slot holds the largest variant).
#[derive(Clone, Debug)]
pub struct Cubic(Box<State>);

impl Cubic {
    pub fn new(params: &Params) -> Self {
        Cubic(Box::new(State {
            p: params.clone(),
            hystart: params.hystart.then(HyStart::default),
            w_max: None,
            cwnd_prior: 0.0,
            epoch: None,
            frac: 0.0,
            cwr_end: None,
            snd_nxt: 0,
        }))
    }

    /// W_max in segments (the one the current curve uses, else the latest set).
    pub fn w_max(&self) -> Option<f64> {
        self.0.epoch.map(|e| e.w_max).or(self.0.w_max)
    }

    /// K in seconds of the current curve.
    pub fn k(&self) -> Option<f64> {
        self.0.epoch.map(|e| e.k)
    }

    /// HyStart++ is in conservative slow start.
    pub fn in_css(&self) -> bool {
        self.0
            .hystart
            .as_ref()
            .is_some_and(|h| h.css_baseline.is_some())
    }
}

impl State {
    /// A congestion event at window `cwnd` bytes: W_max, cwnd_prior, and a new stage.
    fn congestion_event(&mut self, cwnd: u64, mss: u64) {
        let cwnd = cwnd as f64 / mss as f64;
        let w_max = match self.w_max {
            // §4.7 fast convergence: below the previous W_max, release more.
            Some(prev) if self.p.fast_convergence && cwnd < prev => {
                cwnd * (1.0 + self.p.beta) / 2.0
            }
            // §4.6: remember cwnd before the reduction.
            _ => cwnd,
        };
        self.w_max = Some(w_max);
        self.cwnd_prior = cwnd; // §4.6: cwnd_prior = cwnd
        self.epoch = None;
        self.frac = 0.0;
        // RFC 9406 §4.2: a congestion event ends HyStart++; it is used only once (§4.1).
        self.hystart = None;
    }

    /// The window after a multiplicative decrease, bytes: β × min(cwnd, FlightSize).
    ///
    /// RFC 9438 §4.6 sets `ssthresh = flight_size × β` and lets implementations
    /// use cwnd instead if cwnd cannot grow while the flight is below it. Linux
    /// (`tcp_cubic.c`, `bictcp_recalc_ssthresh`: `snd_cwnd * beta / BICTCP_BETA_SCALE`)
    /// and ns-3 (`TcpCubic::GetSsThresh`: `segCwnd * m_beta`) use cwnd. The two
    /// differ at a SACK recovery's start: the segments sent on the first
    /// duplicate ACKs (the SACKed ones leave the pipe) are in FlightSize but not
    /// in cwnd, so β × FlightSize cut about β × DupThresh segments less than
    /// Linux. The minimum is Linux's value whenever the flow is cwnd-limited, and
    /// never more than the RFC's FlightSize when it is not (§4.6's condition).
    fn reduced(&self, cwnd: u64, flight: u64) -> u64 {
        (cwnd.min(flight) as f64 * self.p.beta) as u64
    }

    /// One congestion-avoidance ACK (RFC 9438 §4.2-4.5).
    fn avoid(&mut self, w: &mut Window, a: &AckEvent) {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let c = self.p.c;
        // §4.3: α_cubic = 3(1 − β)/(1 + β): AIMD(α_cubic, β) has Reno's AIMD(1, 0.5) throughput.
        let alpha_cubic = 3.0 * (1.0 - self.p.beta) / (1.0 + self.p.beta);
        let cwnd_prior = self.cwnd_prior;
        let w_max_now = self.w_max;
        let ep = self.epoch.get_or_insert_with(|| {
            let (w_max, k) = match w_max_now {
                // §4.2 Figure 2: K = ∛((W_max − cwnd_epoch)/C) (signed: fast
                // convergence may leave W_max below cwnd_epoch).
                Some(m) => (m, ((m - cwnd) / c).cbrt()),
                // §4.8 / §4.10: K = 0, W_max = the window at the start of the stage.
                None => (cwnd, 0.0),
            };
            // §4.3: W_est starts at cwnd_epoch.
            Epoch {
                start: a.now,
                k,
                w_max,
                w_est: cwnd,
            }
        });
        let t = (a.now - ep.start) as f64 / SEC as f64;
        // segments_acked
        let acked = a.acked as f64 / mss;
        // §4.3 Figure 4: W_est += α·segments_acked/cwnd. α = 1 once W_est reaches
        // cwnd_prior only with `rfc9438_alpha_one` (§4.3 SHOULD); otherwise α_cubic
        // throughout, as Linux's bictcp_update (beta_scale) and ns-3's TcpCubic.
        let alpha = if self.p.rfc9438_alpha_one && ep.w_est >= cwnd_prior {
            1.0
        } else {
            alpha_cubic
        };
        ep.w_est += alpha * acked / cwnd;
        let w_cubic = |t: f64| c * (t - ep.k).powi(3) + ep.w_max; // §4.2 Figure 1
        if self.p.reno_friendly && w_cubic(t) < ep.w_est {
            // §4.3: the Reno-friendly region: cwnd = W_est (never below cwnd).
            w.cwnd = w.cwnd.max((ep.w_est * mss) as u64);
            self.frac = 0.0;
            return;
        }
        // §4.2: target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd], RTT = SRTT.
        let rtt = a.srtt as f64 / SEC as f64;
        let target = w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        // §4.4 (concave, cwnd < W_max) and §4.5 (convex, cwnd >= W_max): the
        // same rule, cwnd += (target − cwnd)/cwnd per segment acknowledged.
        self.frac += (target - cwnd) / cwnd * acked * mss;
        let inc = self.frac.floor();
        self.frac -= inc;
        w.cwnd += inc as u64;
    }
}

impl CongestionControl for Cubic {
    fn ecn_capable(&self) -> bool {
        self.0.p.ecn
    }

    fn on_ack_any(&mut self, w: &mut Window, a: &AckEvent) -> bool {
        let s = &mut *self.0;
        s.snd_nxt = a.snd_nxt;
        if let Some(end) = s.cwr_end {
            if a.snd_una > end {
                s.cwr_end = None;
            }
        }
        // RFC 3168 §6.1.2 / RFC 9438 §4.6: on ECN-Echo, the multiplicative
        // decrease, at most once per window of data, not during loss recovery.
        if s.p.ecn && a.ece && s.cwr_end.is_none() && !a.in_recovery {
            s.congestion_event(w.cwnd, w.mss);
            let ssthresh = s.reduced(w.cwnd, a.prior_flight());
            w.cwnd = ssthresh.max(w.mss); // §4.6: cwnd = max(ssthresh, 1) on ECE
            w.ssthresh = ssthresh.max(2 * w.mss); // §4.6: ssthresh at least 2 segments
            w.ca_acked = 0;
            s.cwr_end = Some(a.snd_nxt);
            return true;
        }
        false
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckEvent) {
        let s = &mut *self.0;
        if w.cwnd < w.ssthresh {
            if let Some(h) = s.hystart.as_mut() {
                if h.on_ack(w, a, &s.p) {
                    // RFC 9406 §4.2: CSS_ROUNDS done: ssthresh = cwnd, congestion avoidance.
                    w.ssthresh = w.cwnd;
                    s.hystart = None;
                    // RFC 9438 §4.10: no loss, so cwnd_prior = cwnd and the first
                    // stage's curve has K = 0 and W_max = its starting window.
                    s.cwnd_prior = w.cwnd as f64 / w.mss as f64;
                    s.w_max = None;
                    s.epoch = None;
                }
                return;
            }
            // RFC 9438 §4.10 / RFC 5681 §3.1: standard slow start.
            w.reno_increase(a.acked);
            return;
        }
        s.avoid(w, a);
    }

    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64) -> u64 {
        let s = &mut *self.0;
        s.congestion_event(w.cwnd, w.mss);
        // One reduction per window: no ECN cut for data sent before the loss.
        s.cwr_end = Some(s.snd_nxt);
        // §4.6: ssthresh at least 2 segments.
        s.reduced(w.cwnd, flight).max(2 * w.mss)
    }

    fn on_timeout(&mut self, w: &mut Window, t: &TimeoutEvent) {
        let s = &mut *self.0;
        // §4.8: cwnd as Reno (the transport set 1 SMSS), ssthresh with β as in §4.6.
        w.ssthresh = ((t.flight as f64 * s.p.beta) as u64).max(2 * w.mss);
        s.congestion_event(t.prior_cwnd, w.mss);
        // §4.8: the first stage after a timeout uses K = 0 and W_max = its own
        // starting window (W_est starts there too).
        s.w_max = None;
        s.cwr_end = Some(t.high_tx);
    }

    /// W_max in segments (0 before the first congestion event).
    fn trace_value(&self) -> Option<f64> {
        Some(self.w_max().unwrap_or(0.0))
    }
}

/// HyStart++ (RFC 9406 §4.2) state during the first slow start.
#[derive(Clone, Debug, Default)]
struct HyStart {
    /// windowEnd: the round ends when snd_una passes it.
    window_end: Option<u64>,
    last_round_min_rtt: Option<Ps>,
    current_round_min_rtt: Option<Ps>,
    rtt_sample_count: u32,
    /// cssBaselineMinRtt: `Some` while in conservative slow start (CSS).
    css_baseline: Option<Ps>,
    css_rounds: u32,
    /// CSS growth not yet added to cwnd, bytes.
    frac: f64,
}

impl HyStart {
    /// One ACK of new data in slow start; `true` when CSS has lasted
    /// CSS_ROUNDS rounds and the sender is to enter congestion avoidance.
    fn on_ack(&mut self, w: &mut Window, a: &AckEvent, params: &Params) -> bool {
        // §4.2: at the start of each round, roll the per-round minimum RTT.
        if self.window_end.is_none_or(|e| a.snd_una >= e) {
            if self.css_baseline.is_some() {
                self.css_rounds += 1;
                // §4.2: CSS_ROUNDS rounds in CSS complete: congestion avoidance.
                if self.css_rounds >= params.hystart_css_rounds {
                    return true;
                }
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(a.snd_nxt);
        }
        // §4.2: cwnd += min(N, L·SMSS), divided by CSS_GROWTH_DIVISOR in CSS.
        let inc = a.acked.min(params.hystart_l as u64 * w.mss);
        if self.css_baseline.is_some() {
            self.frac += inc as f64 / params.hystart_css_growth_divisor as f64;
            let whole = self.frac.floor();
            self.frac -= whole;
            w.cwnd += whole as u64;
        } else {
            w.cwnd += inc;
        }
        if let Some(r) = a.rtt {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
            self.rtt_sample_count += 1;
        }
        if self.rtt_sample_count < params.hystart_n_rtt_sample {
            return false;
        }
        let Some(cur) = self.current_round_min_rtt else {
            return false;
        };
        match (self.css_baseline, self.last_round_min_rtt) {
            (None, Some(last)) => {
                // §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)).
                let thresh = (last / params.hystart_min_rtt_divisor as u64)
                    .min(params.hystart_max_rtt_thresh.0)
                    .max(params.hystart_min_rtt_thresh.0);
                if cur >= last + thresh {
                    // §4.2: the delay rose: exit slow start into CSS.
                    self.css_baseline = Some(cur);
                    self.css_rounds = 0;
                }
            }
            (Some(base), _) if cur < base => {
                // §4.2: the RTT fell below the baseline: the exit was spurious, resume slow start.
                self.css_baseline = None;
                self.frac = 0.0;
            }
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests;
