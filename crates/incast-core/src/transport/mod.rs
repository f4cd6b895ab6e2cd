//! A reliable byte-stream transport (TCP-like), sender and receiver.
//!
//! The flow is a state machine with no knowledge of the engine: the simulation
//! asks it for the next segment when the host NIC is free, hands it ACKs and
//! data, and schedules the timers it asks for. That keeps every rule testable
//! with scripted packet sequences.
//!
//! Sender (RFC 5681, RFC 6582, RFC 6298):
//! * segments of at most `mss` payload bytes on fixed boundaries, sent while
//!   the bytes in flight plus the segment fit in `cwnd` (at least one segment
//!   is always allowed when nothing is in flight);
//! * cumulative ACKs; three duplicate ACKs trigger fast retransmit and NewReno
//!   fast recovery with partial-ACK retransmission (RFC 6582 §3.2);
//! * RTT from the timestamp the receiver echoes (RFC 7323 style, so samples
//!   from retransmissions are valid), SRTT/RTTVAR per RFC 6298 §2, RTO with a
//!   configurable floor and exponential backoff (§5.5); on timeout the sender
//!   goes back to `snd_una` with `cwnd = 1 MSS` (§5.4, RFC 5681 §3.1).
//!
//! Pacing (for algorithms that return a [`cc::CongestionControl::pacing_rate`],
//! i.e. BBR): the flow keeps the earliest time its next segment may leave,
//! `next_send_at = send time + payload / rate` (the draft BBR's
//! `next_send_time`, §4.2.1). The NIC asks [`TcpFlow::send_state`]: `Ready`,
//! `WaitUntil(t)` (arm a wake-up at `t` and ask again), or `Blocked` (an ACK
//! or a timeout will make the flow sendable); [`TcpFlow::next_segment_at`]
//! hands out nothing before `next_send_at`. Algorithms that do not pace see
//! `Ready` whenever the window allows, exactly as before.
//!
//! Receiver: cumulative ACKs with out-of-order buffering, an immediate ACK for
//! out-of-order data or data that fills a gap (RFC 5681 §4.2), optional
//! delayed ACKs (every `m` segments or a timeout), and ECN-Echo that mirrors
//! CE exactly, including DCTCP's rule for delayed ACKs (RFC 8257 §3.2: when
//! CE changes while an ACK is being delayed, first ACK the data received so
//! far with the old ECE value).

pub mod cc;
pub mod entropy;
pub mod eqds;
pub mod eqds_pacer;
pub mod ndp;
pub mod prr;
pub mod rack;
pub mod rate_sample;
pub mod sack;
pub mod sack_rack;
pub mod sack_recovery;
pub mod scoreboard;

use crate::engine::LazyTimer;
use crate::units::{Ps, MS, SEC};
use cc::{AckEvent, AnyCc, CongestionControl, TimeoutEvent, Window};
use rate_sample::DeliveryRate;
pub use sack_recovery::Recovery;
use sack_recovery::SackState;

/// Transport parameters shared by the flows of a scenario.
#[derive(Clone, Debug)]
pub struct TcpParams {
    /// Payload bytes per full segment.
    pub mss: u64,
    /// Header bytes added to every data packet on the wire.
    pub header: u32,
    /// Size of an ACK on the wire.
    pub ack_size: u32,
    /// Initial window, in segments.
    pub init_cwnd: u64,
    pub rto_min: Ps,
    pub rto_initial: Ps,
    pub rto_max: Ps,
    pub dupack_threshold: u32,
    /// Delayed ACKs: (segments per ACK, timeout); `None` ACKs every segment.
    pub delayed_ack: Option<(u32, Ps)>,
    /// Loss recovery: NewReno (cumulative ACKs), SACK ([`sack_recovery`]) or
    /// SACK with RACK-TLP ([`sack_rack`]).
    /// `TcpParams::default()` keeps NewReno: it is the unit tests' and the
    /// dumbbell harness's machine, which feed cumulative ACKs only; scenarios
    /// default to SACK with RACK-TLP ([`crate::scenario::config::TransportConfig`]).
    pub recovery: Recovery,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            mss: 1460,
            header: 40,
            ack_size: 64,
            init_cwnd: 10,
            rto_min: 10 * MS,
            rto_initial: 10 * MS,
            rto_max: 60 * SEC,
            dupack_threshold: 3,
            delayed_ack: None,
            recovery: Recovery::Newreno,
        }
    }
}

/// The time one segment of `len` payload bytes takes at pacing `rate` (payload
/// bytes per second), rounded up; a second when the rate is 0.
fn pacing_gap(len: u64, rate: f64) -> Ps {
    let gap = (len as f64 * SEC as f64 / rate).ceil();
    if gap.is_finite() {
        gap as Ps
    } else {
        SEC
    }
}

/// RFC 6298 round-trip estimator.
#[derive(Clone, Copy, Debug, Default)]
pub struct RttEstimator {
    pub srtt: Option<Ps>,
    pub rttvar: Ps,
    /// Current RTO before backoff.
    pub rto: Ps,
    pub backoff: u32,
}

impl RttEstimator {
    fn new(initial: Ps) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial,
            backoff: 0,
        }
    }
    /// RFC 6298 §2.2-2.3, with clock granularity G = 0 (the simulator's clock is exact).
    fn sample(&mut self, r: Ps, params: &TcpParams) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
        self.rto = (self.srtt.unwrap() + 4 * self.rttvar).clamp(params.rto_min, params.rto_max);
        self.backoff = 0;
    }
    /// RTO including exponential backoff (RFC 6298 §5.5), capped at `rto_max`.
    pub fn current(&self, params: &TcpParams) -> Ps {
        self.rto
            .saturating_mul(1u64 << self.backoff.min(40))
            .min(params.rto_max)
    }
}

/// A segment the sender wants transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
}

/// An ACK the receiver wants transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckOut {
    pub ack: u64,
    pub ece: bool,
    /// Echoed sender timestamp.
    pub ts: Ps,
    /// One-way delay of the data packet whose timestamp is echoed (edge pausing).
    pub owd: i64,
}

/// What a receiver echoes about a data packet: its sender timestamp (for RTT
/// samples) and its one-way delay as the clocks read it (edge pausing; 0 without).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    pub ts: Ps,
    pub owd: i64,
}

impl Echo {
    /// A timestamp echo without a one-way delay.
    pub fn at(ts: Ps) -> Echo {
        Echo { ts, owd: 0 }
    }
}

/// What the receiver wants done after a data segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvOutcome {
    /// Up to two ACKs to send now, in order.
    pub acks: [Option<AckOut>; 2],
    /// Arm the delayed-ACK timer at this time.
    pub arm_delack: Option<Ps>,
}

/// Whether a sender may transmit now (what the NIC asks before pulling a segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// A segment may leave now.
    Ready,
    /// Paced: the next segment may leave at this time (arm a wake-up).
    WaitUntil(Ps),
    /// Nothing to send until an ACK or a timeout (window full or all sent).
    Blocked,
}

/// What the sender wants done after an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckResult {
    /// New data was acknowledged.
    pub advanced: bool,
    /// Every byte of the flow is acknowledged.
    pub completed: bool,
    /// The flow may now have something to send.
    pub may_send: bool,
    /// Restart the retransmission timer (RFC 6298 §5.3): on every ACK of
    /// new data except a partial ACK of fast recovery after its first one
    /// (RFC 6582 §3.2 step 3 and §4, the Impatient variant).
    pub restart_rto: bool,
}

/// One transport flow: both its sender and its receiver state.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub size: u64,
    // --- sender ---
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence number ever sent (one past the last byte).
    pub high_tx: u64,
    pub win: Window,
    pub cc: AnyCc,
    pub dupacks: u32,
    pub in_recovery: bool,
    pub recover: u64,
    /// This fast recovery has had a partial ACK (RFC 6582 §4: only the first restarts the RTO).
    partial_acked: bool,
    /// A segment to retransmit before any new data.
    pub retx_next: Option<u64>,
    pub rtt: RttEstimator,
    pub rto_timer: LazyTimer,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Receiver: data segments that arrived marked CE.
    pub ce_marks: u32,
    /// Pacing: the earliest time the next segment may leave (0: any time).
    pub next_send_at: Ps,
    /// When the last segment was taken for the wire (htsim's
    /// `STrackPacer::_last_send`, [`CongestionControl::pacer_follows_window`]).
    pub last_send_at: Ps,
    /// The NIC's wake-up for `next_send_at` (armed by the NIC, like `rto_timer`).
    pub pace_timer: LazyTimer,
    /// Per-segment delivery state, when the congestion control wants rate samples.
    rate: Option<Box<DeliveryRate>>,
    /// SACK blocks and scoreboard, with `recovery = "sack"` or `"sack_rack"`
    /// ([`sack_recovery`], [`sack_rack`]).
    sack: Option<Box<SackState>>,
    /// The latest time the flow was told (ACK or data): the send time
    /// [`TcpFlow::next_segment`] records, which is not told the time.
    clock: Ps,
    // --- receiver ---
    pub rcv_nxt: u64,
    /// Out-of-order byte ranges held by the receiver, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    ce_state: bool,
    delack_count: u32,
    delack_ts: Ps,
    delack_owd: i64,
    pub delack_timer: LazyTimer,
}

impl TcpFlow {
    pub fn new(size: u64, mut cc: AnyCc, params: &TcpParams) -> TcpFlow {
        let win = Window::new(params.init_cwnd, params.mss);
        cc.init(&win);
        let rate = cc
            .wants_rate_samples()
            .then(|| Box::new(DeliveryRate::new()));
        TcpFlow {
            size,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            win,
            cc,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            partial_acked: false,
            retx_next: None,
            rtt: RttEstimator::new(params.rto_initial),
            rto_timer: LazyTimer::default(),
            retransmits: 0,
            ce_marks: 0,
            timeouts: 0,
            next_send_at: 0,
            last_send_at: 0,
            pace_timer: LazyTimer::default(),
            rate,
            sack: params
                .recovery
                .uses_sack()
                .then(|| Box::new(SackState::new(params.recovery, params.mss))),
            clock: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ce_state: false,
            delack_count: 0,
            delack_ts: 0,
            delack_owd: 0,
            delack_timer: LazyTimer::default(),
        }
    }

    /// The sender has finished, and its slot stays (node order): the
    /// sender's SACK scoreboard and RACK segments give their memory back
    /// (their capacity grew with the flow's largest flight: about 1.6 KB a
    /// flow of WebSearch). Nothing it holds changes.
    pub fn sender_finished(&mut self) {
        if let Some(sack) = &mut self.sack {
            sack.shrink_sender();
        }
    }

    /// The bytes the sender's SACK scoreboard and RACK segments hold.
    #[cfg(test)]
    pub fn sender_heap_bytes(&self) -> usize {
        self.sack.as_deref().map_or(0, |sack| {
            let rack = sack.rack.as_ref().map_or(0, |r| r.rack.heap_bytes());
            sack.board.heap_bytes() + rack
        })
    }

    /// A copy without the state that grows with a flow (SACK, delivery-rate
    /// samples, out-of-order ranges): what a node-ordered flow table keeps in
    /// a slot no flow of its own uses, which nothing reads.
    pub fn vacant_copy(&mut self) -> TcpFlow {
        let grown = (
            self.sack.take(),
            self.rate.take(),
            std::mem::take(&mut self.ooo),
        );
        let copy = self.clone();
        (self.sack, self.rate, self.ooo) = grown;
        copy
    }

    fn seg_len(&self, seq: u64, mss: u64) -> u32 {
        (self.size - seq).min(mss) as u32
    }

    /// Whether the sender may transmit a segment now.
    #[inline(always)]
    pub fn can_send(&self, params: &TcpParams) -> bool {
        if self.sack.is_some() {
            return self.can_send_sack(params);
        }
        if self.retx_next.is_some() {
            return true;
        }
        if self.snd_nxt >= self.size {
            return false;
        }
        let flight = self.snd_nxt - self.snd_una;
        flight == 0 || flight + self.seg_len(self.snd_nxt, params.mss) as u64 <= self.win.cwnd
    }

    /// Whether the flow samples the delivery rate (model-based congestion
    /// control such as BBR): the NIC then takes segments with
    /// [`TcpFlow::next_segment_at`].
    #[inline(always)]
    pub fn samples_rate(&self) -> bool {
        self.rate.is_some()
    }

    /// Whether a segment may leave at `now`: the window ([`TcpFlow::can_send`])
    /// and, when the congestion control paces, `next_send_at`.
    #[inline]
    pub fn send_state(&self, now: Ps, params: &TcpParams) -> SendState {
        if !self.can_send(params) {
            SendState::Blocked
        } else if now < self.next_send_at && self.cc.pacing_rate().is_some() {
            SendState::WaitUntil(self.next_send_at)
        } else {
            SendState::Ready
        }
    }

    /// Takes the segment to transmit at `now` (retransmission first), if the
    /// window and the pacing allow one. This is the NIC's entry point.
    pub fn next_segment_at(&mut self, now: Ps, params: &TcpParams) -> Option<Segment> {
        let pacing = self.cc.pacing_rate();
        if pacing.is_some() && now < self.next_send_at {
            return None; // paced, retransmissions included
        }
        let flight = self.snd_nxt - self.snd_una;
        let seg = self.take_segment(now, params)?;
        self.last_send_at = now;
        if let Some(rate) = pacing {
            // draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.1:
            // next_send_time = Now() + packet.size / pacing_rate (payload bytes,
            // the unit the delivery rate is measured in).
            self.next_send_at = now + pacing_gap(seg.len as u64, rate);
        }
        if self.rate.is_some() {
            self.record_send(now, &seg, flight, params);
        }
        Some(seg)
    }

    /// Takes the next segment without pacing, recording the latest time the
    /// flow was told as its send time. For algorithms that neither pace nor
    /// sample the delivery rate this is [`TcpFlow::next_segment_at`]; the
    /// others (BBR) need the NIC to call `next_segment_at`.
    pub fn next_segment(&mut self, params: &TcpParams) -> Option<Segment> {
        let flight = self.snd_nxt - self.snd_una;
        let seg = self.take_segment(self.clock, params)?;
        self.last_send_at = self.clock;
        if self.rate.is_some() {
            let now = self.clock;
            self.record_send(now, &seg, flight, params);
        }
        Some(seg)
    }

    /// The segment to transmit at `now`, without pacing.
    fn take_segment(&mut self, now: Ps, params: &TcpParams) -> Option<Segment> {
        if self.sack.is_some() {
            return self.take_segment_sack(now, params);
        }
        if let Some(seq) = self.retx_next.take() {
            if seq >= self.snd_una && seq < self.size {
                self.retransmits += 1;
                return Some(Segment {
                    seq,
                    len: self.seg_len(seq, params.mss),
                    retx: true,
                });
            }
        }
        if !self.can_send(params) {
            return None;
        }
        let seq = self.snd_nxt;
        let len = self.seg_len(seq, params.mss);
        let retx = seq < self.high_tx;
        if retx {
            self.retransmits += 1;
        }
        self.snd_nxt += len as u64;
        self.high_tx = self.high_tx.max(self.snd_nxt);
        Some(Segment { seq, len, retx })
    }

    /// Delivery-rate bookkeeping of a segment leaving at `now` with `flight`
    /// bytes (by sequence space) in flight before it
    /// (draft-cheng-iccrg-delivery-rate-estimation §3.2 and §3.4).
    fn record_send(&mut self, now: Ps, seg: &Segment, flight: u64, params: &TcpParams) {
        let flight_after = self.snd_nxt - self.snd_una;
        let rate = self.rate.as_deref_mut().expect("rate sampler");
        // §3.4: no unsent data behind this segment, nothing to repair, and
        // room in the window: the sender is application-limited.
        if self.snd_nxt >= self.size && self.retx_next.is_none() && flight_after < self.win.cwnd {
            rate.mark_app_limited(flight_after);
        }
        let app_limited = rate.is_app_limited();
        rate.on_send(now, seg.seq, seg.len, params.mss, flight);
        self.cc.on_transmit(now, flight, app_limited);
    }

    /// Processes a cumulative ACK at the sender (NewReno recovery; a flow
    /// with SACK takes its ACKs with [`TcpFlow::on_ack_sack`]).
    pub fn on_ack(
        &mut self,
        now: Ps,
        ack: u64,
        ece: bool,
        echo_ts: Ps,
        params: &TcpParams,
    ) -> AckResult {
        debug_assert!(self.sack.is_none(), "a SACK flow's ACK without its blocks");
        let mut res = AckResult::default();
        self.clock = now;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una; // after a go-back, the receiver already had this data
            }
            self.dupacks = 0;
            self.rtt.sample(now - echo_ts, params);
            res.advanced = true;
            res.restart_rto = true;
            let rate = self
                .rate
                .as_deref_mut()
                .map(|r| r.on_ack(now, ack, params.mss, Some(now - echo_ts)));
            let ev = AckEvent {
                now,
                acked,
                ece,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                rtt: Some(now - echo_ts),
                in_recovery: self.in_recovery,
                srtt: self.rtt.srtt.unwrap_or(0),
                delay: now.saturating_sub(echo_ts),
            };
            let hold = self.cc.on_ack_any(&mut self.win, &ev);
            if self.in_recovery {
                if ack >= self.recover {
                    // RFC 6582 §3.2 step 3, full ACK: deflate the window to ssthresh.
                    self.in_recovery = false;
                    self.win.cwnd = self.win.ssthresh.max(params.mss);
                } else {
                    // RFC 6582 §3.2 step 3, partial ACK: retransmit the next hole and deflate;
                    // "for the first partial ACK ... also reset the retransmit timer", and only
                    // for the first (§4, the Impatient variant, as ns-3's TcpSocketBase): one
                    // hole repaired per RTT would otherwise hold off the RTO for as many RTTs
                    // as the window lost segments, while every duplicate ACK inflates the window
                    // with new data the receiver can only buffer (issue 43: a window of 180
                    // alternate losses from 40 Gb/s senders held goodput near zero for 110 ms).
                    res.restart_rto = !self.partial_acked;
                    self.partial_acked = true;
                    self.retx_next = Some(self.snd_una);
                    self.win.cwnd = self.win.cwnd.saturating_sub(acked);
                    if acked >= params.mss {
                        self.win.cwnd += params.mss;
                    }
                    self.win.cwnd = self.win.cwnd.max(params.mss);
                }
            } else if !hold {
                self.cc.on_ack(&mut self.win, &ev);
            }
            self.after_ack(&ev, rate.as_ref());
            if self.snd_una >= self.size {
                res.completed = true;
                self.rto_timer.disarm();
            }
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            // A duplicate ACK.
            self.dupacks += 1;
            let ev = self.ack_of_nothing_new(now, ece, echo_ts);
            self.cc.on_ack_any(&mut self.win, &ev);
            if !self.in_recovery
                && self.dupacks == params.dupack_threshold
                && self.snd_una >= self.recover
            {
                // RFC 6582 §3.2 steps 1-2: fast retransmit, enter fast recovery.
                let flight = self.snd_nxt - self.snd_una;
                self.win.ssthresh = self.cc.ssthresh_on_loss(&self.win, flight);
                self.win.cwnd = self.win.ssthresh + 3 * params.mss;
                self.recover = self.snd_nxt;
                self.in_recovery = true;
                self.partial_acked = false;
                self.retx_next = Some(self.snd_una);
            } else if self.in_recovery {
                // RFC 6582 §3.2 step 4: inflate for each further duplicate.
                self.win.cwnd += params.mss;
            }
            self.after_ack(&ev, None);
        } else if ack == self.snd_una && self.cc.sees_acks_with_nothing_in_flight() {
            // Nothing in flight (say the ACK of a spurious retransmission): no
            // duplicate ACK, but the window law still takes it (STrack).
            let ev = self.ack_of_nothing_new(now, ece, echo_ts);
            self.cc.on_ack_any(&mut self.win, &ev);
            self.after_ack(&ev, None);
        }
        res.may_send = self.can_send(params);
        res
    }

    /// The congestion control's view of a cumulative ACK at `snd_una` (a
    /// duplicate, or one with nothing in flight), echoing `echo_ts`.
    #[inline]
    fn ack_of_nothing_new(&self, now: Ps, ece: bool, echo_ts: Ps) -> AckEvent {
        AckEvent {
            now,
            acked: 0,
            ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt: None,
            in_recovery: self.in_recovery,
            srtt: self.rtt.srtt.unwrap_or(0),
            delay: now.saturating_sub(echo_ts),
        }
    }

    /// The congestion control's last word on an ACK, and BBR's ProbeRTT
    /// marking of what is sent next as application-limited.
    #[inline]
    fn after_ack(&mut self, ev: &AckEvent, rate: Option<&rate_sample::RateSample>) {
        self.cc.after_ack(&mut self.win, ev, rate, self.in_recovery);
        // Only a pacer that follows the window (STrack) is asked for its rate
        // here; the other congestion controls' pacing is read where they send.
        if self.cc.pacer_follows_window() {
            match self.cc.pacing_rate() {
                None if self.next_send_at != 0 => {
                    // Back in window mode: the paced send still pending is dropped (STrack).
                    self.next_send_at = 0;
                    self.pace_timer.disarm();
                }
                Some(rate) if self.next_send_at == 0 => {
                    // Into pacing mode with no paced send pending (STrack): the first
                    // paced segment may leave one gap, at this ACK's rate, after the
                    // last segment sent (htsim's STrackPacer::schedule_send).
                    self.next_send_at = self.last_send_at + pacing_gap(self.win.mss, rate);
                }
                _ => {}
            }
        }
        if let Some(r) = self.rate.as_deref_mut() {
            if self.cc.mark_app_limited() {
                r.mark_app_limited(self.snd_nxt - self.snd_una);
            }
        }
    }

    /// The retransmission timer expired, at the latest time the flow was
    /// told ([`TcpFlow::on_timeout_at`] with that time).
    pub fn on_timeout(&mut self, params: &TcpParams) {
        self.on_timeout_at(self.clock, params);
    }

    /// The retransmission timer expired at `now` (RFC 6298 §5.4-5.6, RFC 5681 §3.1 eq. 4).
    pub fn on_timeout_at(&mut self, now: Ps, params: &TcpParams) {
        self.timeouts += 1;
        let flight = self.snd_nxt - self.snd_una - self.sacked_in_flight();
        let prior_cwnd = self.win.cwnd;
        self.win.ssthresh = (flight / 2).max(2 * params.mss);
        self.win.cwnd = params.mss;
        self.win.ca_acked = 0;
        let t = TimeoutEvent {
            now,
            flight,
            prior_cwnd,
            high_tx: self.high_tx,
        };
        self.cc.on_timeout(&mut self.win, &t);
        self.rtt.backoff += 1;
        self.in_recovery = false;
        self.dupacks = 0;
        // RFC 6582 §3.2 step 1 note: after a timeout, no fast retransmit for data sent before it.
        self.recover = self.high_tx;
        self.retx_next = None;
        self.snd_nxt = self.snd_una;
        self.sack_on_timeout();
    }

    /// The application stops offering data (the flow's `stop`): the flow's
    /// size becomes the bytes its receiver has in order, so nothing new is
    /// sent and nothing pending is retransmitted. That size is what the flow
    /// delivered (at least `snd_una`: every ACK reports what the receiver had).
    pub fn stop_offering(&mut self) {
        self.stop_offering_at(self.rcv_nxt);
    }

    /// [`TcpFlow::stop_offering`] as a sender that knows only what was
    /// acknowledged: the size becomes `snd_una` (node order, where the two
    /// ends live apart).
    pub fn stop_offering_acked(&mut self) {
        self.stop_offering_at(self.snd_una);
    }

    fn stop_offering_at(&mut self, size: u64) {
        self.size = size;
        self.retx_next = None;
    }

    /// Data not yet acknowledged is outstanding.
    pub fn outstanding(&self) -> bool {
        self.snd_nxt > self.snd_una
    }

    /// Processes a data segment at the receiver.
    pub fn on_data(
        &mut self,
        now: Ps,
        seq: u64,
        len: u32,
        ce: bool,
        echo: Echo,
        params: &TcpParams,
    ) -> RecvOutcome {
        let Echo { ts, owd } = echo;
        self.clock = now;
        let mut out = RecvOutcome::default();
        let mut n = 0;
        // RFC 8257 §3.2: CE changed while an ACK is delayed: ACK what we have, with the old ECE.
        if params.delayed_ack.is_some() && ce != self.ce_state && self.delack_count > 0 {
            out.acks[n] = Some(AckOut {
                ack: self.rcv_nxt,
                ece: self.ce_state,
                ts: self.delack_ts,
                owd: self.delack_owd,
            });
            self.sack_report(0, None);
            n += 1;
            self.delack_count = 0;
            self.delack_timer.disarm();
        }
        self.ce_state = ce;
        let end = seq + len as u64;
        let had_gap = !self.ooo.is_empty();
        let in_order = seq <= self.rcv_nxt && end > self.rcv_nxt;
        if in_order {
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
        } else if seq > self.rcv_nxt {
            self.insert_ooo(seq, end);
        }
        let immediate = !in_order || had_gap || !self.ooo.is_empty();
        // RFC 2018 §4: the first block holds the segment that triggered the
        // ACK, unless it advanced the cumulative ACK.
        let trigger = (seq > self.rcv_nxt).then_some((seq, end));
        match params.delayed_ack {
            Some((m, timeout)) if !immediate => {
                self.delack_count += 1;
                self.delack_ts = ts;
                self.delack_owd = owd;
                if self.delack_count >= m {
                    self.delack_count = 0;
                    self.delack_timer.disarm();
                    self.sack_report(n, trigger);
                    out.acks[n] = Some(AckOut {
                        ack: self.rcv_nxt,
                        ece: self.ce_state,
                        ts,
                        owd,
                    });
                } else if !self.delack_timer.is_armed() {
                    out.arm_delack = Some(now + timeout);
                }
            }
            _ => {
                self.delack_count = 0;
                self.delack_timer.disarm();
                self.sack_report(n, trigger);
                out.acks[n] = Some(AckOut {
                    ack: self.rcv_nxt,
                    ece: self.ce_state,
                    ts,
                    owd,
                });
            }
        }
        out
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timeout(&mut self) -> Option<AckOut> {
        if self.delack_count == 0 {
            return None;
        }
        self.delack_count = 0;
        self.sack_report(0, None);
        Some(AckOut {
            ack: self.rcv_nxt,
            ece: self.ce_state,
            ts: self.delack_ts,
            owd: self.delack_owd,
        })
    }

    fn insert_ooo(&mut self, s: u64, e: u64) {
        let i = self.ooo.partition_point(|&(_, e0)| e0 < s);
        let mut ns = s;
        let mut ne = e;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= ne {
            ns = ns.min(self.ooo[j].0);
            ne = ne.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once((ns, ne)));
    }
}

/// What the transport's unit tests share: 1000-byte segments, 40-byte
/// headers and a NewReno flow.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::cc::CcConfig;
    use super::{TcpFlow, TcpParams};

    /// Test parameters with initial window `init_cwnd` (other fields default).
    pub(crate) fn params(init_cwnd: u64) -> TcpParams {
        TcpParams {
            mss: 1000,
            header: 40,
            init_cwnd,
            ..Default::default()
        }
    }

    /// A NewReno flow of `size` bytes with parameters `params`.
    pub(crate) fn newreno_flow(size: u64, params: &TcpParams) -> TcpFlow {
        TcpFlow::new(size, CcConfig::by_name("newreno").unwrap().build(), params)
    }
}

#[cfg(test)]
mod tests {
    use super::cc::CcConfig;
    use super::*;
    use crate::units::US;

    fn params() -> TcpParams {
        fixtures::params(4)
    }

    fn flow(size: u64) -> TcpFlow {
        fixtures::newreno_flow(size, &params())
    }

    #[test]
    fn sends_initial_window_then_waits() {
        let p = params();
        let mut f = flow(10_000);
        let segs: Vec<_> = std::iter::from_fn(|| f.next_segment(&p)).collect();
        assert_eq!(segs.len(), 4);
        assert_eq!(
            segs[3],
            Segment {
                seq: 3000,
                len: 1000,
                retx: false
            }
        );
        let r = f.on_ack(10 * US, 1000, false, 0, &p);
        assert!(r.advanced && r.may_send && !r.completed);
        // slow start: +1000 per ACK -> cwnd 5000, flight 3000 -> two more segments
        assert_eq!(std::iter::from_fn(|| f.next_segment(&p)).count(), 2);
    }

    #[test]
    fn three_dupacks_fast_retransmit_and_newreno_recovery() {
        let p = params();
        let mut f = flow(20_000);
        f.win.cwnd = 8000;
        while f.next_segment(&p).is_some() {}
        assert_eq!(f.snd_nxt, 8000);
        // segment 0 lost: receiver sends dupacks for 0
        f.on_ack(1, 0, false, 0, &p); // dupack 1 (ack == snd_una with data outstanding)
        f.on_ack(1, 0, false, 0, &p);
        assert!(!f.in_recovery);
        f.on_ack(1, 0, false, 0, &p);
        assert!(f.in_recovery);
        assert_eq!(f.win.ssthresh, 4000); // flight 8000 / 2
        assert_eq!(f.win.cwnd, 7000); // ssthresh + 3 MSS
        assert_eq!(
            f.next_segment(&p),
            Some(Segment {
                seq: 0,
                len: 1000,
                retx: true
            })
        );
        // partial ACK up to 3000 (segment 3 was lost too): retransmit 3000
        f.on_ack(2, 3000, false, 1, &p);
        assert!(f.in_recovery);
        assert_eq!(
            f.next_segment(&p),
            Some(Segment {
                seq: 3000,
                len: 1000,
                retx: true
            })
        );
        // full ACK: exit recovery with cwnd = ssthresh
        f.on_ack(3, 8000, false, 2, &p);
        assert!(!f.in_recovery);
        assert_eq!(f.win.cwnd, 4000);
        assert_eq!(f.retransmits, 2);
    }

    /// RFC 6582 §4, the Impatient variant: in one fast recovery only the
    /// first partial ACK restarts the retransmission timer; ordinary and
    /// full ACKs always do, and the next recovery's first partial ACK again.
    #[test]
    fn only_the_first_partial_ack_of_a_recovery_restarts_the_rto() {
        let p = params();
        let mut f = flow(40_000);
        f.win.cwnd = 8000;
        while f.next_segment(&p).is_some() {}
        assert!(f.on_ack(1, 1000, false, 0, &p).restart_rto, "a new ACK");
        // Segments 1000, 3000 and 5000 lost.
        for _ in 0..3 {
            assert!(!f.on_ack(2, 1000, false, 0, &p).restart_rto);
        }
        assert!(f.in_recovery);
        let first = f.on_ack(3, 3000, false, 1, &p);
        assert!(first.advanced && first.restart_rto, "first partial ACK");
        let second = f.on_ack(4, 5000, false, 2, &p);
        assert!(f.in_recovery && second.advanced);
        assert!(!second.restart_rto, "a later partial ACK keeps the timer");
        let full = f.on_ack(5, f.recover, false, 3, &p);
        assert!(!f.in_recovery && full.restart_rto, "the full ACK");
        // A second recovery: its first partial ACK restarts the timer again.
        while f.next_segment(&p).is_some() {}
        let una = f.snd_una;
        for _ in 0..3 {
            f.on_ack(6, una, false, 4, &p);
        }
        assert!(f.in_recovery);
        assert!(f.on_ack(7, una + 1000, false, 5, &p).restart_rto);
    }

    #[test]
    fn timeout_goes_back_with_one_segment_and_backs_off() {
        let p = params();
        let mut f = flow(10_000);
        while f.next_segment(&p).is_some() {}
        f.on_ack(100 * US, 1000, false, 0, &p); // srtt = 100us; rto = max(rto_min, ...)
        assert_eq!(f.rtt.current(&p), p.rto_min);
        f.on_timeout(&p);
        assert_eq!(f.win.cwnd, 1000);
        assert_eq!(f.snd_nxt, 1000);
        assert_eq!(f.rtt.current(&p), 2 * p.rto_min);
        assert_eq!(
            f.next_segment(&p),
            Some(Segment {
                seq: 1000,
                len: 1000,
                retx: true
            })
        );
        assert_eq!(f.next_segment(&p), None);
    }

    #[test]
    fn receiver_buffers_out_of_order_and_acks_immediately() {
        let p = params();
        let mut f = flow(5000);
        let a = f.on_data(0, 0, 1000, false, Echo::at(7), &p);
        assert_eq!(
            a.acks[0],
            Some(AckOut {
                ack: 1000,
                ece: false,
                ts: 7,
                owd: 0
            })
        );
        let a = f.on_data(0, 2000, 1000, false, Echo::at(8), &p);
        assert_eq!(a.acks[0].unwrap().ack, 1000); // dup ack
        let a = f.on_data(0, 4000, 1000, false, Echo::at(9), &p);
        assert_eq!(a.acks[0].unwrap().ack, 1000);
        let a = f.on_data(0, 1000, 1000, false, Echo::at(10), &p);
        assert_eq!(a.acks[0].unwrap().ack, 3000); // filled the first gap
        let a = f.on_data(0, 3000, 1000, true, Echo::at(11), &p);
        assert_eq!(
            a.acks[0],
            Some(AckOut {
                ack: 5000,
                ece: true,
                ts: 11,
                owd: 0
            })
        );
    }

    #[test]
    fn delayed_ack_with_dctcp_ce_transition() {
        let p = TcpParams {
            delayed_ack: Some((2, 500 * US)),
            ..params()
        };
        let mut f = flow(10_000);
        let a = f.on_data(0, 0, 1000, false, Echo::at(1), &p);
        assert_eq!(a.acks, [None, None]);
        assert_eq!(a.arm_delack, Some(500 * US));
        // CE flips while one segment is pending: ACK 1000 with ECE=0 first, then count this one.
        let a = f.on_data(1, 1000, 1000, true, Echo::at(2), &p);
        assert_eq!(
            a.acks[0],
            Some(AckOut {
                ack: 1000,
                ece: false,
                ts: 1,
                owd: 0
            })
        );
        assert_eq!(a.acks[1], None);
        let a = f.on_data(2, 2000, 1000, true, Echo::at(3), &p);
        assert_eq!(
            a.acks[0],
            Some(AckOut {
                ack: 3000,
                ece: true,
                ts: 3,
                owd: 0
            })
        );
    }

    fn flow_with(size: u64, cc: &str) -> TcpFlow {
        let cfg: CcConfig = toml::from_str(cc).unwrap();
        TcpFlow::new(size, cfg.build(), &params())
    }

    #[test]
    fn unpaced_algorithms_send_whenever_the_window_allows() {
        let p = params();
        for name in ["newreno", "dctcp", "cubic"] {
            let mut a = flow_with(10_000, &format!("algorithm = \"{name}\""));
            let mut b = a.clone();
            assert_eq!(a.send_state(0, &p), SendState::Ready);
            let sa: Vec<_> = std::iter::from_fn(|| a.next_segment(&p)).collect();
            let sb: Vec<_> = std::iter::from_fn(|| b.next_segment_at(5, &p)).collect();
            assert_eq!(sa, sb, "{name}");
            assert_eq!(a.send_state(0, &p), SendState::Blocked);
            assert_eq!(a.next_send_at, 0);
        }
    }

    #[test]
    fn paced_flow_waits_for_its_next_send_time() {
        let p = params();
        // BBR with an initial RTT of 10 us: 2.885 x 4 KB / 10 us = 1.154e9 B/s,
        // so a 1000-byte segment may leave every 866.434 ns (rounded up to the ps).
        let mut f = flow_with(10_000, "algorithm = \"bbr\"\ninitial_rtt = \"10us\"");
        let rate = f.cc.pacing_rate().unwrap();
        assert!((rate - 2.0 / std::f64::consts::LN_2 * 4000.0 / 1e-5).abs() < 1.0);
        let gap = (1000.0 * 1e12 / rate).ceil() as Ps;
        assert_eq!(gap, 866_434);
        assert_eq!(f.send_state(0, &p), SendState::Ready);
        assert!(f.next_segment_at(0, &p).is_some());
        assert_eq!(f.send_state(0, &p), SendState::WaitUntil(gap));
        assert_eq!(f.next_segment_at(gap - 1, &p), None);
        assert_eq!(f.snd_nxt, 1000, "nothing taken while paced");
        // Late by 100 ps: the next gap counts from the actual send time.
        let s = f.next_segment_at(gap + 100, &p).unwrap();
        assert_eq!(s.seq, 1000);
        assert_eq!(f.next_send_at, 2 * gap + 100);
        // A full window is Blocked, not waiting.
        f.next_segment_at(10 * gap, &p).unwrap();
        f.next_segment_at(20 * gap, &p).unwrap();
        assert_eq!(f.send_state(30 * gap, &p), SendState::Blocked);
    }

    #[test]
    fn bbr_flow_learns_the_delivery_rate_from_its_acks() {
        // Segments of 1000 B leave every 10 us and are ACKed 100 us later:
        // the path delivers 100 MB/s.
        let p = params();
        let mut f = flow_with(1_000_000, "algorithm = \"bbr\"");
        let mut sent = vec![];
        let mut t = 0;
        for k in 0..400u64 {
            t = k * 10 * US;
            while let Some(s) = f.next_segment_at(t, &p) {
                sent.push((s.seq + s.len as u64, t));
                if f.send_state(t, &p) != SendState::Ready {
                    break;
                }
            }
            // ACK what was sent 100 us ago, one segment per 10 us.
            if let Some(&(end, at)) = sent.iter().find(|(e, _)| *e > f.snd_una) {
                if at + 100 * US <= t {
                    f.on_ack(t, end, false, at, &p);
                }
            }
        }
        let super::cc::AnyCc::Bbr(b) = &f.cc else {
            unreachable!()
        };
        let bw = b.btl_bw();
        assert!((bw / 1e8 - 1.0).abs() < 0.02, "BtlBw {bw} B/s, want 1e8");
        assert_eq!(b.rtprop(), Some(100 * US));
        assert!(t > 0);
    }

    #[test]
    fn cubic_cuts_to_beta_on_fast_retransmit() {
        let p = params();
        let mut f = flow_with(100_000, "algorithm = \"cubic\"");
        f.win.cwnd = 10_000;
        while f.next_segment(&p).is_some() {}
        for _ in 0..3 {
            f.on_ack(1, 0, false, 0, &p);
        }
        assert!(f.in_recovery);
        assert_eq!(f.win.ssthresh, 7_000, "RFC 9438 §4.6: 0.7 x FlightSize");
        assert_eq!(f.win.cwnd, 10_000, "ssthresh + 3 SMSS (RFC 6582)");
    }

    #[test]
    fn ooo_merge() {
        let mut f = flow(100_000);
        f.insert_ooo(5000, 6000);
        f.insert_ooo(2000, 3000);
        f.insert_ooo(3000, 5000);
        assert_eq!(f.ooo, vec![(2000, 6000)]);
        f.insert_ooo(8000, 9000);
        f.insert_ooo(1000, 9500);
        assert_eq!(f.ooo, vec![(1000, 9500)]);
    }
}
