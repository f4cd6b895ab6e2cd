//! BBR, version 1 (Cardwell et al., "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00).
//! Section numbers below are the draft's.
//!
//! BBR does not read loss as congestion. It keeps a model of the path, two
//! numbers: the bottleneck bandwidth `BtlBw`, the windowed maximum of the
//! delivery-rate samples of the last 10 round trips (§4.1.1), and the
//! round-trip propagation time `RTprop`, the minimum RTT of the last 10
//! seconds (§4.1.2). It paces at `pacing_gain × BtlBw` (§4.2.1) and caps
//! what is in flight at `cwnd_gain × BtlBw × RTprop` plus a few send quanta
//! (§4.2.3). A state machine (§4.3) chooses the gains:
//!
//! * STARTUP doubles the sending rate every round (gains 2/ln 2) until the
//!   bandwidth estimate grows less than 25 % in three rounds: the pipe is full;
//! * DRAIN paces at the inverse gain until what is in flight is one BDP;
//! * PROBE_BW cycles the pacing gain through 5/4, 3/4 and six phases of 1,
//!   each about one RTprop long: probe for more bandwidth, drain what the
//!   probe queued, cruise (cwnd gain 2);
//! * PROBE_RTT, when RTprop has not been refreshed for its window (10 s),
//!   holds 4 packets in flight for 200 ms and a round trip so the queue
//!   drains and the minimum RTT can be measured again.
//!
//! Delivery-rate samples come from the transport
//! ([`crate::transport::rate_sample`]); pacing is the transport's too (it asks
//! [`CongestionControl::pacing_rate`]). BBR sets the window itself on every
//! ACK ([`CongestionControl::after_ack`]), in loss recovery too: packet
//! conservation for the first round of a fast recovery, then growth toward
//! the target, and the last good window restored at the end (§4.2.3.4).
//!
//! Choices where the sources leave room:
//! * The initial pacing rate needs an RTT (§4.2.1: `InitialCwnd / SRTT`,
//!   1 ms without one). A real sender has the handshake's RTT; this transport
//!   has no handshake, so the first window leaves unpaced and pacing starts
//!   with the first RTT sample, unless `initial_rtt` is given.
//! * The random start phase of PROBE_BW (§4.3.4.2) comes from a generator
//!   seeded by the time of the flow's first ACK: deterministic, and different
//!   across flows.
//! * Data-center runs are short: `min_rtt_window` (RTpropFilterLen and
//!   ProbeRTTInterval, 10 s) and `probe_rtt_duration` (200 ms) are parameters.
//! * Without SACK, a duplicate ACK counts as one segment delivered for the
//!   window (not for the rate samples), and the segment a fast retransmit
//!   repairs as the one lost.

use super::windowed_max::WindowedMax;
use super::{AckEvent, CongestionControl, ParamError, RateSample, TimeoutEvent, Window};
use crate::config_types::{SizeValue, TimeValue};
use crate::units::{Ps, MS, SEC};
use serde::{Deserialize, Serialize};

/// How BBR sizes its send quantum, the burst its window allows three of
/// (§4.2.3.2) beyond gain x BDP.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SendQuantum {
    /// One segment: the unit this transport paces (each segment gets its own
    /// send time, §4.2.1), as ns-3's `TcpBbr::SetSendQuantum`. The default.
    #[default]
    Segment,
    /// §4.2.2 BBRSetSendQuantum: 1 ms of the pacing rate, up to
    /// `max_send_quantum` (one or two segments below 1.2 and 24 Mb/s): the
    /// TSO/GSO burst of Linux's `bbr_tso_segs_goal`, which leaves three such
    /// bursts standing in the bottleneck queue per flow (192 KB at 64 KB).
    Draft,
}

/// What [`CongestionControl::trace_value`] reports.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Trace {
    /// BtlBw, payload bits per second.
    #[default]
    BtlBw,
    /// RTprop, seconds.
    MinRtt,
    /// Pacing rate, payload bits per second.
    PacingRate,
    /// The current pacing gain.
    PacingGain,
    /// The state: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT.
    State,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// STARTUP's pacing and cwnd gain (§4.3.2.1: 2/ln 2 ≈ 2.885); DRAIN paces at its inverse.
    pub high_gain: f64,
    /// PROBE_BW's cwnd gain (§4.3.4.1: 2).
    pub cwnd_gain: f64,
    /// BtlBwFilterLen, round trips (§4.1.1.2: 10).
    pub btl_bw_filter_rounds: u32,
    /// RTpropFilterLen, which is also ProbeRTTInterval (§4.1.2.2, §4.3.5: 10 s).
    pub min_rtt_window: TimeValue,
    /// ProbeRTTDuration (§4.3.5: 200 ms).
    pub probe_rtt_duration: TimeValue,
    /// BBRMinPipeCwnd, segments (§4.2.3.3: 4).
    pub min_pipe_cwnd: u32,
    /// The send quantum (the cwnd allows three of them): one segment, or the draft's rule.
    pub send_quantum: SendQuantum,
    /// Largest send quantum of `send_quantum = "draft"` (§4.2.2: 64 KB).
    pub max_send_quantum: SizeValue,
    /// RTT for the initial pacing rate before the first sample (§4.2.1);
    /// by default the first window is not paced (see the module docs).
    pub initial_rtt: Option<TimeValue>,
    /// The value traced by the simulation's CC trace.
    pub trace: Trace,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            high_gain: 2.0 / std::f64::consts::LN_2,
            cwnd_gain: 2.0,
            btl_bw_filter_rounds: 10,
            min_rtt_window: TimeValue(10 * SEC),
            probe_rtt_duration: TimeValue(200 * MS),
            min_pipe_cwnd: 4,
            send_quantum: SendQuantum::Segment,
            max_send_quantum: SizeValue(64_000),
            initial_rtt: None,
            trace: Trace::BtlBw,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.high_gain.is_finite() && self.high_gain > 1.0) {
            return Err(ParamError::new(
                "high_gain",
                format!(
                    "must be above 1 (BBR: 2/ln 2 = 2.885), got {}",
                    self.high_gain
                ),
            ));
        }
        if !(self.cwnd_gain.is_finite() && self.cwnd_gain >= 1.0) {
            return Err(ParamError::new(
                "cwnd_gain",
                format!("must be at least 1 (BBR: 2), got {}", self.cwnd_gain),
            ));
        }
        if self.btl_bw_filter_rounds == 0 {
            return Err(ParamError::new(
                "btl_bw_filter_rounds",
                "must be at least 1 (BBR: 10)",
            ));
        }
        if self.min_rtt_window.0 == 0 {
            return Err(ParamError::new(
                "min_rtt_window",
                "must be positive (BBR: \"10s\")",
            ));
        }
        if self.min_pipe_cwnd == 0 {
            return Err(ParamError::new(
                "min_pipe_cwnd",
                "must be at least 1 (BBR: 4)",
            ));
        }
        if self.max_send_quantum.0 == 0 {
            return Err(ParamError::new(
                "max_send_quantum",
                "must be positive (BBR: \"64KB\")",
            ));
        }
        if self.initial_rtt.is_some_and(|t| t.0 == 0) {
            return Err(ParamError::new(
                "initial_rtt",
                "must be positive, e.g. \"10us\"",
            ));
        }
        Ok(())
    }
}

/// BBR's state machine (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// PROBE_BW's pacing gains (§4.3.4.1).
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

#[derive(Clone, Debug)]
struct State {
    p: Params,
    mss: u64,
    /// InitialCwnd, bytes.
    init_cwnd: u64,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// BtlBw filter, payload bytes per second over rounds.
    btl_bw: WindowedMax,
    rtprop: Option<Ps>,
    rtprop_stamp: Ps,
    rtprop_expired: bool,
    probe_rtt_done_stamp: Option<Ps>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prior_cwnd: u64,
    idle_restart: bool,
    /// C.delivered, bytes.
    delivered: u64,
    next_round_delivered: u64,
    round_start: bool,
    round_count: u64,
    filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    /// Payload bytes per second; 0 until initialized (§4.2.1).
    pacing_rate: f64,
    send_quantum: u64,
    target_cwnd: u64,
    cycle_index: usize,
    cycle_stamp: Ps,
    /// BBR's window, bytes: written to the transport's on every ACK.
    cwnd: u64,
    /// The transport was in fast recovery after the previous ACK.
    in_fast_recovery: bool,
    /// After a retransmission timeout: recovery lasts until snd_una passes this.
    rto_recovery_end: Option<u64>,
    /// HandleProbeRTT asked to mark what is sent next application-limited.
    app_limited_mark: bool,
    rng: u64,
}

/// BBR's state (boxed: much larger than the other algorithms').
#[derive(Clone, Debug)]
pub struct Bbr(Box<State>);

impl Bbr {
    pub fn new(params: &Params) -> Self {
        Bbr(Box::new(State {
            p: params.clone(),
            mss: 1,
            init_cwnd: 1,
            mode: Mode::Startup,
            pacing_gain: params.high_gain,
            cwnd_gain: params.high_gain,
            btl_bw: WindowedMax::default(),
            rtprop: None,
            rtprop_stamp: 0,
            rtprop_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            delivered: 0,
            next_round_delivered: 0,
            round_start: false,
            round_count: 0,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            pacing_rate: 0.0,
            send_quantum: 0,
            target_cwnd: 0,
            cycle_index: 0,
            cycle_stamp: 0,
            cwnd: 0,
            in_fast_recovery: false,
            rto_recovery_end: None,
            app_limited_mark: false,
            rng: 0,
        }))
    }

    pub fn mode(&self) -> Mode {
        self.0.mode
    }
    /// BtlBw, payload bytes per second.
    pub fn btl_bw(&self) -> f64 {
        self.0.btl_bw.get()
    }
    /// RTprop.
    pub fn rtprop(&self) -> Option<Ps> {
        self.0.rtprop
    }
    pub fn pacing_gain(&self) -> f64 {
        self.0.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.0.cwnd_gain
    }
    pub fn filled_pipe(&self) -> bool {
        self.0.filled_pipe
    }
    pub fn round_count(&self) -> u64 {
        self.0.round_count
    }
    pub fn cycle_index(&self) -> usize {
        self.0.cycle_index
    }
    pub fn target_cwnd(&self) -> u64 {
        self.0.target_cwnd
    }
    pub fn send_quantum(&self) -> u64 {
        self.0.send_quantum
    }
}

impl State {
    fn in_loss_recovery(&self) -> bool {
        self.in_fast_recovery || self.rto_recovery_end.is_some()
    }

    /// BBRInflight (§4.2.3.2): gain × BDP + 3 send quanta, bytes.
    fn inflight(&self, gain: f64) -> u64 {
        let Some(rtprop) = self.rtprop else {
            return self.init_cwnd; // no valid RTT sample yet
        };
        let bdp = self.btl_bw.get() * rtprop as f64 / SEC as f64;
        (gain * bdp) as u64 + 3 * self.send_quantum
    }

    /// BBRSaveCwnd (§4.2.3.4).
    fn save_cwnd(&self) -> u64 {
        if !self.in_loss_recovery() && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        }
    }

    fn enter_startup(&mut self) {
        // §4.3.2.1
        self.mode = Mode::Startup;
        self.pacing_gain = self.p.high_gain;
        self.cwnd_gain = self.p.high_gain;
    }

    fn enter_drain(&mut self) {
        // §4.3.3: drain the startup queue in about one round.
        self.mode = Mode::Drain;
        self.pacing_gain = 1.0 / self.p.high_gain;
        self.cwnd_gain = self.p.high_gain;
    }

    fn enter_probe_bw(&mut self, now: Ps) {
        // §4.3.4.3, with §4.3.4.2's random start phase: any but the 3/4 one.
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.p.cwnd_gain;
        self.cycle_index = PACING_GAIN_CYCLE.len() - 1 - (self.random() % 7) as usize;
        self.advance_cycle_phase(now);
    }

    fn enter_probe_rtt(&mut self) {
        // §4.3.5
        self.mode = Mode::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 1.0;
    }

    fn advance_cycle_phase(&mut self, now: Ps) {
        // §4.3.4.3 BBRAdvanceCyclePhase
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// xorshift64*: the random start phase of PROBE_BW.
    fn random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32
    }

    /// §3.5.2 BBRUpdateModelAndState.
    fn update_model_and_state(&mut self, a: &AckEvent, rs: &RateSample, lost: u64) {
        self.update_btl_bw(rs);
        // §4.3.4.3 BBRCheckCyclePhase
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(a.now, a.prior_flight(), lost) {
            self.advance_cycle_phase(a.now);
        }
        self.check_full_pipe(rs);
        self.check_drain(a.now, a.flight());
        self.update_rtprop(a.now, a.rtt);
        self.check_probe_rtt(a.now, a.flight());
    }

    /// §4.1.1.3 BBRUpdateRound and §4.1.1.5 BBRUpdateBtlBw.
    fn update_btl_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        if let Some(prior) = rs.prior_delivered {
            if prior >= self.next_round_delivered {
                self.next_round_delivered = self.delivered;
                self.round_count += 1;
                self.round_start = true;
            }
        }
        if let Some(rate) = rs.delivery_rate {
            // §4.1.1.4: application-limited samples count only when they raise the estimate.
            if rate >= self.btl_bw.get() || !rs.is_app_limited {
                let rounds = self.p.btl_bw_filter_rounds as u64;
                self.btl_bw.update(rounds, self.round_count, rate);
            }
        }
    }

    /// §4.3.4.3 BBRIsNextCyclePhase.
    fn is_next_cycle_phase(&self, now: Ps, prior_inflight: u64, lost: u64) -> bool {
        let is_full_length = now - self.cycle_stamp > self.rtprop.unwrap_or(0);
        if self.pacing_gain == 1.0 {
            is_full_length
        } else if self.pacing_gain > 1.0 {
            is_full_length && (lost > 0 || prior_inflight >= self.inflight(self.pacing_gain))
        } else {
            is_full_length || prior_inflight <= self.inflight(1.0)
        }
    }

    /// §4.3.2.2 BBRCheckFullPipe: three rounds without 25 % growth.
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled_pipe || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw = self.btl_bw.get();
        if bw >= self.full_bw * 1.25 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= 3 {
            self.filled_pipe = true;
        }
    }

    /// §4.3.3 BBRCheckDrain.
    fn check_drain(&mut self, now: Ps, flight: u64) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.enter_drain();
        }
        if self.mode == Mode::Drain && flight <= self.inflight(1.0) {
            self.enter_probe_bw(now); // the queue is drained
        }
    }

    /// §4.1.2.3 BBRUpdateRTprop.
    fn update_rtprop(&mut self, now: Ps, rtt: Option<Ps>) {
        self.rtprop_expired = now > self.rtprop_stamp + self.p.min_rtt_window.0;
        if let Some(r) = rtt {
            if self.rtprop.is_none_or(|m| r <= m) || self.rtprop_expired {
                self.rtprop = Some(r);
                self.rtprop_stamp = now;
            }
        }
    }

    /// §4.3.5 BBRCheckProbeRTT.
    fn check_probe_rtt(&mut self, now: Ps, flight: u64) {
        if self.mode != Mode::ProbeRtt && self.rtprop_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.prior_cwnd = self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.handle_probe_rtt(now, flight);
        }
        self.idle_restart = false;
    }

    /// §4.3.5 BBRHandleProbeRTT.
    fn handle_probe_rtt(&mut self, now: Ps, flight: u64) {
        // Ignore the low rate samples of ProbeRTT: the transport marks what it sends next.
        self.app_limited_mark = true;
        let min_pipe = self.p.min_pipe_cwnd as u64 * self.mss;
        match self.probe_rtt_done_stamp {
            None if flight <= min_pipe => {
                self.probe_rtt_done_stamp = Some(now + self.p.probe_rtt_duration.0);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.rtprop_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd); // BBRRestoreCwnd
                                                                // BBRExitProbeRTT
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.enter_startup();
                    }
                }
            }
            None => {}
        }
    }

    /// §3.5.2 BBRUpdateControlParameters.
    fn update_control_parameters(&mut self, delivered: u64, flight: u64, lost: u64) {
        // §4.2.1 BBRSetPacingRate: only upward until the pipe is full.
        let rate = self.pacing_gain * self.btl_bw.get();
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
        // §4.2.2 BBRSetSendQuantum (thresholds in bits per second), or one
        // segment, the transport's pacing unit (ns-3 tcp-bbr.cc SetSendQuantum).
        let bits = self.pacing_rate * 8.0;
        self.send_quantum = if self.p.send_quantum == SendQuantum::Segment || bits < 1.2e6 {
            self.mss
        } else if bits < 24e6 {
            2 * self.mss
        } else {
            ((self.pacing_rate * MS as f64 / SEC as f64) as u64).min(self.p.max_send_quantum.0)
        };
        self.set_cwnd(delivered, flight, lost);
    }

    /// §4.2.3.6 BBRSetCwnd, with §4.2.3.4's and §4.2.3.5's modulations.
    fn set_cwnd(&mut self, delivered: u64, flight: u64, lost: u64) {
        self.target_cwnd = self.inflight(self.cwnd_gain); // BBRUpdateTargetCwnd
                                                          // BBRModulateCwndForRecovery
        if lost > 0 {
            self.cwnd = self.cwnd.saturating_sub(lost).max(self.mss);
        }
        if self.packet_conservation {
            self.cwnd = self.cwnd.max(flight + delivered);
        } else {
            if self.filled_pipe {
                self.cwnd = (self.cwnd + delivered).min(self.target_cwnd);
            } else if self.cwnd < self.target_cwnd || self.delivered < self.init_cwnd {
                self.cwnd += delivered;
            }
            self.cwnd = self.cwnd.max(self.p.min_pipe_cwnd as u64 * self.mss);
        }
        // BBRModulateCwndForProbeRTT
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.p.min_pipe_cwnd as u64 * self.mss);
        }
    }

    /// Loss recovery bookkeeping (§4.2.3.4), after the model saw this ACK.
    fn track_recovery(&mut self, a: &AckEvent, in_recovery: bool, delivered: u64) {
        if in_recovery && !self.in_fast_recovery {
            // Upon entering fast recovery: save the window, keep what is in
            // flight plus what this ACK delivered, and conserve packets for a round.
            self.prior_cwnd = self.save_cwnd();
            self.cwnd = a.flight() + delivered.max(self.mss);
            self.packet_conservation = true;
            self.next_round_delivered = self.delivered; // the round starts now
        } else if self.packet_conservation && self.round_start {
            self.packet_conservation = false; // one round trip of recovery is over
        }
        let rto_done = self.rto_recovery_end.is_some_and(|end| a.snd_una >= end);
        if (!in_recovery && self.in_fast_recovery) || rto_done {
            // Exiting loss recovery: restore the last known good window.
            self.rto_recovery_end = None;
            self.packet_conservation = false;
            self.cwnd = self.cwnd.max(self.prior_cwnd); // BBRRestoreCwnd
        }
        self.in_fast_recovery = in_recovery;
    }
}

impl CongestionControl for Bbr {
    fn init(&mut self, w: &Window) {
        // §4.3.1 BBRInit
        let s = &mut *self.0;
        s.mss = w.mss;
        s.init_cwnd = w.cwnd;
        s.cwnd = w.cwnd;
        if let Some(rtt) = s.p.initial_rtt {
            // §4.2.1 BBRInitPacingRate: nominal bandwidth InitialCwnd / RTT.
            s.pacing_rate = s.pacing_gain * w.cwnd as f64 * SEC as f64 / rtt.0 as f64;
        }
    }

    /// BBR's growth is all in `after_ack`.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckEvent) {}

    /// Unused by BBR; keeps the transport's recovery arithmetic in range.
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: u64) -> u64 {
        w.cwnd.max(2 * w.mss)
    }

    fn on_timeout(&mut self, w: &mut Window, t: &TimeoutEvent) {
        // §4.2.3.4: upon RTO, save the window and restart from one packet.
        let s = &mut *self.0;
        s.prior_cwnd = s.save_cwnd();
        s.cwnd = w.mss;
        w.cwnd = w.mss;
        s.rto_recovery_end = Some(t.high_tx);
        s.packet_conservation = false;
        s.full_bw = 0.0; // as Linux: a pipe filled before the RTO is not evidence now
        s.full_bw_count = 0;
    }

    fn after_ack(
        &mut self,
        w: &mut Window,
        a: &AckEvent,
        rate: Option<&RateSample>,
        in_recovery: bool,
    ) {
        let s = &mut *self.0;
        if s.rng == 0 {
            // Seed the phase generator (splitmix64 of the first ACK's time).
            let mut z = a.now.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            s.rng = (z ^ (z >> 31)) | 1;
        }
        if s.pacing_rate == 0.0 && a.srtt > 0 {
            // §4.2.1 BBRInitPacingRate, at the first RTT sample.
            s.pacing_rate = s.pacing_gain * s.init_cwnd as f64 * SEC as f64 / a.srtt as f64;
        }
        let rs = rate.copied().unwrap_or_default();
        if rate.is_some() {
            s.delivered = rs.delivered_total;
        }
        // Bytes this ACK says left the network: newly acknowledged, or one
        // segment per duplicate ACK.
        let delivered = if a.acked > 0 { a.acked } else { s.mss };
        s.app_limited_mark = false;
        // Entering fast recovery: the segment being retransmitted is presumed lost.
        let lost = if in_recovery && !s.in_fast_recovery {
            s.mss
        } else {
            0
        };
        s.update_model_and_state(a, &rs, lost);
        s.track_recovery(a, in_recovery, delivered);
        s.update_control_parameters(delivered, a.flight(), lost);
        w.cwnd = s.cwnd;
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<f64> {
        (self.0.pacing_rate > 0.0).then_some(self.0.pacing_rate)
    }

    fn mark_app_limited(&self) -> bool {
        self.0.app_limited_mark
    }

    fn on_transmit(&mut self, _now: Ps, flight: u64, app_limited: bool) {
        // §4.3.4.4 BBRHandleRestartFromIdle
        let s = &mut *self.0;
        if flight == 0 && app_limited {
            s.idle_restart = true;
            if s.mode == Mode::ProbeBw {
                s.pacing_rate = s.btl_bw.get(); // BBRSetPacingRateWithGain(1)
            }
        }
    }

    fn trace_value(&self) -> Option<f64> {
        let s = &*self.0;
        Some(match s.p.trace {
            Trace::BtlBw => s.btl_bw.get() * 8.0,
            Trace::MinRtt => s.rtprop.map_or(0.0, |r| r as f64 / SEC as f64),
            Trace::PacingRate => s.pacing_rate * 8.0,
            Trace::PacingGain => s.pacing_gain,
            Trace::State => s.mode as u8 as f64,
        })
    }
}

#[cfg(test)]
mod tests;
