//! A RoCEv2 reliable-connection queue pair: the sender's pacing, window and
//! go-back-N, and the receiver's ACK, NACK and CNP generation.
//!
//! Pure state machines, driven by the simulation loop (unit-tested here with
//! scripted packets). Sequence numbers count payload bytes, as in the HPCC
//! simulator.

use super::cc::{AnyRateCc, CcCtx, RateCc, RdmaAck};
use super::{CnpMode, RdmaConfig, WindowMode};
use crate::engine::LazyTimer;
use crate::units::{ns3_tx_time, Ps};

/// `x.round() as Ps`: to the nearest picosecond, halves away from zero,
/// saturating. Without SSE4.1 `round` is a call into libm, and pacing
/// rounds once per packet sent and once per rate change; between 0 and
/// 2^52 the truncation and the fraction left over are both exact, so
/// rounding up a fraction of at least one half gives the same result.
#[inline(always)]
fn round_to_ps(x: f64) -> Ps {
    const EXACT_BELOW: f64 = 4_503_599_627_370_496.0; // 2^52
    if (0.0..EXACT_BELOW).contains(&x) {
        let whole = x as i64;
        let fraction = x - whole as f64;
        (whole + i64::from(fraction >= 0.5)) as Ps
    } else {
        x.round() as Ps
    }
}

/// The pacing gap after a packet of `wire` bytes at `rate` bits/s (HPCC
/// simulator `UpdateNextAvail`): exact to the picosecond, or on ns-3's clock.
#[inline(always)]
fn pacing_gap(cfg: &RdmaConfig, wire: u32, rate: f64) -> Ps {
    if cfg.ns3_tx_times {
        ns3_tx_time(wire as u64, rate)
    } else {
        round_to_ps(wire as f64 * 8.0 / rate * 1e12)
    }
}

/// What the sender may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// Send the next packet now.
    Ready,
    /// Paced: the next packet may leave at this time.
    WaitUntil(Ps),
    /// Nothing to send until an ACK, NACK or timeout (window full or all sent).
    Blocked,
}

/// What the receiver answers to one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOut {
    /// Send an ACK for this cumulative byte, with the congestion flag.
    pub ack: Option<(u64, bool)>,
    /// Send a NACK for this expected byte, with the congestion flag (as an ACK).
    pub nack: Option<(u64, bool)>,
    /// Send a CNP now.
    pub cnp: bool,
    /// Arm the CNP timer for a pending mark at this time.
    pub cnp_timer: Option<Ps>,
    /// The packet was in order and accepted.
    pub accepted: bool,
    /// The packet was ahead of the expected byte (reordering or a loss before it).
    pub gap: bool,
}

/// A queue pair: both ends' state of one flow.
///
/// `repr(C)`, laid out by cache line (checked by a test): the sender's
/// sequence and pacing state, then the congestion control (whose first
/// line holds what it reads on every packet), the two timers each ACK
/// re-arms, and the receiver's state.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct RdmaQp {
    // ---- sender, first cache line: what sending a packet reads and writes
    pub size: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest byte ever sent (for counting retransmissions).
    pub high_tx: u64,
    pub next_avail: Ps,
    /// Data packets of this QP sent so far (for the ideal-rate check of pacing).
    pub sent_pkts: u64,
    /// Wire size of the last packet sent (for `rate_changed`).
    last_wire: u32,
    pub retransmits: u32,
    pub timeouts: u32,
    // ---- congestion control: its rate and timers first (see each algorithm)
    pub cc: AnyRateCc,
    // ---- sender: the timers every ACK re-arms
    pub rto_timer: LazyTimer,
    pub cc_timer: LazyTimer,
    // ---- receiver, third line
    pub expected: u64,
    since_ack: u32,
    ce_since_ack: bool,
    cnp_pending: bool,
    /// Pacing on ns-3's clock (`RdmaConfig::ns3_tx_times`; read when the rate changes).
    pub ns3_tx_times: bool,
    last_cnp: Option<Ps>,
    last_nack: Option<(u64, Ps)>,
    pub cnps_sent: u64,
    pub cnp_timer: LazyTimer,
    pub ctx: CcCtx,
}

impl RdmaQp {
    pub fn new(size: u64, cc: AnyRateCc, ctx: CcCtx) -> RdmaQp {
        RdmaQp {
            size,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            next_avail: 0,
            last_wire: 0,
            cc,
            ctx,
            rto_timer: LazyTimer::default(),
            cc_timer: LazyTimer::default(),
            retransmits: 0,
            timeouts: 0,
            sent_pkts: 0,
            expected: 0,
            since_ack: 0,
            ce_since_ack: false,
            last_nack: None,
            last_cnp: None,
            cnp_pending: false,
            ns3_tx_times: false,
            cnp_timer: LazyTimer::default(),
            cnps_sent: 0,
        }
    }

    /// The application stops offering data (the flow's `stop`): the
    /// message's size becomes the bytes the receiver has in order, so
    /// nothing new is sent.
    pub fn stop_offering(&mut self) {
        self.size = self.expected;
    }

    /// [`RdmaQp::stop_offering`] as a sender that knows only what was
    /// acknowledged: the size becomes `snd_una` (node order, where the two
    /// ends live apart).
    pub fn stop_offering_acked(&mut self) {
        self.size = self.snd_una;
    }

    /// The window in bytes (`u64::MAX`: none) — HPCC simulator `GetWin`.
    pub fn window(&self, cfg: &RdmaConfig) -> u64 {
        match cfg.window {
            WindowMode::None => u64::MAX,
            WindowMode::Fixed => self.ctx.bdp,
            WindowMode::Variable => {
                let w = self.ctx.bdp as f64 * self.cc.rate() / self.ctx.line_rate;
                // `(w as u64).max(1)`, computed through i64 when `w` is
                // below 2^63 (always: a window of bytes), where both truncate
                // alike and the signed conversion is a third of the
                // instructions; NaN and larger `w` take the unsigned one.
                if w < 9_223_372_036_854_775_808.0 {
                    (w as i64).max(1) as u64
                } else {
                    (w as u64).max(1)
                }
            }
        }
    }

    pub fn send_state(&self, cfg: &RdmaConfig, now: Ps) -> SendState {
        if self.snd_nxt >= self.size {
            return SendState::Blocked;
        }
        if self.snd_nxt - self.snd_una >= self.window(cfg) {
            return SendState::Blocked;
        }
        if cfg.rate_bound && self.next_avail > now {
            return SendState::WaitUntil(self.next_avail);
        }
        SendState::Ready
    }

    /// Takes the next segment: returns `(seq, payload bytes, is_retransmission)`.
    /// `wire_bytes(payload)` gives its size on the wire, for pacing.
    pub fn take_segment(
        &mut self,
        cfg: &RdmaConfig,
        now: Ps,
        wire_bytes: impl Fn(u32) -> u32,
    ) -> (u64, u32, bool) {
        let seq = self.snd_nxt;
        let len = (self.size - seq).min(cfg.payload as u64) as u32;
        self.snd_nxt += len as u64;
        let retx = seq < self.high_tx;
        if retx {
            self.retransmits += 1;
        }
        self.high_tx = self.high_tx.max(self.snd_nxt);
        self.sent_pkts += 1;
        // Pacing (HPCC simulator `UpdateNextAvail`): the next packet may leave
        // one serialization time at the current rate after this one starts.
        let rate = self.cc.rate().max(1.0);
        self.last_wire = wire_bytes(len);
        let gap = pacing_gap(cfg, self.last_wire, rate);
        self.next_avail = now + gap;
        self.cc.on_sent(&self.ctx, now, len as u64);
        (seq, len, retx)
    }

    /// A cumulative ACK up to `acked_to`. Returns true when the message is complete.
    pub fn on_ack(
        &mut self,
        now: Ps,
        acked_to: u64,
        ts: Ps,
        ece: bool,
        int: &[super::cc::IntHop],
    ) -> bool {
        let newly = acked_to.saturating_sub(self.snd_una);
        if acked_to > self.snd_una {
            self.snd_una = acked_to;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
        }
        let ack = RdmaAck {
            now,
            acked_to: self.snd_una,
            newly_acked: newly,
            snd_nxt: self.snd_nxt,
            rtt: now.saturating_sub(ts),
            ece,
            int,
        };
        let before = self.cc.rate();
        self.cc.on_ack(&self.ctx, &ack);
        self.rate_changed(before);
        self.snd_una >= self.size
    }

    /// What an ACK or NACK carrying `seq` acknowledges: `seq`, or with
    /// `back_to_chunk` only up to the start of its chunk (HPCC simulator
    /// `RdmaHw::ReceiveAck`: `Acknowledge(seq / chunk * chunk)`), except the
    /// whole message (which HPCC would never see acknowledged when its size
    /// is not a multiple of the chunk: incast completes it).
    pub fn acknowledged(&self, cfg: &RdmaConfig, seq: u64) -> u64 {
        if cfg.back_to_chunk && seq < self.size {
            seq / cfg.chunk as u64 * cfg.chunk as u64
        } else {
            seq
        }
    }

    /// A NACK acknowledging `acked` ([`RdmaQp::acknowledged`] of the byte
    /// the receiver expects): go back to the first unacknowledged byte
    /// (go-back-N, IB spec §9.7.5.2.3; HPCC simulator `RecoverQueue`:
    /// `snd_nxt = snd_una`). [`RdmaQp::on_ack`] follows, with nothing new
    /// left to acknowledge.
    pub fn on_nack(&mut self, acked: u64) {
        self.snd_una = self.snd_una.max(acked);
        self.snd_nxt = self.snd_una;
    }

    pub fn on_cnp(&mut self, now: Ps) {
        let before = self.cc.rate();
        self.cc.on_cnp(&self.ctx, now);
        self.rate_changed(before);
    }

    pub fn on_cc_timer(&mut self, now: Ps) {
        let before = self.cc.rate();
        self.cc.on_timer(&self.ctx, now);
        self.rate_changed(before);
    }

    /// HPCC simulator `ChangeRate`: a rate change moves the pacing deadline by
    /// the difference in serialization time of the last packet.
    fn rate_changed(&mut self, before: f64) {
        let after = self.cc.rate();
        if after != before && self.next_avail > 0 && after > 0.0 && before > 0.0 {
            if self.ns3_tx_times {
                // ns-3 truncates each of the two times to whole nanoseconds.
                let bytes = self.last_wire as u64;
                let (new, old) = (ns3_tx_time(bytes, after), ns3_tx_time(bytes, before));
                self.next_avail = (self.next_avail + new).saturating_sub(old);
                return;
            }
            let bits = self.last_wire as f64 * 8.0;
            let delta = bits / after - bits / before; // seconds
            let t = self.next_avail as f64 + delta * 1e12;
            self.next_avail = round_to_ps(t.max(0.0));
        }
    }

    /// Retransmission timeout: go back to the last acknowledged byte.
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        self.snd_nxt = self.snd_una;
    }

    pub fn outstanding(&self) -> bool {
        self.snd_una < self.size
    }

    // ---------------------------------------------------------------- receiver

    /// A data packet `[seq, seq + len)` arrived; `ce`: it was CE-marked.
    pub fn on_data(&mut self, cfg: &RdmaConfig, now: Ps, seq: u64, len: u32, ce: bool) -> RxOut {
        let mut out = RxOut::default();
        if ce {
            match cfg.cnp_mode {
                CnpMode::AckFlag => self.ce_since_ack = true,
                CnpMode::Paced => {
                    // DCQCN NP (paper §3.2): at most one CNP per QP per interval.
                    let gap = cfg.cnp_interval.0;
                    match self.last_cnp {
                        Some(t) if now < t + gap => {
                            if !self.cnp_pending {
                                self.cnp_pending = true;
                                out.cnp_timer = Some(t + gap);
                            }
                        }
                        _ => {
                            self.last_cnp = Some(now);
                            self.cnps_sent += 1;
                            out.cnp = true;
                        }
                    }
                }
            }
        }
        if seq == self.expected {
            self.expected += len as u64;
            out.accepted = true;
            self.since_ack += 1;
            if self.since_ack >= cfg.ack_interval || self.expected >= self.size {
                self.since_ack = 0;
                out.ack = Some((self.expected, std::mem::take(&mut self.ce_since_ack)));
            }
        } else if seq > self.expected {
            out.gap = true;
            // A gap: drop and NACK the expected byte, at most once per
            // `nack_interval` for the same expected byte.
            let send = match self.last_nack {
                Some((e, t)) => e != self.expected || now >= t + cfg.nack_interval.0,
                None => true,
            };
            if send {
                self.last_nack = Some((self.expected, now));
                // The NACK carries the congestion flag as an ACK does (HPCC
                // simulator `RdmaHw::ReceiveUdp` sets CNP on ACKs and NACKs
                // alike): marks seen since the last ACK, this packet's included.
                out.nack = Some((self.expected, std::mem::take(&mut self.ce_since_ack)));
                if cfg.back_to_chunk {
                    // The receiver drops its partial chunk too (HPCC simulator
                    // `ReceiverCheckSeq`): the sender resends from the chunk start.
                    self.expected = self.expected / cfg.chunk as u64 * cfg.chunk as u64;
                }
            }
        } else {
            // A duplicate: re-acknowledge (IB spec), so a spurious go-back ends quickly.
            out.ack = Some((self.expected, false));
        }
        out
    }

    /// The CNP timer fired: send the pending CNP, if any.
    pub fn on_cnp_timer(&mut self, now: Ps) -> bool {
        if self.cnp_pending {
            self.cnp_pending = false;
            self.last_cnp = Some(now);
            self.cnps_sent += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdma::cc::RateCcConfig;
    use crate::units::US;

    /// `round_to_ps` is `x.round() as Ps` everywhere, at the halves, next
    /// to them and at the ends of its exact range.
    #[test]
    fn round_to_ps_is_round() {
        let below_half = 0.5 - f64::EPSILON / 4.0;
        let two_52 = 4_503_599_627_370_496.0;
        let mut xs = vec![
            0.0,
            -0.0,
            below_half,
            0.5,
            1.5,
            2.5,
            1e12 + 0.5,
            1e12 + below_half,
            two_52 - 0.5,
            two_52 - 1.5,
            two_52,
            two_52 + 2.0,
            1e19,
            1e30,
            -0.5,
            -1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        xs.extend((0..1000).map(|i| i as f64 * 0.25 + 1e6));
        for x in xs {
            assert_eq!(round_to_ps(x), x.round() as Ps, "{x}");
        }
    }

    /// The cache-line layout the struct's doc promises.
    #[test]
    fn layout_by_cache_line() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<RdmaQp>(), 64);
        // Every field of `offs` starts in `start..end` (8-byte fields end by `end`).
        let within = |what: &str, start: usize, end: usize, offs: &[usize]| {
            for &off in offs {
                assert!(start <= off && off < end, "{what} field at {off}");
            }
        };
        within(
            "sender",
            0,
            64 - 7,
            &[
                offset_of!(RdmaQp, size),
                offset_of!(RdmaQp, snd_una),
                offset_of!(RdmaQp, snd_nxt),
                offset_of!(RdmaQp, next_avail),
                offset_of!(RdmaQp, sent_pkts),
                offset_of!(RdmaQp, last_wire),
                offset_of!(RdmaQp, retransmits),
            ],
        );
        assert_eq!(offset_of!(RdmaQp, cc), 64);
        // The two sender timers sit side by side, the receiver's fields
        // within one line's span after them.
        let timers = offset_of!(RdmaQp, rto_timer);
        assert_eq!(
            offset_of!(RdmaQp, cc_timer),
            timers + std::mem::size_of::<LazyTimer>()
        );
        let rx = offset_of!(RdmaQp, expected);
        assert_eq!(rx, timers + 2 * std::mem::size_of::<LazyTimer>());
        within(
            "receiver",
            rx,
            rx + 64,
            &[
                offset_of!(RdmaQp, since_ack),
                offset_of!(RdmaQp, ce_since_ack),
                offset_of!(RdmaQp, cnp_pending),
                offset_of!(RdmaQp, last_cnp),
                offset_of!(RdmaQp, last_nack),
            ],
        );
    }

    fn qp(size: u64, cfg: &RdmaConfig) -> RdmaQp {
        let ctx = CcCtx {
            line_rate: 100e9,
            base_rtt: 10 * US,
            mtu: cfg.payload as u64,
            bdp: 125_000,
        };
        RdmaQp::new(
            size,
            RateCcConfig::by_name("none").unwrap().build(&ctx),
            ctx,
        )
    }

    #[test]
    fn paces_at_line_rate() {
        let cfg = RdmaConfig::default();
        let mut q = qp(10_000, &cfg);
        assert_eq!(q.send_state(&cfg, 0), SendState::Ready);
        let (seq, len, retx) = q.take_segment(&cfg, 0, |p| p + 48);
        assert_eq!((seq, len, retx), (0, 1000, false));
        // 1048 B at 100 Gb/s = 83.84 ns.
        assert_eq!(q.send_state(&cfg, 0), SendState::WaitUntil(83_840));
        assert_eq!(q.send_state(&cfg, 83_840), SendState::Ready);
    }

    #[test]
    fn go_back_n_on_gap() {
        let cfg = RdmaConfig::default();
        let mut rx = qp(5000, &cfg);
        let o = rx.on_data(&cfg, 0, 0, 1000, false);
        assert_eq!(o.ack, Some((1000, false)));
        // Packet 1000..2000 lost; 2000 arrives: NACK 1000, once.
        let o = rx.on_data(&cfg, 1, 2000, 1000, false);
        assert_eq!((o.nack, o.accepted), (Some((1000, false)), false));
        let o = rx.on_data(&cfg, 2, 3000, 1000, false);
        assert_eq!(o.nack, None, "rate-limited");
        // Sender goes back.
        let mut tx = qp(5000, &cfg);
        for _ in 0..4 {
            tx.take_segment(&cfg, 0, |p| p);
        }
        tx.on_nack(tx.acknowledged(&cfg, 1000));
        assert_eq!((tx.snd_una, tx.snd_nxt), (1000, 1000));
        let (seq, _, retx) = tx.take_segment(&cfg, 0, |p| p);
        assert_eq!((seq, retx), (1000, true));
        assert_eq!(tx.retransmits, 1);
    }

    /// With congestion flags on ACKs (`cnp_mode = "ack_flag"`), a NACK
    /// carries the marks seen since the last ACK, as the HPCC simulator's
    /// NACKs carry their packet's: a marked packet that arrives out of order
    /// is reported at once, not an RTT later on the next ACK.
    #[test]
    fn a_nack_carries_the_congestion_flag() {
        let cfg = RdmaConfig {
            cnp_mode: CnpMode::AckFlag,
            ..RdmaConfig::default()
        };
        let mut rx = qp(5000, &cfg);
        let o = rx.on_data(&cfg, 0, 0, 1000, false);
        assert_eq!(o.ack, Some((1000, false)));
        // 1000..2000 lost; 2000..3000 arrives marked: the NACK says so.
        let o = rx.on_data(&cfg, 1, 2000, 1000, true);
        assert_eq!((o.nack, o.cnp), (Some((1000, true)), false));
        // Reported once: the retransmission's ACK is unmarked.
        let o = rx.on_data(&cfg, 2, 1000, 1000, false);
        assert_eq!(o.ack, Some((2000, false)));
    }

    #[test]
    fn at_most_one_cnp_per_interval() {
        let cfg = RdmaConfig::default(); // 50 us
        let mut rx = qp(1 << 30, &cfg);
        let mut cnps = vec![];
        let mut timer = None;
        for i in 0..1000u64 {
            let now = i * 200_000; // a marked packet every 0.2 us for 200 us
            if let Some(t) = timer {
                if now >= t {
                    if rx.on_cnp_timer(t) {
                        cnps.push(t);
                    }
                    timer = None;
                }
            }
            let o = rx.on_data(&cfg, now, i * 1000, 1000, true);
            if o.cnp {
                cnps.push(now);
            }
            if let Some(t) = o.cnp_timer {
                timer = Some(t);
            }
        }
        assert_eq!(cnps, vec![0, 50 * US, 100 * US, 150 * US]);
    }

    #[test]
    fn ack_interval_and_flag() {
        let cfg = RdmaConfig {
            ack_interval: 2,
            cnp_mode: CnpMode::AckFlag,
            ..Default::default()
        };
        let mut rx = qp(3000, &cfg);
        assert_eq!(rx.on_data(&cfg, 0, 0, 1000, true).ack, None);
        assert_eq!(
            rx.on_data(&cfg, 0, 1000, 1000, false).ack,
            Some((2000, true))
        );
        // The last packet is always acknowledged.
        assert_eq!(
            rx.on_data(&cfg, 0, 2000, 1000, false).ack,
            Some((3000, false))
        );
    }

    #[test]
    fn variable_window_follows_rate() {
        let cfg = RdmaConfig {
            window: WindowMode::Variable,
            rate_bound: false,
            ..Default::default()
        };
        let mut q = qp(1 << 20, &cfg);
        assert_eq!(q.window(&cfg), 125_000);
        while q.send_state(&cfg, 0) == SendState::Ready {
            q.take_segment(&cfg, 0, |p| p);
        }
        assert_eq!(q.snd_nxt, 125_000);
        assert!(!q.on_ack(1, 1000, 0, false, &[]));
        assert_eq!(q.send_state(&cfg, 1), SendState::Ready);
    }
}
