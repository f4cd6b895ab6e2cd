//! RACK-TLP (RFC 8985) wired into SACK loss recovery (`[transport] recovery =
//! "sack_rack"`): [`super::rack`]'s time rule marks segments lost for RFC
//! 6675's NextSeg to retransmit, and the flow's one retransmission timer
//! carries RACK's reordering timer and TLP's probe timeout as well.
//!
//! What RACK-TLP changes in [`super::sack_recovery`], and nothing else:
//! * Loss marking (RFC 8985 §6.2 step 5, §9.3): on every ACK, after the
//!   scoreboard's Update(), RACK_detect_loss() runs; a segment it marks is
//!   lost in addition to RFC 6675's IsLost() (DupThresh is kept, so a loss
//!   is never detected later than with `"sack"`). A marked segment enters
//!   recovery (Linux's `tcp_time_to_recover`: `lost_out > 0`), is not
//!   counted in `pipe`, and is retransmitted first: below HighRxt (a lost
//!   retransmission, which RFC 6675 alone repairs only by the RTO) before
//!   NextSeg()'s rules, at the first un-SACKed byte above it by rule (1).
//! * Timers (RFC 8985 §6.3, §7.2-7.3): the flow keeps three deadlines, the
//!   RTO's, the reordering timer's and the probe timeout's, and its timer
//!   event is armed at the earliest ([`TcpFlow::rack_deadline`]), as Linux
//!   keeps one timer whose kind changes (`ICSK_TIME_REO_TIMEOUT`,
//!   `ICSK_TIME_LOSS_PROBE`, `ICSK_TIME_RETRANS`).
//! * TLP (§7.2-7.3): the PTO is armed, outside recovery and after an RTT
//!   sample, when new data leaves and when an ACK advances SND.UNA; it never
//!   fires later than the RTO would. Its value is Linux's
//!   ([`Rack::pto_linux`]): 2 SRTT + 2 ms, or + 200 ms with one segment in
//!   flight (so such a tail waits for the RTO when `rto_min` is below
//!   200 ms); RFC 8985's bare 2 SRTT probed spuriously whenever queueing
//!   delayed ACKs by more than 2 SRTT (the OCP multi-host runs: probes with
//!   nothing dropped). At expiry one probe leaves whatever the
//!   window: new data if any, else the highest segment sent; then the RTO
//!   is re-armed. One probe per tail (TLP.end_seq).
//!
//! Choices the RFC leaves open, and what incast does:
//! * The reordering window is static (min_RTT / 4, [`super::rack`]).
//! * TLP's own loss detection (§7.4: a probe that repaired the only loss
//!   still owes a congestion response) is not modelled: a probe whose ACK
//!   shows earlier segments missing enters recovery through RACK's marks,
//!   with its window reduction; a probe that alone repaired a single tail
//!   loss leaves the window as it was.
//! * After an RTO (no new recovery until SND.UNA passes RecoveryPoint, RFC
//!   6675 §5.1) RACK's marks are cleared, and a go-back retransmission that
//!   RACK marks lost again is sent before the fill-in goes on (as Linux
//!   retransmits marked segments in its Loss state).

use super::rack::Rack;
use super::{AckResult, Segment, TcpFlow, TcpParams};
use crate::units::Ps;

/// A flow's RACK-TLP state: the algorithm's and the three deadlines of its
/// one timer.
#[derive(Clone, Debug, Default)]
pub struct RackState {
    pub rack: Rack,
    /// RFC 6298 retransmission timer's deadline.
    rto_at: Option<Ps>,
    /// RFC 8985 §6.3 the RACK reordering timer's deadline.
    reo_at: Option<Ps>,
    /// RFC 8985 §7.2 the probe timeout's deadline.
    pto_at: Option<Ps>,
    /// The PTO fired: a probe is to be sent (RFC 8985 §7.3).
    pub probe: bool,
}

impl RackState {
    pub fn new(mss: u64) -> RackState {
        RackState {
            rack: Rack::new(mss),
            ..Default::default()
        }
    }
}

impl TcpFlow {
    fn rack_state(&mut self) -> Option<&mut RackState> {
        self.sack.as_deref_mut()?.rack.as_mut()
    }

    /// Whether the flow runs RACK-TLP (`recovery = "sack_rack"`).
    #[inline]
    pub fn uses_rack(&self) -> bool {
        self.sack.as_deref().is_some_and(|s| s.rack.is_some())
    }

    /// RFC 8985 §6.2 steps 1-3 for an ACK from `old_una` to `ack` carrying
    /// `blocks`, before the scoreboard takes the blocks: every segment it
    /// delivers for the first time (cumulatively or newly SACKed) updates
    /// RACK.rtt / RACK.xmit_ts. Then the segments below `ack` are forgotten.
    pub(super) fn rack_on_ack(
        &mut self,
        old_una: u64,
        ack: u64,
        blocks: &[(u64, u64)],
        now: Ps,
        echo_ts: Ps,
    ) {
        let Some(s) = self.sack.as_deref_mut() else {
            return;
        };
        let Some(r) = s.rack.as_mut() else { return };
        let una = ack.max(old_una);
        r.rack.on_delivered_range(old_una, una, now, echo_ts);
        for &(start, end) in blocks {
            // Only the parts the scoreboard does not hold yet.
            let mut from = start.max(una);
            for &(s0, e0) in s.board.ranges() {
                if e0 <= from {
                    continue;
                }
                if s0 >= end {
                    break;
                }
                if s0 > from {
                    r.rack.on_delivered_range(from, s0.min(end), now, echo_ts);
                }
                from = from.max(e0);
            }
            if from < end {
                r.rack.on_delivered_range(from, end, now, echo_ts);
            }
        }
        r.rack.advance(una);
        r.rack.on_ack_for_probe(una);
    }

    /// RFC 8985 §6.2 step 5 with the §6.3 timer: marks what the time rule
    /// finds lost and sets the reordering timer's deadline. Returns whether
    /// some segment is marked lost and not yet retransmitted.
    pub(super) fn rack_detect(&mut self, now: Ps) -> bool {
        // §6.2 step 4's cap of the window by SRTT, once there is one (a
        // SACK can come before the first cumulative ACK's sample).
        let srtt = self.rtt.srtt.unwrap_or(Ps::MAX);
        let Some(r) = self.rack_state() else {
            return false;
        };
        let found = r.rack.detect_loss(now, srtt);
        r.reo_at = found.timeout.map(|t| now + t);
        r.rack.has_lost()
    }

    /// The lowest segment RACK marked lost and not yet retransmitted, below
    /// `below`.
    pub(super) fn rack_first_lost(&self, below: u64) -> Option<u64> {
        let r = self.sack.as_deref()?.rack.as_ref()?;
        r.rack.first_lost(below)
    }

    /// Segment `seq` is marked lost by RACK and not retransmitted since.
    pub(super) fn rack_is_lost(&self, seq: u64) -> bool {
        let s = self.sack.as_deref();
        s.and_then(|s| s.rack.as_ref())
            .is_some_and(|r| r.rack.is_lost(seq))
    }

    /// RFC 6675's SetPipe() `pipe` with RACK's marks (RFC 8985 §9.3: they
    /// are losses): a segment RACK marked lost counts as its retransmission
    /// alone, in flight once sent after the mark (1) and not before (0),
    /// instead of SetPipe()'s rules (a) (not IsLost()) + (b) (below HighRxt),
    /// which know neither the mark nor a retransmission outside HighRxt's
    /// range (one of an earlier recovery, or after an RTO).
    pub(super) fn rack_pipe(&self, pipe: u64, high_rxt: u64, mss: u64) -> u64 {
        let Some(s) = self.sack.as_deref() else {
            return pipe;
        };
        let Some(r) = s.rack.as_ref() else {
            return pipe;
        };
        let (mut counted, mut in_flight) = (0, 0);
        for (seq, pending) in r.rack.marked_segments() {
            if seq < self.snd_una || seq >= self.snd_nxt {
                continue;
            }
            let len = self.seg_len(seq, mss) as u64;
            counted += len * (!s.board.is_lost(seq) as u64 + (seq < high_rxt) as u64);
            in_flight += len * !pending as u64;
        }
        (pipe + in_flight).saturating_sub(counted)
    }

    /// RFC 8985 §6.1: segment `seg` left at `now`; and the timers: the RTO
    /// is armed if it is not (RFC 6298 §5.1), the PTO re-armed after new
    /// data that is not itself a probe (§7.2).
    pub(super) fn rack_on_sent(&mut self, now: Ps, seg: &Segment, probe: bool, params: &TcpParams) {
        let rto = self.rtt.current(params);
        let Some(r) = self.rack_state() else { return };
        r.rack.on_send(seg.seq, now);
        if r.rto_at.is_none() {
            r.rto_at = Some(now + rto);
        }
        if !seg.retx && !probe {
            self.rack_arm_pto(now, true, params);
        }
    }

    /// RFC 8985 §7.2: whether a PTO may be armed: an RTT sample exists, the
    /// flow is not in recovery (nor after an RTO before SND.UNA passes
    /// RecoveryPoint), data is outstanding and no probe is.
    fn rack_pto_allowed(&self) -> bool {
        self.rtt.srtt.is_some()
            && !self.in_recovery
            && self.snd_una >= self.recover
            && self.outstanding()
            && self
                .sack
                .as_deref()
                .and_then(|s| s.rack.as_ref())
                .is_some_and(|r| r.rack.may_probe() && !r.probe)
    }

    /// Arms (`restart`) or keeps the PTO, or clears it when not allowed.
    fn rack_arm_pto(&mut self, now: Ps, restart: bool, params: &TcpParams) {
        let allowed = self.rack_pto_allowed();
        let srtt = self.rtt.srtt;
        let flight_segments = (self.snd_nxt - self.snd_una).div_ceil(params.mss);
        let rto = self.rtt.current(params);
        let Some(r) = self.rack_state() else { return };
        if !allowed {
            r.pto_at = None;
        } else if restart {
            let rto_left = r.rto_at.map_or(rto, |t| t.saturating_sub(now));
            // Linux's timeout: RFC 8985's 2 SRTT plus Linux's floor.
            let pto = Rack::pto_linux(srtt, flight_segments, rto_left);
            r.pto_at = Some(now + pto);
        }
    }

    /// The timers after an ACK whose outcome is `res` (the same RTO rules
    /// as without RACK: off when nothing is outstanding, restarted on new
    /// data acknowledged), the PTO restarted when SND.UNA advanced.
    pub fn rack_after_ack(&mut self, now: Ps, res: &AckResult, params: &TcpParams) {
        let outstanding = self.outstanding();
        let rto = self.rtt.current(params);
        let Some(r) = self.rack_state() else { return };
        if res.completed {
            r.rto_at = None;
            r.reo_at = None;
            r.pto_at = None;
            return;
        }
        if res.advanced {
            if !outstanding {
                r.rto_at = None;
            } else if res.restart_rto {
                r.rto_at = Some(now + rto);
            }
        }
        self.rack_arm_pto(now, res.advanced, params);
    }

    /// The deadline of the flow's one timer: the earliest of the RTO, the
    /// reordering timer and the PTO (None: disarmed).
    pub fn rack_deadline(&self) -> Option<Ps> {
        let r = self.sack.as_deref()?.rack.as_ref()?;
        [r.rto_at, r.reo_at, r.pto_at].into_iter().flatten().min()
    }

    /// The flow's timer fired at `now`: an RTO if its deadline has passed
    /// (RFC 6298 §5.4-5.6, as [`TcpFlow::on_timeout`]); else the reordering
    /// timer (RFC 8985 §6.3: detect losses, enter or continue recovery)
    /// and the PTO (§7.3: a probe is due, the RTO is re-armed).
    pub fn rack_on_timer(&mut self, now: Ps, params: &TcpParams) {
        let Some(r) = self.rack_state() else { return };
        let (rto_at, reo_at, pto_at) = (r.rto_at, r.reo_at, r.pto_at);
        if rto_at.is_some_and(|t| t <= now) {
            self.on_timeout_at(now, params);
            let rto = self.rtt.current(params);
            let r = self.rack_state().expect("a RACK flow");
            r.rto_at = Some(now + rto);
            r.reo_at = None;
            r.pto_at = None;
            return;
        }
        if reo_at.is_some_and(|t| t <= now) {
            let lost = self.rack_detect(now);
            if lost && !self.in_recovery && self.snd_una >= self.recover {
                self.enter_sack_recovery(0, params);
            } else if lost && self.in_recovery {
                self.sack_recovery_step(0, params);
            }
        }
        if pto_at.is_some_and(|t| t <= now) {
            let rto = self.rtt.current(params);
            let r = self.rack_state().expect("a RACK flow");
            r.pto_at = None;
            r.probe = true;
            // RFC 8985 §7.3: after the probe, the RTO.
            r.rto_at = Some(now + rto);
        }
    }

    /// RFC 8985 §7.3 the probe's segment: new data when there is some (and
    /// no go-back is in progress), else the highest segment sent.
    pub(super) fn rack_probe_seq(&self, params: &TcpParams) -> Option<u64> {
        let r = self.sack.as_deref()?.rack.as_ref()?;
        if !r.probe {
            return None;
        }
        if self.snd_nxt < self.size && self.snd_nxt >= self.high_tx {
            return Some(self.snd_nxt);
        }
        let top = self.high_tx.checked_sub(1)?;
        let seq = top - top % params.mss;
        (seq >= self.snd_una && seq < self.size).then_some(seq)
    }

    /// The probe left; TLP.end_seq = SND.NXT (RFC 8985 §7.3).
    pub(super) fn rack_probe_sent(&mut self) {
        let end = self.snd_nxt.max(self.high_tx);
        if let Some(r) = self.rack_state() {
            r.probe = false;
            r.rack.on_probe(end);
        }
    }

    /// RFC 8985: an RTO resets RACK's marks and any probe.
    pub(super) fn rack_on_rto(&mut self) {
        if let Some(r) = self.rack_state() {
            r.rack.on_rto();
            r.probe = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::super::sack_recovery::Recovery;
    use super::*;
    use crate::units::{MS, US};

    fn params() -> TcpParams {
        TcpParams {
            recovery: Recovery::SackRack,
            ..fixtures::params(10)
        }
    }

    fn flow(size: u64) -> TcpFlow {
        fixtures::newreno_flow(size, &params())
    }

    /// Every segment the window allows at `now`.
    fn send_all(f: &mut TcpFlow, now: Ps, params: &TcpParams) -> Vec<Segment> {
        std::iter::from_fn(|| f.next_segment_at(now, params)).collect()
    }

    /// An ACK reaching the sender at `now`, and the timers after it (what
    /// the host does).
    fn ack(f: &mut TcpFlow, now: Ps, ack: u64, echo: Ps, blocks: &[(u64, u64)]) -> AckResult {
        let p = params();
        let r = f.on_ack_sack(now, ack, false, echo, blocks, &p);
        f.rack_after_ack(now, &r, &p);
        r
    }

    /// RFC 8985 §7: the last two segments of a flow are lost, nothing
    /// follows them to be SACKed. The PTO (2 SRTT + 2 ms) fires before the
    /// RTO; its probe, the last segment again, is SACKed; RACK then finds
    /// the other one lost and recovery repairs it. No timeout. (RFC 6675
    /// alone sees no duplicate ACK here and waits for the RTO.)
    #[test]
    fn a_tail_loss_is_repaired_by_the_probe_without_an_rto() {
        let p = params();
        let mut f = flow(10_000);
        assert_eq!(send_all(&mut f, 0, &p).len(), 10);
        // Segments 0-7 arrive; their ACKs reach the sender at 100 us.
        for k in 1..=8 {
            ack(&mut f, 100 * US, k * 1000, 0, &[]);
        }
        assert_eq!(f.snd_una, 8000);
        // SRTT = 100 us: the PTO at 2 SRTT + 2 ms (Linux's), before the
        // RTO (10 ms).
        assert_eq!(f.rack_deadline(), Some(2300 * US));
        f.rack_on_timer(2300 * US, &p);
        let probe = send_all(&mut f, 2300 * US, &p);
        assert_eq!(
            probe,
            vec![Segment {
                seq: 9000,
                len: 1000,
                retx: true
            }],
            "the probe: the highest segment sent, whatever the window"
        );
        // The probe is SACKed: segment 8, sent 400 us ago, is lost by RACK.
        ack(&mut f, 2400 * US, 8000, 2300 * US, &[(9000, 10_000)]);
        assert!(f.in_recovery, "RACK's mark starts recovery on one SACK");
        let retx = send_all(&mut f, 2400 * US, &p);
        assert_eq!(retx.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![8000]);
        let r = ack(&mut f, 2500 * US, 10_000, 2400 * US, &[]);
        assert!(r.completed);
        assert_eq!((f.timeouts, f.retransmits), (0, 2));
        assert_eq!(f.rack_deadline(), None);
    }

    /// RFC 8985 §3.3 / §6.3: the fast retransmit is lost again. New data
    /// sent after it is SACKed; when its RACK.rtt + reo_wnd has passed, the
    /// reordering timer marks the retransmission lost and it is sent a
    /// third time, without an RTO (RFC 6675 alone never retransmits below
    /// HighRxt).
    #[test]
    fn a_lost_retransmission_is_repaired_by_the_time_rule() {
        let p = params();
        let mut f = flow(40_000);
        assert_eq!(send_all(&mut f, 0, &p).len(), 10);
        // Segment 2 lost: ACK 1000, 2000, then SACKs of 3-9 at 100 us.
        ack(&mut f, 100 * US, 1000, 0, &[]);
        ack(&mut f, 100 * US, 2000, 0, &[]);
        for k in 3..10 {
            ack(&mut f, 100 * US, 2000, 0, &[(3000, (k + 1) * 1000)]);
        }
        assert!(f.in_recovery);
        let sent = send_all(&mut f, 100 * US, &p);
        assert_eq!(sent[0].seq, 2000, "the fast retransmit");
        assert!(sent.len() > 1, "and new data: {sent:?}");
        // The retransmission is lost; the new data arrives and is SACKed
        // at 200 us. RACK.rtt = 100 us: segment 2's retransmission (sent at
        // 100 us) is lost at 100 + 100 + 25 us (reo_wnd = min_RTT / 4).
        let top = sent.last().unwrap().seq + 1000;
        ack(&mut f, 200 * US, 2000, 100 * US, &[(3000, top)]);
        assert!(!f.rack_is_lost(2000), "within the reordering window");
        assert_eq!(f.rack_deadline(), Some(225 * US), "the RACK timer");
        f.rack_on_timer(225 * US, &p);
        assert!(f.rack_is_lost(2000));
        let again = send_all(&mut f, 225 * US, &p);
        assert_eq!(again.first().map(|s| (s.seq, s.retx)), Some((2000, true)));
        ack(&mut f, 325 * US, top, 225 * US, &[]);
        assert_eq!(f.snd_una, top);
        assert!(!f.in_recovery);
        assert_eq!(f.timeouts, 0);
    }

    /// Segment 0 arrives after 1 and 2 but within the reordering window
    /// (RACK.rtt / 4 = 25 us after its deadline would pass): nothing is
    /// marked lost or retransmitted. When it does not arrive, the RACK
    /// timer marks it lost at 125 us and it is retransmitted on two SACKs,
    /// below DupThresh.
    #[test]
    fn reordering_within_the_window_is_not_loss_and_beyond_it_is() {
        let p = params();
        let mut a = flow(10_000);
        send_all(&mut a, 0, &p);
        let mut b = a.clone();
        for f in [&mut a, &mut b] {
            ack(f, 100 * US, 0, 0, &[(1000, 2000)]);
            ack(f, 100 * US, 0, 0, &[(1000, 3000)]);
            assert!(!f.in_recovery && !f.rack_is_lost(0));
            assert_eq!(f.rack_deadline(), Some(125 * US));
        }
        // a: segment 0 arrives at 110 us (ACKed at 120 us).
        ack(&mut a, 120 * US, 3000, 0, &[]);
        assert!(!a.in_recovery);
        assert_ne!(a.rack_deadline(), Some(125 * US), "the RACK timer is off");
        assert!(send_all(&mut a, 120 * US, &p).iter().all(|s| !s.retx));
        assert_eq!(a.retransmits, 0);
        // b: it does not.
        b.rack_on_timer(125 * US, &p);
        assert!(b.in_recovery);
        let s = send_all(&mut b, 125 * US, &p);
        assert_eq!(s.first().map(|s| (s.seq, s.retx)), Some((0, true)));
    }

    /// The PTO is not armed without an RTT sample, in recovery, nor while
    /// a probe is outstanding; it never falls after the RTO.
    #[test]
    fn the_probe_timeout_rules() {
        let p = params();
        let mut f = flow(100_000);
        send_all(&mut f, 0, &p);
        assert_eq!(f.rack_deadline(), Some(10 * MS), "no sample: the RTO only");
        ack(&mut f, 100 * US, 1000, 0, &[]);
        assert_eq!(send_all(&mut f, 100 * US, &p).len(), 2, "slow start");
        assert_eq!(f.rack_deadline(), Some(2300 * US));
        f.rack_on_timer(2300 * US, &p);
        assert_eq!(f.rack_deadline(), Some(2300 * US + 10 * MS), "the RTO");
        let probe = send_all(&mut f, 2300 * US, &p);
        assert_eq!(probe.len(), 1, "one probe, new data: {probe:?}");
        assert!(!probe[0].retx);
        ack(&mut f, 2350 * US, 2000, 0, &[]);
        assert_eq!(
            f.rack_deadline(),
            Some(2350 * US + 10 * MS),
            "a probe is outstanding: no PTO"
        );
    }
}
