//! SACK-based loss recovery (`[transport] recovery = "sack"`): RFC 6675's
//! conservative loss recovery, with RFC 6937's PRR-SSRB deciding how much is
//! sent per ACK, on the [`TcpFlow`] state machine.
//!
//! The NewReno path of [`TcpFlow::on_ack`] is untouched; a flow with SACK
//! takes its ACKs through [`TcpFlow::on_ack_sack`] and its segments through
//! [`TcpFlow::take_segment_sack`]. What is shared (RTT samples, congestion
//! control hooks, delivery-rate samples, the RTO) is the same code.
//!
//! Choices the RFCs leave open, and what incast does:
//! * No Limited Transmit (RFC 3042) before recovery, as the NewReno path.
//! * A duplicate ACK is RFC 6675 §2's: one whose SACK blocks report bytes
//!   not SACKed before, whether or not it also advances the cumulative ACK.
//! * The fast retransmit at recovery entry leaves at once (RFC 6675 §5 step
//!   3); every later segment of the recovery is subject to `pipe` and PRR.
//! * RFC 6675 §(C)'s `cwnd - pipe >= 1 SMSS` is tested against the
//!   segment's own length (the flow's last segment may be short).
//! * RTO: FlightSize for the new ssthresh leaves out SACKed bytes
//!   ([`TcpFlow::sacked_in_flight`], as ns-3). RFC 6675 §5.1: recovery
//!   ends, RecoveryPoint = HighData, no new recovery before the cumulative ACK reaches it; the scoreboard is kept
//!   (incast's receivers never renege on SACKed data) and the slow start
//!   that follows goes back to SND.UNA "filling in" only the bytes the
//!   scoreboard does not hold, which the flight estimate does not count.
//! * The retransmission timer restarts on every ACK of new data (RFC 6298
//!   §5.3), in recovery too: SACK repairs every hole it knows of in one
//!   round trip, the case RFC 6582's Impatient rule guards against does not
//!   arise.
//! * Delivery-rate samples (BBR) are taken on cumulative ACKs only, as for
//!   NewReno.

use super::cc::{AckEvent, CongestionControl};
use super::prr::Prr;
use super::sack::{SackBlocks, SackReceiver};
use super::sack_rack::RackState;
use super::scoreboard::{Next, Scoreboard};
use super::{AckResult, Segment, TcpFlow, TcpParams};
use crate::units::Ps;

/// How a flow recovers from loss.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Cumulative ACKs only: fast retransmit and NewReno fast recovery
    /// (RFC 6582, the Impatient timer variant).
    Newreno,
    /// SACK blocks (RFC 2018), RFC 6675 loss recovery and PRR (RFC 6937), as
    /// ns-3's default (`TcpSocketBase::Sack` true, `TcpPrrRecovery`; ns-3
    /// has no RACK-TLP) and Linux with `net.ipv4.tcp_recovery = 0`.
    Sack,
    /// `Sack` with RACK-TLP loss detection (RFC 8985, [`super::sack_rack`]).
    /// The default, as Linux's: `net.ipv4.tcp_sack = 1`, PRR since 3.2,
    /// `tcp_recovery = 1` (RACK, since 4.4; its only SACK loss detection
    /// since 4.18) and `tcp_early_retrans = 3` (TLP).
    #[default]
    SackRack,
}

impl Recovery {
    /// Receivers send SACK blocks and senders keep a scoreboard.
    #[inline]
    pub fn uses_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::SackRack)
    }
}

/// A flow's SACK state: the receiver's reports and the sender's scoreboard.
#[derive(Clone, Debug, Default)]
pub struct SackState {
    pub receiver: SackReceiver,
    pub board: Scoreboard,
    prr: Prr,
    /// One past the highest byte retransmitted in this recovery (RFC 6675 HighRxt).
    high_rxt: u64,
    /// RFC 6675 RescueRxt as one past its byte; a rescue retransmission is
    /// allowed once the cumulative ACK is above it (None: undefined).
    rescue_rxt: Option<u64>,
    /// RFC 6675 `pipe`: SetPipe() on each ACK, plus what was sent since (C.4).
    pipe: u64,
    /// The fast retransmit of the recovery just entered is still to be sent.
    fast_rxt: bool,
    /// RACK-TLP, with `recovery = "sack_rack"`.
    pub rack: Option<RackState>,
}

impl SackState {
    /// A finished sender's scoreboard and RACK segments give their memory
    /// back; the receiver's reports stay (a late segment is still answered).
    pub fn shrink_sender(&mut self) {
        self.board.shrink();
        if let Some(rack) = &mut self.rack {
            rack.rack.shrink();
        }
    }

    /// A flow's state for `recovery` (which uses SACK).
    pub fn new(recovery: Recovery, mss: u64) -> SackState {
        SackState {
            rack: (recovery == Recovery::SackRack).then(|| RackState::new(mss)),
            ..Default::default()
        }
    }
}

/// What the flow sends next with SACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// RFC 6675 §5 step 3: the segment at HighACK + 1.
    FastRetransmit,
    /// A NextSeg() choice in recovery.
    Recovery(Next),
    /// Outside recovery: the segment at this byte (past SACKed ranges).
    Send(u64),
    /// A segment RACK marked lost below HighRxt (in recovery) or SND.NXT
    /// (after an RTO): HighRxt stays (RFC 8985 §9.3).
    RackLost(u64),
    /// RFC 8985 §7.3 the tail loss probe, whatever the window.
    Probe(u64),
}

impl TcpFlow {
    fn sack_state(&self) -> &SackState {
        self.sack.as_deref().expect("a SACK flow")
    }

    /// The SACK blocks of this flow's ACK at position `i` of the last
    /// [`super::RecvOutcome`] (or 0 for a delayed ACK).
    pub fn sack_blocks(&self, i: usize) -> SackBlocks {
        self.sack_state().receiver.outbox[i]
    }

    /// The receiver's blocks for an ACK it sends now (RFC 2018 §4).
    /// `trigger`: the data segment that caused it, when buffered out of order.
    #[inline(always)]
    pub(super) fn sack_report(&mut self, i: usize, trigger: Option<(u64, u64)>) {
        if self.sack.is_some() {
            self.sack_report_now(i, trigger);
        }
    }

    /// [`TcpFlow::sack_report`]'s work, out of the NewReno path's way.
    #[inline(never)]
    fn sack_report_now(&mut self, i: usize, trigger: Option<(u64, u64)>) {
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        s.receiver.outbox[i] = s.receiver.report(trigger, &self.ooo, self.rcv_nxt);
    }

    /// The next segment, if the window allows one.
    fn sack_plan(&self, params: &TcpParams) -> Option<(u64, Plan)> {
        let s = self.sack_state();
        if s.rack.is_some() {
            if let Some(seq) = self.rack_probe_seq(params) {
                return Some((seq, Plan::Probe(seq)));
            }
        }
        if !self.in_recovery {
            if let Some(seq) = self.rack_first_lost(self.snd_nxt) {
                // After an RTO: a go-back retransmission RACK found lost again.
                let flight =
                    (self.snd_nxt - self.snd_una) - s.board.sacked_in(self.snd_una, self.snd_nxt);
                let fits = flight + self.seg_len(seq, params.mss) as u64 <= self.win.cwnd;
                return fits.then_some((seq, Plan::RackLost(seq)));
            }
            // RFC 6675 §5.1: after an RTO, fill in what the scoreboard lacks.
            let seq = if self.snd_nxt < self.high_tx {
                s.board.first_unsacked(self.snd_nxt)
            } else {
                self.snd_nxt
            };
            if seq >= self.size {
                return None;
            }
            let flight = (seq - self.snd_una) - s.board.sacked_in(self.snd_una, seq);
            let fits =
                flight == 0 || flight + self.seg_len(seq, params.mss) as u64 <= self.win.cwnd;
            return fits.then_some((seq, Plan::Send(seq)));
        }
        if s.fast_rxt {
            return Some((self.snd_una, Plan::FastRetransmit));
        }
        let seg_fits = |seq: u64| s.pipe + self.seg_len(seq, params.mss) as u64 <= self.win.cwnd;
        if s.rack.is_some() {
            // RFC 8985 §9.3: a lost retransmission first, then rule (1) with
            // RACK's marks as losses.
            if let Some(seq) = self.rack_first_lost(s.high_rxt) {
                return seg_fits(seq).then_some((seq, Plan::RackLost(seq)));
            }
            let s2 = s.board.first_unsacked(s.high_rxt.max(self.snd_una));
            if s2 < self.snd_nxt && self.rack_is_lost(s2) {
                return seg_fits(s2).then_some((s2, Plan::Recovery(Next::Lost(s2))));
            }
        }
        // RFC 6675 §4 NextSeg().
        let next = s.board.next_seg(
            self.snd_una,
            self.snd_nxt,
            s.high_rxt,
            self.snd_nxt < self.size,
            s.rescue_rxt.is_none_or(|r| self.snd_una > r),
        );
        let seq = match next {
            Next::Lost(seq) | Next::Unsacked(seq) => seq,
            Next::NewData => self.snd_nxt,
            // The segment holding the highest un-SACKed byte.
            Next::Rescue(top) => top - top % params.mss,
            Next::Nothing => return None,
        };
        // RFC 6675 §5 (C): "If cwnd - pipe >= 1 SMSS".
        seg_fits(seq).then_some((seq, Plan::Recovery(next)))
    }

    /// [`TcpFlow::can_send`] with SACK.
    #[inline(never)]
    pub(super) fn can_send_sack(&self, params: &TcpParams) -> bool {
        self.sack_plan(params).is_some()
    }

    /// [`TcpFlow::take_segment`] with SACK (RFC 6675 §5 (C.1)-(C.4)).
    #[inline(never)]
    pub(super) fn take_segment_sack(&mut self, now: Ps, params: &TcpParams) -> Option<Segment> {
        let (seq, plan) = self.sack_plan(params)?;
        let len = self.seg_len(seq, params.mss);
        let end = seq + len as u64;
        let new_data = seq >= self.high_tx;
        let in_recovery = self.in_recovery;
        let recover = self.recover;
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        match plan {
            Plan::FastRetransmit => {
                // RFC 6675 §5 step 3: "set both HighRxt and RescueRxt to the
                // highest sequence number in the retransmitted segment".
                s.fast_rxt = false;
                s.high_rxt = end;
                s.rescue_rxt = Some(end);
            }
            // (C.2) "HighRxt MUST be set to the highest sequence number of
            // the retransmitted segment unless NextSeg () rule (4) was invoked".
            Plan::Recovery(Next::Lost(_) | Next::Unsacked(_)) => s.high_rxt = end,
            // Rule 4: "RescueRxt set to RecoveryPoint".
            Plan::Recovery(Next::Rescue(_)) => s.rescue_rxt = Some(recover),
            Plan::Recovery(_) | Plan::Send(_) | Plan::RackLost(_) | Plan::Probe(_) => {}
        }
        if in_recovery {
            // (C.4) "The estimate of pipe MUST be incremented by the number
            // of octets transmitted"; RFC 6937 §3.1 "prr_out += (data sent)".
            s.pipe += len as u64;
            s.prr.on_send(len as u64);
        }
        let new_probe = matches!(plan, Plan::Probe(_)) && new_data;
        if matches!(plan, Plan::Send(_) | Plan::Recovery(Next::NewData)) || new_probe {
            // (C.3) new data moves HighData; after an RTO, SND.NXT skips the
            // SACKed bytes it passes.
            self.snd_nxt = end;
            self.high_tx = self.high_tx.max(end);
        }
        if !new_data {
            self.retransmits += 1;
        }
        let seg = Segment {
            seq,
            len,
            retx: !new_data,
        };
        if self.uses_rack() {
            let probe = matches!(plan, Plan::Probe(_));
            if probe {
                self.rack_probe_sent();
            }
            self.rack_on_sent(now, &seg, probe, params);
        }
        Some(seg)
    }

    /// Processes an ACK carrying SACK `blocks` (RFC 6675 §5).
    #[inline(never)]
    pub fn on_ack_sack(
        &mut self,
        now: Ps,
        ack: u64,
        ece: bool,
        echo_ts: Ps,
        blocks: &[(u64, u64)],
        params: &TcpParams,
    ) -> AckResult {
        let mut res = AckResult::default();
        self.clock = now;
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        let sacked_before = s.board.sacked();
        let acked = ack.saturating_sub(self.snd_una);
        if s.rack.is_some() {
            // RFC 8985 §6.2 steps 1-3, before Update() merges the blocks.
            self.rack_on_ack(self.snd_una, ack, blocks, now, echo_ts);
        }
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
        }
        // RFC 6675 §5: "Upon the receipt of any ACK containing SACK
        // information, the scoreboard MUST be updated via the Update () routine."
        let newly_sacked =
            s.board
                .update(self.snd_una, blocks, params.mss, params.dupack_threshold);
        // RFC 6937 §3.1: DeliveredData = change_in(snd.una) + change_in(SACKd).
        let delivered = (acked + s.board.sacked()) - sacked_before;
        let rtt = (acked > 0).then(|| now - echo_ts);
        if acked > 0 {
            // RFC 6675 §5: "If the incoming ACK is a cumulative acknowledgment,
            // the TCP MUST reset DupAcks to zero."
            self.dupacks = 0;
            self.rtt.sample(now - echo_ts, params);
            res.advanced = true;
            res.restart_rto = true;
        } else if ack < self.snd_una
            || (self.snd_nxt == self.snd_una && !self.cc.sees_acks_with_nothing_in_flight())
        {
            // An old ACK, or nothing outstanding: the scoreboard only (STrack's
            // window law takes the latter too).
            res.may_send = self.can_send(params);
            return res;
        }
        let ev = AckEvent {
            now,
            acked,
            ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            in_recovery: self.in_recovery,
            srtt: self.rtt.srtt.unwrap_or(0),
            delay: now.saturating_sub(echo_ts),
        };
        let rate = match (acked > 0, self.rate.as_deref_mut()) {
            (true, Some(r)) => Some(r.on_ack(now, ack, params.mss, rtt)),
            _ => None,
        };
        let hold = self.cc.on_ack_any(&mut self.win, &ev);
        // RFC 8985 §6.2 step 5: RACK's marks, after Update() and before
        // SetPipe () (the marked segments leave pipe).
        let rack_lost = self.uses_rack() && self.rack_detect(now);
        // RFC 6675 §2 DupAck: the ACK SACKs octets not SACKed before.
        if newly_sacked > 0 {
            self.dupacks += 1;
        }
        if self.in_recovery && ack >= self.recover {
            // RFC 6675 §5 (A): "An incoming cumulative ACK for a sequence number
            // greater than RecoveryPoint signals the end of loss recovery"; the
            // window is what PRR brought it to, ssthresh (RFC 6937 §3).
            self.in_recovery = false;
            self.win.cwnd = self.win.ssthresh.max(params.mss);
        } else if self.in_recovery {
            // RFC 6675 §5 (B.2) then RFC 6937 §3.1 (cwnd = pipe + sndcnt).
            self.sack_recovery_step(delivered, params);
        } else if acked > 0 && !hold {
            self.cc.on_ack(&mut self.win, &ev);
        }
        let s = self.sack.as_deref().expect("a SACK flow");
        if !self.in_recovery
            && self.snd_una >= self.recover
            // RFC 6675 §5 steps (1)-(2): "If DupAcks >= DupThresh" or
            // "IsLost (HighACK + 1) returns true"; with RACK, a segment it
            // marked lost (Linux's tcp_time_to_recover: lost_out > 0).
            && ((newly_sacked > 0
                && (self.dupacks >= params.dupack_threshold || s.board.is_lost(self.snd_una)))
                || rack_lost)
        {
            self.enter_sack_recovery(delivered, params);
        }
        self.after_ack(&ev, rate.as_ref());
        if self.snd_una >= self.size {
            res.completed = true;
            self.rto_timer.disarm();
        }
        res.may_send = self.can_send(params);
        res
    }

    /// RFC 6675 §5 step (4): fast retransmit and loss recovery.
    pub(super) fn enter_sack_recovery(&mut self, delivered: u64, params: &TcpParams) {
        let mut flight = self.snd_nxt - self.snd_una;
        if self.uses_rack() {
            // With RACK a recovery can follow the last at once (a segment sent
            // after RecoveryPoint marked lost): FlightSize leaves out the SACKed
            // bytes, as at the RTO ([`TcpFlow::sacked_in_flight`]), or back-to-
            // back recoveries would halve the same sequence span each time.
            flight -= self.sacked_in_flight();
        }
        // (4.1) "RecoveryPoint = HighData".
        self.recover = self.snd_nxt;
        // (4.2) ssthresh per the congestion control (RFC 5681: FlightSize / 2).
        self.win.ssthresh = self.cc.ssthresh_on_loss(&self.win, flight);
        self.in_recovery = true;
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        // RFC 6937 §3.1 "At the beginning of recovery": RecoverFS = snd.nxt - snd.una.
        s.prr = Prr::start(flight);
        // (4.3) the fast retransmit of HighACK + 1, sent first.
        s.fast_rxt = true;
        s.high_rxt = self.snd_una;
        s.rescue_rxt = None;
        // (4.4) SetPipe (), then PRR for this ACK; (4.5) proceed to (C).
        self.sack_recovery_step(delivered, params);
    }

    /// RFC 6675 SetPipe () and RFC 6937's sndcnt for an ACK in recovery:
    /// `cwnd = pipe + sndcnt`.
    pub(super) fn sack_recovery_step(&mut self, delivered: u64, params: &TcpParams) {
        let s = self.sack_state();
        let pipe = s.board.pipe(self.snd_una, self.snd_nxt, s.high_rxt);
        let pipe = self.rack_pipe(pipe, s.high_rxt, params.mss);
        let s = self.sack.as_deref_mut().expect("a SACK flow");
        s.pipe = pipe;
        let sndcnt = s
            .prr
            .on_ack(delivered, s.pipe, self.win.ssthresh, params.mss);
        self.win.cwnd = s.pipe + sndcnt;
    }

    /// Bytes between SND.UNA and SND.NXT the receiver has SACKed (0 without
    /// SACK): at an RTO they are not counted in FlightSize, as ns-3's
    /// BytesInFlight() (the RFC 6675 pipe) does not count them. RFC 5681's
    /// FlightSize would: after a recovery stalled by a retransmission lost
    /// again, PRR has kept sending for a whole RTO and the receiver holds
    /// megabytes, which would set ssthresh far above the path (Linux keeps
    /// the recovery's ssthresh instead, in `tcp_enter_loss`).
    pub(super) fn sacked_in_flight(&self) -> u64 {
        self.sack
            .as_deref()
            .map_or(0, |s| s.board.sacked_in(self.snd_una, self.snd_nxt))
    }

    /// RFC 6675 §5.1: an RTO ends recovery; the scoreboard is kept.
    pub(super) fn sack_on_timeout(&mut self) {
        if let Some(s) = self.sack.as_deref_mut() {
            s.fast_rxt = false;
            s.high_rxt = 0;
            s.rescue_rxt = None;
            s.pipe = 0;
        }
        self.rack_on_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::super::Echo;
    use super::*;

    fn params() -> TcpParams {
        TcpParams {
            recovery: Recovery::Sack,
            ..fixtures::params(10)
        }
    }

    fn flow(size: u64) -> TcpFlow {
        fixtures::newreno_flow(size, &params())
    }

    /// Feeds the sender's segments to its own receiver, dropping those in
    /// `lost` (first transmissions only), and returns each ACK's blocks.
    fn deliver(
        f: &mut TcpFlow,
        segs: &[Segment],
        lost: &[u64],
        params: &TcpParams,
    ) -> Vec<(u64, SackBlocks)> {
        let mut acks = vec![];
        for s in segs {
            if lost.contains(&s.seq) && !s.retx {
                continue;
            }
            let out = f.on_data(0, s.seq, s.len, false, Echo::at(0), params);
            for (i, a) in out.acks.iter().enumerate() {
                if let Some(a) = a {
                    acks.push((a.ack, f.sack_blocks(i)));
                }
            }
        }
        acks
    }

    /// Three losses in a window of 10: one round trip of SACK recovery
    /// retransmits exactly the three holes, with no timeout, where NewReno
    /// repairs one hole per round trip.
    #[test]
    fn three_losses_repaired_in_one_round_trip() {
        let p = params();
        let mut f = flow(10_000);
        let segs: Vec<_> = std::iter::from_fn(|| f.next_segment(&p)).collect();
        assert_eq!(segs.len(), 10);
        let acks = deliver(&mut f, &segs, &[1000, 4000, 7000], &p);
        let mut retx = vec![];
        for (ack, b) in &acks {
            f.on_ack_sack(1, *ack, false, 0, b.as_slice(), &p);
            retx.extend(std::iter::from_fn(|| f.next_segment(&p)));
        }
        assert!(f.in_recovery);
        let seqs: Vec<_> = retx.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, vec![1000, 4000, 7000], "every hole, once");
        assert!(retx.iter().all(|s| s.retx));
        // The retransmissions arrive: the cumulative ACK covers everything.
        let acks = deliver(&mut f, &retx, &[], &p);
        for (ack, b) in &acks {
            f.on_ack_sack(2, *ack, false, 0, b.as_slice(), &p);
        }
        assert_eq!(f.snd_una, 10_000);
        assert!(!f.in_recovery);
        assert_eq!((f.retransmits, f.timeouts), (3, 0));
    }

    #[test]
    fn recovery_starts_on_the_third_dupack_with_prr_window() {
        let p = params();
        let mut f = flow(100_000);
        let segs: Vec<_> = std::iter::from_fn(|| f.next_segment(&p)).collect();
        let acks = deliver(&mut f, &segs, &[0], &p);
        assert_eq!(acks.len(), 9);
        for (k, (ack, b)) in acks.iter().enumerate() {
            f.on_ack_sack(1, *ack, false, 0, b.as_slice(), &p);
            assert_eq!(f.in_recovery, k >= 2, "ACK {k}");
        }
        assert_eq!(f.win.ssthresh, 5000, "FlightSize / 2");
        // The fast retransmit goes first, whatever the window.
        let s = f.next_segment(&p).unwrap();
        assert_eq!((s.seq, s.retx), (0, true));
        // Every other segment is SACKed, pipe fell to 0 below ssthresh:
        // PRR-SSRB lets the window back up to ssthresh = 5 segments, the
        // retransmission included.
        let sent = std::iter::from_fn(|| f.next_segment(&p)).count();
        assert_eq!(sent, 4);
        assert!(!f.can_send(&p));
    }

    #[test]
    fn rto_keeps_the_scoreboard_and_fills_in_the_holes() {
        let p = params();
        let mut f = flow(10_000);
        let segs: Vec<_> = std::iter::from_fn(|| f.next_segment(&p)).collect();
        // Only segments 2 and 5 arrive: two dupacks, no recovery.
        let lost = [0, 1000, 3000, 4000, 6000, 7000, 8000, 9000];
        let acks = deliver(&mut f, &segs, &lost, &p);
        for (ack, b) in &acks {
            f.on_ack_sack(1, *ack, false, 0, b.as_slice(), &p);
        }
        assert!(!f.in_recovery);
        f.on_timeout(&p);
        assert_eq!(f.win.cwnd, 1000);
        // FlightSize without the 2 SACKed segments: (10 - 2) / 2 segments.
        assert_eq!(f.win.ssthresh, 4000);
        assert_eq!(f.next_segment(&p).map(|s| s.seq), Some(0));
        assert!(!f.can_send(&p));
        // A larger window: the holes, skipping the SACKed 2000 and 5000,
        // which the flight estimate does not count.
        f.win.cwnd = 7000;
        let sent: Vec<_> = std::iter::from_fn(|| f.next_segment(&p))
            .map(|s| s.seq)
            .collect();
        assert_eq!(sent, vec![1000, 3000, 4000, 6000, 7000, 8000]);
        assert_eq!(f.snd_nxt, 9000);
    }
}
